"""Matplotlib figures (Agg backend), each saved as PNG and SVG.

Every function takes a tidy DataFrame and an output *stem* (path without suffix) and
returns the written paths ``[stem.png, stem.svg]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib
import matplotlib.ticker

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402


def save(fig: Figure, stem: str | Path) -> list[Path]:
    """Write ``stem.png`` and ``stem.svg`` and close the figure."""
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = [stem.with_suffix(".png"), stem.with_suffix(".svg")]
    fig.tight_layout()
    for p in paths:  # "tight": a legend placed beside the axes is kept in the image
        fig.savefig(p, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return paths


def outside_legend(ax: plt.Axes, fontsize: int) -> None:
    """The legend beside the axes, top right, so that it never hides a bar."""
    ax.legend(fontsize=fontsize, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)


def grouped_bars(
    df: pd.DataFrame,
    group: str,
    hue: str,
    value: str,
    stem: str | Path,
    title: str = "",
    ylabel: str = "",
    percent: bool = False,
) -> list[Path]:
    """Grouped bar chart: one group per ``group`` value, one bar per ``hue`` (Fig. 5 style)."""
    piv = df.pivot_table(index=group, columns=hue, values=value, aggfunc="mean", sort=False)
    fig, ax = plt.subplots(
        figsize=(min(14.0, max(6.0, 2.0 + 0.18 * len(piv) * max(1, len(piv.columns)))), 3.8)
    )
    n = max(1, len(piv.columns))
    width = 0.8 / n
    x = np.arange(len(piv))
    scale = 100.0 if percent else 1.0
    for i, col in enumerate(piv.columns):
        ax.bar(x + (i - (n - 1) / 2) * width, piv[col].to_numpy() * scale, width, label=str(col))
    ax.set_xticks(x, [str(i) for i in piv.index], rotation=30, ha="right")
    ax.set_ylabel(ylabel + (" (%)" if percent else ""))
    ax.set_title(title)
    outside_legend(ax, 8)
    ax.grid(axis="y", alpha=0.3)
    return save(fig, stem)


def heatmap(
    df: pd.DataFrame,
    x: str,
    y: str,
    value: str,
    stem: str | Path,
    title: str = "",
    fmt: str = "{:.2f}",
) -> list[Path]:
    """Heatmap of ``value`` over the ``x`` x ``y`` grid, annotated (Fig. 11/12 style)."""
    piv = df.pivot_table(index=y, columns=x, values=value, aggfunc="mean").sort_index(
        ascending=False
    )
    fig, ax = plt.subplots(figsize=(1.0 + 0.9 * len(piv.columns), 1.0 + 0.6 * len(piv)))
    im = ax.imshow(piv.to_numpy(dtype=float), cmap="viridis", aspect="auto")
    ax.set_xticks(
        range(len(piv.columns)), [f"{c:g}" if isinstance(c, float) else str(c) for c in piv.columns]
    )
    ax.set_yticks(
        range(len(piv.index)), [f"{c:g}" if isinstance(c, float) else str(c) for c in piv.index]
    )
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    for (i, j), v in np.ndenumerate(piv.to_numpy(dtype=float)):
        ax.text(j, i, fmt.format(v), ha="center", va="center", color="w", fontsize=7)
    fig.colorbar(im, ax=ax, label=value)
    ax.set_title(title)
    return save(fig, stem)


def lines(
    df: pd.DataFrame,
    x: str,
    y: str,
    hue: str,
    stem: str | Path,
    title: str = "",
    ylabel: str = "",
) -> list[Path]:
    """One line per ``hue`` value of ``y`` against ``x``."""
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for key, g in df.groupby(hue, sort=False):
        g = g.sort_values(x)
        ax.plot(g[x], g[y], marker="o", label=str(key))
    ax.set_xlabel(x)
    ax.set_ylabel(ylabel or y)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return save(fig, stem)


def predicted_vs_measured(
    df: pd.DataFrame,
    x: str,
    y: str,
    hue: str,
    stem: str | Path,
    title: str = "",
    label: str = "",
) -> list[Path]:
    """Scatter of ``y`` (predicted) against ``x`` (measured), one colour per ``hue``
    value, with the ``y = x`` line of a perfect prediction (log axes: ratios)."""
    d = df[[x, y, hue]].dropna()
    d = d[(d[x] > 0) & (d[y] > 0)]
    fig, ax = plt.subplots(figsize=(5.2, 4.6))
    for key, g in d.groupby(hue, sort=False):
        ax.scatter(g[x], g[y], s=18, alpha=0.8, label=str(key))
    if len(d):
        lo = float(min(d[x].min(), d[y].min())) / 1.1
        hi = float(max(d[x].max(), d[y].max())) * 1.1
        ax.plot([lo, hi], [lo, hi], color="k", lw=0.8, label="y = x")
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
    ax.set_xscale("log")
    ax.set_yscale("log")
    for axis in (ax.xaxis, ax.yaxis):  # plain ratios on the log axes, not 2 x 10^0
        axis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
        axis.set_minor_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
    ax.tick_params(which="minor", labelsize=7)
    ax.set_xlabel(f"{label} (reference)" if label else x)
    ax.set_ylabel(f"{label} (model)" if label else y)
    ax.set_title(title)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7)
    return save(fig, stem)


def cpi_stacks(
    df: pd.DataFrame, label: str, components: Sequence[str], stem: str | Path, title: str = ""
) -> list[Path]:
    """Stacked CPI bars, one bar per row labelled by ``label`` (Fig. 14 style); a
    component that no row has (another model's, e.g. MWP-CWP's ``sync``) is left out of
    the bars and the legend."""
    fig, ax = plt.subplots(figsize=(max(5.0, 0.5 * len(df) + 2), 3.8))
    bottom = np.zeros(len(df))
    x = np.arange(len(df))
    for c in components:
        if not df[c].fillna(0.0).to_numpy(dtype=float).any():
            continue
        v = df[c].fillna(0.0).to_numpy(dtype=float)
        ax.bar(x, v, 0.7, bottom=bottom, label=c.removeprefix("cpi_"))
        bottom += v
    ax.set_xticks(x, [str(v) for v in df[label]], rotation=30, ha="right")
    ax.set_ylabel("CPI (cycles per warp instruction per SM)")
    ax.set_title(title)
    outside_legend(ax, 7)
    return save(fig, stem)
