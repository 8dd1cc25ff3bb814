"""Issue 37: prior prejudice runs the evals that wait on nothing of each other side by side
(the writer's negations and arguments with the group probe, then the ratings with the
cross-task checks), so a hosted API sees many more calls in flight; a run stopped half way
and run again pays no call twice."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.event import ModelEvent
from inspect_ai.log import list_eval_logs, read_eval_log
from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput, get_model

from stancelab.core.errors import StancelabError
from stancelab.core.runs import evals
from stancelab.prior_prejudice.estimate import plan
from stancelab.prior_prejudice.results import analyze
from stancelab.prior_prejudice.run import PriorPrejudiceRun, run_evals
from stancelab.testing.fake_openai import FakeOpenAIServer
from tests.helpers import output
from tests.prior_prejudice.scripted import MIXED_CLAIMS, claims_file, rated_reply

# a misinformation claim without its negation first: the writer negates it and argues both
# sides of both claims, and both go to the cross-task checks
CLAIMS = [
    {"id": "m0", "category": "misinformation", "claim": "The Moon is made of cheese."},
    *MIXED_CLAIMS,
]
LIMIT = 2
Span = tuple[datetime, datetime]


def _spans(log_dir: Path) -> dict[str, Span]:
    """Each task's model calls, from the first one's start to the last one's end (the logs'
    own eval times have whole seconds)."""
    spans = {}
    for info in list_eval_logs(str(log_dir)):
        log = read_eval_log(info)
        calls = [event for sample in log.samples or [] for event in sample.events
                 if isinstance(event, ModelEvent)]  # fmt: skip
        ends = [event.completed or event.timestamp for event in calls]
        spans[log.eval.task.split("/")[-1]] = (min(e.timestamp for e in calls), max(ends))
    return spans


def _overlap(first: Span, second: Span) -> bool:
    return first[0] < second[1] and second[0] < first[1]


def _distinct_reply(messages: list[dict[str, Any]]) -> str:
    """A rating first, then words of its own for each prompt (arguments differ, so do the
    prompts that quote them)."""
    digest = hashlib.sha256(json.dumps(messages).encode()).hexdigest()[:12]
    return f"5, for reason {digest}."


def test_independent_evals_run_at_the_same_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    claims = claims_file(tmp_path / "claims.jsonl", CLAIMS)
    with FakeOpenAIServer(latency=0.5, reply=_distinct_reply) as server:
        monkeypatch.setenv("FAKE_BASE_URL", server.base_url)
        monkeypatch.setenv("FAKE_API_KEY", "local")
        run = PriorPrejudiceRun(models=["openai-api/fake/rater"], out_dir=tmp_path / "run",
                                claims_file=claims, templates="T1", limit=LIMIT, display="none",
                                max_connections=50)  # fmt: skip
        run_evals(run)
        stats = server.stats_dict()
        # claims that need no writing: the probe goes with the ratings and the cross-task
        completed = tmp_path / "run" / "claims_with_arguments.jsonl"
        monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "fresh-cache"))  # calls, not reads
        run_evals(replace(run, claims_file=completed, out_dir=tmp_path / "completed"))
    spans = _spans(tmp_path / "run" / "logs")
    writing = ("prior_prejudice_negations", "prior_prejudice_arguments")
    rating = ("prior_prejudice", "prior_prejudice_cross_task")
    assert set(spans) == {*writing, *rating, "prior_prejudice_probe"}, sorted(spans)
    # the writer's two evals and the group probe (which needs nothing written) at once
    assert _overlap(spans[writing[0]], spans[writing[1]]), spans
    assert all(_overlap(spans[name], spans["prior_prejudice_probe"]) for name in writing), spans
    # the ratings and the cross-task checks at once, once the writing is done
    assert _overlap(spans[rating[0]], spans[rating[1]]), spans
    assert min(spans[name][0] for name in rating) >= max(spans[name][1] for name in writing)
    assert stats["duplicate_paid_calls"] == 0, stats
    spans = _spans(tmp_path / "completed" / "logs")
    assert set(spans) == {*rating, "prior_prejudice_probe"}, sorted(spans)
    assert all(_overlap(spans[name], spans["prior_prejudice_probe"]) for name in rating), spans


class ProviderGone(RuntimeError):
    """The provider stops answering (as a killed run's calls stop being paid)."""


def _scripted_rater(answered: Counter[str], budget: list[int]) -> Callable[..., ModelOutput]:
    """A rater (and judge) that counts each distinct call it answers, until `budget` runs out."""

    def respond(
        messages: list[ChatMessage], tools: object, tool_choice: object, config: GenerateConfig
    ) -> ModelOutput:
        if budget[0] <= 0:
            raise ProviderGone("no answer")
        budget[0] -= 1
        answered[json.dumps([[m.role, m.text] for m in messages] + [config.max_tokens])] += 1
        prompt = messages[-1].text
        if "type1_explicit_evidence" in prompt:  # the judge codes a high rating
            return output(json.dumps({"category": "other", "rationale": "scripted"}))
        return rated_reply("5 because.", "5", {"5": 0.75, "4": 0.25})

    return respond


def _run(tmp_path: Path, answered: Counter[str], budget: list[int]) -> PriorPrejudiceRun:
    respond = _scripted_rater(answered, budget)
    model = get_model("mockllm/rater", custom_outputs=respond, memoize=False)
    claims = claims_file(tmp_path / "claims.jsonl", CLAIMS)
    run = PriorPrejudiceRun(models=[model], out_dir=tmp_path / "run", claims_file=claims,
                            templates="T1,T3", limit=LIMIT, display="none", max_retries=0)  # fmt: skip
    run_evals(run)
    return run


def test_a_run_stopped_half_way_pays_no_call_twice_when_run_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(evals, "SAMPLE_RETRIES", 0)  # the first unanswered call stops the run
    claims = claims_file(tmp_path / "claims.jsonl", CLAIMS)
    planned = plan(PriorPrejudiceRun(models=["mockllm/rater"], out_dir=tmp_path, claims_file=claims,
                                     templates="T1,T3", limit=LIMIT))  # fmt: skip
    answered: Counter[str] = Counter()
    budget = [sum(calls.calls_min for calls in planned) // 2]
    with pytest.raises(StancelabError):
        _run(tmp_path, answered, budget)
    stopped_at = sum(answered.values())
    assert stopped_at > 0
    budget[0] = 10**6
    run = _run(tmp_path, answered, budget)  # the same command again
    assert sum(answered.values()) > stopped_at
    # each call answered once over the stopped run and its re-run
    assert max(answered.values()) == 1, answered.most_common(3)
    # and the re-run finished every eval: a summary of its logs
    assert analyze(run.out_dir)["deltas"]
