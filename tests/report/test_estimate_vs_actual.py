"""`stancelab estimate` against the calls the same runs then paid for (from their logs)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

from stancelab.core.results.logs import log_files
from stancelab.demo import demo_options
from stancelab.probes import PROBES, get_probe
from stancelab.report.build import ReportResult
from tests.report.conftest import TINY

EXACT = {"millstone", "issuebench", "llm-bias-bench"}


def model_calls(folder: Path) -> tuple[Counter[tuple[str, str]], Counter[tuple[str, str]]]:
    """(task, role) -> model calls made, and those paid (not served from the cache, which
    starts empty for these runs: a repeated prompt is paid once)."""
    made: Counter[tuple[str, str]] = Counter()
    paid: Counter[tuple[str, str]] = Counter()
    for path in log_files(folder / "logs"):
        log = read_eval_log(str(path))
        task = log.eval.task.split("/")[-1].replace("-", "_")
        for sample in log.samples or []:
            for event in sample.events:
                if event.event == "model":
                    made[(task, event.role or "subject")] += 1
                    paid[(task, event.role or "subject")] += event.cache != "read"
    return made, paid


@pytest.mark.parametrize("probe", list(PROBES))
def test_planned_calls_cover_the_paid_calls(probe: str, report: ReportResult) -> None:
    runs = report.path.parent
    options = demo_options(probe, runs, ["mockllm/hostile"], None)
    for key, value in TINY[probe].items():
        setattr(options, key, value)
    plans = get_probe(probe).plan(options)
    made, paid = model_calls(runs / probe)
    planned = {(plan.task, plan.role): plan for plan in plans}
    assert set(made) <= set(planned), f"unplanned calls: {set(made) - set(planned)}"
    for key, plan in planned.items():
        assert paid.get(key, 0) <= plan.calls_max, (key, plan, paid.get(key))
        if probe in EXACT and plan.calls_min == plan.calls_max:
            assert plan.calls_min == made[key], (key, plan, made[key])
        elif probe in EXACT:  # a range only where replies may be asked again (re-asks)
            assert plan.calls_min <= made[key] <= plan.calls_max, (key, plan, made[key])
        else:
            assert plan.calls_min <= made.get(key, 0), (key, plan, made.get(key))


@pytest.mark.parametrize("probe", list(PROBES))
def test_batch_rounds_cover_the_calls_one_sample_makes(probe: str, report: ReportResult) -> None:
    """Under `--batch` a sample's calls wait one on another (each in a batch of its own): the
    plan's rounds of a role bound the calls one sample makes in that role."""
    runs = report.path.parent
    options = demo_options(probe, runs, ["mockllm/hostile"], None)
    for key, value in TINY[probe].items():
        setattr(options, key, value)
    rounds: Counter[tuple[str, str]] = Counter()
    for plan in get_probe(probe).plan(options):
        rounds[(plan.task, plan.role)] += plan.rounds
    for path in log_files(runs / probe / "logs"):
        log = read_eval_log(str(path))
        task = log.eval.task.split("/")[-1].replace("-", "_")
        for sample in log.samples or []:
            calls = Counter((task, event.role or "subject") for event in sample.events
                            if event.event == "model")  # fmt: skip
            for key, count in calls.items():
                assert count <= rounds[key], (key, count, rounds[key], sample.id)
