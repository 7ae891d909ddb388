#!/usr/bin/python3
"""whitelist-table.py OLD_CONSOLE NEW_CONSOLE [--old-name 6.1] [--new-name 6.12]

The usercopy regions of two kernel lines side by side, from the consoles of
initramfs-src/audit-slab-caches (every cache of the booted guest with its
region and aliases; parsed by usercopy_lab.audit.slab_audit), as Markdown
on standard output (make whitelists-6.12 writes docs/whitelists-6.1-6.12.md).

A row per cache name that has a region on either line, or that SLUB merged
into a different cache on each: the region on each line (offset and size;
"?" where the line's sysfs has no useroffset file: stock 6.12 exposes only
usersize, useroffset is the 6.1 series' patch 0009), and what changed:
gained, lost, resized, moved, new (no such cache on the old line), gone (none
on the new one), merged differently (the name stands for another cache).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from usercopy_lab.audit.slab_audit import SlabCache, SlabTable, parse_console
from usercopy_lab.reports import split_lines


def names(table: SlabTable) -> set[str]:
    """Every name a cache is known by: sysfs names (not :ids), aliases, reported."""
    found = set(table.links)
    for c in table.caches.values():
        if not c.sysfs.startswith(":"):
            found.add(c.sysfs)
        if c.reported:
            found.add(c.reported)
    return found


def region(c: SlabCache | None) -> str:
    if c is None:
        return "no cache"
    if c.usersize <= 0:
        return "none"
    offset = "?" if c.useroffset < 0 else str(c.useroffset)
    return f"{offset}+{c.usersize} of {c.object_size}"


def change(old: SlabCache | None, new: SlabCache | None) -> str:
    if old is None:
        return "new cache with a region" if new and new.usersize > 0 else "new cache"
    if new is None:
        return "gone"
    what = []
    if old.usersize <= 0 < new.usersize:
        what.append("gained")
    elif new.usersize <= 0 < old.usersize:
        what.append("lost")
    elif old.usersize > 0:
        if old.usersize != new.usersize:
            what.append("resized")
        if old.useroffset >= 0 and new.useroffset >= 0 and old.useroffset != new.useroffset:
            what.append("moved")
    if (old.reported or old.sysfs) != (new.reported or new.sysfs) and (
            old.usersize <= 0 and new.usersize <= 0):
        what.append(f"merged differently ({old.reported or old.sysfs} -> "
                    f"{new.reported or new.sysfs})")
    if not what and old.usersize > 0 and (old.useroffset < 0 or new.useroffset < 0):
        return "same size"       # the offset is not known on one line
    return ", ".join(what) or "same"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old", type=Path)
    ap.add_argument("new", type=Path)
    ap.add_argument("--old-name", default="6.1")
    ap.add_argument("--new-name", default="6.12")
    args = ap.parse_args(argv)
    old_t = parse_console(split_lines(args.old.read_bytes()))
    new_t = parse_console(split_lines(args.new.read_bytes()))
    rows = []
    for name in sorted(names(old_t) | names(new_t)):
        old, new = old_t.lookup(name), new_t.lookup(name)
        has_region = any(c is not None and c.usersize > 0 for c in (old, new))
        what = change(old, new)
        if has_region or "merged differently" in what:
            rows.append((name, region(old), region(new), what))
    print(f"# Usercopy regions, {args.old_name} against {args.new_name}")
    print()
    print("Written by `make whitelists-6.12` (scripts/whitelist-table.py) from the")
    print("consoles of initramfs-src/audit-slab-caches booted on each line: the")
    print(f"{args.old_name} seeds kernel with the lab's 6.1 series (patches/), the stock "
          f"{args.new_name} kernel (docs/line-6.12.md).  Do not edit by hand.")
    print("A region is offset+size within an object of the given size; '?' where")
    print("the kernel's sysfs has no useroffset file (stock 6.12: only usersize;")
    print("useroffset is patch 0009 of the 6.1 series).  Caches without a region")
    print("on either line are listed only when SLUB merged them differently.")
    print()
    print(f"| cache | {args.old_name} region (offset+size of object) | "
          f"{args.new_name} region | change |")
    print("|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    counts: dict[str, int] = {}
    for *_, what in rows:
        for w in what.split(", "):
            key = w.split(" (")[0]
            counts[key] = counts.get(key, 0) + 1
    print()
    print(f"{len(rows)} names; " + ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
