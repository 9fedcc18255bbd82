# SPDX-License-Identifier: Apache-2.0
"""The disk and sizing sections' plots: marginal bytes per event per scalar type, spectra against their
element count, and a facility's projected disk per backend/variant stacked by inventory group.

A contestant is one backend with one variant ("mysql pk+2"). Its colour is a shade of its backend's
page colour (darkest = first variant), so the scalar plot, the spectra plot and the plan plot agree.
A case whose sizes do not fit a line is drawn hatched and hollow (scalar) or as a black cross
(spectra): shown, marked, and not taken as a figure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from matplotlib.colors import to_hex, to_rgb
from matplotlib.figure import Figure

from hdbbench.report.plots import Colours, to_svg

# No greys among the groups: grey is the logs' colour.
GROUP_PALETTE = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#ccb974",
                 "#64b5cd", "#1b9e77", "#e7298a", "#a6761d", "#7570b3", "#66a61e")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
LINESTYLES = ("-", "--", "-.", ":")
SINGLE_PANEL_MAX = 6   # more contestants than this: one panel per backend, so a group keeps readable bars


@dataclass(frozen=True)
class Bar:
    """One contestant's figure for one x group; `flagged`: its sizes do not fit a line."""

    value: float | None
    flagged: bool = False


def contestant_colours(contestants: Sequence[tuple[str, str]], colours: Colours) -> dict[str, str]:
    """'backend variant' → a shade of the backend's colour: its first variant darker than the page colour,
    its last much lighter, evenly spread between."""
    by_backend: dict[str, list[str]] = {}
    for backend, variant in contestants:
        by_backend.setdefault(backend, []).append(variant)
    out: dict[str, str] = {}
    for backend, variants in by_backend.items():
        base = to_rgb(colours[backend])
        for k, variant in enumerate(variants):
            step = -0.35 + 0.95 * k / (len(variants) - 1) if len(variants) > 1 else 0.0  # -0.35 .. 0.6
            mixed = [c * (1 + step) if step < 0 else c + (1 - c) * step for c in base]
            out[f"{backend} {variant}"] = to_hex(tuple(mixed))
    return out


def scalar_bars(groups: Sequence[str], values: Mapping[str, Sequence[Bar]], backend_of: Mapping[str, str],
                shade: Mapping[str, str], ylabel: str) -> str:
    """Grouped bars, x = scalar type, one bar per contestant; one panel per backend when there are many."""
    names = list(values)
    panels = [names] if len(names) <= SINGLE_PANEL_MAX else \
        [[n for n in names if backend_of[n] == b] for b in dict.fromkeys(backend_of[n] for n in names)]
    fig = Figure(figsize=(10.5, 1.0 + 2.3 * len(panels)), layout="constrained")
    axes = fig.subplots(len(panels), 1, sharex=True, sharey=True, squeeze=False)[:, 0]
    any_flagged = False
    for ax, panel in zip(axes, panels):
        width = 0.84 / max(1, len(panel))
        for k, name in enumerate(panel):
            xs = [i + (k - (len(panel) - 1) / 2) * width for i in range(len(groups))]
            plain = [(x, b.value) for x, b in zip(xs, values[name]) if b.value is not None and not b.flagged]
            odd = [(x, b.value) for x, b in zip(xs, values[name]) if b.value is not None and b.flagged]
            ax.bar([p[0] for p in plain], [p[1] for p in plain], width * 0.92, label=name, color=shade[name])
            if odd:
                any_flagged = True
                ax.bar([p[0] for p in odd], [p[1] for p in odd], width * 0.92, facecolor="white",
                       edgecolor=shade[name], hatch="////", linewidth=1)
        ax.set_ylabel(ylabel)
        ax.set_ylim(bottom=0)
        ax.grid(axis="x", visible=False)
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
    axes[-1].set_xticks(range(len(groups)), groups, rotation=30, ha="right")
    if any_flagged:
        fig.text(0.01, 0.005, "hatched, hollow: sizes off a line (flagged, not used)", fontsize=8, color="#555")
    return to_svg(fig)


def spectra(series: Mapping[str, Sequence[tuple[float, float, bool]]], shade: Mapping[str, str],
            marker_of: Mapping[str, int]) -> str:
    """Marginal bytes per event against element count on log–log axes, one line per contestant;
    flagged points as black crosses, left off the line."""
    fig = Figure(figsize=(8.5, 3.6), layout="constrained")
    ax = fig.add_subplot()
    flagged_drawn = False
    for name, points in series.items():
        kept = sorted((x, y) for x, y, bad in points if not bad and y > 0)
        bad = [(x, y) for x, y, odd in points if odd and y > 0]
        k = marker_of.get(name, 0)
        if kept:
            ax.plot([p[0] for p in kept], [p[1] for p in kept], marker=MARKERS[k % len(MARKERS)],
                    linestyle=LINESTYLES[k % len(LINESTYLES)], color=shade[name], label=name)
        if bad:
            ax.scatter([p[0] for p in bad], [p[1] for p in bad], marker="x", s=60, color="black", zorder=4,
                       label=None if flagged_drawn else "flagged: off a line (not used)")
            flagged_drawn = True
    ax.set_xscale("log")
    ax.set_yscale("log")
    xs = sorted({p[0] for pts in series.values() for p in pts})
    if xs:
        ax.set_xticks(xs, [f"{x:,.0f}" for x in xs])
        ax.set_xticks([], minor=True)
    ax.set_xlabel("elements per event (log)")
    ax.set_ylabel("marginal bytes per event (log)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
    return to_svg(fig)


def _unit(largest: float) -> tuple[str, float]:
    for unit, size in (("TiB", 2 ** 40), ("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if largest >= size:
            return unit, float(size)
    return "B", 1.0


def plan_stack(names: Sequence[str], groups: Sequence[str], at_retention: Mapping[str, Sequence[float]],
               logs: Mapping[str, float], copies: Mapping[str, float], labels: Mapping[str, str],
               log_label: str) -> str:
    """Horizontal bars, one per contestant: its inventory groups at retention, the logs kept, and the
    other copies (replicas) hatched; the total written at the end of each bar."""
    totals = {n: sum(at_retention[n]) + logs.get(n, 0.0) + copies.get(n, 0.0) for n in names}
    unit, size = _unit(max(totals.values(), default=0.0))
    fig = Figure(figsize=(10.5, 1.6 + 0.38 * len(names) + 0.22 * ((len(groups) + 2) // 3)), layout="constrained")
    ax = fig.add_subplot()
    rows = list(range(len(names)))[::-1]  # first contestant on top
    left = [0.0] * len(names)
    for g, group in enumerate(groups):
        widths = [at_retention[n][g] / size for n in names]
        ax.barh(rows, widths, 0.7, left=left, color=GROUP_PALETTE[g % len(GROUP_PALETTE)], label=group)
        left = [a + b for a, b in zip(left, widths)]
    if any(logs.values()):
        widths = [logs.get(n, 0.0) / size for n in names]
        ax.barh(rows, widths, 0.7, left=left, facecolor="#c8c8c8", edgecolor="#777777", hatch="..",
                linewidth=0.6, label=log_label)
        left = [a + b for a, b in zip(left, widths)]
    if any(copies.values()):
        widths = [copies.get(n, 0.0) / size for n in names]
        ax.barh(rows, widths, 0.7, left=left, facecolor="white", edgecolor="#555555", hatch="//",
                linewidth=0.6, label="replica copies")
        left = [a + b for a, b in zip(left, widths)]
    for row, name, end in zip(rows, names, left):
        ax.text(end, row, f" {labels[name]}", va="center", fontsize=8)
    ax.set_yticks(rows, names)
    ax.set_xlim(0, max(left, default=1.0) * 1.18 or 1.0)
    ax.set_xlabel(f"disk at retention ({unit})")
    ax.grid(axis="y", visible=False)
    fig.legend(loc="outside lower center", ncol=3, fontsize=8, frameon=False)
    return to_svg(fig)
