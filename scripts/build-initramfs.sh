#!/bin/bash
# build-initramfs.sh GEN_INIT_CPIO OUT.cpio HELPER_BIN_DIR [TREE]
#
# Packs the guest userland: busybox-static (with its applet links), the
# init script from initramfs-src/ and the static C helpers already built in
# HELPER_BIN_DIR; with TREE, also the tree's LKDTM selftest runner
# (scripts/initramfs-selftests.sh).  Uses the kernel's own gen_init_cpio so
# that device nodes need no root privileges.
set -euo pipefail

gen=$1
out=$2
helpers=$3
tree=${4:-}
src=$(cd "$(dirname "$0")/../initramfs-src" && pwd)
busybox=${BUSYBOX:-/bin/busybox}

file "$busybox" | grep -q 'statically linked' ||
	{ echo "build-initramfs: $busybox is not static (apt-get install busybox-static)" >&2; exit 1; }

# Outside the list's { } below, where a failing substitution would go unnoticed.
applets=$("$busybox" --list)
[ -n "$applets" ] || { echo "build-initramfs: $busybox --list printed no applets" >&2; exit 1; }

list=$(mktemp)
trap 'rm -f "$list"' EXIT
{
	echo "dir /dev 0755 0 0"
	echo "nod /dev/console 0600 0 0 c 5 1"
	echo "nod /dev/null 0666 0 0 c 1 3"
	for d in /bin /proc /sys /tmp /root; do echo "dir $d 0755 0 0"; done
	echo "file /bin/busybox $busybox 0755 0 0"
	for applet in $applets; do
		[ "$applet" = busybox ] || echo "slink /bin/$applet busybox 0777 0 0"
	done
	echo "file /init $src/init 0755 0 0"
	for h in "$helpers"/*; do
		[ -f "$h" ] && echo "file /bin/$(basename "$h") $(realpath "$h") 0755 0 0"
	done
	[ -z "$tree" ] || "$(dirname "$0")/initramfs-selftests.sh" "$tree" "$src/../lkdtm-tests/tests.txt" "$busybox"
} > "$list"
"$gen" "$list" > "$out.tmp"
mv "$out.tmp" "$out"
echo "build-initramfs: wrote $out ($(stat -c %s "$out") bytes)"
