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

from .format_parts import (_PLACEHOLDERS, CALL_TRACE, RIP_LINE, TRACE, Format, Group, Stack, _sup,
                           rx)


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
          r"\(offset (\d+), size (\d+)\)", "BUG: bad usercopy in {6}", "usercopy_abort",
          stack=_trace("usercopy", "__check")),
        F(r"Bad or missing usercopy whitelist\? Kernel memory (exposure|overwrite) attempt "
          r"detected (from|to) (.*) \(offset (\d+), size (\d+)\)", "WARNING: bad usercopy in {6}",
          "usercopy_warn", stack=_trace("usercopy", "__check")),
        F(r"usercopy: kernel memory (exposure|overwrite) attempt detected (from|to) (\S+) "
          r"\((.*)\) \((\d+) bytes\)", "BUG: bad usercopy in {6}", "usercopy_legacy",
          stack=_trace("usercopy", "__check")),
    ), syz=False, opener=rx(r"usercopy: [Kk]ernel |Bad or missing usercopy whitelist"),
        joins=rx(r"(?:WARNING: .*|kernel BUG at )mm/usercopy\.c"),
        # the message without its "(offset N, size N)!" / "(N bytes)" end
        cut=_sup(r"^(?!.*(?:\(offset \d+, size \d+\)|\(\d+ bytes\)))"
                 r".*(?:usercopy: [Kk]ernel memory|usercopy whitelist\?)")),
    Group("Oops", (
        F(r"^Oops(?:: | - |#| ?\[#)", "", "oops"),
    ), syz=False, opener=rx(r"^Oops(?:: | - |#| ?\[#)")),
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


