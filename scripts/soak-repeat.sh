#!/bin/bash
# Run one command N times in a row, optionally beside a CPU hog, and count
# how often it passed: the flake check of issue #33 (docs/reliability.md).
#
#   scripts/soak-repeat.sh N OUT [--hog CMD] -- COMMAND...
#
# Each run's whole output goes to OUT/run-K.log; OUT/summary.tsv gets one
# line per run (run, exit status, seconds, load average at its start) as
# it ends, and the last line says "N of N green" or lists the red runs.
# --hog CMD starts CMD in the background first (e.g. "stress-ng --cpu 2")
# and ends its process group when the soak ends, also on Ctrl-C.
# Exit status: 0 when every run exited 0, 1 otherwise, 2 on bad usage.
set -u

usage() { echo "usage: $0 N OUT [--hog CMD] -- COMMAND..." >&2; exit 2; }
[ $# -ge 4 ] || usage
n=$1 out=$2
shift 2
case "$n" in ''|*[!0-9]*|0) usage ;; esac
hog=
if [ "$1" = --hog ]; then
	[ $# -ge 3 ] || usage
	hog=$2
	shift 2
fi
[ "$1" = -- ] || usage
shift
[ $# -ge 1 ] || usage
mkdir -p "$out" || exit 2

hog_pid=
stop_hog() {
	[ -n "$hog_pid" ] && kill -TERM -- "-$hog_pid" 2>/dev/null
	hog_pid=
}
trap 'stop_hog; exit 130' INT
trap 'stop_hog; exit 143' TERM
if [ -n "$hog" ]; then
	setsid bash -c "exec $hog" >"$out/hog.log" 2>&1 &
	hog_pid=$!
	echo "soak: hog '$hog' (pid $hog_pid)"
fi

printf 'run\texit\tseconds\tload\n' >"$out/summary.tsv"
red=
for k in $(seq 1 "$n"); do
	load=$(cut -d' ' -f1 /proc/loadavg)
	start=$(date +%s)
	"$@" >"$out/run-$k.log" 2>&1
	rc=$?
	secs=$(($(date +%s) - start))
	printf '%s\t%s\t%s\t%s\n' "$k" "$rc" "$secs" "$load" >>"$out/summary.tsv"
	echo "soak: run $k of $n: exit $rc, ${secs}s (load $load at its start; $out/run-$k.log)"
	[ "$rc" -eq 0 ] || red="$red $k"
done
stop_hog
if [ -z "$red" ]; then
	echo "soak: $n of $n green: $*" | tee -a "$out/summary.tsv"
	exit 0
fi
echo "soak: red runs:$red of $n: $*" | tee -a "$out/summary.tsv"
exit 1
