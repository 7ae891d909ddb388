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
#
# Reproducible (issue #33; reproducible-builds.org): the same inputs give
# the same bytes.  Every entry's mtime is SOURCE_DATE_EPOCH (when it is not
# set: the time of the last commit that changed what this script reads from
# the project, 0 outside a git checkout): gen_init_cpio's -t for
# directories, nodes and links, and the files are packed from copies
# stamped with it (gen_init_cpio takes a file's own mtime, and the built
# helpers get a new one on every build).  Owners are 0:0 and inode
# numbers come in list order; the list is made under LC_ALL=C, so globs
# and sorts do not follow the locale.
set -euo pipefail
export LC_ALL=C

gen=$1
out=$2
helpers=$3
tree=${4:-}
data=${5:-}
src=$(cd "$(dirname "$0")/../initramfs-src" && pwd)
busybox=${BUSYBOX:-/bin/busybox}

if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
	SOURCE_DATE_EPOCH=$(git -C "$src/.." log -1 --format=%ct -- initramfs-src \
		scripts/build-initramfs.sh scripts/initramfs-selftests.sh scripts/xfs-image.sh \
		lkdtm-tests/tests.txt 2>/dev/null) || SOURCE_DATE_EPOCH=
	SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-0}
fi
case $SOURCE_DATE_EPOCH in
''|*[!0-9]*) echo "build-initramfs: SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH is not seconds" >&2; exit 1 ;;
esac

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
stage=$(mktemp -d)
trap 'rm -rf "$list" "$list.stamped" "$stage"' EXIT
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

# Each file from a copy whose mtime is SOURCE_DATE_EPOCH (a copy per line:
# the sources stay as they are, make's dependencies with them).
n=0
while read -r kind name location rest; do
	[ -n "$kind" ] || continue
	if [ "$kind" = file ]; then
		n=$((n + 1))
		cp -- "$location" "$stage/$n"
		touch -d "@$SOURCE_DATE_EPOCH" -- "$stage/$n"
		location=$stage/$n
	fi
	echo "$kind $name${location:+ $location}${rest:+ $rest}"
done < "$list" > "$list.stamped"
"$gen" -t "$SOURCE_DATE_EPOCH" "$list.stamped" > "$out.tmp"
mv "$out.tmp" "$out"
echo "build-initramfs: wrote $out ($(stat -c %s "$out") bytes)"
