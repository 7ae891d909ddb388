#!/bin/bash
# lkdtm-patch.sh [--check | --wire TREE]
#
# lkdtm-tests/ is the source of truth for the LKDTM tests of this lab; the
# kernel patch that adds them to drivers/misc/lkdtm is generated from it.
# Every lkdtm-tests/*.c and *.h file is carried into drivers/misc/lkdtm/;
# each NAME.c defines "struct crashtype_category NAME_crashtypes", which
# the wiring declares in lkdtm.h and lists in core.c.
#
#   (no option)   regenerate $PATCH: extract the tarball into a scratch tree,
#                 apply the patches/series entries listed before $PATCH (all
#                 of them if it is not listed yet), copy the test files in,
#                 wire them into the LKDTM Makefile, lkdtm.h and core.c, add
#                 the new tests to tools/testing/selftests/lkdtm/tests.txt,
#                 commit and git format-patch; then run checkpatch --strict.
#   --check       exit non-zero unless $PATCH (as in patches/) adds exactly
#                 the lkdtm-tests/ source files, no other file, and the
#                 tests.txt lines of their tests.
#   --wire TREE   do the copy + wiring edits in an existing kernel tree (for
#                 incremental development builds); idempotent.
#
# Environment: TARBALL (default /usr/src/linux-source-6.1.tar.xz);
# LKDTM_PATCH: the patch to check instead of patches/'s (--check only; e.g.
# patches-6.12/0005-..., which must carry the same tests: its files under
# drivers/misc/lkdtm/lab-*/ are its own and not compared).
set -euo pipefail

cd "$(dirname "$0")/.."
. scripts/series-lib.sh

TARBALL=${TARBALL:-/usr/src/linux-source-6.1.tar.xz}
TESTS=lkdtm-tests/tests.txt
LKDTM=drivers/misc/lkdtm
SELFTESTS=tools/testing/selftests/lkdtm/tests.txt
PATCH=${LKDTM_PATCH:-patches/0011-lkdtm-usercopy-Add-tests-for-the-whitelists-of-real-caches.patch}
# Fixed dates keep the generated patch byte-for-byte reproducible.
DATE="2026-12-03T12:00:00+0000"

die() { echo "lkdtm-patch: $*" >&2; exit 1; }

# The test sources, usercopy_whitelist.c first (the order of the wiring).
mapfile -t SOURCES < <(cd lkdtm-tests && ls usercopy_whitelist.c 2>/dev/null;
	ls -- *.c *.h 2>/dev/null | grep -vx usercopy_whitelist.c)
[ -r lkdtm-tests/usercopy_whitelist.c ] || die "lkdtm-tests/usercopy_whitelist.c not found"
[ -r "$TESTS" ] || die "$TESTS not found"

# The .c files among them.
c_sources() {
	printf '%s\n' "${SOURCES[@]}" | grep '\.c$'
}

# Names of the tests defined by the .c files, in CRASHTYPE table order.
test_names() {
	local f
	for f in $(c_sources); do
		sed -n 's/^[[:space:]]*CRASHTYPE(\([A-Z0-9_]*\)),\?$/\1/p' "lkdtm-tests/$f"
	done
}

# TEST_LINES=(the lkdtm-tests/tests.txt lines, active or skipped, of those
# tests).  Runs in the current shell, never in a subshell or a process
# substitution, so that its die ends the script.
test_lines() {
	local name line
	TEST_LINES=()
	for name in $(test_names); do
		line=$(grep -E "^#?$name( |$)" "$TESTS") ||
			die "$TESTS has no line for $name"
		[ "$(printf '%s\n' "$line" | wc -l)" = 1 ] ||
			die "$TESTS has more than one line for $name"
		TEST_LINES+=("$line")
	done
}

# The crashtype category a NAME.c file defines: NAME_crashtypes.
category() {
	local f=$1 cat=${1%.c}_crashtypes
	grep -q "^struct crashtype_category $cat = {" "lkdtm-tests/$f" ||
		die "lkdtm-tests/$f does not define 'struct crashtype_category $cat'"
	echo "$cat"
}

# insert_after FILE ANCHOR LINE...: insert each LINE that is not in FILE
# yet, the first after the one line equal to ANCHOR, each further one
# after the previous LINE.
insert_after() {
	local file=$1 anchor=$2 line
	shift 2
	for line in "$@"; do
		if ! grep -qxF -- "$line" "$file"; then
			[ "$(grep -cxF -- "$anchor" "$file")" = 1 ] ||
				die "$file: expected exactly one line '$anchor'"
			awk -v anchor="$anchor" -v line="$line" \
				'{ print } $0 == anchor { print line }' "$file" > "$file.new"
			mv "$file.new" "$file"
		fi
		anchor=$line
	done
}

# wire TREE: copy the test files into TREE and hook them into LKDTM.
wire() {
	local tree=$1 f objs=() externs=() entries=() cat
	for f in "${SOURCES[@]}"; do
		cp "lkdtm-tests/$f" "$tree/$LKDTM/$f"
	done
	for f in $(c_sources); do
		cat=$(category "$f") || exit 1
		objs+=("lkdtm-\$(CONFIG_LKDTM)		+= ${f%.c}.o")
		externs+=("extern struct crashtype_category $cat;")
		entries+=("	&$cat,")
	done
	insert_after "$tree/$LKDTM/Makefile" \
		"lkdtm-\$(CONFIG_LKDTM)		+= usercopy.o" "${objs[@]}"
	insert_after "$tree/$LKDTM/lkdtm.h" \
		"extern struct crashtype_category usercopy_crashtypes;" "${externs[@]}"
	insert_after "$tree/$LKDTM/core.c" \
		"	&usercopy_crashtypes," "${entries[@]}"
	test_lines
	insert_after "$tree/$SELFTESTS" "USERCOPY_KERNEL" "${TEST_LINES[@]}"
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

# Print the paths of the files the patch on stdin creates.
new_files() {
	awk '/^diff --git / { path = substr($4, 3) }
		/^new file mode / { print path }'
}

check() {
	local rc=0 f want
	[ -r "$PATCH" ] || die "$PATCH not found; run $0 to generate it"
	for f in "${SOURCES[@]}"; do
		if ! diff -u --label "$PATCH:$LKDTM/$f" --label "lkdtm-tests/$f" \
				<(added_file "$LKDTM/$f" < "$PATCH") "lkdtm-tests/$f"; then
			echo "lkdtm-patch: $PATCH is stale: its $LKDTM/$f differs from lkdtm-tests/$f" >&2
			rc=1
		fi
	done
	want=$(printf "$LKDTM/%s\n" "${SOURCES[@]}" | sort)
	if [ "$(new_files < "$PATCH" | grep -v "^$LKDTM/lab-" | sort)" != "$want" ]; then
		echo "lkdtm-patch: $PATCH is stale: it creates $(new_files < "$PATCH" | xargs)," \
			"lkdtm-tests/ has $(echo "$want" | xargs)" >&2
		rc=1
	fi
	test_lines
	if ! diff -u --label "$PATCH:$SELFTESTS" --label "$TESTS" \
			<(added_lines "$SELFTESTS" < "$PATCH") \
			<(printf '%s\n' "${TEST_LINES[@]}"); then
		echo "lkdtm-patch: $PATCH is stale: its $SELFTESTS lines differ from $TESTS" >&2
		rc=1
	fi
	if ! series_patches "$(dirname "$PATCH")/series" | grep -qxF "$(basename "$PATCH")"; then
		echo "lkdtm-patch: $(basename "$PATCH") is not listed in $(dirname "$PATCH")/series" >&2
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
objects the test owns, so a kernel without the check survives them. No
test reads memory outside its object: a bad copy that leaves the object
gets 0 for its last byte instead of a snapshot of it, so that KASAN or
slub_debug have nothing to report before hardened usercopy does.

The remaining caches that the whitelisting series and
commit bf1867db9b85 ("net/rds: Whitelist rdma_cookie and rx_tstamp for
usercopy") gave a region are private to their subsystem. Their tests
find the cache by name with kmem_cache_find(), allocate an object from
it and test the region that kmem_cache_usercopy_region() reports. They
hold the subsystem while they use its cache, as its users do, so that a
module cannot be removed under them (a module's caches die with it):
get_fs_type() for cifs and OrangeFS, an RDS socket on the InfiniBand
transport for rds_rdma. Where the subsystem is a module, they first load
it with request_module(), as "modprobe NAME" would; if it cannot be
loaded, they report XFAIL.


  USERCOPY_WHITELIST_CIFS_REQUEST_*   cifs_request: the whole object
  USERCOPY_WHITELIST_CIFS_SMALL_RQ_*  cifs_small_rq: the whole object
  USERCOPY_WHITELIST_ORANGEFS_*       orangefs_inode_cache: link_target
  USERCOPY_WHITELIST_RDS_IB_*         rds_ib_incoming: ii_inc.i_usercopy
  USERCOPY_WHITELIST_SCTPV6_*         SCTPv6 sock: sctp.subscribe..initmsg
  USERCOPY_WHITELIST_CAIF_*           PF_CAIF sock: conn_req.param

caif_create() gives sk_alloc() a struct proto with a region but never
registers it, so there is no "PF_CAIF" cache: the CAIF sockets come from
kmalloc() and the declared window is not enforced. The CAIF tests say
so with an XFAIL, a known defect, and copy nothing (a copy past the
window of a kmalloc() object could only pass); their tests.txt text is
the report of a kernel that enforces the window, so run.sh never counts
that defect as a pass. Tests of subsystems that the kernel lacks report
XFAIL.

For CONFIG_HARDENED_USERCOPY_SPLIT_KMALLOC, USERCOPY_KMALLOC_SPLIT_* and
USERCOPY_KMALLOC_SPLIT_CG_* check that GFP_USERCOPY allocations (without
and with __GFP_ACCOUNT) come from their own usersized-kmalloc-<size> and
usersized-kmalloc-cg-<size> caches, never share a slab with the other
kinds of kmalloc() object of their size, and stay bounded by their
object size; they report XFAIL when the option is disabled or the
kernel is booted with slab_common.usercopy_split=0 (as do
USERCOPY_WHITELIST_MSG_MSG_*, whose msg_msg caches are not created then),
which they tell from the kmalloc caches: the user-sized cache type then
holds the general caches.
USERCOPY_KMALLOC_DMA_* check that GFP_DMA wins over GFP_USERCOPY
(dma-kmalloc-<size>, ZONE_DMA pages), and USERCOPY_MEMDUP_USER_*,
USERCOPY_VMEMDUP_USER_* and USERCOPY_STRNDUP_USER_* that those helpers'
buffers come from the cache GFP_USER | GFP_USERCOPY selects. SLOB has
no kmalloc cache types: there these tests report XFAIL.

USERCOPY_VMALLOC_NO_GUARD_* and USERCOPY_VMALLOC_PERCPU_* copy the last
64 bytes of vmalloc areas without a guard page, a VM_NO_GUARD mapping
and the last object of a vmalloc-backed per-cpu chunk, which must not be
reported, while USERCOPY_VMALLOC still must be. The VM_NO_GUARD tests
report XFAIL when LKDTM is a module (__vmalloc_node_range() is not
exported), the per-cpu ones on kernels whose per-cpu chunks do not come
from vmalloc (!CONFIG_SMP).

The tests use only interfaces exported to modules and no private
header, so they work with LKDTM built in or as a module. Neighbours are
found as the closest pair of objects in one slab, so the tests also work
with slub_debug= red zones or tracking.

The whitelists under test come from the hardened usercopy whitelisting
series, based on PAX_USERCOPY from the last public grsecurity/PaX patch.
EOF
}

commit_notes() {
	cat <<'EOF'
checkpatch --strict: the warning "added, moved or deleted file(s), does
MAINTAINERS need updating?" is kept: the new files are covered by the
existing "drivers/misc/lkdtm/*" pattern of the LKDTM entry.  Where the
tree has git history without mainline's, UNKNOWN_COMMIT_ID ("Unknown
commit id 'bf1867db9b85', maybe rebased or not pulled?") only says that:
bf1867db9b85 is the mainline commit named in the message.
EOF
}

generate() {
	local tree p series=() ours mail report n k
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
	# The identity of the other patches of the series, not whoever runs
	# this: the patch must not depend on the caller's git configuration.
	export GIT_AUTHOR_DATE=$DATE GIT_COMMITTER_DATE=$DATE
	export GIT_AUTHOR_NAME=usercopy-lab GIT_AUTHOR_EMAIL=usercopy-lab@example.org
	export GIT_COMMITTER_NAME=usercopy-lab GIT_COMMITTER_EMAIL=usercopy-lab@example.org
	git -C "$tree" init -q
	git -C "$tree" add -f drivers/misc/lkdtm "$SELFTESTS"
	git -C "$tree" commit -qm base
	wire "$tree"
	git -C "$tree" add -f drivers/misc/lkdtm "$SELFTESTS"
	git -C "$tree" commit -q -s -F <(commit_message)
	git -C "$tree" notes add -F <(commit_notes)
	# Numbered as the other files of patches/: [PATCH k/n], its place in
	# the series (after the last entry if it is not listed yet).
	n=${#series[@]}; k=0
	for p in "${series[@]}"; do
		k=$((k + 1))
		[ "$p" = "$ours" ] && break
	done
	[ "$k" -gt 0 ] && [ "${series[k-1]}" = "$ours" ] || { n=$((n + 1)); k=$n; }
	git -C "$tree" format-patch -q --zero-commit --no-signature --notes \
		--subject-prefix="PATCH $(printf '%0*d/%d' "${#n}" "$k" "$n")" \
		-o "$scratch/out" -1
	mail=$(ls "$scratch"/out/*.patch)
	cp "$mail" "$PATCH"
	echo "lkdtm-patch: wrote $PATCH"

	# The findings accepted are the MAINTAINERS reminder for the new files
	# (covered by the LKDTM entry) and the unknown id of the mainline
	# commit the message cites (the scratch repository holds the Debian
	# tarball, not mainline's history); both justified in the patch notes.
	report=$(cd "$tree" && { ./scripts/checkpatch.pl --strict \
			--show-types "$OLDPWD/$PATCH" 2>/dev/null || true; })
	printf '%s\n' "$report" | grep -E '^(ERROR|WARNING|CHECK):|^total:' || true
	if printf '%s\n' "$report" | grep -E '^(ERROR|WARNING|CHECK):' |
			grep -Eqv '^WARNING:(FILE_PATH_CHANGES|UNKNOWN_COMMIT_ID):'; then
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
"")
	[ -z "${LKDTM_PATCH:-}" ] || die "LKDTM_PATCH is for --check only"
	generate; check || true ;;
*) die "usage: $0 [--check | --wire TREE]" ;;
esac
