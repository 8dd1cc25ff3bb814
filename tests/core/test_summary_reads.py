"""Readers take what they need from the sample summaries and read a log's full samples only
where its summaries lack it (issue 37: full samples cost most of an analysis)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import TaskState, generate

from stancelab.core.results.logs import cut_from_summary, samples_frame, summaries_else_full
from tests.helpers import full_sample_reads, scripted_model


@scorer(metrics=[mean()])
def _notes(width: int) -> Scorer:
    """Metadata `notes`: a list whose JSON is about `width` characters."""

    async def score(state: TaskState, target: Target) -> Score:
        return Score(value=1.0, metadata={"notes": [state.sample_id] * (width // 4)})

    return score


def _logs(folder: Path, widths: tuple[int, ...]) -> list[str]:
    """One log of three samples per width of their score metadata."""
    logs = []
    for width in widths:
        task = Task(dataset=[Sample(id=f"s{i}", input=f"q{i}") for i in range(3)],
                    solver=generate(), scorer=_notes(width), name=f"notes{width}")  # fmt: skip
        model, _ = scripted_model(lambda prompt: "ok")
        (log,) = eval(task, model=model, log_dir=str(folder), display="none")
        logs.append(str(log.location))
    return logs


def _notes_column(full: bool) -> Any:
    from inspect_ai.analysis import SampleColumn

    return SampleColumn(
        "notes", path=lambda s: next(iter(s.scores.values())).metadata["notes"], full=full
    )


def test_only_the_log_whose_summaries_were_cut_is_read_in_full(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small, large = _logs(tmp_path, (100, 4000))  # Inspect keeps a value of up to 1 KB
    reads = full_sample_reads(monkeypatch)
    frame = summaries_else_full(tmp_path, [_notes_column(False)], [_notes_column(True)],
                                lambda rows: ~rows["notes"].map(cut_from_summary))  # fmt: skip
    assert [Path(log).name for log in reads] == [Path(large).name]
    full = samples_frame(tmp_path, [_notes_column(True)])
    assert len(reads) == 3  # the spy sees every full read
    columns = ["log", "id", "epoch", "notes"]
    pd.testing.assert_frame_equal(frame[columns], full[columns])
    assert frame.loc[frame["log"] == small, "notes"].map(cut_from_summary).sum() == 0


def test_whole_summaries_read_no_full_sample(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _logs(tmp_path, (100,))
    reads = full_sample_reads(monkeypatch)
    frame = summaries_else_full(tmp_path, [_notes_column(False)], [_notes_column(True)],
                                lambda rows: ~rows["notes"].map(cut_from_summary))  # fmt: skip
    assert reads == [] and len(frame) == 3


def test_a_cut_or_shortened_summary_value_is_recognised() -> None:
    assert cut_from_summary("Key removed from summary (> 1k)")
    assert cut_from_summary("word " * 204 + "...")
    assert not cut_from_summary("a short answer...")
    assert not cut_from_summary(["Key removed from summary (> 1k)"])
