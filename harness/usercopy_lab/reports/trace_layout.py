"""The layout of a report around its formats: what a call-trace line, a
trace's end, a report's tail and the lines that carry on a report look
like; the usercopy message's parts; which lines may open a report at all
(may_matter, the fast byte scan) and when a header is only mentioned in
other text (is_mention).  The rows themselves: report_formats.py."""
from __future__ import annotations

import re

from ..model import ReportKind
from .format_parts import Group, rxs
from .report_formats import GROUPS, S390_DIE


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
    (ReportKind.USERCOPY_WARN, re.compile(
        r"Bad or missing usercopy whitelist\? Kernel memory (exposure|overwrite) attempt "
        r"detected (?:from|to) ((?:SL[AU]B object '[^']+'|SLUB object not in SLUB page\?!|"
        r"vmalloc '[^']+'|kernel text|linear kernel text|kernel data|kernel rodata|"
        r"process stack|page alloc|null address|wrapped address|kmap|vmalloc|"
        r"spans multiple pages))\s*$")),
    (ReportKind.USERCOPY_ABORT, re.compile(
        r"usercopy: Kernel memory (exposure|overwrite) attempt detected (?:from|to) "
        r"((?:SL[AU]B object '[^']+'|SLUB object not in SLUB page\?!|"
        r"vmalloc '[^']+'|kernel text|linear kernel text|kernel data|kernel rodata|"
        r"process stack|page alloc|null address|wrapped address|kmap|vmalloc|"
        r"spans multiple pages))\s*$")),
    (ReportKind.USERCOPY_LEGACY, re.compile(
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
CONTINUES = rxs("invalid opcode: 0000", "Kernel panic - not syncing",
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
