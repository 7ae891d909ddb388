#!/bin/bash
# beside.sh LOG BACKGROUND FOREGROUND...
#
# Run the shell command BACKGROUND at nice 19, its output into LOG, while
# FOREGROUND runs as usual; then show LOG as BACKGROUND goes on, until it
# ends.  `make test` runs the unit tests and the hostile inputs beside the
# kernel builds: kbuild leaves a core idle in its single-threaded steps
# (the configuration, the link of vmlinux), and a nice-19 process mostly
# takes that; not only that: measured cold, the tests cost the seeds
# kbuild ~50 s and took 78 s off make test's path (docs/history.md,
# 2026-12-06; issue #23).  Warm, the kernels are up to date in seconds and
# BACKGROUND runs on its own as before.
#
# Exit status: FOREGROUND's when it failed, else BACKGROUND's; 2 for bad
# usage; 130 on Ctrl-C or SIGTERM, after BACKGROUND and everything it
# started (its own session, which Ctrl-C does not reach) are ended; a
# signal is taken once FOREGROUND has ended (Ctrl-C ends it too).  LOG is
# kept in every case.
set -u

die() { echo "beside: $*" >&2; exit 2; }
[ $# -ge 3 ] || die "usage: $0 LOG BACKGROUND-COMMAND FOREGROUND-COMMAND [ARG...]"
log=$1
background=$2
shift 2
[ -n "$background" ] || die "empty background command"
mkdir -p "$(dirname "$log")" || die "cannot make the folder of $log"
: > "$log" || die "cannot write $log"

# Ctrl-C is taken from before the background starts, so that no signal
# can end this script once the background runs: that would leave it in a
# session Ctrl-C does not reach.  Until pid is set, $! is the background
# (or nothing, before it starts); its process and, once it has called
# setsid, its session are ended.
pid=
stop() {
	local bg=${pid:-$!}
	if [ -z "$bg" ]; then
		echo "beside: stopped before '$background' started" >&2
		exit 130
	fi
	kill -TERM -- "-$bg" "$bg" 2>/dev/null
	wait "$bg" 2>/dev/null
	echo "beside: stopped; '$background' ended, its output so far in $log" >&2
	exit 130
}
trap stop INT TERM

# The background command leads a session of its own (pytest-xdist starts
# workers: one kill reaches all of it), at nice 19, with SIGINT and SIGQUIT
# at their defaults: bash starts a background job with them ignored, and an
# ignored signal stays ignored through exec (the unit tests send SIGINT).
python3 -c '
import os, signal, sys
for sig in (signal.SIGINT, signal.SIGQUIT):
    signal.signal(sig, signal.SIG_DFL)
os.setsid()
os.nice(19)
os.execvp("bash", ["bash", "-c", sys.argv[1]])
' "$background" > "$log" 2>&1 < /dev/null &
pid=$!

echo "beside: '$background' runs beside this at nice 19 (pid $pid), output in $log"
"$@"
foreground=$?
echo "beside: $1 ... ended with status $foreground; '$background' so far and until it ends:"
# The log from its start, followed until the background command has ended.
tail -n +1 -s 0.2 --pid="$pid" -f "$log" &
follow=$!
wait "$pid"
status=$?
wait "$follow" 2>/dev/null
trap - INT TERM
echo "beside: '$background' ended with status $status (output kept in $log)"
[ "$foreground" -eq 0 ] || exit "$foreground"
exit "$status"
