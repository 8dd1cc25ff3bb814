"""Real runs of the embedded SmolLM2-135M model, offline: the model files, its log-probs, a
`python -m stancelab` run in a fresh process (rerun and re-analysis in this one, from Inspect's
cache) and Inspect's own `eval` of the registered task. Each probe's run with the embedded
model in every role is checked on the demo's run (tests/test_embedded_demo.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import list_eval_logs, read_eval_log
from inspect_ai.model import GenerateConfig, get_model

from stancelab.cli import main
from stancelab.core.embedded.model import EMBEDDED_MODEL, materialise

pytestmark = pytest.mark.slow


def _stancelab(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "stancelab", *args],
        capture_output=True, text=True, env=env, timeout=900, check=False,
    )  # fmt: skip


@pytest.fixture(scope="module")
def module_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One Inspect cache for this file: the registered task's samples are among those the
    command line's run already answered."""
    return tmp_path_factory.mktemp("inspect-cache")


@pytest.fixture
def env(module_cache: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The environment of a `stancelab` process, and this process's, on the module's cache."""
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(module_cache))
    return {**os.environ, "HF_HUB_OFFLINE": "1"}


def test_materialise_is_done_once() -> None:
    first = materialise()
    marker = (first / "stancelab-materialised.json").stat().st_mtime
    assert materialise() == first
    assert (first / "stancelab-materialised.json").stat().st_mtime == marker
    assert (first / "model.safetensors").exists()


async def test_embedded_model_serves_logprobs() -> None:
    model = get_model(
        EMBEDDED_MODEL, config=GenerateConfig(max_tokens=2, logprobs=True, top_logprobs=5)
    )
    output = await model.generate("Answer with one digit from 1 to 7:")
    logprobs = output.choices[0].logprobs
    assert logprobs is not None and logprobs.content
    assert len(logprobs.content[0].top_logprobs or []) == 5
    assert output.usage is not None and output.usage.output_tokens >= 1


def test_cli_run_then_rerun_costs_nothing(
    tmp_path: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    # stancelab's wording: CI has no copy of the authors' MillStone prompt builder
    args = ("run", "millstone", "--limit", "1", "--trials", "1", "--max-tokens", "4",
            "--prompts", "stancelab", "--out", str(out), "--display", "none")  # fmt: skip
    first = _stancelab(*args, env=env)
    assert first.returncode == 0, first.stderr
    assert "embedded/smollm2-135m-instruct" in first.stdout and "OM" in first.stdout
    summary = json.loads((out / "summary.json").read_text())
    om = summary["om"][EMBEDDED_MODEL]
    if om["value"] is None:  # the 135M model: mostly "other", or no A/B answer at all at baseline
        assert om["not_measured"] or (
            om["n_undefined"] == 1 and summary["om_undefined"][EMBEDDED_MODEL]
        )
    elif om["n"] < 2:  # one issue: no interval rather than one of zero width
        assert om["ci_low"] is None and om["ci_high"] is None
    else:
        assert 0 <= om["ci_low"] <= om["value"] <= om["ci_high"] <= 100
    assert summary["trials"][EMBEDDED_MODEL]["total"] == 66

    # the rerun and the re-analysis in this process (the model already loaded), not a fresh one
    assert main(list(args)) == 0, capsys.readouterr().err
    assert json.loads((out / "summary.json").read_text()) == summary
    newest = read_eval_log(list_eval_logs(str(out / "logs"))[0])
    model_events = [e for s in newest.samples or [] for e in s.events if e.event == "model"]
    assert len(model_events) == 66
    assert {e.cache for e in model_events} == {"read"}  # every answer from Inspect's cache

    assert main(["analyze", str(out)]) == 0, capsys.readouterr().err
    assert json.loads((out / "summary.json").read_text()) == summary


def test_inspect_eval_runs_the_registered_task(tmp_path: Path, env: dict[str, str]) -> None:
    """Inspect finds the task by its registered name (the package's entry point) and runs it;
    its samples are the command line's (above), so their answers come from the cache."""
    (log,) = inspect_eval(
        "stancelab/millstone", model=EMBEDDED_MODEL, task_args={"limit": 1, "trials": 1, "max_tokens": 4, "prompts": "stancelab"},
        limit=6, log_dir=str(tmp_path / "logs"), display="none",
    )  # fmt: skip
    assert log.status == "success"
    assert len(log.samples or []) == 6
    assert {s.scores["millstone_stance"].answer for s in log.samples or []} <= {
        "pro",
        "con",
        "other",
    }
