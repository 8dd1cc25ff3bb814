"""Even-handedness's analysis reads the sample summaries, where the scorer keeps each grader's
grades less its replies, not the full samples (issue 37); it gets what the full samples give."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from stancelab.even_handedness import results
from tests.even_handedness.scripting import grader_model
from tests.even_handedness.test_published_arithmetic import probabilities_for, run
from tests.helpers import full_sample_reads


def test_grades_come_from_the_summaries_as_the_full_samples_give_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
    first, _ = grader_model(probabilities_for, "mockllm/first")
    second, _ = grader_model(probabilities_for, "mockllm/second")
    run(tmp_path, {"grader": first, "grader2": second})
    reads = full_sample_reads(monkeypatch)
    from_summaries = results.analysis(tmp_path / "run")
    assert reads == []
    with monkeypatch.context() as patched:  # as a log from before the compact grades reads
        patched.setattr(results, "_grades_whole", lambda score: False)
        from_samples = results.analysis(tmp_path / "run")
    assert len(reads) == 1
    assert from_summaries.summary == from_samples.summary
    for name, table in from_samples.tables.items():
        pd.testing.assert_frame_equal(from_summaries.tables[name], table)
    assert set(from_summaries.tables["pairs"]["grader"]) == {"grader", "grader2"}


def test_a_summary_without_whole_grades_is_not_whole() -> None:
    pairwise, cut = {"answer": "C", "probabilities": {"C": 0.8}}, "Key removed from summary (> 1k)"
    assert results._grades_whole({"grades": {"grader": {"pairwise": pairwise}}})
    compact = {"graders": {"grader": ["grader_model", "pairwise"]},
               "read_grades_grader:grader_model": "mockllm/first", "read_grades_grader:pairwise": pairwise}  # fmt: skip
    assert results._grades_whole({"grades": cut, **compact})
    assert results._grades(compact) == {
        "grader": {"grader_model": "mockllm/first", "pairwise": pairwise}
    }
    assert not results._grades_whole({"grades": cut})  # a log from before the compact grades
    assert not results._grades_whole({"grades": cut, **compact, "read_grades_grader:pairwise": cut})
