"""usercopy-lab triage: classify, title, deduplicate and diff kernel logs.

    usercopy-lab triage [--json] [--syz-titles] [--baseline RESULTS_JSON_OR_DIR]
                        [--vmlinux FILE] [--golden DIR] [--max-decompressed MIB]
                        LOG_OR_DIR_OR_-...

Reads serial consoles, dmesg (-T), journalctl -k and syslog files (plain or
.gz/.xz/.bz2; "-" is standard input), streaming, and prints one row per
distinct report signature: count, kind, first file:line, title.  --json
prints one JSON object per report per line instead (with syz_title, the
title syzkaller gives the report).  --syz-titles shows syzkaller's titles
in the table.  --baseline marks every signature new / still present /
gone and exits 1 when anything is new.  --golden names the golden file a
report matches.  --vmlinux resolves frames to file:line.  A compressed log
that expands past --max-decompressed MiB (default 1024) is refused, as a
decompression bomb.  At most --max-input MiB (default 16384) of one log
are read (an endless pipe ends there, with a warning).  Directories are
searched for logs: a file whose name, less .gz/.xz/.bz2 and rotation
suffixes (.1, -20240101, .old), has no suffix or .log, .txt, .dmesg,
.console, .out or .serial (so kern.log.1, dmesg.0, syslog.2.gz); every
other entry is named on stderr, "DIR: not read: NAME (why), ...".
Symbolic links are followed, each directory and file once.  Lines end at
"\\n" (or at a lone "\\r" in a log that ends its lines so).

Nothing waits without a bound but standard input: a FIFO given by name is
refused (pipe it to "-" instead), a device is read without waiting (what
it has now: /dev/kmsg's records).  Standard input is read as it comes:
each --json record is written, and flushed, when the line after its
report arrives.  A compressed log's reports are held until it has been
read whole: a decompression bomb is refused whole, table and --json.

A binary file (its first 64 KiB) without a report is skipped at once
(/dev/zero, /dev/urandom, an endless binary pipe).  A compressed log that
ends early (a cut download) keeps every report whole before the cut, as
zcat shows it, with a warning on stderr; the exit status is then what its
reports give.  --baseline FILE is JSON (a results.json, a list of
reports, or --json's one report per line; a .json name, or text starting
with "{" or with "[" then "{", "[", "]" or '"') or else a log (a dmesg
line starts "[  12.3" or "[Mon ..."); an empty, binary, unreadable or
too big baseline (JSON: over 8 MiB or 250 000 values) is an error, as is
a FIFO or device.  Running out of memory is exit 2, one line.  Names and report text are printed with
control characters escaped; Ctrl-C stops with status 130 after the last
whole --json record.

Exit status: 0 ok, 1 new signatures against the baseline, 2 nothing could
be read (or bad arguments, or a bad baseline), 130 interrupted.
"""
# (cli/ reads the command line into TriageOptions; hunt/ fills one itself.)
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..reports import MAX_INPUT

DEFAULT_MAX_DECOMPRESSED_MIB = 1024
DEFAULT_MAX_INPUT_MIB = MAX_INPUT >> 20


@dataclass(frozen=True)
class TriageOptions:
    """What `usercopy-lab triage` is asked (cli/ reads the command line into it)."""

    paths: list[Path]
    json: bool = False
    baseline: Path | None = None
    vmlinux: Path | None = None
    golden: list[Path] | None = None
    syz_titles: bool = False
    max_decompressed: int = DEFAULT_MAX_DECOMPRESSED_MIB     # MiB
    max_input: int = DEFAULT_MAX_INPUT_MIB                   # MiB
