#!/bin/bash
# run-suite.sh BUILD INITRAMFS RESULTS SUITE [KERNEL-IMAGE]
#
# One suite through LAVA's own dispatcher (lava-run) on this machine, judged
# by LAVA itself and checked against the lab:
#
#   1. without KERNEL-IMAGE, our runner boots the suite (usercopy-lab run),
#      unless OURS=RUN_DIR names a finished run that has it;
#   2. one LAVA job per trigger and check (usercopy-lab lava write, validated by
#      lava-common), with the rendered qemu device dictionary; with
#      KERNEL-IMAGE every job boots that kernel instead of the suite's (a
#      wrong kernel, a mutant) and is still judged by the suite's golden files;
#   3. lava-run runs every job (LAVA_PARALLEL at a time, default 1); its log
#      (stderr, one JSON mapping per line) is kept, its console extracted;
#   4. LAVA's verdicts come from LAVA's own results in those logs (the
#      interactive steps' test cases and the job's health: usercopy-lab lava verdicts
#      verdicts) and are printed as `usercopy-lab run` prints its table;
#   5. `usercopy-lab match` judges the consoles LAVA captured (the exact
#      check), and usercopy-lab lava compare requires one verdict per job from
#      LAVA, from match and (without KERNEL-IMAGE) from our runner.
#
# Everything lands in RUN_DIR/lava-SUITE/ (our run) or
# RESULTS/lava-SUITE-on-KERNELNAME-TIME/ (another kernel): jobs/, logs/,
# consoles/, lava-table.txt, lava-results.json, match.txt, match-junit.xml,
# compare.txt, timing.txt.  Exit status (scripts/lava/judge.sh): 0 every
# verdict agrees and none is FAIL or ERROR; 1 every verdict agrees and some
# job is FAIL or ERROR; 2 the run could not be done or judged; 3 LAVA and
# match (or our runner) differ on some job.  On any
# exit (Ctrl-C and SIGTERM included) every process it started is stopped
# and lava-run's download folders of this run are removed
# (/var/lib/lava/dispatcher/tmp/usercopy-lab-PID-N/: lava-run removes its
# own at the end of a job, a killed lava-run does not).
set -euo pipefail

[ $# -eq 4 ] || [ $# -eq 5 ] ||
	{ echo "usage: $0 BUILD INITRAMFS RESULTS SUITE [KERNEL-IMAGE]" >&2; exit 2; }
build=$(realpath "$1")
initramfs=$(realpath "$2")
results=$3
suite=$4
other=${5:-}
lab=$(cd "$(dirname "$0")/../.." && pwd)
export PYTHONPATH="$lab/harness${PYTHONPATH:+:$PYTHONPATH}"
py=${PYTHON:-/usr/bin/python3}
parallel=${LAVA_PARALLEL:-1}
# shellcheck source=scripts/lava/procs.sh
. "$lab/scripts/lava/procs.sh"
# shellcheck source=scripts/lava/judge.sh
. "$lab/scripts/lava/judge.sh"
lava_tmp=/var/lib/lava/dispatcher/tmp
# lava-run's job ids (and so its download folders): usercopy-lab-RUN-N.
run_id=$$
out=

# On any exit: this run's lava-run and QEMU stopped, their downloads gone.
cleanup() {
	local rc=$? victims=() patterns="$lava_tmp/usercopy-lab-$run_id-"
	set +e
	trap - INT TERM
	[ -z "$out" ] || patterns+=$'\n'"$out/"
	mapfile -t victims < <(run_pids $$ "$patterns")
	stop_pids "${victims[@]}"
	rm -rf "$lava_tmp/usercopy-lab-$run_id-"*
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

die() { echo "lava-run-suite: $*" >&2; exit 2; }
[ "$(id -u)" = 0 ] || die "lava-run must run as root"
command -v lava-run >/dev/null || die "lava-run not found (apt-get install lava-dispatcher)"
[ -f "$initramfs" ] || die "$initramfs missing (make initramfs)"
[[ $parallel =~ ^[1-9][0-9]*$ ]] || die "LAVA_PARALLEL=$parallel: want a number"
kernel=$("$lab/usercopy-lab" suite-kernel "$suite") || exit 2
args=(--kernels "file://$build" --initramfs "file://$initramfs")
if [ -n "$other" ]; then
	[ -f "$other" ] || die "$other: no such kernel image"
	other=$(realpath "$other")
	args+=(--kernel "file://$other")
	# The run is named after the kernel: NAME of .../kernel-NAME/arch/*/boot/*,
	# else the image's file name (a copied mutant: rds-mutant-bzImage).
	case "$other" in
	*/kernel-*/arch/*/boot/*) tag=${other%/arch/*}; tag=${tag##*/kernel-} ;;
	*) tag=$(basename "$other") ;;
	esac
	tag=${tag//[^A-Za-z0-9._-]/_}
	mkdir -p "$results"
	out=$(realpath "$results")/lava-$suite-on-$tag-$(date +%Y%m%d-%H%M%S)
	run=
else
	[ -f "$build/kernel-$kernel/arch/x86/boot/bzImage" ] ||
		die "$build/kernel-$kernel/arch/x86/boot/bzImage missing (make kernel KERNEL=$kernel)"
	if [ -n "${OURS:-}" ]; then
		run=$(realpath "$OURS")
	else
		rc=0
		waited "$lab/usercopy-lab" run --suite "$suite" --accel tcg --build-dir "$build" \
			--initramfs "$initramfs" --results "$results" || rc=$?
		# 1: some trigger FAILed or ERRORed -- a verdict LAVA must reproduce
		[ "$rc" -le 1 ] || die "our runner could not run suite $suite (exit $rc)"
		run=$(realpath "$results/latest")
	fi
	[ -f "$run/results.json" ] || die "$run/results.json missing"
	out=$run/lava-$suite
fi

rm -rf "$out"
mkdir -p "$out/logs" "$out/consoles/$suite" "$out/lava-run"
"$py" -m usercopy_lab lava write --out "$out/jobs" --suite "$suite" "${args[@]}"
# Where a LAVA worker would find its dispatcher: only needed for NFS
# substitutions; set so that lava-run does not look for a default route.
printf 'dispatcher_ip: 127.0.0.1\n' > "$out/dispatcher.yaml"

# one_job I JOB: lava-run JOB, keep its log and console, print its time.
one_job() {
	local i=$1 job=$2 t start rc=0 secs
	t=$(basename "$job" .yaml)
	start=$(date +%s.%N)
	lava-run --job-id "usercopy-lab-$run_id-$i" --output-dir "$out/lava-run/$t" \
		--device "$out/jobs/qemu-device.yaml" --dispatcher "$out/dispatcher.yaml" \
		"$job" > "$out/lava-run/$t.stdout" 2> "$out/logs/$t.yaml" || rc=$?
	secs=$(echo "$(date +%s.%N) - $start" | bc)
	"$py" -m usercopy_lab lava console "$out/logs/$t.yaml" > "$out/consoles/$suite/$t.log"
	printf '%s %.1fs lava-run exit %s\n' "$t" "$secs" "$rc"
}
export -f one_job
export out suite py run_id

jobs=("$out/jobs/$suite"/*.yaml)
total_start=$(date +%s.%N)
all_jobs() {
	for i in "${!jobs[@]}"; do printf '%s\0%s\0' "$i" "${jobs[$i]}"; done |
		xargs -0 -n 2 -P "$parallel" bash -c 'one_job "$0" "$1"' | tee "$out/timing.txt"
}
waited all_jobs
total=$(echo "$(date +%s.%N) - $total_start" | bc)
printf 'total %.1fs for %d jobs, %d at a time\n' "$total" "${#jobs[@]}" "$parallel" |
	tee -a "$out/timing.txt"

rc=0
"$py" -m usercopy_lab lava verdicts --suite "$suite" --logs "$out/logs" \
	--json "$out/lava-results.json" > "$out/lava-table.txt" || rc=$?
# 1: a job is FAIL or ERROR in LAVA, a verdict judge weighs; more: none
[ "$rc" -le 1 ] || die "no verdicts from LAVA's logs in $out/logs (exit $rc)"
echo "LAVA's own verdicts (from its results):"
cat "$out/lava-table.txt"
status=0
judge "$suite" "$out" ${run:+"$run/results.json"} || status=$?
[ ! -f "$out/compare.txt" ] || cat "$out/compare.txt"
echo "lava-run-suite: everything in $out; exit $status"
exit "$status"
