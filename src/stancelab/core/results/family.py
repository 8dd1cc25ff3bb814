"""One family of p-values per summary and per report (issue 36): the headline's paired
differences and every test a probe's own tables show (`Probe.tested`: even-handedness's
differences of each metric, prior prejudice's group effects, IssueBench's framing
correlations) are adjusted together, Holm by default or Benjamini-Hochberg (`--adjust
fdr_bh`), by `core.stats.family.adjust_pvalues`. A table's rows that repeat the headline's
differences (even-handedness's headline metric) count once: they take the headline pair's
adjusted p. Each tested table gets `p_adjusted` and `adjustment` columns; its `decide` rewrites
what follows from them (a group effect "detected" only below 0.05 adjusted), and `summarise`
the summary's copy of the table."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from stancelab.core.stats.family import adjust_pvalues
from stancelab.core.values import json_safe

FAMILY_KEY = "p_family"
"""summary.json key: the adjustment, the number of tests and where they come from"""
PAIR = ["model_a", "model_b"]


@dataclass(frozen=True)
class Tested:
    """A table whose rows carry a p-value the summary or the report shows."""

    __test__ = False  # a name pytest would otherwise collect from the tests that import it
    table: str
    p: str = "p"
    repeats_headline: tuple[str, Any] | None = None
    """(column, value) of the rows that are the headline's paired differences again"""
    decide: Callable[[pd.DataFrame], pd.DataFrame] | None = None
    """the table with what follows from `p_adjusted` rewritten"""
    summarise: Callable[[dict[str, Any], pd.DataFrame], None] | None = None
    """rewrites the summary's copy of the table"""


def _repeats(frame: pd.DataFrame, tested: Tested) -> pd.Series:
    if tested.repeats_headline is None or tested.repeats_headline[0] not in frame:
        return pd.Series(False, index=frame.index)
    column, value = tested.repeats_headline
    return frame[column] == value


@dataclass(frozen=True)
class Part:
    """One run's members of a family: its headline's paired differences and its tables."""

    headline: pd.DataFrame | None
    tables: Mapping[str, pd.DataFrame]
    tested: Sequence[Tested] = ()


@dataclass(frozen=True)
class Adjusted:
    """A part after the family's adjustment: the tested tables only, and each source's count."""

    headline: pd.DataFrame | None
    tables: dict[str, pd.DataFrame]
    sizes: dict[str, int]


def _sources(part: Part) -> list[tuple[str, pd.DataFrame, str, pd.Series]]:
    """(name, frame, p column, rows counted) of each member table of a part."""
    sources = []
    if part.headline is not None and not part.headline.empty:
        sources.append(
            ("headline_differences", part.headline, "p", pd.Series(True, index=part.headline.index))
        )
    for spec in part.tested:
        frame = part.tables.get(spec.table)
        if frame is not None and not frame.empty and spec.p in frame:
            sources.append((spec.table, frame, spec.p, ~_repeats(frame, spec)))
    return sources


def adjust_parts(parts: Sequence[Part], method: str) -> list[Adjusted]:
    """Every part's tested p-values adjusted by `method` as one family (a summary: one part; a
    report: every run): each member table with `p_adjusted` and `adjustment`."""
    sources = [_sources(part) for part in parts]
    pvalues: list[float | None] = []
    for part_sources in sources:
        for _, frame, column, counted in part_sources:
            pvalues += [None if pd.isna(p) or not keep else float(p)
                        for p, keep in zip(frame[column], counted, strict=True)]  # fmt: skip
    adjusted = adjust_pvalues(pvalues, method)
    results, start = [], 0
    for part, part_sources in zip(parts, sources, strict=True):
        out: dict[str, pd.DataFrame] = {}
        sizes: dict[str, int] = {}
        for name, frame, _column, _counted in part_sources:
            mine = adjusted[start : start + len(frame)]
            start += len(frame)
            done = frame.copy()
            done["p_adjusted"] = pd.Series(mine, index=frame.index, dtype=object)
            done["adjustment"] = pd.Series([method if value is not None else None for value in mine],
                                           index=frame.index, dtype=object)  # fmt: skip
            sizes[name] = sum(value is not None for value in mine)
            out[name] = done
        headline = out.pop("headline_differences", part.headline)
        for spec in part.tested:
            if spec.table in out:
                out[spec.table] = _finish(out[spec.table], spec, headline)
        results.append(Adjusted(headline, out, sizes))
    return results


def _finish(frame: pd.DataFrame, spec: Tested, headline: pd.DataFrame | None) -> pd.DataFrame:
    """Rows repeating the headline take its pair's adjusted p; then the table's `decide`."""
    repeats = _repeats(frame, spec)
    if repeats.any() and headline is not None and not headline.empty and set(PAIR) <= set(frame):
        lookup = {
            (row.model_a, row.model_b): (row.p_adjusted, row.adjustment)
            for row in headline.itertuples()
        }
        for index in frame.index[repeats]:
            found = lookup.get((frame.at[index, "model_a"], frame.at[index, "model_b"]))
            if found is not None:
                frame.at[index, "p_adjusted"], frame.at[index, "adjustment"] = found
    return spec.decide(frame) if spec.decide is not None else frame


def frame_records(frame: pd.DataFrame | None) -> list[dict[str, Any]]:
    """A frame as JSON-safe records for summary.json (none for no frame)."""
    if frame is None or frame.empty:
        return []
    cleaned = frame.astype(object)
    cleaned = cleaned.where(cleaned.notna(), None)
    return [
        {key: json_safe(value) for key, value in row.items()} for row in cleaned.to_dict("records")
    ]


def family_record(method: str, sizes: Mapping[str, int]) -> dict[str, Any]:
    """The summary's record of its family."""
    return {"adjustment": method, "tests": sum(sizes.values()), "sources": dict(sizes)}
