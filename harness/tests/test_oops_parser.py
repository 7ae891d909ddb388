"""oops_parser over our own captured 6.1 consoles and real-world-shaped logs."""
from pathlib import Path

import pytest

from usercopy_lab.reports.oops_parser import (MAX_LINE, LogFormatError, ScanStats, is_plumbing,
                                              iter_file, iter_reports, parse_file)

DATA = Path(__file__).parent / "testdata"
CONSOLE = DATA / "console"
TRIAGE = DATA / "triage"


def one(path: Path):
    reports = parse_file(path)
    assert len(reports) == 1, [r.title for r in reports]
    return reports[0]


# -- our own kernel (6.1.192, LKDTM), one per trigger ---------------------
STACK = "process stack"
UC = [  # trigger, direction, object, cache, offset, size, guilty
    ("USERCOPY_SLAB_SIZE_TO", "exposure", "SLUB object", "kmalloc-1k", 16, 1024, "do_usercopy_slab_size"),
    ("USERCOPY_SLAB_SIZE_FROM", "overwrite", "SLUB object", "kmalloc-1k", 16, 1024, "do_usercopy_slab_size"),
    ("USERCOPY_SLAB_WHITELIST_TO", "exposure", "SLUB object", "lkdtm-usercopy", 255, 64, "do_usercopy_slab_whitelist"),
    ("USERCOPY_SLAB_WHITELIST_FROM", "overwrite", "SLUB object", "lkdtm-usercopy", 255, 64, "do_usercopy_slab_whitelist"),
    ("USERCOPY_STACK_FRAME_TO", "exposure", STACK, None, 64, 32, "do_usercopy_stack"),
    ("USERCOPY_STACK_FRAME_FROM", "overwrite", STACK, None, 64, 32, "do_usercopy_stack"),
    ("USERCOPY_STACK_BEYOND", "exposure", STACK, None, 2**64 - 568, 32, "do_usercopy_stack"),
    ("USERCOPY_KERNEL", "exposure", "kernel text", None, 661152, 4096, "lkdtm_USERCOPY_KERNEL"),
    ("USERCOPY_FOLIO", "exposure", "page alloc", None, 6144, 4096, "do_usercopy_page_span"),
]


@pytest.mark.parametrize("trigger,direction,obj,cache,offset,size,guilty", UC)
def test_lab_usercopy_trigger(trigger, direction, obj, cache, offset, size, guilty):
    r = one(CONSOLE / f"{trigger}.log")
    assert (r.kind, r.direction, r.object, r.cache, r.offset, r.size) == \
        ("usercopy_abort", direction, obj, cache, offset, size)
    assert r.guilty_frame == guilty
    assert r.bug_site == "mm/usercopy.c:101"
    assert r.rip == "usercopy_abort"
    assert r.kernel == "6.1.192 #1"
    assert not r.truncated
    assert "direct_entry" in r.frames and not any(f.startswith("?") for f in r.frames)
    assert r.lines[0].startswith("usercopy: Kernel memory")
    assert r.title.startswith(f"usercopy: {direction} {'from' if direction == 'exposure' else 'to'} {obj}")


def test_same_bug_other_length_same_signature():
    a = one(CONSOLE / "USERCOPY_STACK_FRAME_TO.log")
    b = one(CONSOLE / "USERCOPY_STACK_BEYOND.log")
    assert a.offset != b.offset and a.signature == b.signature
    c = one(CONSOLE / "USERCOPY_STACK_FRAME_FROM.log")
    assert c.signature != a.signature


def test_lkdtm_address_before_the_report_is_kept():
    [rep] = parse_file(CONSOLE / "USERCOPY_KERNEL.log")
    assert rep.lkdtm_address == 0xffffffff810a16a0
    [rep] = parse_file(CONSOLE / "USERCOPY_SLAB_WHITELIST_TO.log")
    assert rep.lkdtm_address is None


def test_lab_vmalloc_and_unknown_trigger_have_no_report():
    assert parse_file(CONSOLE / "USERCOPY_VMALLOC.log") == []
    assert parse_file(CONSOLE / "NO_SUCH_TRIGGER.log") == []


def test_lab_truncated_mid_trace():
    r = one(CONSOLE / "truncated-USERCOPY_SLAB_SIZE_TO.log")
    assert r.truncated
    assert r.frames == ["__check_heap_object", "__check_object_size"]
    assert r.guilty_frame is None
    assert (r.cache, r.offset, r.size) == ("kmalloc-1k", 16, 1024)


def test_lab_two_reports():
    w, u = parse_file(CONSOLE / "two-reports-WARNING-then-USERCOPY_SLAB_WHITELIST_FROM.log")
    assert (w.kind, w.title, w.bug_site) == ("warning", "WARNING in lkdtm_WARNING", "drivers/misc/lkdtm/bugs.c:85")
    assert not w.truncated and w.end_line < u.line
    assert (u.kind, u.direction, u.cache, u.offset) == ("usercopy_abort", "overwrite", "lkdtm-usercopy", 255)


def test_lab_panic():
    r = one(CONSOLE / "PANIC.log")
    assert (r.kind, r.title, r.guilty_frame) == ("panic", "kernel panic: dumptest", "lkdtm_PANIC")
    assert not r.truncated  # trace ended with </TASK>


def test_lab_generic_bug_and_exception():
    b = one(CONSOLE / "BUG.log")
    assert (b.kind, b.rip, b.title) == ("bug", "lkdtm_BUG", "kernel BUG at drivers/misc/lkdtm/bugs.c:78 in lkdtm_BUG")
    e = one(CONSOLE / "EXCEPTION.log")
    assert (e.kind, e.title) == ("oops", "BUG: kernel NULL pointer dereference in lkdtm_EXCEPTION")


# -- real-world shaped logs --------------------------------------------------
@pytest.mark.parametrize("name", ["rds_seed011_quoted.log", "rds_seed011_syslog.log"])
def test_seed_011_rds(name):
    r = one(TRIAGE / name)
    # no message line; put_cmsg (net/core's control-message API) copies to
    # the user only: the direction is inferred, and it is still the culprit
    assert (r.kind, r.direction, r.direction_source, r.guilty_frame) == (
        "usercopy_warn", "exposure", "inferred", "put_cmsg")
    assert r.bug_site == "mm/usercopy.c:81"
    assert r.frames[:4] == ["__check_heap_object", "__check_object_size", "put_cmsg", "rds_recvmsg"]
    assert "__handle_mm_fault" not in r.frames       # '? ' frame dropped
    assert r.truncated                               # the quote ends without an end marker
    assert r.title == "usercopy: exposure in put_cmsg"


def test_usercopy_warn_with_message():
    r = one(TRIAGE / "usercopy_warn_4_19_full.log")
    assert (r.kind, r.object, r.cache, r.offset, r.size) == ("usercopy_warn", "SLAB object", "sctp_sock", 1440, 4)
    assert (r.guilty_frame, r.kernel, r.truncated) == ("sctp_getsockopt", "4.19.0-6-amd64 #1", False)
    assert r.line == 2 and r.title == "usercopy: exposure from SLAB object 'sctp_sock' in sctp_getsockopt"


def test_dmesg_T_stack_overwrite():
    r = one(TRIAGE / "dmesg_T_stack_overwrite.log")
    assert (r.kind, r.direction, r.object, r.offset, r.size) == ("usercopy_abort", "overwrite", STACK, 4088, 16)
    assert r.guilty_frame == "foo_dev_ioctl"          # __check_object_size.cold skipped
    assert r.kernel == "6.1.0-13-amd64 #1" and not r.truncated
    assert "__die_body" not in r.frames and r.frames[0] == "__check_object_size"


def test_journalctl_two_same_signature():
    a, b = parse_file(TRIAGE / "journalctl_slub_kmalloc.log")
    assert (a.size, b.size) == (80, 96) and a.signature == b.signature
    # simple_read_from_buffer is fs/libfs.c's copy wrapper: the module
    # that handed it the sizes is the guilty frame
    assert a.guilty_frame == "dumpinfo_read" and "simple_read_from_buffer" in a.frames


def test_legacy_4_8():
    r = one(TRIAGE / "legacy_4_8_usercopy.log")
    assert (r.kind, r.direction, r.cache, r.size, r.offset) == ("usercopy_legacy", "exposure", "kmalloc-16", 17, None)
    assert (r.rip, r.guilty_frame, r.kernel) == ("__check_object_size", "sysctl_getname", "4.8.0-rc2+ #21")
    assert not r.truncated and "copy_page_to_iter" not in r.frames


def test_kasan_with_caller_ids():
    """The blamed frame is syzkaller's: its skip list drops every frame
    whose name contains an allocator's ("kmalloc"), so a KUnit test named
    kmalloc_oob_right is blamed on its runner."""
    r = one(TRIAGE / "kasan_caller_id.log")
    assert (r.kind, r.title, r.cache, r.size) == ("kasan", "KASAN: slab-out-of-bounds in kunit_try_run_case", "kmalloc-128", 1)
    assert r.syz_title == "KASAN: slab-out-of-bounds Write in kunit_try_run_case"
    assert not r.truncated and r.lines[-1].startswith("=====")
    assert "kasan_save_stack" not in r.frames         # alloc stack is not the trace


def test_gpf():
    r = one(TRIAGE / "gpf_kasan_nullptr.log")
    assert (r.kind, r.title, r.kernel) == ("oops", "general protection fault in nfc_llcp_sock_unlink", "6.1.0-rc5-syzkaller #0")


def test_oops_followed_by_panic_is_one_report():
    r = one(TRIAGE / "null_deref_then_panic.log")
    assert (r.kind, r.title) == ("oops", "BUG: kernel NULL pointer dereference in widget_probe")
    assert r.lines[-1].startswith("---[ end Kernel panic") and not r.truncated


def test_standalone_panic():
    r = one(TRIAGE / "panic_no_rootfs.log")
    assert r.title == "kernel panic: VFS: Unable to mount root fs on unknown-block(0,0)"
    assert r.guilty_frame == "mount_block_root"


def test_warning_crlf_ansi_interleaved():
    r = one(TRIAGE / "warning_crlf_ansi_interleaved.log")
    assert r.title == "WARNING in drm_crtc_vblank_helper_get_vblank_timestamp_internal"
    assert r.frames[0] == "drm_get_last_vbltimestamp" and r.frames[-1] == "ret_from_fork"
    assert not r.truncated and not any("\x1b" in x or "\r" in x for x in r.lines)


def test_three_reports_cut_by_each_other():
    a, b, c = parse_file(TRIAGE / "two_reports_first_cut.log")
    assert a.truncated and a.object == "kernel text" and a.end_line == 10
    assert not b.truncated and b.object == "vmalloc 'no area'" and b.cache is None
    assert c.truncated and (c.object, c.cache, c.direction) == ("SLUB object in left red zone", "kmalloc-32", "overwrite")


@pytest.mark.parametrize("path", sorted((TRIAGE / "negative").iterdir()))
def test_negative_corpus_yields_nothing(path):
    assert parse_file(path) == []


# -- streaming robustness ------------------------------------------------------
def test_iter_reports_matches_parse_file():
    path = TRIAGE / "journalctl_slub_kmalloc.log"
    with open(path) as f:
        via_lines = list(iter_reports(f, str(path)))
    assert [r.to_json() for r in via_lines] == [r.to_json() for r in parse_file(path)]


def test_chunk_boundaries_do_not_matter(monkeypatch):
    import usercopy_lab.reports.oops_parser as op
    want = [r.to_json() for r in parse_file(CONSOLE / "two-reports-WARNING-then-USERCOPY_SLAB_WHITELIST_FROM.log")]
    for chunk in (7, 100, 4096):
        monkeypatch.setattr(op, "CHUNK", chunk)
        got = [r.to_json() for r in parse_file(CONSOLE / "two-reports-WARNING-then-USERCOPY_SLAB_WHITELIST_FROM.log")]
        assert got == want


def test_empty_and_binary(tmp_path):
    assert parse_file(TRIAGE / "garbage" / "empty.log") == []
    with pytest.raises(LogFormatError):
        parse_file(TRIAGE / "garbage" / "binary.bin")


def test_huge_line_is_capped_and_counted(tmp_path):
    p = tmp_path / "huge.log"
    body = (TRIAGE / "lab61_serial_slab_whitelist.log").read_bytes()
    with open(p, "wb") as f:
        f.write(b"x" * (3 * MAX_LINE + 5) + b"\n")
        f.write(body)
        f.write(b"y" * (2 * MAX_LINE))            # unterminated at EOF
    stats = ScanStats()
    (r,) = list(iter_file(p, stats))
    assert stats.long_lines == 2 and stats.first_long_line == 1
    assert r.line == 1 + 10 and r.cache == "lkdtm-usercopy"


def test_undecodable_bytes(tmp_path):
    p = tmp_path / "bad.log"
    p.write_bytes(b"\xff\xfe junk \xc3\x28\n" + (TRIAGE / "legacy_4_8_usercopy.log").read_bytes())
    (r,) = parse_file(p)
    assert r.kind == "usercopy_legacy" and r.line == 2


def test_gzip_log(tmp_path):
    import gzip
    p = tmp_path / "dmesg.log.gz"
    p.write_bytes(gzip.compress((TRIAGE / "kasan_caller_id.log").read_bytes()))
    (r,) = parse_file(p)
    assert r.kind == "kasan"


@pytest.mark.parametrize("func,plumbing", [
    ("__check_object_size", True), ("usercopy_abort", True), ("_copy_to_user", True),
    ("copyout", True), ("check_heap_object", True), ("put_cmsg", False),
    ("do_usercopy_slab_whitelist", False), ("sg_io", False)])
def test_plumbing(func, plumbing):
    assert is_plumbing(func) == plumbing


@pytest.mark.parametrize("frames,direction", [
    # the direction spec (docs/triage.md, "Direction"): copy primitives below
    # the checks, exactly one direction
    (["__check_object_size", "_copy_to_user", "foo_ioctl"], "exposure"),
    (["check_object_size", "copy_from_user", "___sys_sendmsg"], "overwrite"),
    (["__check_object_size", "_copy_to_iter", "copy_page_to_iter", "filemap_read"], "exposure"),
    (["__check_object_size", "copy_page_from_iter", "generic_perform_write"], "overwrite"),
    (["__check_object_size", "memdup_user", "foo_ioctl"], "overwrite"),
    # both directions named: none
    (["__check_object_size", "_copy_from_user", "foo", "copy_to_user", "bar"], None),
    # put_cmsg (and its compat twin) copies a cmsg to the user only
    (["__check_heap_object", "__check_object_size", "put_cmsg", "rds_recvmsg"], "exposure"),
    (["__check_object_size", "put_cmsg_compat", "scm_recv"], "exposure"),
    # a helper that is not a primitive: none (net/core's simple_copy_to_iter)
    (["__check_object_size", "simple_copy_to_iter", "__skb_datagram_iter"], None),
    # __copy_tofrom_user (powerpc) names both ways: none
    (["__check_object_size", "__copy_tofrom_user", "foo"], None),
    # above the checks: the reporting path, not looked at
    (["copy_to_user", "usercopy_abort", "__check_object_size", "foo"], None),
    ([], None)])
def test_infer_direction(frames, direction):
    from usercopy_lab.reports.report_analysis import _infer_direction
    assert _infer_direction(frames) == direction


@pytest.mark.parametrize("line,func", [
    # the crash utility's bt (a RHEL arm64 vmcore, linux-raid 2025; batch 5)
    ("#15 [ffff800009d4fab0] simple_copy_to_iter at ffffdf7f6c3a93ec", "simple_copy_to_iter"),
    ("  #9 [ffff800009d4f870] el1_dbg at ffffdf7f6c5b60b0", "el1_dbg"),
    ("#21 [ffff800009d4fd10] nvmet_tcp_io_work at ffffdf7f16412248 [nvmet_tcp]", "nvmet_tcp_io_work"),
])
def test_crash_utility_frames(line, func):
    from usercopy_lab.reports.frames import parse_frame
    f = parse_frame(line)
    assert f is not None and (f.func, f.reliable) == (func, True)


def test_bare_function_names_after_a_heading_are_frames():
    """A trace abridged by hand to function names (an Aspeed commit, a fuse
    patch of batch 5); not when the trace has printed frames."""
    from usercopy_lab.reports.report_analysis import main_frames
    lines = ["kernel BUG at mm/usercopy.c!", "Call trace:", " usercopy_abort", " __check_heap_object",
             " __check_object_size", " copy_header_to_ring          fs/fuse/dev_uring.c:618",
             " ...", " entry_SYSCALL_64_after_hwframe", "", "Prose follows."]
    assert [f.func for f in main_frames(lines)] == [
        "usercopy_abort", "__check_heap_object", "__check_object_size", "copy_header_to_ring",
        "entry_SYSCALL_64_after_hwframe"]
    printed = ["Call Trace:", " __check_object_size+0x1/0x2", " Serialize", " foo_bar"]
    assert [f.func for f in main_frames(printed)] == ["__check_object_size"]


def test_all_guessed_frames_give_the_culprit_when_nothing_else_does():
    """x86 with every frame a "? " guess (int80 emulation, batch 5)."""
    lines = ["usercopy: Kernel memory overwrite attempt detected to SLUB object 'task_struct' "
             "(offset 3072, size 160)!", "kernel BUG at mm/usercopy.c:102!",
             "RIP: 0010:usercopy_abort+0x73/0x75", "Call Trace:", " <TASK>",
             " ? __die+0x51/0x92", " ? usercopy_abort+0x73/0x75", " ? __check_heap_object+0x7d/0xa0",
             " ? __check_object_size+0x1f9/0x210", " ? copy_from_buffer+0x40/0x60",
             " ? copy_uabi_to_xstate+0xe1/0x1e0", " </TASK>", "---[ end trace 0000000000000000 ]---"]
    (r,) = [r for r in iter_reports(lines) if r.kind.startswith("usercopy")]
    assert (r.frames, r.guilty_frame, r.truncated) == ([], "copy_from_buffer", False)


def test_every_frame_has_its_address():
    """Report.frame_addresses (for --vmlinux) runs parallel to frames."""
    logs = sorted(DATA.rglob("*.log"))
    assert len(logs) > 50
    for log in logs:
        try:
            reports = parse_file(log)
        except LogFormatError:
            continue
        for rep in reports:
            assert len(rep.frame_addresses) == len(rep.frames), (log, rep.line)
            for name, addr in zip(rep.frames, rep.frame_addresses):
                assert addr.symbol.startswith(name), (log, rep.line, name, addr)


# -- 2026-12-05 (s28): rules from the held-out misses -------------------------
def _reports(text: str):
    import io
    from usercopy_lab.reports.oops_parser import iter_stream
    return list(iter_stream(io.BytesIO(text.encode()), "<test>"))


def test_pc_line_in_usercopy_abort_opens_a_report_only_where_none_is_open():
    # the lab's own 6.1 console: x86 prints the RIP block again after the
    # end marker (oops_end's summary); it stays a line of the report
    reps = [r for r in parse_file(CONSOLE / "USERCOPY_SLAB_SIZE_TO.log")]
    assert len(reps) == 1 and reps[0].kind == "usercopy_abort"
    # an excerpt that starts at the RIP line (Laura Nao's KernelCI reply on
    # LKML/regressions, July 2024; held-out b5-x86_64-next-kernelci-...):
    # a usercopy BUG without its message
    text = ("> [    5.944268] RIP: 0010:usercopy_abort+0x74/0x76\n"
            "> [    5.944290] Call Trace:\n"
            "> [    5.944293]  <TASK>\n"
            "> [    5.944330]  __check_heap_object+0xcb/0x110\n"
            "> [    5.944334]  __check_object_size+0x181/0x26d\n"
            "> [    5.944336]  copy_from_buffer+0x43/0x66\n"
            "> [    5.944340]  copy_uabi_to_xstate+0x113/0x194\n")
    (r,) = _reports(text)
    assert (r.kind, r.guilty_frame, r.truncated, r.object) == (
        "usercopy_abort", "copy_from_buffer", True, None)


def test_pc_line_then_the_message_of_another_task_are_one_report():
    # a reply quoting the LKP i386 report (netdev/linux-nvme, June 2024):
    # "[ T189] EIP: usercopy_abort", then T194's message, broken by a mailer
    text = ("> > > [ 13.498663][ T189] EIP: usercopy_abort (mm/usercopy.c:102 (discriminator 12))\n"
            "> > > [   13.499424][  T194] usercopy: Kernel memory exposure attempt detected from kmap (offset 0, size\n"
            "> > 8192)!\n"
            "> > \n"
            "> > Hmm, not sure I understand exactly why changing kmap() to\n")
    (r,) = _reports(text)
    assert (r.kind, r.object, r.offset, r.size, r.direction) == (
        "usercopy_abort", "kmap", 0, 8192, "exposure")


def test_a_space_inside_a_fixed_word_of_the_message():
    # "(off set 0, size 6)": a quoter's stray space (linux-scsi, 2022;
    # held-out b5-x86_64-5.18-scsi-...); "vmalloc 'n o area'": an 80-column
    # console copy broken inside the word, joined with a space (linux-s390,
    # bugzilla 216073)
    (r,) = _reports("usercopy: Kernel memory overwrite attempt detected to SLUB object "
                    "'kmalloc-8' (off set 0, size 6)!\n")
    assert (r.object, r.cache, r.offset, r.size) == ("SLUB object", "kmalloc-8", 0, 6)
    (r,) = _reports("usercopy: Kernel memory exposure attempt detected from vmalloc 'n o area' "
                    "(offset 0, size 1)!\n")
    assert (r.object, r.offset, r.size) == ("vmalloc 'no area'", 0, 1)


def test_a_header_in_a_title_field_is_a_mention():
    # the kernel bugzilla's mail: "Summary: [s390x] kernel BUG at mm/usercopy.c:101! ..."
    assert _reports(">            Summary: [s390x] kernel BUG at mm/usercopy.c:101! usercopy:\n") == []
    assert _reports("Subject: Re: [Bug 216073] New: [s390x] kernel BUG at mm/usercopy.c:101!\n") == []


def test_rip_summary_after_a_line_that_closed_the_report_opens_nothing(tmp_path):
    # an unrelated line between "---[ end trace" and x86's RIP summary closes
    # the report; the summary is still not a report of its own
    lines = (CONSOLE / "USERCOPY_SLAB_SIZE_TO.log").read_text().splitlines(True)
    end = next(i for i, l in enumerate(lines) if "---[ end trace" in l)
    moved = lines[:end + 1] + ["[    0.667900] some driver: unrelated message\n"] + lines[end + 1:]
    p = tmp_path / "c.log"
    p.write_text("".join(moved))
    assert len(parse_file(p)) == 1
