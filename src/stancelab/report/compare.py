"""Comparing models on a lens in the report: the paired differences (`core.stats.compare`) as a
square matrix for the heatmap, their p-values adjusted across every comparison the report
shows, and the pair view (pick two models, see every lens's difference)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from stancelab.core.stats.compare import (
    DEFAULT_ADJUSTMENT,
    DIFFERENCE_COLUMNS,
    NOT_COMPARED,
    ODDS_RATIO,
    UNIT_COLUMNS,
    adjust_p,
    no_difference_ci,
    paired_differences,
)

__all__ = ["DIFFERENCE_COLUMNS", "SIGNIFICANCE", "UNIT_COLUMNS", "adjust_across", "difference_matrix", "pair_view",
           "paired_differences"]  # fmt: skip


SIGNIFICANCE = 0.05


def difference_matrix(differences: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(row minus column) differences as a square matrix, and whether each one's adjusted p
    (`p_adjusted`, across every comparison shown) is below SIGNIFICANCE; a pair without a
    test is not marked."""
    models = sorted(set(differences["model_a"]) | set(differences["model_b"]))
    values = pd.DataFrame(np.nan, index=models, columns=models)
    marked = pd.DataFrame(False, index=models, columns=models)
    for _, row in differences.iterrows():
        a, b = row["model_a"], row["model_b"]
        values.loc[a, b], values.loc[b, a] = row["difference"], -row["difference"]
        adjusted = row.get("p_adjusted")
        below = adjusted is not None and not pd.isna(adjusted) and float(adjusted) < SIGNIFICANCE
        marked.loc[a, b] = marked.loc[b, a] = below
    return values, marked


def adjust_across(
    frames: list[pd.DataFrame | None], method: str = DEFAULT_ADJUSTMENT
) -> list[pd.DataFrame | None]:
    """Each frame of paired differences with its p adjusted across the rows of all of them
    (one family: every comparison the report shows)."""
    shown = [
        (index, frame)
        for index, frame in enumerate(frames)
        if frame is not None and not frame.empty
    ]
    if not shown:
        return frames
    together = pd.concat([frame.assign(_frame=index) for index, frame in shown], ignore_index=True)
    adjusted = adjust_p(together, method)
    result = list(frames)
    for index, frame in shown:
        mine = adjusted[adjusted["_frame"] == index].drop(columns="_frame")
        result[index] = mine.set_axis(frame.index)
    return result


@dataclass(frozen=True)
class LensDifferences:
    """One run's paired differences, for the pair view: which lens, where its section is."""

    lens: str
    title: str
    anchor: str
    differences: pd.DataFrame


@dataclass
class PairRow:
    """One lens's comparison of a pair, as text for the page."""

    lens: str
    title: str
    anchor: str
    difference: str
    interval: str
    n: int
    test: str
    p: str
    p_adjusted: str
    effect: str


@dataclass
class Pair:
    """Two models (first minus second) and every lens that compared them."""

    first: str
    second: str
    rows: list[PairRow] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.first} vs {self.second}"


def _number(value: object, digits: str = ".3g", signed: bool = False) -> str:
    if value is None or pd.isna(value):  # type: ignore[arg-type]
        return ""
    return format(float(value), f"+{digits}" if signed else digits)  # type: ignore[arg-type]


def _flipped(row: pd.Series) -> pd.Series:
    """`row` as model_b minus model_a: the difference and its CI negated, the effect size
    turned round (d_z negated, an odds ratio inverted)."""
    turned = row.copy()
    turned["difference"] = -row["difference"]
    turned["ci_low"], turned["ci_high"] = -row["ci_high"], -row["ci_low"]
    effect = row["effect_size"]
    if effect is not None and not pd.isna(effect):
        turned["effect_size"] = 1 / effect if row["effect_size_name"] == ODDS_RATIO else -effect
    return turned


def _pair_row(entry: LensDifferences, row: pd.Series) -> PairRow:
    measured = row["p"] is not None and not pd.isna(row["p"])
    if str(row["test_note"] or "").startswith(NOT_COMPARED):
        return PairRow(lens=entry.lens, title=entry.title, anchor=entry.anchor,
                       difference="n/a", interval="", n=int(row["n"]), test=row["test_note"],
                       p="", p_adjusted="", effect="")  # fmt: skip
    effect = _number(row["effect_size"])
    adjusted = _number(row["p_adjusted"])
    return PairRow(
        lens=entry.lens, title=entry.title, anchor=entry.anchor,
        difference=_number(row["difference"], signed=True) or "n/a",
        interval=(f"[{_number(row['ci_low'])}, {_number(row['ci_high'])}]" if _number(row["ci_low"])
                  else no_difference_ci(int(row["n"]), row["difference"], row["test_note"])),
        n=int(row["n"]),
        test=row["test"] if measured else (row["test_note"] or "no test"),
        p=_number(row["p"]), p_adjusted=f"{adjusted} ({row['adjustment']})" if adjusted else "",
        effect=f"{row['effect_size_name']} {effect}" if effect else (row["test_note"] or "") if measured else "",
    )  # fmt: skip


def pair_view(entries: list[LensDifferences], name: Callable[[str], str] = str) -> list[Pair]:
    """Every pair of models (by their report row names) with each lens's difference, CI,
    test, p and adjusted p; a pair's first model is the one first in sort order."""
    pairs: dict[tuple[str, str], Pair] = {}
    for entry in entries:
        for _, row in entry.differences.iterrows():
            a, b = name(row["model_a"]), name(row["model_b"])
            if a == b:
                continue
            shown = row if a < b else _flipped(row)
            first, second = sorted((a, b))
            pair = pairs.setdefault((first, second), Pair(first, second))
            pair.rows.append(_pair_row(entry, shown))
    return [pairs[key] for key in sorted(pairs)]
