#!/bin/bash
# lkdtm-patch.sh [--check | --wire TREE]
#
# lkdtm-tests/ is the source of truth for the LKDTM tests of this lab; the
# kernel patch that adds them to drivers/misc/lkdtm is generated from it.
#
#   (no option)   regenerate $PATCH: extract the tarball into a scratch tree,
#                 apply the patches/series entries listed before $PATCH (all
#                 of them if it is not listed yet), copy the test file in,
#                 wire it into the LKDTM Makefile, lkdtm.h and core.c, add the
#                 new tests to tools/testing/selftests/lkdtm/tests.txt, commit
#                 and git format-patch; then run checkpatch --strict on it.
#   --check       exit non-zero unless $PATCH (as in patches/) carries exactly
#                 lkdtm-tests/$FILE and the tests.txt lines of its tests.
#   --wire TREE   do the copy + wiring edits in an existing kernel tree (for
#                 incremental development builds); idempotent.
#
# Environment: TARBALL (default /usr/src/linux-source-6.1.tar.xz).
set -euo pipefail

cd "$(dirname "$0")/.."
. scripts/series-lib.sh

TARBALL=${TARBALL:-/usr/src/linux-source-6.1.tar.xz}
FILE=usercopy_whitelist.c
SRC=lkdtm-tests/$FILE
TESTS=lkdtm-tests/tests.txt
DEST=drivers/misc/lkdtm/$FILE
SELFTESTS=tools/testing/selftests/lkdtm/tests.txt
PATCH=patches/0010-lkdtm-usercopy-Add-tests-for-the-whitelists-of-real-caches.patch
# Fixed dates keep the generated patch byte-for-byte reproducible.
DATE="2026-12-03T12:00:00+0000"

die() { echo "lkdtm-patch: $*" >&2; exit 1; }

[ -r "$SRC" ] || die "$SRC not found"
[ -r "$TESTS" ] || die "$TESTS not found"

# Names of the tests defined by $SRC, in CRASHTYPE table order.
test_names() {
	sed -n 's/^[[:space:]]*CRASHTYPE(\([A-Z0-9_]*\)),\?$/\1/p' "$SRC"
}

# The lkdtm-tests/tests.txt lines (active or skipped) of the tests of $SRC.
test_lines() {
	local name line
	for name in $(test_names); do
		line=$(grep -E "^#?$name( |$)" "$TESTS") ||
			die "$TESTS has no line for $name"
		[ "$(printf '%s\n' "$line" | wc -l)" = 1 ] ||
			die "$TESTS has more than one line for $name"
		printf '%s\n' "$line"
	done
}

# insert_after FILE ANCHOR LINE...: insert LINEs after the one line equal to
# ANCHOR, unless the first LINE is already there.
insert_after() {
	local file=$1 anchor=$2 lines
	shift 2
	grep -qxF -- "$1" "$file" && return 0
	[ "$(grep -cxF -- "$anchor" "$file")" = 1 ] ||
		die "$file: expected exactly one line '$anchor'"
	lines=$(printf '%s\n' "$@")
	awk -v anchor="$anchor" -v lines="$lines" \
		'{ print } $0 == anchor { print lines }' "$file" > "$file.new"
	mv "$file.new" "$file"
}

# wire TREE: copy the test file into TREE and hook it into LKDTM.
wire() {
	local tree=$1 lines

	cp "$SRC" "$tree/$DEST"
	insert_after "$tree/drivers/misc/lkdtm/Makefile" \
		"lkdtm-\$(CONFIG_LKDTM)		+= usercopy.o" \
		"lkdtm-\$(CONFIG_LKDTM)		+= usercopy_whitelist.o"
	insert_after "$tree/drivers/misc/lkdtm/lkdtm.h" \
		"extern struct crashtype_category usercopy_crashtypes;" \
		"extern struct crashtype_category usercopy_whitelist_crashtypes;"
	insert_after "$tree/drivers/misc/lkdtm/core.c" \
		"	&usercopy_crashtypes," \
		"	&usercopy_whitelist_crashtypes,"
	mapfile -t lines < <(test_lines)
	insert_after "$tree/$SELFTESTS" "USERCOPY_KERNEL" "${lines[@]}"
}

# Print the contents of file PATH as added by the patch on stdin.
added_file() {
	awk -v path="b/$1" '
		/^diff --git / { inside = ($4 == path); hunk = 0; next }
		inside && /^@@ / { hunk = 1; next }
		inside && hunk && /^\+/ { print substr($0, 2) }
		inside && hunk && /^[^+]/ { inside = 0 }'
}

# Print the lines the patch on stdin adds to file PATH.
added_lines() {
	awk -v path="b/$1" '
		/^diff --git / { inside = ($4 == path); next }
		inside && /^\+\+\+ / { next }
		inside && /^\+/ { print substr($0, 2) }'
}

check() {
	local rc=0

	[ -r "$PATCH" ] || die "$PATCH not found; run $0 to generate it"
	if ! diff -u --label "$PATCH:$DEST" --label "$SRC" \
			<(added_file "$DEST" < "$PATCH") "$SRC"; then
		echo "lkdtm-patch: $PATCH is stale: its $DEST differs from $SRC" >&2
		rc=1
	fi
	if ! diff -u --label "$PATCH:$SELFTESTS" --label "$TESTS" \
			<(added_lines "$SELFTESTS" < "$PATCH") <(test_lines); then
		echo "lkdtm-patch: $PATCH is stale: its $SELFTESTS lines differ from $TESTS" >&2
		rc=1
	fi
	if ! series_patches patches/series | grep -qxF "${PATCH#patches/}"; then
		echo "lkdtm-patch: ${PATCH#patches/} is not listed in patches/series" >&2
		rc=1
	fi
	[ $rc = 0 ] && echo "lkdtm-patch: $PATCH matches lkdtm-tests/"
	return $rc
}

commit_message() {
	cat <<'EOF'
lkdtm/usercopy: Add tests for the whitelists of real caches

The USERCOPY_SLAB_WHITELIST_* tests check that hardened usercopy enforces
the usercopy region of a slab cache, but only on the private
"lkdtm-usercopy" cache. Nothing exercises the regions that the kernel
declares for its own caches, so a window that is lost, widened or shifted
by a change to the structure it describes goes unnoticed.

Add tests that fire at live objects of the whitelisted caches that can be
reached without special hardware:

  USERCOPY_WHITELIST_TASK_STRUCT_*  task_struct: arch thread_struct region
  USERCOPY_WHITELIST_MM_STRUCT_*    mm_struct: saved_auxv
  USERCOPY_WHITELIST_DENTRY_*       dentry: d_iname
  USERCOPY_WHITELIST_NAMES_CACHE_*  names_cache: the whole PATH_MAX object
  USERCOPY_WHITELIST_RAW_*          RAW sock: raw_sock.filter
  USERCOPY_WHITELIST_RAWV6_*        RAWv6 sock: raw6_sock.filter
  USERCOPY_WHITELIST_SCTP_*         SCTP sock: subscribe..initmsg
  USERCOPY_WHITELIST_MSG_MSG_*      msg_msg-<size>: text after the header
  USERCOPY_WHITELIST_TWO_CACHES_*   RAW, dentry, RAW again in one call

Each test recomputes the window from the expressions the kernel uses to
create the cache and reports it, copies exactly the window (which must
be allowed), and then copies one byte more, past the end of the window
or starting one byte before it, which must Oops with the cache name,
offset and size that the test reported. The copy_from_user() variants
write back the bytes they read beforehand and only overflow into
objects the test owns, so a kernel without the check survives them.

For CONFIG_HARDENED_USERCOPY_SPLIT_KMALLOC, USERCOPY_KMALLOC_SPLIT_* and
USERCOPY_KMALLOC_SPLIT_CG_* check that GFP_USERCOPY allocations (without
and with __GFP_ACCOUNT) come from their own usersized-kmalloc-<size> and
usersized-kmalloc-cg-<size> caches, never share a slab with the other
kinds of kmalloc() object of their size, and stay bounded by their
object size; they report XFAIL when the option is disabled.
USERCOPY_KMALLOC_DMA_* check that GFP_DMA wins over GFP_USERCOPY
(dma-kmalloc-<size>, ZONE_DMA pages), and USERCOPY_MEMDUP_USER_*,
USERCOPY_VMEMDUP_USER_* and USERCOPY_STRNDUP_USER_* that those helpers'
buffers come from the cache GFP_USER | GFP_USERCOPY selects. Neighbours
are found with the cache's object stride (s->size), so the tests also
work with slub_debug= red zones or tracking.

The whitelists under test come from the hardened usercopy whitelisting
series, based on PAX_USERCOPY from the last public grsecurity/PaX patch.
EOF
}

commit_notes() {
	cat <<'EOF'
checkpatch --strict: the one warning kept is "added, moved or deleted
file(s), does MAINTAINERS need updating?": the new file is covered by the
existing "drivers/misc/lkdtm/*" pattern of the LKDTM entry.
EOF
}

generate() {
	local tree p series=() ours mail report
	[ -r "$TARBALL" ] || die "kernel tarball $TARBALL not found"
	scratch=$(mktemp -d "${TMPDIR:-/tmp}/lkdtm-patch.XXXXXX")
	trap 'rm -rf "$scratch"' EXIT

	# patches/series entries before ours (all of them if ours is absent).
	mapfile -t series < <(series_patches patches/series)
	ours=${PATCH#patches/}

	echo "lkdtm-patch: extracting $TARBALL"
	tree=$scratch/linux
	extract_tree "$TARBALL" "$tree" || die "cannot extract a kernel tree from $TARBALL"
	for p in "${series[@]}"; do
		[ "$p" = "$ours" ] && break
		[ -r "patches/$p" ] || die "series lists $p but patches/$p does not exist"
		echo "lkdtm-patch: applying $p"
		patch -d "$tree" -p1 --forward --batch --quiet < "patches/$p" ||
			die "patch $p does not apply"
	done

	# Only the touched files need to be tracked to produce the diff.
	export GIT_AUTHOR_DATE=$DATE GIT_COMMITTER_DATE=$DATE
	git -C "$tree" init -q
	git -C "$tree" add -f drivers/misc/lkdtm "$SELFTESTS"
	git -C "$tree" commit -qm base
	wire "$tree"
	git -C "$tree" add -f drivers/misc/lkdtm "$SELFTESTS"
	git -C "$tree" commit -q -s -F <(commit_message)
	git -C "$tree" notes add -F <(commit_notes)
	git -C "$tree" format-patch -q --zero-commit --no-signature --notes \
		-o "$scratch/out" -1
	mail=$(ls "$scratch"/out/*.patch)
	cp "$mail" "$PATCH"
	echo "lkdtm-patch: wrote $PATCH"

	# The only finding accepted is the MAINTAINERS reminder for the new
	# file (covered by the LKDTM entry; justified in the patch notes).
	report=$(cd "$tree" && { ./scripts/checkpatch.pl --strict \
			--show-types "$OLDPWD/$PATCH" 2>/dev/null || true; })
	printf '%s\n' "$report" | grep -E '^(ERROR|WARNING|CHECK):|^total:' || true
	if printf '%s\n' "$report" | grep -E '^(ERROR|WARNING|CHECK):' |
			grep -qv '^WARNING:FILE_PATH_CHANGES:'; then
		die "checkpatch --strict is not clean on $PATCH"
	fi
}

case "${1:-}" in
--check) check ;;
--wire)
	if [ -z "${2:-}" ] || [ ! -f "$2/drivers/misc/lkdtm/core.c" ]; then
		die "--wire needs a kernel tree"
	fi
	wire "$2" ;;
"") generate; check || true ;;
*) die "usage: $0 [--check | --wire TREE]" ;;
esac
