"""The parts a row of the formats table (report_formats.py) is made of: the
pattern placeholders of syzkaller's linux.go ({{ADDR}}, {{PC}}, {{FUNC}},
{{SRC}}, {{TASK}}), the Stack / Format / Group records, the call-trace
vocabulary shared by every row, and the frames never to blame (SKIP)."""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..model import ReportKind


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
    # whose frame-picking rules apply (syzkaller's stall and hang
    # extractors; None: the first candidate): given as the kind's word
    extractor: ReportKind | None = None

    def __post_init__(self) -> None:
        if self.extractor is not None:
            object.__setattr__(self, "extractor", ReportKind(self.extractor))


@dataclass(frozen=True)
class Format:
    """One kind of report, as a row of report_formats.GROUPS (syzkaller's
    linux.go oopsFormat): title, the line patterns that recognize it
    (pattern text with the placeholders above, or a tuple: patterns on
    successive lines; compiled here); detail, what to capture from it;
    syz, the title template ("{1}" is the first captured group, frames
    follow the groups); kind, our report kind; stack, where the blamed
    frame is; alt, syzkaller's alternative titles; no_stack_trace: it is
    printed without a call trace; corrupted: it means a mangled report."""

    title: tuple[re.Pattern[str], ...]
    syz: str
    kind: ReportKind                    # given as its word, held as the member
    detail: tuple[re.Pattern[str], ...] = ()
    stack: Stack | None = None
    alt: tuple[str, ...] = ()
    no_stack_trace: bool = False
    corrupted: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", ReportKind(self.kind))
        object.__setattr__(self, "title", _compiled(self.title))
        object.__setattr__(self, "detail", _compiled(self.detail))


def _compiled(patterns: object) -> tuple[re.Pattern[str], ...]:
    """Pattern text (or a tuple of it) as compiled patterns."""
    items = (patterns,) if isinstance(patterns, (str, re.Pattern)) else tuple(patterns)  # type: ignore[arg-type]
    return tuple(p if isinstance(p, re.Pattern) else rx(p) for p in items)


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


def rxs(*patterns: str) -> tuple[re.Pattern[str], ...]:
    """Several patterns, each as rx() compiles it (a Group's suppress, cut
    and body_after lists)."""
    return tuple(rx(p) for p in patterns)


# Stacks many rows share (syzkaller: linuxRipFrame, linuxCallTrace, warningStackFmt)
def rip_trace(*skip: str, extractor: ReportKind | str | None = None) -> Stack:
    return Stack(parts=(RIP_LINE, CALL_TRACE, TRACE), skip=skip,
                 extractor=ReportKind(extractor) if extractor else None)


def call_trace(*skip: str, extractor: ReportKind | str | None = None) -> Stack:
    return Stack(parts=(CALL_TRACE, TRACE), skip=skip,
                 extractor=ReportKind(extractor) if extractor else None)


def warning_stack(*skip: str) -> Stack:
    """A WARNING's own frames follow its RIP line (x86; powerpc: the
    "--- interrupt:" line); old kernels print just a call trace."""
    first = re.compile("(?:" + RIP_LINE.pattern + "|--- interrupt: [0-9]+ at "
                       + _PLACEHOLDERS["{{FUNC}}"] + ")")
    return Stack(parts=(first, TRACE), parts2=(CALL_TRACE, TRACE), skip=skip)
