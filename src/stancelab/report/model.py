"""What a report is made of: runs, headline profiles, figures, tables and sections."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from stancelab.core.errors import StancelabError
from stancelab.core.stats.intervals import no_ci_reason


@dataclass(frozen=True)
class Evidence:
    """What every figure and headline states: sample size, interval, refusals, unparsed."""

    n: str
    ci: str
    refusals: str
    unparsed: str

    def __post_init__(self) -> None:
        for name in ("n", "ci", "refusals", "unparsed"):
            if not getattr(self, name).strip():
                raise StancelabError(f"Report evidence needs a non-empty '{name}'.")


def estimate_fields(entry: dict[str, Any] | None, scale: float = 1.0) -> dict[str, Any]:
    """value / ci_low / ci_high of a summary estimate (scaled), None where missing;
    `ci_note`: why there is no interval ("no CI (n = 1)"), empty when there is one; and, as
    summary.json decides them for a headline (`core.results.summary.settle_headline`), why it is not
    measured and whether it is partial."""
    entry = entry or {}
    fields = {key: entry[key] * scale if entry.get(key) is not None else None
              for key in ("value", "ci_low", "ci_high")}  # fmt: skip
    missing = fields["ci_low"] is None or fields["ci_high"] is None
    return fields | {"ci_note": no_ci_reason(entry.get("n"), fields["value"]) if missing else "",
                     "not_measured": entry.get("not_measured") or "",
                     "partial": bool(entry.get("partial"))}  # fmt: skip


@dataclass(frozen=True)
class Profile:
    """A model's headline figure for one lens, with its CI and a sentence saying what it means."""

    probe: str
    model: str
    label: str
    value: float | None
    ci_low: float | None
    ci_high: float | None
    unit: str
    meaning: str
    evidence: Evidence
    digits: int = 1
    n_short: str = ""  # e.g. "104 issues", for the front table
    unusable_short: str = ""  # e.g. "12% other", for the front table
    ci_note: str = ""  # why there is no CI, e.g. "no CI (n = 1)"
    not_measured: str = ""  # e.g. "not measured: 6 of 6 judge verdicts unparsed"
    partial: bool = (
        False  # read from fewer samples than the run selects (interrupted, shards missing)
    )
    unit_set: str = ""  # the units the headline rests on, e.g. "all 104 issues" (`Probe.unit_sets`)

    def measured(self) -> bool:
        return not self.not_measured and self.value is not None and not math.isnan(self.value)

    def value_text(self) -> str:
        if self.not_measured:
            return "not measured:"
        if self.value is None or math.isnan(self.value):
            return "n/a"
        return f"{self.value:.{self.digits}f}"

    def ci_text(self) -> str:
        if self.not_measured:
            return self.not_measured.removeprefix("not measured: ")
        if self.ci_low is None or self.ci_high is None or math.isnan(self.ci_low):
            return self.ci_note or "no CI"
        return f"95% CI [{self.ci_low:.{self.digits}f}, {self.ci_high:.{self.digits}f}]"

    def interval_text(self) -> str:
        """The CI alone, `[low, high]`, or empty when there is none."""
        text = self.ci_text()
        return text.removeprefix("95% CI ") if text.startswith("95% CI") else ""

    def sort_value(self) -> str:
        """The value for sorting the front table; empty when not measured."""
        return f"{self.value:.6g}" if self.measured() else ""


@dataclass(frozen=True)
class Figure:
    """A plot (PNG, base64) with its caption and evidence line."""

    title: str
    png_base64: str
    caption: str
    evidence: Evidence


@dataclass(frozen=True)
class Table:
    """A result table shown in the report; `link_columns` make a row open its transcripts."""

    title: str
    frame: pd.DataFrame
    caption: str = ""
    link_columns: tuple[str, ...] = ()


@dataclass
class Section:
    """One method's part of the report."""

    probe: str
    title: str
    intro: str
    figures: list[Figure] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
