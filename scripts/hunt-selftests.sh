#!/bin/bash
# hunt-selftests.sh TREE OUT [TARGET...]
#
# Builds the kernel tree's own selftests that move data between user space
# and kernel buffers, for the hunt's selftests workloads
# (initramfs-src/hunt-workloads/selftests-*): every program of each TARGET
# (default below) that builds here, against the tree's exported UAPI
# headers (`make headers` into OUT/headers, never into the tree), with
# OUTPUT=OUT/build/TARGET; the executables are then copied to
# OUT/install/TARGET/, which scripts/hunt-initramfs.sh puts into the hunt
# initramfs as /selftests/hunt/TARGET/ (with the shared libraries they
# need).  A program that does not build (a library this host lacks, an
# option of a newer kernel) is left out and named; the rest still go in.
set -euo pipefail

tree=$(realpath "$1")
out=$(realpath -m "$2")
shift 2
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(net net/af_unix ipc mqueue filesystems filesystems/epoll
	proc ptrace prctl pidfd memfd splice kcmp clone3 mount openat2 core exec
	sigaltstack timens tmpfs nsfs pid_namespace mincore membarrier x86 mount_setattr
	move_mount_set_group syscall_user_dispatch vDSO)
src=$tree/tools/testing/selftests
[ -d "$src" ] || { echo "hunt-selftests: $src not found (make tree)" >&2; exit 1; }

mkdir -p "$out"
echo "hunt-selftests: UAPI headers into $out/headers"
make -s -C "$tree" O="$out/headers" headers >/dev/null
inc="-isystem $out/headers/usr/include"

built=0
for t in "${targets[@]}"; do
	[ -d "$src/$t" ] || { echo "hunt-selftests: no $src/$t, skipped"; continue; }
	mkdir -p "$out/build/$t"
	rm -rf "$out/install/$t"
	mkdir -p "$out/install/$t"
	log=$out/build/$t/make.log
	make -k -C "$src/$t" OUTPUT="$out/build/$t" KHDR_INCLUDES="$inc" all >"$log" 2>&1 || true
	n=0
	while IFS= read -r -d '' f; do
		file "$f" | grep -q 'ELF .* executable' || continue
		case "$f" in *.o | *.so) continue ;; esac
		# exec's load_address.* are 6-50 MB of holes, whole in a cpio
		[ "$(stat -c %s "$f")" -le $((4 << 20)) ] || { echo "hunt-selftests: $f: over 4 MiB, left out"; continue; }
		strip --strip-debug -o "$out/install/$t/${f##*/}" "$f"
		n=$((n + 1))
	done < <(find "$out/build/$t" -maxdepth 1 -type f -perm -u+x -print0)
	failed=$(grep -c '^make.*Error' "$log" || true)
	[ "$failed" = 0 ] && failed= || failed=" ($failed make errors, see $log)"
	echo "hunt-selftests: $t: $n programs$failed"
	built=$((built + n))
done
echo "hunt-selftests: $built programs in $out/install"
