"""log_lines.normalize: every real prefix form comes down to the message."""
import pytest

from usercopy_lab.reports.log_lines import normalize, parse_line, program_lines

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
    # the prefix tables (log_lines.TOOL_PREFIXES, CALLER_IDS)
    f"kern  :emerg : [   12.345678] {MSG}",          # dmesg -x
    f"kern  :err   : {MSG}",
    f"kern  :warn  : [Thu Dec  3 10:00:01 2020] {MSG}",   # dmesg -x -T
    f"Dec 05 10:00:01.123456 host kernel: {MSG}",    # journalctl -o short-precise
    f"1733390401.123456 host kernel: {MSG}",          # journalctl -o short-unix
    f"12-05 10:00:01.123     0     0 I         : [   12.345678] {MSG}",   # adb logcat -b kernel
    f"\x1b[0;31m[   12.345678][    C1] {MSG}\x1b[0m\r\n",   # serial console, colour, CRLF
])
def test_prefixes_are_stripped(raw):
    assert normalize(raw) == MSG


@pytest.mark.parametrize("raw,text,caller", [
    # MediaTek Android kernels (lines of public boot logs found with find_string,
    # file ids 4529840031, 3754589398, 1326316584, 22463691302)
    ("<6>[    0.003219]  (0)[1:swapper/0]ASID allocator initialised with 65536 entries",
     "ASID allocator initialised with 65536 entries", "T1"),
    ("<6>[    0.161563] .(0)[1:swapper/0]ASID allocator initialised with 65536 entries",
     "ASID allocator initialised with 65536 entries", "T1"),
    ("<4>[    0.159069] -(0)[0:swapper/0]init_heavy_tlb: cpu=6 thresh_l=250",
     "init_heavy_tlb: cpu=6 thresh_l=250", "T0"),
    ("[ 44.007872] *(0)[271:kworker/0:2]FG: log_bat_status: soc=3855", "FG: log_bat_status: soc=3855",
     "T271"),
    ("[    0.259605] <0>.(0)[1:swapper/0][debug]available DRAM size = 0x20000000",
     "[debug]available DRAM size = 0x20000000", "T1"),
    # Samsung Exynos kernels: "[cpu:  comm:  pid]"
    ("[   12.345678] [3:  kworker/3:1:  123] usercopy: x", "usercopy: x", "T123"),
    # PRINTK_CALLER
    ("[   90.782502][ T6513]  do_mount+0xf3/0x110", " do_mount+0xf3/0x110", "T6513"),
    # the vendor rows need a timestamp before them
    ("[3:  a:  12] x", "[3:  a:  12] x", None),
    # adb logcat -b kernel, lines of public logs (find_string file ids 44816093736,
    # 65965174341, 6708245416, 66632743843): Qualcomm's CPU after the time, -v year/uid,
    # a padded tag, HiSilicon's "s"
    ("09-06 10:36:55.187     0     0 I         : [    0.000000,0] Booting Linux on physical CPU 0x0",
     "Booting Linux on physical CPU 0x0", None),
    ("2026-08-20 18:48:42.342  root     0     0 I         : [    C4] swpm_sp_routine",
     "swpm_sp_routine", "C4"),
    ("05-10 17:18:46.510     0     0 I amdgpu  : Topology: Add APU node [0x0:0x0]",
     "amdgpu: Topology: Add APU node [0x0:0x0]", None),
    ("10-01 09:30:04.546     0     0 I         : [  253.955444s][pid:1993,cpu0,bms_behavior,4]"
     "[I/bq25892_charger] vbus mv is 4900mV",
     "[pid:1993,cpu0,bms_behavior,4][I/bq25892_charger] vbus mv is 4900mV", None),
    # an app's logcat line is not a kernel line
    ("08-11 16:11:27.391  5636  5636 D DrivingTextManager: x",
     "08-11 16:11:27.391  5636  5636 D DrivingTextManager: x", None),
])
def test_caller_ids(raw, text, caller):
    ll = parse_line(raw)
    assert (ll.text, ll.caller) == (text, caller)


@pytest.mark.parametrize("raw,text", [
    # encoding debris (log_lines._MOJIBAKE, _A_INDENT)
    ("> A check_object_size include/linux/thread_info.h:112 [inline]",
     "  check_object_size include/linux/thread_info.h:112 [inline]"),
    ("A A  (ftrace buffer empty)", "A A  (ftrace buffer empty)"),   # not frame-shaped: kept
    ("A new device is attached", "A new device is attached"),
    ("[    1.000000] \u00c2\u00a0__check_object_size+0x1/0x2", " __check_object_size+0x1/0x2"),
    ("FS:\u00c2  00007f", "FS:  00007f"),
    ("usercopy: Kernel memory exposure attempt detected from SLUB object \u00e2\u20ac\u02dcx\u00e2\u20ac\u2122 (offset 1, size 2)!", MSG),
    ("usercopy: Kernel memory exposure attempt detected from SLUB object \u2018x\u2019 (offset 1, size 2)!", MSG),
    ("\ufffd\ufffdfoo+0x1/0x2", "  foo+0x1/0x2"),
    ("a \u00e2\u20ac\u201d b \u00e2\u20ac\u0153q\u00e2\u20ac\u009d \u00e2\u20ac\u201c \u2014",
     'a - b "q" - -'),
])
def test_encoding_debris(raw, text):
    assert normalize(raw) == text


def test_indented_hand_cut_stamps():
    # a stable backport's commit message (tipc, batch 5): "[] " stamps,
    # the whole excerpt indented by two spaces
    assert normalize("  [] kernel BUG at mm/usercopy.c:102!") == "kernel BUG at mm/usercopy.c:102!"
    assert normalize("  []  __check_heap_object+0xd3/0x100") == " __check_heap_object+0xd3/0x100"
    assert normalize("  [not a stamp] x") == "  [not a stamp] x"


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
