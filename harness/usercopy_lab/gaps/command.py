"""make gaps: usercopy-lab gaps --tree DIR --out DIR [--patch P]...

Exit status: 0 every candidate has a status and every region without a site
its reason; 1 some have not (listed); 2 bad input (one line)."""
from __future__ import annotations

import hashlib
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import report, scan as scan_mod, triage as triage_mod
from .model import GapsError
from .options import GapsOptions
from .tree import Tree

FINDER_DIR = Path(__file__).resolve().parent
# Modules that only render or judge a scan: a change to them reuses it.
RENDER_ONLY = frozenset({"command.py", "report.py", "triage.py", "__init__.py"})


INDEX_CACHE = "index-cache.pickle"
# The modules whose code the struct index's per-file results depend on.
INDEX_MODULES = ("structs.py", "expr.py", "csource.py")


def _index_key() -> str:
    h = hashlib.sha256()
    for name in INDEX_MODULES:
        h.update((FINDER_DIR / name).read_bytes())
    return h.hexdigest()


def _load_index_cache(out: Path) -> dict:
    """OUT's per-file struct index results of the last full scan (a file
    whose size and mtime did not change is not read for the index again),
    or an empty one when the index code changed or there is none."""
    try:
        with open(out / INDEX_CACHE, "rb") as f:
            data = pickle.load(f)
        if isinstance(data, dict) and data.get("key") == _index_key():
            return data
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ValueError):
        pass
    return {"key": _index_key(), "files": {}}


def _save(path: Path, obj) -> None:
    with open(path.with_suffix(".tmp"), "wb") as f:
        pickle.dump(obj, f)
    os.replace(path.with_suffix(".tmp"), path)


def stamp(tree: Tree, patches: list[Path]) -> str:
    """What the result depends on: the finder's code, every file of the tree
    (name, size, mtime) and the patches."""
    h = hashlib.sha256()
    for f in sorted(FINDER_DIR.glob("*.py")):
        if f.name not in RENDER_ONLY:
            h.update(f.read_bytes())
    for rel in tree.files():
        st = (tree.root / rel).stat() if (tree.root / rel).exists() else None
        h.update(f"{rel}:{st.st_size if st else 0}:{st.st_mtime_ns if st else 0}\n".encode())
    for p in patches:
        h.update(p.read_bytes())
    return h.hexdigest()


def overlay_from_patches(tree_root: Path, patches: list[Path], into: Path) -> None:
    """The files PATCHES change, copied from the tree into INTO and patched there."""
    for p in patches:
        try:
            text = p.read_text(errors="replace")
        except OSError as exc:
            raise GapsError(f"{p}: {exc.strerror}") from None
        files = [line.split()[1].split("/", 1)[1] for line in text.splitlines()
                 if line.startswith("+++ ") and len(line.split()) > 1 and "/" in line.split()[1]]
        if not files:
            raise GapsError(f"{p}: not a patch (no '+++ b/PATH' line)")
        for rel in files:
            dst = into / rel
            if not dst.exists() and (tree_root / rel).is_file():
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(tree_root / rel, dst)
        done = subprocess.run(["patch", "-p1", "-s", "--no-backup-if-mismatch", "-d", str(into),
                               "-i", str(p.resolve())], capture_output=True, text=True)
        if done.returncode != 0:
            why = (done.stdout + done.stderr).strip().splitlines()
            raise GapsError(f"{p}: does not apply to {tree_root}: {why[0] if why else done.returncode}")


def _from_base(args: GapsOptions, tree: Tree, overlay: Path, say):
    """The base scan of the same tree, with the patched files read again;
    None (a full scan) when the patch changes anything but .c files."""
    changed = sorted(str(p.relative_to(overlay)) for p in overlay.rglob("*") if p.is_file())
    if any(not c.endswith(".c") for c in changed):
        return None
    try:
        with open(args.base / "scan.pickle", "rb") as f:
            base = pickle.load(f)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError) as exc:
        raise GapsError(f"{args.base}/scan.pickle: cannot be read ({exc.__class__.__name__}); "
                        "run the base tree first") from None
    if Path(base.tree.root).resolve() != Path(args.tree).resolve() or base.structs is None:
        raise GapsError(f"{args.base}: a scan of {base.tree.root}, not of {args.tree}")
    return scan_mod.rescan(base, tree, changed, say)


def run(args: GapsOptions) -> int:
    say = (lambda m: print(m, file=sys.stderr, flush=True)) if not args.quiet else None
    patches = [Path(p) for p in args.patch]
    tri = triage_mod.load(args.triage)
    with tempfile.TemporaryDirectory(prefix="usercopy-lab-gaps-") as tmp:
        overlay = None
        if patches:
            overlay = Path(tmp)
            overlay_from_patches(args.tree, patches, overlay)
        tree = Tree(args.tree, overlay)
        out: Path = args.out
        out.mkdir(parents=True, exist_ok=True)
        key = stamp(tree, patches)
        cached = out / "scan.pickle"
        result = None
        if not args.force and cached.is_file() and (out / "stamp").is_file() and \
                (out / "stamp").read_text().strip() == key:
            try:
                with open(cached, "rb") as f:
                    result = pickle.load(f)
                if say:
                    say(f"gaps: {args.tree} unchanged since the last scan ({out}/stamp): reusing it")
            except (OSError, pickle.UnpicklingError, EOFError, AttributeError):
                result = None
        if result is None and args.base is not None and patches:
            result = _from_base(args, tree, overlay, say)
        if result is None:
            t0 = time.monotonic()
            index_cache = _load_index_cache(out)
            result = scan_mod.run(tree, say, index_cache["files"])
            _save(out / INDEX_CACHE, index_cache)
            result.tree._sources.clear()
            _save(cached, result)
            (out / "stamp").write_text(key + "\n")
            if say:
                say(f"gaps: scanned in {time.monotonic() - t0:.0f} s")
    label = args.label or str(args.tree)
    data = report.to_json(result, tri, label)
    report.write(data, out)
    r = data["recall"]
    untriaged = [f"{c['name']}: {s['key']} ({s['file']}:{s['line']})" for c in data["caches"]
                 for s in c["candidates"] if s["status"] == "untriaged"]
    unexplained = [n for n, why in r["missed"].items() if why.startswith("no site found")]
    ncand = sum(len(c["candidates"]) for c in data["caches"])
    lines = [f"gaps: {label}: recall {r['n']} of {r['m']} caches with a region; "
             f"{ncand} candidate(s), {len(untriaged)} untriaged; {out}/gaps.md"]
    lines += [f"  untriaged candidate: {line}" for line in untriaged]
    lines += [f"  region without a site and without a reason: {name}" for name in unexplained]
    _print_lines(lines)
    return 1 if untriaged or unexplained else 0


def _print_lines(lines: list[str]) -> None:
    """LINES on standard output; a reader that left early (`| head`) ends
    the output, not the run: no traceback, the status stays the scan's."""
    try:
        for line in lines:
            print(line)
        sys.stdout.flush()
    except BrokenPipeError:
        # stdout is closed at exit too: point it at /dev/null so that the
        # interpreter's last flush has nowhere to fail
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def command(args: GapsOptions) -> int:
    """The scan's exit status, or 2 with one line on stderr for bad input."""
    try:
        return run(args)
    except GapsError as exc:
        print(f"gaps: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
