#!/bin/bash
# modules-cpio.sh GEN_INIT_CPIO KERNEL_DIR OUT.cpio MODULE.ko...
#
# A kernel's modules as a newc archive to follow the shared initramfs
# (suites.toml `modules = true`, harness/usercopy_lab/capture/initramfs.py): each
# MODULE (a path under the kernel build KERNEL_DIR) as /lib/modules/NAME.ko,
# and /lib/modules/load naming them in the order given, which is the order
# the guest's init insmods them before its ready point.  The shared
# initramfs stays kernel-independent; only this small archive is per kernel.
set -euo pipefail

gen=$1
kdir=$2
out=$3
shift 3
[ $# -gt 0 ] || { echo "modules-cpio: no module named" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
: > "$work/load"
{
	echo "dir /lib 0755 0 0"
	echo "dir /lib/modules 0755 0 0"
	for m in "$@"; do
		ko="$kdir/$m"
		[ -f "$ko" ] || { echo "modules-cpio: $ko missing (was the kernel built with it =m?)" >&2; exit 1; }
		name=$(basename "$m")
		echo "file /lib/modules/$name $(realpath "$ko") 0644 0 0"
		echo "$name" >> "$work/load"
	done
	echo "file /lib/modules/load $work/load 0644 0 0"
} > "$work/list"
"$gen" "$work/list" > "$out.tmp"
mv "$out.tmp" "$out"
echo "modules-cpio: wrote $out ($(tr '\n' ' ' < "$work/load")$(stat -c %s "$out") bytes)"
