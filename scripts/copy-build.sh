#!/bin/bash
# copy-build.sh [--always] FROM TO
#
# Makes the kbuild output folder TO a copy of FROM (objects and mtimes kept),
# so a kernel that differs from FROM's in a few options or files rebuilds
# only what depends on them: ccache cannot help there (the variant's
# autoconf.h and, for debug-info kernels, the folder's path are in every
# object's hash).  The dependency files of the copy that name FROM
# (objtool's build records absolute paths) are pointed at TO; left alone,
# they make the copy relink objtool, and every object depends on objtool.
#
# Without --always the copy is made only when TO has none yet or FROM's
# vmlinux changed since TO was copied from it (TO/.lab-copied-from records
# that vmlinux's size and mtime): while FROM stays as it is, TO keeps its
# own incremental build; once FROM is rebuilt, copying it again is cheaper
# than recompiling the same change in TO.
# User: scripts/mutation-run.sh (--always).
set -euo pipefail

always=0
[ "${1:-}" = --always ] && { always=1; shift; }
[ $# -eq 2 ] || { echo "usage: $0 [--always] FROM TO" >&2; exit 2; }
from=$1 to=$2
[ -f "$from/vmlinux" ] || { echo "copy-build: $from has no vmlinux (build it first)" >&2; exit 2; }

stamp="$(stat -c '%s %Y' "$from/vmlinux") $(realpath "$from")"
if [ $always = 0 ] && [ -f "$to/.lab-copied-from" ] &&
	[ "$(cat "$to/.lab-copied-from")" = "$stamp" ]; then
	echo "copy-build: $to is a copy of the current $from"
	exit 0
fi

echo "copy-build: copying $from to $to"
rm -rf "$to"
cp -a "$from" "$to"
abs_from=$(realpath "$from") abs_to=$(realpath "$to")
{ grep -rlF --include='.*.cmd' --include='*.d' "$abs_from/" "$to" || true; } |
	xargs -r sed -i "s|$abs_from/|$abs_to/|g"
echo "$stamp" > "$to/.lab-copied-from"
