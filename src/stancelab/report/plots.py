"""Plot helpers: matplotlib figures rendered to base64 PNG for embedding in the report."""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.text import Text

DPI = 80
PALETTE = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3",
           "#8c8c8c", "#ccb974", "#64b5cd"]  # fmt: skip


def to_png_base64(figure: plt.Figure) -> str:
    """Render and close a figure; returns its PNG bytes as base64 text. Every text is plain
    (no mathtext: a `$` in a model name is a dollar sign), those made while drawing too."""
    buffer = io.BytesIO()
    with matplotlib.rc_context({"text.parse_math": False}):
        for text in figure.findobj(Text):
            text.set_parse_math(False)
        figure.tight_layout()
        figure.savefig(buffer, format="png", dpi=DPI)
    plt.close(figure)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _short(label: object, width: int = 28) -> str:
    text = str(label)
    return text if len(text) <= width else text[: width - 1] + "…"


def bars_with_ci(
    frame: pd.DataFrame,
    category: str,
    group: str,
    ylabel: str,
    value: str = "value",
    low: str = "ci_low",
    high: str = "ci_high",
    scale: float = 1.0,
) -> str:
    """Grouped bars (one colour per `group`, e.g. model) with 95% CI error bars."""
    categories = list(dict.fromkeys(frame[category].astype(str)))
    groups = list(dict.fromkeys(frame[group].astype(str)))
    width = 0.8 / max(len(groups), 1)
    figure, axes = plt.subplots(figsize=(max(5.0, 0.9 * len(categories) + 2), 3.4))
    positions = np.arange(len(categories))
    for index, name in enumerate(groups):
        rows = frame[frame[group].astype(str) == name]
        rows = rows.set_index(rows[category].astype(str)).reindex(categories)
        values = rows[value].to_numpy(dtype=float) * scale
        errors = np.vstack(
            [values - rows[low].to_numpy(dtype=float) * scale,
             rows[high].to_numpy(dtype=float) * scale - values]
        )  # fmt: skip
        axes.bar(positions + index * width, np.nan_to_num(values), width, label=_short(name, 40),
                 color=PALETTE[index % len(PALETTE)], yerr=np.nan_to_num(np.abs(errors)), capsize=3)  # fmt: skip
    axes.set_xticks(positions + width * (len(groups) - 1) / 2)
    axes.set_xticklabels([_short(c) for c in categories], rotation=30, ha="right", fontsize=8)
    axes.set_ylabel(ylabel)
    axes.axhline(0, color="black", linewidth=0.6)
    axes.legend(fontsize=7, loc="best")
    return to_png_base64(figure)


def heatmap(
    matrix: pd.DataFrame, title: str, value_format: str = "{:.2f}", cmap: str = "viridis",
    vmin: float | None = None, vmax: float | None = None,
) -> str:  # fmt: skip
    """A labelled heat map of a numeric matrix, values written in the cells."""
    values = matrix.to_numpy(dtype=float)
    figure, axes = plt.subplots(
        figsize=(max(3.5, 0.8 * values.shape[1] + 2.5), max(2.5, 0.45 * values.shape[0] + 1.5))
    )
    image = axes.imshow(values, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
    axes.set_xticks(range(values.shape[1]))
    axes.set_xticklabels(
        [_short(c, 20) for c in matrix.columns], rotation=30, ha="right", fontsize=8
    )
    axes.set_yticks(range(values.shape[0]))
    axes.set_yticklabels([_short(r, 32) for r in matrix.index], fontsize=8)
    axes.set_title(title, fontsize=9)
    for (row, column), cell in np.ndenumerate(values):
        if not np.isnan(cell):
            red, green, blue, _ = image.cmap(image.norm(cell))
            dark = 0.299 * red + 0.587 * green + 0.114 * blue < 0.5
            axes.text(column, row, value_format.format(cell), ha="center", va="center",
                      fontsize=7, color="white" if dark else "black")  # fmt: skip
    figure.colorbar(image, ax=axes, fraction=0.046)
    return to_png_base64(figure)


def category_grid(grid: pd.DataFrame, categories: Sequence[str], title: str) -> str:
    """Rows x columns of categorical values (e.g. topic x model), one colour per category."""
    codes = {name: index for index, name in enumerate(categories)}
    values = grid.apply(lambda column: column.map(lambda v: codes.get(v, np.nan))).to_numpy(float)
    colours = matplotlib.colors.ListedColormap([PALETTE[i % len(PALETTE)] for i in range(len(categories))])  # fmt: skip
    figure, axes = plt.subplots(
        figsize=(max(4.5, 1.2 * values.shape[1] + 3.5), max(2.0, 0.35 * values.shape[0] + 1.5))
    )
    axes.imshow(values, cmap=colours, vmin=-0.5, vmax=len(categories) - 0.5, aspect="auto")
    axes.set_xticks(range(values.shape[1]))
    axes.set_xticklabels([_short(c, 30) for c in grid.columns], rotation=30, ha="right", fontsize=8)
    axes.set_yticks(range(values.shape[0]))
    axes.set_yticklabels([_short(r, 40) for r in grid.index], fontsize=8)
    for (row, column), cell in np.ndenumerate(values):
        if not np.isnan(cell):
            axes.text(column, row, categories[int(cell)], ha="center", va="center", fontsize=6)
    axes.set_title(title, fontsize=9)
    return to_png_base64(figure)


def stacked_shares(shares: pd.DataFrame, xlabel: str) -> str:
    """Horizontal stacked bars: rows are bars (top to bottom), columns the parts."""
    figure, axes = plt.subplots(figsize=(8.5, max(2.2, 0.3 * len(shares) + 1.2)))
    left = np.zeros(len(shares))
    positions = np.arange(len(shares))[::-1]
    for index, column in enumerate(shares.columns):
        widths = np.nan_to_num(shares[column].to_numpy(dtype=float))
        axes.barh(positions, widths, left=left, label=str(column),
                  color=PALETTE[index % len(PALETTE)])  # fmt: skip
        left += widths
    axes.set_yticks(positions)
    axes.set_yticklabels([_short(i, 48) for i in shares.index], fontsize=8)
    axes.set_xlabel(xlabel)
    axes.legend(fontsize=7, bbox_to_anchor=(1.01, 1), loc="upper left")
    return to_png_base64(figure)


def forest(estimates: pd.DataFrame, xlabel: str) -> str:
    """Models ranked by a headline (top = highest) with their 95% CI as horizontal bars;
    `estimates` has `model`, `value`, `ci_low`, `ci_high`. A model without a value is listed
    at the bottom, unmarked."""
    ranked = estimates.assign(_known=estimates["value"].notna()).sort_values(
        ["_known", "value"], ascending=[False, False], kind="stable")  # fmt: skip
    positions = np.arange(len(ranked))[::-1]
    values = ranked["value"].to_numpy(dtype=float)
    low = values - ranked["ci_low"].to_numpy(dtype=float)
    high = ranked["ci_high"].to_numpy(dtype=float) - values
    figure, axes = plt.subplots(figsize=(7.5, max(1.6, 0.28 * len(ranked) + 1.0)))
    errors = np.nan_to_num(np.vstack([low, high]).clip(min=0))
    axes.errorbar(values, positions, xerr=errors, fmt="o", color=PALETTE[0], ecolor="#38414d",
                  capsize=3, markersize=4)  # fmt: skip
    axes.set_yticks(positions)
    axes.set_yticklabels([_short(m, 40) + ("" if known else "  (n/a)") for m, known in
                          zip(ranked["model"], ranked["_known"], strict=True)], fontsize=8)  # fmt: skip
    axes.set_xlabel(xlabel)
    axes.grid(axis="x", alpha=0.3)
    return to_png_base64(figure)


def difference_heatmap(values: pd.DataFrame, marked: pd.DataFrame, unit: str) -> str:
    """Row-minus-column paired differences; '*' where `marked` (the caller's test: in the
    report, adjusted p < 0.05)."""
    size = len(values)
    figure, axes = plt.subplots(figsize=(max(4.0, 0.55 * size + 2.5), max(3.0, 0.45 * size + 1.8)))
    data = values.to_numpy(dtype=float)
    limit = np.nanmax(np.abs(data)) if np.isfinite(data).any() else 1.0
    image = axes.imshow(data, cmap="RdBu_r", vmin=-limit, vmax=limit)
    axes.set_xticks(range(size))
    axes.set_xticklabels(
        [_short(m, 22) for m in values.columns], rotation=40, ha="right", fontsize=7
    )
    axes.set_yticks(range(size))
    axes.set_yticklabels([_short(m, 30) for m in values.index], fontsize=7)
    if size <= 12:
        for (row, column), value in np.ndenumerate(data):
            if np.isfinite(value):
                mark = "*" if marked.iloc[row, column] else ""
                axes.text(column, row, f"{value:.1f}{mark}", ha="center", va="center", fontsize=6)
    figure.colorbar(image, ax=axes, shrink=0.8, label=f"row − column ({unit})")
    return to_png_base64(figure)
