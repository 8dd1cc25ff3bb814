"""Issue 37: identical cached requests in flight at once are paid once (Inspect's cache stores
an answer only once it is back, so each used to miss it and be paid: Conviction's full design
paid 30 of 415 calls twice, readings of answers that came out alike in different samples).
Requests without a cache policy, in other epochs or other cache scopes are each paid."""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import EvalLog
from inspect_ai.model import CachePolicy, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from stancelab.core.runs.evals import run_eval
from stancelab.testing.fake_openai import FakeOpenAIServer

SAMPLES = 4
ALIKE = "the same question"


@solver
def ask_alike(cache: CachePolicy | bool, scoped: bool = False, role: str | None = None) -> Solver:
    """Every sample asks the same question, with `cache` (`scoped`: its own cache scope each),
    of the subject or of `role`."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        policy = cache
        if scoped and isinstance(cache, CachePolicy):
            policy = CachePolicy(expiry=cache.expiry, scopes={"sample": str(state.sample_id)})
        model = get_model() if role is None else get_model(role=role)
        state.output = await model.generate(ALIKE, cache=policy)
        return state

    return solve


def paid_for(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, task: Task,
             roles: dict[str, str] | None = None) -> tuple[int, EvalLog]:  # fmt: skip
    """The calls the fake server was paid for, a run of `task` at 0.3 s a call, and its log."""
    with FakeOpenAIServer(latency=0.3) as server:
        monkeypatch.setenv("FAKE_BASE_URL", server.base_url)
        monkeypatch.setenv("FAKE_API_KEY", "local")
        monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
        (log,) = run_eval(task, ["openai-api/fake/subject"], roles, tmp_path / "logs", "none",
                          max_connections=SAMPLES * 2)  # fmt: skip
        paid = server.stats_dict()["paid_calls"]
    assert log.status == "success"
    assert log.samples is not None and len(log.samples) == len(task.dataset) * task.epochs
    assert all(sample.output.completion for sample in log.samples)
    return paid, log


def alike(solver: Solver, epochs: int = 1) -> Task:
    dataset = MemoryDataset([Sample(id=i, input=f"sample {i}") for i in range(SAMPLES)])
    return Task(dataset=dataset, solver=solver, epochs=epochs)


def test_identical_cached_requests_at_once_are_paid_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paid, _ = paid_for(tmp_path, monkeypatch, alike(ask_alike(CachePolicy(expiry=None))))
    assert paid == 1


def test_a_roles_identical_requests_are_paid_once_and_logged_as_the_roles(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A role's model is a copy Inspect makes of it (`get_model(role=...)`): its calls are
    shared as well, and each transcript names the role, one paid and the others cache reads."""
    task = alike(ask_alike(CachePolicy(expiry=None), role="judge"))
    paid, log = paid_for(tmp_path, monkeypatch, task, {"judge": "openai-api/fake/judge"})
    assert paid == 1
    events = [event for sample in log.samples or [] for event in sample.events
              if event.event == "model"]  # fmt: skip
    assert [event.role for event in events] == ["judge"] * SAMPLES
    assert sorted(str(event.cache) for event in events) == ["read"] * (SAMPLES - 1) + ["write"]


def test_each_epoch_of_a_per_epoch_policy_is_paid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = alike(ask_alike(CachePolicy(expiry=None)), epochs=2)
    paid, _ = paid_for(tmp_path, monkeypatch, task)
    assert paid == 2


@pytest.mark.parametrize("case", ["no cache", "a scope each"])
def test_uncached_or_differently_scoped_requests_are_each_paid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    solver = ask_alike(False) if case == "no cache" else ask_alike(CachePolicy(expiry=None), True)
    paid, _ = paid_for(tmp_path, monkeypatch, alike(solver))
    assert paid == SAMPLES
