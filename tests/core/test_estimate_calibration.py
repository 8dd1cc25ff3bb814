"""`stancelab estimate --calibration`: wall time and cost predicted from the calls measured in
a run's logs (here a synthetic log with set latencies, tokens and wall time)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.event import ModelEvent
from inspect_ai.log import read_eval_log, write_eval_log
from inspect_ai.model import GenerateConfig, ModelUsage
from inspect_ai.scorer import match
from inspect_ai.solver import generate

from stancelab.cli import main
from stancelab.core.runs.estimate import covered_seconds, predict_wall, read_calibration
from tests.helpers import scripted_model

CALLS, LATENCY, WALL, CONNECTIONS = 4, 0.5, 2.0, 2


def _synthetic_log(folder: Path, wall: float = WALL) -> Path:
    """A finished log of 4 calls, each set to 0.5 s and 100 + 20 tokens, over `wall` seconds
    at max_connections 2."""
    model, _ = scripted_model(lambda prompt: "ok")
    task = Task(dataset=MemoryDataset([Sample(id=i, input=f"q{i}", target="ok") for i in range(CALLS)]),
                solver=generate(), scorer=match())  # fmt: skip
    (log,) = inspect_eval(task, model=model, log_dir=str(folder), display="none")
    log = read_eval_log(log.location)
    log.eval.model_generate_config = GenerateConfig(max_connections=CONNECTIONS)
    log.stats.started_at = "2026-01-01T00:00:00+00:00"
    log.stats.completed_at = f"2026-01-01T00:00:{wall:06.3f}+00:00"
    for sample in log.samples or []:
        for event in sample.events:
            if isinstance(event, ModelEvent):
                event.working_time = LATENCY
                event.output.usage = ModelUsage(
                    input_tokens=100, output_tokens=20, total_tokens=120
                )
    write_eval_log(log, log.location)
    return folder


def test_calibration_reads_calls_latency_throughput_and_tokens(tmp_path: Path) -> None:
    calibration = read_calibration(_synthetic_log(tmp_path / "logs"))
    assert calibration.calls == CALLS and calibration.concurrency == CONNECTIONS
    assert calibration.seconds_per_call == pytest.approx(LATENCY)
    assert calibration.calls_per_s == pytest.approx(CALLS / WALL)
    assert calibration.tokens_per_call["subject"] == (100, 20)
    # 2 calls/s against 2 connections / 0.5 s = 4 calls/s possible: held back by the harness
    assert calibration.harness_bound
    wall = predict_wall(1000, calibration, concurrency=10, workers=2)
    assert wall.latency_bound_s == pytest.approx(1000 * LATENCY / 20)
    assert wall.harness_bound_s == pytest.approx(1000 / (2 * 2))
    assert wall.seconds == pytest.approx(250) and wall.bound == "harness (CPU)"


def test_evals_run_side_by_side_count_their_wall_time_once(tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    _synthetic_log(folder)
    _synthetic_log(folder)  # a second eval over the same seconds (side by side)
    calibration = read_calibration(folder)
    assert calibration.calls == 2 * CALLS
    assert calibration.wall_s == pytest.approx(WALL)
    at = pd.Timestamp("2026-01-01T00:00:00+00:00")
    spans = [(at + pd.Timedelta(seconds=a), at + pd.Timedelta(seconds=b))
             for a, b in ((1, 3), (0, 2), (5, 6), (5.5, 5.8))]  # fmt: skip
    assert covered_seconds(spans) == pytest.approx(4)


def test_a_calibration_at_the_servers_pace_gives_the_latency_bound(tmp_path: Path) -> None:
    calibration = read_calibration(
        _synthetic_log(tmp_path / "logs", wall=1.0)
    )  # 4 calls/s: the pace allowed
    assert not calibration.harness_bound
    wall = predict_wall(1000, calibration, concurrency=10, workers=2)
    assert (
        wall.harness_bound_s is None
        and wall.seconds == pytest.approx(25)
        and wall.bound == "latency"
    )


def test_estimate_command_prints_wall_time_and_measured_cost(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    _synthetic_log(tmp_path / "calibration" / "logs")
    code = main(["estimate", "llm-bias-bench", "--model", "openai/gpt-x", "--limit", "1",
                 "--max-connections", "10", "--workers", "2", "--price", "openai/gpt-x=1,2",
                 "--calibration", str(tmp_path / "calibration")])  # fmt: skip
    printed = capsys.readouterr().out
    assert code == 0
    assert (
        "Calibration" in printed
        and "4 calls, 0.5 s per call, 2 calls/s at concurrency 2" in printed
    )
    # 1 topic: 6 conversations x (5 user + 5 subject) + 6 judge calls (one per verdict, as the
    # paper's runner judges) = 66 calls at 2 calls/s per worker x 2 workers -> 16 s; at 100 + 20
    # tokens, $0.00014 per call
    assert "concurrency 10 x 2 worker(s): 16 s, bound by harness (CPU)" in printed
    assert "$0.00924." in printed
