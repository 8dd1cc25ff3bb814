"""Transcripts and raw answers for the report, read from a run's Inspect logs."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from inspect_ai.log import EvalSample, read_eval_log_samples

from stancelab.core.results.logs import log_files, log_header

DEFAULT_MAX_SAMPLES = 300
MESSAGE_CHARS = 4000
INPUT_CHARS = 1200
OUTPUT_CHARS = 3000


@dataclass(frozen=True)
class Call:
    """One model call inside a sample: which role made it, what it was asked and answered."""

    role: str
    model: str
    cached: bool
    last_input: str
    output: str


@dataclass
class Transcript:
    """One sample of one log: its identity, metadata, conversation, calls and score."""

    probe: str
    task: str
    model: str
    sample_id: str
    epoch: int
    log: str
    answer: str
    metadata: dict[str, str]
    messages: list[tuple[str, str]] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    explanation: str = ""

    def search_keys(self) -> str:
        """`|key=value|` fields (exact matches for table links) plus free text."""
        fields = {"model": self.model, "task": self.task, "id": self.sample_id,
                  "answer": self.answer, **self.metadata}  # fmt: skip
        return "|" + "|".join(f"{key}={normalise(value)}" for key, value in fields.items()) + "|"


@dataclass
class TranscriptSet:
    """The transcripts of one run, and how many samples were left out of the report."""

    probe: str
    folder: Path
    transcripts: list[Transcript]
    omitted: int


def normalise(value: object) -> str:
    """Lower-case, whitespace collapsed to '_' (the same on both sides of a search)."""
    return re.sub(r"\s+", "_", str(value).strip()).lower()


def _clip(text: str, limit: int) -> str:
    return (
        text if len(text) <= limit else text[:limit] + f" … [{len(text) - limit} more characters]"
    )


def _calls(sample: EvalSample) -> list[Call]:
    calls = []
    for event in sample.events:
        if event.event != "model":
            continue
        last = event.input[-1].text if event.input else ""
        calls.append(Call(
            role=event.role or "subject", model=event.model, cached=event.cache == "read",
            last_input=_clip(last, INPUT_CHARS),
            output=_clip(event.output.completion if event.output else "", OUTPUT_CHARS),
        ))  # fmt: skip
    return calls


def _score(sample: EvalSample) -> tuple[str, str]:
    for score in (sample.scores or {}).values():
        return str(
            score.answer if score.answer is not None else score.value
        ), score.explanation or ""
    return "", ""


def _transcript(probe: str, task: str, model: str, log: Path, sample: EvalSample) -> Transcript:
    answer, explanation = _score(sample)
    metadata = {key: str(value)[:200] for key, value in (sample.metadata or {}).items()
                if isinstance(value, str | int | float | bool)}  # fmt: skip
    return Transcript(
        probe=probe, task=task, model=model, sample_id=str(sample.id), epoch=sample.epoch,
        log=log.name, answer=answer, metadata=metadata,
        messages=[(message.role, _clip(message.text, MESSAGE_CHARS)) for message in sample.messages],
        calls=_calls(sample), explanation=_clip(explanation, OUTPUT_CHARS),
    )  # fmt: skip


def _newest_logs(logs: Path) -> list[tuple[Path, str, str, int]]:
    """(path, task, model, samples) of the newest log per (task, model)."""
    newest: dict[tuple[str, str], tuple[str, Path, int]] = {}
    for path in log_files(logs):
        header = log_header(path)
        if header.status != "success":
            continue
        key = (header.eval.task.split("/")[-1], header.eval.model)
        total = header.results.total_samples if header.results else 0
        if key not in newest or header.eval.created > newest[key][0]:
            newest[key] = (header.eval.created, path, total)
    return [
        (path, task, model, total) for (task, model), (_, path, total) in sorted(newest.items())
    ]


def read_transcripts(
    probe: str, folder: Path, max_samples: int = DEFAULT_MAX_SAMPLES
) -> TranscriptSet:
    """Up to `max_samples` samples per (task, model) from the newest logs of a run folder."""
    transcripts: list[Transcript] = []
    omitted = 0
    for path, task, model, total in _newest_logs(folder / "logs"):
        taken = 0
        for sample in read_eval_log_samples(str(path), all_samples_required=False):
            if taken >= max_samples:
                break
            transcripts.append(_transcript(probe, task, model, path, sample))
            taken += 1
        omitted += max(0, total - taken)
    return TranscriptSet(probe, folder, transcripts, omitted)
