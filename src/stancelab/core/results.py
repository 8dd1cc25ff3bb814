"""One probe run's results as written to its folder: summary.json and tables/*.csv."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from stancelab.core.logs import LogEvidence

SUMMARY_FILE = "summary.json"
TABLES_DIR = "tables"


@dataclass
class RunResult:
    """One probe's results in one run folder: summary.json, tables/*.csv and (maybe) logs."""

    probe: str
    folder: Path
    summary: dict[str, Any]
    tables: dict[str, pd.DataFrame]

    @property
    def logs(self) -> Path:
        return self.folder / "logs"

    @property
    def models(self) -> list[str]:
        return list(self.summary.get("models", []))

    def table(self, name: str) -> pd.DataFrame:
        """A result table, or an empty frame when this run did not produce it."""
        return self.tables.get(name, pd.DataFrame())


def read_tables(folder: Path) -> dict[str, pd.DataFrame]:
    """Every tables/*.csv of a run folder, by name (an empty file as an empty frame)."""
    tables = {}
    for path in sorted((folder / TABLES_DIR).glob("*.csv")):
        try:
            tables[path.stem] = pd.read_csv(path)
        except pd.errors.EmptyDataError:
            tables[path.stem] = pd.DataFrame()
    return tables


def folder_unit_values(
    probe_name: str, unit_values: Callable[[RunResult], Any], folder: Path, summary: dict[str, Any]
) -> Any:
    """A probe's per-unit headline values (model, unit, value) from its run folder's summary
    and tables."""
    return unit_values(RunResult(probe_name, folder, summary, read_tables(folder)))


def write_summary(folder: Path, summary: dict[str, Any]) -> Path:
    """Write summary.json as every probe writes it."""
    path = folder / SUMMARY_FILE
    path.write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    return path


def settle_headline(
    entry: dict[str, Any] | None, not_measured: str = "", partial: bool = False
) -> dict[str, Any]:
    """A headline estimate as summary.json holds it, and as the CLI and the report read it:
    `not_measured` is the reason it is not measured (None when it is), and then `value` and
    its CI are null (the figure is always also in `value_if_measured`, `ci_if_measured`); `partial`:
    read from fewer samples than the run selects (`core.logs.LogEvidence`)."""
    entry = dict(entry or {})
    # the same keys either way, so a script reads every headline alike
    entry["value_if_measured"] = entry.get("value")
    entry["ci_if_measured"] = [entry.get("ci_low"), entry.get("ci_high")]
    if not_measured:
        entry |= {"value": None, "ci_low": None, "ci_high": None}
    return entry | {"not_measured": not_measured or None, "partial": partial}


def headline_text(entry: dict[str, Any], suffix: str = "") -> str:
    """A settled headline as the CLI and the report give it: value`suffix` [CI], or why it is
    not measured; "(partial)" when it is."""
    if entry.get("not_measured") or entry.get("value") is None:
        return entry.get("not_measured") or "n/a"
    low, high = entry.get("ci_low"), entry.get("ci_high")
    interval = (
        f"[{low:.1f}, {high:.1f}]"
        if low is not None and high is not None
        else f"(no CI, n = {entry.get('n')})"
    )
    return f"{entry['value']:.1f}{suffix} {interval}" + (
        " (partial)" if entry.get("partial") else ""
    )


def with_evidence(summary: dict[str, Any], evidence: LogEvidence | None) -> dict[str, Any]:
    """`summary` with the record of what its read of the logs left out (`core.logs.LogEvidence`),
    under `evidence`; unchanged without one (imports of released data)."""
    if evidence is not None:
        summary["evidence"] = evidence.as_dict()
    return summary


def is_partial(evidence: LogEvidence | None, model: str) -> bool:
    """Whether a model's results are partial by `evidence` (none: an import, complete)."""
    return evidence is not None and evidence.is_partial(model)
