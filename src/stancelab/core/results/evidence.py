"""What a read of a folder's logs left out, returned by every reader of logs with what it read
(`core.results.logs.Counted`): interrupted logs ignored, samples read from interrupted logs,
shards missing. A summary states it under `evidence` (`core.results.summary.with_evidence`),
and the CLI and the report print its notes."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class LogEvidence:
    """What an analysis read from a folder's logs, and what it left out."""

    ignored_logs: set[str] = field(default_factory=set)
    """interrupted logs left out: a complete log of their run is in the folder"""
    interrupted_samples: dict[str, set[str]] = field(default_factory=dict)
    """interrupted log -> the samples (`id#epoch`) read from it (no complete log of its run)"""
    missing_shards: dict[tuple[str, int], set[int]] = field(default_factory=dict)
    """(subject model, shard count N) -> shard indices without a complete log"""
    partial_models: set[str] = field(default_factory=set)

    def add(self, other: LogEvidence) -> LogEvidence:
        """This record with what `other` read and left out added (self, changed)."""
        self.ignored_logs |= other.ignored_logs
        for log, samples in other.interrupted_samples.items():
            self.interrupted_samples.setdefault(log, set()).update(samples)
        for key, missing in other.missing_shards.items():
            self.missing_shards.setdefault(key, set()).update(missing)
        self.partial_models |= other.partial_models
        return self

    @classmethod
    def of(cls, *records: LogEvidence) -> LogEvidence:
        """One record of several reads (each reader returns its own)."""
        combined = cls()
        for record in records:
            combined.add(record)
        return combined

    @property
    def partial(self) -> bool:
        return bool(self.partial_models)

    def is_partial(self, model: str) -> bool:
        """Whether a subject model's results hold fewer samples than its runs select."""
        return model in self.partial_models

    def notes(self) -> list[str]:
        """What was left out, one line each ("2 interrupted logs ignored", ...)."""
        notes = []
        if self.ignored_logs:
            count = len(self.ignored_logs)
            notes.append(f"{count} interrupted {_plural(count, 'log')} ignored (a complete "
                         f"run of the same settings is in the folder)")  # fmt: skip
        read = {log: samples for log, samples in self.interrupted_samples.items() if samples}
        if read:
            samples = sum(len(ids) for ids in read.values())
            notes.append(f"{samples} {_plural(samples, 'sample')} read from {len(read)} "
                         f"interrupted {_plural(len(read), 'log')}: partial")  # fmt: skip
        several = len({model for model, _ in self.missing_shards}) > 1
        for (model, count), missing in sorted(self.missing_shards.items()):
            whose = f" for {model}" if several else ""
            notes.append(f"{_plural(len(missing), 'shard')} {_ranges(sorted(missing))} of {count} "
                         f"missing{whose}: partial")  # fmt: skip
        return notes

    def as_dict(self) -> dict[str, Any]:
        """The record summary.json holds under `evidence`."""
        return {
            "partial": self.partial,
            "partial_models": sorted(self.partial_models),
            "interrupted_logs_ignored": sorted(Path(log).name for log in self.ignored_logs),
            "interrupted_logs_read": {Path(log).name: len(ids) for log, ids in
                                      sorted(self.interrupted_samples.items()) if ids},
            "missing_shards": [{"model": model, "shards": sorted(missing), "of": count}
                               for (model, count), missing in sorted(self.missing_shards.items())],
            "notes": self.notes(),
        }  # fmt: skip


def _plural(count: int, noun: str) -> str:
    return noun if count == 1 else f"{noun}s"


def _ranges(numbers: list[int]) -> str:
    """[1, 3, 4, 5] -> '1, 3-5'."""
    runs: list[list[int]] = []
    for number in numbers:
        if runs and number == runs[-1][-1] + 1:
            runs[-1].append(number)
        else:
            runs.append([number])
    return ", ".join(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}" for run in runs)


def evidence_record(summary: dict[str, Any]) -> dict[str, Any]:
    """A summary's evidence record (empty for summaries without one, e.g. imports)."""
    record = summary.get("evidence")
    return record if isinstance(record, dict) else {}


def evidence_text(summary: dict[str, Any]) -> str:
    """What a summary's analysis left out, as the CLI and the report state it ('' when it read
    every sample of complete runs)."""
    record = evidence_record(summary)
    notes = record.get("notes") or []
    if not notes:
        return ""
    head = "Partial results" if record.get("partial") else "Complete results"
    return f"{head}: " + "; ".join(notes) + "."
