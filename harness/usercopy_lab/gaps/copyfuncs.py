"""The copy functions whose kernel pointer reaches check_object_size(), and
the allocators whose result says which cache a buffer is in: tables, one
row each.

A copy function's row: its name, the direction, the argument index of the
kernel pointer and of the size, and `always`: whether the check runs even
when the caller's size is a compile-time constant.  In 6.1,
check_copy_size() (include/linux/thread_info.h) skips check_object_size()
for a constant size that fits the object (__builtin_constant_p), so a
direct copy_to_user(p, &x, sizeof(x)) is never checked; a function that is
not inlined and passes its own size argument on (put_cmsg,
simple_read_from_buffer, strncpy_from_user) is always checked.
raw_copy_*(), unsafe_copy_*(), copy_page_*_iter() and get_user()/put_user()
never call it and are not listed.
"""
from __future__ import annotations

from dataclasses import dataclass

from .model import Direction

TO, FROM = Direction.TO_USER, Direction.FROM_USER


@dataclass(frozen=True)
class CopyFunction:
    name: str
    direction: Direction
    kptr: int            # argument index of the kernel pointer
    size: int            # argument index of the size
    always: bool         # checked whatever the size (the size is not the caller's constant)
    where: str           # where 6.1 defines it
    only_file: str = ""  # a derived static function: only calls in this file are its calls
    member_of: str = ""  # a derived function called through a pointer: `->NAME(` of this struct
    arith: bool = False  # a derived function copies at its parameter plus an offset


COPY_FUNCTIONS: tuple[CopyFunction, ...] = (
    CopyFunction("copy_to_user", TO, 1, 2, False, "include/linux/uaccess.h"),
    CopyFunction("__copy_to_user", TO, 1, 2, False, "include/linux/uaccess.h"),
    CopyFunction("__copy_to_user_inatomic", TO, 1, 2, False, "include/linux/uaccess.h"),
    CopyFunction("copy_from_user", FROM, 0, 2, False, "include/linux/uaccess.h"),
    CopyFunction("__copy_from_user", FROM, 0, 2, False, "include/linux/uaccess.h"),
    CopyFunction("__copy_from_user_inatomic", FROM, 0, 2, False, "include/linux/uaccess.h"),
    CopyFunction("copy_to_user_nofault", TO, 1, 2, True, "mm/maccess.c"),
    CopyFunction("copy_struct_from_user", FROM, 0, 1, True, "include/linux/uaccess.h (size = min(ksize, usize))"),
    CopyFunction("strncpy_from_user", FROM, 0, 2, True, "lib/strncpy_from_user.c"),
    CopyFunction("copy_to_sockptr", TO, 1, 2, False, "include/linux/sockptr.h"),
    CopyFunction("copy_from_sockptr", FROM, 0, 2, False, "include/linux/sockptr.h"),
    CopyFunction("copy_from_sockptr_offset", FROM, 0, 3, False, "include/linux/sockptr.h"),
    CopyFunction("copy_to_iter", TO, 0, 1, False, "include/linux/uio.h"),
    CopyFunction("copy_from_iter", FROM, 0, 1, False, "include/linux/uio.h"),
    CopyFunction("copy_from_iter_full", FROM, 0, 1, False, "include/linux/uio.h"),
    CopyFunction("copy_from_iter_nocache", FROM, 0, 1, False, "include/linux/uio.h"),
    CopyFunction("copy_from_iter_full_nocache", FROM, 0, 1, False, "include/linux/uio.h"),
    CopyFunction("memcpy_to_msg", TO, 1, 2, False, "include/linux/skbuff.h (static inline: copy_to_iter of the caller's len)"),
    CopyFunction("memcpy_from_msg", FROM, 0, 2, False, "include/linux/skbuff.h (static inline: copy_from_iter_full of the caller's len)"),
    CopyFunction("put_cmsg", TO, 4, 3, True, "net/core/scm.c"),
    CopyFunction("simple_read_from_buffer", TO, 3, 1, True, "fs/libfs.c"),
    CopyFunction("simple_write_to_buffer", FROM, 0, 4, True, "fs/libfs.c"),
    CopyFunction("memory_read_from_buffer", TO, 3, 1, False, "fs/libfs.c (memcpy: a kernel buffer, never checked)"),
)

# memory_read_from_buffer copies kernel to kernel; it is listed so that the
# table says why its sites are not sites.
NOT_CHECKED = frozenset({"memory_read_from_buffer"})


def by_name() -> dict[str, CopyFunction]:
    return {f.name: f for f in COPY_FUNCTIONS if f.name not in NOT_CHECKED}


class Alloc:
    """What an allocator's result is in: a cache (its argument), a pool, kmalloc."""
    CACHE = "cache"      # kmem_cache_alloc(CACHE, ...): the cache variable in argument 0
    POOL = "pool"        # mempool_alloc(POOL, ...): a pool made by mempool_create_slab_pool
    KMALLOC = "kmalloc"  # a kmalloc-* (or usersized-kmalloc-*) object


ALLOCATORS: dict[str, str] = {
    "kmem_cache_alloc": Alloc.CACHE, "kmem_cache_zalloc": Alloc.CACHE,
    "kmem_cache_alloc_node": Alloc.CACHE, "kmem_cache_alloc_lru": Alloc.CACHE,
    "kmem_buckets_alloc": Alloc.CACHE, "kmem_buckets_alloc_track_caller": Alloc.CACHE,
    "mempool_alloc": Alloc.POOL,
    **{name: Alloc.KMALLOC for name in (
        "kmalloc", "kzalloc", "kcalloc", "kmalloc_array", "kvmalloc", "kvzalloc", "kvcalloc",
        "kvmalloc_array", "kmalloc_node", "kzalloc_node", "kmemdup", "kmemdup_nul", "kstrdup",
        "kstrndup", "memdup_user", "vmemdup_user", "memdup_user_nul", "kmalloc_track_caller",
        "kvmalloc_node", "krealloc", "kvrealloc", "kmalloc_buckets", "kvmemdup", "memdup_sockptr",
        "memdup_sockptr_nul", "strndup_user")},
}

# seq_buf_alloc() and the like are found as wrappers (sites.find_wrappers):
# their own flags say the family.
# Which kmalloc family an allocation is in, from the words of its call
# (flags are read as written: a flags variable is not followed).
KMALLOC_FLAVOURS: tuple[tuple[str, str], ...] = (
    ("USERCOPY", "usersized-kmalloc"),
    ("GFP_DMA", "dma-kmalloc"),
    ("__GFP_RECLAIMABLE", "kmalloc-rcl"),
    ("ACCOUNT", "kmalloc-cg"),
)
# Allocators that the series turns into usersized-kmalloc ones (patches/0007):
USERCOPY_ALLOCATORS = frozenset({"memdup_user", "vmemdup_user", "memdup_user_nul"})

# Pools over a cache: mempool_create_slab_pool(min, CACHE)
POOL_CREATORS: dict[str, int] = {"mempool_create_slab_pool": 1}
