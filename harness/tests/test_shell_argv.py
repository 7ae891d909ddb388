"""The interactive guest's QEMU command line (usercopy-lab shell)."""
from __future__ import annotations

from pathlib import Path

from usercopy_lab.capture.qemu_boot import GuestSpec
from usercopy_lab.capture.shell import SHELL_CMDLINE, shell_argv


def test_console_is_a_logging_multiplexer_instead_of_plain_stdio():
    spec = GuestSpec(kernel=Path("k"), initramfs=Path("i"), extra_cmdline=SHELL_CMDLINE)
    argv = shell_argv(spec, Path("/r/shell/a,b.log"))
    assert "stdio" not in argv[argv.index("-serial") + 1]
    chardev = argv[argv.index("-chardev") + 1]
    assert chardev == "stdio,id=con0,mux=on,signal=off,logfile=/r/shell/a,,b.log,logappend=on"
    assert argv[argv.index("-serial") + 1] == "chardev:con0"
    assert argv[argv.index("-mon") + 1] == "chardev=con0,mode=readline"
    assert argv[argv.index("-append") + 1].endswith(" lab.shell=1")
    assert "-no-reboot" in argv
    # everything else is the lab guest's own command line
    rest = [a for a in argv if a not in ("-chardev", chardev, "-serial", "chardev:con0",
                                         "-mon", "chardev=con0,mode=readline")]
    assert rest == [a for a in spec.argv() if a not in ("-serial", "stdio")]
