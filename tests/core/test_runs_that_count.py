"""Every run in a folder counts: a re-run with the same identity replaces, anything else adds."""

from __future__ import annotations

import json

import pandas as pd

from stancelab.core.results.logs import run_identity, runs_that_count


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
    kept, _ = runs_that_count(frame, selection_args=("limit",))
    assert sorted(set(kept["log"])) == ["other-judge", "other-seed", "rerun"]
    assert len(kept) == 6


def test_runs_differing_only_in_selection_count_each_sample_once() -> None:
    frame = pd.DataFrame(_rows("small", "2026-01-01", limit=1, ids=("a",))
                         + _rows("large", "2026-01-02", limit=3, ids=("a", "b", "c")))  # fmt: skip
    kept, _ = runs_that_count(frame, selection_args=("limit",))
    assert kept.sort_values("id")[["id", "log"]].values.tolist() == [
        ["a", "large"],
        ["b", "large"],
        ["c", "large"],
    ]
    # without declaring the limit a selection, the two runs would both count sample "a"
    assert len(runs_that_count(frame).rows) == 4


def test_identity_reads_roles_and_arguments() -> None:
    frame = pd.DataFrame(_rows("x", "2026-01-01", ids=("a",)) + _rows("y", "2026-01-01", judge="k",
                                                                     ids=("a",)))  # fmt: skip
    first, second = run_identity(frame)
    assert "judge=j" in first and "judge=k" in second and "task_arg_seed=0" in first
    assert run_identity(frame, ignore_args=("seed",)).str.contains("seed").sum() == 0


def _status(rows: list[dict], status: str, shard: str = "") -> list[dict]:
    return [row | {"status": status, "metadata": json.dumps({"stancelab_shard": shard} if shard else {})}
            for row in rows]  # fmt: skip


SIX = ("a", "b", "c", "d", "e", "f")


def test_a_killed_rerun_never_replaces_the_complete_run() -> None:
    frame = pd.DataFrame(_status(_rows("complete", "2026-01-01", ids=SIX), "success")
                         + _status(_rows("killed", "2026-01-02", ids=SIX[:4]), "started"))  # fmt: skip
    kept, evidence = runs_that_count(frame, selection_args=("limit",))
    assert set(kept["log"]) == {"complete"} and len(kept) == 6
    assert evidence.notes() == [
        "1 interrupted log ignored (a complete run of the same settings is in the folder)"
    ]
    assert not evidence.partial


def test_killed_runs_of_another_selection_add_nothing_to_a_complete_run() -> None:
    frame = pd.DataFrame(_status(_rows("killed-1", "2026-01-01", limit=2, ids=SIX[:5]), "started")
                         + _status(_rows("killed-2", "2026-01-02", limit=2, ids=SIX[:3]), "error")
                         + _status(_rows("complete", "2026-01-03", limit=1, ids=SIX[:1]), "success"))  # fmt: skip
    kept, evidence = runs_that_count(frame, selection_args=("limit",))
    assert kept["id"].tolist() == ["a"] and set(kept["log"]) == {"complete"}
    assert evidence.notes()[0].startswith("2 interrupted logs ignored") and not evidence.partial


def test_an_interrupted_run_alone_is_read_and_partial() -> None:
    frame = pd.DataFrame(_status(_rows("killed-1", "2026-01-01", ids=SIX[:2]), "started")
                         + _status(_rows("killed-2", "2026-01-02", ids=SIX[1:4]), "cancelled")
                         + _status(_rows("other-judge", "2026-01-02", judge="k", ids=SIX), "success"))  # fmt: skip
    kept, evidence = runs_that_count(frame, selection_args=("limit",))
    judged_by_j = kept[kept["log"] != "other-judge"]
    assert sorted(judged_by_j["id"]) == ["a", "b", "c", "d"]  # each sample once, the newest copy
    assert judged_by_j.set_index("id").loc["b", "log"] == "killed-2"
    assert evidence.notes() == ["4 samples read from 2 interrupted logs: partial",
                                "m ran under 2 configurations in this folder, each its own row: judge=j; judge=k"]  # fmt: skip
    # the complete run of the other judge is its own row, and not partial
    assert evidence.partial_models == {"m · judge=j"} and not evidence.is_partial("m · judge=k")


def test_configurations_are_kept_apart_and_selections_pooled() -> None:
    hot = [
        row | {"task_arg_temperature": 0.5}
        for row in _rows("hot", "2026-01-04", ids=("a", "b", "c"))
    ]
    frame = pd.DataFrame(_status(_rows("one", "2026-01-01", limit=1, ids=("a",)), "success")
                         + _status(_rows("two", "2026-01-02", limit=2, ids=("a", "b")), "success")
                         + _status(_rows("reseeded", "2026-01-03", seed=1, ids=("a",)), "success")
                         + _status(hot, "started"))  # fmt: skip
    kept, evidence = runs_that_count(frame, selection_args=("limit",))
    rows = kept.groupby("model")["log"].apply(sorted).to_dict()
    # another limit pools (sample "a" once), another seed pools (other prompts: "a" again),
    # another temperature is its own row
    assert rows == {"m · temperature=default": ["reseeded", "two", "two"],
                    "m · temperature=0.5": ["hot", "hot", "hot"]}  # fmt: skip
    assert evidence.configurations == {"m": {"temperature=default", "temperature=0.5"}}
    assert evidence.partial_models == {"m · temperature=0.5"}


def test_missing_shards_make_a_run_partial() -> None:
    frame = pd.DataFrame(_status(_rows("shard-1", "2026-01-01", ids=("a",)), "success", "1/4")
                         + _status(_rows("shard-3", "2026-01-01", ids=("c",)), "started", "3/4"))  # fmt: skip
    kept, evidence = runs_that_count(frame)
    assert set(kept["log"]) == {"shard-1"}
    assert evidence.notes() == ["1 interrupted log ignored (a complete run of the same settings is in the folder)",
                                "shards 2-4 of 4 missing: partial"]  # fmt: skip
    assert evidence.is_partial("m")
    whole = pd.DataFrame(_status(_rows("whole", "2026-01-02", ids=("a", "c")), "success"))
    evidence = runs_that_count(pd.concat([frame, whole], ignore_index=True)).evidence
    assert evidence.notes()[-1:] != ["shards 2-4 of 4 missing: partial"] and not evidence.partial
