"""Run options reach Inspect: lean settings above a few hundred samples, two samples per
connection, and the command line's retry and connection options on every probe's options."""

from __future__ import annotations

from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample

from stancelab.cli import build_parser, options_from_args
from stancelab.core.evals import LEAN_ABOVE_SAMPLES, eval_settings


def _task(n: int) -> Task:
    return Task(dataset=MemoryDataset([Sample(id=i, input=str(i)) for i in range(n)]))


def test_lean_settings_above_a_few_hundred_samples_unless_told() -> None:
    lean = {"log_realtime": False, "score_display": False}
    assert lean.items() <= eval_settings(_task(LEAN_ABOVE_SAMPLES + 1), None, {}).items()
    assert eval_settings(_task(10), None, {}) == {}
    assert eval_settings(_task(10), True, {}) == lean
    assert eval_settings(_task(LEAN_ABOVE_SAMPLES + 1), False, {}) == {}


def test_max_connections_sets_two_samples_per_connection() -> None:
    settings = eval_settings(_task(10), None, {"max_connections": 8, "timeout": None})
    assert settings == {"max_connections": 8, "max_samples": 16}


def test_command_line_retry_options_reach_the_probe_options() -> None:
    args = build_parser().parse_args(["run", "millstone", "--max-retries", "4", "--timeout", "90",
                                      "--attempt-timeout", "20", "--max-connections", "30"])  # fmt: skip
    _, options = options_from_args(args)
    assert (options.max_retries, options.timeout) == (4, 90)
    assert (options.attempt_timeout, options.max_connections) == (20, 30)
    inspect_args = options.eval_args()
    assert (inspect_args["attempt_timeout"], inspect_args["max_connections"]) == (20, 30)
