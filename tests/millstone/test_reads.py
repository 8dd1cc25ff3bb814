"""MillStone's analysis reads the sample summaries, not the full samples (issue 37: a full
design's full samples took most of a minute to read), and gets what the full samples give."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from stancelab.millstone import analysis, results
from stancelab.millstone.run import run_millstone
from tests.helpers import full_sample_reads, scripted_model
from tests.millstone.test_run_mockllm import _issues_file, follower, own_run


def _full_read(logs: Path, monkeypatch: pytest.MonkeyPatch) -> pd.DataFrame:
    """The trials as read from the full samples of every log."""
    with monkeypatch.context() as patched:
        patched.setattr(analysis, "_summary_whole", lambda frame: pd.Series(False, frame.index))
        return analysis.read_trials(logs).rows


def test_trials_come_from_the_summaries_as_the_full_samples_give_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model, _ = scripted_model(follower)
    run = own_run(models=[model], out_dir=tmp_path / "run", limit=1, trials=1,
                  issues_file=_issues_file(tmp_path / "issues.jsonl"))  # fmt: skip
    run_millstone(run)
    logs = tmp_path / "run" / "logs"
    reads = full_sample_reads(monkeypatch)
    summary = results.analysis(tmp_path / "run").summary
    from_summaries = analysis.read_trials(logs).rows
    assert reads == []
    from_samples = _full_read(logs, monkeypatch)
    assert len(reads) == 1  # the spy sees a full read
    pd.testing.assert_frame_equal(from_summaries, from_samples)
    with monkeypatch.context() as patched:
        patched.setattr(analysis, "_summary_whole", lambda frame: pd.Series(False, frame.index))
        assert results.analysis(tmp_path / "run").summary == summary


def test_a_summary_whose_choices_or_metadata_were_cut_is_not_whole() -> None:
    """Twenty choices per request are over Inspect's 1 KB per summary value: such a row sends
    its log to the full samples (`core.results.logs.summaries_else_full`)."""
    whole = {"stance": "pro", "letter": "A", "pattern": "position X", "choice_trials": None,
             "metadata_topic": "Education", "metadata_argument_ids": "p1,c2"}  # fmt: skip
    frame = pd.DataFrame([whole, whole | {"choice_trials": "Key removed from summary (> 1k)"},
                          whole | {"metadata_argument_ids": "p1, " * 300 + "..."}])  # fmt: skip
    assert analysis._summary_whole(frame).tolist() == [True, False, False]
