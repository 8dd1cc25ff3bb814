"""Issue 37: a Conviction sample asks what waits on nothing else at once (its argument sets,
its sampled answers, their readings, an opener's comparisons), so a statement has many calls
in flight against a hosted API, not one at a time; and no request is paid twice for it."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from stancelab.conviction.entropy import cluster_by_relation
from stancelab.conviction.run import ROLES
from stancelab.conviction.task import conviction
from stancelab.core.runs.evals import run_eval
from stancelab.testing.fake_openai import FakeOpenAIServer

SAMPLES = 10


def test_one_statements_independent_calls_are_in_flight_together(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = conviction(limit=1, samples=SAMPLES, argument_sets=3)
    with FakeOpenAIServer(latency=0.1) as server:
        monkeypatch.setenv("FAKE_BASE_URL", server.base_url)
        monkeypatch.setenv("FAKE_API_KEY", "local")
        monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
        (log,) = run_eval(task, ["openai-api/fake/conviction"], None, tmp_path / "logs", "none",
                          role_names=ROLES, max_connections=50)  # fmt: skip
        stats = server.stats_dict()
    assert log.status == "success"
    # one statement is 3 samples (its scenarios); one at a time each, at most 3 would be
    assert stats["max_in_flight"] >= SAMPLES, stats["max_in_flight"]
    # the only requests sent alike are the N sampled answers (one prompt at temperature 1;
    # the fake server answers them alike): requests alike asked at once (the readings of
    # those answers) are asked once, not each missing the cache and each paid
    assert stats["duplicate_paid_calls"] <= SAMPLES - 1, stats


async def test_an_openers_comparisons_do_not_wait_for_the_earlier_openers_slowest() -> None:
    """Issue 37: answer 1 opens a cluster as soon as its comparison with answer 0 comes back
    apart, so its comparison with answer 2 is asked while answer 0's with answer 3 is still
    out; and the calls are those of one opener after another (every pair of an opener and a
    later answer, asked once)."""
    asked: list[tuple[int, int]] = []
    released = anyio.Event()

    async def relation(premise: int, hypothesis: int) -> str:
        asked.append((premise, hypothesis))
        if (premise, hypothesis) == (1, 2):
            released.set()
        if (premise, hypothesis) == (0, 3):
            with anyio.fail_after(10):  # a slow answer: back once (1, 2) is asked
                await released.wait()
        return "contradiction"

    assert await cluster_by_relation(4, relation) == [0, 1, 2, 3]
    assert sorted(asked) == [(o, i) for o in range(4) for i in range(o + 1, 4)]
