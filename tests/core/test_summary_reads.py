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


def test_each_log_header_is_read_once_however_many_readers_ask(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full design's header holds every sample's reductions (about a second to read at
    35,000 samples): the listing, the probes found, the headers and the samples frame read
    each log's header once in all."""
    import inspect_ai.analysis
    import inspect_ai.log

    from stancelab.core.results.logs import log_files, log_headers
    from stancelab.probes import probes_in

    logs = _logs(tmp_path, (100, 200))
    reads: list[str] = []
    read, frame_of = inspect_ai.log.read_eval_log, inspect_ai.analysis.samples_df

    def recording(location: object, *args: object, **kwargs: object) -> object:
        if kwargs.get("header_only"):
            reads.append(str(location))
        return read(location, *args, **kwargs)  # type: ignore[arg-type]

    def from_headers(logs: list[object], *args: object, **kwargs: object) -> object:
        assert all(isinstance(log, inspect_ai.log.EvalLog) for log in logs)  # not read again
        return frame_of(logs, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(inspect_ai.log, "read_eval_log", recording)
    monkeypatch.setattr(inspect_ai.analysis, "samples_df", from_headers)
    assert len(log_files(tmp_path)) == 2 and len(log_headers(tmp_path)) == 2
    probes_in(tmp_path)
    assert len(samples_frame(tmp_path)) == 6
    assert sorted(reads) == sorted(logs)
