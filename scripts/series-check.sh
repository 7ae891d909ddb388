#!/bin/bash
# series-check.sh - apply, build and checkpatch every prefix of patches/series
#
# usage: scripts/series-check.sh [options]
#   -t, --tarball FILE     kernel tarball        (env TARBALL, /usr/src/linux-source-6.1.tar.xz)
#   -b, --build-dir DIR    work directory        (env BUILD_DIR, build/series-check)
#   -c, --config FILE      lab config fragment   (env LAB_CONFIG, kernel-config/lab.config)
#   -s, --series FILE      series file           (env SERIES, patches/series; patches are
#                                                 looked up next to it)
#   -j, --jobs N           make -j               (env JOBS, 2)
#       --cc CC            compiler              (env KCC, "ccache gcc")
#       --no-variants      skip the variant and matrix builds after the last patch
#       --no-cross         skip the matrix configurations of other architectures
#       --whole            build only the whole series (every patch is still
#                          applied in order and checkpatched), not every prefix
#       --matrix LIST      the matrix rows to build, in this order (env MATRIX):
#                          comma- or space-separated keys, each a matrix file's
#                          name or its leading number (50, 50-lkdtm-module), or
#                          nosplit / slab for the lab's variants; the rows left
#                          out are listed as "not run".  Default: all of them.
#       --compile-only     instead of bzImage (and modules), compile per
#                          configuration only `prepare` and the objects of
#                          kernel-config/matrix/compile-only.objects that the
#                          .config enables (the .c files the series changes);
#                          for a row with the modules target, every symbol
#                          that the series' own LKDTM objects (lkdtm-tests/*.c)
#                          leave undefined must be defined by an LKDTM object
#                          or exported (EXPORT_SYMBOL*, EXPORT_PER_CPU_SYMBOL*)
#                          in the tree: modpost's check for the new code,
#                          approximated without vmlinux.
#                          Rows say "compiled", not "yes": no link, no modpost.
#       --extract-only     extract the tree (and, with --matrix naming another
#                          architecture or by default, the second tree with the
#                          whole series applied) and stop: no kbuild, so this
#                          part can run before taking the kernel build lock.
#                          The next run uses those trees once instead of
#                          extracting again (a stamp file records that each is
#                          untouched: the tarball, and the series' checksum).
#       --keep DIR         keep the kernel of every matrix row whose file names a
#                          lab kernel (`# matrix-keep: NAME`) as DIR/kernel-NAME
#                          (env KEEP_DIR): boot image, vmlinux, System.map,
#                          .config and modules at their kbuild paths.  Only if
#                          the row sets exactly the options of that kernel's
#                          fragment (kernel-config/variant-NAME.config or
#                          arch-NAME.config), so it is that kernel: with
#                          DIR = the lab's build/, `make suite-module` and
#                          `make suite-arch ARCH=...` with PREBUILT=1 boot it
#                          instead of building the same configuration again.
#
# Environment: SERIES_LOCK=FILE runs every kbuild under `flock FILE nice -n 5`,
# one configuration per hold (the lock is released between rows, so other
# users of the machine get their turn); each row's time is its own kbuild's,
# the wait for the lock is said apart.
#
# One tree is extracted fresh from the tarball into BUILD_DIR/linux-source-6.1.
# Then, for k = 1..n, patch k is applied with `patch -p1` (as the lab build
# does) on top of patches 1..k-1, the tree is configured with
# `make tinyconfig` + the lab fragment (merge_config.sh -m, olddefconfig;
# every fragment line whose option the tree defines must land in .config)
# and bzImage is rebuilt incrementally, so every prefix is built from its
# own state; ccache makes reruns cheap.  Each patch
# also goes through `scripts/checkpatch.pl --strict`.  After the last patch
# the whole series is built once more for each configuration of the build
# matrix, named in the log and the table with its time: every
# kernel-config/matrix/*.config in name order (FALLBACK=y, MEMCG=n, LKDTM=m
# with modpost, SLOB, HARDENED_USERCOPY=n, SYSVIPC=n, SMP, RDS/TCP, i386,
# arm64; see kernel-config/matrix/README.md) and, after the first, the
# lab's own kernel-config/variant-nosplit.config and variant-slab.config.
# The x86-64 ones are incremental rebuilds of the prefix tree (kbuild
# rebuilds what depends on the options that changed); i386 and arm64 are
# built out of tree (O=BUILD_DIR/cross/kernel-ARCH) in a second extraction
# with the whole series applied, arm64 with CROSS_COMPILE=aarch64-linux-gnu-
# (Debian's gcc-aarch64-linux-gnu).  ZONE_DMA and MEMCG_KMEM are in the lab
# fragment itself, so every prefix is built with them.
#
# Prints a table and exits non-zero if a patch does not apply (patch -p1,
# no fuzz), a build fails, or checkpatch reports an error or a warning that
# the patch does not justify in its notes.  Logs are kept in BUILD_DIR/logs.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root" || exit 2

TARBALL=${TARBALL:-/usr/src/linux-source-6.1.tar.xz}
BUILD_DIR=${BUILD_DIR:-build/series-check}
LAB_CONFIG=${LAB_CONFIG:-kernel-config/lab.config}
SERIES=${SERIES:-patches/series}
JOBS=${JOBS:-2}
KCC=${KCC:-ccache gcc}
VARIANTS=1
CROSS=1
WHOLE=${WHOLE:-0}
MATRIX=${MATRIX:-}
EXTRACT_ONLY=0
KEEP_DIR=${KEEP_DIR:-}
SERIES_LOCK=${SERIES_LOCK:-}
COMPILE_ONLY=${COMPILE_ONLY:-0}

usage() { sed -n '2,/^set -uo/p' "$0" | sed -e '/^set -uo/d' -e 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
	case "$1" in
	-t|--tarball)	TARBALL=$2; shift 2 ;;
	-b|--build-dir)	BUILD_DIR=$2; shift 2 ;;
	-c|--config)	LAB_CONFIG=$2; shift 2 ;;
	-s|--series)	SERIES=$2; shift 2 ;;
	-j|--jobs)	JOBS=$2; shift 2 ;;
	--cc)		KCC=$2; shift 2 ;;
	--no-variants)	VARIANTS=0; shift ;;
	--no-cross)	CROSS=0; shift ;;
	--whole)	WHOLE=1; shift ;;
	--matrix)	MATRIX=$2; shift 2 ;;
	--extract-only)	EXTRACT_ONLY=1; shift ;;
	--compile-only)	COMPILE_ONLY=1; shift ;;
	--keep)		KEEP_DIR=$2; shift 2 ;;
	-h|--help)	usage ;;
	*)		echo "series-check: unknown argument '$1'" >&2; usage ;;
	esac
done

die() { echo "series-check: $*" >&2; exit 2; }
abspath() { case "$1" in /*) echo "$1" ;; *) echo "$root/$1" ;; esac; }

TARBALL=$(abspath "$TARBALL")
BUILD_DIR=$(abspath "$BUILD_DIR")
LAB_CONFIG=$(abspath "$LAB_CONFIG")
SERIES=$(abspath "$SERIES")
[ -z "$KEEP_DIR" ] || KEEP_DIR=$(abspath "$KEEP_DIR")

[ -r "$TARBALL" ] || die "tarball $TARBALL not found"
[ -r "$LAB_CONFIG" ] || die "config fragment $LAB_CONFIG not found"

. "$root/scripts/series-lib.sh"
. "$root/scripts/kconfig-lib.sh"
load_series "$SERIES" || die "cannot use $SERIES"
[ "${#patches[@]}" -gt 0 ] || die "$SERIES lists no patches"

tree=$BUILD_DIR/linux-source-6.1
logs=$BUILD_DIR/logs
# In-tree builds use relative paths only, so ccache hits across rebuilds
# and across fresh extractions in other directories.  Out-of-tree builds
# (the matrix) pass -fmacro-prefix-map=<absolute srctree>/=, which ccache's
# base_dir does not rewrite; the map only strips the tree's own path from
# __FILE__, so leaving it out of the hash lets builds of identical trees in
# other directories share objects.
export CCACHE_NOHASHDIR=1
export CCACHE_IGNOREOPTIONS='-fmacro-prefix-map=*'
export KBUILD_BUILD_TIMESTAMP='Thu Jan  1 00:00:00 UTC 1970'
export KBUILD_BUILD_USER=usercopy-lab KBUILD_BUILD_HOST=series-check

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*"; }

# Symbols the current tree defines: a fragment may name options that only
# a later patch of the series adds (e.g. CONFIG_HARDENED_USERCOPY_SPLIT_KMALLOC);
# for earlier prefixes those lines are skipped, not failed.
defined_symbols() {
	grep -rhoE --include='Kconfig*' '^[[:space:]]*(menu)?config[[:space:]]+[A-Za-z0-9_]+' "$tree" |
		awk '{ print "CONFIG_" $2 }' | sort -u > "$BUILD_DIR/symbols"
}

# configure LOGNAME FRAGMENT...: tinyconfig + fragments + olddefconfig,
# in-tree, then check_fragments (kconfig-lib.sh) with the symbols this
# prefix defines.  Kbuild only rebuilds what depends on options whose value
# changed, so running this for every prefix keeps the builds incremental.
configure() {
	local name=$1
	shift
	{
		make -C "$tree" tinyconfig &&
		(cd "$tree" && scripts/kconfig/merge_config.sh -m .config "$@") &&
		make -C "$tree" olddefconfig
	} > "$logs/$name.log" 2>&1 || { echo "  config: failed, see $logs/$name.log" >&2; return 1; }
	defined_symbols
	check_fragments "  config: " "$tree/.config" "$BUILD_DIR/symbols" "$@"
}

# compile_only_objects CONFIG SRCTREE: the objects of compile-only.objects
# that CONFIG enables (every symbol listed for it is y or m) and whose .c
# file SRCTREE has.
compile_only_objects() {
	local obj syms s ok
	while read -r obj syms; do
		case $obj in ''|'#'*) continue ;; esac
		# A prefix of the series may not have added the file yet (the
		# LKDTM tests come last): nothing of it to compile there.
		[ -f "$2/${obj%.o}.c" ] || continue
		ok=1
		for s in $syms; do
			grep -qE "^$s=(y|m)\$" "$1" || { ok=0; break; }
		done
		[ "$ok" = 0 ] || echo "$obj"
	done < "$root/kernel-config/matrix/compile-only.objects"
}

# module_symbols_exported SRCTREE OBJDIR LOG: every symbol that the
# series' own LKDTM objects (lkdtm-tests/*.c) in OBJDIR leave undefined is
# defined by an LKDTM object or exported somewhere in SRCTREE (macro-built
# exports such as param_ops_* are not seen: upstream LKDTM's own objects are
# therefore not checked).  Appends what is missing to LOG.
module_symbols_exported() {
	local src=$1 dir=$2 out=$3 nmcmd=nm missing f ours=()
	[ "${CROSS_COMPILE:-}" = "" ] || nmcmd=${CROSS_COMPILE}nm
	for f in "$root"/lkdtm-tests/*.c; do
		f=$dir/$(basename "$f" .c).o
		[ -f "$f" ] || { echo "not compiled: $f" | tee -a "$out" >&2; return 1; }
		ours+=("$f")
	done
	missing=$(comm -23 \
		<("$nmcmd" "${ours[@]}" 2>/dev/null | awk '$1 == "U" { print $2 }' | sort -u) \
		<({ "$nmcmd" --defined-only "$dir"/*.o 2>/dev/null | awk 'NF == 3 { print $3 }'
		    grep -rhoE --include='*.[chS]' 'EXPORT_(PER_CPU_)?SYMBOL(_GPL|_NS|_NS_GPL)?\([A-Za-z0-9_]+' "$src" |
			sed 's/.*(//'; } | sort -u))
	[ -z "$missing" ] && return 0
	echo "not exported, needed by lkdtm.ko: $missing" | tee -a "$out" | sed 's/^/  /' >&2
	return 1
}

# kmake MAKE-ARGS...: make, under `flock $SERIES_LOCK nice -n 5` when
# SERIES_LOCK is set; adds the seconds spent waiting for the lock to lock_wait.
lock_wait=0
kmake() {
	local t0 held rc
	[ -n "$SERIES_LOCK" ] || { make "$@"; return; }
	held=$BUILD_DIR/.lock-held
	rm -f "$held"
	t0=$(date +%s)
	# shellcheck disable=SC2016 # expanded by the inner bash
	flock "$SERIES_LOCK" bash -c 'date +%s > "$0"; exec nice -n 5 make "$@"' "$held" "$@"
	rc=$?
	lock_wait=$((lock_wait + $(cat "$held" 2>/dev/null || echo "$t0") - t0))
	return $rc
}

# waited: ", after N s waiting for the lock" when the last build waited.
waited() {
	[ "$lock_wait" -gt 0 ] && printf ', after %ss waiting for the lock' "$lock_wait"
}

build() { # LOGNAME [MAKE ARGS...] -> 0/1; sets build_status (yes/NO), build_secs, build_warn
	local name=$1 t0=$SECONDS cfg src odir a objs=() mod=0 args=()
	shift
	lock_wait=0
	[ $# -gt 0 ] || set -- -C "$tree" CC="$KCC" bzImage
	if [ "$COMPILE_ONLY" = 1 ]; then
		# The make arguments without the targets; where the .config is.
		src=$tree; odir=
		for a in "$@"; do
			case $a in
			bzImage|Image|vmlinux) ;;
			modules) mod=1 ;;
			O=*) odir=${a#O=}; args+=("$a") ;;
			*) args+=("$a") ;;
			esac
		done
		[ "${args[0]}" != -C ] || src=${args[1]}
		cfg=${odir:-$src}/.config
		mapfile -t objs < <(compile_only_objects "$cfg" "$src")
		echo "compile only: prepare ${objs[*]}" > "$logs/$name.log"
		if kmake -s -j"$JOBS" "${args[@]}" prepare >> "$logs/$name.log" 2>&1 &&
		   kmake -s -j"$JOBS" "${args[@]}" "${objs[@]}" >> "$logs/$name.log" 2>&1 &&
		   { [ "$mod" = 0 ] || module_symbols_exported "$src" \
			"${odir:-$src}/drivers/misc/lkdtm" "$logs/$name.log"; }; then
			build_status=compiled
		else
			build_status=NO
			grep -E 'error|Error|not exported' "$logs/$name.log" | head -n 20 | sed 's/^/  /' >&2
		fi
		build_secs=$((SECONDS - t0 - lock_wait))
		build_warn=$(warnings_in "$name")
		[ "$build_status" = compiled ]
		return
	fi
	if kmake -s -j"$JOBS" "$@" > "$logs/$name.log" 2>&1; then
		build_status=yes
	else
		build_status=NO
		grep -E 'error|Error' "$logs/$name.log" | head -n 20 | sed 's/^/  /' >&2
	fi
	build_secs=$((SECONDS - t0 - lock_wait))
	build_warn=$(warnings_in "$name")
	[ "$build_status" = yes ]
}

# checkpatch PATCH LOG -> cp_summary "E/W/C", cp_ok 0/1.
# A warning is accepted only when the patch justifies it in its notes
# (the part between "---" and the diffstat, e.g. from `git notes` or
# `format-patch --notes`), by naming its type or quoting its message;
# such warnings are shown as "+N justified".
checkpatch() {
	local patch=$1 out=$2 tot e w c notes line type msg just=0 unjust=0
	(cd "$tree" && perl scripts/checkpatch.pl --strict --show-types "$patch") > "$out" 2>&1
	tot=$(grep -E '^total: [0-9]+ errors, [0-9]+ warnings' "$out" | tail -n 1)
	if [ -z "$tot" ]; then
		cp_summary="??"; cp_ok=0; return
	fi
	e=$(echo "$tot" | sed -E 's/^total: ([0-9]+) errors.*/\1/')
	w=$(echo "$tot" | sed -E 's/.* ([0-9]+) warnings.*/\1/')
	c=$(echo "$tot" | sed -E 's/.* ([0-9]+) checks.*/\1/')
	notes=$(sed -n '/^---$/,/^diff --git /p' "$patch" | tr -s ' \t\n' '   ')
	while IFS= read -r line; do
		type=${line#WARNING:}; type=${type%%:*}
		msg=${line#WARNING:"$type": }
		if grep -qF -- "$type" <<<"$notes" || grep -qiF -- "${msg:0:40}" <<<"$notes"; then
			just=$((just + 1))
		else
			unjust=$((unjust + 1))
		fi
	done < <(grep -E '^WARNING:' "$out")
	cp_summary="$e/$w/$c"
	[ "$just" = 0 ] || cp_summary="$cp_summary (+$just justified)"
	cp_ok=1
	[ "$e" = 0 ] && [ "$unjust" = 0 ] && [ "$w" = "$just" ] || cp_ok=0
}

warnings_in() { grep -c -E '(warning|error):' "$logs/$1.log" 2>/dev/null || true; }

# ---------------------------------------------------------------- extraction
# stamp_of WHAT: what an untouched prepared tree's stamp file says: the
# tarball (path, size, mtime) and, for the second tree, the series applied.
stamp_of() {
	local what
	what="$(stat -c '%n %s %Y' "$TARBALL")"
	[ "$1" = pristine ] || what="$what series $(cd "$patch_dir" && cat "${patches[@]}" | sha256sum | cut -d' ' -f1)"
	echo "$what"
}

# prepared_tree DIR WHAT: true (and the stamp consumed) if DIR was extracted
# by --extract-only from this tarball (WHAT=series: with this series) and
# has not been used since.
prepared_tree() {
	[ -f "$1.prepared" ] && [ "$(cat "$1.prepared")" = "$(stamp_of "$2")" ] || return 1
	rm -f "$1.prepared"
}

# second_tree: the tree for the other architectures, the whole series applied.
second_tree() {
	local p
	ctree=$BUILD_DIR/cross/linux-source-6.1
	if prepared_tree "$ctree" series; then
		log "using the second tree extracted by --extract-only"
		return
	fi
	log "extracting a second tree with the whole series for the other architectures"
	rm -f "$ctree.prepared"
	extract_tree "$TARBALL" "$ctree" || die "cannot extract a kernel tree from $TARBALL"
	for p in "${patches[@]}"; do
		patch -d "$ctree" -p1 --forward --batch --fuzz=0 --quiet < "$patch_dir/$p" ||
			die "$p does not apply to the second tree"
	done
}

if [ "$EXTRACT_ONLY" = 1 ]; then
	log "extracting $TARBALL into $tree"
	rm -f "$tree.prepared"
	extract_tree "$TARBALL" "$tree" || die "cannot extract a kernel tree from $TARBALL"
	stamp_of pristine > "$tree.prepared"
	# The second tree only if a row of another architecture will be built.
	need=0
	for m in "$root"/kernel-config/matrix/*.config; do
		grep -qx '# matrix-arch: *x86_64' "$m" && continue
		[ -z "$MATRIX" ] && need=1
		for want in ${MATRIX//,/ }; do
			case $(basename "$m" .config) in "$want"|"$want"-*) need=1 ;; esac
		done
	done
	if [ "$CROSS" = 1 ] && [ "$VARIANTS" = 1 ] && [ "$need" = 1 ]; then
		second_tree
		stamp_of series > "$ctree.prepared"
	fi
	log "extracted; the next run without --extract-only uses the trees once"
	exit 0
fi

rm -rf "$logs"
mkdir -p "$logs"
if prepared_tree "$tree" pristine; then
	log "using $tree as extracted by --extract-only"
else
	log "extracting $TARBALL into $tree"
	extract_tree "$TARBALL" "$tree" || die "cannot extract a kernel tree from $TARBALL"
fi

# Snapshot the fragment: it may be edited while this runs.
frag=$BUILD_DIR/lab.fragment
cp "$LAB_CONFIG" "$frag"
log "configuring: tinyconfig + $(basename "$LAB_CONFIG")"
configure config "$frag" || die "lab config incomplete on the unpatched tree"

# ---------------------------------------------------------------- prefixes
declare -a r_name r_apply r_build r_secs r_warn r_cp
fail=0
n=${#patches[@]}
broken=0
for ((k = 1; k <= n; k++)); do
	p=${patches[k-1]}
	tag=$(printf '%02d' "$k")
	r_name[k]=$p
	r_apply[k]=-; r_build[k]=-; r_secs[k]=-; r_warn[k]=-; r_cp[k]=-

	# checkpatch needs no applied state; run it for every patch.
	checkpatch "$patch_dir/$p" "$logs/$tag-checkpatch.log"
	r_cp[k]=$cp_summary
	[ "$cp_ok" = 1 ] || fail=1

	if [ "$broken" = 1 ]; then
		r_apply[k]=skip
		continue
	fi
	log "[$k/$n] applying $p"
	if patch -d "$tree" -p1 --forward --batch --fuzz=0 < "$patch_dir/$p" \
			> "$logs/$tag-apply.log" 2>&1; then
		r_apply[k]=yes
	else
		r_apply[k]=NO; fail=1; broken=1
		sed 's/^/  /' "$logs/$tag-apply.log" | head -n 20 >&2
		continue
	fi
	# --whole: the earlier prefixes are applied, not built.
	if [ "$WHOLE" = 1 ] && [ "$k" -lt "$n" ]; then
		r_build[k]=skip
		continue
	fi
	configure "$tag-config" "$frag" || { r_build[k]=CONFIG; fail=1; continue; }
	cp "$tree/.config" "$BUILD_DIR/lab.config.last"
	log "[$k/$n] building bzImage (lab config)"
	build "$tag-build" || fail=1
	r_build[k]=$build_status; r_secs[k]=$build_secs; r_warn[k]=$build_warn
	log "[$k/$n] lab config: $build_status in ${build_secs}s, $build_warn warning lines$(waited)"
done

# ---------------------------------------------------------------- matrix
declare -a v_name v_build v_secs v_warn
nv=0
new_row() { # NAME: a new row of the table; sets tag
	nv=$((nv + 1))
	tag=$(printf 'm%02d' "$nv")
	v_name[nv]=$1; v_build[nv]=-; v_secs[nv]=-; v_warn[nv]=-
}
end_row() { # after build(): fill the row and say it in the log
	v_build[nv]=$build_status; v_secs[nv]=$build_secs; v_warn[nv]=$build_warn
	log "matrix ${v_name[nv]}: $build_status in ${build_secs}s, $build_warn warning lines$(waited)"
}

# options_of FRAGMENT: the option lines it sets, sorted.
options_of() {
	grep -E '^(CONFIG_[A-Za-z0-9_]+=|# CONFIG_[A-Za-z0-9_]+ is not set)' "$1" | sort -u
}

# keep_row FILE OBJDIR: with --keep, the row's kernel as KEEP_DIR/kernel-NAME
# when FILE says `# matrix-keep: NAME` and sets the options of that lab
# kernel's fragment (see the usage).
keep_row() {
	local m=$1 obj=$2 name frag dest f
	[ -n "$KEEP_DIR" ] && [ "$build_status" = yes ] || return 0
	name=$(matrix_field "$m" keep)
	[ -n "$name" ] || return 0
	frag=$root/kernel-config/variant-$name.config
	[ -f "$frag" ] || frag=$root/kernel-config/arch-$name.config
	if [ ! -f "$frag" ]; then
		log "keep: no kernel-config/variant-$name.config or arch-$name.config; not kept"
		return 1
	fi
	if ! cmp -s <(options_of "$m") <(options_of "$frag"); then
		log "keep: $(basename "$m") and $(basename "$frag") set different options; not kept"
		return 1
	fi
	dest=$KEEP_DIR/kernel-$name
	rm -rf "$dest"
	mkdir -p "$dest"
	(
		cd "$obj" || exit 1
		for f in .config vmlinux System.map arch/x86/boot/bzImage arch/arm64/boot/Image; do
			[ ! -f "$f" ] || cp --parents -p "$f" "$dest/"
		done
		find . -name '*.ko' -exec cp --parents -p {} "$dest/" \;
	) || { log "keep: copying $obj to $dest failed"; return 1; }
	printf '%s\n' "series-check $(basename "$m") of $(date -u +%FT%TZ)" \
		"series $(cd "$patch_dir" && cat "${patches[@]}" | sha256sum | cut -d' ' -f1)" \
		> "$dest/.series-check-row"
	log "matrix ${v_name[nv]}: kept as $dest"
}

# x86_variant NAME TARGETS FRAGMENT...: tinyconfig + the lab fragment +
# FRAGMENTs, in the prefix tree: kbuild rebuilds only what depends on the
# options that changed, and ccache serves what an earlier state compiled.
x86_variant() {
	local name=$1 targets=$2
	shift 2
	new_row "$name"
	# The lab fragment must still hold, except for what the variant changes.
	configure "$tag-config" "$frag" "$@" || { v_build[nv]=CONFIG; fail=1; return; }
	log "matrix $name: building $targets"
	# shellcheck disable=SC2086 # TARGETS is a word list
	build "$tag-build" -C "$tree" CC="$KCC" $targets || fail=1
	end_row
	keep_row "${@: -1}" "$tree" || fail=1
}

# cross_variant NAME ARCH TARGETS FRAGMENT...: the same for another
# architecture, out of tree (O=) in a second extraction with the whole
# series applied.
cross_variant() {
	local name=$1 arch=$2 targets=$3 odir mk=() cc=$KCC
	shift 3
	new_row "$name"
	odir=$BUILD_DIR/cross/kernel-$arch
	mk=(-C "$ctree" O="$odir" ARCH="$arch")
	if [ "$arch" = arm64 ]; then
		mk+=(CROSS_COMPILE=aarch64-linux-gnu-)
		cc="ccache aarch64-linux-gnu-gcc"
		command -v aarch64-linux-gnu-gcc > /dev/null ||
			{ echo "  $name: aarch64-linux-gnu-gcc not found (apt: gcc-aarch64-linux-gnu)" >&2
			  v_build[nv]=NO; fail=1; return; }
	fi
	mkdir -p "$odir"
	{
		make "${mk[@]}" tinyconfig &&
		(cd "$ctree" && scripts/kconfig/merge_config.sh -m -O "$odir" "$odir/.config" "$frag" "$@") &&
		make "${mk[@]}" olddefconfig
	} > "$logs/$tag-config.log" 2>&1 ||
		{ echo "  config: failed, see $logs/$tag-config.log" >&2; v_build[nv]=CONFIG; fail=1; return; }
	check_fragments "  config: " "$odir/.config" "$BUILD_DIR/symbols" "$frag" "$@" ||
		{ v_build[nv]=CONFIG; fail=1; return; }
	log "matrix $name: building $targets"
	# shellcheck disable=SC2086 # TARGETS is a word list
	build "$tag-build" "${mk[@]}" CC="$cc" $targets || fail=1
	end_row
	keep_row "${@: -1}" "$odir" || fail=1
}

# matrix_field FILE KEY: the value of a "# matrix-KEY: value" line.
matrix_field() {
	sed -n "s/^# matrix-$2: *//p" "$1" | head -n 1
}

# The rows of the matrix in their default order: every matrix file of
# this architecture, the lab's variants after the fallback, then the other
# architectures.  Each row: KEY|FILE (nosplit and slab: the lab's variants).
matrix_rows() {
	local m cross=()
	for m in "$root"/kernel-config/matrix/*.config; do
		if [ "$(matrix_field "$m" arch)" != x86_64 ]; then
			cross+=("$(basename "$m" .config)|$m")
			continue
		fi
		echo "$(basename "$m" .config)|$m"
		case $(basename "$m") in
		10-*)	echo "nosplit|$root/kernel-config/variant-nosplit.config"
			echo "slab|$root/kernel-config/variant-slab.config" ;;
		esac
	done
	[ "${#cross[@]}" = 0 ] || printf '%s\n' "${cross[@]}"
}

# row_name KEY FILE: how the table names a row.
row_name() {
	case $1 in
	nosplit) echo "variant-nosplit (SPLIT_KMALLOC=n)" ;;
	slab) echo "variant-slab (SLAB, PROVE_LOCKING)" ;;
	*) matrix_field "$2" name ;;
	esac
}

# run_row KEY FILE: build one row of the matrix.
ctree=
run_row() {
	local key=$1 m=$2 name arch targets p
	name=$(row_name "$key" "$m")
	case $key in
	nosplit|slab) arch=x86_64; targets=bzImage ;;
	*)	arch=$(matrix_field "$m" arch); targets=$(matrix_field "$m" targets)
		[ -n "$name" ] && [ -n "$arch" ] && [ -n "$targets" ] ||
			die "$m: needs # matrix-name, # matrix-arch and # matrix-targets lines" ;;
	esac
	if [ "$arch" = x86_64 ]; then
		x86_variant "$name" "$targets" "$m"
		x86_dirty=1
		return
	fi
	if [ "$CROSS" = 0 ]; then
		new_row "$name"; v_build[nv]="not run"
		return
	fi
	[ -n "$ctree" ] || second_tree
	cross_variant "$name" "$arch" "$targets" "$m"
}

if [ "$broken" = 0 ] && [ "$VARIANTS" = 1 ]; then
	mapfile -t all_rows < <(matrix_rows)
	declare -a todo=() skipped=()
	if [ -z "$MATRIX" ]; then
		todo=("${all_rows[@]}")
	else
		for want in ${MATRIX//,/ }; do
			hit=
			for r in "${all_rows[@]}"; do
				key=${r%%|*}
				case $key in "$want"|"$want"-*) hit=$r; break ;; esac
			done
			[ -n "$hit" ] || die "--matrix: no row '$want' (rows: $(printf '%s ' "${all_rows[@]%%|*}"))"
			todo+=("$hit")
		done
		for r in "${all_rows[@]}"; do
			printf '%s\n' "${todo[@]}" | grep -qxF -- "$r" || skipped+=("$r")
		done
	fi
	x86_dirty=0
	for r in "${todo[@]}"; do
		run_row "${r%%|*}" "${r#*|}"
	done
	for r in "${skipped[@]}"; do
		new_row "$(row_name "${r%%|*}" "${r#*|}")"; v_build[nv]="not run"
		log "matrix ${v_name[nv]}: not run (--matrix)"
	done
	if [ "$x86_dirty" = 1 ]; then
		# Leave the tree configured as the lab builds it.
		cp "$BUILD_DIR/lab.config.last" "$tree/.config"
		make -C "$tree" olddefconfig > /dev/null 2>&1
	fi
fi

# ---------------------------------------------------------------- report
echo
printf '%-3s %-66s %-7s %-7s %6s %5s %s\n' '#' patch applies builds 'secs' 'warn' 'checkpatch E/W/C'
for ((k = 1; k <= n; k++)); do
	printf '%-3s %-66.66s %-7s %-7s %6s %5s %s\n' "$k" "${r_name[k]}" "${r_apply[k]}" \
		"${r_build[k]}" "${r_secs[k]}" "${r_warn[k]}" "${r_cp[k]}"
done
for ((v = 1; v <= nv; v++)); do
	printf '%-3s %-66.66s %-7s %-7s %6s %5s %s\n' "$n+" "whole series, ${v_name[v]}" "-" \
		"${v_build[v]}" "${v_secs[v]}" "${v_warn[v]}" "-"
done
echo "(warn = compiler warning/error lines in that incremental build's log; logs: $logs)"
notrun=0
for ((v = 1; v <= nv; v++)); do [ "${v_build[v]}" != "not run" ] || notrun=$((notrun + 1)); done
if [ "$fail" = 0 ] && [ "$notrun" -gt 0 ]; then
	echo "series-check: OK (${n} patches), $notrun matrix rows not run"
elif [ "$fail" = 0 ]; then
	echo "series-check: OK (${n} patches)"
else
	echo "series-check: FAILED"
fi
exit $fail
