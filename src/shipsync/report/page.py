"""The report's one HTML file: inline CSS for screen and print, inline SVG charts, no script.

A Content-Security-Policy in the page itself forbids every request (only inline styles and
`data:` images are allowed), so even a browser that opens it online fetches nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime
from html import escape

from shipsync.plain_text import plain
from shipsync.report.model import ChartOutcome, Section, Windows
from shipsync.report.window import minute

FIRST_SCREEN = ("glance", "action", "arrivals")  # the sections a fleet manager sees without scrolling

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

CSS = """
:root { --ink: #1b1f24; --muted: #545d68; --rule: #d0d7de; --panel: #f6f8fa; --accent: #005a9c; --warn: #8a4b00; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--ink); background: #fff; line-height: 1.45;
       font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1400px; margin: 0 auto; padding: .8rem 1rem 3rem; }
header { display: flex; flex-wrap: wrap; align-items: baseline; gap: .2rem 1.2rem; }
header nav { margin-left: auto; }
header h1 { margin: 0; font-size: 1.4rem; }
header p { margin: 0; color: var(--muted); }
nav ol { display: flex; flex-wrap: wrap; gap: .2rem 1rem; padding: 0; margin: 0; list-style: none; font-size: .86rem; }
nav a { color: var(--accent); }
h2 { margin: 1.6rem 0 .3rem; padding-top: .5rem; border-top: 2px solid var(--rule); font-size: 1.25rem; }
section.first h2 { margin: .55rem 0 .25rem; padding-top: .25rem; border-top: 0; font-size: 1.08rem; }
section > p.intro { margin: 0 0 1rem; color: var(--muted); }
figure { margin: 0 0 1.6rem; padding: .8rem 1rem 1rem; border: 1px solid var(--rule); border-radius: 6px; }
section.first figure { position: relative; margin-bottom: .3rem; padding: .45rem .8rem .5rem; }
section.first figure > details { position: absolute; top: .45rem; right: .8rem; margin: 0; }
section.first figure > details[open] { position: static; margin-top: .5rem; }
figcaption { font-weight: 600; font-size: 1.02rem; }
figcaption .unit { display: block; font-weight: 400; font-size: .86rem; color: var(--muted); }
section.first figcaption { display: flex; flex-wrap: wrap; align-items: baseline; gap: 0 .8rem; padding-right: 10rem; }
section.first figcaption .unit { display: inline; }
.cards { display: grid; grid-template-columns: repeat(4, minmax(0, 1fr)); gap: .8rem; margin-top: .35rem; }
.card { padding: .35rem .8rem .45rem; background: var(--panel); border-radius: 6px; }
.figure-value { font-size: 1.6rem; font-weight: 700; font-variant-numeric: tabular-nums; line-height: 1.15; }
.figure-label { font-weight: 600; }
.figure-detail { font-size: .82rem; color: var(--muted); }
ul.sync-lines { margin: .5rem 0 0; padding-left: 1.2rem; }
.table-wrap.scroll { max-height: 13rem; overflow-y: auto; }
section.first p.note { margin-top: .15rem; }
section.first table { font-size: .8rem; }
section.first th, section.first td { padding: .22rem .45rem; }
section.first th { white-space: normal; vertical-align: bottom; }
td.wide { min-width: 11rem; }
svg.chart { display: block; width: 100%; height: auto; margin-top: .5rem; }
.banner { margin: 1.2rem 0; padding: .8rem 1rem; border-left: 4px solid var(--warn); background: #fff8ef; }
p.empty { margin: .6rem 0 .2rem; padding: .6rem .8rem; background: var(--panel); border-radius: 4px; }
p.note { font-size: .86rem; color: var(--muted); margin: .4rem 0 0; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .85rem; }
details { margin-top: .7rem; }
summary { cursor: pointer; color: var(--accent); font-size: .88rem; }
pre { overflow-x: auto; padding: .7rem .8rem; background: var(--panel); border-radius: 4px; white-space: pre; }
.table-wrap { overflow-x: auto; margin-top: .4rem; }
table { border-collapse: collapse; width: 100%; font-size: .86rem; }
th, td { padding: .3rem .5rem; border-bottom: 1px solid var(--rule); text-align: left; vertical-align: top; }
td:first-child, td.num, td.when { white-space: nowrap; }
th { background: var(--panel); position: sticky; top: 0; white-space: nowrap; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
footer { margin-top: 2.5rem; color: var(--muted); font-size: .85rem; }
@media (max-width: 900px) { .cards { grid-template-columns: repeat(2, minmax(0, 1fr)); } }
@media (max-width: 700px) { body { font-size: 14px; } main { padding: 1rem .6rem; } }
@media print {
  @page { size: A4; margin: 14mm 12mm; }
  body { font-size: 10pt; }
  main { max-width: none; padding: 0; }
  nav, summary { display: none; }
  h2 { break-after: avoid; }
  figure { break-inside: avoid; border-color: #bbb; }
  th { position: static; }
  .table-wrap.scroll { max-height: none; overflow: visible; }
  a { color: inherit; text-decoration: none; }
}
"""


def _with_code(text: str) -> str:
    """Escaped plain text whose `backticked` commands read as code."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", escape(plain(text)))


def _outcome_html(outcome: ChartOutcome) -> str:
    chart = outcome.chart
    body = outcome.html if outcome.state == "drawn" else f'<p class="empty">{_with_code(outcome.message)}</p>'
    return (
        f'<figure id="{chart.key}">'
        f'<figcaption id="{chart.key}-caption">{escape(chart.title)}<span class="unit">{escape(chart.unit)}</span></figcaption>'
        f"{body}"
        f"<details><summary>The SQL behind it</summary><pre><code>{escape(outcome.sql)}</code></pre></details>"
        "</figure>"
    )


def _as_of_html(windows: Windows) -> str:
    """What each clock's as-of is, and why (see `report.window`)."""
    fleet, sync = windows["fleet"], windows["sync"]
    return (
        "<p>The fleet (where the boxes are, what needs action, arrivals, dwell, ETAs) "
        f"as of <strong>{escape(minute(fleet.as_of))}</strong> "
        f"({_with_code(fleet.why)}); its time series cover the {fleet.days} days up to it. "
        f"{_with_code('`--as-of` and `--days` choose others.')}</p>\n"
        f"<p>The sync (runs, requests, webhook deliveries) up to <strong>{escape(minute(sync.as_of))}</strong> ({_with_code(sync.why)}), "
        f"over the {sync.days} days before; its last runs are timed to {escape(minute(sync.now))}.</p>\n"
        "<p>Each chart's SQL runs as is on the warehouse (<code>shipsync sql</code>, or any DuckDB with the statements of "
        "<code>shipsync sql --print-attach</code>).</p>"
    )


def render_page(
    sections: Sequence[Section], outcomes: Sequence[ChartOutcome], windows: Windows, first_steps: str, built_at: datetime
) -> str:
    by_key = {o.chart.key: o for o in outcomes}
    toc = "".join(f'<li><a href="#{s.key}">{escape(s.heading)}</a></li>' for s in sections)
    parts = []
    for section in sections:
        figures = "".join(_outcome_html(by_key[c.key]) for c in section.charts)
        intro = f'<p class="intro">{escape(section.intro)}</p>' if section.intro else ""
        first = ' class="first"' if section.key in FIRST_SCREEN else ""
        parts.append(
            f'<section id="{section.key}"{first} aria-labelledby="{section.key}-heading">'
            f'<h2 id="{section.key}-heading">{escape(section.heading)}</h2>{intro}{figures}</section>'
        )
    banner = f'<p class="banner" role="status">{_with_code(first_steps)}</p>' if first_steps else ""
    fleet_day = windows["fleet"].as_of.astimezone(UTC)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="shipsync report">
<title>shipsync report, {escape(fleet_day.strftime("%Y-%m-%d"))}</title>
<style>{CSS}</style>
</head>
<body>
<main>
<header>
<h1>Fleet report</h1>
<p>as of {escape(fleet_day.strftime("%a %d %b %Y, %H:%M UTC"))}</p>
<nav aria-label="Sections"><ol>{toc}</ol></nav>
</header>
{banner}
{"".join(parts)}
<section id="about" aria-labelledby="about-heading"><h2 id="about-heading">About this report</h2>
{_as_of_html(windows)}
</section>
<footer>Built by <code>shipsync report</code> at {escape(built_at.strftime("%Y-%m-%d %H:%M:%S UTC"))}.
Charts drawn with matplotlib (colour-blind-safe palette "tableau-colorblind10"); this file makes no requests.</footer>
</main>
</body>
</html>
"""
