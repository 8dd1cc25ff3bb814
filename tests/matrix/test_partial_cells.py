"""A matrix cell read from a partial run (an interrupted log read, shards missing) says so."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from stancelab.core.data.topics import stance_frame
from stancelab.core.results.summary import RunResult
from stancelab.matrix import results
from stancelab.matrix.results import PARTIAL_MARK, format_matrix, matrix_of_runs, matrix_summary

NOTE = "shards 2-4 of 4 missing: partial"


def _stances(run: RunResult) -> object:
    return stance_frame([
        {"model": model, "topic": "abortion", "lens": "millstone", "stance": 0.5, "ci_low": 0.2,
         "ci_high": 0.8, "n": 4, "p": 0.001, "unusable": 0, "measure": "m", "detail": "issues: a, b",
         "transcripts": ""}
        for model in ("whole", "cut")
    ])  # fmt: skip


def test_cells_of_a_partial_model_are_marked_in_the_detail_and_the_cli(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(results, "get_probe", lambda name: SimpleNamespace(topic_stances=_stances))
    summary = {"evidence": {"partial": True, "partial_models": ["cut"], "notes": [NOTE]}}
    matrix = matrix_summary(matrix_of_runs([RunResult("millstone", Path("run"), summary, {})]))
    details = {
        cell["model"]: cell["detail"] for cell in matrix["cells"] if cell["lens"] == "millstone"
    }
    assert details["cut"] == f"{PARTIAL_MARK}{NOTE}; issues: a, b"
    assert details["whole"] == "issues: a, b"
    text = format_matrix(matrix)
    assert "*+0.50^" in text and text.count("*+0.50") == 1
