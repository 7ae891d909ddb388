"""The kernel report formats, as data: adding a format is adding a row.

Each Group is a header substring (a line that contains it may open a
report) with the lines that contain it but are not reports (suppress), and
its Formats.  A Format says how to recognize one kind of report (title:
line patterns matched on successive lines, searched from the header on),
what to capture from it (detail), the syzkaller-compatible title template
(syz: "{1}" is the first captured group, frames follow the groups), our
report kind, where its call trace is (Stack parts), which frames are never
the one to blame for it (skip), and whether the format means a mangled
report (corrupted) or one printed without a call trace (no_stack_trace).

The groups, formats, title templates, skip lists and stack layouts follow
google/syzkaller pkg/report/linux.go (Apache-2.0), whose titles the syzbot
dashboard uses; they are re-expressed here as Python data for our own
matcher (report_analysis.py).  Groups marked syz=False are ours: the
usercopy messages that precede the BUG/WARNING line and a bare "Oops:".
"""
from __future__ import annotations

import re
from dataclasses import dataclass

# ------------------------------------------------------------ pattern helpers
_PLACEHOLDERS = {
    "{{ADDR}}": r"0x[0-9a-f]+",
    "{{PC}}": r"\[<?(?:0x)?[0-9a-f]+>?\]",
    "{{FUNC}}": r"([a-zA-Z0-9_]+)(?:\.|\+)",
    "{{SRC}}": r"([a-zA-Z0-9\-_/.]+\.[a-z]+:[0-9]+)",
    "{{TASK}}": r"[\s\S]{0,100}?",
}


def rx(pattern: str) -> re.Pattern[str]:
    """A line pattern with the placeholders above expanded."""
    for name, value in _PLACEHOLDERS.items():
        pattern = pattern.replace(name, value)
    return re.compile(pattern)


class _Trace:
    """Stack part meaning: parse call-trace frames from here."""

    def __repr__(self) -> str:
        return "TRACE"


TRACE = _Trace()

# A line that names the faulting function (x86 RIP/IP/EIP, powerpc NIP,
# arm64 "pc :", arm "PC is at"); user-mode "RIP: 0033:0x..." matches
# without a function.
RIP_LINE = rx(r"(?:IP|NIP|pc |PC is at):? (?:(?:[0-9]+:)?(?:{{PC}} +){0,2}{{FUNC}}"
              r"|(?:[0-9]+:)?0x[0-9a-f]+|(?:[0-9]+:)?{{PC}} +\[< *\(null\)>\] +\(null\)"
              r"|[0-9]+: +\(null\))")
CALL_TRACE = rx(r"(?:Call (?:T|t)race:)|(?:Backtrace:)")
# riscv's show_regs() from kernel mode prints the trace without a heading;
# its last register line stands in for one.
RISCV_STACK_START = rx(r"status: [0-9a-f]{16} badaddr: [0-9a-f]{16} cause: [0-9a-f]{16}")
STACK_START = (
    rx(r"Call (?:T|t)race"), rx(r"Allocated:"), rx(r"Allocated by task [0-9]+:"),
    rx(r"Freed:"), rx(r"Freed by task [0-9]+:"),
    rx(r"[^k] backtrace(?: \(crc [0-9a-fA-F]*\))?:"), rx(r"Backtrace:"),
    rx(r"Uninit was stored to memory at"), RISCV_STACK_START,
)
# Lines syzkaller takes frames from: optional [<addr>] prefixes, then a
# function followed by "+" or "."; arm's "[<pc>] (f) from [<pc>] (g+...)".
FRAME_LINES = (
    rx(r"^ *(?:{{PC}} ){0,2}{{FUNC}}"),
    rx(r"^ *{{PC}} \(([a-zA-Z0-9_.]+)\) from {{PC}} \({{FUNC}}"),
)
# A fault-injection stack mixed into a report makes it unreliable.
CORRUPTED_LINES = (rx(r"^( \[<?(?:0x)?[0-9a-f]+>?\])? should_fail(slab)?(\.[a-z0-9.]+)?\+0x"),)
# An x86 "? func" frame (found by scanning, maybe stale); powerpc marks
# the same with a " (unreliable)" suffix.
QUESTIONABLE = re.compile(r"(\[<[0-9a-f]+>\])? \? ")
# Prefixes of syscall entry points stripped from a frame name for titles.
STRIP_PREFIXES = ("SYSC_", "SyS_", "sys_", "__x64_", "__ia32_", "__arm64_", "____sys_",
                  "___sys_", "__sys_", "__se_", "__se_sys_", "__do_sys_", "compat_SYSC_",
                  "compat_SyS_", "ksys_")

# Functions never blamed for any report (substring regexps): sanitizer,
# BUG/WARN/panic plumbing, allocators, locking, lockdep, refcount, string
# and copy helpers, list/rbtree helpers, printk, workqueue/timer/device
# teardown helpers, arm64 fault entry.
SKIP = (
    "__sanitizer", "__asan", "kasan", "hwasan", "__msan", "kmsan", "kcsan_setup_watchpoint",
    "check_memory_region", "check_heap_object", "check_object", "read_word_at_a_time",
    "(read|write)_once_.*nocheck", "print_address_description", "panic", "invalid_op",
    "report_bug", "fixup_bug", "print_report", "print_usage_bug", "do_error",
    r"_trap$|do_trap", "show_stack", "dump_stack", "walk_stack", "dump_backtrace",
    "warn_slowpath", "warn_alloc", "warn_bogus", "__warn", "alloc_page",
    "k?v?(?:m|z|c)alloc", "krealloc", "kmem_cache", "allocate_slab",
    "__alloc_frozen_pages_noprof", "folio_(?:alloc|unlock)", "filemap_alloc_folio",
    "__filemap_get_folio", "find_or_create_page", "do_read_cache_folio", "read_cache_page",
    "pagecache_get_page", "grab_cache_page_write_begin", "slab_", "debug_object",
    "timer_is_static_object", "work_is_static_object", "__might_fault", "print_unlock",
    "imbalance_bug", "lockdep", "bh_enable", "bh_disable", "perf_trace", "lock_acquire",
    "lock_release", "lock_class", "mark_lock", "(reacquire|mark)_held_locks", "raw_spin_rq",
    "spin_lock", "spin_trylock", "spin_unlock", "read_lock", "read_trylock", "write_lock",
    "write_trylock", "read_unlock", "write_unlock", "^down$", "down_read", "down_write",
    "down_read_trylock", "down_write_trylock", "down_trylock", "up_read", "up_write",
    "^mutex_", "^__mutex_", "^rt_mutex_", "owner_on_cpu", "osq_lock", "osq_unlock",
    "atomic(64)?_(dec|inc|read|set|or|xor|and|add|sub|fetch|xchg|cmpxchg|try)",
    "(set|clear|change|test)_bit", "__wake_up", "^refcount_", "^kref_", "ref_tracker",
    "seqprop_assert", "memcpy", "memcmp", "memset", "memchr", "memmove", "memdup", "strcmp",
    "strncmp", "strcpy", "strlcpy", "strncpy", "strscpy", "strlen", "strstr", "strnstr",
    "strnlen", "strchr", "strdup", "strndup", "copy_to_user", "copy_from_user",
    "copy_to_iter", "copy_from_iter", "copy_page_to_iter", "copy_page_from_iter",
    "copy_folio_to_iter", "^copyin$", "^copyout$", "put_user", "get_user", "might_fault",
    "might_sleep", "list_add", "list_del", "list_replace", "list_move", "list_splice",
    "^rb_", "^__rb_", "_indirect_thunk_", "string", "pointer", "snprintf", "scnprintf",
    "kasprintf", "kvasprintf", "printk", "va_format", "dev_info", "dev_notice", "dev_warn",
    "dev_err", "dev_alert", "dev_crit", "dev_emerg", "program_check_exception",
    "program_check_common", "del_timer", "flush_work", "__cancel_work_timer",
    "cancel_work_sync", "try_to_grab_pending", "flush_workqueue", "drain_workqueue",
    "destroy_workqueue", "queue_work", "finish_wait", "kthread_stop", "kobject_",
    "add_uevent_var", "get_device_parent", "device_add", "device_del", "device_unregister",
    "device_destroy", "device_release", "devres_release_all", "hwrng_unregister",
    "i2c_del_adapter", "__unregister_client", "device_for_each_child", "rollback_registered",
    "unregister_netdev", "sysfs_remove", "device_remove_file", "tty_unregister_device",
    "dummy_urb_enqueue", "usb_kill_urb", "usb_kill_anchored_urbs", "usb_control_msg",
    "usb_hcd_submit_urb", "usb_submit_urb", "^complete$", "wait_for_completion",
    "^kv?free$", "kfree_skb", "readb$", "readw$", "readl$", "readq$", "writeb$", "writew$",
    "writel$", "writeq$", "logic_in", "logic_out", r"^crc\d+", "crc_itu_t",
    "__might_resched", "assertfail", "^iput$", "^iput_final$", "^ihold$",
    "hex_dump_to_buffer", "print_hex_dump", "^klist_", "(trace|lockdep)_(hard|soft)irq",
    "^(un)?lock_page", "stack_trace_consume_entry", "arch_stack_walk", "stack_trace_save",
    "insert_work", "__queue_delayed_work", "queue_delayed_work_on", "ida_free",
    "do_(kernel|translation)_fault", "do_mem_abort", "el1_abort", "el1h_64_sync(?:_handler)?",
    "print_tainted", "xas_(?:start|load|find)", "find_lock_entries",
    "truncate_inode_pages_range", "__phys_addr", "__fortify_report", "cleanup_srcu_struct",
    "rhashtable_lookup", "extract_(user|iter)_to_sg", "drop_nlink", "^get_taint$",
    "^put_device$", "lock_timer_base", "__timer_delete_sync", "sk_stop_timer_sync",
    "__mod_timer", "fast_dput", "dput", "mark_buffer_dirty",
)

# Deep anchors for stalls: the frame above the first of these names the
# stalled work (syscall entry, workqueue, softirq, file and socket ops).
STALL_ANCHORS = tuple(re.compile(p) for p in (
    "process_one_work", "do_syscall_", "do_fast_syscall_", "sysenter_dispatch",
    "tracesys_phase2", "el0_svc_handler", "invoke_syscall", "ret_fast_syscall",
    "netif_receive_skb", "do_softirq", "call_timer_fn", "_run_timers", "run_timer_softirq",
    "hrtimer_run", "run_ksoftirqd", "smpboot_thread_fn", "^kthread$", "start_secondary",
    "cpu_startup_entry", "ret_from_fork", "vfs_write", "vfs_read", "vfs_iter_read",
    "vfs_iter_write", "do_iter_read", "do_iter_write", "call_read_iter", "call_write_iter",
    "new_sync_read", "new_sync_write", "vfs_ioctl", "ksys_ioctl", "compat_ioctl",
    "compat_sys_ioctl", "blkdev_driver_ioctl", "blkdev_ioctl", "^call_read_iter",
    "^call_write_iter", "do_iter_readv_writev", "^call_mmap", "mmap_region", "do_mmap",
    "do_dentry_open", "vfs_open", "^sock_sendmsg", "^sock_recvmsg", "^sock_release",
    "^__sock_release", "^setsockopt$", "kernel_setsockopt", "sock_common_setsockopt",
    "^listen$", "kernel_listen", "sk_common_release", "^sock_mmap", "^accept$",
    "kernel_accept", "^sock_do_ioctl", "^sock_ioctl", "^compat_sock_ioctl",
    "^nfnetlink_rcv_msg", "^rtnetlink_rcv_msg", "^netlink_dump",
    "^(sys_)?(socketpair|connect|ioctl)", "__do_fault", "do_page_fault", "^page_fault$",
    "__fput", "task_work_run", "exit_to_usermode", "smp_call_function", "tasklet_action",
    "tasklet_hi_action"))
# Task-hung reports: group by what they wait on.
HANG_ANCHORS = (("rtnl_lock", ""), ("synchronize_rcu", "synchronize_rcu"),
                ("synchronize_srcu", "synchronize_rcu"), ("synchronize_net", "synchronize_rcu"),
                ("synchronize_sched", "synchronize_rcu"))
HANG_SKIP = ("sched", "_lock", "_slowlock", "down", "rwsem", "completion", "kthread", "wait",
             "synchronize", "context_switch", "__switch_to", "cancel_delayed_work",
             "rcu_barrier")


# ------------------------------------------------------------------- rows
@dataclass(frozen=True)
class Stack:
    """Where the blamed frame is: parts are matched on successive lines
    (a pattern's groups are candidate frames; TRACE parses a call trace
    until the next trace heading); parts2 is tried when parts find none."""
    parts: tuple[object, ...]
    parts2: tuple[object, ...] = ()
    skip: tuple[str, ...] = ()
    extractor: str | None = None        # None | "stall" | "hang"


@dataclass(frozen=True)
class Format:
    title: tuple[re.Pattern[str], ...]
    syz: str
    kind: str
    detail: tuple[re.Pattern[str], ...] = ()
    stack: Stack | None = None
    alt: tuple[str, ...] = ()
    no_stack_trace: bool = False
    corrupted: bool = False


@dataclass(frozen=True)
class Group:
    header: str
    formats: tuple[Format, ...]
    suppress: tuple[re.Pattern[str], ...] = ()
    syz: bool = True                    # syzkaller knows this header
    # for our own groups: what a line needs to open a report (its start is
    # enough: the rest of a wrapped message follows on the next line)
    opener: re.Pattern[str] | None = None
    # the header as it is left when broken before its end (a mailer's hard
    # wrap, an architecture printing the message in pieces): the next line
    # of the same context completes it
    cut: tuple[re.Pattern[str], ...] = ()
    # lines that carry on a report of this group whose opener was printed
    # apart from its body: another report came in between (riscv and arm64
    # print "Unable to handle kernel paging request", then, say, a lockdep
    # splat the oops path set off, then "Oops [#1]" and the registers)
    body_after: tuple[re.Pattern[str], ...] = ()
    # a header of this group carries on an open report (still in its
    # header) whose first line this matches: the usercopy message after
    # "WARNING: ... at mm/usercopy.c" (MIPS prints the WARNING first)
    joins: re.Pattern[str] | None = None
    # a line of this group carries on whatever report is open in its
    # context (a register line of the report's own dump, or the dump x86
    # prints again after the end marker); it opens a report only where
    # none is open: an excerpt that starts there
    inside: bool = False

def F(title: str | tuple[str, ...], syz: str, kind: str, *,
      detail: str | tuple[str, ...] = (), stack: Stack | None = None,
      alt: tuple[str, ...] = (), no_stack_trace: bool = False,
      corrupted: bool = False) -> Format:
    """A Format from pattern text (a tuple: patterns on successive lines)."""
    titles = (title,) if isinstance(title, str) else title
    details = (detail,) if isinstance(detail, str) else detail
    return Format(tuple(rx(t) for t in titles), syz, kind, tuple(rx(d) for d in details),
                  stack, alt, no_stack_trace, corrupted)


def S(*parts: object, parts2: tuple[object, ...] = (), skip: tuple[str, ...] = (),
      extractor: str | None = None) -> Stack:
    return Stack(tuple(parts), parts2, skip, extractor)


def _rip_trace(*skip: str, extractor: str | None = None) -> Stack:
    return S(RIP_LINE, CALL_TRACE, TRACE, skip=skip, extractor=extractor)


def _trace(*skip: str, extractor: str | None = None) -> Stack:
    return S(CALL_TRACE, TRACE, skip=skip, extractor=extractor)


def _warning_stack(*skip: str) -> Stack:
    """A WARNING's own frames follow its RIP line (x86; powerpc: the
    "--- interrupt:" line); old kernels print just a call trace."""
    first = re.compile("(?:" + RIP_LINE.pattern + "|--- interrupt: [0-9]+ at "
                       + _PLACEHOLDERS["{{FUNC}}"] + ")")
    return S(first, TRACE, parts2=(CALL_TRACE, TRACE), skip=skip)


def _sup(*patterns: str) -> tuple[re.Pattern[str], ...]:
    return tuple(rx(p) for p in patterns)


S390_DIE = re.compile(r"^[A-Za-z][\w -]*: [0-9a-f]{4} ilc:\d \[#\d+\]")

GROUPS: tuple[Group, ...] = (
    Group("BUG:", (
        F("BUG: KASAN:", "KASAN: {1} {3} in {4}", "kasan",
          detail=(r"BUG: KASAN: ([a-z\-]+) in {{FUNC}}", r"(Read|Write) (?:of size|at addr) (?:[0-9a-f]+)"),
          alt=("bad-access in {4}",),
          stack=S(rx(r"BUG: KASAN: (?:[a-z\-]+) in {{FUNC}}"), CALL_TRACE, TRACE,
                  skip=("kernel_fault", "tag_check", "mem_abort", "^el1_", "^el1h_"))),
        F("BUG: KASAN:", "KASAN: invalid-free in {2}", "kasan",
          detail=r"BUG: KASAN: (?:double-free or invalid-free|double-free|invalid-free) in {{FUNC}}",
          alt=("invalid-free in {2}",),
          stack=S(rx(r"BUG: KASAN: (?:double-free or invalid-free|double-free|invalid-free) in {{FUNC}}"),
                  CALL_TRACE, TRACE, skip=("slab_", "kfree", "vunmap", "vfree"))),
        F((r"BUG: KASAN: ([a-z\-]+) on address", r"(Read|Write) of size ([0-9]+)"),
          "KASAN: {1} {2}", "kasan"),
        F(r"BUG: KASAN: (.*)", "KASAN: {1}", "kasan", corrupted=True),
        # KMSAN's own trees (2017-2021) printed the stack with dump_stack():
        # the "CPU:" line right after the header, then "Call Trace:"; syzbot
        # titled those from that trace.
        F(r"BUG: KMSAN: kernel-usb-infoleak[^\n]*[\s\S]CPU: \d+ PID: ",
          "KMSAN: kernel-usb-infoleak in {2}", "kmsan",
          detail=r"BUG: KMSAN: kernel-usb-infoleak in {{FUNC}}",
          stack=S(CALL_TRACE, TRACE, skip=("alloc_skb", "usb_submit_urb", "usb_start_wait_urb",
                                           "usb_bulk_msg", "usb_interrupt_msg", "usb_control_msg"))),
        F(r"BUG: KMSAN:[^\n]*[\s\S]CPU: \d+ PID: ", "KMSAN: {1} in {3}", "kmsan",
          detail=r"BUG: KMSAN: ([a-z\-]+) in {{FUNC}}",
          stack=S(CALL_TRACE, TRACE, skip=("alloc_skb", "netlink_ack", "netlink_rcv_skb",
                                           "_encrypt$", "^(?:crypto|cipher|drbg|rng)_"))),
        F("BUG: KMSAN: kernel-usb-infoleak", "KMSAN: kernel-usb-infoleak in {2}", "kmsan",
          detail=r"BUG: KMSAN: kernel-usb-infoleak in {{FUNC}}", alt=("KMSAN origin in {3}",),
          stack=S(TRACE, rx(r"(Local variable .* created at:|Uninit was created at:)"), TRACE,
                  skip=("alloc_skb", "usb_submit_urb", "usb_start_wait_urb", "usb_bulk_msg",
                        "usb_interrupt_msg", "usb_control_msg")),
          no_stack_trace=True),
        F("BUG: KMSAN:", "KMSAN: {1} in {3}", "kmsan",
          detail=r"BUG: KMSAN: ([a-z\-]+) in {{FUNC}}", alt=("bad-access in {3}",),
          stack=S(TRACE, rx(r"(Local variable .* created at:|Uninit was created at:)"), TRACE,
                  skip=("alloc_skb", "netlink_ack", "netlink_rcv_skb", "_encrypt$",
                        "^(?:crypto|cipher|drbg|rng)_")),
          no_stack_trace=True),
        F("BUG: KCSAN: data-race", "KCSAN: {1}", "kcsan", detail=r"BUG: KCSAN: (.*)",
          no_stack_trace=True),
        F("BUG: KCSAN:", "KCSAN: {1}", "kcsan", detail=r"BUG: KCSAN: (.*)", no_stack_trace=True),
        F(r"BUG: KFENCE: (use-after-free|out-of-bounds) (read|write) in {{FUNC}}",
          "KFENCE: {1} {2} in {4}", "kfence", alt=("bad-access in {4}",),
          stack=S(rx(r"BUG: KFENCE: (?:[a-z\- ]+) in {{FUNC}}"), TRACE)),
        F(r"BUG: KFENCE: invalid free in {{FUNC}}", "KFENCE: invalid free in {2}", "kfence",
          alt=("invalid-free in {2}",), no_stack_trace=True,
          stack=S(rx(r"BUG: KFENCE: (?:[a-z\- ]+) in {{FUNC}}"), TRACE)),
        F(r"BUG: KFENCE: invalid (read|write) in {{FUNC}}", "KFENCE: invalid {1} in {3}",
          "kfence", alt=("bad-access in {3}",),
          stack=S(rx(r"BUG: KFENCE: (?:[a-z\- ]+) in {{FUNC}}"), TRACE)),
        F(r"BUG: KFENCE: memory corruption in {{FUNC}}", "KFENCE: memory corruption in {2}",
          "kfence", no_stack_trace=True,
          stack=S(rx(r"BUG: KFENCE: (?:[a-z\- ]+) in {{FUNC}}"), TRACE)),
        F("BUG: (?:unable to handle kernel paging request|unable to handle page fault for address"
          "|Unable to handle kernel data access)",
          "BUG: unable to handle kernel paging request in {1}", "oops",
          alt=("bad-access in {1}",), stack=_rip_trace()),
        F("BUG: (?:unable to handle kernel NULL pointer dereference|kernel NULL pointer dereference"
          "|Kernel NULL pointer dereference)",
          "BUG: unable to handle kernel NULL pointer dereference in {1}", "oops",
          alt=("bad-access in {1}",), stack=_rip_trace()),
        F("BUG: (?:unable to handle kernel|Unable to handle kernel)",
          "BUG: unable to handle kernel", "oops", corrupted=True),
        F("BUG: (spinlock|rwlock) (lockup suspected|already unlocked|recursion|cpu recursion"
          "|bad magic|wrong owner|wrong CPU|trylock failure on UP)",
          "BUG: {1} {2} in {3}", "bug", stack=_trace("spin_", "_lock", "_unlock")),
        F("BUG: soft lockup", "BUG: soft lockup in {1}", "stall", alt=("stall in {1}",),
          stack=_rip_trace(extractor="stall")),
        F("BUG: .*still has locks held!", "BUG: still has locks held in {1}", "lockdep",
          detail=("BUG: .*still has locks held!", r"{{PC}} +{{FUNC}}")),
        F("BUG: scheduling while atomic", "BUG: scheduling while atomic in {1}", "bug",
          stack=_trace("schedule")),
        F("BUG: lock held when returning to user space",
          "BUG: lock held when returning to user space in {1}", "lockdep",
          detail=("BUG: lock held when returning to user space",
                  "leaving the kernel with locks still held", r"at: (?:{{PC}} +)?{{FUNC}}"),
          no_stack_trace=True),
        F("BUG: bad unlock balance detected!", "BUG: bad unlock balance in {1}", "lockdep",
          stack=S(rx(r"{{PC}} +{{FUNC}}"), CALL_TRACE, TRACE)),
        F("BUG: held lock freed!", "BUG: held lock freed in {1}", "lockdep",
          detail=("BUG: held lock freed!", r"{{PC}} +{{FUNC}}")),
        F("BUG: Bad rss-counter state", "BUG: Bad rss-counter state", "bug", no_stack_trace=True),
        F("BUG: non-zero nr_ptes on freeing mm", "BUG: non-zero nr_ptes on freeing mm", "bug",
          no_stack_trace=True),
        F("BUG: non-zero nr_pmds on freeing mm", "BUG: non-zero nr_pmds on freeing mm", "bug",
          no_stack_trace=True),
        F("BUG: Dentry .* still in use", "BUG: Dentry still in use in {1}", "bug",
          detail=r"BUG: Dentry .* still in use \([0-9]+\) \[(unmount) of ([^\]]+)\]",
          alt=("BUG: Dentry still in use [{1} of {2}]",)),
        F("BUG: Bad page (state|cache)", "BUG: Bad page {1} in {2}", "bug",
          stack=S(rx("page last allocated"), TRACE,
                  skip=("(free|put|get|update|release)_page", "free_unref", "^_*folio",
                        "truncate_inode_pages", "page_frag_free", "alloc", "vmap",
                        "page_owner"))),
        F("BUG: Bad page map", "BUG: Bad page map", "bug"),
        F("BUG: workqueue lockup", "BUG: workqueue lockup", "stall", no_stack_trace=True),
        F("BUG: sleeping function called from invalid context at (.*)",
          "BUG: sleeping function called from invalid context in {2}", "bug", stack=_trace()),
        F(r"BUG: using ([a-z_]+)\(\) in preemptible", "BUG: using {1}() in preemptible code in {2}",
          "bug", stack=_trace("dump_stack", "preemption", "preempt", "debug_", "processor_id",
                              "this_cpu")),
        F("BUG: workqueue leaked lock or atomic", "BUG: workqueue leaked lock or atomic in {1}",
          "lockdep", detail=("BUG: workqueue leaked lock or atomic",
                             r"last function: ([a-zA-Z0-9_]+)$"),
          no_stack_trace=True),
        F("BUG: memory leak", "memory leak in {1}", "leak",
          stack=S(rx(r"backtrace(?: \(crc [0-9a-fA-F]*\))?:"), TRACE,
                  skip=("kmemleak", "mmap", "kmem", "slab", "alloc", "create_object", "idr_get",
                        "list_lru_init", "kasprintf", "kvasprintf", "pcpu_create", "strdup",
                        "strndup", "memdup"))),
        F("BUG: .*stack guard page was hit at", "BUG: stack guard page was hit in {1}", "oops",
          alt=("stack-overflow in {1}",), stack=_rip_trace(extractor="stall")),
        F("BUG: Invalid wait context", "WARNING: locking bug in {1}", "lockdep",
          stack=_trace("lock_sock", "release_sock")),
        F(r"BUG:\s*$", "BUG: corrupted", "bug", corrupted=True),
    ), _sup("ODEBUG:", "Boot_DEBUG:", "xlog_status:", "DEBUG:",
            "BUG: no syscalls can create resource"),
        cut=_sup(r"BUG: KASAN: [\w-]+ in\s*$", r"BUG: KMSAN: [\w-]+ in\s*$",
                 r"BUG: unable to handle (?:page fault for address|kernel paging request at|"
                 r"kernel NULL pointer dereference at):?\s*$")),
    Group("WARNING:", (
        F(r"WARNING: .*lib/debugobjects\.c.* (?:debug_print|debug_check|at)",
          "WARNING: ODEBUG bug in {1}", "warning",
          stack=_warning_stack("debug_", "rcu", "hrtimer_", "timer_", "work_", "percpu_",
                               "vunmap", "vfree", "__free_", "debug_check", "kobject_")),
        F(r"WARNING: .*mm/usercopy\.c.* (?:usercopy_warn|at)", "WARNING: bad usercopy in {1}",
          "usercopy_warn", stack=_warning_stack("usercopy", "__check")),
        F(r"WARNING: .*lib/kobject\.c.* (?:kobject_|at)", "WARNING: kobject bug in {1}", "warning",
          stack=_warning_stack("kobject_")),
        F(r"WARNING: .*fs/proc/generic\.c.* (?:proc_register|at)",
          "WARNING: proc registration bug in {1}", "warning", stack=_warning_stack("proc_")),
        F(r"WARNING: .*lib/refcount\.c.* (?:refcount_|at)", "WARNING: refcount bug in {1}",
          "warning", stack=_warning_stack("refcount", "kobject_")),
        F(r"WARNING: .*kernel/locking/lockdep\.c.*lock_", "WARNING: locking bug in {1}", "lockdep",
          stack=_warning_stack("lock_sock", "release_sock")),
        F("WARNING: .*still has locks held!", "WARNING: still has locks held in {1}", "lockdep",
          detail=("WARNING: .*still has locks held!", r"at: {{FUNC}}")),
        F("WARNING: Nested lock was not taken", "WARNING: nested lock was not taken in {1}",
          "lockdep", stack=_warning_stack()),
        F("WARNING: lock held when returning to user space",
          "WARNING: lock held when returning to user space in {1}", "lockdep",
          detail=("WARNING: lock held when returning to user space",
                  "leaving the kernel with locks still held", r"at: (?:{{PC}} +)?{{FUNC}}"),
          no_stack_trace=True),
        F(r"WARNING: .*mm/.*\.c.* k?.?malloc", "WARNING: kmalloc bug in {1}", "warning",
          stack=_warning_stack("kmalloc", "krealloc", "slab", "kmem")),
        F(r"WARNING: .*mm/vmalloc.c.*__vmalloc_node", "WARNING: zero-size vmalloc in {1}",
          "warning", stack=_warning_stack()),
        F("WARNING: .* usb_submit_urb", "WARNING in {1}/usb_submit_urb", "warning",
          stack=_warning_stack("usb_submit_urb", "usb_start_wait_urb", "usb_bulk_msg",
                               "usb_interrupt_msg", "usb_control_msg")),
        F(r"WARNING: {{SRC}} at 0x\d+, CPU#\d+", "WARNING in {2}", "warning",
          stack=_warning_stack()),
        F("WARNING: .* at {{SRC}} {{FUNC}}", "WARNING in {3}", "warning", stack=_warning_stack()),
        F("WARNING: {{SRC}} at {{FUNC}}", "WARNING in {3}", "warning", stack=_warning_stack()),
        F(r"WARNING: \[.*\] {{SRC}} at {{FUNC}}.*", "WARNING in {3}", "warning",
          stack=_warning_stack()),
        F("WARNING: possible circular locking dependency detected", "possible deadlock in {1}",
          "lockdep",
          detail=("WARNING: possible circular locking dependency detected",
                  "is trying to acquire lock"),
          stack=S(rx(r"at: (?:{{PC}} +)?{{FUNC}}"), rx(r"at: (?:{{PC}} +)?{{FUNC}}"), TRACE,
                  skip=("process_one_work", "flush_workqueue", "drain_workqueue",
                        "destroy_workqueue"))),
        F("WARNING: possible irq lock inversion dependency detected", "possible deadlock in {1}",
          "lockdep",
          detail=("WARNING: possible irq lock inversion dependency detected",
                  "just changed the state of lock", r"at: (?:{{PC}} +)?{{FUNC}}")),
        F("WARNING: .*-safe -> .*-unsafe lock order detected", "possible deadlock in {1}",
          "lockdep", stack=S(rx("which became (?:.*) at:"), TRACE)),
        F("WARNING: possible recursive locking detected", "possible deadlock in {1}", "lockdep",
          detail=("WARNING: possible recursive locking detected", "is trying to acquire lock",
                  r"at: (?:{{PC}} +)?{{FUNC}}")),
        F("WARNING: inconsistent lock state", "inconsistent lock state in {2}", "lockdep",
          detail=("WARNING: inconsistent lock state", "takes", r"at: (?:{{PC}} +)?{{FUNC}}"),
          stack=_trace()),
        F("WARNING: suspicious RCU usage", "WARNING: suspicious RCU usage in {2}", "lockdep",
          detail=("WARNING: suspicious RCU usage", "{{SRC}}"),
          stack=_trace("rcu", "kmem", "slab")),
        F("WARNING: kernel stack regs at [0-9a-f]+ in [^ ]* has bad '([^']+)' value",
          "WARNING: kernel stack regs has bad '{1}' value", "warning", no_stack_trace=True),
        F("WARNING: kernel stack frame pointer at [0-9a-f]+ in [^ ]* has bad value",
          "WARNING: kernel stack frame pointer has bad value", "warning", no_stack_trace=True),
        F("WARNING: bad unlock balance detected!", "WARNING: bad unlock balance in {1}", "lockdep",
          stack=S(rx(r"{{PC}} +{{FUNC}}"), CALL_TRACE, TRACE)),
        F("WARNING: held lock freed!", "WARNING: held lock freed in {1}", "lockdep",
          detail=("WARNING: held lock freed!", r"at:(?: {{PC}})? +{{FUNC}}")),
        F("WARNING: kernel stack regs .* has bad 'bp' value",
          "WARNING: kernel stack regs has bad value", "warning", no_stack_trace=True),
        F("WARNING: kernel stack frame pointer .* has bad value",
          "WARNING: kernel stack regs has bad value", "warning", no_stack_trace=True),
        F(r"WARNING:\s*$", "WARNING: corrupted", "warning", corrupted=True),
    ), _sup("WARNING: /etc/ssh/moduli does not exist, using fixed modulus",
            "WARNING: workqueue cpumask: online intersect > possible intersect",
            "WARNING: [Tt]he mand mount option",
            r"WARNING: Unsupported flag value\(s\) of 0x%x in DT_FLAGS_1",
            "WARNING: Unprivileged eBPF is enabled with eIBRS",
            r"WARNING: fbcon: Driver '(.*)' missed to adjust virtual screen size",
            "WARNING: See https.* for mitigation options.",
            "WARNING: kernel not compiled with CPU_SRSO", r"EXT4-[Ff][Ss](?: \(.*\))?:",
            "(?i:warning: .* uses (deprecated v2 capabilities|wireless extensions))",
            r"XFS \(\w+\): WARNING"),
        # "WARNING: CPU: 1 PID: 2 at drivers/x.c:362" + "func+0x1/0x2 ..."
        cut=_sup(r"^WARNING: (?:CPU: \d+ PID: \d+ )?at \S+:\d+\s*$",
                 r"^WARNING: CPU: \d+ PID: \d+ at\s*$", r"^WARNING: \S+:\d+ at\s*$")),
    Group("INFO:", (
        F("INFO: possible circular locking dependency detected", "possible deadlock in {1}",
          "lockdep", detail=(r"INFO: possible circular locking dependency detected \]",
                             "is trying to acquire lock", r"at: {{PC}} +{{FUNC}}")),
        F("INFO: possible irq lock inversion dependency detected", "possible deadlock in {1}",
          "lockdep", detail=(r"INFO: possible irq lock inversion dependency detected \]",
                             "just changed the state of lock", r"at: {{PC}} +{{FUNC}}")),
        F("INFO: SOFTIRQ-safe -> SOFTIRQ-unsafe lock order detected", "possible deadlock in {1}",
          "lockdep", detail=(r"INFO: SOFTIRQ-safe -> SOFTIRQ-unsafe lock order detected \]",
                             "is trying to acquire", r"at: {{PC}} +{{FUNC}}")),
        F("INFO: possible recursive locking detected", "possible deadlock in {1}", "lockdep",
          detail=(r"INFO: possible recursive locking detected \]", "is trying to acquire lock",
                  r"at: {{PC}} +{{FUNC}}")),
        F("INFO: inconsistent lock state", "inconsistent lock state in {1}", "lockdep",
          detail=(r"INFO: inconsistent lock state \]", "takes", r"at: {{PC}} +{{FUNC}}")),
        F("INFO: rcu_(?:preempt|sched|bh|tasks) (?:self-)?detected(?: expedited)? stall",
          "INFO: rcu detected stall in {1}", "stall", alt=("stall in {1}",),
          stack=S(rx("apic_timer_interrupt"), RIP_LINE, TRACE,
                  parts2=(rx("(?:apic_timer_interrupt|Exception stack|el1h_64_irq)"), TRACE),
                  skip=("apic_timer_interrupt", "rcu"), extractor="stall")),
        F("INFO: trying to register non-static key", "INFO: trying to register non-static key in {1}",
          "lockdep", stack=_trace("stack", "lock", "IRQ")),
        F("INFO: suspicious RCU usage", "INFO: suspicious RCU usage in {2}", "lockdep",
          detail=("INFO: suspicious RCU usage", "{{SRC}}"), stack=_trace("rcu", "kmem", "slab")),
        F("INFO: task {{TASK}} blocked (?:in I/O wait )?for more than [0-9]+ seconds",
          "INFO: task hung in {1}", "hang", alt=("hang in {1}",),
          stack=_trace(extractor="hang")),
        F("INFO: task {{TASK}} can't die for more than .* seconds", "INFO: task can't die in {1}",
          "hang", alt=("hang in {1}",), stack=_trace("schedule")),
        F("INFO: (Freed|Allocated) in (.*)", "INFO: {1} in {2}", "kasan", corrupted=True),
        F(r"INFO:\s*$", "INFO: corrupted", "bug", corrupted=True),
    ), _sup("INFO: lockdep is turned off", "INFO: Stall ended before state dump start",
            "INFO: NMI handler", "INFO: recovery required on readonly filesystem",
            "(handler|interrupt).*took too long", "INFO: sys_.* is not present in /proc/kallsyms",
            "INFO: no syscalls can create resource", "rmt_storage:INFO:", "_INFO:")),
    Group("Unable to handle kernel", (
        F("Unable to handle kernel (paging request|NULL pointer dereference|access to user memory)",
          "BUG: unable to handle kernel {1} in {2}", "oops", alt=("bad-access in {2}",),
          stack=_rip_trace()),
    ), cut=_sup(r"at virtual address\s*$"),
        body_after=_sup(r"^Oops(?:: | - |#| ?\[#)", r"^Internal error: Oops")),
    Group("general protection fault", (
        F("general protection fault.*:", "general protection fault in {1}", "oops",
          alt=("bad-access in {1}",), stack=_rip_trace()),
    ), _sup(r"general protection fault .* error:\d+ in "),
        cut=_sup(r"general protection fault(?:,? probably for| for)? non-canonical address\s*$")),
    Group("stack segment: ", (
        F("stack segment: ", "stack segment fault in {1}", "oops", stack=_rip_trace()),
    )),
    Group("Kernel panic", (
        F("Kernel panic - not syncing: stack-protector:", "kernel panic: stack is corrupted in {1}",
          "panic", detail="Kernel panic - not syncing: stack-protector: Kernel stack is corrupted in: {{FUNC}}",
          no_stack_trace=True),
        F("Kernel panic - not syncing: stack-protector:", "kernel panic: stack is corrupted in {1}",
          "panic", detail="Kernel panic - not syncing: stack-protector: Kernel stack is corrupted in: [a-f0-9]+",
          stack=_trace("stack_chk")),
        F("Kernel panic - not syncing: corrupted stack end", "kernel panic: corrupted stack end in {1}",
          "panic", detail="Kernel panic - not syncing: corrupted stack end detected inside scheduler",
          alt=("stack-overflow in {1}",),
          stack=_trace("schedule", "retint_kernel", extractor="stall")),
        F("Kernel panic - not syncing: kernel stack overflow", "kernel stack overflow in {1}",
          "panic", alt=("stack-overflow in {1}",), stack=_trace("bad_stack", extractor="stall")),
        F("Kernel panic - not syncing: Attempted to kill init!",
          "kernel panic: Attempted to kill init!", "panic"),
        F("Kernel panic - not syncing: Couldn't open N_TTY ldisc for [^ ]+ --- error -[0-9]+",
          "kernel panic: Couldn't open N_TTY ldisc", "panic"),
        F("Kernel panic - not syncing: Fatal exception", "kernel panic: Fatal exception", "panic",
          corrupted=True),
        F("Kernel panic - not syncing: panic_on_warn set", "kernel panic: panic_on_warn set",
          "panic", corrupted=True),
        F("Kernel panic - not syncing: hung_task: blocked tasks",
          "kernel panic: hung_task: blocked tasks", "panic", corrupted=True),
        F("Kernel panic - not syncing: (.*)", "kernel panic: {1}", "panic"),
    )),
    Group("PANIC: double fault", (
        F("PANIC: double fault", "PANIC: double fault in {1}", "oops", stack=S(RIP_LINE)),
    )),
    Group("rust_kernel: panicked", (
        F("rust_kernel: panicked", "{1} in {2}", "panic",
          detail=("rust_kernel: panicked at ", "^(.+)$"),
          stack=_trace(re.escape("__rustc::rust_begin_unwind"))),
    )),
    Group("kernel BUG", (
        F("kernel BUG at mm/usercopy.c", "BUG: bad usercopy in {1}", "usercopy_abort",
          stack=_trace("usercopy", "__check")),
        F("kernel BUG at lib/list_debug.c", "BUG: corrupted list in {1}", "bug",
          alt=("bad-access in {1}",), stack=_trace()),
        F("kernel BUG at (.*)", "kernel BUG in {2}", "bug", stack=_rip_trace("^skb_")),
    )),
    Group("Kernel BUG", (F("Kernel BUG (.*)", "kernel BUG {1}", "bug"),)),
    Group("BUG kmalloc-", (
        F("BUG kmalloc-.*: Object already free", "BUG: Object already free", "bug"),
    )),
    Group("divide error:", (F("divide error: ", "divide error in {1}", "oops", stack=S(RIP_LINE)),)),
    Group("divide_error:", (F("divide_error: ", "divide error in {1}", "oops", stack=S(RIP_LINE)),)),
    Group("invalid opcode:", (
        F("invalid opcode: ", "invalid opcode in {1}", "oops", stack=S(RIP_LINE)),
    )),
    Group("int3:", (F("int3: ", "int3 in {1}", "oops", stack=_rip_trace()),)),
    Group("UBSAN:", (
        F("UBSAN:", "UBSAN: undefined-behaviour in {1}", "ubsan",
          detail="UBSAN: Undefined behaviour in", stack=_trace("ubsan", "overflow")),
        F("UBSAN: array-index-out-of-bounds in", "UBSAN: array-index-out-of-bounds in {1}",
          "ubsan", alt=("bad-access in {1}",), stack=_trace("ubsan", "overflow")),
        F("UBSAN:", "UBSAN: {1} in {2}", "ubsan", detail="UBSAN: (.*?) in",
          stack=_trace("ubsan", "overflow")),
    )),
    Group("Booting the kernel.", (
        F("^Booting the kernel", "unexpected kernel reboot", "other", no_stack_trace=True),
    ), _sup("Parsing ELF|Decompressing Linux|Unknown parameter '")),
    Group("unregister_netdevice: waiting for", (
        F("unregister_netdevice: waiting for (?:.*) to become free",
          "unregister_netdevice: waiting for DEV to become free", "other", no_stack_trace=True),
    )),
    Group("VFS: Close: file count is 0", (
        F("VFS: Close: file count is 0", "VFS: Close: file count is zero (use-after-free)",
          "other", no_stack_trace=True),
    )),
    Group("VFS: Busy inodes after unmount", (
        F("VFS: Busy inodes after unmount", "VFS: Busy inodes after unmount (use-after-free)",
          "other", no_stack_trace=True),
    )),
    Group("Internal error:", (
        F("Internal error:", "Internal error in {1}", "oops", alt=("bad-access in {1}",),
          stack=_rip_trace()),
    )),
    Group("Unhandled fault:", (
        F("Unhandled fault:", "Unhandled fault in {1}", "oops", alt=("bad-access in {1}",),
          stack=_rip_trace()),
    )),
    Group("Alignment trap:", (
        F("Alignment trap:", "Alignment trap in {1}", "oops", stack=_rip_trace()),
    )),
    Group("trusty: panic", (
        F("trusty: panic.* ASSERT FAILED", "trusty: ASSERT FAILED: {1}", "other",
          detail=r"trusty: panic \(.*?\):(?: DEBUG)? ASSERT FAILED at \(.*?\): (.+)",
          no_stack_trace=True),
        F("trusty: panic.* ASSERT FAILED.*: *(.*)", "trusty: ASSERT FAILED: {1}", "other",
          corrupted=True),
        F("trusty: panic", "trusty: panic: {1}", "other", detail=r"trusty: panic \(.*?\): (.+)",
          no_stack_trace=True),
    )),
    Group("fatal error:", (
        F("fatal error:", "go runtime error", "other", no_stack_trace=True),
    ), _sup("ALSA", "fatal error: cannot create timer")),
    Group("SYZFAIL:", (F("SYZFAIL:(.*)", "SYZFAIL:{1}", "other", no_stack_trace=True),)),
    Group("SYZFATAL:", (
        F("SYZFATAL:(.*)()", "SYZFATAL:{1}", "other", alt=("SYZFATAL{2}",), no_stack_trace=True),
    )),
    Group("panic:", (
        F("panic: Sentry detected .* stuck task", "panic: Sentry detected stuck tasks", "other",
          no_stack_trace=True),
        F("panic:(.*)", "panic:{1}", "other", no_stack_trace=True),
    ), _sup("_panic:", "xlog_status:", r"ddb\.onpanic:", "evtlog_status:")),
    # ---- ours: report openers syzkaller does not treat as headers
    # The usercopy message comes before the BUG/WARNING line syzkaller titles
    # from; where that line is missing (a quote or an excerpt that kept only
    # the message and the trace) the report is titled as it would be with it.
    Group("usercopy", (
        F(r"usercopy: Kernel memory (exposure|overwrite) attempt detected (from|to) (.*) "
          r"\(off ?set (\d+), size (\d+)\)", "BUG: bad usercopy in {6}", "usercopy_abort",
          stack=_trace("usercopy", "__check")),
        F(r"Bad or missing usercopy whitelist\? Kernel memory (exposure|overwrite) attempt "
          r"detected (from|to) (.*) \(off ?set (\d+), size (\d+)\)", "WARNING: bad usercopy in {6}",
          "usercopy_warn", stack=_trace("usercopy", "__check")),
        F(r"usercopy: kernel memory (exposure|overwrite) attempt detected (from|to) (\S+) "
          r"\((.*)\) \((\d+) bytes\)", "BUG: bad usercopy in {6}", "usercopy_legacy",
          stack=_trace("usercopy", "__check")),
    ), syz=False, opener=rx(r"usercopy: [Kk]ernel |Bad or missing usercopy whitelist"),
        joins=rx(r"(?:WARNING: .*|kernel BUG at )mm/usercopy\.c"),
        # the message without its "(offset N, size N)!" / "(N bytes)" end
        # ("off set": a space a re-wrap's join or a re-typing put inside
        # the word, as the 80-column copy's "'n o area'", is read through)
        cut=_sup(r"^(?!.*(?:\(off ?set \d+, size \d+\)|\(\d+ bytes\)))"
                 r".*(?:usercopy: [Kk]ernel memory|usercopy whitelist\?)")),
    Group("Oops", (
        F(r"^Oops(?:: | - |#| ?\[#)", "", "oops"),
    ), syz=False, opener=rx(r"^Oops(?:: | - |#| ?\[#)")),
    # The register dump's PC line in usercopy_abort (x86_64 "RIP: 0010:",
    # i386 "EIP:", arm64 "pc :", arm "PC is at", powerpc "NIP [...]",
    # riscv "epc :"): a quote or excerpt that starts there is a usercopy
    # BUG whose message and BUG line were left out.  Inside an open
    # report (its own dump, x86's summary after the end marker) it is
    # just a line of that report.
    Group("usercopy_abort", (
        F(r"usercopy_abort", "BUG: bad usercopy in {1}", "usercopy_abort",
          stack=_trace("usercopy", "__check")),
    ), syz=False, inside=True,
        opener=rx(r"^\s*(?:RIP: 00[0-9a-f]{2}:|EIP: |pc : |epc : |NIP \[[0-9a-f]+\] |PC is at )"
                  r"usercopy_abort\b")),
    # s390's die() line: "fixpoint divide exception: 0009 ilc:2 [#1] SMP"
    # (after a BUG(): "monitor event: 0040 ilc:2 [#1]")
    Group("ilc:", (
        F(S390_DIE.pattern, "", "oops"),
    ), syz=False, opener=S390_DIE),
)

# ------------------------------------------------------- layout vocabulary
# How reports are laid out, for the parser (which lines belong to a report,
# when its trace is complete) and the analysis (which frames are the
# report's own, which are machinery).

# Lines of a call trace other than frames: headings, stack markers,
# exception stacks and hex dumps, arm saved registers, task-state lines.
TRACE_LINE = re.compile(
    r"(?:Call [Tt]race:|Backtrace:|</?#?[A-Z]{2,7}>|--- interrupt:|"
    r"Exception stack|Allocated by task|Freed by task|stack backtrace:|Stack:|"
    r"Last Breaking-Event-Address:|Krnl (?:PSW|GPRS|Code)|"
    r"r\d+ ?: ?[0-9a-f]{8}|[0-9a-f]{4}: (?: *[0-9a-f]{8})+ *$|(?:[0-9a-f]{8,16} +){2,}[0-9a-f]{8,16}\s*$|"
    r".*stack trace:$|\S+ +[RSDTtXZIP] +(?:running task|[0-9a-f]{8,16}) +\d+|"
    # the unwinder's stack dump after "has bad value": "ADDR: VALUE (sym+off)"
    r"[0-9a-f]{16}: [0-9a-f]{16} (?:\(.*\)|\.\.\.)$|unwind stack type:)")
# Register dumps and the lines a report ends with: neither unrelated inside
# a report nor a reason to end it after its end marker.
TAIL_LINE = re.compile(
    r"(?:RIP|RSP|RAX|RBX|RCX|RDX|RSI|RDI|RBP|R\d+|FS|GS|CS|DS|ES|CR\d|DR\d|PKRU|EFLAGS|"
    r"E[A-D]X|E[SD]I|E[BS]P|EIP|Code:|Modules linked in|---\[ end|Kernel Offset|"
    r"Kernel panic|note: |Fixing recursive fault|Rebooting in|Dumping ftrace|"
    r"\(ftrace buffer empty\)|pc :|lr :|sp :|x\d+ *:|pstate:|CPU: \d+|Hardware name|"
    r"SMP: stopping|PHYS_OFFSET|CPU features|Memory Limit|Sending NMI|NMI backtrace|"
    r"NIP|LR|CTR|REGS:|MSR:|CFAR:|GPR\d\d|Instruction dump|PC is at|LR is at|psr:|"
    r"Flags:|Control:|epc|ra |status:|badaddr|cause|task:|Process |Stack : |"
    r"irq event stamp|hardirqs|softirqs|Krnl|Call Trace|Call trace|\[ end Kernel panic|"
    r"Disabling lock debugging)")
# the line that closes a KASAN/KCSAN/UBSAN/KFENCE report
BANNER = re.compile(r"={20,}\s*$")
# a line that starts another call trace inside the same report
NEW_TRACE = re.compile(r"(?:Call [Tt]race:|Backtrace:|Allocated by task|Freed by task|"
                        r"stack backtrace:|.*stack trace:$|\S+ +[RSDTtXZIP] +(?:running task|"
                        r"[0-9a-f]{8,16} +\d+))")
# What a complete call trace ends with: the end of the task stack, the
# user-mode registers, the code dump, a frame no caller is printed above.
TRACE_DONE = re.compile(r"(?:</TASK>|RIP: 00[23][3b]:|Code: )")
ROOT_FRAME = re.compile(
    r"(?:entry_SYSCALL\w*|entry_SYSENTER\w*|entry_INT80\w*|ret_from_fork\w*|el0t_\w+|"
    r"el0_svc\w*|ret_fast_syscall|start_kernel|secondary_startup\w*|cpu_startup_entry|"
    r"system_call\w*|x86_64_start_\w+|rest_init|ret_from_kernel_thread|kernel_init|"
    # ARC's trap entry (syscalls come in through it); ia64's kernel-thread
    # entry and system-call return
    r"EV_Trap|call_payload|ia64_ret_from_syscall)")
# Frames of the usercopy checks and copy helpers and of the reporting
# machinery (dump_stack, WARN/BUG/panic, sanitizers, fault entry): never
# the culprit of a usercopy report (the first frame after them is).
MACHINERY = re.compile(
    r"(?:usercopy_\w+|__check_heap_object|__check_object_size|check_heap_object|"
    r"check_object_size|check_\w+_object|check_bogus_address|check_copy_size|"
    r"__might_fault|might_fault|__might_sleep|__virt_addr_valid|copyout|copyin|"
    r"_copy_\w+|__copy_\w+|raw_copy_\w+|\w*copy_to_user\w*|\w*copy_from_user\w*|"
    # the iov_iter API (lib/iov_iter.c, include/linux/uio.h), not a
    # subsystem's own helper that calls it (net/core's simple_copy_to_iter)
    r"(?:_*|csum_and_|hash_and_)copy_(?:to|from)_iter\w*|copy_page_(?:to|from)_iter\w*|"
    r"copy_user_\w+|rep_movs_alternative|memdup_user\w*|strndup_user|strncpy_from_user|"
    # library wrappers that copy for their caller (lib/, include/linux/)
    r"_*kfifo_(?:to|from)_user\w*|kfifo_copy_(?:to|from)_user|user_regset_copy(?:in|out)\w*|"
    r"memcpy_(?:to|from)_msg|simple_read_from_buffer|simple_write_to_buffer|"
    r"memcpy_(?:to|from)iovec\w*|"
    r"dump_stack\w*|__dump_stack|show_stack|show_trace_log_lvl|unwind_backtrace|"
    r"dump_backtrace|panic|__warn|"
    r"warn_slowpath\w*|__warn_printk|report_bug|handle_bug|exc_invalid_op|"
    r"asm_exc_invalid_op|do_error_trap|do_invalid_op|invalid_op|do_trap|die|__die\w*|"
    r"oops_end|kasan_\w+|__kasan_\w+|__asan_\w+|print_report|"
    r"print_address_description\w*|check_memory_region\w*|ubsan_\w+|__ubsan_\w+|"
    r"bug_handler|__bug|el1_\w+|el1h_\w+|do_mem_abort|die_kernel_fault|"
    r"__do_kernel_fault|do_page_fault|page_fault_oops|kernelmode_fixup_or_oops|"
    r"exc_page_fault|asm_exc_page_fault|__bad_area_nosemaphore|bad_area_nosemaphore|"
    r"exc_general_protection|asm_exc_general_protection|fixup_bug|"
    r"program_check_exception|program_check_common)")
# A trace line that shows the report ran to its end: the end marker, or the
# code dump that arm and arm64 print after the backtrace.
TRACE_ENDED = re.compile(r"\s*(?:---\[ end trace|Code: )")
# A usercopy message cut before its object still says which way the copy went.
CUT_DIRECTION = re.compile(r"[Kk]ernel memory (exposure|overwrite) attempt detected")
# A usercopy message cut after its object (no "(offset N, size N)!" or "(N
# bytes)" follows, on its line or the next): the object it names, when the
# text left is a whole object of its generation (mm/usercopy.c's names; a
# slab object with its cache in quotes; the 4.8-4.15 "ADDR (CACHE)").
CUT_OBJECT = (
    ("usercopy_warn", re.compile(
        r"Bad or missing usercopy whitelist\? Kernel memory (exposure|overwrite) attempt "
        r"detected (?:from|to) ((?:SL[AU]B object '[^']+'|SLUB object not in SLUB page\?!|"
        r"vmalloc '[^']+'|kernel text|linear kernel text|kernel data|kernel rodata|"
        r"process stack|page alloc|null address|wrapped address|kmap|vmalloc|"
        r"spans multiple pages))\s*$")),
    ("usercopy_abort", re.compile(
        r"usercopy: Kernel memory (exposure|overwrite) attempt detected (?:from|to) "
        r"((?:SL[AU]B object '[^']+'|SLUB object not in SLUB page\?!|"
        r"vmalloc '[^']+'|kernel text|linear kernel text|kernel data|kernel rodata|"
        r"process stack|page alloc|null address|wrapped address|kmap|vmalloc|"
        r"spans multiple pages))\s*$")),
    ("usercopy_legacy", re.compile(
        r"usercopy: kernel memory (exposure|overwrite) attempt detected (?:from|to) "
        r"[0-9a-f]+ \(([^()]+)\)\s*$")),
)
# The usercopy checks themselves: a frame printed above them in a trace is
# the reporting path (or an unwinder's guess past a noreturn call, as ARC's
# "memfd_fcntl+0x0" above usercopy_abort), never the culprit.
CHECK_FRAME = re.compile(
    r"(?:usercopy_(?:abort|warn)|__check_heap_object|check_heap_object|"
    r"__check_object_size|check_object_size)")
# Frames of the path that printed a report through an exception or panic:
# a trace segment with one of them that ends at a kernel RIP line (or a
# powerpc "--- interrupt:") is that path, and the real frames follow.
EXCEPTION_PATH = re.compile(
    r"(?:panic|check_panic_on_warn|__warn|report_bug|handle_bug|exc_invalid_op|"
    r"asm_exc_invalid_op|fixup_bug|do_error_trap|do_invalid_op|invalid_op|do_trap|"
    r"die|oops_end|bug_handler|program_check_exception|program_check_common|"
    r"dump_stack\w*|show_stack|el1_dbg|el1h_64_sync\w*|do_debug_exception|brk_handler|"
    r"call_break_hook|do_bp|do_trap_break)")
# The copy primitives of each direction, by which a usercopy report whose
# message line is lost may still say which way the copy went: the
# copy_to_user / copy_from_user family (any _/__/raw_/arch prefix or
# _inatomic-like suffix, copyout/copyin, memdup_user and friends), the
# iov_iter API (lib/iov_iter.c, include/linux/uio.h) and the library
# wrappers of MACHINERY that copy one way for their caller; net/core's
# control-message API (put_cmsg, put_cmsg_compat: it copies a cmsg into the
# user's msg_control, never the other way; still a culprit, not MACHINERY,
# as syzkaller titles it).  Not a subsystem's helper that may copy either
# way or whose name says nothing of the user (simple_copy_to_iter copies to
# any iov_iter): its name is not a primitive's (docs/triage.md, "direction").
TO_USER = re.compile(
    r"(?:\w*copy_to_user\w*|copyout(?:_mc|_nofault)?|put_cmsg(?:_compat)?|"
    r"(?:_*|csum_and_|hash_and_)copy_(?:mc_)?to_iter\w*|copy_(?:page|folio)_to_iter\w*|"
    r"_*kfifo_to_user\w*|kfifo_copy_to_user|user_regset_copyout\w*|memcpy_to_msg|"
    r"memcpy_toiovec\w*|simple_read_from_buffer)")
FROM_USER = re.compile(
    r"(?:\w*copy_from_user\w*|copyin|(?:_*|csum_and_)copy_from_iter\w*|"
    r"copy_(?:page|folio)_from_iter\w*|memdup_user\w*|vmemdup_user|strndup_user|"
    r"strncpy_from_user|_*kfifo_from_user\w*|kfifo_copy_from_user|user_regset_copyin\w*|"
    r"memcpy_from_msg|memcpy_fromiovec\w*|simple_write_to_buffer)")
# Where the report's own trace starts and, once it has frames, ends (the
# end of the task stack, the alloc/free stacks, the panic, a blank line);
# a powerpc exception frame inside it.  (TRACE_END's blank line is the
# `$` after the leading `\s*`: a second `\s*` there was quadratic in the
# leading spaces.)
TRACE_HEADING = re.compile(r"\s*(?:Call [Tt]race:|Backtrace:)")
TRACE_END = re.compile(
    r"\s*(?:---\[ end|</TASK>|(?i:allocated by task|freed by task)|The buggy address|"
    r"Memory state around|Last Breaking-Event-Address|Kernel panic - not syncing|"
    r"Code: |Modules linked in|={20,}|Uninit was (?:created|stored)|kfence-#|$)")
INTERRUPT = re.compile(r"\s*--- interrupt: ")

# A line a symbolizer added for an inlined function (syz-symbolize, as in
# syzbot's mails; decode_stacktrace.sh): a copy of the line after it, with
# the inlined function's name and " FILE:LINE [inline]".  Header lines
# copied so ("BUG: KASAN: ... in atomic_read include/...:68 [inline]", then
# "... in io_wq_put_and_exit+0x...") are one report; syzkaller titles the
# report as the kernel printed it, without these copies.
INLINE_COPY = re.compile(r" \[inline\](?:,|\s*$)")

# A source location alone on a line ("kernel/locking/mutex.c:1043 [inline]",
# "(fs/x.c:12)", "[inline]"): what a symbolizer appended to the line before, moved to a
# line of its own by a mailer's hard wrap.
SOURCE_TAIL = re.compile(r"(?:\(?[\w./+-]+\.\w+:\d+(?::\d+)?\)?(?: \[inline\])?|\[inline\])\s*$")

# Lines that, inside an open report, continue it rather than start another
# (the die() line after "kernel BUG at", the panic that follows an oops).
CONTINUES = _sup("invalid opcode: 0000", "Kernel panic - not syncing",
                 # the x86 unwinder complaining in the middle of a trace
                 r"WARNING: kernel stack (?:frame pointer|regs) at [0-9a-f]+ in \S+ has bad",
                 "unregister_netdevice: waiting for", "PANIC: double fault", "Internal error:",
                 # riscv's and mips's die() lines after a BUG()
                 r"^Kernel BUG \[#\d+\]", r"^Kernel bug detected\[#\d+\]", S390_DIE.pattern)
# Reports printed by the kernel that are not bugs but carry a stack: one
# inside a report ends it.
INFO_WITH_STACK = ("vmalloc: allocation failure:", "FAULT_INJECTION: forcing a failure",
                   "FAULT_FLAG_ALLOW_RETRY missing")
# After this many report lines, a panic (or a lockdep splat caused by the
# oops reporting itself) is the report's consequence and left out of it.
REPORT_MIN_LINES = 22
REPORT_MIN_LINES_KMSAN = 16

# Substrings the fast path looks for in raw bytes: every Group header and
# every line the parser keeps context from contains one of them.
TRIGGERS = ("BUG", "WARNING:", "INFO:", "Unable to handle kernel", "protection fault",
            "stack segment: ", "anic", "PANIC", "rror:", "invalid opcode:", "int3:", "UBSAN:",
            "Booting the kernel", "unregister_netdevice", "VFS: ", "Unhandled fault:",
            "Alignment trap:", "SYZ", "usercopy", "Oops", "ilc:", "Linux version",
            "attempting bad copy")


_HEADS_B = re.compile(b"|".join(re.escape(h) for h in sorted(
    {g.header.encode() for g in GROUPS} | {b"Linux version", b"attempting bad copy"},
    key=len, reverse=True)))
_SUPPRESS_B = {g.header.encode(): re.compile(b"|".join(b"(?:%s)" % s.pattern.encode()
                                                       for s in g.suppress))
               for g in GROUPS if g.suppress}
# Suppressions are searched near the header (a kernel message is short):
# with patterns like "warning: .* uses", a whole long line would cost
# (occurrences x length) steps.
SUPPRESS_BEFORE, SUPPRESS_AFTER = 128, 512
MAX_HEADER_TRIES = 8


def _near(text: str | bytes, pos: int) -> str | bytes:
    return text[max(0, pos - SUPPRESS_BEFORE):pos + SUPPRESS_AFTER]


def may_matter(raw: bytes) -> bool:
    """Cheap test on an undecoded line: could it open a report or carry
    context (kernel version, LKDTM address)?  False means surely not."""
    m = _HEADS_B.search(raw)
    for _ in range(MAX_HEADER_TRIES):
        if m is None:
            return False
        suppress = _SUPPRESS_B.get(m.group())
        if suppress is None or not suppress.search(_near(raw, m.start())):
            return True
        m = _HEADS_B.search(raw, m.start() + 1)
    return False


# ------------------------------------------------------------ mentions
# A header that someone wrote about rather than the kernel printed: a
# title quoted in a sentence ('fixes "BUG: bad usercopy in foo"'), or a
# line that is a syzkaller title of its group (syzbot's mails name the
# title on a line of its own; "in <function>" without an offset, which
# the kernel's own headers print).  Neither opens a report.
QUOTE_BEFORE = re.compile("[\"'`\u201c\u2018\u00ab]\\s*$")
# A header in the value of a mail's or a tracker's title field ("Subject:
# Re: [Bug 216073] New: [s390x] kernel BUG at mm/usercopy.c:101!", the
# kernel bugzilla's "Summary:" in the mails it sends): the kernel prints
# no such label before a header.
FIELD_LABEL = re.compile(r"\s*(?:Subject|Summary|Title):\s")
# kernel headers that do name a function without an offset
MENTION_EXCEPT = ("BUG: KCSAN:",)
# The shape the kernel always prints a header in: after other words on a
# line, the header without it ("fix foo kernel BUG at mm/usercopy.c:102"
# in a commit subject) was written about.  (BUG() always prints
# "kernel BUG at FILE:LINE!".)
PRINTED_SHAPE = {"kernel BUG": re.compile(r"kernel BUG(?! at )|kernel BUG at \S+:\d+!")}
_IDENT = r"[A-Za-z_][\w.]*"
MAX_TITLE = 200


def _title_shape(template: str) -> str:
    """A syz title template ("kernel BUG in {2}") as a pattern of the
    titles it gives: the frame after " in " an identifier, other
    placeholders any text."""
    parts = re.split(r"\{\d+\}", template)
    out = []
    for i, lit in enumerate(parts):
        out.append(re.escape(lit))
        if i < len(parts) - 1:
            out.append(_IDENT if lit.endswith(" in ") else ".+?")
    return "".join(out)


TITLE_SHAPES = {
    g.header: re.compile("(?:" + "|".join(_title_shape(f.syz) for f in g.formats
                                          if " in {" in f.syz)
                   + ")(?:[\"'`\u201d\u2019].*|[.,;:!)\\s]*)$")
    for g in GROUPS if any(" in {" in f.syz for f in g.formats)}


def is_mention(text: str, pos: int, group: Group) -> bool:
    """Whether the header of group at text[pos:] was written about, not printed."""
    if pos and QUOTE_BEFORE.search(text, max(0, pos - 8), pos):
        return True
    if pos and FIELD_LABEL.match(text, 0, pos):
        return True
    printed = PRINTED_SHAPE.get(group.header)
    if pos and printed is not None and text[:pos].strip() and not printed.match(text, pos):
        return True
    shape = TITLE_SHAPES.get(group.header)
    return (shape is not None and len(text) - pos <= MAX_TITLE
            and not text.startswith(MENTION_EXCEPT, pos) and shape.match(text, pos) is not None)


def header_group(text: str) -> Group | None:
    """The first group whose header is on the line and that does not
    suppress it (as syzkaller, which searches suppressions in the whole
    line; here near the header), unless the header is a mention."""
    for group in GROUPS:
        pos = text.find(group.header)
        if pos < 0:
            continue
        near = _near(text, pos)
        if any(s.search(near) for s in group.suppress):
            continue
        if group.syz or (group.opener is not None and group.opener.search(near)):
            return None if is_mention(text, pos, group) else group
    return None
