"""Check a run's index.html against its results.json, as a reader would
find it: one matrix cell per trigger and suite with that verdict as its
text, every link leading to a file that is there (each trigger's page and
its console), nothing fetched from a network, and the accessible basics
(one <h1>, header cells with scope, a caption per table, text for every
image).  `make results-check` runs it on the last run; the tests on a
fixture.

  usercopy-lab check page RUN_DIR

Exit status 0 the page agrees, 1 it does not (one line per problem), 2 bad
input (no results.json).
"""
from __future__ import annotations

import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

from ..inputs import shown
from .page_model import PageError, load_run

INDEX = "index.html"
_REMOTE = re.compile(r"^(?:[a-z][a-z0-9+.-]*:)?//", re.I)
_CSS_URL = re.compile(r"url\(\s*['\"]?([^'\")]+)", re.I)
LINK_ATTRS = ("href", "src", "srcset", "data", "poster", "action")


@dataclass
class PageFacts:
    """What one HTML file holds that the checks look at."""

    cells: list[tuple[str, str, str, str]] = field(default_factory=list)  # suite, trigger, verdict, text
    links: list[str] = field(default_factory=list)
    headings: list[str] = field(default_factory=list)
    header_cells: int = 0
    header_cells_without_scope: int = 0
    tables: int = 0
    captions: int = 0
    images_without_text: int = 0
    diff_rows: list[str] = field(default_factory=list)    # data-kind of each


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.facts = PageFacts()
        self._cell: list[str] | None = None
        self._cell_attrs: dict[str, str] = {}
        self._style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        f = self.facts
        f.links += [a[k] for k in LINK_ATTRS if k in a]
        f.links += _CSS_URL.findall(a.get("style", ""))
        if tag in ("h1", "h2", "h3"):
            f.headings.append(tag)
        elif tag == "th":
            f.header_cells += 1
            f.header_cells_without_scope += "scope" not in a
        elif tag == "table":
            f.tables += 1
        elif tag == "caption":
            f.captions += 1
        elif tag == "img" and not a.get("alt"):
            f.images_without_text += 1
        elif tag == "tr" and "data-kind" in a:
            f.diff_rows.append(a["data-kind"])
        elif tag == "style":
            self._style = True
        elif tag == "td" and "data-verdict" in a:
            self._cell, self._cell_attrs = [], a

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._cell is not None:
            a = self._cell_attrs
            self.facts.cells.append((a.get("data-suite", ""), a.get("data-trigger", ""),
                                     a["data-verdict"], "".join(self._cell).strip()))
            self._cell = None
        elif tag == "style":
            self._style = False

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        if self._style:
            self.facts.links += _CSS_URL.findall(data)


def key_differences(want: Mapping[tuple[str, str], str | None],
                    seen: Mapping[tuple[str, str], str | None], where: str,
                    form: Callable[[str | None], str] = str) -> list[str]:
    """One line per (suite, trigger) missing from seen, not in want, or
    with another value there (form() shows a value)."""
    out = []
    for key in sorted(want.keys() | seen.keys()):
        name = f"{key[0]}/{key[1]}"
        if key not in seen:
            out.append(f"{where} {name} missing")
        elif key not in want:
            out.append(f"{where} {name} not in results.json")
        elif seen[key] != want[key]:
            out.append(f"{where} {name}: expected {form(want[key])}, found {form(seen[key])}")
    return out


def read_page(path: Path) -> PageFacts:
    reader = _Reader()
    reader.feed(path.read_text(encoding="utf-8"))
    reader.close()
    return reader.facts


def link_problems(page: Path, links: list[str]) -> list[str]:
    """A link that goes to a network, or to a file that is not there."""
    problems = []
    for link in links:
        if _REMOTE.match(link) or urlsplit(link).scheme in ("http", "https", "ftp", "ws", "wss"):
            problems.append(f"{page.name}: loads or links a network resource: {shown(link)}")
            continue
        target = unquote(urlsplit(link).path)
        if not target or link.startswith(("#", "data:", "mailto:")):
            continue
        if not (page.parent / target).is_file():
            problems.append(f"{page}: link to {shown(link)}: no such file")
    return problems


def accessibility_problems(page: Path, f: PageFacts) -> list[str]:
    problems = []
    if f.headings.count("h1") != 1:
        problems.append(f"{page.name}: {f.headings.count('h1')} <h1>, want one")
    if f.header_cells_without_scope:
        problems.append(f"{page.name}: {f.header_cells_without_scope} <th> without scope")
    if f.captions < f.tables:
        problems.append(f"{page.name}: {f.tables - f.captions} table(s) without a caption")
    if f.images_without_text:
        problems.append(f"{page.name}: {f.images_without_text} image(s) without alt text")
    return problems


def check_page(run_dir: Path) -> list[str]:
    """Every problem of RUN_DIR/index.html and the pages it links."""
    run = load_run(run_dir)
    index = run_dir / INDEX
    if not index.is_file():
        return [f"{index}: missing"]
    facts = read_page(index)
    problems = accessibility_problems(index, facts) + link_problems(index, facts.links)
    want = {(r.suite, r.trigger): r.verdict.value for r in run.results}
    seen: dict[tuple[str, str], str] = {}
    for suite, trigger, verdict, text in facts.cells:
        if (suite, trigger) in seen:
            problems.append(f"{index.name}: two cells for {suite}/{trigger}")
        seen[(suite, trigger)] = verdict
        if verdict not in text:
            problems.append(f"{index.name}: cell {suite}/{trigger} says {shown(text)!r}, "
                            f"not its verdict {verdict}")
    problems += key_differences(want, seen, f"{index.name}: cell")
    for link in dict.fromkeys(facts.links):
        page = index.parent / unquote(urlsplit(link).path)
        if link.endswith(".html") and not _REMOTE.match(link) and page.is_file() \
                and page.resolve().is_relative_to(run_dir.resolve()):
            sub = read_page(page)
            problems += accessibility_problems(page, sub) + link_problems(page, sub.links)
    return problems


def command(run_dir: Path) -> int:
    """`usercopy-lab check page`: 0 index.html agrees with results.json, 1 it
    does not (each difference a line), 2 the check could not be done."""
    try:
        problems = check_page(run_dir)
        cells = len(load_run(run_dir).results)
    except PageError as exc:
        print(f"check page: {shown(exc, None)}", file=sys.stderr)
        return 2
    for p in problems:
        print(f"check page: {p}")
    print(f"check page: {run_dir / INDEX}: {cells} cells, "
          f"{'agrees with' if not problems else 'DISAGREES with'} results.json")
    return 1 if problems else 0

