"""Mail renderings of a report the parser undoes as general rules:
quoted-printable bodies (qp_lines), "*bold*" stars (log_lines), and a
usercopy message printed apart from its BUG report (oops_parser).  The
real mails that show each are batch-3 fixtures of testdata/usercopy-heldout
(b3-*-quoted-printable*, b3-*-html-bold, b3-*-two-quotes, b3-*-lkft-*);
these tests pin the limits of each rule."""
from __future__ import annotations

from usercopy_lab.reports.log_lines import parse_line
from usercopy_lab.reports.oops_parser import iter_reports
from usercopy_lab.reports.qp_lines import QuotedPrintable, decode_escapes


def logical(lines: list[str]) -> list[str]:
    qp = QuotedPrintable()
    out = [got[1] for n, line in enumerate(lines, 1) if (got := qp.feed(n, line))]
    if (rest := qp.flush()) is not None:
        out.append(rest[1])
    return out


def test_soft_break_at_encoder_width_joins_and_turns_decoding_on():
    first = "> [85774.558604] usercopy: kernel memory exposure attempt detected from fff="
    assert len(first) == 76
    assert logical([first, "f9cba0bf75400 (kmalloc-512) (1024 bytes)", "len =3D 1024"]) == [
        first[:-1] + "f9cba0bf75400 (kmalloc-512) (1024 bytes)", "len = 1024"]


def test_escaped_utf8_turns_decoding_on_and_joins_inside_an_escape():
    assert logical(["[=C2=A0=C2=A00.1] G=C2=A0=C2=", "=A0W 4.7"]) == [
        "[\xa0\xa00.1] G\xa0\xa0W 4.7"]


def test_console_lines_with_equals_are_left_alone():
    lines = ["[    1.000000] Kernel command line: console=ttyS0 root=",
             "RAX=00000000000000FF RBX=3D", "[    2.000000] x23: 0000 pstate=20",
             "[    3.000000] bootconsole [uart0] enabled, a very long line of seventy=",
             "next line"]
    assert logical(lines) == lines


def test_decode_escapes_keeps_bad_utf8_visible():
    assert decode_escapes("a=FFb") == "a\ufffdb"


def test_bold_stars_are_dropped_but_not_c_or_page_table_stars():
    assert parse_line("from ffff8802 *(kmalloc-64) (192 bytes*)").text == \
        "from ffff8802 (kmalloc-64) (192 bytes)"
    for text in ("*pdpt = 0000000001ccc001 *pde = 0000000000000000", "x = *(u32 *)p;",
                 "a ** b ** c"):
        assert parse_line(text).text == text


MESSAGE = ["usercopy: Kernel memory exposure attempt detected from SLUB object",
           "'kmalloc-64' (offset 0, size 80)!"]
BUG = ["[   24.0] ------------[ cut here ]------------",
       "[   24.1] kernel BUG at mm/usercopy.c:102!",
       "[   24.2] Internal error: Oops - BUG: 00000000f2000800 [#1] SMP",
       "[   24.3] Call trace:", "[   24.4]  usercopy_abort+0x0/0x10",
       "[   24.5]  __check_object_size+0x0/0x10", "[   24.6]  my_ioctl+0x0/0x10"]


def test_unstamped_message_and_stamped_bug_are_one_report():
    reps = [r for r in iter_reports(MESSAGE + [".."] + BUG) if r.kind.startswith("usercopy")]
    assert len(reps) == 1
    assert (reps[0].cache, reps[0].guilty_frame, reps[0].truncated) == ("kmalloc-64", "my_ioctl", False)


def test_message_and_bug_one_quote_depth_apart_are_one_report():
    lines = ["> " + MESSAGE[0], "> " + MESSAGE[1], "> prose", ">>"] + [">> " + b[10:] for b in BUG]
    reps = [r for r in iter_reports(lines) if r.kind.startswith("usercopy")]
    assert [(r.cache, r.guilty_frame) for r in reps] == [("kmalloc-64", "my_ioctl")]


def test_another_report_in_between_keeps_them_apart():
    other = ["[   23.0] WARNING: CPU: 0 PID: 1 at fs/foo.c:1 foo+0x0/0x10",
             "[   23.1] Call trace:", "[   23.2]  foo+0x0/0x10", "[   23.3] ---[ end trace 0 ]---"]
    reps = list(iter_reports(MESSAGE + other + BUG))
    assert reps[0].kind.startswith("usercopy") and not reps[0].guilty_frame


def test_two_quote_depths_apart_are_not_joined():
    lines = ["> " + MESSAGE[0], "> " + MESSAGE[1]] + [">>> " + b[10:] for b in BUG]
    reps = [r for r in iter_reports(lines) if r.kind.startswith("usercopy")]
    assert not reps[0].guilty_frame


def test_a_line_ending_in_equals_at_the_encoder_width_is_the_accepted_risk():
    # the limit of the rule, pinned: 76 characters ending in "word=" with no
    # other sign is read as a soft break (what the RHEL mail needs)
    line = "[    3.000000] a kernel line that is exactly seventy-six characters, params="
    assert len(line) == 76
    assert logical([line, "x"]) == [line[:-1] + "x"]


def test_soft_break_after_a_space_at_the_full_width():
    # Bert Karwatzki's 2024 LKML report (batch 5): the encoder broke right
    # after "SLUB object " at 76 characters, before any other QP sign
    first = "[T34926] usercopy: Kernel memory overwrite attempt detected to SLUB object ="
    assert len(first) == 76
    assert logical([first, "'task_struct' (offset 3072, size 160)!"]) == [
        first[:-1] + "'task_struct' (offset 3072, size 160)!"]
    # narrower, or without the space: not on its own
    assert logical(["short line that ends in an equals sign =", "x"]) == [
        "short line that ends in an equals sign =", "x"]


def test_message_by_the_task_and_bug_by_the_cpu_are_one_report():
    # riscv64 6.5 (a kdump blog post, batch 5): PRINTK_CALLER says T929 for
    # the message and C1 for the BUG that die() prints from the trap
    lines = ["[ 1558.887710][  T929] usercopy: Kernel memory exposure attempt detected from SLUB "
             "object 'kmem_cache_node' (offset 0, size 4096)!",
             "[ 1558.894365][    C1] ------------[ cut here ]------------",
             "[ 1558.894460][    C1] kernel BUG at mm/usercopy.c:102!",
             "[ 1558.894738][    C1] Kernel BUG [#1]",
             "[ 1558.897545][    C1] [<ffffffff80954c82>] usercopy_abort+0x78/0x7a",
             "[ 1558.897676][    C1] [<ffffffff8028f8ce>] __check_heap_object+0x120/0x156",
             "[ 1558.897700][    C1] [<ffffffff802bd238>] __check_object_size+0x30e/0x3ca",
             "[ 1558.897717][    C1] [<ffffffff8000c44c>] copy_oldmem_page+0x5e/0x9a",
             "[ 1558.897898][    C1] [<ffffffff80003c14>] ret_from_exception+0x0/0x64",
             "[ 1558.912429][    C1] ---[ end trace 0000000000000000 ]---"]
    reps = [r for r in iter_reports(lines) if r.kind.startswith("usercopy")]
    assert [(r.cache, r.guilty_frame) for r in reps] == [("kmem_cache_node", "copy_oldmem_page")]
