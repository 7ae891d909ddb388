# shellcheck shell=bash
# procs.sh: sourced by farm.sh and run-suite.sh.  Finding the processes
# one run started and stopping them by their ids: the run's own
# descendants, and the processes whose command line names a path only that
# run uses (lava-worker starts each lava-run in a process group of its own,
# so a Ctrl-C on the terminal does not reach it, and a worker that dies
# first leaves lava-run and its QEMU to init).

# proc_start PID: when the process started (clock ticks after boot), to
# tell it from a later process with the same id; nothing when it is gone.
proc_start() {
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
	stat=${stat##*) }
	# shellcheck disable=SC2086  # the fields of /proc/PID/stat after comm
	set -- $stat
	echo "${20}"
}

# run_pids ROOTS PATTERNS: one id a line, of every descendant of the
# space-separated ROOTS (not the roots) and of every process whose command
# line, standard output or standard error (a file's path) contains one of
# the newline-separated PATTERNS (fixed strings: paths only that run uses;
# lava-run retitles itself "lava-run [job: N]", but its output goes to the
# job's folder); never the caller or the processes this function runs.
# Call it in a subshell of its own: mapfile -t pids < <(run_pids ...).
run_pids() {
	# this subshell, whose children (ps, find, awk) are not the run's; read
	# here: in the pipeline below, $BASHPID would be awk's own subshell
	local self=$BASHPID
	[ "$self" != "$$" ] || { echo "run_pids: call it in a subshell" >&2; return 2; }
	{
		ps -eo pid=,ppid=,args= | sed 's/^/P /'
		find /proc/[0-9]*/fd/1 /proc/[0-9]*/fd/2 -maxdepth 0 -printf 'L %p %l\n' 2>/dev/null
	} | ROOTS=$1 PATTERNS=$2 SELF=$self CALLER=$$ awk '
		BEGIN { n = split(ENVIRON["ROOTS"], roots, " ")
			m = split(ENVIRON["PATTERNS"], pats, "\n") }
		$1 == "P" { pid = $2; ppid = $3; $1 = $2 = $3 = ""
			parent[pid] = ppid; text[pid] = text[pid] $0; next }
		$1 == "L" { split($2, path, "/"); $1 = $2 = ""; text[path[3]] = text[path[3]] $0 }
		END {
			out[ENVIRON["SELF"]] = 1
			for (i = 1; i <= n; i++) keep[roots[i]] = 0
			for (pid in parent)
				for (j = 1; j <= m; j++)
					if (pats[j] != "" && index(text[pid], pats[j])) keep[pid] = 1
			do {
				grew = 0
				for (pid in parent) {
					if (!(pid in out) && (parent[pid] in out)) { out[pid] = 1; grew = 1 }
					if (!(pid in keep) && (parent[pid] in keep)) { keep[pid] = 1; grew = 1 }
				}
			} while (grew)
			for (pid in keep)
				if (keep[pid] && !(pid in out) && pid != ENVIRON["CALLER"]) print pid
		}'
}

# stop_pids PID...: SIGTERM to each, SIGKILL to those still there after
# $LAVA_STOP_GRACE seconds (default 10); says how many needed SIGKILL.
stop_pids() {
	local pid left=() _ grace=${LAVA_STOP_GRACE:-10}
	[ $# -gt 0 ] || return 0
	kill -TERM "$@" 2>/dev/null || true
	for _ in $(seq $((grace * 5))); do
		left=()
		for pid in "$@"; do kill -0 "$pid" 2>/dev/null && left+=("$pid"); done
		[ ${#left[@]} -gt 0 ] || return 0
		sleep 0.2
	done
	echo "${#left[@]} process(es) did not stop on SIGTERM within $grace s: SIGKILL (${left[*]})" >&2
	kill -KILL "${left[@]}" 2>/dev/null || true
}

# waited CMD...: CMD in the background, waited for: bash runs a trap only
# between commands, so a SIGTERM would otherwise wait for CMD to end.
waited() { "$@" & wait $!; }
