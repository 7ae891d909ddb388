#!/bin/bash
# series-export.sh - export patches/series as a mailable, numbered series
#
# usage: scripts/series-export.sh [options] [OUT_DIR]
#   OUT_DIR                output directory     (env OUT_DIR, build/series-out)
#   -t, --tarball FILE     kernel tarball       (env TARBALL, /usr/src/linux-source-6.1.tar.xz)
#   -s, --series FILE      series file          (env SERIES, patches/series; patches are
#                                                looked up next to it)
#       --cover FILE       cover letter text    (env COVER, patches/cover-letter.txt;
#                                                first paragraph = subject)
#   -w, --work-dir DIR     scratch directory    (env WORK_DIR, build/series-export)
#       --keep             keep the scratch trees
#
# 1. Extracts the tarball, commits it as the base of a fresh git repository
#    (fixed identity and dates, so the base commit is reproducible) and
#    applies every patch of the series with `git am` (a plain diff without
#    mail headers is applied with `git apply --index` and committed under
#    its file name, with a warning).
# 2. Writes OUT_DIR/0000-cover-letter.patch and OUT_DIR/NNNN-*.patch with
#    `git format-patch --cover-letter --numbered --base`, taking the cover
#    letter text from COVER.
# 3. Verifies the result: a second fresh extraction, `git init`, and
#    `git am` of every exported patch must apply cleanly and give the same
#    tree; the cover letter must have no *** SUBJECT/BLURB HERE ***
#    placeholder left.
# Exits non-zero on any failure.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

TARBALL=${TARBALL:-/usr/src/linux-source-6.1.tar.xz}
SERIES=${SERIES:-patches/series}
COVER=${COVER:-patches/cover-letter.txt}
WORK_DIR=${WORK_DIR:-build/series-export}
OUT_DIR=${OUT_DIR:-build/series-out}
KEEP=0

usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
	case "$1" in
	-t|--tarball)	TARBALL=$2; shift 2 ;;
	-s|--series)	SERIES=$2; shift 2 ;;
	--cover)	COVER=$2; shift 2 ;;
	-w|--work-dir)	WORK_DIR=$2; shift 2 ;;
	--keep)		KEEP=1; shift ;;
	-h|--help)	usage ;;
	-*)		echo "series-export: unknown option '$1'" >&2; usage ;;
	*)		OUT_DIR=$1; shift ;;
	esac
done

die() { echo "series-export: FAILED: $*" >&2; exit 1; }
log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*"; }
abspath() { case "$1" in /*) echo "$1" ;; *) echo "$root/$1" ;; esac; }

TARBALL=$(abspath "$TARBALL")
SERIES=$(abspath "$SERIES")
COVER=$(abspath "$COVER")
WORK_DIR=$(abspath "$WORK_DIR")
OUT_DIR=$(abspath "$OUT_DIR")

[ -r "$TARBALL" ] || die "tarball $TARBALL not found"
[ -r "$COVER" ] || die "cover letter text $COVER not found"
. "$root/scripts/series-lib.sh"
load_series "$SERIES" || die "cannot use $SERIES"
[ "${#patches[@]}" -gt 0 ] || die "$SERIES lists no patches"

# Reproducible identity for the base commit and the committer of every
# applied patch (authors come from the patches themselves).
export GIT_AUTHOR_NAME=usercopy-lab GIT_AUTHOR_EMAIL=usercopy-lab@example.org
export GIT_COMMITTER_NAME=usercopy-lab GIT_COMMITTER_EMAIL=usercopy-lab@example.org
base_date='2024-01-01T00:00:00 +0000'
git_=(git -c core.autocrlf=false -c advice.detachedHead=false -c init.defaultBranch=series
      -c am.keepcr=false -c commit.gpgsign=false -c gc.auto=0 -c maintenance.auto=false)

# fresh_repo DIR: extract the tarball as DIR, git init, commit everything
# (force: the Debian tarball's .gitignore ignores the whole top level).
fresh_repo() {
	local dir=$1 top
	extract_tree "$TARBALL" "$dir" || die "cannot extract a kernel tree from $TARBALL"
	"${git_[@]}" -C "$dir" init -q
	"${git_[@]}" -C "$dir" add -A -f
	GIT_AUTHOR_DATE=$base_date GIT_COMMITTER_DATE=$base_date \
		"${git_[@]}" -C "$dir" commit -q --no-verify \
		-m "$(basename "$TARBALL" .tar.xz) (Debian)"
}

src=$WORK_DIR/src
verify=$WORK_DIR/verify

# ---------------------------------------------------------------- 1. apply
log "extracting $(basename "$TARBALL") into $src"
fresh_repo "$src"
base=$("${git_[@]}" -C "$src" rev-parse HEAD)
for p in "${patches[@]}"; do
	f=$patch_dir/$p
	if grep -q '^Subject: ' "$f" && grep -q '^From: ' "$f"; then
		log "git am $p"
		"${git_[@]}" -C "$src" am -q --whitespace=nowarn "$f" ||
			{ "${git_[@]}" -C "$src" am --abort >/dev/null 2>&1 || true
			  die "git am of $p failed"; }
	else
		echo "series-export: warning: $p has no mail headers; committing it as '$p'" >&2
		"${git_[@]}" -C "$src" apply --index "$f" || die "git apply of $p failed"
		"${git_[@]}" -C "$src" commit -q --no-verify -m "$p"
	fi
done
count=$("${git_[@]}" -C "$src" rev-list --count "$base"..HEAD)
[ "$count" = "${#patches[@]}" ] || die "expected ${#patches[@]} commits, got $count"

# ---------------------------------------------------------------- 2. export
log "writing cover letter + ${#patches[@]} patches to $OUT_DIR"
rm -rf "$OUT_DIR"
mkdir -p "$OUT_DIR"
branch=$("${git_[@]}" -C "$src" symbolic-ref --short HEAD)
"${git_[@]}" -C "$src" config "branch.$branch.description" "$(cat "$COVER")"
"${git_[@]}" -C "$src" format-patch -q --cover-letter --cover-from-description=subject \
	--numbered --base="$base" -o "$OUT_DIR" "$base"..HEAD
cover=$OUT_DIR/0000-cover-letter.patch
[ -f "$cover" ] || die "no cover letter written"
if grep -q '\*\*\* \(SUBJECT\|BLURB\) HERE \*\*\*' "$cover"; then
	die "cover letter still has a placeholder"
fi
# Unfold the (possibly folded) Subject: header.
subject=$(sed -n '/^Subject: /,/^[^ ]/p' "$cover" | sed '$!b; /^Subject: /!d' |
	sed 's/^Subject: //; s/^ //' | tr '\n' ' ' | sed 's/ *$//')
# format-patch pads the number to the width of the total: 0/8, 00/11.
total=${#patches[@]}
zero=$(printf '%0*d' "${#total}" 0)
case "$subject" in
"[PATCH $zero/$total] "?*) ;;
*) die "unexpected cover letter subject '$subject'" ;;
esac

# ---------------------------------------------------------------- 3. verify
log "verifying: fresh extraction + git init + git am of the exported patches"
fresh_repo "$verify"
vbase=$("${git_[@]}" -C "$verify" rev-parse HEAD)
[ "$vbase" = "$base" ] || die "base commit not reproducible ($vbase != $base)"
mapfile -t exported < <(find "$OUT_DIR" -maxdepth 1 -name '[0-9][0-9][0-9][0-9]-*.patch' \
	! -name '0000-cover-letter.patch' | sort)
[ "${#exported[@]}" = "${#patches[@]}" ] ||
	die "exported ${#exported[@]} patches, series has ${#patches[@]}"
"${git_[@]}" -C "$verify" am -q "${exported[@]}" ||
	{ "${git_[@]}" -C "$verify" am --abort >/dev/null 2>&1 || true
	  die "exported patches do not git am cleanly onto a fresh tree"; }
vcount=$("${git_[@]}" -C "$verify" rev-list --count "$base"..HEAD)
[ "$vcount" = "${#patches[@]}" ] || die "git am made $vcount commits, expected ${#patches[@]}"
t_src=$("${git_[@]}" -C "$src" rev-parse 'HEAD^{tree}')
t_ver=$("${git_[@]}" -C "$verify" rev-parse 'HEAD^{tree}')
[ "$t_src" = "$t_ver" ] || die "tree after git am ($t_ver) differs from the applied series ($t_src)"

[ "$KEEP" = 1 ] || rm -rf "$src" "$verify" || echo "series-export: note: could not remove $WORK_DIR" >&2
echo
echo "$subject"
(cd "$OUT_DIR" && ls -1 ./*.patch | sed 's|^\./|  |')
echo "series-export: OK: cover letter + ${#patches[@]} patches in $OUT_DIR;" \
	"git am onto a fresh $(basename "$TARBALL" .tar.xz) (base $base) gives tree $t_ver"
