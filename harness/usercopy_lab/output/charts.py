"""Charts of the hunt and bench pages, drawn by Debian's python3-matplotlib
as SVG text to put inline in a page (nothing to fetch, searchable text).

Each chart is a Chart: the SVG with a <title> and <desc> inside it (what a
screen reader says; the pages also print the numbers as a table beside
it).  matplotlib's Figure is used directly, without pyplot and its global
figure registry; the rc settings hold only inside rc_context.
"""
from __future__ import annotations

import io
import re
from dataclasses import dataclass
from html import escape

import matplotlib
from matplotlib.figure import Figure

from ..model import Direction

RC = {"svg.fonttype": "none",          # text stays text (searchable, small)
      "svg.hashsalt": "usercopy-lab",  # the same ids on every run: diffable pages
      "font.size": 9}
COLOURS = {Direction.EXPOSURE: "#1565c0", Direction.OVERWRITE: "#ef6c00", None: "#bdbdbd"}


@dataclass(frozen=True)
class Chart:
    """One chart: an id for the page, its SVG and what it shows in words."""

    ident: str
    title: str
    description: str
    svg: str


@dataclass(frozen=True)
class CoverageBar:
    """One cache with a region: checked copies seen per direction."""

    cache: str
    exposure: int
    overwrite: int


@dataclass(frozen=True)
class Ratio:
    """One syscall case: the median ratio and its spread over repetitions."""

    case: str
    median: float
    low: float
    high: float


def _svg(fig: Figure, ident: str, title: str, description: str) -> Chart:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    text = buf.getvalue()
    text = _own_ids(text[text.index("<svg"):], ident)   # no XML prolog or DOCTYPE inline
    head = (f'<title id="{ident}-title">{escape(title)}</title>'
            f'<desc id="{ident}-desc">{escape(description)}</desc>')
    text = re.sub(r"<svg\b([^>]*)>", lambda m: f'<svg{m[1]} role="img" aria-labelledby='
                  f'"{ident}-title {ident}-desc">{head}', text, count=1)
    return Chart(ident, title, description, text)


def _own_ids(svg: str, ident: str) -> str:
    """Every id of the SVG renamed IDENT-N in order: unique among the
    charts inline in one page, and the same on every run (matplotlib
    names clip paths after object ids)."""
    names = {old: f"{ident}-{n}" for n, old in
             enumerate(dict.fromkeys(re.findall(r'\bid="([^"]+)"', svg)), 1)}
    if not names:
        return svg
    pattern = re.compile(r'(?<=id=")[^"]+(?=")|(?<=#)[^"\s)]+(?=[")])')
    return pattern.sub(lambda m: names.get(m[0], m[0]), svg)


def coverage_chart(bars: list[CoverageBar], ident: str = "coverage") -> Chart:
    """Checked copies per cache with a region, both directions, log scale;
    a cache and direction never copied is a grey tick at zero."""
    with matplotlib.rc_context(RC):
        fig = Figure(figsize=(8, 1.2 + 0.2 * len(bars)))
        ax = fig.add_subplot()
        rows = range(len(bars))
        for offset, direction in ((-0.2, "exposure"), (0.2, "overwrite")):
            hits = [getattr(b, direction) for b in bars]
            ax.barh([r + offset for r in rows], [h or 0.8 for h in hits], height=0.38,
                    color=[COLOURS[direction] if h else COLOURS[None] for h in hits],
                    label=direction)
        ax.set_xscale("log")
        ax.set_xlim(left=0.5)
        ax.set_yticks(list(rows), [b.cache for b in bars], fontsize=7)
        ax.set_ylim(len(bars) - 0.5, -0.5)            # first cache on top, no margins
        ax.set_xlabel("checked copies seen by the probe (log scale; grey: none)")
        ax.legend(loc="lower right")
        ax.set_title("Copies per cache with a region, by direction")
    seen = sum(1 for b in bars if b.exposure or b.overwrite)
    both = sum(1 for b in bars if b.exposure and b.overwrite)
    return _svg(fig, ident, "Coverage per cache with a usercopy region",
                f"Horizontal bars, two per cache (exposure, overwrite), of the checked "
                f"copies the probe counted: {seen} of {len(bars)} caches with a region saw "
                f"a copy, {both} in both directions.  The table below has the numbers.")


def distribution_chart(samples: dict[str, list[float]], ident: str = "guest-seconds") -> Chart:
    """Per-guest seconds of each run, as box plots with every guest a dot."""
    labels = list(samples)
    with matplotlib.rc_context(RC):
        fig = Figure(figsize=(8, 1.0 + 0.55 * len(labels)))
        ax = fig.add_subplot()
        ax.boxplot([samples[k] for k in labels], vert=False, labels=labels, showfliers=False)
        for i, label in enumerate(labels, 1):
            values = samples[label]
            ax.plot(values, [i + ((j % 7) - 3) * 0.03 for j in range(len(values))], "o",
                    markersize=2, alpha=0.5, color=COLOURS[Direction.EXPOSURE])
        ax.set_xlabel("seconds per guest")
        ax.invert_yaxis()
        ax.set_title("Time per guest")
    return _svg(fig, ident, "Distribution of the time per guest",
                "Box plots (median, quartiles, whiskers to 1.5 IQR) of the seconds each "
                "guest took, one row per run, every guest a dot: "
                + "; ".join(f"{k}: {len(v)} guests" for k, v in samples.items())
                + ".  The table below has median and p90.")


def ratio_chart(ratios: dict[str, list[Ratio]], ident: str = "overhead") -> Chart:
    """Per syscall case, the cost ratio of each comparison as percent over
    1.0, the bar the median, the whisker the spread over repetitions."""
    names = list(ratios)
    cases = [r.case for r in ratios[names[0]]] if names else []
    with matplotlib.rc_context(RC):
        fig = Figure(figsize=(8, 1.2 + 0.22 * len(cases) * max(1.5, len(names))))
        ax = fig.add_subplot()
        height = 0.8 / max(1, len(names))
        for n, name in enumerate(names):
            ys = [c + (n - (len(names) - 1) / 2) * height for c in range(len(cases))]
            med = [(r.median - 1) * 100 for r in ratios[name]]
            err = [[(r.median - r.low) * 100 for r in ratios[name]],
                   [(r.high - r.median) * 100 for r in ratios[name]]]
            ax.barh(ys, med, height=height * 0.9, xerr=err, label=name,
                    color=list(COLOURS.values())[n % 3], capsize=2)
        ax.axvline(0, color="black", linewidth=0.6)
        ax.set_yticks(list(range(len(cases))), cases, fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel("extra guest instructions per call, % (median; whisker: min..max)")
        ax.legend(loc="lower right")
        ax.set_title("Hardening cost per syscall case")
    worst = max((r for rs in ratios.values() for r in rs), key=lambda r: r.median, default=None)
    return _svg(fig, ident, "Overhead per syscall case",
                f"Horizontal bars per syscall case of {', '.join(names)}: the percent of "
                "guest instructions per call above 1.0"
                + (f"; the largest is {worst.case} at {(worst.median - 1) * 100:.1f} %"
                   if worst else "") + ".  The table below has the numbers.")
