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
#       --no-build         do not build the standalone fixes (step 4)
#   -j, --jobs N           make -j for step 4 (env JOBS, 2)
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
# 4. Exports every patch of the series that carries a "Fixes:" tag (the
#    fixes of 6.1 itself: 0001 mm/usercopy, 0010 net/rds) once more as a
#    series of its own, for its maintainers: OUT_DIR/fix-NNNN/ holds a
#    cover letter (text: patches/cover-NNNN.txt, first paragraph =
#    subject) and the patch, with To: the maintainers and supporters and
#    Cc: the lists that the pristine tree's scripts/get_maintainer.pl
#    --no-git names, and Cc: stable where the patch carries
#    "Cc: stable@vger.kernel.org" (0010; 0001 does not, see its notes).  Each is
#    checked to `git am` alone onto a fresh `git init` of the pristine tree
#    and to build there: `make tinyconfig` + the lab fragment +
#    kernel-config/matrix/95-rds-tcp.config (RDS over TCP, which 0010
#    touches) + 96-anybus.config (the Anybus-S host, 0012), bzImage, with
#    no compiler warning (skip with --no-build).
# Environment: SERIES_LOCK=FILE runs each fix's bzImage build under
# `flock FILE nice -n 5`, one kernel per hold; its time excludes the wait.
# Exits non-zero on any failure.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

TARBALL=${TARBALL:-/usr/src/linux-source-6.1.tar.xz}
SERIES=${SERIES:-patches/series}
# The fixes are built in-tree in fresh extractions: relative paths only, so
# ccache hits across the two fixes and across runs (see series-check.sh).
export CCACHE_NOHASHDIR=1
COVER=${COVER:-patches/cover-letter.txt}
WORK_DIR=${WORK_DIR:-build/series-export}
OUT_DIR=${OUT_DIR:-build/series-out}
KEEP=0
BUILD=1
JOBS=${JOBS:-2}
LAB_CONFIG=${LAB_CONFIG:-kernel-config/lab.config}
# FIX_CONFIG: space-separated fragments, merged in order
FIX_CONFIG=${FIX_CONFIG:-kernel-config/matrix/95-rds-tcp.config kernel-config/matrix/96-anybus.config}
read -ra fix_configs <<< "$FIX_CONFIG"

# kmake MAKE-ARGS...: make, under `flock $SERIES_LOCK nice -n 5` when
# SERIES_LOCK is set (one kernel per hold, as series-check.sh); the seconds
# spent waiting for the lock go to lock_wait, not to the build's time.
SERIES_LOCK=${SERIES_LOCK:-}
lock_wait=0
kmake() {
	local t0 held rc
	lock_wait=0
	[ -n "$SERIES_LOCK" ] || { make "$@"; return; }
	held=$(mktemp)
	t0=$(date +%s)
	# shellcheck disable=SC2016 # expanded by the inner bash
	flock "$SERIES_LOCK" bash -c 'date +%s > "$0"; exec nice -n 5 make "$@"' "$held" "$@"
	rc=$?
	lock_wait=$(( $(cat "$held" 2>/dev/null || echo "$t0") - t0 ))
	[ -s "$held" ] || lock_wait=0
	rm -f "$held"
	return $rc
}

usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
	case "$1" in
	-t|--tarball)	TARBALL=$2; shift 2 ;;
	-s|--series)	SERIES=$2; shift 2 ;;
	--cover)	COVER=$2; shift 2 ;;
	-w|--work-dir)	WORK_DIR=$2; shift 2 ;;
	--keep)		KEEP=1; shift ;;
	--no-build)	BUILD=0; shift ;;
	-j|--jobs)	JOBS=$2; shift 2 ;;
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

# ---------------------------------------------------------------- 4. fixes
# get_maintainer FILE: "To: ..." and "Cc: ..." lines for FILE from the
# pristine tree's get_maintainer.pl: people (maintainer, supporter) to To,
# reviewers and lists to Cc.
# --no-fixes: its default looks the Fixes: commits up with git, which the
# tarball's history-less repository cannot do ("ambiguous argument"); the
# patches name the authors of the commits they fix in their own Cc: lines.
get_maintainer() {
	(cd "$pristine" && perl scripts/get_maintainer.pl --no-git --no-fixes --rolestats "$1") |
		awk '{ addr = $0; sub(/ \(.*$/, "", addr)
		       if ($0 ~ /\((maintainer|supporter):/) print "To: " addr
		       else print "Cc: " addr }'
}

mapfile -t fixes < <(for p in "${patches[@]}"; do
	grep -q '^Fixes: ' "$patch_dir/$p" && echo "$p"; done)
[ "${#fixes[@]}" -gt 0 ] || { echo "series-export: no patch carries Fixes:"; exit 0; }
pristine=$WORK_DIR/pristine
log "extracting the pristine tree for the fixes' series"
fresh_repo "$pristine"
for p in "${fixes[@]}"; do
	f=$patch_dir/$p
	num=${p%%-*}
	fcover=$patch_dir/cover-$num.txt
	fout=$OUT_DIR/fix-$num
	[ -r "$fcover" ] || die "$p carries Fixes: but $fcover (its cover text) is missing"
	log "fix $p: git am onto the pristine tree"
	"${git_[@]}" -C "$pristine" checkout -q -B "fix-$num" "$base"
	"${git_[@]}" -C "$pristine" am -q --whitespace=nowarn "$f" ||
		{ "${git_[@]}" -C "$pristine" am --abort >/dev/null 2>&1 || true
		  die "$p does not apply alone to the pristine tree"; }
	mapfile -t to < <(get_maintainer "$f" | sed -n 's/^To: //p')
	mapfile -t cc < <(get_maintainer "$f" | sed -n 's/^Cc: //p')
	[ "${#to[@]}" -gt 0 ] || die "get_maintainer.pl names no maintainer for $p"
	args=()
	for a in "${to[@]}"; do args+=(--to="$a"); done
	stable=()
	grep -qx 'Cc: stable@vger.kernel.org' "$f" && stable=(stable@vger.kernel.org)
	for a in "${cc[@]}" "${stable[@]}"; do args+=(--cc="$a"); done
	"${git_[@]}" -C "$pristine" config "branch.fix-$num.description" "$(cat "$fcover")"
	rm -rf "$fout"
	"${git_[@]}" -C "$pristine" format-patch -q --cover-letter --cover-from-description=subject \
		--numbered --base="$base" "${args[@]}" -o "$fout" "$base"..HEAD
	grep -q '\*\*\* \(SUBJECT\|BLURB\) HERE \*\*\*' "$fout/0000-cover-letter.patch" &&
		die "cover letter of $p still has a placeholder"
	# Check the exported mail, not the file it came from: git am alone onto
	# a fresh pristine repository.
	fverify=$WORK_DIR/verify-$num
	fresh_repo "$fverify"
	mapfile -t mails < <(find "$fout" -maxdepth 1 -name '[0-9][0-9][0-9][0-9]-*.patch' \
		! -name '0000-cover-letter.patch' | sort)
	"${git_[@]}" -C "$fverify" am -q "${mails[@]}" ||
		{ "${git_[@]}" -C "$fverify" am --abort >/dev/null 2>&1 || true
		  die "the exported $p does not git am onto a fresh pristine tree"; }
	if [ "$BUILD" = 1 ]; then
		log "fix $p: building bzImage (tinyconfig + $(basename "$LAB_CONFIG")$(printf ' + %s' "${fix_configs[@]##*/}"))"
		t0=$SECONDS
		# kconfig's own messages (merge_config's "override: ... changes
		# choice state") go to a log of their own: only kbuild's lines are
		# counted as compiler warnings
		{
			make -C "$fverify" tinyconfig &&
			(cd "$fverify" && scripts/kconfig/merge_config.sh -m .config \
				"$(abspath "$LAB_CONFIG")" $(for c in "${fix_configs[@]}"; do abspath "$c"; done)) &&
			make -C "$fverify" olddefconfig
		} > "$WORK_DIR/config-$num.log" 2>&1 ||
			{ tail -n 20 "$WORK_DIR/config-$num.log" >&2
			  die "$p alone: configuring failed (log: $WORK_DIR/config-$num.log)"; }
		kmake -C "$fverify" -s CC="ccache gcc" -j"$JOBS" bzImage \
			> "$WORK_DIR/build-$num.log" 2>&1 ||
			{ tail -n 20 "$WORK_DIR/build-$num.log" >&2
			  die "$p alone on the pristine tree does not build (log: $WORK_DIR/build-$num.log)"; }
		warn=$(grep -c -E '(warning|error):' "$WORK_DIR/build-$num.log" || true)
		log "fix $p: builds alone ($((SECONDS - t0 - lock_wait)) s, $warn compiler warning lines$(
			[ "$lock_wait" = 0 ] || echo ", after ${lock_wait} s waiting for the lock"))"
		[ "$warn" = 0 ] || die "$p alone: $warn compiler warning lines (log: $WORK_DIR/build-$num.log)"
	fi
	[ "$KEEP" = 1 ] || rm -rf "$fverify"
	echo "series-export: OK: $p alone in $fout: To: ${to[*]}; Cc: ${cc[*]} ${stable[*]}"
done
[ "$KEEP" = 1 ] || rm -rf "$pristine"
