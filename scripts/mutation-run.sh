#!/bin/bash
# mutation-run.sh TREE BUILD INITRAMFS RESULTS MUTATION.patch TRIGGER...
#
# Proves a golden file can fail for a real kernel bug: applies a test-only
# patch (e.g. lkdtm-tests/mutations/mm-struct-window-shift-by-8.patch) to the
# prepared tree, builds it with the default lab .config into BUILD/kernel-mutant
# (ccache makes that mostly an incremental link), reverts the patch, and runs
# the default suite's TRIGGERs against that kernel.  Exit 0 when every
# trigger FAILed (or ERRORed) against its golden file, 1 when one still PASSes.
set -euo pipefail

tree=$1 build=$2 initramfs=$3 results=$4 mutation=$5
shift 5
[ $# -gt 0 ] || { echo "usage: $0 TREE BUILD INITRAMFS RESULTS MUTATION TRIGGER..." >&2; exit 2; }
[ -f "$build/kernel-default/.config" ] || { echo "mutation-run: build the default kernel first" >&2; exit 2; }

patch -d "$tree" -p1 --batch --quiet --dry-run < "$mutation" ||
	{ echo "mutation-run: $mutation does not apply to $tree" >&2; exit 2; }
patch -d "$tree" -p1 --batch --quiet < "$mutation"
trap 'patch -d "$tree" -p1 -R --batch --quiet < "$mutation"' EXIT

mkdir -p "$build/kernel-mutant"
cp "$build/kernel-default/.config" "$build/kernel-mutant/.config"
make -s -C "$tree" O="$(realpath "$build/kernel-mutant")" CC="ccache gcc" -j"$(nproc)" olddefconfig bzImage
patch -d "$tree" -p1 -R --batch --quiet < "$mutation"
trap - EXIT

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
if [ "$rc" = 0 ]; then
	echo "mutation-run: every trigger still PASSes with $mutation: the golden files did not notice" >&2
	exit 1
fi
echo "mutation-run: the mutation was caught (see the FAIL lines above)"
