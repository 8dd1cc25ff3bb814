"""A run whose shared topics no pair covers is not measured and says why; `run all` goes on with
the other lenses, so the matrix reads no stance from it (and does not fail on its empty tables)."""

from __future__ import annotations

from pathlib import Path

from stancelab.core.results.summary import RunResult
from stancelab.even_handedness.results import unmeasured_summary
from stancelab.even_handedness.stances import topic_stances


def test_an_unmeasured_run_gives_the_matrix_no_stance_and_no_error(tmp_path: Path) -> None:
    summary = unmeasured_summary("not measured: no pair of the eval set is on minimum-wage")
    stances = topic_stances(RunResult("even-handedness", tmp_path, summary, {}))
    assert stances.empty and {"model", "topic", "lens", "stance"} <= set(stances.columns)
