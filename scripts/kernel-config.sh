#!/bin/bash
# kernel-config.sh TREE OUTDIR FRAGMENT...
#
# Writes OUTDIR/.config = `make tinyconfig` + FRAGMENTs (merge_config.sh),
# then checks that every CONFIG_ line of every fragment landed
# (check_fragments in kconfig-lib.sh): merge_config.sh silently drops
# options whose dependencies are unmet.
# The .config is only replaced when its content changes, so an unchanged
# configuration does not trigger a rebuild.
set -euo pipefail

tree=$1
out=$2
shift 2

mkdir -p "$out"
tmp="$out/.config.lab-new"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

make -s -C "$tree" O="$work" tinyconfig >/dev/null
KCONFIG_CONFIG="$work/.config" "$tree/scripts/kconfig/merge_config.sh" -m -O "$work" \
	"$work/.config" "$@" >"$work/merge.log" 2>&1 ||
	{ cat "$work/merge.log" >&2; exit 1; }
make -s -C "$tree" O="$work" olddefconfig >/dev/null

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
