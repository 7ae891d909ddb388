#!/bin/bash
# run-suite.sh BUILD INITRAMFS RESULTS SUITE
#
# One suite through LAVA on this machine, checked against our own runner:
#
#   1. our runner boots the suite (usercopy-lab run), unless OURS=RUN_DIR
#      names a finished run that has it;
#   2. one LAVA job per trigger (lava_jobs write, validated), with the
#      rendered qemu device dictionary;
#   3. lava-run (lava-dispatcher, as root) runs every job; its log (stderr,
#      one JSON mapping per line) is kept, and its serial console extracted;
#   4. `usercopy-lab match --suite SUITE` matches those consoles against the
#      golden files, and lava_jobs compare requires the same verdict as
#      our runner for every trigger.
#
# Everything lands in RUN_DIR/lava-SUITE/ (jobs/, logs/, consoles/, the
# match table, match's KTAP and JUnit, timing.txt).  Exit 0 only when every
# verdict agrees.
set -euo pipefail

[ $# -eq 4 ] || { echo "usage: $0 BUILD INITRAMFS RESULTS SUITE" >&2; exit 2; }
build=$(realpath "$1")
initramfs=$(realpath "$2")
results=$3
suite=$4
lab=$(cd "$(dirname "$0")/../.." && pwd)
export PYTHONPATH="$lab/harness${PYTHONPATH:+:$PYTHONPATH}"
py=${PYTHON:-/usr/bin/python3}

die() { echo "lava-run-suite: $*" >&2; exit 2; }
[ "$(id -u)" = 0 ] || die "lava-run must run as root"
command -v lava-run >/dev/null || die "lava-run not found (apt-get install lava-dispatcher)"
[ -f "$initramfs" ] || die "$initramfs missing (make initramfs)"
kernel=$("$lab/usercopy-lab" suite-kernel "$suite") || exit 2
[ -f "$build/kernel-$kernel/arch/x86/boot/bzImage" ] ||
	die "$build/kernel-$kernel/arch/x86/boot/bzImage missing (make kernel KERNEL=$kernel)"

if [ -n "${OURS:-}" ]; then
	run=$(realpath "$OURS")
else
	rc=0
	"$lab/usercopy-lab" run --suite "$suite" --accel tcg --build-dir "$build" \
		--initramfs "$initramfs" --results "$results" || rc=$?
	# 1: some trigger FAILed or ERRORed -- a verdict LAVA must reproduce
	[ "$rc" -le 1 ] || die "our runner could not run suite $suite (exit $rc)"
	run=$(realpath "$results/latest")
fi
[ -f "$run/results.json" ] || die "$run/results.json missing"

out=$run/lava-$suite
mkdir -p "$out/logs" "$out/consoles/$suite" "$out/lava-run"
"$py" -m usercopy_lab.lava_jobs write --out "$out/jobs" --suite "$suite" \
	--kernels "file://$build" --initramfs "file://$initramfs"
# Where a LAVA worker would find its dispatcher: only needed for NFS
# substitutions; set so that lava-run does not look for a default route.
printf 'dispatcher_ip: 127.0.0.1\n' > "$out/dispatcher.yaml"

jobs=("$out/jobs/$suite"/*.yaml)
total_start=$(date +%s.%N)
: > "$out/timing.txt"
for i in "${!jobs[@]}"; do
	job=${jobs[$i]}
	t=$(basename "$job" .yaml)
	start=$(date +%s.%N)
	rc=0
	lava-run --job-id "usercopy-lab-$$-$i" --output-dir "$out/lava-run/$t" \
		--device "$out/jobs/qemu-device.yaml" --dispatcher "$out/dispatcher.yaml" \
		"$job" > "$out/lava-run/$t.stdout" 2> "$out/logs/$t.yaml" || rc=$?
	secs=$(echo "$(date +%s.%N) - $start" | bc)
	"$py" -m usercopy_lab.lava_jobs console "$out/logs/$t.yaml" > "$out/consoles/$suite/$t.log"
	printf '%s %.1fs lava-run exit %s\n' "$t" "$secs" "$rc" | tee -a "$out/timing.txt"
done
total=$(echo "$(date +%s.%N) - $total_start" | bc)
printf 'total %.1fs for %d jobs\n' "$total" "${#jobs[@]}" | tee -a "$out/timing.txt"

"$lab/usercopy-lab" match --suite "$suite" --ktap "$out/match.ktap" --junit "$out/match-junit.xml" \
	"$out/consoles/$suite"/*.log > "$out/match.txt" || true
cat "$out/match.txt"
status=0
"$py" -m usercopy_lab.lava_jobs compare "$run/results.json" "$out/match-junit.xml" \
	--suite "$suite" > "$out/compare.txt" || status=$?
cat "$out/compare.txt"
exit "$status"
