#!/bin/bash
# prepare-tree.sh TARBALL TREE SERIES_DIR
#
# Extracts the Debian linux-source tarball into TREE and applies every patch
# listed in SERIES_DIR/series, in order.  A stamp file records a hash of the
# tarball identity and of every series file; when it matches, the tree is
# left alone (so kernel builds stay incremental); when the series only
# grew, the new patches are applied on top (TREE.applied records what the
# tree holds); otherwise the tree is re-extracted from scratch and the
# series re-applied.
#
# The kernel builds of the Makefile hold TREE.lock shared while kbuild
# reads the tree; this takes it shared to see that the tree is up to date
# (so a make beside a running kernel build goes on) and exclusively to
# re-extract it, so a re-extraction waits for the builds that use the tree
# (another make in the same BUILD, a kernel of another variant) instead of
# deleting their sources under them.
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

up_to_date() { [ -d "$tree" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; }
# TREE.applied, the tree's history: the tarball's identity, then one line
# per applied patch (written with the stamp).
applied=$tree.applied
history_of() {
	stat -c '%n %s %Y' "$tarball"
	for p in "$@"; do echo "$(sha256sum < "$series_dir/$p" | cut -d' ' -f1) $p"; done
}

mkdir -p "$(dirname "$tree")"
exec 8>"$tree.lock"
# An up-to-date tree is only read: a shared hold, beside running builds.
flock -s 8
if up_to_date; then
	# a tree prepared before TREE.applied existed gets its history
	[ -f "$applied" ] || history_of "${patches[@]}" > "$applied"
	echo "prepare-tree: $tree is up to date (${#patches[@]} patches)"
	exit 0
fi
flock -u 8
if ! flock -n 8; then
	echo "prepare-tree: waiting for the kernel builds that use $tree to end"
	flock 8
fi
# Another prepare-tree may have done it while this one waited.
if up_to_date; then
	echo "prepare-tree: $tree is up to date (${#patches[@]} patches)"
	exit 0
fi

# When the series only grew (every applied patch is still its prefix,
# unchanged), the new patches are applied on top: the files no new patch
# touches keep their mtimes, so kernel builds stay incremental.
# A tree without its stamp is re-extracted whatever its history says: a
# mutation or overlay build (scripts/mutation-run.sh, overlay-build.sh)
# moves the stamp aside while the tree carries its patch.
start=0
if [ -d "$tree" ] && [ -f "$stamp" ] && [ -f "$applied" ]; then
	have=$(cat "$applied")
	n=$(($(printf '%s\n' "$have" | wc -l) - 1))
	if [ "$n" -le "${#patches[@]}" ] && [ "$have" = "$(history_of "${patches[@]:0:$n}")" ]; then
		start=$n
	fi
fi
rm -f "$stamp"
if [ "$start" = 0 ]; then
	echo "prepare-tree: extracting $tarball into $tree"
	rm -f "$applied"
	extract_tree "$tarball" "$tree" || die "cannot extract a kernel tree from $tarball"
else
	echo "prepare-tree: $tree has the first $start patches of the series: applying the rest"
fi

for p in "${patches[@]:$start}"; do
	echo "prepare-tree: applying $p"
	# The history goes first: an interrupted run re-extracts next time.
	rm -f "$applied"
	patch -d "$tree" -p1 --forward --batch --quiet < "$series_dir/$p" ||
		die "patch $p does not apply (tree left at $tree for inspection)"
done
history_of "${patches[@]}" > "$applied"
echo "$want" > "$stamp"
echo "prepare-tree: $tree ready (${#patches[@]} patches)"
