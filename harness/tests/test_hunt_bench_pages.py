"""The hunt and bench pages (output/hunt_page.py, output/bench_page.py)
from real outputs (testdata/hunt-bench-pages/, its README says which):
an inline SVG chart per figure with its title and description, the
numbers beside it as tables, links only to files that are there, nothing
from a network, and bad input as one line, exit 2."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from usercopy_lab.cli import main as cli_main
from usercopy_lab.output import bench_page, hunt_page
from usercopy_lab.output.page_check import accessibility_problems, link_problems, read_page

FIXTURES = Path(__file__).parent / "testdata" / "hunt-bench-pages"
HUNT_RUN = "hunt/20261206-122759-12733"
BENCH_RUN = "bench/bench-20261206-133530"


@pytest.fixture()
def copy(tmp_path):
    def one(name: str) -> Path:
        return Path(shutil.copytree(FIXTURES / name, tmp_path / name))
    return one


def svgs(text: str) -> list[str]:
    return re.findall(r"<svg\b.*?</svg>", text, re.S)


def check_structure(page: Path) -> str:
    facts = read_page(page)
    assert accessibility_problems(page, facts) == []
    assert link_problems(page, facts.links) == []
    text = page.read_text()
    for svg in svgs(text):
        assert 'role="img"' in svg.split(">", 1)[0]
        assert re.search(r"<title id=\"[\w-]+-title\">[^<]+</title><desc id=", svg)
    assert not re.search(r"""(?:src|href)=["']?(?:https?:)?//""", text)
    return text


def test_hunt_page_draws_coverage_per_cache_both_directions(copy):
    run = copy(HUNT_RUN)
    assert cli_main(["page", "hunt", str(run)]) == 0
    text = check_structure(run / "hunt" / "index.html")
    [chart] = svgs(text)
    assert "Coverage per cache with a usercopy region" in chart
    assert "67 of 117 caches with a region saw a copy, 44 in both directions" in chart
    for label in ("exposure", "overwrite", "names_cache", "usersized-kmalloc-cg-4k"):
        assert label in chart, label            # svg.fonttype none: text stays text
    table = text[text.index('<table id="coverage-table">'):]
    table = table[:table.index("</table>")]
    assert table.count('<th scope="row">') == 117
    assert '<a href="../hunt/guests/g001-calibrate.log">g001-calibrate</a>' in text
    assert "g002-stress-net</th>" in text           # its console is not in the fixture


def test_bench_page_draws_time_per_guest_and_overhead_per_syscall(copy):
    bench = copy(BENCH_RUN)
    assert cli_main(["page", "bench", str(bench)]) == 0
    text = check_structure(bench / "index.html")
    distribution, overhead = svgs(text)
    assert "snapshot-j1: 58 guests" in distribution and "full-j2" in distribution
    assert "getsockopt-raw-icmp-filter 4 at 39.5 %" in overhead
    assert "<th scope=\"row\">msgsnd-msgrcv 16</th><td>1252</td><td>1558</td>" in text
    assert "1.245 (1.245..1.245)" in text


def test_pages_are_the_same_when_made_twice(copy):
    run, bench = copy(HUNT_RUN), copy(BENCH_RUN)
    first = hunt_page.write_hunt_page(run).read_text(), bench_page.write_bench_page(bench).read_text()
    assert (hunt_page.write_hunt_page(run).read_text(),
            bench_page.write_bench_page(bench).read_text()) == first
    ids = re.findall(r'\bid="([^"]+)"', first[1])
    assert len(ids) == len(set(ids))            # two charts inline, no id twice


@pytest.mark.parametrize("page, words", [("hunt", "no such file (not a hunt's run folder?)"),
                                         ("bench", "not a `make bench` folder")])
def test_bad_input_is_one_line_and_exit_2(page, words, tmp_path, capsys):
    assert cli_main(["page", page, str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err


def test_findings_of_another_shape_are_one_line(tmp_path, capsys):
    (tmp_path / "hunt").mkdir()
    (tmp_path / "hunt" / "findings.json").write_text('{"coverage": {"caches": [{}]}}')
    assert cli_main(["page", "hunt", str(tmp_path)]) == 2
    assert "unexpected shape (KeyError" in capsys.readouterr().err


def test_hunt_page_says_the_coverage_against_the_finders_denominator(copy):
    run = copy("hunt/20261206-164220-14761")
    assert cli_main(["page", "hunt", str(run)]) == 0
    text = check_structure(run / "hunt" / "index.html")
    finder = text[text.index('<p id="finder">'):]
    finder = finder[:finder.index("</p>")]
    assert "112 of 140 (cache, direction) pairs = 80.0 % of the finder" in finder
