#!/bin/bash
# series-6.12.sh check|export TARBALL SERIES_DIR WORK FRAGMENT...
#
# The 6.12 series (patches-6.12/, issue #34; docs/line-6.12.md).
#
# check: every patch of SERIES_DIR/series passes checkpatch --strict with
#   no ERROR (the tree's scripts/checkpatch.pl, the patch on standard
#   input); the series `git am`s in order onto a git repository of the
#   pristine files it touches (taken from TARBALL: git am reads no other
#   file); and every prefix compiles what it changes: a fresh extraction,
#   configured with FRAGMENTs, `make prepare` once, then after each patch
#   the objects of the .c files it touches (a directory of new files:
#   that directory), with no compiler warning.  The whole series is linked
#   by the lab's own build of it (make kernels-6.12: build/kernel-612series).
#
# export: the fixes (the patches of SERIES_DIR/series with a Fixes: tag that
#   SERIES_DIR/stock/series does not list), each as a mail of its
#   own in WORK/out/fix-NNNN/: `git am` alone onto the pristine files'
#   repository, then `git format-patch` with "[PATCH net]" for net/ and
#   "[PATCH]" otherwise, To/Cc from the tree's get_maintainer.pl.  Each is
#   built alone on the pristine tree: a copy of the stock 6.12 build with
#   the LKDTM patch taken out and the fix put in (scripts/overlay-build.sh
#   --reverse), and its kbuild output must hold no warning.
#
# The stock 6.12 tree (BUILD/linux-source-6.12, prepared) must exist;
# export needs its build (build/kernel-612stock).  COMPILE=0: check without
# the compile step; BUILDS=0: export without building the fixes.  Exit status 0 all good,
# 1 a check failed, 2 a setup problem.
set -euo pipefail

mode=$1 tarball=$2 sdir=$3 work=$4
shift 4
sdir=$(cd "$sdir" && pwd)
frags=("$@")
here=$(cd "$(dirname "$0")" && pwd)
. "$here/series-lib.sh"
build=$(dirname "$work")
tree=$build/linux-source-6.12
die() { echo "series-6.12: $*" >&2; exit 2; }
fail=0
bad() { echo "series-6.12: FAIL: $*" >&2; fail=1; }
# no_warnings LOG WHAT: WHAT and the number of compiler warning lines in LOG;
# a failure if there is one.
no_warnings() {
	local n
	n=$(grep -c 'warning:' "$1" || true)
	echo "  $2, $n warning lines"
	[ "$n" = 0 ] || bad "$2: $n compiler warning lines ($1)"
}

[ -f "$tree.stamp" ] || die "prepare the stock tree first (make tree-6.12)"
load_series "$sdir/series" || die "cannot use $sdir/series"
series=("${patches[@]}")
load_series "$sdir/stock/series" || die "cannot use $sdir/stock/series"
stock=()
for p in "${patches[@]}"; do stock+=("$(basename "$p")"); done
fixes=()
for p in "${series[@]}"; do
	printf '%s\n' "${stock[@]}" | grep -qxF "$p" || ! grep -q '^Fixes: ' "$sdir/$p" ||
		fixes+=("$p")
done
mkdir -p "$work"
work=$(cd "$work" && pwd)
git_=(git -c user.name=usercopy-lab -c user.email=usercopy-lab@example.org
	-c commit.gpgsign=false -c advice.detachedHead=false)

# touched PATCH...: the files the patches change or create.
touched() { sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$@" | sort -u; }

# patch_notes PATCH: the text of its "Notes:" section (below the first
# "---"), unindented; nothing if it has none.
patch_notes() {
	awk '!cut && /^---$/ { cut = 1; next }
		cut == 1 && /^Notes:$/ { cut = 2; next }
		cut == 2 && /^ [^ ]/ { exit }
		cut == 2 { sub(/^    /, ""); print }' "$1" | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'
}

# small_repo DIR: a git repository of the pristine versions of every file
# the series touches (new files absent), committed as "base".
small_repo() {
	local dir=$1 top f
	rm -rf "$dir" "$dir.x"
	mkdir -p "$dir" "$dir.x"
	top=$( (tar -tf "$tarball" 2>/dev/null || true) | head -n 1 | cut -d/ -f1)
	# One pass over the tarball; the files the series creates are not in
	# it (tar names them and exits 2 after extracting the others).
	mapfile -t files < <(cd "$sdir" && touched "${series[@]}" | sed "s|^|$top/|")
	tar -C "$dir.x" -xf "$tarball" "${files[@]}" 2>/dev/null || true
	(cd "$dir.x/$top" && tar -cf - .) | tar -C "$dir" -xf -
	rm -rf "$dir.x"
	"${git_[@]}" -C "$dir" init -q
	"${git_[@]}" -C "$dir" add -A
	GIT_AUTHOR_DATE=2026-12-06T00:00:00Z GIT_COMMITTER_DATE=2026-12-06T00:00:00Z \
		"${git_[@]}" -C "$dir" commit -q -m base
}

if [ "$mode" = check ]; then
	echo "series-6.12: checkpatch --strict"
	for p in "${series[@]}"; do
		out=$(cd "$tree" && perl scripts/checkpatch.pl --strict - < "$sdir/$p" 2>&1 || true)
		sum=$(echo "$out" | grep '^total:' || echo "total: ?")
		echo "  $p: $sum"
		echo "$out" | grep -q '^total: 0 errors' || bad "$p: checkpatch: $sum"
	done
	echo "series-6.12: git am in order onto the pristine files"
	small_repo "$work/am"
	for p in "${series[@]}"; do
		"${git_[@]}" -C "$work/am" am -q --whitespace=nowarn "$sdir/$p" ||
			{ "${git_[@]}" -C "$work/am" am --abort 2>/dev/null || true; bad "$p does not git am"; break; }
		echo "  $p: applies"
	done
	if [ "${COMPILE:-1}" = 0 ]; then
		echo "series-6.12: COMPILE=0: the prefixes are not compiled"
		[ $fail = 0 ] && echo "series-6.12: check OK without compiling (${#series[@]} patches)"
		exit $fail
	fi
	echo "series-6.12: every prefix compiles what it changes"
	extract_tree "$tarball" "$work/tree" || die "cannot extract $tarball"
	"$here/kernel-config.sh" "$work/tree" "$work/o" "${frags[@]}" >/dev/null
	make -s -C "$work/tree" O="$work/o" CC="ccache gcc" -j"${JOBS:-2}" prepare >/dev/null
	for p in "${series[@]}"; do
		patch -d "$work/tree" -p1 --batch --quiet < "$sdir/$p" || { bad "$p does not apply"; break; }
		mapfile -t objs < <(cd "$sdir" && touched "$p" | sed -n \
			-e 's|^\(.*\)/[^/]*\.[ch]$|\1/|p' | sort -u)
		mapfile -t cobjs < <(cd "$sdir" && touched "$p" | sed -n 's|\.c$|.o|p')
		targets=()
		for o in "${cobjs[@]}"; do
			grep -qF "$(basename "$o")" "$work/tree/$(dirname "$o")/Makefile" 2>/dev/null &&
				targets+=("$o")
		done
		[ ${#targets[@]} -gt 0 ] || targets=("${objs[@]}")
		log=$work/compile-${p%%-*}.log
		if make -C "$work/tree" O="$work/o" CC="ccache gcc" -j"${JOBS:-2}" "${targets[@]}" \
				>"$log" 2>&1; then
			no_warnings "$log" "$p: compiles (${targets[*]})"
		else
			bad "$p: does not compile ($log)"
		fi
	done
	[ $fail = 0 ] && echo "series-6.12: check OK (${#series[@]} patches)"
	exit $fail
fi

[ "$mode" = export ] || die "usage: $0 check|export TARBALL SERIES_DIR WORK FRAGMENT..."
[ "${BUILDS:-1}" = 0 ] || [ -f "$build/kernel-612stock/vmlinux" ] ||
	die "build the stock 6.12 kernel first (make kernels-6.12)"
out=$work/out
rm -rf "$out"
small_repo "$work/am"
base=$("${git_[@]}" -C "$work/am" rev-parse HEAD)
for p in "${fixes[@]}"; do
	num=${p%%-*}
	fout=$out/fix-$num
	mkdir -p "$fout"
	"${git_[@]}" -C "$work/am" checkout -q -B "fix-$num" "$base"
	"${git_[@]}" -C "$work/am" am -q --whitespace=nowarn "$sdir/$p" ||
		{ "${git_[@]}" -C "$work/am" am --abort 2>/dev/null || true; bad "$p does not git am alone"; continue; }
	# The patch's notes (why Cc: stable or not, checkpatch's remarks, credit)
	# go below the --- of the mail, as in the series file: git am drops them.
	notes=$(patch_notes "$sdir/$p")
	[ -z "$notes" ] || "${git_[@]}" -C "$work/am" notes add -m "$notes"
	prefix=PATCH
	touched "$sdir/$p" | grep -qv '^net/' || prefix="PATCH net"
	args=()
	while read -r line; do
		addr=${line%% (*}
		case $line in
		*"(maintainer:"* | *"(supporter:"*) args+=(--to "$addr") ;;
		*) args+=(--cc "$addr") ;;
		esac
	done < <(cd "$tree" && perl scripts/get_maintainer.pl --no-git --no-fixes --rolestats \
		"$sdir/$p" 2>/dev/null)
	"${git_[@]}" -C "$work/am" format-patch -q -1 --zero-commit --notes --no-signature \
		--subject-prefix="$prefix" "${args[@]}" -o "$fout" >/dev/null
	echo "series-6.12: $p: [$prefix], applies alone; $(ls "$fout")"
	[ "${BUILDS:-1}" != 0 ] || { echo "  BUILDS=0: not built"; continue; }
	echo "series-6.12: $p: building it alone on the pristine tree"
	if JOBS=${JOBS:-2} "$here/overlay-build.sh" \
		$(for s in "${patches[@]}"; do printf -- '--reverse %s ' "$sdir/stock/$s"; done) \
		"$tree" "$build/kernel-612stock" "$work/kernel-fix-$num" "$sdir/$p" >"$fout/build.log" 2>&1; then
		klog=$work/kernel-fix-$num/.lab-overlay.log
		no_warnings "$klog" "$p: builds alone (bzImage)"
		# The log must show the patched files compiled, or the count
		# above says nothing about them.
		for f in $(touched "$sdir/$p" | sed -n 's|\.c$|.o|p'); do
			if grep -qE "^  CC +$f\$" "$klog"; then echo "  compiled: $f"
			else bad "$p: $f is not in the build log ($klog)"; fi
		done
	else
		bad "$p: does not build alone ($fout/build.log)"
	fi
done
[ $fail = 0 ] && echo "series-6.12: export OK: ${#fixes[@]} fixes in $out"
exit $fail
