# series-lib.sh: shell helpers shared by the scripts that read patches/series
# and extract the Debian kernel tarball.  Source it; it defines functions only.

# series_patches SERIES_FILE: the patch file names it lists, one per line
# ('#' comments and blank lines dropped).
series_patches() {
	sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' "$1"
}

# extract_tree TARBALL DIR: extract the tarball's top folder as DIR,
# replacing DIR.  Fails if the tarball holds no kernel tree.
extract_tree() {
	local tarball=$1 dir=$2 top
	rm -rf "$dir" "$dir.tmp"
	mkdir -p "$dir.tmp"
	tar -C "$dir.tmp" -xf "$tarball" || return 1
	top=$(find "$dir.tmp" -mindepth 1 -maxdepth 1 -type d | head -n 1)
	[ -n "$top" ] && [ -f "$top/Makefile" ] || return 1
	mv "$top" "$dir" && rmdir "$dir.tmp"
}

# load_series SERIES_FILE: set patches=(...) and patch_dir from it; says on
# stderr what is wrong and fails if the file is missing or names a patch
# that does not exist.
load_series() {
	local p list
	patch_dir=$(dirname "$1")
	[ -f "$1" ] && [ -r "$1" ] || { echo "series file $1 not found" >&2; return 1; }
	# Not a process substitution: its failure would be lost.
	list=$(series_patches "$1") || { echo "cannot read series file $1" >&2; return 1; }
	patches=()
	[ -z "$list" ] || mapfile -t patches <<<"$list"
	for p in "${patches[@]}"; do
		[ -r "$patch_dir/$p" ] ||
			{ echo "series lists $p but $patch_dir/$p does not exist" >&2; return 1; }
	done
}
