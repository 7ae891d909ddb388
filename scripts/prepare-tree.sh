#!/bin/bash
# prepare-tree.sh TARBALL TREE SERIES_DIR
#
# Extracts the Debian linux-source tarball into TREE and applies every patch
# listed in SERIES_DIR/series, in order.  A stamp file records a hash of the
# tarball identity and of every series file; when it matches, the tree is
# left alone (so kernel builds stay incremental), otherwise the tree is
# re-extracted from scratch and the series re-applied.
#
# The kernel builds of the Makefile hold TREE.lock shared while kbuild
# reads the tree; this takes it exclusively, so a re-extraction waits for
# the builds that use the tree (another make in the same BUILD, a kernel
# of another variant) instead of deleting their sources under them.
set -euo pipefail

tarball=$1
tree=$2
series_dir=$3

die() { echo "prepare-tree: $*" >&2; exit 1; }

[ -r "$tarball" ] || die "kernel tarball $tarball not found (apt-get install linux-source-6.1)"

. "$(dirname "$0")/series-lib.sh"

load_series "$series_dir/series" || die "cannot use $series_dir/series"

stamp_of() {
	# Tarball identity: path, size and mtime (hashing 130 MB each run is slow).
	stat -c '%n %s %Y' "$tarball"
	sha256sum "$series_dir/series"
	for p in "${patches[@]}"; do sha256sum "$series_dir/$p"; done
}
want=$(stamp_of | sha256sum | cut -d' ' -f1)
stamp="$tree.stamp"

mkdir -p "$(dirname "$tree")"
exec 8>"$tree.lock"
if ! flock -n 8; then
	echo "prepare-tree: waiting for the kernel builds that use $tree to end"
	flock 8
fi

if [ -d "$tree" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
	echo "prepare-tree: $tree is up to date (${#patches[@]} patches)"
	exit 0
fi

echo "prepare-tree: extracting $tarball into $tree"
rm -f "$stamp"
extract_tree "$tarball" "$tree" || die "cannot extract a kernel tree from $tarball"

for p in "${patches[@]}"; do
	echo "prepare-tree: applying $p"
	patch -d "$tree" -p1 --forward --batch --quiet < "$series_dir/$p" ||
		die "patch $p does not apply (tree left at $tree for inspection)"
done
echo "$want" > "$stamp"
echo "prepare-tree: $tree ready (${#patches[@]} patches)"
