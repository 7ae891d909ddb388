# series-lib.sh: shell helpers shared by the scripts that read patches/series
# and extract the Debian kernel tarball.  Source it; it defines functions only.

# series_patches SERIES_FILE: the patch file names it lists, one per line
# ('#' comments and blank lines dropped).
series_patches() {
	sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$1" | grep -v '^$' || true
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
