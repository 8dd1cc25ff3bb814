"""One probe run's results: its analysis (summary and tables, in memory) and as written to its
folder (summary.json and tables/*.csv), and how its headlines read."""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from stancelab.core.results.evidence import LogEvidence

SUMMARY_FILE = "summary.json"
TABLES_DIR = "tables"


@dataclass
class Analysis:
    """A probe's analysis of a folder's logs, before it is written: the summary (its evidence
    included, `with_evidence`) and the tables."""

    summary: dict[str, Any]
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)


def write_results(folder: Path, analysis: Analysis) -> Path:
    """Write an analysis to `folder`: tables/*.csv, then summary.json; returns the summary's path."""
    tables_dir = folder / TABLES_DIR
    if analysis.tables:
        tables_dir.mkdir(parents=True, exist_ok=True)
    for name, table in analysis.tables.items():
        table.to_csv(tables_dir / f"{name}.csv", index=False)
    return write_summary(folder, analysis.summary)


class WrittenTables(Mapping[str, pd.DataFrame]):
    """An analysis's tables as a reader of tables/*.csv gets them (`read_tables`), each one
    passed through CSV when first asked for, so what is computed from them before they are
    written (paired differences, `--until-ci` looks) equals what is computed after."""

    def __init__(self, tables: Mapping[str, pd.DataFrame]) -> None:
        self._tables = tables
        self._read: dict[str, pd.DataFrame] = {}

    def __getitem__(self, name: str) -> pd.DataFrame:
        if name not in self._read:
            self._read[name] = _through_csv(self._tables[name])
        return self._read[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._tables)

    def __len__(self) -> int:
        return len(self._tables)


def _through_csv(table: pd.DataFrame) -> pd.DataFrame:
    text = table.to_csv(index=False)
    try:
        return pd.read_csv(io.StringIO(text))
    except pd.errors.EmptyDataError:
        return pd.DataFrame()


@dataclass
class RunResult:
    """One probe's results in one run folder: summary.json, tables/*.csv and (maybe) logs."""

    probe: str
    folder: Path
    summary: dict[str, Any]
    tables: Mapping[str, pd.DataFrame]

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


def analysis_unit_values(
    probe_name: str, unit_values: Callable[[RunResult], Any], folder: Path, analysis: Analysis
) -> Any:
    """A probe's per-unit headline values (model, unit, value) from an analysis not yet
    written, as `folder_unit_values` reads them once it is."""
    run = RunResult(probe_name, folder, analysis.summary, WrittenTables(analysis.tables))
    return unit_values(run)


def unmeasured_headlines(profiles: Iterable[Any]) -> dict[str, str]:
    """{model: why its headline is not measured} from a run's headline profiles (`Probe.profiles`):
    the models a comparison leaves out (`core.stats.compare.paired_differences`)."""
    return {profile.model: profile.not_measured or "not measured: no value"
            for profile in profiles if not profile.measured()}  # fmt: skip


def analysis_unmeasured(
    probe_name: str, profiles: Callable[[RunResult], Iterable[Any]], folder: Path,
    analysis: Analysis,
) -> dict[str, str]:  # fmt: skip
    """`unmeasured_headlines` of an analysis not yet written."""
    run = RunResult(probe_name, folder, analysis.summary, WrittenTables(analysis.tables))
    return unmeasured_headlines(profiles(run))


def write_summary(folder: Path, summary: dict[str, Any]) -> Path:
    """Write summary.json as every probe writes it."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / SUMMARY_FILE
    path.write_text(json.dumps(summary, indent=2, sort_keys=True, default=str) + "\n")
    return path


def settle_headline(
    entry: dict[str, Any] | None, not_measured: str = "", partial: bool = False
) -> dict[str, Any]:
    """A headline estimate as summary.json holds it, and as the CLI and the report read it:
    `not_measured` is the reason it is not measured (None when it is), and then `value` and
    its CI are null (the figure is always also in `value_if_measured`, `ci_if_measured`); `partial`:
    read from fewer samples than the run selects (`core.results.evidence.LogEvidence`)."""
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
    """`summary` with the record of what its read of the logs left out (`core.results.evidence.LogEvidence`),
    under `evidence`; unchanged without one (imports of released data)."""
    if evidence is not None:
        summary["evidence"] = evidence.as_dict()
    return summary


def is_partial(evidence: LogEvidence | None, model: str) -> bool:
    """Whether a model's results are partial by `evidence` (none: an import, complete)."""
    return evidence is not None and evidence.is_partial(model)
