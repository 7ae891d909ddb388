#!/usr/bin/python3
"""The mail corpus: syzbot's report mails from public list archives, labeled.

    scripts/mail-corpus.py scan  SPLIT:GITDIR=OWNER/NAME ... > index.tsv
    scripts/mail-corpus.py build [--index FILE] [--mirrors DIR] [--clone] --out DIR
    scripts/mail-corpus.py score [--index FILE] [--split dev|heldout|all]
                                 [--misses FILE] [--show N] [--json] CORPUS_DIR

syzbot mails every report to the lists with syzkaller's title as the
subject; public-inbox git mirrors of the lists (one message per commit, in
a file named "m"; github.com/linux-mailinglist-archives/<list>.<epoch>)
keep them.  The expected title of a message is its subject without
"Re:", "[syzbot]", the "[subsystem?]" tags and the dashboard's " (N)"
counter (or, for a patch test that still crashes, the title syzbot
names in the body).  Classes of messages (the CLASS column):

  report      syzbot's first mail of a bug ("syzbot found the following
              issue/crash"): the report as it mails it (symbolized)
  reproducer  syzbot's "found a reproducer for the following issue": a new
              crash of the same bug
  retest      syzbot's "tested the proposed patch but the reproducer is
              still triggering an issue:" + the title + the new report
  reply       a person's reply that quotes syzbot's report ("> " lines,
              often with the replier's own lines in between; format=flowed
              and quoted-printable as the mailer sent them)

scan lists such messages of a mirror (a git directory) as index rows;
build writes one file per row from the named commits (git show COMMIT:m,
the body decoded from its transfer encoding and charset, nothing else
changed); score runs `usercopy-lab triage`'s parser over every file and
compares the first report's syzkaller title with the expectation.  The
index (harness/tests/testdata/mail-corpus/index.tsv) is the corpus: the
mails themselves are not in this repository.

Exit status: 0 ok (score: no miss outside --misses, and every listed miss
still a miss), 1 score differs from the list, 2 bad input.
"""
from __future__ import annotations

import argparse
import email
import email.policy
import io
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from email.message import EmailMessage
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "harness"))

from usercopy_lab.reports import GROUPS, LogFormatError, iter_stream  # noqa: E402

INDEX = ROOT / "harness/tests/testdata/mail-corpus/index.tsv"
MISSES = ROOT / "harness/tests/testdata/mail-corpus/known-misses.tsv"
RENAMES = ROOT / "harness/tests/testdata/mail-corpus/renames.tsv"
COLUMNS = ("split", "repo", "commit", "message_id", "date", "class", "title")
SPLITS = ("dev", "heldout")
CLASSES = ("report", "reproducer", "retest", "reply")
GITHUB = "https://github.com/{repo}.git"

# what mailers put in front of a subject they reply to or forward
_REPLY = re.compile(r"^\s*(?:(?:Re|RE|re|Fwd|FWD|FW|Fw|AW|Aw|SV|VS|Antw|Odp|R|回复|答复|回覆|转发)"
                    r"(?:\[\d+\])?\s*[:：]\s*)+")
_TAGS = re.compile(r"^(?:\s*\[[^\]]*\])+\s*")
_SYZBOT_TAG = re.compile(r"\[syzbot\](?:\s*\[[^\]]*\])*\s*")
_COUNTER = re.compile(r" \(\d+\)$")
# syzbot names the instance that hit a boot or test error in front of the
# report's title ("upstream boot error: ", "linux-next test error: ")
_INSTANCE = re.compile(r"^[\w./-]+ (?:boot|test) error: ")
_FOUND = re.compile(r"^syzbot (?:has )?found the following (?:issue|crash|bug)", re.M)
_REPRO = re.compile(r"^syzbot has found a reproducer for the following (?:issue|crash|bug)", re.M)
_RETEST = re.compile(r"^syzbot has tested the proposed patch but the reproducer is still "
                     r"triggering (?:an issue|a crash):\n(.+)\n", re.M)
_QUOTED_FOUND = re.compile(r"^>[> ]*syzbot (?:has )?found the following (?:issue|crash|bug)"
                           r"|^>[> ]*syzbot has found a reproducer", re.M)
_QUOTED_TRACE = re.compile(r"^>[> ]*\s*(?:Call [Tt]race:|Backtrace:)", re.M)
_OWN_TRACE = re.compile(r"^(?!>)\s*(?:Call [Tt]race:|Backtrace:)", re.M)
_QUOTED_RETEST = re.compile(r"^>[> ]*syzbot has tested the proposed patch", re.M)


# --------------------------------------------------------------- messages
def expected_title(subject: str) -> str:
    """syzkaller's title from a subject: unfolded, without Re:, [syzbot],
    [subsystem?] tags, the " (N)" counter and the instance of a boot or
    test error."""
    s = " ".join(subject.split())
    tagged = list(_SYZBOT_TAG.finditer(s))
    if tagged:
        s = s[tagged[-1].end():]        # whatever came before "[syzbot] [x?]"
    else:
        s = _TAGS.sub("", _REPLY.sub("", s))
    s = _INSTANCE.sub("", s)
    return _COUNTER.sub("", s).strip()


def parse_message(data: bytes) -> EmailMessage:
    return email.message_from_bytes(data, policy=email.policy.default)  # type: ignore[return-value]


def body_text(msg: EmailMessage) -> str:
    """The text/plain body, decoded from its transfer encoding and charset;
    soft line breaks of format=flowed and quoting are left as sent."""
    part = msg.get_body(preferencelist=("plain",))
    if part is None:
        return ""
    try:
        return part.get_content()
    except (LookupError, UnicodeError, AssertionError):
        payload = part.get_payload(decode=True) or b""
        return payload.decode("utf-8", "replace")


def classify(msg: EmailMessage, body: str) -> tuple[str, str] | None:
    """(class, expected title) of a message, or None if it is not one."""
    sender = str(msg.get("From", ""))
    subject = str(msg.get("Subject", ""))
    if "syzbot ci" in sender or "[syzbot ci]" in subject or "Monthly" in subject:
        return None
    title = expected_title(subject)
    if not title or title.endswith("build error"):
        return None                     # a build failure, no kernel report
    if "syzbot" in sender.split("@")[0].lower():
        if m := _RETEST.search(body):
            return "retest", m.group(1).strip()
        if _REPRO.search(body):
            return "reproducer", title
        if _FOUND.search(body) and not subject.lower().startswith("re:"):
            return "report", title
        return None
    if (subject.lower().startswith("re:") and _QUOTED_FOUND.search(body)
            and _QUOTED_TRACE.search(body) and not _OWN_TRACE.search(body)
            and not _QUOTED_RETEST.search(body)):
        return "reply", title
    return None


# ------------------------------------------------------------------ scan
def _git(gitdir: Path, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(["git", "--git-dir", str(gitdir), *args],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def _commits(gitdir: Path) -> list[tuple[str, str, str]]:
    """(commit, author, subject) of every message, newest first."""
    out = subprocess.run(["git", "--git-dir", str(gitdir), "log", "--format=%H%x00%an%x00%s"],
                         capture_output=True, check=True).stdout
    rows = []
    for line in out.decode("utf-8", "replace").splitlines():
        h, a, s = line.split("\x00", 2)
        rows.append((h, a, s))
    return rows


def _maybe(author: str, subject: str) -> bool:
    """Worth reading: from syzbot, or a reply whose subject may be a title."""
    if "syzbot" in author.lower():
        return True
    return subject.lower().startswith("re:")


def read_blobs(gitdir: Path, commits: list[str]) -> Iterator[tuple[str, bytes]]:
    """(commit, message) of each commit's file m, through one cat-file."""
    proc = _git(gitdir, "cat-file", "--batch")
    assert proc.stdin is not None and proc.stdout is not None
    for commit in commits:
        proc.stdin.write(f"{commit}:m\n".encode())
        proc.stdin.flush()
        header = proc.stdout.readline().split()
        if len(header) < 3 or header[1] == b"missing":
            yield commit, b""
            continue
        data = proc.stdout.read(int(header[2]))
        proc.stdout.read(1)
        yield commit, data
    proc.stdin.close()
    proc.wait()


def scan(gitdir: Path, repo: str, split: str, seen: set[str]) -> Iterator[dict[str, str]]:
    commits = [h for h, a, s in _commits(gitdir) if _maybe(a, s)]
    for commit, data in read_blobs(gitdir, commits):
        if not data:
            continue
        msg = parse_message(data)
        mid = str(msg.get("Message-ID", "")).strip().strip("<>")
        if not mid or mid in seen:
            continue
        body = body_text(msg)
        got = classify(msg, body)
        if got is None:
            continue
        seen.add(mid)
        date = msg.get("Date")
        try:
            day = date.datetime.strftime("%Y-%m-%d") if date is not None else ""  # type: ignore[union-attr]
        except (AttributeError, ValueError):
            day = ""
        yield {"split": split, "repo": repo, "commit": commit, "message_id": mid, "date": day,
               "class": got[0], "title": got[1]}


def syzbot_threads(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    """The rows without replies whose subject is not the title of a bug
    syzbot mailed (a patch that quotes a report in its thread, say)."""
    titles = {r["title"] for r in rows if r["class"] != "reply"}
    return [r for r in rows if r["class"] != "reply" or r["title"] in titles]


# ----------------------------------------------------------------- index
def read_index(path: Path) -> list[dict[str, str]]:
    rows = []
    for num, line in enumerate(path.read_text().splitlines(), 1):
        if not line or line.startswith("#"):
            continue
        cols = line.split("\t")
        if len(cols) != len(COLUMNS):
            raise ValueError(f"{path}:{num}: {len(cols)} columns, want {len(COLUMNS)}")
        rows.append(dict(zip(COLUMNS, cols)))
    return rows


def row_line(row: dict[str, str]) -> str:
    return "\t".join(row[c].replace("\t", " ") for c in COLUMNS)


def case_name(row: dict[str, str]) -> str:
    return f"{row['split']}/{row['repo'].split('/')[-1]}/{row['commit'][:16]}.txt"


# ----------------------------------------------------------------- build
def find_mirror(root: Path, repo: str) -> Path | None:
    """A git directory of repo under root: owner+name/repo (as fetched
    here), name.git or name (a clone)."""
    owner, name = repo.split("/")
    for cand in (root / f"{owner}+{name}" / "repo", root / f"{name}.git", root / name / ".git",
                 root / name):
        if (cand / "objects").is_dir() or (cand / "HEAD").is_file():
            return cand
    return None


def build(rows: list[dict[str, str]], mirrors: Path, out: Path, clone: bool) -> int:
    by_repo: dict[str, list[dict[str, str]]] = {}
    for row in rows:
        by_repo.setdefault(row["repo"], []).append(row)
    written = 0
    for repo, todo in by_repo.items():
        gitdir = find_mirror(mirrors, repo)
        if gitdir is None and clone:
            target = mirrors / f"{repo.split('/')[1]}.git"
            print(f"mail-corpus: cloning {GITHUB.format(repo=repo)} (needs the network)",
                  file=sys.stderr)
            subprocess.run(["git", "clone", "--bare", "--quiet", GITHUB.format(repo=repo),
                            str(target)], check=True)
            gitdir = target
        if gitdir is None:
            print(f"mail-corpus: {repo}: no mirror under {mirrors} (--clone fetches it)",
                  file=sys.stderr)
            return -1
        blobs = dict(read_blobs(gitdir, [r["commit"] for r in todo]))
        for row in todo:
            data = blobs.get(row["commit"], b"")
            if not data:
                print(f"mail-corpus: {repo} {row['commit']}: not in the mirror", file=sys.stderr)
                return -1
            body = body_text(parse_message(data))
            path = out / case_name(row)
            path.parent.mkdir(parents=True, exist_ok=True)
            head = "".join(f"{k.upper().replace('_', '-')}: {row[k]}\n" for k in COLUMNS)
            path.write_bytes(head.encode() + b"\n" + body.encode("utf-8", "replace"))
            written += 1
        print(f"mail-corpus: {repo}: {len(todo)} messages", file=sys.stderr)
    return written


# ----------------------------------------------------------------- score
@dataclass
class Case:
    name: str
    row: dict[str, str]
    body: bytes


def read_case(path: Path) -> Case:
    data = path.read_bytes()
    head, _, body = data.partition(b"\n\n")
    row = {}
    for line in head.decode("utf-8", "replace").splitlines():
        key, _, value = line.partition(": ")
        row[key.lower().replace("-", "_")] = value
    return Case(path.name, row, body)


def _template_re(template: str) -> re.Pattern[str]:
    parts = re.split(r"\{(\d+)\}", template)
    out = []
    for i, part in enumerate(parts):
        out.append(re.escape(part) if i % 2 == 0 else f"(?P<a{part}>.+?)")
    return re.compile("^" + "".join(out) + "$")


def _dedup_keys() -> list[tuple[re.Pattern[str], tuple[str, ...]]]:
    """(title pattern, alternative templates) of every format with both."""
    out = []
    for group in GROUPS:
        for fmt in group.formats:
            if fmt.syz and fmt.alt and "{" in fmt.syz:
                try:
                    out.append((_template_re(fmt.syz), fmt.alt))
                except re.error:
                    continue
    return out


DEDUP = _dedup_keys()


def title_alternatives(title: str) -> set[str]:
    """The alternative titles syzkaller gives a report titled so
    ("general protection fault in f" -> "bad-access in f"): syzbot files a
    crash under a bug whose alternative titles share one of the crash's."""
    out = set()
    for pattern, alts in DEDUP:
        m = pattern.match(title)
        if not m:
            continue
        args = {k[1:]: v for k, v in m.groupdict().items()}
        for alt in alts:
            try:
                out.add(re.sub(r"\{(\d+)\}", lambda x: args[x.group(1)], alt))
            except KeyError:
                continue
    return out


def first_titles(body: bytes, name: str) -> tuple[str | None, list[str]]:
    """syzkaller's title and alternative titles of the first report in body."""
    try:
        reps = iter_stream(io.BytesIO(body), name)
        first = next(reps, None)
    except LogFormatError:
        return None, []
    return (first.syz_title, first.syz_alt) if first is not None else (None, [])


def read_table(path: Path, what: str) -> dict[str, tuple[str, str]]:
    """message id -> (title, reason) of a three-column list (known misses:
    what triage says and why; renames: the title under today's syzkaller
    rules and the rule change).  A missing file is an empty list."""
    out = {}
    if not path.is_file():
        return out
    for num, line in enumerate(path.read_text().splitlines(), 1):
        if not line or line.startswith("#"):
            continue
        cols = line.split("\t")
        if len(cols) != 3 or not cols[2].strip():
            raise ValueError(f"{path}:{num}: want message-id, {what}, reason")
        out[cols[0]] = (cols[1], cols[2])
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("scan", help="list the labeled messages of mirrors (index rows)")
    p.add_argument("mirrors", nargs="+", metavar="SPLIT:GITDIR=OWNER/NAME",
                   help="in order: a message in several mirrors is listed once, first")
    p = sub.add_parser("build", help="write the corpus files from the index's commits")
    p.add_argument("--index", type=Path, default=INDEX)
    p.add_argument("--mirrors", type=Path, default=Path("build/corpora/mirrors"))
    p.add_argument("--clone", action="store_true", help="git clone missing mirrors (network)")
    p.add_argument("--out", type=Path, required=True)
    p = sub.add_parser("score", help="triage every file, compare with its title")
    p.add_argument("corpus", type=Path)
    p.add_argument("--index", type=Path, default=INDEX)
    p.add_argument("--misses", type=Path, default=MISSES)
    p.add_argument("--renames", type=Path, default=RENAMES)
    p.add_argument("--split", choices=(*SPLITS, "all"), default="all")
    p.add_argument("--show", type=int, default=0, metavar="N", help="print up to N misses")
    p.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if args.cmd == "scan":
        seen: set[str] = set()
        rows = []
        for spec in args.mirrors:
            split, _, rest = spec.partition(":")
            gitdir, _, repo = rest.partition("=")
            if split not in SPLITS or not repo:
                print(f"mail-corpus: {spec}: want SPLIT:GITDIR=OWNER/NAME, SPLIT one of "
                      f"{', '.join(SPLITS)}", file=sys.stderr)
                return 2
            rows.extend(scan(Path(gitdir), repo, split, seen))
            print(f"mail-corpus: {repo}: {len(rows)} messages so far", file=sys.stderr)
        for row in syzbot_threads(rows):
            print(row_line(row))
        return 0
    try:
        rows = read_index(args.index)
    except (OSError, ValueError) as exc:
        print(f"mail-corpus: {exc}", file=sys.stderr)
        return 2
    if args.cmd == "build":
        n = build(rows, args.mirrors, args.out, args.clone)
        if n < 0:
            return 2
        print(f"mail-corpus: wrote {n} messages to {args.out}", file=sys.stderr)
        return 0
    return score(args, rows)


def score(args: argparse.Namespace, rows: list[dict[str, str]]) -> int:
    if not args.corpus.is_dir():
        print(f"mail-corpus: {args.corpus}: not a directory (make mail-corpus builds it)",
              file=sys.stderr)
        return 2
    try:
        misses = read_table(args.misses, "triage's title")
        renames = read_table(args.renames, "title today")
    except (OSError, ValueError) as exc:
        print(f"mail-corpus: {exc}", file=sys.stderr)
        return 2
    want = [r for r in rows if args.split in ("all", r["split"])]
    tally: dict[str, list[int]] = {}
    unexpected, fixed, absent = [], [], []
    for row in want:
        path = args.corpus / case_name(row)
        if not path.is_file():
            absent.append(row["message_id"])
            continue
        case = read_case(path)
        got, alt = first_titles(case.body, str(path))
        want, _ = renames.get(row["message_id"], (row["title"], ""))
        ok = got == want or want in alt
        same_bug = not ok and bool(title_alternatives(want) & set(alt))
        t = tally.setdefault(row["class"], [0, 0, 0, 0])
        t[0] += 1
        t[1] += ok
        t[2] += ok and got != want
        t[3] += ok and want != row["title"]
        known = misses.get(row["message_id"])
        if not ok and known is None:
            unexpected.append(f"{case_name(row)}\t{row['message_id']}\twant {want!r}, "
                              f"got {got!r}" + (" (same bug by alternative title)" if same_bug else ""))
        elif ok and known is not None:
            fixed.append(f"{row['message_id']}: listed as a miss ({known[1]}), now right")
        elif not ok and known is not None and known[0] != (got or ""):
            unexpected.append(f"{case_name(row)}\t{row['message_id']}\twant {want!r}, "
                              f"got {got!r} (listed with {known[0]!r})")
    total = sum(t[0] for t in tally.values())
    right = sum(t[1] for t in tally.values())
    by_alt = sum(t[2] for t in tally.values())
    by_rename = sum(t[3] for t in tally.values())
    numbers = {"split": args.split, "messages": total, "titles_right": right,
               "right_by_alt_title": by_alt, "right_after_rename": by_rename,
               "by_class": {k: {"messages": v[0], "right": v[1], "right_by_alt_title": v[2],
                                "right_after_rename": v[3]}
                            for k, v in sorted(tally.items())},
               "unexpected": len(unexpected), "fixed": len(fixed), "absent": len(absent)}
    if args.json:
        print(json.dumps(numbers))
    else:
        pct = 100.0 * right / total if total else 0.0
        print(f"mail corpus ({args.split}): {right}/{total} titles right ({pct:.1f} %), "
              f"{by_alt} of them by one of syzkaller's alternative titles, {by_rename} under "
              "a listed rename")
        for k, v in sorted(tally.items()):
            print(f"  {k:<11} {v[1]}/{v[0]} ({v[2]} by an alternative title, {v[3]} renamed)")
        print(f"  misses not in the list: {len(unexpected)}; listed misses now right: "
              f"{len(fixed)}; files absent: {len(absent)}")
    for line in unexpected[:args.show]:
        print(f"miss: {line}")
    for line in fixed[:args.show]:
        print(f"fixed: {line}")
    if absent:
        print(f"mail-corpus: {len(absent)} indexed messages have no file under {args.corpus} "
              f"(first: {absent[0]})", file=sys.stderr)
    return 0 if not unexpected and not fixed and not absent else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:
        sys.exit(0)
