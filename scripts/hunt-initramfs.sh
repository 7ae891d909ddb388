#!/bin/bash
# hunt-initramfs.sh GEN_INIT_CPIO BASE.cpio OUT.cpio [SELFTESTS_DIR]
#
# The hunt initramfs (make initramfs-hunt; docs/hunt.md): the lab's own
# initramfs (busybox, init, the check programs) with a second cpio archive
# appended -- the kernel unpacks concatenated archives in order -- that adds
# (the hunt's C programs, initramfs-src/hunt-*.c, are static helpers of the
# lab initramfs already: /bin/hunt-seed-rng, /bin/hunt-probe-*)
#
#   /bin/hunt-run              initramfs-src/hunt-run (the guest side of a hunt),
#   /bin/hunt-stress-ng, hunt-each, hunt-shuffle   its runners (stress-ng specs,
#                              selftest commands) and seeded shuffle
#   /hunt/workloads/NAME       initramfs-src/hunt-workloads/NAME
#   /bin/trinity, /bin/stress-ng   Debian's binaries (apt: trinity, stress-ng),
#                              with every shared library ldd lists for them
#   /usr/sbin/mke2fs, /usr/sbin/mkfs.jfs   e2fsprogs' and jfsutils' (the
#                              fs-probes workload makes its images in the guest)
#   /selftests/hunt/...        SELFTESTS_DIR (scripts/hunt-selftests.sh), with
#                              the libraries its programs need
#   /etc/passwd, /etc/group    root and nobody (trinity runs as nobody)
#
# trinity and stress-ng are only copied from the host, never run on it.
set -euo pipefail

gen=$1
base=$2
out=$3
selftests=${4:-}
src=$(cd "$(dirname "$0")/../initramfs-src" && pwd)

die() { echo "hunt-initramfs: $*" >&2; exit 1; }
[ -r "$base" ] || die "$base missing (make initramfs)"
[ -x "$gen" ] || die "$gen missing (make initramfs)"

# TOOL:PACKAGE:GUEST_DIR
bins=()
for spec in trinity:trinity:/bin stress-ng:stress-ng:/bin mke2fs:e2fsprogs:/usr/sbin \
		mkfs.jfs:jfsutils:/usr/sbin; do
	IFS=: read -r tool pkg dest <<< "$spec"
	path=$(PATH=$PATH:/sbin:/usr/sbin command -v "$tool") ||
		die "$tool not found (apt-get install $pkg)"
	bins+=("$path:$dest")
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
list=$work/list
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' > "$work/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' > "$work/group"

declare -A dirs=()
mkdirs() {   # mkdirs /a/b/c: "dir" lines for each missing level
	local d= p
	IFS=/ read -ra parts <<< "$1"
	for p in "${parts[@]}"; do
		[ -n "$p" ] || continue
		d=$d/$p
		[ -n "${dirs[$d]:-}" ] || { echo "dir $d 0755 0 0"; dirs[$d]=1; }
	done
}
declare -A libs=()
add_libs() {  # the shared libraries of an ELF file, once each
	local lib
	file "$1" | grep -q 'dynamically linked' || return 0
	for lib in $(ldd "$1" | grep -o '/[^ ]*'); do
		[ -z "${libs[$lib]:-}" ] || continue
		libs[$lib]=1
		mkdirs "${lib%/*}"
		echo "file $lib $(realpath "$lib") 0755 0 0"
	done
}

{
	mkdirs /etc
	echo "file /etc/passwd $work/passwd 0644 0 0"
	echo "file /etc/group $work/group 0644 0 0"
	mkdirs /hunt/workloads
	mkdirs /hunt/tracing
	mkdirs /bin
	for s in hunt-run hunt-stress-ng hunt-shuffle hunt-each; do
		echo "file /bin/$s $src/$s 0755 0 0"
	done
	for w in "$src"/hunt-workloads/*; do
		[ -f "$w" ] && echo "file /hunt/workloads/$(basename "$w") $w 0755 0 0"
	done
	mkdirs /usr/sbin
	for b in "${bins[@]}"; do
		echo "file ${b#*:}/$(basename "${b%%:*}") $(realpath "${b%%:*}") 0755 0 0"
		add_libs "${b%%:*}"
	done
	if [ -n "$selftests" ] && [ -d "$selftests" ]; then
		(cd "$selftests" && find . -mindepth 1 | sort) | while read -r rel; do
			p=$selftests/${rel#./}
			dest=/selftests/hunt/${rel#./}
			if [ -d "$p" ]; then
				mkdirs "$dest"
			elif [ -f "$p" ]; then
				mkdirs "${dest%/*}"
				echo "file $dest $(realpath "$p") $(stat -c %a "$p") 0 0"
				[ -x "$p" ] && add_libs "$p"
			fi
		done
	fi
} > "$list"
# The while loop above ran in a subshell: its library lines may repeat
# ones printed before; gen_init_cpio takes the last, so keep one of each.
awk '!seen[$0]++' "$list" > "$list.u"
"$gen" "$list.u" > "$work/overlay.cpio"
cat "$base" "$work/overlay.cpio" > "$out.tmp"
mv "$out.tmp" "$out"
echo "hunt-initramfs: wrote $out ($(stat -c %s "$out") bytes: $(stat -c %s "$base") of $base + the hunt's $(stat -c %s "$work/overlay.cpio"))"
