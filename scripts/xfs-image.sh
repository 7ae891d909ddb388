#!/bin/bash
# xfs-image.sh OUT.img.gz
#
# Builds the small XFS image that initramfs-src/check-xfs-inline.c mounts in
# the guest (seed 009): an inline ("local" format) symlink /link ->
# short-target and a short-form ("local" format) directory /dir holding a
# and bb.  No root and no mount: mkfs.xfs -p fills the filesystem from a
# prototype file.  xfs_db then checks that both inodes really are in local
# format, so the guest reads exactly the inline data seed 009 was about.
#
# mkfs.xfs (xfsprogs >= 5.19) refuses filesystems under 300 MB unless
# TEST_DIR, TEST_DEV and QA_CHECK_FS are all set, as fstests sets them
# (xfsprogs mkfs/xfs_mkfs.c validate_supported()); 16 MB is the smallest
# allocation group size.  The image is sparse; gzip shrinks it to ~20 KB.
set -euo pipefail

out=${1:?usage: xfs-image.sh OUT.img.gz}
die() { echo "xfs-image: $*" >&2; exit 1; }
command -v mkfs.xfs >/dev/null && command -v xfs_db >/dev/null ||
	die "mkfs.xfs/xfs_db not found (apt-get install xfsprogs)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
img=$work/xfs.img

# Prototype file (xfsprogs mkfs/proto.c): boot image, block/inode counts,
# then the root directory; "l--777 0 0 TARGET" is a symlink, "$" closes a
# directory.  The names are the ones check-xfs-inline.c expects.
cat > "$work/proto" <<'EOF'
/dev/null
0 0
d--755 0 0
link l--777 0 0 short-target
dir d--755 0 0
a ---644 0 0 /dev/null
bb ---644 0 0 /dev/null
$
$
EOF

truncate -s 16m "$img"
TEST_DIR=1 TEST_DEV=1 QA_CHECK_FS=1 mkfs.xfs -q -p "$work/proto" "$img" ||
	die "mkfs.xfs failed"

# core.format 1 is XFS_DINODE_FMT_LOCAL: the data lives in the inode fork.
for path in /link /dir; do
	format=$(xfs_db -r -c "path $path" -c "print core.format" "$img") ||
		die "xfs_db cannot read $path"
	[ "$format" = "core.format = 1 (local)" ] ||
		die "$path is not in local format: $format"
done
[ "$(xfs_db -r -c "path /link" -c "print u3.symlink" "$img")" = \
	'u3.symlink = "short-target"' ] || die "/link does not point to short-target"
[ "$(xfs_db -r -c "path /dir" -c "print u3.sfdir3.hdr.count" "$img")" = \
	'u3.sfdir3.hdr.count = 2' ] || die "/dir does not hold two short-form entries"

mkdir -p "$(dirname "$out")"
gzip -9 -n -c "$img" > "$out.tmp"
mv "$out.tmp" "$out"
echo "xfs-image: wrote $out ($(stat -c %s "$out") bytes; /link and /dir in local format)"
