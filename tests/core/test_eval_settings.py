"""Run options reach Inspect: lean settings above a couple of hundred samples, two samples per
connection, the command line's retry and connection options on every probe's options; and
the heap that exists before an eval is frozen while it runs."""

from __future__ import annotations

import gc
from pathlib import Path

from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.solver import Generate, Solver, TaskState, solver

from stancelab.cli import build_parser, options_from_args
from stancelab.core.runs.evals import (
    EVAL_GC_THRESHOLDS,
    LEAN_ABOVE_SAMPLES,
    eval_settings,
    run_eval,
)


def _task(n: int) -> Task:
    return Task(dataset=MemoryDataset([Sample(id=i, input=str(i)) for i in range(n)]))


def test_lean_settings_above_a_few_hundred_samples_unless_told(monkeypatch) -> None:
    monkeypatch.delenv("INSPECT_EVAL_CTL_SERVER", raising=False)
    lean = {"log_realtime": False, "score_display": False, "ctl_server": False}
    assert lean.items() <= eval_settings(_task(LEAN_ABOVE_SAMPLES + 1), None, {}).items()
    assert eval_settings(_task(10), None, {}) == {}
    assert eval_settings(_task(10), True, {}) == lean
    assert eval_settings(_task(LEAN_ABOVE_SAMPLES + 1), False, {}) == {}


def test_a_lean_run_keeps_the_control_server_the_user_asked_for(monkeypatch) -> None:
    monkeypatch.setenv("INSPECT_EVAL_CTL_SERVER", "true")
    settings = eval_settings(_task(LEAN_ABOVE_SAMPLES + 1), None, {})
    assert "ctl_server" not in settings
    assert settings["log_realtime"] is False


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


def test_command_line_retry_wait_reaches_run_eval() -> None:
    args = build_parser().parse_args(["run", "llm-bias-bench", "--retry-wait", "2.5"])
    _, options = options_from_args(args)
    assert options.eval_args()["retry_wait"] == 2.5


def test_the_heap_before_an_eval_is_frozen_and_collected_less_often_while_it_runs(
    tmp_path: Path,
) -> None:
    seen: list[int] = []
    thresholds: list[tuple[int, int, int]] = []

    @solver
    def note_frozen() -> Solver:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            seen.append(gc.get_freeze_count())
            thresholds.append(gc.get_threshold())
            return state

        return solve

    task = Task(dataset=MemoryDataset([Sample(id=1, input="x")]), solver=note_frozen())
    gc.unfreeze()
    before = gc.get_threshold()
    (log,) = run_eval(task, ["mockllm/model"], None, tmp_path / "logs", "none")
    assert log.status == "success"
    assert seen and seen[0] > 1000
    assert thresholds == [EVAL_GC_THRESHOLDS] and EVAL_GC_THRESHOLDS[0] > before[0]
    assert gc.get_freeze_count() == 0 and gc.get_threshold() == before


def test_what_outlives_a_full_collection_during_an_eval_is_frozen(tmp_path: Path) -> None:
    """A full pass over a full design's live objects held the event loop for 4-5 s: longer
    than a fast server's attempt timeout, so every call in flight was paid again. What
    survives a full pass is frozen, so the next one skips it."""
    counts: list[tuple[int, int]] = []
    kept: list[object] = []

    @solver
    def collect_fully() -> Solver:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            kept.extend([index] for index in range(5_000))  # lives on after the pass
            before = gc.get_freeze_count()
            gc.collect()
            counts.append((before, gc.get_freeze_count()))
            return state

        return solve

    task = Task(dataset=MemoryDataset([Sample(id=1, input="x")]), solver=collect_fully())
    gc.unfreeze()
    (log,) = run_eval(task, ["mockllm/model"], None, tmp_path / "logs", "none")
    assert log.status == "success"
    ((before, after),) = counts
    assert after >= before + len(kept)
    assert gc.get_freeze_count() == 0 and all(callback.__module__ != "stancelab.core.runs.evals"
                                               for callback in gc.callbacks)  # fmt: skip


def test_an_eval_compresses_its_log_members_without_a_zstd_thread_pool(
    tmp_path: Path, monkeypatch
) -> None:
    """Inspect's writer would start a pool of 12 zstd threads for every member it writes (each
    sample's few kilobytes of JSON): an eval compresses in the writing thread, the same bytes
    (the default restored after it: `test_inspect_private`)."""
    import zstandard

    threads: list[int] = []
    real = zstandard.ZstdCompressor

    def counted(*args: object, **kwargs: object) -> zstandard.ZstdCompressor:
        threads.append(int(kwargs.get("threads", 0)))  # type: ignore[call-overload]
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(zstandard, "ZstdCompressor", counted)

    @solver
    def answered() -> Solver:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            return state

        return solve

    task = Task(dataset=MemoryDataset([Sample(id=i, input=str(i)) for i in range(5)]),
                solver=answered())  # fmt: skip
    (log,) = run_eval(task, ["mockllm/model"], None, tmp_path / "logs", "none")
    assert log.status == "success" and len(log.samples or []) == 5
    assert threads and set(threads) == {0}
