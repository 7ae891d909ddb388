"""Properties of the reader and parser, checked with hypothesis: however a
log's lines end, however it is cut into chunks, whatever timestamp or
caller-id prefix its lines carry, the same reports come out.
HYPOTHESIS_EXAMPLES=N runs N examples per property (default 40)."""
from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

hypothesis = pytest.importorskip(
    "hypothesis", reason="python3-hypothesis is not installed (scripts/install-deps.sh installs it)")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from usercopy_lab.reports.log_lines import parse_line  # noqa: E402
from usercopy_lab.reports.oops_parser import iter_stream  # noqa: E402

DATA = Path(__file__).parent / "testdata"
SETTINGS = settings(max_examples=int(os.environ.get("HYPOTHESIS_EXAMPLES", "40")), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def body(path: Path) -> bytes:
    """A fixture's log (after its header), or a whole captured console."""
    data = path.read_bytes()
    return data.split(b"\n\n", 1)[1] if path.suffix == ".txt" else data


LOGS = {
    "lab-usercopy": (DATA / "console" / "USERCOPY_SLAB_SIZE_TO.log").read_bytes(),
    "lab-two-reports": (DATA / "console" / "two-reports-WARNING-then-USERCOPY_SLAB_WHITELIST_FROM.log"
                        ).read_bytes(),
    "panic-on-warn": body(DATA / "reports" / "x86_64-panic_on_warn-4.15-usercopy_warn.txt"),
    "cascade": body(DATA / "reports" / "cascade-oops-then-secondary-reports.txt"),
    "arm64": body(DATA / "reports" / "arm64-usercopy_abort-6.1.txt"),
    "powerpc": body(DATA / "reports" / "powerpc-usercopy_warn-5.10.txt"),
    "kasan-doc": body(DATA / "reports" / "x86_64-kasan-4.19-module.txt"),
}
FIELDS = ("line", "end_line", "kind", "direction", "object", "cache", "offset", "size",
          "bug_site", "rip", "guilty_frame", "frames", "truncated", "title", "syz_title",
          "signature", "secondary")


def reports(data: bytes, chunk: int | None = None) -> list[tuple]:
    return [tuple(getattr(r, f) for f in FIELDS)
            for r in iter_stream(io.BytesIO(data), "log", chunk_size=chunk)]


def lines_of(data: bytes) -> list[bytes]:
    return [line.rstrip(b"\r") for line in data.split(b"\n")]


def test_the_logs_have_reports():
    for name, data in LOGS.items():
        assert reports(data), name


@SETTINGS
@given(name=st.sampled_from(sorted(LOGS)), data=st.data())
def test_line_ends_do_not_matter(name, data):
    """\\n, \\r\\n and QEMU's \\r\\r\\n, mixed line by line."""
    lines = lines_of(LOGS[name])
    ends = data.draw(st.lists(st.sampled_from([b"\n", b"\r\n", b"\r\r\n"]),
                              min_size=len(lines), max_size=len(lines)))
    mixed = b"".join(line + end for line, end in zip(lines, ends))
    assert reports(mixed) == reports(b"".join(line + b"\n" for line in lines))


@SETTINGS
@given(name=st.sampled_from(sorted(LOGS)), chunk=st.integers(min_value=1, max_value=9000))
def test_chunk_boundaries_do_not_matter(name, chunk):
    assert reports(LOGS[name], chunk) == reports(LOGS[name])


def bare(data: bytes) -> list[str]:
    """The kernel messages of a log, prefixes removed; other output kept."""
    out = []
    for raw in lines_of(data):
        ll = parse_line(raw.decode("utf-8", "replace"))
        out.append(ll.text if ll.stamped else "\x00" + ll.text)   # \0: not a kernel line
    return out


PREFIXES = {
    "printk": lambda i, cid: f"[{100 + i * 0.000731:12.6f}]{cid} ",
    "dmesg -T": lambda i, cid: f"[Thu Dec  3 10:{i // 60 % 60:02d}:{i % 60:02d} 2026] ",
    "syslog": lambda i, cid: f"Dec  3 10:{i // 60 % 60:02d}:{i % 60:02d} labhost kernel: ",
    "journalctl": lambda i, cid: f"Dec 03 10:{i // 60 % 60:02d}:{i % 60:02d} labhost kernel: ",
    "kmsg": lambda i, cid: f"4,{1000 + i},{100000 + 731 * i},-;",
    "iso": lambda i, cid: f"2026-12-03T10:{i // 60 % 60:02d}:{i % 60:02d},{i:06d}+00:00 ",
    "level+printk": lambda i, cid: f"<4>[{100 + i * 0.000731:12.6f}]{cid} ",
}


@SETTINGS
@given(name=st.sampled_from(sorted(LOGS)), style=st.sampled_from(sorted(PREFIXES)),
       caller=st.sampled_from(["", "[  T321]", "[    C1]", "[T12345]"]))
def test_timestamp_and_caller_prefixes_do_not_matter(name, style, caller):
    """The same messages under any prefix style (and one caller id on all
    kernel lines where the style carries one) give the same reports."""
    messages = bare(LOGS[name])
    fmt = PREFIXES[style]
    cid = caller if style in ("printk", "level+printk") else ""

    def render(prefix_of) -> bytes:
        return "".join((m[1:] if m.startswith("\x00") else prefix_of(i, cid) + m) + "\n"
                       for i, m in enumerate(messages)).encode()

    baseline = render(lambda i, _c: f"[{100 + i * 0.000731:12.6f}] ")
    assert reports(render(fmt)) == reports(baseline)
