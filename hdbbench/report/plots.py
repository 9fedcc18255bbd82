# SPDX-License-Identifier: Apache-2.0
"""Plots of the report, as inline SVG text (matplotlib's SVG backend, no pyplot state).

Text is drawn as paths, so no font is referenced; the metadata block (which names matplotlib's
web site) is dropped; element ids are prefixed per figure so many SVGs can share one HTML page.
Every backend keeps its colour across all figures of a page.
"""

from __future__ import annotations

import io
import itertools
import math
import re
from collections.abc import Mapping, Sequence

import matplotlib

matplotlib.use("svg")
from matplotlib.figure import Figure  # noqa: E402  (after choosing the backend)
from matplotlib.ticker import FixedLocator, FuncFormatter  # noqa: E402

matplotlib.rcParams.update({"svg.fonttype": "path", "svg.hashsalt": "hdbbench", "font.size": 9,
                            "axes.spines.top": False, "axes.spines.right": False, "axes.grid": True,
                            "grid.alpha": 0.3})

PROCESS_PALETTE = ("#7f7f7f", "#bcbd22", "#17becf", "#e377c2", "#8c564b", "#ff7f0e")
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")
_counter = itertools.count(1)
Point = tuple[float, float]


class Colours:
    """One colour per name (backend, run), stable within a page."""

    def __init__(self, names: Sequence[str] = (), palette: Sequence[str] = PALETTE) -> None:
        self._map: dict[str, str] = {}
        self._palette = tuple(palette)
        for name in names:
            self[name]

    def __getitem__(self, name: str) -> str:
        if name not in self._map:
            self._map[name] = self._palette[len(self._map) % len(self._palette)]
        return self._map[name]


def _figure(width: float = 5.2, height: float = 2.9) -> Figure:
    return Figure(figsize=(width, height), layout="constrained")


def to_svg(fig: Figure) -> str:
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    text = buffer.getvalue()
    text = text[text.index("<svg"):]
    text = re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.S)
    prefix = f"f{next(_counter)}-"
    ids = set(re.findall(r'id="([^"]+)"', text))
    text = re.sub(r'id="([^"]+)"', lambda m: f'id="{prefix}{m.group(1)}"', text)
    text = re.sub(r"#([A-Za-z_][\w.-]*)", lambda m: f"#{prefix}{m.group(1)}" if m.group(1) in ids else m.group(0), text)
    return re.sub(r'<svg ', '<svg role="img" ', text, count=1)


def _log2_axis(ax: object, xs: Sequence[float]) -> None:
    ax.set_xscale("log", base=2)  # type: ignore[attr-defined]
    ticks = sorted(set(xs))
    ax.xaxis.set_major_locator(FixedLocator(ticks))  # type: ignore[attr-defined]
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))  # type: ignore[attr-defined]
    ax.xaxis.set_minor_locator(FixedLocator([]))  # type: ignore[attr-defined]


def lines(series: Mapping[str, Sequence[Point]], colours: Colours, xlabel: str, ylabel: str,
          hline: float | None = None, hline_label: str = "", shade_to: float | None = None) -> str:
    """Time series, one line per name; an optional reference line and a shaded warm-up."""
    fig = _figure()
    ax = fig.add_subplot()
    for name, points in series.items():
        if points:
            ax.plot([p[0] for p in points], [p[1] for p in points], marker=".", label=name, color=colours[name])
    if hline is not None:
        ax.axhline(hline, color="grey", linestyle="--", linewidth=1, label=hline_label)
    if shade_to:
        ax.axvspan(0, shade_to, color="grey", alpha=0.12, label="warm-up")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(loc="best", fontsize=8)
    return to_svg(fig)


def distributions(values: Mapping[str, Sequence[float]], colours: Colours, ylabel: str) -> str:
    """Box per name (median, quartiles, whiskers at p1/p99) with every sample as a dot."""
    names = [n for n, v in values.items() if v]
    fig = _figure(max(3.2, 1.4 * len(names) + 1.5), 3.2)
    ax = fig.add_subplot()
    if names:
        ax.boxplot([values[n] for n in names], whis=(1, 99), showfliers=False, widths=0.5,
                   medianprops={"color": "black"})
        for i, name in enumerate(names, start=1):
            pts = values[name]
            jitter = [i + 0.18 * math.sin(k * 2.39996) for k in range(len(pts))]
            ax.scatter(jitter, pts, s=10, color=colours[name], alpha=0.7, zorder=3)
        ax.set_xticks(range(1, len(names) + 1), names)
    ax.set_ylabel(ylabel)
    return to_svg(fig)


def sweep(points: Mapping[str, Sequence[tuple[float, float, float, float]]], colours: Colours, xlabel: str,
          ylabel: str, log2: bool = False, fits: Mapping[str, tuple[float, float]] | None = None) -> str:
    """Median with a p1..p99 bar per point, one line per name; optional fitted lines (slope, intercept)."""
    fig = _figure()
    ax = fig.add_subplot()
    all_x: list[float] = []
    for name, pts in points.items():
        pts = sorted(pts)
        xs = [p[0] for p in pts]
        all_x += xs
        ys = [p[1] for p in pts]
        err = [[p[1] - p[2] for p in pts], [p[3] - p[1] for p in pts]]
        ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3, label=name, color=colours[name])
        if fits and name in fits and len(xs) > 1:
            slope, intercept = fits[name]
            fx = [min(xs), max(xs)]
            fy = [slope * (math.log2(x) if log2 else x) + intercept for x in fx]
            ax.plot(fx, fy, linestyle=":", color=colours[name], linewidth=1)
    if log2 and all_x:
        _log2_axis(ax, all_x)
    elif all_x:
        ax.xaxis.set_major_locator(FixedLocator(sorted(set(all_x))))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_ylim(bottom=0)
    ax.legend(loc="best", fontsize=8)
    return to_svg(fig)


def saturation(steps: Mapping[str, Sequence[tuple[float, float, bool]]], colours: Colours) -> str:
    """Stored median against offered rate per step; saturated steps as crosses; the diagonal = kept up."""
    fig = _figure()
    ax = fig.add_subplot()
    top = 0.0
    for name, pts in steps.items():
        if not pts:
            continue
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=name, color=colours[name])
        bad = [p for p in pts if p[2]]
        if bad:
            ax.scatter([p[0] for p in bad], [p[1] for p in bad], marker="x", s=80, color="black", zorder=4)
        top = max(top, *(max(p[0], p[1]) for p in pts))
    if top:
        ax.plot([0, top * 1.05], [0, top * 1.05], color="grey", linestyle="--", linewidth=1, label="stored = offered")
        ax.set_xlim(left=min(p[0] for pts in steps.values() for p in pts) * 0.9 if any(steps.values()) else 0)
        ax.set_ylim(bottom=0)
    ax.set_xlabel("offered rate (events/s)")
    ax.set_ylabel("stored rate over the step (events/s)")
    ax.legend(loc="best", fontsize=8)
    return to_svg(fig)


def bars(groups: Sequence[str], values: Mapping[str, Sequence[float | None]], colours: Colours, ylabel: str,
         errors: Mapping[str, Sequence[tuple[float, float] | None]] | None = None, log: bool = False,
         hline: float | None = None) -> str:
    """Grouped bars: one group per entry of `groups`, one bar per series name; optional (low, high) bars."""
    fig = _figure(max(4.0, 0.9 * len(groups) * max(1, len(values)) ** 0.5 + 2.5), 3.2)
    ax = fig.add_subplot()
    width = 0.8 / max(1, len(values))
    for k, (name, vals) in enumerate(values.items()):
        xs = [i + (k - (len(values) - 1) / 2) * width for i in range(len(groups))]
        heights = [v if v is not None else 0.0 for v in vals]
        ax.bar(xs, heights, width * 0.95, label=name, color=colours[name])
        errs = (errors or {}).get(name)
        if errs:
            for x, h, e in zip(xs, heights, errs):
                if e is not None:
                    ax.errorbar([x], [h], yerr=[[h - e[0]], [e[1] - h]], color="black", capsize=3, linewidth=1)
    if hline is not None:
        ax.axhline(hline, color="grey", linestyle="--", linewidth=1)
    ax.set_xticks(range(len(groups)), groups, rotation=20 if len(groups) > 4 else 0)
    if log:
        ax.set_yscale("log")
    ax.set_ylabel(ylabel)
    ax.legend(loc="best", fontsize=8)
    return to_svg(fig)


def loglog(series: Mapping[str, Sequence[Point]], colours: Colours, xlabel: str, ylabel: str) -> str:
    """Query time against interval length on log–log axes, one line per name."""
    fig = _figure()
    ax = fig.add_subplot()
    for name, pts in series.items():
        pts = sorted(pts)
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=name, color=colours[name])
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(loc="best", fontsize=8)
    return to_svg(fig)


def heat(rows: Sequence[str], columns: Sequence[str], values: Sequence[Sequence[float | None]]) -> str:
    """Normalised criteria (0..1) as a heat map, numbers printed in the cells."""
    fig = _figure(max(4.5, 0.95 * len(columns) + 2), 0.45 * len(rows) + 1.6)
    ax = fig.add_subplot()
    grid = [[v if v is not None else float("nan") for v in row] for row in values]
    ax.imshow(grid, cmap="Greens", vmin=0, vmax=1, aspect="auto")
    for i, row in enumerate(values):
        for j, v in enumerate(row):
            ax.text(j, i, "–" if v is None else f"{v:.2f}", ha="center", va="center", fontsize=8,
                    color="white" if v is not None and v > 0.6 else "black")
    ax.set_xticks(range(len(columns)), columns, rotation=30, ha="right", fontsize=7)
    ax.set_yticks(range(len(rows)), rows)
    ax.grid(False)
    return to_svg(fig)
