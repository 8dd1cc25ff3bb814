"""Every run in a folder counts: a re-run with the same identity replaces, anything else adds."""

from __future__ import annotations

import json

import pandas as pd

from stancelab.core.logs import run_identity, runs_that_count


def _rows(log: str, created: str, judge: str = "j", limit: int | None = 2, seed: int = 0,
          ids: tuple[str, ...] = ("a", "b")) -> list[dict]:  # fmt: skip
    return [
        {"log": log, "created": created, "task_name": "t", "model": "m", "id": sample, "epoch": 1,
         "model_roles": json.dumps({"judge": {"model": judge}}), "task_arg_limit": limit,
         "task_arg_seed": seed}
        for sample in ids
    ]  # fmt: skip


def test_a_rerun_replaces_and_other_runs_add() -> None:
    frame = pd.DataFrame(
        _rows("first", "2026-01-01") + _rows("rerun", "2026-01-02")
        + _rows("other-judge", "2026-01-03", judge="k") + _rows("other-seed", "2026-01-04", seed=1)
    )  # fmt: skip
    kept = runs_that_count(frame, selection_args=("limit",))
    assert sorted(set(kept["log"])) == ["other-judge", "other-seed", "rerun"]
    assert len(kept) == 6


def test_runs_differing_only_in_selection_count_each_sample_once() -> None:
    frame = pd.DataFrame(_rows("small", "2026-01-01", limit=1, ids=("a",))
                         + _rows("large", "2026-01-02", limit=3, ids=("a", "b", "c")))  # fmt: skip
    kept = runs_that_count(frame, selection_args=("limit",))
    assert kept.sort_values("id")[["id", "log"]].values.tolist() == [
        ["a", "large"], ["b", "large"], ["c", "large"]]
    # without declaring the limit a selection, the two runs would both count sample "a"
    assert len(runs_that_count(frame)) == 4


def test_identity_reads_roles_and_arguments() -> None:
    frame = pd.DataFrame(_rows("x", "2026-01-01", ids=("a",)) + _rows("y", "2026-01-01", judge="k",
                                                                     ids=("a",)))  # fmt: skip
    first, second = run_identity(frame)
    assert "judge=j" in first and "judge=k" in second and "task_arg_seed=0" in first
    assert run_identity(frame, ignore_args=("seed",)).str.contains("seed").sum() == 0
