"""The report in a real browser (headless Chromium over CDP): no console errors, no request but the
file itself, every chart drawn as a non-empty SVG, printable to PDF, the first screen (the top 900 px
of a 1,400 px window) showing the headline figures, the action list and the arrivals, and a
screenshot of it.

`SHIPSYNC_REPORT_SCREENSHOT=docs/report-top.png uv run pytest tests/report/test_report_browser.py` also
writes the screenshot docs/report.md shows.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from shipsync.report import build_report
from shipsync.report.tables import MAX_TABLE_ROWS
from shipsync.report.tariff import Tariff
from support.browser import INSTALL, chromium_path, open_page
from support.fleet import build_fleet
from support.lake import location

pytestmark = pytest.mark.slow

# Per chart figure: its id, how many drawn shapes its SVG holds and how tall it renders, and what of
# it is wider than the figure (its card): a chart, a table, or a table that scrolls inside its card.
PROBE = """({
  figures: [...document.querySelectorAll('figure')].map(f => {
    const svg = f.querySelector('svg.chart');
    const box = svg ? svg.getBoundingClientRect() : null;
    const card = f.getBoundingClientRect();
    const wider = [...f.querySelectorAll('svg.chart, table, .table-wrap, figcaption, p')]
      .filter(e => e.getBoundingClientRect().right > card.right + 0.5 || e.scrollWidth > e.clientWidth + 0.5)
      .map(e => e.tagName.toLowerCase() + (e.className && e.className.baseVal === undefined ? '.' + e.className : ''));
    return {id: f.id, shapes: svg ? svg.querySelectorAll('path, rect, use, text').length : 0,
            width: box ? box.width : 0, height: box ? box.height : 0,
            table: f.querySelectorAll('table tbody tr').length, empty: !!f.querySelector('p.empty'), wider: wider};
  }),
  title: document.title,
  overflow: document.documentElement.scrollWidth > window.innerWidth,
  // Where, on the first screen, each of its parts ends: the headline figures, and the caption and
  // first row of the action list and of the arrivals (their other rows scroll inside their card).
  firstScreen: Object.fromEntries(['headline', 'pickup_risk', 'upcoming_arrivals'].map(id => {
    const f = document.getElementById(id);
    const last = id === 'headline' ? f.querySelector('.cards') : f.querySelector('tbody tr');
    return [id, {caption: f.querySelector('figcaption').getBoundingClientRect().bottom,
                 bottom: last ? last.getBoundingClientRect().bottom : null,
                 text: last ? last.innerText : ''}];
  })),
})"""

FIRST_SCREEN_PX = 900


@pytest.fixture(scope="module")
def chromium() -> str:
    path = chromium_path()
    if path is None:
        pytest.skip(f"chromium is not installed: {INSTALL}")
    return path


def test_the_report_in_a_browser(chromium: str, tmp_path: Path) -> None:
    fleet = build_fleet(tmp_path / "fleet", documents=200, containers=12)
    # The sandbox charges USD 175 for each day past a last free day.
    tariff = Tariff(demurrage_per_day=175, detention_per_day=150)
    result = build_report(fleet.lake, tmp_path / "report.html", days=365, spool=fleet.spool_dir, tariff=tariff)
    visit = open_page(result.path, PROBE, width=1400, height=FIRST_SCREEN_PX)
    assert visit.console_errors == []
    assert visit.requests == [result.path.resolve().as_uri()]
    figures = {f["id"]: f for f in visit.probe["figures"]}
    assert set(figures) == {o.chart.key for o in result.outcomes}
    for outcome in result.outcomes:
        shown = figures[outcome.chart.key]
        if outcome.state != "drawn":
            assert shown["empty"], outcome.chart.key
        elif outcome.html.startswith("<svg"):
            assert shown["shapes"] > 10 and shown["width"] > 300 and shown["height"] > 100, (outcome.chart.key, shown)
        elif "<table" in outcome.html:
            assert shown["table"] == min(outcome.rows, MAX_TABLE_ROWS), outcome.chart.key
    first = visit.probe["firstScreen"]
    assert all(part["bottom"] is not None and part["bottom"] <= FIRST_SCREEN_PX for part in first.values()), first
    assert (
        "on the water" in first["headline"]["text"] and "fees to date" in first["headline"]["text"] and "USD" in first["headline"]["text"]
    )
    assert "USD" in first["pickup_risk"]["text"]  # the most urgent box, its fees or projected cost in their currency
    assert "UTC" in first["upcoming_arrivals"]["text"]  # the soonest vessel call and its ETA
    assert not visit.probe["overflow"]  # nothing wider than a laptop's window
    assert {f["id"]: f["wider"] for f in visit.probe["figures"] if f["wider"]} == {}  # nor than its card (the pickup-risk table was)
    assert visit.pdf.startswith(b"%PDF-") and visit.pdf.count(b"/Type /Page\n") + visit.pdf.count(b"/Type /Page ") >= 2
    assert visit.screenshot_png.startswith(b"\x89PNG")
    (tmp_path / "report-top.png").write_bytes(visit.screenshot_png)
    if target := os.environ.get("SHIPSYNC_REPORT_SCREENSHOT"):
        Path(target).write_bytes(visit.screenshot_png)


def test_an_empty_report_in_a_browser(chromium: str, tmp_path: Path) -> None:
    result = build_report(location(tmp_path / "none"), tmp_path / "report.html", spool=tmp_path / "spool")
    visit = open_page(result.path, PROBE)
    assert visit.console_errors == [] and visit.requests == [result.path.resolve().as_uri()]
    assert all(f["empty"] and f["shapes"] == 0 for f in visit.probe["figures"])
    assert visit.pdf.startswith(b"%PDF-")
