#!/bin/bash
# modules-cpio.sh [--root ROOT] GEN_INIT_CPIO KERNEL_DIR OUT.cpio MODULE.ko...
#
# A kernel's modules as a newc archive to follow the shared initramfs
# (suites.toml `modules`, harness/usercopy_lab/capture/initramfs.py): each
# MODULE (a path under the kernel build KERNEL_DIR) as /lib/modules/NAME.ko,
# and /lib/modules/load naming them in the order given, which is the order
# the guest's init insmods them before its ready point.  The shared
# initramfs stays kernel-independent; only this small archive is per kernel.
#
# --root ROOT: also every file under ROOT, a `make modules_install
# INSTALL_MOD_PATH=ROOT` of the kernel (lib/modules/RELEASE with its
# modules.dep; the build and source links left out), and /sbin/modprobe as
# a link to the guest's busybox, the kernel's modprobe_path: so that
# request_module() in the guest loads a module as a distribution's
# modprobe would (suites.toml modules = "installed").
set -euo pipefail

root=
if [ "${1:-}" = --root ]; then
	[ $# -ge 2 ] && [ -d "$2/lib/modules" ] || {
		echo "modules-cpio: --root needs a modules_install tree (ROOT/lib/modules)" >&2; exit 2; }
	root=$(realpath "$2")
	shift 2
fi
[ $# -ge 3 ] || { echo "usage: modules-cpio.sh [--root ROOT] GEN_INIT_CPIO KERNEL_DIR OUT.cpio MODULE.ko..." >&2; exit 2; }
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
	if [ -n "$root" ]; then
		(cd "$root" && find lib/modules -mindepth 1 \( -type d -printf 'dir /%p 0755 0 0\n' \) \
			-o \( -type f -printf "file /%p $root/%p 0644 0 0\n" \))
		echo "dir /sbin 0755 0 0"
		echo "slink /sbin/modprobe /bin/busybox 0777 0 0"
	fi
} > "$work/list"
"$gen" "$work/list" > "$out.tmp"
mv "$out.tmp" "$out"
extra=${root:+"and $(find "$root/lib/modules" -name '*.ko' | wc -l) installed modules, "}
echo "modules-cpio: wrote $out ($(tr '\n' ' ' < "$work/load")${extra}$(stat -c %s "$out") bytes)"
