#!/bin/bash
# mutation-run.sh TREE BUILD INITRAMFS RESULTS MUTATION.patch TRIGGER...
#
# Proves a golden file can fail for a real kernel bug: applies a test-only
# patch (e.g. lkdtm-tests/mutations/mm-struct-window-shrink-by-8.patch) to the
# prepared tree, builds it with the default lab .config into BUILD/kernel-mutant
# (ccache makes that mostly an incremental link), reverts the patch, and runs
# the default suite's TRIGGERs against that kernel.
#
# While the tree is mutated its prepare-tree stamp is moved aside, so a run
# killed before the revert leaves a tree that the next `make` re-extracts
# instead of silently building the mutation into the lab kernels.  The
# mutated files get their old mtimes back after the revert, so the lab
# kernels are not rebuilt for a change that is gone.
#
# Exit status: 0 every TRIGGER FAILed against its golden file (the mutation
# was caught); 1 one of them PASSed, XFAILed or was SKIPped (the golden
# files did not notice); 2 a setup problem, or a TRIGGER ended in ERROR
# (the mutant kernel did not run it, so nothing was proven either way).
set -euo pipefail

tree=$1 build=$2 initramfs=$3 results=$4 mutation=$5
shift 5
[ $# -gt 0 ] || { echo "usage: $0 TREE BUILD INITRAMFS RESULTS MUTATION TRIGGER..." >&2; exit 2; }
[ -f "$build/kernel-default/.config" ] || { echo "mutation-run: build the default kernel first" >&2; exit 2; }
[ -f "$tree.stamp" ] || { echo "mutation-run: $tree is not a prepared tree (no $tree.stamp)" >&2; exit 2; }

patch -d "$tree" -p1 --batch --quiet --dry-run < "$mutation" ||
	{ echo "mutation-run: $mutation does not apply to $tree" >&2; exit 2; }

# The files the mutation touches, and their mtimes, restored after the revert.
mapfile -t touched < <(sed -n 's|^+++ [^/]*/\([^[:space:]]*\).*|\1|p' "$mutation")
times=$(mktemp -d)
for f in "${touched[@]}"; do
	mkdir -p "$times/$(dirname "$f")"
	touch -r "$tree/$f" "$times/$f"
done
revert() {
	patch -d "$tree" -p1 -R --batch --quiet < "$mutation"
	for f in "${touched[@]}"; do touch -r "$times/$f" "$tree/$f"; done
	mv "$tree.stamp.mutated" "$tree.stamp"
}

mv "$tree.stamp" "$tree.stamp.mutated"
patch -d "$tree" -p1 --batch --quiet < "$mutation"
trap 'revert; rm -rf "$times"' EXIT

mkdir -p "$build/kernel-mutant"
cp "$build/kernel-default/.config" "$build/kernel-mutant/.config"
make -s -C "$tree" O="$(realpath "$build/kernel-mutant")" CC="ccache gcc" -j"$(nproc)" olddefconfig bzImage
trap - EXIT
revert
rm -rf "$times"

# The mutant kernel is booted as the default suite's kernel, from a build
# folder of its own, so results and golden files are the default ones.
view=$(mktemp -d)
trap 'rm -rf "$view"' EXIT
ln -s "$(realpath "$build/kernel-mutant")" "$view/kernel-default"
args=()
for t in "$@"; do args+=(--trigger "$t"); done
set +e
"$(dirname "$0")/../usercopy-lab" run --suite default --accel tcg --build-dir "$view" \
	--initramfs "$initramfs" --results "$results" "${args[@]}"
rc=$?
set -e
[ "$rc" -le 1 ] || { echo "mutation-run: the harness could not run (exit $rc)" >&2; exit 2; }

# Judge from results.json, trigger by trigger: only FAIL counts as caught.
/usr/bin/python3 - "$results/latest/results.json" "$mutation" "$@" <<'EOF'
import json
import sys

path, mutation, wanted = sys.argv[1], sys.argv[2], sys.argv[3:]
verdicts = {t["name"]: t["verdict"] for t in json.load(open(path))["triggers"]}
bad = {name: verdicts.get(name, "not run") for name in wanted}
errors = [f"{n} {v}" for n, v in bad.items() if v in ("ERROR", "not run")]
missed = [f"{n} {v}" for n, v in bad.items() if v not in ("FAIL", "ERROR", "not run")]
if missed:
    print(f"mutation-run: {', '.join(missed)} with {mutation}: "
          "the golden files did not notice", file=sys.stderr)
    sys.exit(1)
if errors:
    print(f"mutation-run: the mutant kernel did not run {', '.join(errors)}: "
          "nothing proven (see the logs)", file=sys.stderr)
    sys.exit(2)
print(f"mutation-run: the mutation was caught: {', '.join(wanted)} FAIL (see the diffs above)")
EOF
