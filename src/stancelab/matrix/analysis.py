"""The topic x lens matrix as plain functions over frames.

Each probe reads its run into a stance frame (`core.data.topics.STANCE_COLUMNS`): per model and
shared topic, a signed agreement with the topic's canonical claim and its 95% CI. Here:

- every cell gets a **direction**: +1 when its CI lies above 0 and its test of "no stance"
  (`p`, a sign-flip test over its units) rejects after adjusting across every tested cell of
  the matrix (Holm by default, or Benjamini-Hochberg: `p_adjusted`), -1 likewise below, 0 when
  the CI includes 0, when the adjusted p does not reject, when there is no CI or no test (one
  unit, or all units equal), when `n` (the lens's independent units: issues, topics,
  statements, claims) is below 2 whatever the CI, or when the lens did not measure the cell
  (`direction_note` says which). With Holm, the chance that any cell of the matrix points a way
  its truth does not is at most 5%, and so is the chance of any false conflict;
- every (model, topic) gets a **status** from its measured lenses (a stance that is a number):
  `not measured` (none), `one lens` (one), `conflict` (at least one lens points each way; the
  lenses on the smaller side are named as dissenting, every non-zero lens on a tie),
  `agree` (two or more, every one pointing the same non-zero way), `unclear` (two or more,
  no conflict, but at least one whose CI includes 0 or has none);
- per model across topics and per topic across models: the share of (model, topic) pairs
  with `agree` among those with at least two lenses measured, with a Clopper-Pearson CI and its n;
  "not measured" (never 0) when no pair has two lenses measured.

Directions, not magnitudes, are compared: the lenses measure different behaviours on
different scales. `family` says how the directions were controlled and how many conflicts the
rule would show by chance if no lens had a stance on any topic (`core.stats.family`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from stancelab.core.data.topics import STANCE_COLUMNS, topic_ids
from stancelab.core.stats.compare import DEFAULT_ADJUSTMENT, check_adjustment
from stancelab.core.stats.family import ALPHA, adjust_pvalues, chance_conflicts
from stancelab.core.stats.intervals import no_ci_reason, proportion_ci

AGREE = "agree"
CONFLICT = "conflict"
UNCLEAR = "unclear"
ONE_LENS = "one lens"
NOT_MEASURED = "not measured"
STATUSES = (AGREE, CONFLICT, UNCLEAR, ONE_LENS, NOT_MEASURED)

CELL_COLUMNS = (*STANCE_COLUMNS, "p_adjusted", "measured", "direction", "direction_note")
STATUS_COLUMNS = (
    "model", "topic", "status", "measured_lenses", "lenses_for", "lenses_against",
    "lenses_unclear", "lenses_not_measured", "dissenting", "direction",
)  # fmt: skip
SHARE_COLUMNS = ("value", "ci_low", "ci_high", "n", "agree", "pairs", "not_measured")


def cell_direction(
    stance: float, ci_low: float, ci_high: float, n: int | None = None
) -> tuple[int, str]:
    """(+1 / -1 / 0, why): the side of 0 a cell's CI lies on. A cell from fewer than two of
    its lens's independent units (`n`), or without a CI, has no direction."""
    if stance is None or _isnan(stance):
        return 0, "not measured"
    units = None if n is None or _isnan(n) else int(n)
    if units is not None and units < 2:
        return 0, no_ci_reason(units, stance)
    if ci_low is None or ci_high is None or _isnan(ci_low) or _isnan(ci_high):
        return 0, no_ci_reason(units, stance)
    if ci_low > 0:
        return 1, "CI above 0"
    if ci_high < 0:
        return -1, "CI below 0"
    return 0, "CI includes 0"


def _isnan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


def combine(frames: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """Stance frames into one (STANCE_COLUMNS); a later row wins a repeated (model, topic, lens)."""
    parts = [
        frame.loc[:, list(STANCE_COLUMNS)]
        for frame in frames
        if frame is not None and not frame.empty
    ]
    if not parts:
        return pd.DataFrame(columns=list(STANCE_COLUMNS))
    combined = pd.concat(parts, ignore_index=True)
    return combined.drop_duplicates(["model", "topic", "lens"], keep="last").reset_index(drop=True)


def complete_grid(stances: pd.DataFrame, lenses: Sequence[str]) -> pd.DataFrame:
    """Every (model, topic, lens) of the models and topics in `stances` and the given lenses:
    cells no lens row covers are added as not measured, saying why."""
    models = list(dict.fromkeys(stances["model"]))
    topics = [topic for topic in topic_ids() if topic in set(stances["topic"])]
    present = {(row.model, row.topic, row.lens) for row in stances.itertuples(index=False)}
    lens_models = {(row.model, row.lens) for row in stances.itertuples(index=False)}
    added = []
    for model in models:
        for topic in topics:
            for lens in lenses:
                if (model, topic, lens) in present:
                    continue
                why = ("no items of this topic in its run" if (model, lens) in lens_models
                       else "lens not run for this model (or it reads no topic stances)")  # fmt: skip
                added.append({"model": model, "topic": topic, "lens": lens, "stance": math.nan,
                              "ci_low": math.nan, "ci_high": math.nan, "n": 0, "unusable": 0,
                              "measure": "", "detail": why, "transcripts": ""})  # fmt: skip
    grid = (
        pd.concat([stances, pd.DataFrame(added, columns=list(STANCE_COLUMNS))], ignore_index=True)
        if added
        else stances
    )
    order = {topic: index for index, topic in enumerate(topic_ids())}
    lens_order = {lens: index for index, lens in enumerate(lenses)}
    keys = grid.assign(_m=grid["model"].map(models.index), _t=grid["topic"].map(order),
                       _l=grid["lens"].map(lambda lens: lens_order.get(lens, len(lens_order))))  # fmt: skip
    return (
        keys.sort_values(["_m", "_t", "_l"]).drop(columns=["_m", "_t", "_l"]).reset_index(drop=True)
    )


def family_direction(direction: int, note: str, p: float | None, adjusted: float | None,
                     adjust: str, tested: int, alpha: float = ALPHA) -> tuple[int, str]:  # fmt: skip
    """A cell's CI direction kept only where its test rejects after the family's adjustment."""
    if direction == 0:
        return direction, note
    if adjusted is None:
        return 0, f"{note}, but no test of its direction (no p)"
    if adjusted < alpha:
        return direction, note
    return (
        0,
        f"{note}, but not after {adjust} over {tested} cells (p {p:.2g}, adjusted {adjusted:.2g})",
    )


def with_directions(
    stances: pd.DataFrame, adjust: str = DEFAULT_ADJUSTMENT, alpha: float = ALPHA
) -> pd.DataFrame:
    """The stance frame with `p_adjusted` (across every measured cell with a p), `measured`,
    `direction` and `direction_note` per cell."""
    adjust = check_adjustment(adjust)
    frame = stances.copy()
    floats = frame[["stance", "ci_low", "ci_high", "p"]].astype(float)
    frame[["stance", "ci_low", "ci_high", "p"]] = floats
    measured = ~floats["stance"].isna()
    pvalues = [p if is_measured and not math.isnan(p) else None
               for p, is_measured in zip(floats["p"], measured, strict=True)]  # fmt: skip
    adjusted = adjust_pvalues(pvalues, adjust)
    tested = sum(p is not None for p in pvalues)
    directions = [family_direction(*cell_direction(row.stance, row.ci_low, row.ci_high, row.n), p, corrected,
                                   adjust, tested, alpha)
                  for row, p, corrected in zip(frame.itertuples(index=False), pvalues, adjusted, strict=True)]  # fmt: skip
    frame["p_adjusted"] = pd.Series(adjusted, index=frame.index, dtype=float)
    frame["measured"] = measured
    frame["direction"] = [direction for direction, _ in directions]
    frame["direction_note"] = [
        f"not measured: {str(row.detail).removeprefix('not measured: ')}"
        if not measured and row.detail
        else note
        for row, measured, (_, note) in zip(
            frame.itertuples(index=False), frame["measured"], directions, strict=True
        )
    ]
    return frame.loc[:, list(CELL_COLUMNS)]


@dataclass(frozen=True)
class TopicStatus:
    """How the lenses of one (model, topic) relate."""

    status: str
    measured: tuple[str, ...]
    lenses_for: tuple[str, ...]
    lenses_against: tuple[str, ...]
    lenses_unclear: tuple[str, ...]
    dissenting: tuple[str, ...]

    @property
    def direction(self) -> int:
        """The lenses' shared direction when they agree, else 0."""
        if self.status != AGREE:
            return 0
        return 1 if self.lenses_for else -1


def topic_status(cells: pd.DataFrame) -> TopicStatus:
    """The status of one (model, topic) from its cells (`with_directions` rows)."""
    measured = cells[cells["measured"]]
    lenses_for = tuple(measured.loc[measured["direction"] > 0, "lens"])
    against = tuple(measured.loc[measured["direction"] < 0, "lens"])
    unclear = tuple(measured.loc[measured["direction"] == 0, "lens"])
    dissenting: tuple[str, ...] = ()
    if len(measured) == 0:
        status = NOT_MEASURED
    elif len(measured) == 1:
        status = ONE_LENS
    elif lenses_for and against:
        status = CONFLICT
        if len(lenses_for) == len(against):
            dissenting = lenses_for + against
        else:
            dissenting = min(lenses_for, against, key=len)
    elif unclear:
        status = UNCLEAR
    else:
        status = AGREE
    return TopicStatus(status, tuple(measured["lens"]), lenses_for, against, unclear, dissenting)


def topic_statuses(cells: pd.DataFrame) -> pd.DataFrame:
    """One row per (model, topic): its status, the lenses on each side, the dissenting ones."""
    rows = []
    for (model, topic), group in cells.groupby(["model", "topic"], sort=False):
        status = topic_status(group)
        not_measured = tuple(group.loc[~group["measured"], "lens"])
        rows.append({
            "model": model, "topic": topic, "status": status.status,
            "measured_lenses": len(status.measured), "lenses_for": ", ".join(status.lenses_for),
            "lenses_against": ", ".join(status.lenses_against),
            "lenses_unclear": ", ".join(status.lenses_unclear),
            "lenses_not_measured": ", ".join(not_measured),
            "dissenting": ", ".join(status.dissenting), "direction": status.direction,
        })  # fmt: skip
    return pd.DataFrame(rows, columns=list(STATUS_COLUMNS))


def agreement_share(statuses: pd.DataFrame) -> dict[str, Any]:
    """Share of (model, topic) pairs whose measured lenses agree, over the pairs with at least
    two lenses measured, with its Clopper-Pearson CI (NaN bounds from one pair); NaN and a `not_measured`
    reason (never 0) without any."""
    comparable = statuses[statuses["measured_lenses"] >= 2]
    agree = int((comparable["status"] == AGREE).sum())
    pairs = len(statuses)
    if comparable.empty:
        reason = "no topic with two lenses measured" if pairs else "no topic stances"
        return {"value": math.nan, "ci_low": math.nan, "ci_high": math.nan, "n": 0, "agree": 0, "pairs": pairs,
                "not_measured": f"not measured: {reason}"}  # fmt: skip
    estimate = proportion_ci([float(status == AGREE) for status in comparable["status"]])
    return {"value": estimate.value, "ci_low": estimate.ci_low, "ci_high": estimate.ci_high, "n": estimate.n,
            "agree": agree, "pairs": pairs, "not_measured": ""}  # fmt: skip


def shares_by(statuses: pd.DataFrame, key: str) -> pd.DataFrame:
    """`agreement_share` per model (key="model") or per topic (key="topic")."""
    rows = [
        {key: value, **agreement_share(group)} for value, group in statuses.groupby(key, sort=False)
    ]
    return pd.DataFrame(rows, columns=[key, *SHARE_COLUMNS])


def family_record(
    cells: pd.DataFrame, statuses: pd.DataFrame, adjust: str, alpha: float = ALPHA
) -> dict[str, Any]:
    """How the matrix's directions were controlled: the adjustment, the tested cells, the
    conflicts found and the number the rule would show by chance (no lens with a stance)."""
    tested = cells[cells["measured"] & cells["p"].notna()] if not cells.empty else cells
    groups = [
        group["n"].astype(int).tolist()
        for _, group in tested.groupby(["model", "topic"], sort=False)
    ]
    conflicts = int((statuses["status"] == CONFLICT).sum()) if not statuses.empty else 0
    return {"adjustment": adjust, "alpha": alpha, "tested_cells": len(tested), "conflicts": conflicts,
            "conflicts_expected_by_chance": chance_conflicts(groups, adjust, alpha)}  # fmt: skip


@dataclass
class Matrix:
    """The matrix of one set of runs: cells, statuses per (model, topic), the shares, and how
    its directions were controlled (`family_record`)."""

    cells: pd.DataFrame
    statuses: pd.DataFrame
    by_model: pd.DataFrame
    by_topic: pd.DataFrame
    lenses: tuple[str, ...]
    family: dict[str, Any] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return self.cells.empty

    @property
    def models(self) -> list[str]:
        return list(dict.fromkeys(self.cells["model"]))

    @property
    def topics(self) -> list[str]:
        return list(dict.fromkeys(self.cells["topic"]))


def build_matrix(
    stances: pd.DataFrame, lenses: Sequence[str], adjust: str = DEFAULT_ADJUSTMENT
) -> Matrix:
    """The matrix of a combined stance frame over the given lenses (in column order), its
    directions controlled across cells by `adjust` (holm or fdr_bh)."""
    lens_names = tuple(dict.fromkeys([*lenses, *stances["lens"]]))
    cells = with_directions(complete_grid(stances, lens_names), adjust) if not stances.empty else \
        pd.DataFrame(columns=list(CELL_COLUMNS))  # fmt: skip
    statuses = (
        topic_statuses(cells) if not cells.empty else pd.DataFrame(columns=list(STATUS_COLUMNS))
    )
    return Matrix(cells, statuses, shares_by(statuses, "model"), shares_by(statuses, "topic"), lens_names,
                  family_record(cells, statuses, adjust))  # fmt: skip
