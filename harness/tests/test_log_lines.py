"""log_lines.normalize: every real prefix form comes down to the message."""
import pytest

from usercopy_lab.log_lines import normalize, parse_line, program_lines

MSG = "usercopy: Kernel memory exposure attempt detected from SLUB object 'x' (offset 1, size 2)!"


@pytest.mark.parametrize("raw", [
    MSG,
    f"[   12.345678] {MSG}\n",
    f"[   12.345678] {MSG}\r\n",
    f"[   12.345678][  T123] {MSG}",
    f"[    5.112233][    C1] {MSG}",
    f"<4>[   12.345678] {MSG}",
    f"<0>{MSG}",
    f"[Thu Dec  3 10:00:01 2020] {MSG}",
    f"Aug 23 10:00:01 host kernel: {MSG}",
    f"Aug  3 10:00:01 host kernel: [ 1000.000001] {MSG}",
    f"Dec 03 12:05:01 buildbox kernel: {MSG}",
    f"2019-08-23T10:00:01+0000 host kernel: {MSG}",
    f"2019-08-23T10:00:01.123456+02:00 host kernel: {MSG}",
    f"kernel: {MSG}",
    f"4,1234,12345678,-;{MSG}",
    f"2020-12-03T10:00:01,123456+00:00 {MSG}",
    f"\x1b[1;31m[   12.345678] {MSG}\x1b[0m\r\n",
    f"progress 50%\r[   12.345678] {MSG}\r\r\n",
])
def test_prefixes_are_stripped(raw):
    assert normalize(raw) == MSG


def test_frame_indentation_is_kept():
    assert normalize("[    0.528611]  __check_heap_object+0xe4/0x110") == " __check_heap_object+0xe4/0x110"
    assert normalize("Aug 23 10:00:01 h kernel:  <TASK>") == " <TASK>"


@pytest.mark.parametrize("raw", [
    "Aug 23 10:00:02 host myapp[123]: WARNING: disk almost full",
    "/ # echo USERCOPY_KERNEL > /sys/kernel/debug/provoke-crash/DIRECT",
    "USERCOPY-LAB-START trigger=PANIC",
    "",
])
def test_non_kernel_lines_pass_through(raw):
    assert normalize(raw + "\n") == raw


def test_only_one_space_after_stamp_removed():
    assert normalize("[    1.0]   x") == "  x"


def test_iso_stamp_is_not_a_syslog_program():
    """dmesg --time-format=iso: the message's first words look like a
    syslog host and program ("WARNING: CPU:"); found by
    test_parser_properties."""
    ll = parse_line("2026-12-03T10:00:35,000035+00:00 WARNING: CPU: 1 PID: 9 at a.c:1 f+0x1/0x2")
    assert (ll.text, ll.stamped, ll.foreign) == ("WARNING: CPU: 1 PID: 9 at a.c:1 f+0x1/0x2", True, False)
    other = parse_line("Aug 23 10:00:02 host myapp[123]: WARNING: disk almost full")
    assert other.foreign and not other.stamped


@pytest.mark.parametrize("raw,text,caller", [
    ("syzkaller login: [   55.288565] usercopy: x", "usercopy: x", None),
    ("** 3 printk messages dropped ** [   55.290728] kernel BUG at mm/usercopy.c:84!",
     "kernel BUG at mm/usercopy.c:84!", None),
    ("Segmentation fault[   12.345678][  T42] BUG: y", "BUG: y", "T42"),
    ("> > [   1.000000]  func+0x1/0x2", " func+0x1/0x2", None),
    ("\x00\x00[   1.000000] BUG: z\x00", "BUG: z", None),
])
def test_glue_quotes_and_junk_are_stripped(raw, text, caller):
    ll = parse_line(raw)
    assert (ll.text, ll.stamped, ll.caller) == (text, True, caller)


# -- program_lines: a guest program's lines with printk records cut out --------

REC = "[    2.108188] clocksource: Long readout interval, skipping watchdog check"


@pytest.mark.parametrize("raw,program,kernel", [
    # the record before the program's newline (as in testdata/interleaved)
    ([f"prog: size=32{REC}\r", "\r", "prog: next"],
     ["prog: size=32", "prog: next"], [REC]),
    # the record in the middle of a word; two records before the remainder
    ([f"prog: si{REC}", REC, "ze=32", "prog: next"],
     ["prog: size=32", "prog: next"], [REC, REC]),
    # a record glued twice into the same program line
    ([f"prog: a{REC}", f"b{REC}", "c"], ["prog: abc"], [REC, REC]),
    # the console ends inside a cut line
    ([f"prog: partial{REC}"], ["prog: partial"], [REC]),
])
def test_a_glued_record_is_cut_out_and_the_program_line_joined(raw, program, kernel):
    out = program_lines(raw)
    assert [line for line in out if line.startswith("prog: ")] == program
    assert [line for line in out if line.startswith("[")] == kernel
    assert len(out) == len(raw) + (out[-1] == "prog: partial")


@pytest.mark.parametrize("raw", [
    [REC, "[    2.2] not a stamp", "plain shell output", ""],
    [f"Aug 23 10:00:01 host kernel: {REC}", "next"],   # syslog: the stamp is a prefix
    [f"<4>{REC}", "prog: x"],
])
def test_lines_without_a_glued_record_pass_through(raw):
    assert program_lines(raw) == raw
