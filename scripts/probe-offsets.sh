#!/bin/bash
# probe-offsets.sh KBUILD_DIR [OUT]
#
# The two offsets the hunt's coverage kprobe dereferences
# (slab->slab_cache->name in __check_heap_object(), docs/hunt.md), computed
# exactly for a built kernel without its DWARF, the way kbuild's
# asm-offsets.c works: a tiny C file is compiled to assembly with the very
# command line kbuild used for mm/slub.o (from KBUILD_DIR/mm/.slub.o.cmd:
# same compiler, flags, configuration and headers), and the constants are
# read back from the .ascii lines DEFINE() puts there.  Nothing is linked
# or run.  Writes OUT (default KBUILD_DIR/probe-offsets.txt):
#     slab_cache=<offsetof(struct slab, slab_cache)>
#     name=<offsetof(struct kmem_cache, name)>
# and prints it.  Exit 1 (one line on stderr) when the build has no
# mm/slub.o (not SLUB, or not built yet) or the compile fails.
set -euo pipefail

kb=$(cd "$1" && pwd)
out=${2:-$kb/probe-offsets.txt}
cmdfile=$kb/mm/.slub.o.cmd
die() { echo "probe-offsets: $*" >&2; exit 1; }
[ -f "$cmdfile" ] || die "$cmdfile: no such file (a SLUB kernel, built?)"

# The first line: "cmd_mm/slub.o := <compile> ; <objtool ...>" (6.1).
cmd=$(sed -n '1s/^cmd_mm\/slub\.o := //p' "$cmdfile")
cmd=${cmd%%;*}
case "$cmd" in
*" -c -o mm/slub.o "*/mm/slub.c*) ;;
*) die "$cmdfile: not the compile line this script knows" ;;
esac
src_tree=${cmd##* -c -o mm/slub.o }
src_tree=${src_tree%/mm/slub.c*}
src_tree=${src_tree## }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/probe-offsets.c" <<EOF
/* mm/slub.c's own headers, in its order, then mm/slab.h (struct slab). */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/kbuild.h>
#include "$src_tree/mm/slab.h"

void probe_offsets(void);
void probe_offsets(void)
{
	DEFINE(PROBE_SLAB_CACHE, offsetof(struct slab, slab_cache));
	DEFINE(PROBE_KMEM_CACHE_NAME, offsetof(struct kmem_cache, name));
}
EOF
# kbuild's line, with the dependency file, the object and the source swapped
# for ours, and -S: compile to assembly only.
cmd=${cmd/-Wp,-MMD,mm\/.slub.o.d/}
cmd=${cmd/ -c -o mm\/slub.o $src_tree\/mm\/slub.c/ -S -o $work/probe-offsets.s $work/probe-offsets.c}
(cd "$kb" && eval "$cmd") || die "compiling against $kb failed"

# .ascii "->PROBE_SLAB_CACHE $24 offsetof(struct slab, slab_cache)"
val() {
	sed -n "s/^[[:space:]]*\.ascii[[:space:]]*\"->$1 [\$#]*\([0-9][0-9]*\) .*/\1/p" \
		"$work/probe-offsets.s"
}
sc=$(val PROBE_SLAB_CACHE)
nm=$(val PROBE_KMEM_CACHE_NAME)
if [ -z "$sc" ] || [ -z "$nm" ]; then
	die "no constants in the compiler's output"
fi
printf 'slab_cache=%s\nname=%s\n' "$sc" "$nm" >"$out.tmp"
mv "$out.tmp" "$out"
cat "$out"
