#!/bin/bash
# kernel-config.sh TREE OUTDIR FRAGMENT...
#
# Writes OUTDIR/.config = `make tinyconfig` + FRAGMENTs (merge_config.sh),
# then checks that every CONFIG_ line of every fragment landed
# (check_fragments in kconfig-lib.sh): merge_config.sh silently drops
# options whose dependencies are unmet.
# The .config is only replaced when its content changes, so an unchanged
# configuration does not trigger a rebuild.
#
# tinyconfig is the same for every kernel of one tree, ARCH and compiler:
# it is made once in TREE.kconfig/ (with kconfig's host tools, which
# olddefconfig then reuses) and kept while its key holds: a hash of every
# Kconfig file and of scripts/kconfig/, ARCH, CROSS_COMPILE and the
# compiler's version.  Making it in a fresh folder (host tools compiled,
# two conf passes) took 13.7 s of the ~19 s a kernel's configuration took
# on the 2-core lab machine (2026-12-05).  A lock makes concurrent runs
# for one tree wait for each other.
set -euo pipefail

tree=$1
out=$2
shift 2

mkdir -p "$out"
tmp="$out/.config.lab-new"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

base="$(cd "$tree" && pwd).kconfig/${ARCH:-native}"   # absolute: make -C changes folder
mkdir -p "$base"
exec 9>"$base.lock"
flock 9
key=$( { (cd "$tree" && find . -name 'Kconfig*' -type f -print0 | sort -z | xargs -0 sha256sum &&
		sha256sum scripts/kconfig/*.[ch] scripts/kconfig/*.sh);
	echo "ARCH=${ARCH:-} CROSS_COMPILE=${CROSS_COMPILE:-}";
	"${CROSS_COMPILE:-}gcc" --version | head -n 1; } | sha256sum)
if [ ! -f "$base/tinyconfig" ] || [ "$(cat "$base/key" 2>/dev/null)" != "$key" ]; then
	rm -rf "$base/o" "$base/tinyconfig" "$base/key"
	make -s -C "$tree" O="$base/o" tinyconfig >/dev/null
	cp "$base/o/.config" "$base/tinyconfig"
	echo "$key" >"$base/key"
fi
cp "$base/tinyconfig" "$work/.config"
KCONFIG_CONFIG="$work/.config" "$tree/scripts/kconfig/merge_config.sh" -m -O "$work" \
	"$work/.config" "$@" >"$work/merge.log" 2>&1 ||
	{ cat "$work/merge.log" >&2; exit 1; }
KCONFIG_CONFIG="$work/.config" make -s -C "$tree" O="$base/o" olddefconfig >/dev/null
exec 9>&-

. "$(dirname "$0")/kconfig-lib.sh"
check_fragments "kernel-config: " "$work/.config" "" "$@" ||
	{ echo "kernel-config: configuration incomplete, stopping" >&2; exit 1; }

if [ -f "$out/.config" ] && cmp -s "$work/.config" "$out/.config"; then
	echo "kernel-config: $out/.config unchanged"
else
	cp "$work/.config" "$tmp"
	mv "$tmp" "$out/.config"
	echo "kernel-config: wrote $out/.config"
fi
