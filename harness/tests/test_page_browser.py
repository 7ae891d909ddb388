"""The pages as a person sees them: Debian's headless chromium opens the
results, hunt and bench pages made from the committed real runs
(testdata/results-page/, testdata/hunt-bench-pages/), takes a screenshot
that must not be blank and must show the verdict and chart colours, dumps
the DOM, which must hold the matrix with a cell per trigger, and logs its
network (--log-net-log): the page may request nothing but files.  A
deliberately bad page proves the network check sees a request.

Skipped only when chromium is not installed (`make deps` installs it, so
`make test` runs this; a bare `make unit-test` installs only the Python
packages)."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from matplotlib import image

from usercopy_lab.output import bench_page, html_page, hunt_page

TESTDATA = Path(__file__).parent / "testdata"
BROWSER = shutil.which("chromium")
pytestmark = pytest.mark.skipif(
    BROWSER is None, reason="chromium is not installed (Debian's chromium: make deps installs "
    "it): the pages are not checked in a browser")
PASS_GREEN = (0xc8, 0xe6, 0xc9)      # base.html.j2's .v-PASS
EXPOSURE_BLUE = (0x15, 0x65, 0xc0)   # charts.COLOURS["exposure"]


def chromium(tmp: Path, page: Path, *what: str, size: str = "1280,1000") -> tuple[str, list[str]]:
    """Run chromium on page with what (--screenshot=F, --dump-dom); its
    stdout and the URLs the page itself asked the network for."""
    net = tmp / f"net-{page.stem}.json"
    proc = subprocess.run(
        [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={tmp / 'profile'}", "--proxy-server=http://127.0.0.1:9",
         "--host-resolver-rules=MAP * ~NOTFOUND", f"--log-net-log={net}",
         f"--window-size={size}", *what, page.resolve().as_uri()],
        capture_output=True, text=True, timeout=180, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout, page_requests(net)


def page_requests(netlog: Path) -> list[str]:
    """URLs the page requested (a file:// page's requests have the opaque
    origin "null" as initiator; chromium's own background requests, which
    the flags above mostly stop, have none)."""
    data = json.loads(netlog.read_text())
    start = data["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    urls = [e["params"] for e in data["events"] if e["type"] == start and "url" in e.get("params", {})]
    return [p["url"] for p in urls if p.get("initiator") != "not an origin"
            and not p["url"].startswith(("file:", "data:"))]


def pixels(png: Path):
    """Every 4th pixel of every 4th row, as 0-255 RGB (a numpy array):
    enough to see a page, small enough to leave this worker's peak memory
    alone (test_triage_bounds measures a child's peak RSS, which counts the
    worker's it was forked from: the whole screenshot as float and int
    arrays took a worker to 240 MB)."""
    return (image.imread(str(png))[::4, ::4, :3] * 255).round().astype("uint8")


def assert_not_blank(png: Path, colour: tuple[int, int, int]) -> None:
    img = pixels(png)
    background = (img == img[0, 0]).all(axis=2).mean()
    assert background < 0.97, f"{png.name}: {background:.1%} of it is one colour"
    assert (img == colour).all(axis=2).sum() > 30, f"{png.name}: no {colour} area"


def test_results_page_renders_with_its_matrix_and_fetches_nothing(tmp_path):
    results = Path(shutil.copytree(TESTDATA / "results-page" / "results", tmp_path / "results"))
    index = html_page.write_page(results / "20261206-122629-8771")
    shot = tmp_path / "index.png"
    _, asked = chromium(tmp_path, index, f"--screenshot={shot}")
    assert asked == []
    assert_not_blank(shot, PASS_GREEN)
    dom, asked = chromium(tmp_path, index, "--dump-dom")
    assert asked == []
    assert '<table class="matrix" id="results-matrix">' in dom
    assert dom.count("data-verdict=") == 9 and "Δ PASS" in dom
    page = results / "20261206-122629-8771" / "page" / "default" / "USERCOPY_SLAB_SIZE_TO.html"
    dom, asked = chromium(tmp_path, page, "--dump-dom")
    assert asked == [] and 'class="mark-report"' in dom


def test_hunt_and_bench_charts_render(tmp_path):
    hunt = Path(shutil.copytree(TESTDATA / "hunt-bench-pages", tmp_path / "pages"))
    for page in (hunt_page.write_hunt_page(hunt / "hunt" / "20261206-122759-12733"),
                 bench_page.write_bench_page(hunt / "bench" / "bench-20261206-133530")):
        shot = tmp_path / f"{page.parent.name}.png"
        _, asked = chromium(tmp_path, page, f"--screenshot={shot}", size="1100,1800")
        assert asked == []
        assert_not_blank(shot, EXPOSURE_BLUE)


def test_the_network_check_sees_a_page_that_fetches(tmp_path):
    bad = tmp_path / "bad.html"
    bad.write_text('<!DOCTYPE html><title>x</title><h1>x</h1>'
                   '<img src="http://example.invalid/a.png" alt="a">')
    _, asked = chromium(tmp_path, bad, "--dump-dom")
    assert asked == ["http://example.invalid/a.png"]
