#!/bin/bash
# initramfs-selftests.sh TREE LAB_TESTS_TXT BUSYBOX
#
# Prints the gen_init_cpio lines that put the kernel tree's LKDTM selftest
# runner into the guest (see harness/usercopy_lab/judge/selftests.py):
#
#   /selftests/lkdtm/run.sh         TREE/tools/testing/selftests/lkdtm/run.sh
#   /selftests/lkdtm/tree/tests.txt TREE's own tests.txt
#   /selftests/lkdtm/lab/tests.txt  LAB_TESTS_TXT (lkdtm-tests/tests.txt)
#   /selftests/lkdtm/DIR/NAME.sh    -> ../run.sh for every NAME of that
#                                   tests.txt, as the upstream Makefile
#                                   installs one copy per listed test (run.sh
#                                   takes the test name from its file name).
#                                   A NAME a tests.txt does not list gets no
#                                   script: kselftest would not run it (and
#                                   6.1's run.sh, under set -e, would exit 1
#                                   silently at its tests.txt grep).
#
# run.sh is a POSIX sh script; busybox ash runs it, and busybox has every
# tool it calls except comm (`comm --nocheck-order -13`), so coreutils'
# comm and the shared libraries it needs (ldd) are copied in when busybox
# lacks it.  Nothing here is committed: it is read from the tree at build.
set -euo pipefail

tree=$1
lab_tests=$2
busybox=$3
src=$tree/tools/testing/selftests/lkdtm

die() { echo "initramfs-selftests: $*" >&2; exit 1; }
[ -r "$src/run.sh" ] || die "$src/run.sh not found (make tree)"
[ -r "$src/tests.txt" ] || die "$src/tests.txt not found (make tree)"
[ -r "$lab_tests" ] || die "$lab_tests not found"

# Test names of a tests.txt: the upstream Makefile's `awk '{print $1}' |
# sed -e 's/\#//'`, without this lab's "# comment" lines.
names() {
	grep -v '^# ' "$1" | awk 'NF { sub(/^#/, "", $1); print $1 }' | sort -u
}

echo "dir /selftests 0755 0 0"
echo "dir /selftests/lkdtm 0755 0 0"
echo "file /selftests/lkdtm/run.sh $(realpath "$src/run.sh") 0755 0 0"
for pair in "tree:$src/tests.txt" "lab:$lab_tests"; do
	dir=${pair%%:*}
	file=${pair#*:}
	echo "dir /selftests/lkdtm/$dir 0755 0 0"
	echo "file /selftests/lkdtm/$dir/tests.txt $(realpath "$file") 0644 0 0"
	for name in $(names "$file"); do
		echo "slink /selftests/lkdtm/$dir/$name.sh ../run.sh 0777 0 0"
	done
done

if ! "$busybox" --list | grep -qx comm; then
	comm=$(command -v comm) || die "comm not found (coreutils)"
	echo "file /bin/comm $(realpath "$comm") 0755 0 0"
	declare -A dirs=()
	for lib in $(ldd "$comm" | grep -o '/[^ ]*'); do
		d=
		IFS=/ read -ra parts <<< "${lib%/*}"
		for p in "${parts[@]}"; do
			[ -n "$p" ] || continue
			d=$d/$p
			[ -n "${dirs[$d]:-}" ] || { echo "dir $d 0755 0 0"; dirs[$d]=1; }
		done
		echo "file $lib $(realpath "$lib") 0755 0 0"
	done
fi
