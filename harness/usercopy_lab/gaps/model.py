"""Types the gap finder's modules share."""
from __future__ import annotations

import enum
from dataclasses import dataclass, field


class GapsError(ValueError):
    """Bad input (no tree, an unreadable overlay, a bad triage file): one line, exit 2."""


class Direction(enum.Enum):
    TO_USER = "to-user"        # exposure: the kernel object is the source
    FROM_USER = "from-user"    # overwrite: the kernel object is the destination


class RegionKind(enum.Enum):
    NONE = "none"              # usersize 0: every checked copy into the object is a report
    WHOLE = "whole"            # 0 .. object size
    FIELDS = "fields"          # offsetof(struct S, first) .. end of last (first == last: one member)
    TAIL = "tail"              # offsetof(struct S, first) .. end of object
    OPAQUE = "opaque"          # a value the source computes at run time (task_struct's FPU state)


@dataclass(frozen=True)
class Region:
    kind: RegionKind
    struct: str = ""           # the struct the member paths are in
    first: str = ""            # member path, "a.b"
    last: str = ""             # member path of the last member covered
    text: str = ""             # the source's useroffset, usersize
    # OPAQUE: useroffset and usersize as expressions the file's copies can
    # name (file-scope variables no function writes: symbolic.Values.region);
    # "" when the region is not comparable so
    useroffset: str = ""
    usersize: str = ""

    def __str__(self) -> str:
        if self.kind in (RegionKind.FIELDS, RegionKind.TAIL):
            span = self.first if self.first == self.last or self.kind is RegionKind.TAIL \
                else f"{self.first}..{self.last}"
            tail = ".." if self.kind is RegionKind.TAIL else ""
            return f"struct {self.struct}: {span}{tail}"
        if self.kind is RegionKind.OPAQUE and self.useroffset:
            return "opaque, compared as written"
        return self.kind.value


@dataclass(frozen=True)
class Cache:
    """One kmem_cache_create*() / KMEM_CACHE*() call, struct proto or kmalloc family."""
    name: str                  # the name it gets ("rds_tcp_incoming", "kmalloc-*", "TCP")
    struct: str                # the struct its objects are ("" for raw buffers)
    region: Region
    file: str
    line: int
    var: str = ""              # the variable the call is assigned to ("" if none)
    family: bool = False       # one row for several caches (kmalloc-*, usersized-kmalloc-*)

    @property
    def has_region(self) -> bool:
        return self.region.kind is not RegionKind.NONE


class AccessKind(enum.Enum):
    TYPED = "typed"            # into a struct: (struct, member path)
    RAW = "raw"                # a plain buffer (char *, void *): only its allocation says
    STACK = "stack"            # a local variable of the function
    GLOBAL = "global"          # a file-scope variable
    UNKNOWN = "unknown"        # not resolved (a macro, a call, an unknown type)


@dataclass(frozen=True)
class Access:
    kind: AccessKind
    struct: str = ""           # TYPED: the struct the pointer points into
    path: str = ""             # TYPED: member path inside it ("" = from its start)
    offset_known: bool = True  # False: pointer arithmetic on the struct pointer
    alloc: tuple[str, ...] = ()  # allocators seen for the root ("cache:VAR", "kmalloc", ...)
    why: str = ""              # UNKNOWN: what was not resolved
    struct_file: str = ""      # TYPED: the file that defines the struct (seen from the site)

    @property
    def struct_ident(self) -> str:
        return f"{self.struct}@{self.struct_file or '?'}"


@dataclass(frozen=True)
class Param:
    """A site whose kernel pointer is a parameter of its function (read as
    written: `link`, `(void *)data`, `id + pos`): what the function's own
    callers pass decides what it points into (derive.py)."""
    index: int                 # the parameter's position
    arith: bool                # the pointer is the parameter plus an offset
    size_index: int            # the parameter that is the size (-1: computed inside)
    local: bool                # a static function of a .c file: only its file calls it
    static: bool = False       # static (inline) anywhere: a size parameter is the caller's


@dataclass(frozen=True)
class Window:
    """A copy from a byte buffer's start plus an offset, as expressions
    (the function's once-written locals put in: symbolic.Values.window)."""
    offset: str                # "0" for the buffer's start
    size: str


@dataclass(frozen=True)
class Site:
    file: str
    line: int
    function: str              # the enclosing function
    callee: str                # copy_to_user, put_cmsg, ...
    direction: Direction
    pointer: str               # the kernel pointer argument as written
    size: str                  # the size argument as written
    checked: bool              # reaches check_object_size() (not a compile-time constant size)
    access: Access
    param: Param | None = None  # the pointer is a parameter of FUNCTION, not resolved further
    via: str = ""              # a derived copy function: the copy call it reaches in the end
    window: Window | None = None  # a byte buffer plus an offset: for an OPAQUE region (match.py)

    @property
    def key(self) -> str:
        return f"{self.file}:{self.function}:{self.callee}({self.pointer})"


class Placement(enum.Enum):
    INSIDE = "inside"          # the site's member is in the cache's region
    OUTSIDE = "outside"        # a candidate: a checked copy that the region does not allow
    UNSURE = "unsure"          # pointer arithmetic on the object: the offset is not static


@dataclass(frozen=True)
class Match:
    cache: str
    site: Site
    path: str                  # the member path inside the cache's struct
    placement: Placement
    how: str                   # "type" (embedding/container_of) or "alloc" (allocation seen)


@dataclass
class CacheResult:
    cache: Cache
    inside: list[Match] = field(default_factory=list)
    outside: list[Match] = field(default_factory=list)
    unsure: list[Match] = field(default_factory=list)
    unchecked: int = 0         # constant-size sites into the cache: never checked
