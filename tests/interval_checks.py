"""Checks on the intervals of results (issue 24): each (ci_low, ci_high) pair, in table columns
or summary keys named `ci_low` / `ci_high` or `<x>_ci_low` / `<x>_ci_high`, is either missing
(no CI, both bounds) or has ci_low < ci_high: never of zero width, never one bound alone."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd


def interval_pairs(names: Iterable[str]) -> list[tuple[str, str]]:
    """(low, high) name pairs: `ci_low` / `ci_high` and `<x>_ci_low` / `<x>_ci_high`."""
    names = list(names)
    return [(name, name.removesuffix("ci_low") + "ci_high") for name in names
            if name.endswith("ci_low") and name.removesuffix("ci_low") + "ci_high" in names]  # fmt: skip


def bound(value: Any) -> float | None:
    """A bound as a float, None when it is missing (no CI)."""
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number


def interval_fault(low: Any, high: Any) -> str | None:
    """What is wrong with the interval [low, high]: one bound alone, or zero width (or less)."""
    low, high = bound(low), bound(high)
    if (low is None) != (high is None):
        return "one bound missing"
    if low is not None and high is not None and high <= low:
        return "zero width"
    return None


def frame_faults(frame: pd.DataFrame, where: str) -> list[str]:
    """Every row of `frame` with a faulty interval, as 'where row i low=.. high=..: fault'."""
    found = []
    for low_name, high_name in interval_pairs(str(column) for column in frame.columns):
        for index, (low, high) in enumerate(zip(frame[low_name], frame[high_name], strict=True)):
            if fault := interval_fault(low, high):
                found.append(f"{where} row {index} {low_name}={low} {high_name}={high}: {fault}")
    return found


def interval_faults(tables: dict[str, pd.DataFrame]) -> list[str]:
    """Every faulty interval of a probe's result tables, by table name and row."""
    return [fault for name, table in tables.items() for fault in frame_faults(table, name)]


def _summary_pairs(node: Any, where: str) -> Iterator[tuple[str, Any, Any]]:
    if isinstance(node, dict):
        for low_name, high_name in interval_pairs(str(key) for key in node):
            yield f"{where}.{low_name}", node[low_name], node[high_name]
        for key, value in node.items():
            yield from _summary_pairs(value, f"{where}.{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _summary_pairs(value, f"{where}[{index}]")


def summary_faults(path: Path) -> list[str]:
    """Every faulty interval of a summary.json, by its key path."""
    pairs = _summary_pairs(json.loads(path.read_text()), f"{path.parent.name}/summary.json")
    return [f"{where}={low} high={high}: {fault}" for where, low, high in pairs
            if (fault := interval_fault(low, high))]  # fmt: skip


def table_faults(path: Path) -> list[str]:
    """Every faulty interval of a written table (CSV), by file and row."""
    try:
        frame = pd.read_csv(path, low_memory=False)
    except pd.errors.EmptyDataError:  # a table with no columns holds no interval
        return []
    return frame_faults(frame, f"{path.parent.parent.name}/{path.name}")


def folder_faults(folder: Path) -> list[str]:
    """Every faulty interval in the tables (`tables/*.csv`) and summaries under `folder`."""
    tables = sorted(folder.rglob("tables/*.csv"))
    summaries = sorted(folder.rglob("summary.json"))
    assert tables or summaries, f"nothing to read under {folder}"
    return [hit for path in tables for hit in table_faults(path)] + [
        hit for path in summaries for hit in summary_faults(path)
    ]
