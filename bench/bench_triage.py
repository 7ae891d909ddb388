#!/usr/bin/python3
"""Triage throughput on a large synthetic console log (goal >= 50 MB/s, one core),
and on the mail corpus when it is present (syzbot's report mails: every
line near a report, so far slower per MB; no goal, printed beside it).

Builds /tmp/usercopy-lab-bench/synthetic.log (default 500 MB; --mb to
change) from normal boot/runtime lines with a usercopy BUG, a WARNING and a
KASAN report mixed in every few MB, then times oops_parser.iter_file over it
and checks the report count.  Then times a small hostile log (1 MiB lines
built against the header and suppression patterns, and lines of repeated
headers) and prints its CPU time: bounded, no goal.  Run by
`make bench`.
"""
from __future__ import annotations

import argparse
import io
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "harness"))

from usercopy_lab.reports import ScanStats, iter_file, iter_stream  # noqa: E402

GOAL_MB_S = 50.0
MAIL_CORPUS = HERE.parent / "build" / "corpora" / "mail"
FIXTURES = HERE.parent / "harness/tests/testdata"
NORMAL = [
    "[{t:12.6f}] e1000e 0000:00:1f.6 eno1: NIC Link is Up 1000 Mbps Full Duplex, Flow Control: Rx/Tx",
    "[{t:12.6f}] audit: type=1400 audit(1733227500.123:42): apparmor=\"STATUS\" operation=\"profile_load\" name=\"snap\"",
    "[{t:12.6f}] usb 1-1: new high-speed USB device number 2 using xhci_hcd",
    "[{t:12.6f}] EXT4-fs (sda1): mounted filesystem with ordered data mode. Quota mode: none.",
    "[{t:12.6f}] PM: DEBUG: suspend entry (deep) -- not a report",
    "[{t:12.6f}] TCP: request_sock_TCP: Possible SYN flooding on port 8080. Sending cookies.",
    "[{t:12.6f}] systemd[1]: Started Daily apt download activities.",
    "[{t:12.6f}] wlp0s20f3: associated",
]
REPORTS = [FIXTURES / "console/USERCOPY_SLAB_WHITELIST_TO.log",
           FIXTURES / "console/WARNING.log",
           FIXTURES / "triage/kasan_caller_id.log"]


def build(path: Path, megabytes: int, every_mb: int) -> int:
    """Write the log; return how many reports it holds."""
    filler_lines = []
    t = 0.0
    for i in range(20000):
        t += 0.000731
        filler_lines.append(NORMAL[i % len(NORMAL)].format(t=t))
    filler = ("\n".join(filler_lines) + "\n").encode()
    reports = [_report_only(p) for p in REPORTS]
    target = megabytes << 20
    written = count = k = 0
    since = 0
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        while written < target:
            f.write(filler)
            written += len(filler)
            since += len(filler)
            if since >= every_mb << 20:
                since = 0
                f.write(reports[k % len(reports)])
                written += len(reports[k % len(reports)])
                k += 1
                count += 1
    return count


def _report_only(path: Path) -> bytes:
    """The console of a fixture without its boot log (its report and tail)."""
    lines = path.read_bytes().splitlines(keepends=True)
    start = next(i for i, l in enumerate(lines)
                 if b"usercopy: " in l or b"WARNING:" in l or b"====" in l)
    return b"".join(lines[start:])


def hostile(path: Path) -> tuple[int, int]:
    """Write a log of pathological lines; return (bytes, lines)."""
    mib = 1 << 20
    lines = [b"[ 1.0] WARNING: " + b"warning: x " * (mib // 11),
             b"[ 1.1] WARNING: CPU: 0 PID: 1" + b" at a.b" * (mib // 7),
             b"[ 1.2] " + b"Linux version " * (mib // 14),
             b"[ 1.3] usercopy: Kernel memory exposure attempt detected from " + b"(offset 1, " * (mib // 11),
             b"[ 1.4] " + b"\x1b[" * (mib // 2)]
    lines += [b"[ 1.5] WARNING: " * 40 + b"EXT4-fs (sda): warning: x " * 40] * 2000
    data = b"\n".join(lines) + b"\n"
    path.write_bytes(data)
    return len(data), len(lines)


def mail_corpus_rate(folder: Path) -> tuple[int, float, int, float] | None:
    """(mails, MB, reports, CPU seconds) of triage over every mail body
    (scripts/mail-corpus.py build writes them), or None without a corpus."""
    files = sorted(folder.rglob("*.txt")) if folder.is_dir() else []
    if not files:
        return None
    bodies = [f.read_bytes().partition(b"\n\n")[2] for f in files]
    t0 = time.process_time()
    found = sum(1 for body in bodies for _ in iter_stream(io.BytesIO(body)))
    return len(files), sum(map(len, bodies)) / 1e6, found, time.process_time() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--mb", type=int, default=500, help="log size in MB (default 500)")
    ap.add_argument("--every-mb", type=int, default=4, help="one report per N MB")
    ap.add_argument("--dir", type=Path, default=Path("/tmp/usercopy-lab-bench"))
    ap.add_argument("--keep", action="store_true", help="keep the log afterwards")
    ap.add_argument("--mail-corpus", type=Path,
                    default=Path(os.environ.get("USERCOPY_LAB_MAIL_CORPUS", MAIL_CORPUS)),
                    help="built mail corpus (default build/corpora/mail; make corpora)")
    args = ap.parse_args(argv)
    path = args.dir / "synthetic.log"
    t0 = time.perf_counter()
    expected = build(path, args.mb, args.every_mb)
    size = path.stat().st_size
    print(f"bench: built {size / 1e6:.0f} MB log with {expected} reports "
          f"in {time.perf_counter() - t0:.1f}s: {path}")
    try:
        stats = ScanStats()
        t0 = time.process_time()
        w0 = time.perf_counter()
        found = sum(1 for _ in iter_file(path, stats))
        cpu = time.process_time() - t0
        wall = time.perf_counter() - w0
    finally:
        if not args.keep:
            os.unlink(path)
    rate = size / 1e6 / max(cpu, 1e-9)
    print(f"bench: triage parsed {size / 1e6:.0f} MB, {stats.lines} lines, "
          f"{found} reports in {cpu:.2f}s CPU ({wall:.2f}s wall)")
    bad = args.dir / "hostile.log"
    hsize, hlines = hostile(bad)
    try:
        t0 = time.process_time()
        hfound = sum(1 for _ in iter_file(bad))
        hcpu = time.process_time() - t0
    finally:
        if not args.keep:
            os.unlink(bad)
    print(f"bench: hostile log of {hsize / 1e6:.1f} MB ({hlines} lines, 5 of them 1 MiB long): "
          f"{hfound} reports in {hcpu:.2f}s CPU ({hsize / 1e6 / max(hcpu, 1e-9):.0f} MB/s; "
          "patterns see a bounded window of each line)")
    mail = mail_corpus_rate(args.mail_corpus)
    if mail is None:
        print(f"bench: mail corpus not found at {args.mail_corpus} (make corpora); skipped")
    else:
        mails, mb, reports, mcpu = mail
        print(f"bench: triage on the mail corpus: {mb:.1f} MB in {mails} mails, {reports} "
              f"reports in {mcpu:.1f}s CPU: {mb / max(mcpu, 1e-9):.1f} MB/s (report-dense input; "
              f"no goal) beside {rate:.0f} MB/s on the console log")
    verdict = "OK" if rate >= GOAL_MB_S else "BELOW GOAL"
    print(f"bench: triage throughput {rate:.0f} MB/s on one core "
          f"(goal >= {GOAL_MB_S:.0f} MB/s): {verdict}")
    if found != expected:
        print(f"bench: expected {expected} reports, found {found}", file=sys.stderr)
        return 1
    return 0 if rate >= GOAL_MB_S else 1


if __name__ == "__main__":
    sys.exit(main())
