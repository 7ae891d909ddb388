#!/bin/bash
# kernel-config.sh TREE OUTDIR FRAGMENT...
#
# Writes OUTDIR/.config = `make tinyconfig` + FRAGMENTs (merge_config.sh),
# then checks that every CONFIG_ line of every fragment landed verbatim:
# merge_config.sh silently drops options whose dependencies are unmet.
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

# What every option must end up as: the last fragment that names it wins,
# as in merge_config.sh.  Each entry is "OPTION<TAB>line<TAB>fragment".
expect=$(for frag in "$@"; do
	sed -n -e "s|^\(CONFIG_[A-Za-z0-9_]*\)=.*|\1\t&\t$frag|p" \
		-e "s|^# \(CONFIG_[A-Za-z0-9_]*\) is not set|\1\t&\t$frag|p" "$frag"
done | awk -F'\t' '{ last[$1] = $0; order[$1] = NR } END { for (k in last) print order[k] "\t" last[k] }' |
	sort -n | cut -f2-)

missing=0
while IFS=$'\t' read -r opt line frag; do
	[ -n "$opt" ] || continue
	case "$line" in
	"# "* | *=n) ! grep -q "^$opt=" "$work/.config" && continue ;;	# off either way
	*) grep -qxF "$line" "$work/.config" && continue ;;
	esac
	echo "kernel-config: $frag: '$line' did not land in .config (unmet dependency" \
		"or selected by another option?): got '$(grep -E "^(# )?$opt[= ]" "$work/.config" || echo absent)'" >&2
	missing=1
done <<< "$expect"
[ "$missing" = 0 ] || { echo "kernel-config: configuration incomplete, stopping" >&2; exit 1; }

if [ -f "$out/.config" ] && cmp -s "$work/.config" "$out/.config"; then
	echo "kernel-config: $out/.config unchanged"
else
	cp "$work/.config" "$tmp"
	mv "$tmp" "$out/.config"
	echo "kernel-config: wrote $out/.config"
fi
