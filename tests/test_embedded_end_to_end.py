"""Real runs of the embedded SmolLM2-135M model, offline (about a minute each on 2 cores)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from inspect_ai.log import list_eval_logs, read_eval_log
from inspect_ai.model import GenerateConfig, get_model

from stancelab.core.embedded import EMBEDDED_MODEL, materialise

pytestmark = pytest.mark.slow


def _stancelab(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "stancelab", *args],
        capture_output=True, text=True, env=env, timeout=900, check=False,
    )  # fmt: skip


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "INSPECT_CACHE_DIR": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1"}


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


def test_cli_run_then_rerun_costs_nothing(tmp_path: Path, env: dict[str, str]) -> None:
    out = tmp_path / "run"
    args = ("run", "millstone", "--limit", "1", "--trials", "1", "--max-tokens", "4",
            "--out", str(out), "--display", "none")  # fmt: skip
    first = _stancelab(*args, env=env)
    assert first.returncode == 0, first.stderr
    assert "embedded/smollm2-135m-instruct" in first.stdout and "OM" in first.stdout
    summary = json.loads((out / "summary.json").read_text())
    om = summary["om"][EMBEDDED_MODEL]
    if om["value"] is None:  # the 135M model: mostly "other", or no A/B answer at all at baseline
        assert om["not_measured"] or (om["n_undefined"] == 1 and summary["om_undefined"][EMBEDDED_MODEL])
    elif om["n"] < 2:  # one issue: no interval rather than one of zero width
        assert om["ci_low"] is None and om["ci_high"] is None
    else:
        assert 0 <= om["ci_low"] <= om["value"] <= om["ci_high"] <= 100
    assert summary["trials"][EMBEDDED_MODEL]["total"] == 66

    second = _stancelab(*args, env=env)
    assert second.returncode == 0, second.stderr
    assert json.loads((out / "summary.json").read_text()) == summary
    newest = read_eval_log(list_eval_logs(str(out / "logs"))[0])
    model_events = [e for s in newest.samples or [] for e in s.events if e.event == "model"]
    assert len(model_events) == 66
    assert {e.cache for e in model_events} == {"read"}  # every answer from Inspect's cache

    reanalysed = _stancelab("analyze", str(out), env=env)
    assert reanalysed.returncode == 0, reanalysed.stderr
    assert json.loads((out / "summary.json").read_text()) == summary


def test_inspect_eval_runs_the_registered_task(tmp_path: Path, env: dict[str, str]) -> None:
    result = subprocess.run(
        [str(Path(sys.executable).parent / "inspect"), "eval", "stancelab/millstone", "--model", EMBEDDED_MODEL,
         "-T", "limit=1", "-T", "trials=1", "-T", "max_tokens=4", "--limit", "6",
         "--log-dir", str(tmp_path / "logs"), "--display", "none"],
        capture_output=True, text=True, env=env, timeout=900, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    log = read_eval_log(list_eval_logs(str(tmp_path / "logs"))[0])
    assert log.status == "success"
    assert len(log.samples or []) == 6
    assert {s.scores["millstone_stance"].answer for s in log.samples or []} <= {
        "pro",
        "con",
        "other",
    }


def test_llm_bias_bench_runs_with_the_embedded_model_in_every_role(
    tmp_path: Path, env: dict[str, str]
) -> None:
    out = tmp_path / "bias"
    result = _stancelab(
        "run", "llm-bias-bench", "--limit", "1", "--turns", "1", "--categories", "direct",
        "--max-tokens", "8", "--judge-max-tokens", "8", "--out", str(out), "--display", "none", env=env,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    summary = json.loads((out / "summary.json").read_text())
    (config,) = summary["table"]  # one run: the embedded model in every role
    row = summary["table"][config][EMBEDDED_MODEL]["direct"]
    assert row["n_topics"] == 1
    figures = row["values_if_measured"] if row["not_measured"] else row  # the tiny judge is often unparsed
    assert sum(figures[g] for g in ("pos", "syc", "inc", "oth", "ref")) == pytest.approx(100.0)
    assert summary["unparsed"][config][EMBEDDED_MODEL]["direct"]["conversations"] == 3
    assert {c["role"] for c in summary["cost"]} == {"subject", "user", "judge"}
    log = read_eval_log(list_eval_logs(str(out / "logs"))[0])
    assert [m.role for m in (log.samples or [])[0].messages] == ["user", "assistant"]


def test_issuebench_runs_with_the_embedded_model_as_writer_and_classifier(
    tmp_path: Path, env: dict[str, str]
) -> None:
    out = tmp_path / "issuebench"
    result = _stancelab(
        "run", "issuebench", "--limit", "1", "--n-templates", "2", "--framings", "neutral,con",
        "--max-tokens", "16", "--out", str(out), "--display", "none", env=env,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    summary = json.loads((out / "summary.json").read_text())
    counts = summary["responses"][EMBEDDED_MODEL]
    assert counts["total"] == 4
    assert sum(counts[label] for label in ("1", "2", "3", "4", "5", "refusal", "unparsed")) == 4
    assert set(summary["majority_counts"][EMBEDDED_MODEL]) == {"neutral", "con"}


def test_prior_prejudice_rates_from_logprobs_with_the_embedded_model(
    tmp_path: Path, env: dict[str, str]
) -> None:
    out = tmp_path / "prior"
    result = _stancelab(
        "run", "prior-prejudice", "--limit", "1", "--templates", "T1", "--no-arguments", "--no-probe",
        "--out", str(out), "--display", "none", env=env,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    summary = json.loads((out / "summary.json").read_text())
    sources = summary["rating_sources"][EMBEDDED_MODEL]["T1"]
    # 3 claims x (claim, negation); the 135M model writes "1" with under half its probability
    # on the digits, so its ratings are read as parsed with the reason and the mass recorded
    assert sources["logprobs"] + sources["parsed"] == 6 and sources["none"] == 0
    assert sources["parsed"] == sum(sources["fallback_reasons"].values())
    assert 0 < sources["mean_digit_mass"] <= 1
    ratings = pd.read_csv(out / "tables" / "ratings.csv")
    assert len(ratings) == 6 and ratings["digit_mass"].between(0, 1).all()
    assert ratings["cwa"].between(1, 7).all()
    assert ((ratings["source"] == "logprobs") == (ratings["digit_mass"] >= 0.5)).all()
    assert set(summary["deltas"][EMBEDDED_MODEL]) == {"subjective", "harmful", "misinformation"}


def test_conviction_runs_with_the_embedded_model_in_every_role(
    tmp_path: Path, env: dict[str, str]
) -> None:
    out = tmp_path / "conviction"
    result = _stancelab(
        "run", "conviction", "--limit", "1", "--samples", "2", "--argument-sets", "1",
        "--out", str(out), "--display", "none", env=env,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    summary = json.loads((out / "summary.json").read_text())
    shares = summary["labels"][EMBEDDED_MODEL]
    assert set(shares) == {"original", "left", "right"}
    for scenario in shares.values():
        assert sum(scenario[k] for k in ("TL", "PL", "TR", "PR", "unclear")) == pytest.approx(1.0)
    assert "unclear" in summary["consistency"][EMBEDDED_MODEL]
