"""Which copy sites can point into which cache's objects, and where.

By type: a site into struct S at member path P reaches every cache whose
object struct C embeds S by value at path Q (S == C with Q = ""): the
object's member Q.P -- container_of() goes from S back to C, so a function
that only sees S (rds_cmsg_recv()'s struct rds_incoming) reaches every
cache of a struct that embeds it (rds_tcp_incoming, rds_ib_incoming).
By allocation: a buffer the function got from kmem_cache_alloc(X), a pool
over X, a wrapper of either, or kmalloc() is in that cache.
The member path is then placed against the cache's region."""
from __future__ import annotations

from dataclasses import dataclass

from .model import AccessKind, Cache, CacheResult, Match, Placement, RegionKind, Site
from .structs import Structs
from .symbolic import linear


def _join(q: str, p: str) -> str:
    if p == "+end":
        return "+end" if not q else q + ".+end"
    return ".".join(x for x in (q, p) if x)


@dataclass
class Matcher:
    caches: list[Cache]
    structs: Structs
    pools: dict[str, str]

    def __post_init__(self) -> None:
        self.by_struct: dict[str, list[tuple[Cache, str]]] = {}
        self.by_var: dict[str, list[Cache]] = {}
        self.families = {c.name: c for c in self.caches if c.family}
        for c in self.caches:
            if c.var:
                self.by_var.setdefault(c.var, []).append(c)
            if c.struct:
                for _s, ident, q in self.structs.embeddings(c.struct, c.file):
                    self.by_struct.setdefault(ident, []).append((c, q))

    # ---------------------------------------------------------- placing

    def _key(self, struct: str, path: str, near: str) -> tuple[int, ...] | None:
        key = []
        cur = struct
        for part in path.split("."):
            if part == "+end":
                key.append(10 ** 6)
                break
            sd = self.structs.get(cur, near) if cur else None
            if sd is None:
                return None
            names = [m.name for m in sd.members]
            if part not in names:
                return None
            key.append(names.index(part))
            cur = sd.members[names.index(part)].struct
            near = sd.file
        return tuple(key)

    def place(self, cache: Cache, path: str, offset_known: bool) -> Placement:
        r = cache.region
        if r.kind is RegionKind.NONE:
            return Placement.OUTSIDE
        if r.kind is RegionKind.WHOLE:
            return Placement.INSIDE
        if r.kind is RegionKind.OPAQUE:
            return Placement.UNSURE
        base = ""
        if r.struct != cache.struct:
            emb = [q for s, _i, q in self.structs.embeddings(cache.struct, cache.file) if s == r.struct]
            if not emb:
                return Placement.UNSURE
            base = emb[0]
        first, last = _join(base, r.first), _join(base, r.last)
        parts = path.split(".") if path else []

        def under(region_path: str) -> bool:
            rp = region_path.split(".")
            return parts[:len(rp)] == rp
        if not offset_known:
            # an offset added to a pointer into the region: still in it when the
            # region runs to the end of the object (task_struct's FPU state)
            return Placement.INSIDE if r.kind is RegionKind.TAIL and under(first) else Placement.UNSURE
        if under(first) or (r.kind is RegionKind.FIELDS and under(last)):
            return Placement.INSIDE
        kf = self._key(cache.struct, path, cache.file) if path else ()
        k1 = self._key(cache.struct, first, cache.file)
        if kf is None or k1 is None:
            return Placement.UNSURE
        if self._overlap(cache, path, first):
            return Placement.UNSURE        # two members of one union: sizes decide
        if r.kind is RegionKind.TAIL:
            return Placement.INSIDE if kf > k1 else Placement.OUTSIDE
        k2 = self._key(cache.struct, last, cache.file)
        if k2 is None:
            return Placement.UNSURE
        return Placement.INSIDE if k1 < kf < k2 else Placement.OUTSIDE

    @staticmethod
    def place_window(cache: Cache, site: Site) -> Placement:
        """A region given as expressions against a copy from the buffer's
        start plus an offset (Site.window), both read as linear sums
        (symbolic.linear) in the cache's own file, where the region's
        variables are the file's statics no function writes:
        the offset is useroffset + k and the size usersize + j for
        constants k, j: inside when 0 <= k and k + j <= 0, outside
        otherwise (LKDTM's `buf + offset - 1`: k = -1); a copy of the
        region's size from an offset that is no such sum starts elsewhere
        than the region: outside; anything else is unsure."""
        r, w = cache.region, site.window
        if w is None or not r.useroffset or site.file != cache.file:
            return Placement.UNSURE
        parts = [linear(x) for x in (w.offset, r.useroffset, w.size, r.usersize)]
        if None in parts:
            return Placement.UNSURE
        off, uo, size, us = parts
        k, j = off.minus(uo), size.minus(us)
        if k is not None and j is not None:
            return Placement.INSIDE if 0 <= k and k + j <= 0 else Placement.OUTSIDE
        if j == 0:
            return Placement.OUTSIDE
        return Placement.UNSURE

    def _overlap(self, cache: Cache, path: str, first: str) -> bool:
        """PATH and the region's FIRST member are members of one anonymous
        union, side by side (jfs: i_inline and i_inline_all)."""
        a, b = path.rsplit(".", 1) if "." in path else ("", path), \
            first.rsplit(".", 1) if "." in first else ("", first)
        if a[0] != b[0]:
            return False
        ma = self.structs.member(cache.struct, path, cache.file)
        mb = self.structs.member(cache.struct, first, cache.file)
        return ma is not None and mb is not None and bool(ma.union) and ma.union == mb.union

    # ---------------------------------------------------------- matching

    def _alloc_caches(self, tag: str) -> list[Cache]:
        kind, _, what = tag.partition(":")
        if kind == "cache":
            return self.by_var.get(what, [])
        if kind == "pool":
            return self.by_var.get(self.pools.get(what, ""), [])
        if kind == "kmalloc":
            fam = self.families.get(what + "-*")
            if fam is None and what.startswith("usersized-"):
                fam = self.families.get(what[len("usersized-"):] + "-*")
            return [fam or self.families.get("kmalloc-*")] if (fam or "kmalloc-*" in self.families) else []
        return []

    def matches(self, site: Site) -> list[Match]:
        a = site.access
        out: dict[str, Match] = {}
        for tag in a.alloc:
            for c in self._alloc_caches(tag):
                if a.kind is AccessKind.TYPED and c.struct and a.struct != c.struct:
                    emb = [q for _s, i, q in self.structs.embeddings(c.struct, c.file)
                           if i == a.struct_ident]
                    path = _join(emb[0], a.path) if emb else a.path
                    pl = self.place(c, path, a.offset_known) if emb else \
                        (Placement.INSIDE if c.region.kind is RegionKind.WHOLE else Placement.UNSURE)
                elif c.region.kind is RegionKind.OPAQUE and c.region.useroffset and site.window:
                    path, pl = "", self.place_window(c, site)
                else:
                    path = a.path if a.kind is AccessKind.TYPED else ""
                    known = a.offset_known and a.kind is AccessKind.TYPED
                    pl = self.place(c, path, known) if c.struct else \
                        (Placement.INSIDE if c.region.kind is RegionKind.WHOLE else
                         Placement.OUTSIDE if c.region.kind is RegionKind.NONE else Placement.UNSURE)
                out[c.name] = Match(c.name, site, path, pl, "alloc")
        if a.kind is AccessKind.TYPED:
            for c, q in self.by_struct.get(a.struct_ident, []):
                if c.name in out:
                    continue
                path = _join(q, a.path)
                out[c.name] = Match(c.name, site, path, self.place(c, path, a.offset_known), "type")
        return list(out.values())


def match_all(caches: list[Cache], sites: list[Site], structs: Structs,
              pools: dict[str, str]) -> dict[str, CacheResult]:
    m = Matcher(caches, structs, pools)
    results = {c.name + "@" + c.file: CacheResult(c) for c in caches}
    by_name = {}
    for c in caches:
        by_name.setdefault(c.name, []).append(c)
    for site in sites:
        for match in m.matches(site):
            for c in by_name[match.cache]:
                res = results[c.name + "@" + c.file]
                if not site.checked:
                    res.unchecked += 1
                    continue
                {Placement.INSIDE: res.inside, Placement.OUTSIDE: res.outside,
                 Placement.UNSURE: res.unsure}[match.placement].append(match)
    return results
