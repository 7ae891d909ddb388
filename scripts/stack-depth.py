#!/usr/bin/python3
"""stack-depth.py VMLINUX --arch ARCH --chain F1,F2,...,FN [--stack-base N]
               [--address-of FUNC:CALLEE]

The stack pointer along a call chain, from the kernel's own code: where the
expected-oops/ values of the USERCOPY_STACK_* triggers come from (their
offset is current_stack_pointer - ptr, mm/usercopy.c __check_object_size()).

For each function of the chain it disassembles the function (and its .cold
part, which gcc splits off) with the arch's objdump, follows every path
from the entry (jumps, conditional branches, calls; returns, tail calls and
traps end a path) and tracks the stack pointer relative to the entry: x86
push/pop/sub/add/leave/mov of the frame pointer and the call's return
address, arm64 stp/ldp/str/ldr with writeback, sub/add sp and mov of x29.
It prints, per function, how far below its entry the stack pointer is at
its call of the next one, and the running total below F1's entry.  In the
last function it prints the stack pointer at every instruction that copies
it into a register (the compiler's read of current_stack_pointer) and at
every call.  --stack-base N adds what lies between the top of the stack
and F1's entry (pt_regs and the arch's padding: from the source, see the
golden files).  --address-of FUNC:CALLEE prints the address FUNC passes as
first argument to CALLEE, relative to FUNC's entry stack pointer (the
lkdtm stack triggers' bad_stack is what do_usercopy_stack_callee() passes
to trick_compiler()).

A path that reaches an instruction with another stack depth than an
earlier one is an error (exit 1), as is a chain link that is never called.
Exit 2: bad input (no such file, function or objdump).
"""
from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field


@dataclass(frozen=True)
class ArchSyntax:
    objdump: str
    word: int            # bytes a call pushes (0: link register)


ARCHES = {
    "x86_64": ArchSyntax("objdump", 8),
    "i386": ArchSyntax("objdump", 4),
    "arm64": ArchSyntax("aarch64-linux-gnu-objdump", 0),
}

LINE_RE = re.compile(r"^\s*([0-9a-f]+):\s+(\S+)\s*(.*)$")
TARGET_RE = re.compile(r"\b([0-9a-f]+) <([^>+]+)(?:\+0x([0-9a-f]+))?>")


class Bad(Exception):
    """Bad input: exit 2."""


@dataclass
class Insn:
    addr: int
    op: str
    args: str
    target: int | None = None
    target_sym: str = ""


@dataclass
class Function:
    name: str
    insns: dict[int, Insn] = field(default_factory=dict)
    order: list[int] = field(default_factory=list)
    entry: int = 0


def symbols(vmlinux: str) -> dict[str, tuple[int, int]]:
    out = subprocess.run(["nm", "-S", "--defined-only", vmlinux], capture_output=True,
                         text=True, check=True).stdout
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2].lower() == "t":
            syms.setdefault(parts[3], (int(parts[0], 16), int(parts[1], 16)))
    return syms


def disassemble(vmlinux: str, arch: ArchSyntax, start: int, size: int) -> list[Insn]:
    out = subprocess.run([arch.objdump, "-d", "--no-show-raw-insn",
                          f"--start-address={start:#x}", f"--stop-address={start + size:#x}",
                          vmlinux], capture_output=True, text=True, check=True).stdout
    return parse_objdump(out)


def parse_objdump(out: str) -> list[Insn]:
    """Instructions of `objdump -d --no-show-raw-insn` output."""
    insns = []
    for line in out.splitlines():
        m = LINE_RE.match(line)
        if not m or m.group(2).endswith(">:"):
            continue
        insn = Insn(int(m.group(1), 16), m.group(2), m.group(3).split("//")[0].strip())
        t = TARGET_RE.search(insn.args)
        if t:
            insn.target, insn.target_sym = int(t.group(1), 16), t.group(2)
        insns.append(insn)
    return insns


def load(vmlinux: str, arch: ArchSyntax, syms: dict[str, tuple[int, int]],
         name: str) -> Function:
    if name not in syms:
        raise Bad(f"stack-depth: no function {name} in {vmlinux}")
    fn = Function(name, entry=syms[name][0])
    for part in (name, f"{name}.cold"):
        if part in syms:
            for insn in disassemble(vmlinux, arch, *syms[part]):
                fn.insns[insn.addr] = insn
                fn.order.append(insn.addr)
    fn.order.sort()
    return fn


def _imm(text: str) -> int:
    value = int(text, 0)
    return value - (1 << 32) if value >= 1 << 31 else value


X86_SP = r"%[re]sp"
X86_FP = r"%[re]bp"


def step_x86(insn: Insn, sp: int, fp: int | None, word: int) -> tuple[int, int | None]:
    """(sp, fp) after insn; sp and fp are offsets from the entry SP (<= 0)."""
    op, args = insn.op, insn.args
    if op.startswith("push"):
        return sp - word, fp
    if op.startswith("pop"):
        if re.fullmatch(X86_FP, args):
            return sp + word, None
        return sp + word, fp
    if op == "leave":
        if fp is None:
            raise ValueError("leave without a known frame pointer")
        return fp + word, None
    m = re.fullmatch(rf"\$(-?0x[0-9a-f]+|-?\d+),({X86_SP})", args)
    if m and op.startswith(("sub", "add")):
        delta = _imm(m.group(1))
        return (sp - delta if op.startswith("sub") else sp + delta), fp
    if op.startswith("mov") and re.fullmatch(rf"{X86_SP},{X86_FP}", args):
        return sp, sp
    if op.startswith("mov") and re.fullmatch(rf"{X86_FP},{X86_SP}", args):
        if fp is None:
            raise ValueError("mov of an unknown frame pointer to the stack pointer")
        return fp, fp
    m = re.fullmatch(rf"(-?0x[0-9a-f]+)\(({X86_FP})\),({X86_SP})", args)
    if m and op.startswith("lea"):
        if fp is None:
            raise ValueError("lea from an unknown frame pointer")
        return fp + _imm(m.group(1)), fp
    if re.search(rf",{X86_SP}$", args) and not op.startswith(("cmp", "test")):
        raise ValueError(f"unhandled write to the stack pointer: {op} {args}")
    return sp, fp


def step_arm64(insn: Insn, sp: int, fp: int | None) -> tuple[int, int | None]:
    op, args = insn.op, insn.args
    m = re.search(r"\[sp, #(-?\d+)\]!$", args)        # pre-index writeback
    if m and op in ("stp", "str", "ldp", "ldr"):
        sp += int(m.group(1))
        return sp, fp
    m = re.search(r"\[sp\], #(-?\d+)$", args)          # post-index writeback
    if m and op in ("stp", "str", "ldp", "ldr"):
        return sp + int(m.group(1)), fp
    m = re.fullmatch(r"sp, sp, #(0x[0-9a-f]+|\d+)(?:, lsl #(\d+))?", args)
    if m and op in ("sub", "add"):
        delta = int(m.group(1), 0) << int(m.group(2) or 0)
        return (sp - delta if op == "sub" else sp + delta), fp
    if op == "mov" and args == "x29, sp":
        return sp, sp
    m = re.fullmatch(r"x29, sp, #(0x[0-9a-f]+|\d+)", args)
    if m and op == "add":
        return sp, sp + int(m.group(1), 0)
    if op == "mov" and args == "sp, x29":
        if fp is None:
            raise ValueError("mov sp, x29 with an unknown frame pointer")
        return fp, fp
    if re.match(r"sp, ", args) and op not in ("cmp", "cmn", "tst"):
        raise ValueError(f"unhandled write to the stack pointer: {op} {args}")
    return sp, fp


def ends_path(arch: str, insn: Insn, fn: Function) -> bool:
    op = insn.op
    if arch == "arm64":
        if op in ("ret", "br", "brk", "eret") or op.startswith("ret"):
            return True
        return op == "b" and (insn.target is None or insn.target not in fn.insns)
    if op.startswith(("ret", "ud2", "int3", "hlt")) or op.startswith("jmp") and "*" in insn.args:
        return True
    return op.startswith("jmp") and (insn.target is None or insn.target not in fn.insns)


def is_branch(arch: str, insn: Insn) -> tuple[bool, bool]:
    """(branches to insn.target, also falls through)."""
    op = insn.op
    if arch == "arm64":
        if op == "b":
            return True, False
        if op.startswith("b.") or op in ("cbz", "cbnz", "tbz", "tbnz"):
            return True, True
        return False, True
    if op.startswith("jmp"):
        return True, False
    if op.startswith("j"):
        return True, True
    return False, True


def is_call(arch: str, insn: Insn) -> bool:
    return insn.op in ("bl", "blr") if arch == "arm64" else insn.op.startswith("call")


def is_indirect(insn: Insn) -> bool:
    """A call through a register: arm64 blr, x86 call *reg or a retpoline
    thunk (__x86_indirect_thunk_REG)."""
    return insn.op == "blr" or "*" in insn.args or \
        insn.target_sym.startswith("__x86_indirect_thunk")


def walk(arch_name: str, fn: Function) -> dict[int, tuple[int, int | None]]:
    """Stack pointer (and frame pointer) offset before each reachable insn."""
    arch = ARCHES[arch_name]
    state: dict[int, tuple[int, int | None]] = {}
    index = {a: i for i, a in enumerate(fn.order)}
    work: list[tuple[int, int, int | None]] = [(fn.entry, 0, None)]
    tables: list[tuple[int, int | None]] = []    # state at indirect jumps
    while True:
        if not work and tables:
            # The targets of a jump table are the block starts no path
            # reached: each right after an instruction that ends a path.
            if len({t[0] for t in tables}) > 1:
                raise ValueError(f"{fn.name}: jump tables at different stack depths")
            sp, fp = tables.pop()
            tables.clear()
            for i, a in enumerate(fn.order[1:], 1):
                before = fn.insns[fn.order[i - 1]]
                if a not in state and (ends_path(arch_name, before, fn) or
                                       not is_branch(arch_name, before)[1]):
                    work.append((a, sp, fp))
        if not work:
            break
        addr, sp, fp = work.pop()
        while addr in fn.insns:
            if addr in state:
                if state[addr][0] != sp:
                    raise ValueError(f"{fn.name}: {addr:#x} reached with stack depths "
                                     f"{-state[addr][0]} and {-sp}")
                break
            state[addr] = (sp, fp)
            insn = fn.insns[addr]
            if arch_name == "arm64":
                sp, fp = step_arm64(insn, sp, fp)
            else:
                sp, fp = step_x86(insn, sp, fp, arch.word)
            if ends_path(arch_name, insn, fn):
                if insn.op == "br" or insn.op.startswith("jmp") and "*" in insn.args:
                    tables.append((sp, fp))     # a jump table (or a tail call)
                break
            jumps, falls = is_branch(arch_name, insn)
            if jumps and insn.target in fn.insns:
                work.append((insn.target, sp, fp))
            if not falls:
                break
            nxt = index[addr] + 1
            if nxt >= len(fn.order):
                break
            addr = fn.order[nxt]
    return state


SP_READ = {
    "arm64": re.compile(r"^x(?!29,)\d+, sp(, x\d+)?$"),    # not the frame record's x29
    "x86_64": re.compile(r"^%rsp,%r(?!bp)\w+$"),      # not the frame pointer's
    "i386": re.compile(r"^%esp,%e(?!bp)\w+$"),
}


def first_arg_address(arch_name: str, fn: Function,
                      state: dict[int, tuple[int, int | None]], callee: str) -> list[str]:
    """What fn loads into its first argument register before calling callee,
    as an offset from fn's entry stack pointer."""
    reg = {"arm64": "x0", "x86_64": "%rdi", "i386": "%eax"}[arch_name]
    found = []
    last: dict[str, int] = {}
    for addr in fn.order:
        if addr not in state:
            continue
        insn = fn.insns[addr]
        sp, fp = state[addr]
        if arch_name == "arm64":
            m = re.fullmatch(rf"{reg}, (sp|x29), #(0x[0-9a-f]+|\d+)", insn.args)
            if insn.op == "add" and m:
                base = sp if m.group(1) == "sp" else fp
                if base is not None:
                    last[reg] = base + int(m.group(2), 0)
        else:
            m = re.fullmatch(rf"(-?0x[0-9a-f]+)?\((%[re]sp|%[re]bp)\),{reg}", insn.args)
            if insn.op.startswith("lea") and m:
                base = sp if m.group(2).endswith("sp") else fp
                if base is not None:
                    last[reg] = base + _imm(m.group(1) or "0")
        if is_call(arch_name, insn) and insn.target_sym == callee and reg in last:
            found.append(f"{fn.name} passes entry SP {last[reg]:+d} to {callee} at {addr:#x}")
    return found


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("vmlinux")
    ap.add_argument("--arch", required=True, choices=sorted(ARCHES))
    ap.add_argument("--chain", required=True, help="F1,F2,...: each calls the next")
    ap.add_argument("--stack-base", type=int, default=0,
                    help="bytes between the top of the stack and F1's entry SP")
    ap.add_argument("--address-of", action="append", default=[], metavar="FUNC:CALLEE")
    args = ap.parse_args(argv)
    arch = ARCHES[args.arch]
    if not shutil.which(arch.objdump):
        print(f"stack-depth: {arch.objdump} not found", file=sys.stderr)
        return 2
    try:
        syms = symbols(args.vmlinux)
        chain = [load(args.vmlinux, arch, syms, n) for n in args.chain.split(",")]
        extra = [s.split(":", 1) for s in args.address_of]
        for pair in extra:
            if len(pair) != 2:
                raise Bad(f"stack-depth: --address-of wants FUNC:CALLEE, got {pair[0]!r}")
    except (Bad, subprocess.CalledProcessError, OSError) as exc:
        print(exc if isinstance(exc, Bad) else f"stack-depth: {exc}", file=sys.stderr)
        return 2
    try:
        depth = args.stack_base
        entered: dict[str, int] = {}     # depth below top at which chain members call
        print(f"{'function':40} {'frame':>6} {'below top':>10}")
        print(f"{'(top of stack to the first entry)':40} {'':>6} {depth:10d}")
        for fn, nxt in zip(chain, chain[1:]):
            state = walk(args.arch, fn)
            calls = [a for a in fn.order if a in state and is_call(args.arch, fn.insns[a])]
            for a in calls:
                entered.setdefault(fn.insns[a].target_sym,
                                   depth - state[a][0] + arch.word)
            how = "calls"
            at = sorted({-state[a][0] for a in calls if fn.insns[a].target_sym == nxt.name})
            if not at:      # through a function pointer (syscall table, fops, LKDTM's table)
                how = "calls through a pointer"
                at = sorted({-state[a][0] for a in calls if is_indirect(fn.insns[a])})
            if len(at) != 1:
                print(f"stack-depth: {fn.name} {how} {nxt.name} at depths {at or 'none'}",
                      file=sys.stderr)
                return 1
            frame = at[0] + arch.word
            depth += frame
            print(f"{fn.name:40} {frame:6d} {depth:10d}" +
                  ("  (indirect call)" if how != "calls" else ""))
        last = chain[-1]
        state = walk(args.arch, last)
        print(f"{last.name} (entry {depth} below top):")
        for addr in last.order:
            if addr not in state:
                continue
            insn = last.insns[addr]
            if SP_READ[args.arch].match(insn.args) and insn.op in ("mov", "movl", "movq",
                                                                   "sub", "add"):
                print(f"  {addr:#x} {insn.op} {insn.args}: sp = entry {state[addr][0]:+d}, "
                      f"{depth - state[addr][0]} below top")
            elif is_call(args.arch, insn) and insn.target_sym:
                print(f"  {addr:#x} call {insn.target_sym}: sp = entry {state[addr][0]:+d}")
        for func, callee in extra:
            fn = load(args.vmlinux, arch, syms, func)
            lines = first_arg_address(args.arch, fn, walk(args.arch, fn), callee)
            print("\n".join(lines) if lines else f"{func}: no address passed to {callee}")
            if func in entered:
                print(f"  {func} is entered {entered[func]} below top (called from the chain)")
    except ValueError as exc:
        print(f"stack-depth: {exc}", file=sys.stderr)
        return 1
    except Bad as exc:
        print(exc, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
