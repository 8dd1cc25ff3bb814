"""Every core by default: a large run of API models gets one worker per core without a flag,
and says so in its header; a small run, a run of an in-process model (whose weights each
worker would load again) and `--workers 1` keep one process."""

from __future__ import annotations

from pathlib import Path

import pytest

from stancelab.cli import build_parser, options_from_args
from stancelab.core.runs import pipeline
from stancelab.core.runs.shards import LARGE_RUN_CALLS, WORKER_MEMORY_BYTES, default_workers

API = "openai-api/fake/fake-model"
PLENTY = 64 * WORKER_MEMORY_BYTES


@pytest.mark.parametrize(
    ("calls", "models", "cores", "memory", "expected"),
    [
        (LARGE_RUN_CALLS, [API], 2, PLENTY, 2),
        (34_650, [API, "openai/gpt-4o-mini"], 8, PLENTY, 8),
        (LARGE_RUN_CALLS - 1, [API], 2, PLENTY, 1),  # small
        (None, [API], 2, PLENTY, 1),  # the plan is unknown
        (34_650, ["embedded/SmolLM2-135M-Instruct"], 2, PLENTY, 1),
        (34_650, [API, "hf/some/model"], 2, PLENTY, 1),  # a role played in-process
        (34_650, [API], 1, PLENTY, 1),
        (34_650, [API], 8, 3 * WORKER_MEMORY_BYTES, 3),  # memory for three
        (34_650, [API], 4, None, 4),  # memory unknown
    ],
)
def test_the_default_picks_workers_only_for_a_large_run_of_api_models(
    calls: int | None, models: list[str], cores: int, memory: int | None, expected: int
) -> None:
    assert default_workers(calls, models, cores, memory).count == expected


def _planned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *flags: str) -> object:
    monkeypatch.setattr(pipeline, "cpu_count", lambda: 2)
    monkeypatch.setattr(pipeline, "available_memory", lambda: PLENTY)
    args = build_parser().parse_args(["run", "millstone", "--out", str(tmp_path / "run"), *flags])
    probe, options = options_from_args(args)
    options.out_dir.mkdir(parents=True, exist_ok=True)
    return pipeline.plan(probe, options)


def test_a_full_millstone_design_on_an_api_model_runs_one_worker_per_core(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    strategy = _planned(tmp_path, monkeypatch, "--model", API)
    assert isinstance(strategy, pipeline.Workers) and strategy.count == 2
    header = capsys.readouterr().out
    assert "34,650 planned calls: 2 worker processes" in header
    assert "--workers 1 keeps one process" in header


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (("--model", API, "--limit", "3"), f"one process (under {LARGE_RUN_CALLS:,} planned calls"),
        (("--model", "embedded"), "one process (embedded runs in-process"),
        (("--model", API, "--workers", "1"), None),  # asked for: nothing to say
    ],
)
def test_a_small_embedded_or_single_process_run_keeps_one_process(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    flags: tuple[str, ...],
    said: str | None,
) -> None:
    strategy = _planned(tmp_path, monkeypatch, *flags)
    assert isinstance(strategy, pipeline.InProcess)
    header = capsys.readouterr().out
    assert (said in header) if said else "process" not in header
