#!/bin/bash
# mutation-run.sh [--kernel VARIANT] [--suite SUITE]... [--golden-overlay SUITE=DIR]...
#                 TREE BUILD INITRAMFS RESULTS MUTATION.patch[,MORE.patch...] NAME...
#
# Proves a golden file can fail for a real kernel bug: applies a test-only
# patch (e.g. lkdtm-tests/mutations/mm-struct-window-shrink-by-8.patch; or
# several, comma-separated, touching different files, for one mutant) to the
# prepared tree, builds it with the .config of BUILD/kernel-VARIANT (default:
# the kernel the first SUITE boots) into BUILD/kernel-mutant, reverts the patch, and runs the NAMEs
# (LKDTM triggers, or check programs of the suites) of every SUITE (default:
# default) against that kernel.
#
# BUILD/kernel-mutant starts as a copy of BUILD/kernel-VARIANT
# (scripts/copy-build.sh: objects and mtimes kept), so only what the
# mutation touches is rebuilt and relinked.
#
# Judgement, per NAME and SUITE:
#   - a SUITE without --golden-overlay: the NAME must FAIL against the
#     suite's golden files (the mutation was noticed);
#   - a SUITE with --golden-overlay SUITE=DIR: the NAME must PASS against
#     DIR/NAME.txt (the mutant oopses exactly as its own golden file says),
#     and its log must FAIL when re-matched against the suite's own golden
#     files.
#
# While the tree is mutated its prepare-tree stamp is moved aside, so a run
# killed before the revert leaves a tree that the next `make` re-extracts
# instead of silently building the mutation into the lab kernels.  The
# mutated files get their old mtimes back after the revert, so the lab
# kernels are not rebuilt for a change that is gone.
#
# Exit status: 0 every NAME was judged as above (the mutation was caught);
# 1 one was not (the golden files did not notice, or the mutant did not
# oops as its golden file says); 2 a setup problem, or a NAME ended in ERROR
# (the mutant kernel did not run it, so nothing was proven either way).
set -euo pipefail

variant=
suites=()
overlays=()
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) variant=$2; shift 2 ;;
	--suite) suites+=("$2"); shift 2 ;;
	--golden-overlay) overlays+=("$2"); shift 2 ;;
	--*) echo "mutation-run: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
[ ${#suites[@]} -gt 0 ] || suites=(default)
[ $# -gt 5 ] || { echo "usage: $0 [--kernel VARIANT] [--suite SUITE]... [--golden-overlay SUITE=DIR]... TREE BUILD INITRAMFS RESULTS MUTATION NAME..." >&2; exit 2; }
tree=$1 build=$2 initramfs=$3 results=$4 mutation=$5
shift 5
IFS=, read -ra mutations <<< "$mutation"
for m in "${mutations[@]}"; do
	[ -r "$m" ] || { echo "mutation-run: no mutation patch $m" >&2; exit 2; }
done
lab="$(dirname "$0")/../usercopy-lab"
[ -n "$variant" ] || variant=$("$lab" suite-kernel "${suites[0]}") || exit 2
[ -f "$build/kernel-$variant/.config" ] || { echo "mutation-run: build the $variant kernel first (make kernel KERNEL=$variant)" >&2; exit 2; }
[ -f "$tree.stamp" ] || { echo "mutation-run: $tree is not a prepared tree (no $tree.stamp)" >&2; exit 2; }
for o in "${overlays[@]}"; do
	[ -d "${o#*=}" ] || { echo "mutation-run: --golden-overlay $o: no folder ${o#*=}" >&2; exit 2; }
done
for s in "${suites[@]}"; do
	k=$("$lab" suite-kernel "$s") || exit 2
	[ "$k" = "$variant" ] || { echo "mutation-run: suite $s boots kernel $k, not $variant" >&2; exit 2; }
done

times=$(mktemp -d)
combined=$times/mutation.patch
cat "${mutations[@]}" > "$combined"
patch -d "$tree" -p1 --batch --quiet --dry-run < "$combined" ||
	{ echo "mutation-run: $mutation does not apply to $tree" >&2; rm -rf "$times"; exit 2; }

# The files the mutation touches, and their mtimes, restored after the revert.
mapfile -t touched < <(sed -n 's|^+++ [^/]*/\([^[:space:]]*\).*|\1|p' "$combined")
# A file the patches create has no mtime to keep: the revert removes it.
for f in "${touched[@]}"; do
	[ -e "$tree/$f" ] || continue
	mkdir -p "$times/tree/$(dirname "$f")"
	touch -r "$tree/$f" "$times/tree/$f"
done
revert() {
	patch -d "$tree" -p1 -R --batch --quiet < "$combined"
	for f in "${touched[@]}"; do
		if [ -e "$times/tree/$f" ]; then touch -r "$times/tree/$f" "$tree/$f"
		else rm -f "$tree/$f"; fi
	done
	mv "$tree.stamp.mutated" "$tree.stamp"
}

# The mutant is rebuilt only when an input of its last build changed
# (scripts/build-stamp.py): the mutation patches, the variant's .config and
# vmlinux (rebuilt whenever the tree or its configuration changed), the tree
# stamp and no file in the tree newer than the mutant's stamp, this script
# and copy-build.sh, the compiler and CCACHE_BASEDIR, the mutant's bzImage.
mutant_stamp=$build/kernel-mutant/.lab-mutant-stamp
stamp_inputs=(--file "$tree.stamp" --stat "$tree.stamp" --tree "$tree"
	--file "$build/kernel-$variant/.config" --stat "$build/kernel-$variant/vmlinux"
	--file "$0" --file "$(dirname "$0")/copy-build.sh"
	--stat "$build/kernel-mutant/arch/x86/boot/bzImage"
	--text "variant=$variant CCACHE_BASEDIR=${CCACHE_BASEDIR-unset} $(gcc --version | head -n 1)")
for m in "${mutations[@]}"; do stamp_inputs+=(--file "$m"); done
t0=$SECONDS
if why=$("$(dirname "$0")/build-stamp.py" check "$mutant_stamp" "${stamp_inputs[@]}"); then
	rm -rf "$times"
	echo "mutation-run: the mutant kernel is up to date (build stamp: no input changed)"
else
	echo "mutation-run: the mutant kernel is built again ($why)"
	rm -f "$mutant_stamp"
	"$(dirname "$0")/copy-build.sh" --always "$build/kernel-$variant" "$build/kernel-mutant"
	mv "$tree.stamp" "$tree.stamp.mutated"
	patch -d "$tree" -p1 --batch --quiet < "$combined"
	trap 'revert; rm -rf "$times"' EXIT
	echo "mutation-run: building the mutant kernel ($mutation)"
	make -s -C "$tree" O="$(realpath "$build/kernel-mutant")" CC="ccache gcc" -j"$(nproc)" olddefconfig bzImage
	trap - EXIT
	revert
	rm -rf "$times"
	"$(dirname "$0")/build-stamp.py" write "$mutant_stamp" "${stamp_inputs[@]}"
	echo "mutation-run: mutant kernel built in $((SECONDS - t0)) s"
fi

# The mutant kernel is booted as the suites' kernel, from a build folder of
# its own, so results and golden files are the suites' ones.
view=$(mktemp -d)
trap 'rm -rf "$view"' EXIT
ln -s "$(realpath "$build/kernel-mutant")" "$view/kernel-$variant"
args=()
for s in "${suites[@]}"; do args+=(--suite "$s"); done
for t in "$@"; do   # LKDTM triggers are [A-Z0-9_]+, check programs lower case
	if [[ $t =~ ^[A-Z0-9_]+$ ]]; then args+=(--trigger "$t"); else args+=(--check "$t"); fi
done
for o in "${overlays[@]}"; do args+=(--golden-overlay "$o"); done
set +e
"$lab" run --accel tcg --build-dir "$view" --initramfs "$initramfs" \
	--results "$results" "${args[@]}"
rc=$?
set -e
[ "$rc" -le 1 ] || { echo "mutation-run: the harness could not run (exit $rc)" >&2; exit 2; }
echo "mutation-run: kernel and boots took $((SECONDS - t0)) s"

# Judge from results.json, and re-match against the suites' own golden files.
/usr/bin/python3 - "$lab" "$results/latest/results.json" "$mutation" \
	"${suites[*]}" "${overlays[*]}" "$@" <<'EOF'
import json
import subprocess
import sys

lab, path, mutation, suites, overlays, wanted = (sys.argv[1], sys.argv[2], sys.argv[3],
                                                 sys.argv[4].split(), sys.argv[5].split(),
                                                 sys.argv[6:])
overlay_of = dict(o.split("=", 1) for o in overlays)
runs = {(t["suite"], t["name"]): t for t in json.load(open(path))["triggers"]}
errors, missed = [], []
for suite in suites:
    overlay = overlay_of.get(suite)
    for name in wanted:
        run = runs.get((suite, name))
        verdict = run["verdict"] if run else "not run"
        label = f"{suite}/{name}"
        if verdict in ("ERROR", "not run"):
            errors.append(f"{label} {verdict}")
        elif not overlay:
            if verdict != "FAIL":
                missed.append(f"{label} {verdict} against the suite's golden files")
        elif verdict != "PASS":
            missed.append(f"{label} {verdict} against {overlay}: "
                          "the mutant did not oops as its golden file says")
        else:
            again = subprocess.run([lab, "match", "--suite", suite, run["log"]],
                                   capture_output=True, text=True)
            if again.returncode != 1:
                missed.append(f"{label} re-matched against the suite's golden files "
                              f"exits {again.returncode}, not 1 (FAIL)")
if missed:
    print(f"mutation-run: with {mutation}: {'; '.join(missed)}", file=sys.stderr)
    sys.exit(1)
if errors:
    print(f"mutation-run: the mutant kernel did not run {', '.join(errors)}: "
          "nothing proven (see the logs)", file=sys.stderr)
    sys.exit(2)
how = [f"{s}: PASS against {overlay_of[s]}, FAIL against the suite's golden files"
       if s in overlay_of else f"{s}: FAIL (see the diffs above)" for s in suites]
print(f"mutation-run: the mutation was caught: {', '.join(wanted)}; {'; '.join(how)}")
EOF
