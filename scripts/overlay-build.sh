#!/bin/bash
# overlay-build.sh [--reverse PATCH]... [--config FRAGMENT]... TREE FROM TO PATCH...
#
# Builds the kernel TO as the kernel FROM (a kbuild output folder of the
# prepared tree TREE) with PATCHes applied on top of TREE, without a cold
# build: TO starts as a copy of FROM (scripts/copy-build.sh, objects and
# mtimes kept; copied again only when FROM's vmlinux changed), the patches
# are applied to TREE for the build and reverted after it, so kbuild
# recompiles only what they touch and relinks.  The 6.12 line's patched
# kernel is built this way from its stock kernel (mk/line-6.12.mk).
#
# While the tree is patched its prepare-tree stamp is moved aside (a run
# killed before the revert leaves a tree that the next prepare-tree
# re-extracts instead of building the patches into FROM), and the patched
# files get their old mtimes back after the revert, so FROM is not rebuilt
# for a change that is gone.  This is scripts/mutation-run.sh's way of
# building a mutant, for a kernel that is kept.
#
# TO is rebuilt only when an input of its last build changed
# (scripts/build-stamp.py): the patches, FROM's .config and vmlinux, the
# tree stamp and no file in the tree newer than TO's stamp, this script and
# copy-build.sh, the compiler, TO's bzImage.
#
# --reverse PATCH takes a patch the tree carries out first (a fix built on
# the pristine tree from a build of the tree with the lab's LKDTM tests:
# scripts/series-6.12.sh export).  --config FRAGMENT sets the options of a
# kconfig fragment in TO's .config (each replaces FROM's value of that
# option) before olddefconfig; every option of it must land
# (kconfig-lib.sh check_fragments), else the build stops: a kernel that is
# FROM's plus a driver or two (the anybus kernel, mk/anybus.mk) rebuilds
# only what the changed options reach.  The kbuild output, every compiled object
# and every warning, is kept in TO/.lab-overlay.log (the terminal gets it
# without kbuild's progress lines).
#
# Exit status: 0 built or up to date; 1 the build failed; 2 a setup problem.
set -euo pipefail

reverse=() configs=()
while :; do
	case ${1:-} in
	--reverse) reverse+=("$2"); shift 2 ;;
	--config) configs+=("$2"); shift 2 ;;
	*) break ;;
	esac
done
[ $# -ge 4 ] || { echo "usage: $0 [--reverse PATCH]... [--config FRAGMENT]... TREE FROM TO PATCH..." >&2; exit 2; }
tree=$1 from=$2 to=$3
shift 3
here=$(dirname "$0")
for p in "${reverse[@]}" "$@"; do
	[ -r "$p" ] || { echo "overlay-build: no patch $p" >&2; exit 2; }
done
for c in "${configs[@]}"; do
	[ -r "$c" ] || { echo "overlay-build: no config fragment $c" >&2; exit 2; }
done
. "$here/kconfig-lib.sh"
[ -f "$tree.stamp" ] || { echo "overlay-build: $tree is not a prepared tree (no $tree.stamp)" >&2; exit 2; }
[ -f "$from/vmlinux" ] || { echo "overlay-build: build $from first" >&2; exit 2; }

stamp=$to/.lab-overlay-stamp
inputs=(--file "$tree.stamp" --stat "$tree.stamp" --tree "$tree"
	--file "$from/.config" --stat "$from/vmlinux"
	--file "$0" --file "$here/copy-build.sh"
	--stat "$to/arch/x86/boot/bzImage"
	--text "CCACHE_BASEDIR=${CCACHE_BASEDIR-unset} $(gcc --version | head -n 1)")
for p in "$@"; do inputs+=(--file "$p"); done
for p in "${reverse[@]}"; do inputs+=(--file "$p" --text "reversed $p"); done
for c in "${configs[@]}"; do inputs+=(--file "$c" --text "config $c"); done
if why=$("$here/build-stamp.py" check "$stamp" "${inputs[@]}"); then
	echo "overlay-build: $to is up to date (build stamp)"
	exit 0
fi
echo "overlay-build: $to is built ($why)"
t0=$SECONDS
rm -f "$stamp"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat "$@" > "$work/all.patch"
: > "$work/rev.patch"
[ ${#reverse[@]} = 0 ] || cat "${reverse[@]}" > "$work/rev.patch"
patch -d "$tree" -p1 -R --batch --quiet --dry-run < "$work/rev.patch" >/dev/null ||
	{ echo "overlay-build: the patches to take out are not in $tree" >&2; exit 2; }
"$here/copy-build.sh" "$from" "$to"

mapfile -t touched < <(sed -n 's|^+++ [^/]*/\([^[:space:]]*\).*|\1|p' \
	"$work/rev.patch" "$work/all.patch" | sort -u)
for f in "${touched[@]}"; do
	[ -e "$tree/$f" ] || continue
	mkdir -p "$work/mtimes/$(dirname "$f")"
	touch -r "$tree/$f" "$work/mtimes/$f"
done
revert() {
	patch -d "$tree" -p1 -R --batch --quiet < "$work/all.patch"
	patch -d "$tree" -p1 --batch --quiet < "$work/rev.patch"
	for f in "${touched[@]}"; do
		if [ -e "$work/mtimes/$f" ]; then touch -r "$work/mtimes/$f" "$tree/$f"
		else rm -f "$tree/$f"; fi
	done
	mv "$tree.stamp.overlay" "$tree.stamp"
}
mv "$tree.stamp" "$tree.stamp.overlay"
patch -d "$tree" -p1 -R --batch --quiet < "$work/rev.patch"
if ! patch -d "$tree" -p1 --batch --quiet < "$work/all.patch"; then
	patch -d "$tree" -p1 --batch --quiet < "$work/rev.patch"
	mv "$tree.stamp.overlay" "$tree.stamp"
	echo "overlay-build: the patches do not apply to $tree" >&2
	exit 2
fi
trap 'revert; rm -rf "$work"' EXIT
# TO's .config: FROM's with each fragment's options replaced.
for c in "${configs[@]}"; do
	sed -n -e 's/^\(CONFIG_[A-Za-z0-9_]*\)=.*/\1/p' -e 's/^# \(CONFIG_[A-Za-z0-9_]*\) is not set/\1/p' "$c" |
	while read -r opt; do
		sed -i -e "/^$opt=/d" -e "/^# $opt is not set\$/d" "$to/.config"
	done
	cat "$c" >> "$to/.config"
done
rc=0
# Not -s: the log names every object kbuild compiled (the callers check
# that the patched files are among them), and holds every warning.
kbuild() {
	make -C "$tree" O="$(realpath "$to")" CC="ccache gcc" -j"${JOBS:-$(nproc)}" "$@" \
		2>&1 | tee -a "$work/kbuild.log" | grep -Ev '^  [A-Z]+ +|^make(\[[0-9]+\])?: ' || return "${PIPESTATUS[0]}"
}
kbuild olddefconfig || rc=1
if [ $rc = 0 ] && [ ${#configs[@]} -gt 0 ]; then
	check_fragments "overlay-build: " "$to/.config" "" "${configs[@]}" || rc=1
fi
[ $rc != 0 ] || kbuild bzImage || rc=1
cp "$work/kbuild.log" "$to/.lab-overlay.log"
trap 'rm -rf "$work"' EXIT
revert
[ $rc = 0 ] || { echo "overlay-build: kbuild failed for $to" >&2; exit 1; }
"$here/build-stamp.py" write "$stamp" "${inputs[@]}"
echo "overlay-build: $to built in $((SECONDS - t0)) s"
