"""The front door stays true (issue #37): what the README and docs/
promise about make, results/latest and their own links.

- results/latest after `make` or `make test` is the last full suite run:
  every other harness run that make and make test start (the RDS mutant,
  the hunt smoke test), and every mutant or overlay run of any target,
  writes under a results folder of its own;
- every relative link of README.md and docs/*.md names a file that exists,
  and its #anchor a heading of that file as GitHub renders it;
- the names say which kernel a suite boots and whose golden folder is whose;
- README.md and docs/ are reference: dated measurements, machine paths and
  the lab's stop numbers live in docs/history.md only.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


# ---- make's database: rules, recipes, variables ----------------------------

@lru_cache(maxsize=1)
def _database() -> str:
    if not shutil.which("make"):
        pytest.skip("no make")
    # -p prints make's database, -q runs no recipe (nothing is built or booted)
    out = subprocess.run(["make", "-C", str(REPO), "-pq", "help"], capture_output=True,
                         text=True, timeout=60)
    assert "# Make data base" in out.stdout, out.stderr
    return out.stdout


RULE = re.compile(r"^([A-Za-z0-9_./%$()-]+):(?![=:])\s*(.*)$")


@lru_cache(maxsize=1)
def _rules() -> dict[str, tuple[list[str], list[str]]]:
    """target -> (prerequisites, recipe commands with continuations joined)."""
    rules: dict[str, tuple[list[str], list[str]]] = {}
    lines = _database().split("\n")
    i = 0
    while i < len(lines):
        m = RULE.match(lines[i])
        i += 1
        if not m or lines[i - 1].startswith(("#", "\t")):
            continue
        target, prereqs = m.group(1), m.group(2).split("|")[0].split()
        recipe: list[str] = []
        while i < len(lines) and lines[i] != "":
            line = lines[i]
            i += 1
            if line.startswith("\t"):
                command = line[1:]
                while command.endswith("\\") and i < len(lines):
                    command = command[:-1] + " " + lines[i].lstrip("\t")
                    i += 1
                recipe.append(command)
        if target not in rules or recipe:
            rules[target] = (prereqs, recipe)
    return rules


def _variable(name: str) -> str:
    m = re.search(rf"^{re.escape(name)} :?= (.*)$", _database(), re.M)
    assert m, f"{name} not in make's database"
    return m.group(1)


HARNESS_RUN = re.compile(r"(\$\(HARNESS\)|\$\(HUNT\)|usercopy-lab|usercopy_lab\.cli) run\b")


def _results_of(command: str) -> str | None:
    """The results folder a recipe command makes the harness write, or None
    when the command runs no harness run."""
    words = command.split()
    script = [n for n, w in enumerate(words) if w.endswith("scripts/mutation-run.sh")]
    if script:
        positional, n = [], script[0] + 1
        while n < len(words):
            if words[n].startswith("--"):
                n += 2
                continue
            positional.append(words[n])
            n += 1
        assert len(positional) >= 4, command   # TREE BUILD INITRAMFS RESULTS ...
        return positional[3]
    if HARNESS_RUN.search(command):
        m = re.search(r"--results\s+(\S+)", command)
        assert m, f"a harness run without --results: {command}"
        return m.group(1)
    return None


def _runs() -> list[tuple[str, str, str]]:
    """(target, command, results folder) of every harness run in a recipe."""
    found = []
    for target, (_, recipe) in _rules().items():
        for command in recipe:
            results = _results_of(command)
            if results is not None:
                found.append((target, command, results))
    return found


def _reached(goal: str) -> set[str]:
    """The targets `make GOAL` runs: prerequisites, and the targets its
    recipes hand to $(MAKE), transitively."""
    rules = _rules()
    seen, todo = set(), [goal]
    while todo:
        target = todo.pop()
        if target in seen or target not in rules:
            continue
        seen.add(target)
        prereqs, recipe = rules[target]
        todo += prereqs
        for command in recipe:
            if "$(MAKE)" in command:
                expanded = re.sub(r"\$\((TESTS_BESIDE_KERNELS|KERNEL_VARIANTS)\)",
                                  lambda m: _variable(m.group(1)), command)
                todo += [w.strip('"') for w in expanded.split()]
    return seen


def test_the_parser_sees_the_runs_it_is_about():
    runs = {target for target, _, _ in _runs()}
    for target in ("suite", "mutation-rds", "mutation-demo", "series-vmalloc-proof",
                   "mutation-anybus", "hunt-smoke", "hunt", "suite-kasan"):
        assert target in runs, f"no harness run found in make {target}'s recipe"
    assert {"suite", "mutation-rds", "hunt-smoke"} <= _reached("test")
    assert "suite" in _reached("all")


def test_mutant_and_overlay_runs_write_their_own_results_folder():
    """A run of a mutant kernel (scripts/mutation-run.sh) or against overlay
    golden folders (--golden-overlay) must not move results/latest: after
    `make test`, whose mutation-rds runs after the suites, results/latest
    would be the mutant's run and README's "open results/latest" wrong."""
    assert _variable("MUTANT_RESULTS") == "$(RESULTS)/mutants"
    for target, command, results in _runs():
        if "mutation-run.sh" in command or "--golden-overlay" in command:
            assert results == "$(MUTANT_RESULTS)", (
                f"make {target} writes {results}, not $(MUTANT_RESULTS): {command}")


@pytest.mark.parametrize("goal", ["all", "test"])
def test_results_latest_after_make_is_the_suite_run(goal):
    """Of the harness runs `make` and `make test` start, only make suite's
    (the full suite run) writes $(RESULTS) itself; the others write a folder
    below it, with a latest of its own."""
    for target in sorted(_reached(goal)):
        for command in _rules()[target][1]:
            results = _results_of(command)
            if results is None:
                continue
            if target == "suite":
                assert results == "$(RESULTS)", command
            else:
                assert results.startswith("$(RESULTS)/") or results == "$(MUTANT_RESULTS)", (
                    f"make {goal} runs make {target}, whose run writes {results}: "
                    f"results/latest would be its run, not the suites'")


def test_mutation_run_judges_the_run_it_wrote():
    """scripts/mutation-run.sh reads results.json from the latest of the
    results folder it was given, so a folder of its own is enough."""
    script = (REPO / "scripts/mutation-run.sh").read_text()
    assert '--results "$results"' in script
    assert '"$results/latest/results.json"' in script


# ---- links of README.md and docs/*.md ---------------------------------------

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
LINK = re.compile(r"(?<!!)\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^()\s]+)\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def _prose_raw(path: Path) -> list[tuple[int, str]]:
    """(line number, line) outside fenced code blocks."""
    out, fenced = [], False
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            out.append((n, line))
    return out


def _prose(path: Path) -> list[tuple[int, str]]:
    """_prose_raw() with inline code removed."""
    return [(n, re.sub(r"`[^`]*`", "``", line)) for n, line in _prose_raw(path)]


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a heading: markup dropped, lowercase, every
    character but letters, digits, spaces, '-' and '_' removed, spaces to '-'."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)   # [text](url) -> text
    text = re.sub(r"<[^>]+>", "", text)
    text = text.replace("`", "").replace("*", "")
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


@lru_cache(maxsize=None)
def anchors(path: Path) -> frozenset[str]:
    seen: dict[str, int] = {}
    found = set()
    for _, line in _prose_raw(path):
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        slug = github_slug(m.group(1))
        if slug in seen:
            seen[slug] += 1
            slug = f"{slug}-{seen[slug]}"
        else:
            seen[slug] = 0
        found.add(slug)
    return frozenset(found)


def test_github_slug():
    assert github_slug("An interactive guest: `make shell`") == "an-interactive-guest-make-shell"
    assert github_slug("Running the suite on a LAVA farm") == "running-the-suite-on-a-lava-farm"
    assert github_slug("6.1 → 6.12: what moved") == "61--612-what-moved"
    assert github_slug("seeds_fallback (on demand)") == "seeds_fallback-on-demand"


def test_duplicate_headings_get_numbered(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# A\n\n## Notes\n\n```\n# not a heading\n```\n\n## Notes\n\n## Notes\n")
    assert anchors(page) == {"a", "notes", "notes-1", "notes-2"}


def _links() -> list[tuple[Path, int, str]]:
    found = []
    for doc in DOCS:
        for n, line in _prose(doc):
            for target in LINK.findall(line):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):   # http:, mailto:, ...
                    continue
                found.append((doc, n, target))
    return found


def test_the_docs_have_links_to_check():
    assert len(_links()) > 30


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_resolve(doc):
    broken = []
    for source, n, target in _links():
        if source != doc:
            continue
        path, _, anchor = target.partition("#")
        dest = (source.parent / path).resolve() if path else source
        where = f"{source.relative_to(REPO)}:{n}: ({target})"
        if not dest.exists():
            broken.append(f"{where}: no {path}")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{where}: no heading #{anchor} in {dest.relative_to(REPO)}")
    assert not broken, "\n".join(broken)


# ---- names: which kernel a suite boots, whose golden folder is whose --------

def _suites() -> dict:
    import tomllib
    return tomllib.loads((REPO / "suites.toml").read_text())


def _golden(suite: dict) -> list[str]:
    golden = suite["golden"]
    return [golden] if isinstance(golden, str) else golden


def test_a_suite_named_like_a_kernel_boots_that_kernel():
    """Suite `lab` boots build/kernel-lab, `seeds` build/kernel-seeds, ...;
    no kernel variant and no golden folder is called `default`, whose suite
    boots the seeds kernel against expected-oops/seeds and expected-oops/lab."""
    suites = _suites()
    kernels = {s["kernel"] for s in suites.values()}
    assert "default" not in kernels
    assert not (REPO / "expected-oops" / "default").exists()
    # nosplit turns the split off at boot on the seeds kernel; the suite of
    # the nosplit kernel (the split compiled out) is nosplit-kconfig
    boot_parameter_twins = {"nosplit": "nosplit-kconfig"}
    for name, suite in suites.items():
        if name in boot_parameter_twins:
            assert suites[boot_parameter_twins[name]]["kernel"] == name
        elif name in kernels:
            assert suite["kernel"] == name, f"suite {name} boots kernel {suite['kernel']}"
    assert suites["default"]["kernel"] == "seeds"
    assert _golden(suites["default"]) == ["expected-oops/seeds", "expected-oops/lab"]
    assert suites["lab"]["kernel"] == "lab" and _golden(suites["lab"]) == ["expected-oops/lab"]
    # the Makefile's variant list names the kernel of lab.config alone the same way
    makefile = (REPO / "Makefile").read_text()
    assert re.search(r"^ALL_VARIANTS := lab\b", makefile, re.M)
    assert re.search(r"^OPTIONAL_VARIANTS := lab\b", makefile, re.M)
    assert re.search(r"^suite-lab: \$\(BUILD\)/kernel-lab/", makefile, re.M)


def test_docs_suites_table_says_each_suites_kernel_and_golden_folders():
    """docs/suites.md's table has a row for every suite of suites.toml, and
    that row names the suite's build/kernel-NAME and its golden folders in
    the order the harness searches them."""
    suites = _suites()
    text = (REPO / "docs" / "suites.md").read_text()
    rows = [line for line in text.splitlines()
            if line.startswith("| `") and line.count(" | ") >= 3]
    seen = set()
    for row in rows:
        first, kernel, golden, _ = row.strip("|").split(" | ", 3)
        names = re.findall(r"`([^`]+)`", first.split("(")[0])
        for name in names:
            assert name in suites, f"docs/suites.md names suite {name}, not in suites.toml"
            assert name not in seen, f"suite {name} has two rows"
            seen.add(name)
            suite = suites[name]
            assert f"`build/kernel-{suite['kernel']}`" in kernel, (name, kernel)
            want = ", ".join(f"`{g.removeprefix('expected-oops/')}/`" for g in _golden(suite))
            assert want in golden, f"{name}: golden folders {want}, the row says {golden}"
    assert seen == set(suites), f"suites without a row: {sorted(set(suites) - seen)}"


# ---- docs as reference: dated figures only in docs/history.md ---------------

ISO_DATE = re.compile(r"\b(?:19|20)\d\d-[01]\d-[0-3]\d\b")
MACHINE_PATH = re.compile(r"/work/")
STOP = re.compile(r"\bstop \d+\b")        # the lab's work sessions, "(stop 38)"

# The only lines of README.md and docs/ besides history.md that may hold one
# of those, and why.
ALLOWED = {
    # make bench rewrites docs/bench.md with its own output, whose "bench:"
    # lines name the run's date and the paths it looked at.
    "docs/bench.md": re.compile(r"^bench: "),
}


def test_dated_figures_and_machine_paths_live_in_history_only():
    found = []
    for doc in DOCS:
        name = str(doc.relative_to(REPO))
        if name == "docs/history.md":
            continue
        allowed = ALLOWED.get(name)
        for n, line in enumerate(doc.read_text().splitlines(), 1):
            if allowed and allowed.search(line):
                continue
            for what, pattern in (("a date", ISO_DATE), ("a machine path", MACHINE_PATH),
                                  ("a stop number", STOP)):
                if pattern.search(line):
                    found.append(f"{name}:{n}: {what}: {line.strip()[:100]}")
    assert not found, ("move dated measurements to docs/history.md, say the current "
                       "fact here:\n" + "\n".join(found))


def test_the_date_rule_sees_what_it_is_for():
    assert ISO_DATE.search("Measured 2026-12-05 (idle host)")
    assert MACHINE_PATH.search("log /work/logs/series-check.log")
    assert STOP.search("CI's clean-clone run (stop 39)")
    assert not ISO_DATE.search("docs/hunt-runs/20261206-171543-20530-findings.md")
    assert not STOP.search("Ctrl-C stops every guest")


def _commands() -> dict[str, list[str]]:
    """usercopy-lab's commands, each with its own subcommands (if any), as
    its parser has them."""
    import argparse

    from usercopy_lab.cli import main
    seen: dict[str, list[str]] = {}

    def choices(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
        return next((a.choices for a in parser._actions
                     if isinstance(a, argparse._SubParsersAction)), {})

    class Stop(Exception):
        pass

    def capture(self: argparse.ArgumentParser, *args: object, **kw: object) -> None:
        for name, sub in choices(self).items():
            seen[name] = list(choices(sub))
        raise Stop

    real = argparse.ArgumentParser.parse_known_args
    argparse.ArgumentParser.parse_known_args = capture      # the parser, built, not run
    try:
        main(["run"])
    except Stop:
        pass
    finally:
        argparse.ArgumentParser.parse_known_args = real
    return seen


def test_running_md_lists_every_command_of_the_cli():
    """docs/running.md's table of commands names every command and
    subcommand usercopy-lab has, and no other."""
    text = (REPO / "docs" / "running.md").read_text()
    table = text[text.index("| command | what it does |"):]
    table = table[:table.index("\n\n")]
    named: set[tuple[str, ...]] = set()
    for row in table.splitlines()[2:]:
        first = row.split("|")[1]
        command = None
        for span in re.findall(r"`([a-z -]+)`", first):
            words = span.split()
            if len(words) == 2:                       # `lava write`
                command = words[0]
                named.add(tuple(words))
            elif command is not None:                 # `validate` after `lava write`
                named.add((command, words[0]))
            else:                                     # `run`
                named.add((words[0],))
    want = {(command, sub) if sub else (command,)
            for command, subs in _commands().items() for sub in (subs or [None])}
    assert named == want, (sorted(want - named), sorted(named - want))


def test_make_kernels_builds_what_the_default_suites_boot():
    """`make kernels` (what make and make test build) is exactly the kernels
    of the suites a plain run boots; an on-demand suite's kernel (anybus,
    module, kasan ...) is built only when asked for."""
    from usercopy_lab.run.suite import default_names, load_suites
    suites = load_suites(REPO / "suites.toml")
    variants = {"lab"} | {p.stem.removeprefix("variant-")
                          for p in (REPO / "kernel-config").glob("variant-*.config")}
    booted = {suites[name].kernel for name in default_names(suites)} & variants
    assert set(_variable("KERNEL_VARIANTS").split()) == booted
