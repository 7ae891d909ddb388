"""scripts/stack-depth.py on real objdump excerpts (testdata/stack-depth/):
the stack pointer it tracks through push/sub/frame-pointer moves (i386)
and stp/ldp writeback (arm64), across branches, a jump table and a .cold
part, gives the offsets the guests of those kernels reported."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
DATA = HERE / "testdata" / "stack-depth"
_spec = importlib.util.spec_from_file_location("stack_depth",
                                               HERE.parents[1] / "scripts" / "stack-depth.py")
sd = importlib.util.module_from_spec(_spec)
sys.modules["stack_depth"] = sd      # dataclasses look their module up
_spec.loader.exec_module(sd)  # type: ignore[union-attr]


def function(name: str, arch: str) -> "sd.Function":
    insns = sd.parse_objdump((DATA / f"{arch}-{name}.txt").read_text())
    fn = sd.Function(name, entry=insns[0].addr)
    for insn in insns:
        fn.insns[insn.addr] = insn
        fn.order.append(insn.addr)
    fn.order.sort()
    return fn


def sp_reads(arch: str, fn) -> list[int]:
    state = sd.walk(arch, fn)
    return [state[a][0] for a in fn.order if a in state and
            sd.SP_READ[arch].match(fn.insns[a].args) and
            fn.insns[a].op in ("mov", "sub")]


def test_i386_stack_frame_offset_is_the_guests():
    # Callee: push %ebp; mov %esp,%ebp; add $-128,%esp; lea -0x60(%ebp),%eax.
    callee = function("do_usercopy_stack_callee", "i386")
    [passed] = sd.first_arg_address("i386", callee, sd.walk("i386", callee), "trick_compiler")
    assert "entry SP -100 " in passed
    # __check_object_size reads %esp in its .cold part, 32 below its entry:
    # both are entered from the same depth, so the offset is 100 - 32.
    assert sp_reads("i386", function("__check_object_size", "i386")) == [-32]
    assert 100 - 32 == 68        # USERCOPY_STACK_FRAME_TO on that i386 guest


def test_arm64_stack_frame_offset_is_the_guests():
    check = function("__check_object_size", "arm64")
    # The early `ret` path has no frame; the stack pointer is read by
    # `sub x3, sp, x19` under the 64-byte frame record.
    assert sp_reads("arm64", check) == [-64]
    assert 96 - 64 == 32         # callee's buf + 32 at entry -96 (stp #-144; add x0, sp, #0x30)


def test_arm64_jump_table_targets_get_the_depth_of_the_br():
    fn = function("el0t_64_sync_handler", "arm64")
    state = sd.walk("arm64", fn)
    calls = {fn.insns[a].target_sym: state[a][0] for a in fn.order
             if a in state and sd.is_call("arm64", fn.insns[a])}
    assert calls["el0_svc"] == -16       # reached only through the `br x0` table
    assert calls["el0_inv"] == -16


def test_a_path_with_another_depth_is_an_error():
    fn = function("do_usercopy_stack_callee", "i386")
    # A branch from after the prologue back to the entry: two depths.
    ret = next(a for a in fn.order if fn.insns[a].op.startswith("ret"))
    fn.insns[ret] = sd.Insn(ret, "jmp", f"{fn.entry:x} <x>", fn.entry, "x")
    fn.insns[ret - 2] = sd.Insn(ret - 2, "push", "%ebp")
    fn.order.append(ret - 2)
    fn.order.sort()
    with pytest.raises(ValueError, match="reached with stack depths"):
        sd.walk("i386", fn)


def test_an_unknown_write_to_the_stack_pointer_is_an_error():
    with pytest.raises(ValueError, match="unhandled write"):
        sd.step_x86(sd.Insn(0, "and", "$0xfffffff0,%esp"), 0, None, 4)
    with pytest.raises(ValueError, match="unhandled write"):
        sd.step_arm64(sd.Insn(0, "and", "sp, x0, #0xfffffffffffffff0"), 0, None)
