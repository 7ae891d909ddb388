#!/bin/bash
# build-initramfs.sh GEN_INIT_CPIO OUT.cpio HELPER_BIN_DIR [TREE [DATA_DIR]]
#
# Packs the guest userland: busybox-static (with its applet links), the
# init script from initramfs-src/ and the static C helpers already built in
# HELPER_BIN_DIR; with TREE, also the tree's LKDTM selftest runner
# (scripts/initramfs-selftests.sh); with DATA_DIR, its files as /data/NAME
# (the XFS image of scripts/xfs-image.sh).  Uses the kernel's own
# gen_init_cpio so that device nodes need no root privileges.
# BUSYBOX (default /bin/busybox) may be another architecture's static
# busybox (scripts/arch-busybox.sh, make initramfs-ARCH): when this host
# cannot run it to list its applets, the archive links only /bin/sh and
# the guest's init makes the other links at boot (busybox --install -s).
set -euo pipefail

gen=$1
out=$2
helpers=$3
tree=${4:-}
data=${5:-}
src=$(cd "$(dirname "$0")/../initramfs-src" && pwd)
busybox=${BUSYBOX:-/bin/busybox}

file "$busybox" | grep -q 'statically linked' ||
	{ echo "build-initramfs: $busybox is not static (apt-get install busybox-static)" >&2; exit 1; }

# Outside the list's { } below, where a failing substitution would go unnoticed.
# Status 126: the kernel cannot execute it here (another architecture's ELF).
status=0
applets=$("$busybox" --list 2>/dev/null) || status=$?
if [ "$status" = 126 ]; then
	echo "build-initramfs: $busybox does not run here ($(file -b "$busybox" | cut -d, -f2 | sed 's/^ //')):" \
		"only /bin/sh linked, init links the other applets at boot"
	applets=sh
elif [ "$status" != 0 ] || [ -z "$applets" ]; then
	echo "build-initramfs: $busybox --list failed (status $status) or printed no applets" >&2
	exit 1
fi

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
	if [ -n "$data" ]; then
		echo "dir /data 0755 0 0"
		for f in "$data"/*; do
			[ -f "$f" ] && echo "file /data/$(basename "$f") $(realpath "$f") 0644 0 0"
		done
	fi
	[ -z "$tree" ] || "$(dirname "$0")/initramfs-selftests.sh" "$tree" "$src/../lkdtm-tests/tests.txt" "$busybox"
} > "$list"
"$gen" "$list" > "$out.tmp"
mv "$out.tmp" "$out"
echo "build-initramfs: wrote $out ($(stat -c %s "$out") bytes)"
