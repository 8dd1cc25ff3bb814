"""What a read of a folder's logs left out, returned by every reader of logs with what it read
(`core.results.logs.Counted`): interrupted logs ignored, samples read from interrupted logs,
shards missing, files in the log folder that are no readable log (a cut or empty `.eval`, a stray
`notes.json`). A summary states it under `evidence` (`core.results.summary.with_evidence`),
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
    configurations: dict[str, set[str]] = field(default_factory=dict)
    """subject model -> its configurations in the folder, where it ran under several: each is
    its own row (`model · configuration`, `core.results.logs.keep_configurations_apart`)"""
    unreadable_logs: set[str] = field(default_factory=set)
    """files among the logs that are no readable Inspect log, skipped: whose samples they held
    is unknown, so every model's results are partial"""

    def add(self, other: LogEvidence) -> LogEvidence:
        """This record with what `other` read and left out added (self, changed)."""
        self.ignored_logs |= other.ignored_logs
        for log, samples in other.interrupted_samples.items():
            self.interrupted_samples.setdefault(log, set()).update(samples)
        for key, missing in other.missing_shards.items():
            self.missing_shards.setdefault(key, set()).update(missing)
        self.partial_models |= other.partial_models
        self.unreadable_logs |= other.unreadable_logs
        for model, labels in other.configurations.items():
            self.configurations.setdefault(model, set()).update(labels)
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
        return bool(self.partial_models or self.unreadable_logs)

    def is_partial(self, model: str) -> bool:
        """Whether a subject model's results hold fewer samples than its runs select (any
        model's may, where a file among the logs could not be read)."""
        return model in self.partial_models or bool(self.unreadable_logs)

    def notes(self) -> list[str]:
        """What was left out, one line each ("2 interrupted logs ignored", ...)."""
        notes = [unreadable_note(self.unreadable_logs)] if self.unreadable_logs else []
        if self.ignored_logs:
            count = len(self.ignored_logs)
            notes.append(f"{count} interrupted {_plural(count, 'log')} ignored (a complete "
                         f"run of the same settings is in the folder)")  # fmt: skip
        read = {log: samples for log, samples in self.interrupted_samples.items() if samples}
        if read:
            samples = sum(len(ids) for ids in read.values())
            notes.append(f"{samples} {_plural(samples, 'sample')} read from {len(read)} "
                         f"interrupted {_plural(len(read), 'log')}: partial")  # fmt: skip
        for model, labels in sorted(self.configurations.items()):
            notes.append(f"{model} ran under {len(labels)} configurations in this folder, each "
                         f"its own row: {'; '.join(sorted(labels))}")  # fmt: skip
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
            "unreadable_logs": sorted(Path(log).name for log in self.unreadable_logs),
            "configurations": {model: sorted(labels) for model, labels in
                               sorted(self.configurations.items())},
            "notes": self.notes(),
        }  # fmt: skip


UNREADABLE_TAIL = " among the logs skipped"


def unreadable_note(logs: set[str]) -> str:
    """The note naming the files among the logs that could not be read."""
    names = ", ".join(sorted(Path(log).name for log in logs))
    count = len(logs)
    return f"{count} unreadable {_plural(count, 'file')}{UNREADABLE_TAIL} ({names}): partial"


def with_unreadable(record: dict[str, Any], logs: set[str]) -> dict[str, Any]:
    """A summary's evidence record (`LogEvidence.as_dict`) with `logs`, files among the folder's
    logs that are no readable log, named and the summary marked partial (self, changed)."""
    if not logs:
        return record
    names = sorted({*record.get("unreadable_logs", []), *(Path(log).name for log in logs)})
    notes = [note for note in record.get("notes", []) if UNREADABLE_TAIL not in note]
    record.update(partial=True, unreadable_logs=names, notes=[unreadable_note(set(names)), *notes])
    return record


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
