"""Charts drawn by matplotlib and rendered to inline SVG: no JavaScript, no fonts or images to fetch.

Each function takes the rows a report query returned and gives back the `<svg>` element as text.
Text stays text (`svg.fonttype: none`), so the page's own font draws it, screen readers and search
find it, and the SVG stays small. Colours come from 'tableau-colorblind10', a palette made to stay
distinguishable under the common colour-vision deficiencies. Ids inside each SVG get the chart's
key as a prefix, so several charts on one page never share an id.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from html import escape
from typing import Any

import matplotlib
import numpy as np

matplotlib.use("svg")  # no GUI toolkit: the report renders the same on a server and a laptop

from matplotlib import dates as mdates
from matplotlib import rc_context
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.dates import AutoDateLocator, ConciseDateFormatter
from matplotlib.figure import Figure
from matplotlib.style import context as style_context
from matplotlib.ticker import MaxNLocator

from shipsync.plain_text import plain

PALETTE_STYLE = "tableau-colorblind10"
WIDTH_IN = 9.0
CHAR_WIDTH_IN = 0.068  # an average character of the 9.5 pt sans-serif font
_RC: dict[Any, Any] = {
    "svg.fonttype": "none",
    "svg.hashsalt": "shipsync",  # stable clip-path ids: the same data gives the same file
    "font.family": "sans-serif",
    "font.size": 9.5,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "axes.axisbelow": True,
    "grid.alpha": 0.35,
    "legend.frameon": False,
    "text.parse_math": False,  # a `$` in a status or a port's name is a dollar sign, not maths
}
# Every id, and every reference to one (`url(#...)`, `href="#..."`), gets the chart's key in front.
_METADATA = re.compile(r"<metadata>.*?</metadata>\s*", flags=re.S)
_ID_OR_REFERENCE = re.compile(r'(\bid="|url\(#|href="#)')


@dataclass(frozen=True)
class _Margins:
    """Room around the plot, in inches. Laid out by hand: matplotlib's constrained layout sizes
    every label once more, which would double each chart's drawing."""

    left: float = 0.75
    right: float = 0.25
    top: float = 0.12
    bottom: float = 0.5


def _label(text: object) -> str:
    """Data as a chart shows it: plain text (maths is off in _RC; control and bidirectional
    characters escaped), a leading `_` kept visible (matplotlib's legend leaves such labels out)."""
    shown = plain(str(text))
    return f" {shown}" if shown.startswith("_") else shown


def _label_room(labels: Sequence[str]) -> float:
    """Inches that the longest of these tick labels needs at the report's font size."""
    return 0.25 + CHAR_WIDTH_IN * max((len(label) for label in labels), default=4)


def _legend_rows(series: Mapping[str, object], columns: int) -> int:
    return 0 if len(series) < 2 else -(-len(series) // columns)


@contextmanager
def _figure(plot_height_in: float, margins: _Margins) -> Iterator[tuple[Figure, Axes]]:
    with style_context(PALETTE_STYLE), rc_context(_RC):
        height = plot_height_in + margins.top + margins.bottom
        figure = Figure(figsize=(WIDTH_IN, height))
        figure.subplots_adjust(
            left=margins.left / WIDTH_IN,
            right=1 - margins.right / WIDTH_IN,
            bottom=margins.bottom / height,
            top=1 - margins.top / height,
        )
        yield figure, figure.add_subplot()


def _legend_above(axes: Axes, columns: int) -> None:
    axes.legend(loc="lower left", bbox_to_anchor=(0, 1.0), ncols=columns, fontsize=8, borderaxespad=0.4, handlelength=1.2)


def _rectangles(x0: np.ndarray[Any, Any], y0: np.ndarray[Any, Any], x1: np.ndarray[Any, Any], y1: np.ndarray[Any, Any]) -> list[Any]:
    return [[(a, b), (a, d), (c, d), (c, b)] for a, b, c, d in zip(x0, y0, x1, y1, strict=True)]


def _to_svg(figure: Figure, key: str, title: str) -> str:
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    text = buffer.getvalue()
    text = text[text.index("<svg") :]  # the XML declaration and DOCTYPE do not belong inside HTML
    # The RDF metadata block names vocabularies by URL; a <title> says the same to assistive technology.
    text = _METADATA.sub("", text, count=1)
    text = _ID_OR_REFERENCE.sub(lambda m: f"{m.group(1)}{key}-", text)
    # Scales with its column, keeps its aspect; labelled for assistive technology by the caption.
    text = re.sub(r'<svg([^>]*?) width="[^"]+" height="[^"]+"', r"<svg\1", text, count=1)
    opening = text.index(">", text.index("<svg")) + 1
    text = f"{text[:opening]}<title>{escape(title)}</title>{text[opening:]}"
    return text.replace("<svg", f'<svg role="img" aria-labelledby="{key}-caption" class="chart"', 1)


def bars(key: str, title: str, labels: Sequence[str], series: Mapping[str, Sequence[float]], value_label: str) -> str:
    """Horizontal bars, first row at the top, stacked by series; each bar's total written at its end.

    Each series is one collection of rectangles: matplotlib updates the axes' limits patch by
    patch otherwise, which made bars the slowest thing to draw.
    """
    labels = [_label(label) for label in labels]
    columns = min(4, len(series))
    rows = _legend_rows(series, columns)
    margins = _Margins(left=_label_room(labels), right=0.5, top=0.12 + 0.22 * rows, bottom=0.5)
    with _figure(max(0.6, 0.26 * len(labels)), margins) as (figure, axes):
        positions = np.arange(len(labels), dtype=float)
        left = np.zeros(len(labels))
        for index, (name, values) in enumerate(series.items()):
            right = left + np.asarray(values, dtype=float)
            boxes = _rectangles(left, positions - 0.4, right, positions + 0.4)
            axes.add_collection(PolyCollection(boxes, facecolors=f"C{index}", label=_label(name), linewidths=0))
            left = right
        axes.set_xlim(0, max(1.0, float(left.max(initial=0))) * 1.06)
        axes.set_ylim(len(labels) - 0.5, -0.5)
        axes.set_yticks(positions, labels=labels)
        axes.set_xlabel(value_label)
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
        axes.grid(axis="y", visible=False)
        for position, total in zip(positions, left, strict=True):
            axes.annotate(f"{total:,.0f}", (total, position), xytext=(3, 0), textcoords="offset points", va="center", fontsize=8)
        if rows:
            _legend_above(axes, columns)
        return _to_svg(figure, key, title)


def _steps(edges: np.ndarray[Any, Any], bottom: np.ndarray[Any, Any], top: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """The outline of columns from `bottom` to `top` between consecutive `edges`, as one polygon."""
    xs = np.repeat(edges, 2)[1:-1]
    return np.column_stack([np.concatenate([xs, xs[::-1]]), np.concatenate([np.repeat(top, 2), np.repeat(bottom, 2)[::-1]])])


def _days(days: Sequence[date]) -> np.ndarray[Any, np.dtype[np.datetime64]]:
    return np.array(days, dtype="datetime64[D]")


def _date_axis(axes: Axes) -> None:
    # matplotlib.dates has no type hints; the two constructors take and return plain objects.
    locator = AutoDateLocator(minticks=4, maxticks=12)  # type: ignore[no-untyped-call]
    axes.xaxis.set_major_locator(locator)
    axes.xaxis.set_major_formatter(ConciseDateFormatter(locator))  # type: ignore[no-untyped-call]


def stacked_columns(key: str, title: str, days: Sequence[date], series: Mapping[str, Sequence[float]], value_label: str) -> str:
    """A column per day, stacked by series, over every day of the window (gaps show as gaps).

    Each series is one stepped polygon rather than a rectangle per day (a year of days by ten
    series would be thousands of patches), added without autoscaling: matplotlib walks a patch's
    outline in Python to find its limits, which the window already gives.
    """
    edges = mdates.date2num(np.append(_days(days), _days(days)[-1:] + 1)) if days else np.zeros(1)  # type: ignore[no-untyped-call]
    columns = 3
    rows = _legend_rows(series, columns)
    with _figure(2.6, _Margins(top=0.12 + 0.22 * rows, bottom=0.55)) as (figure, axes):
        bottom = np.zeros(len(days))
        for index, (name, values) in enumerate(series.items()):
            top = bottom + np.asarray(values, dtype=float)
            axes.add_collection(
                PolyCollection([_steps(edges, bottom, top)], facecolors=f"C{index}", label=_label(name), linewidths=0), autolim=False
            )
            bottom = top
        axes.set_xlim(float(edges[0]), float(edges[-1]))
        axes.set_ylabel(value_label)
        axes.set_ylim(0, max(1.0, float(bottom.max(initial=0))) * 1.05)
        axes.yaxis.set_major_locator(MaxNLocator(integer=True))
        axes.grid(axis="x", visible=False)
        _date_axis(axes)
        if rows:
            _legend_above(axes, columns)
        return _to_svg(figure, key, title)


def distributions(key: str, title: str, rows: Sequence[dict[str, Any]], value_label: str) -> str:
    """Horizontal box plots from precomputed quantiles (p05, p25, p50, p75, p95, mean per group).

    The quantiles come from the SQL, so the chart draws exactly the numbers the query shows, and a
    warehouse of any size costs the same to draw. Boxes span the 25th to 75th percentile, whiskers
    the 5th to 95th; a bar marks the median, a triangle the mean. Drawn as a few collections
    (matplotlib's boxplot makes seven artists per box, which dominated the report's time).
    """
    labels = [_label(f"{row['label']} (n={row['n']:,})") for row in rows]
    value = {name: np.array([float(row[name]) for row in rows]) for name in ("p05", "p25", "p50", "p75", "p95", "mean")}
    y = np.arange(len(rows), dtype=float)
    with _figure(max(0.6, 0.3 * len(rows)), _Margins(left=_label_room(labels), bottom=0.5)) as (figure, axes):
        whiskers = [[(a, c), (b, c)] for a, b, c in zip(value["p05"], value["p25"], y, strict=True)]
        whiskers += [[(a, c), (b, c)] for a, b, c in zip(value["p75"], value["p95"], y, strict=True)]
        whiskers += [
            [(x, c - 0.15), (x, c + 0.15)] for x, c in zip(np.concatenate([value["p05"], value["p95"]]), np.tile(y, 2), strict=True)
        ]
        axes.add_collection(LineCollection(whiskers, colors="0.25", linewidths=1), autolim=False)
        boxes = _rectangles(value["p25"], y - 0.3, value["p75"], y + 0.3)
        axes.add_collection(PolyCollection(boxes, facecolors="C0", alpha=0.55, edgecolors="0.2", linewidths=0.8), autolim=False)
        medians = [[(x, c - 0.3), (x, c + 0.3)] for x, c in zip(value["p50"], y, strict=True)]
        axes.add_collection(LineCollection(medians, colors="C1", linewidths=2), autolim=False)
        axes.scatter(value["mean"], y, marker="^", s=22, color="C3", zorder=3)
        low, high = float(value["p05"].min(initial=0)), float(value["p95"].max(initial=1))
        pad = max(0.5, (high - low) * 0.04)
        axes.set_xlim(low - pad, high + pad)
        axes.set_ylim(len(rows) - 0.5, -0.5)
        axes.set_yticks(y, labels=labels)
        axes.set_xlabel(value_label)
        axes.grid(axis="y", visible=False)
        return _to_svg(figure, key, title)


def lines(key: str, title: str, days: Sequence[date], series: Mapping[str, Sequence[float]], value_label: str) -> str:
    """A line per series over every day of the window: for counts that should stay near zero."""
    columns = min(4, len(series))
    rows = _legend_rows(series, columns)
    with _figure(2.2, _Margins(top=0.12 + 0.22 * rows, bottom=0.55)) as (figure, axes):
        for index, (name, values) in enumerate(series.items()):
            # Markers tell the series apart in print; past two months of days they would only blur.
            marker = "os^Dv"[index % 5] if len(days) <= 62 else None
            axes.plot(_days(days), list(values), marker=marker, markersize=3, linewidth=1.4, label=_label(name))
        axes.set_ylabel(value_label)
        axes.set_ylim(0, max(1.0, *(max(values, default=0) for values in series.values())) * 1.1)
        axes.yaxis.set_major_locator(MaxNLocator(integer=True))
        _date_axis(axes)
        if rows:
            _legend_above(axes, columns)
        return _to_svg(figure, key, title)
