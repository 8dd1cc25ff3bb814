"""One truth: every probe's summary.json gives its headline the measured / not-measured status
and reason the CLI and the report give it (`value: null` and `not_measured` when not measured)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from stancelab.cli import headlines
from stancelab.core.results.text import summary_text
from stancelab.matrix.run import RunAll, run_all
from stancelab.probes import PROBES, get_probe
from stancelab.report.runs import load_run
from tests.helpers import own_cache, scripted_chat_model
from tests.report.conftest import TINY

MODEL = "mockllm/evasive"

HEADLINES: dict[str, Callable[[dict], dict]] = {
    "millstone": lambda summary: summary["om"],
    "conviction": lambda summary: summary["true_stance_share"],
    "llm-bias-bench": lambda summary: {
        model: entry
        for by_model in summary["sycophancy_rate"].values()
        for model, entry in by_model.items()
    },
    "prior-prejudice": lambda summary: summary["subjective_prejudice"],
    "issuebench": lambda summary: summary["one_sided_share"],
    "even-handedness": lambda summary: summary["even_handedness"],
}


def evasive(messages: list) -> str:
    """No A/B choice, no readable stance, no verdict, no rating digit: nothing usable."""
    return "I would rather not say."


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("one-truth")
    model, _ = scripted_chat_model(evasive, MODEL)
    with own_cache(out / "cache"):
        run_all(RunAll(models=[model], out_dir=out / "all", shared_topics="abortion", display="none"), TINY,
                progress=lambda line: None)  # fmt: skip
    return out / "all"


@pytest.mark.parametrize("probe", list(PROBES))
def test_summary_cli_and_report_agree_on_not_measured(run_folder: Path, probe: str) -> None:
    folder = run_folder / probe
    summary = json.loads((folder / "summary.json").read_text())
    entry = HEADLINES[probe](summary)[MODEL]
    why = entry["not_measured"]
    assert why and why.startswith("not measured: "), entry
    assert entry["value"] is None and entry["ci_low"] is None and "value_if_measured" in entry
    [profile] = get_probe(probe).profiles(load_run(folder))
    assert profile.not_measured == why and not profile.measured()
    line = next(line for line in headlines(folder).splitlines() if line.startswith(MODEL))
    assert "not measured:" in line and why.removeprefix("not measured: ") in line
    assert why in summary_text(get_probe(probe), summary)
    assert summary["evidence"] == {
        "partial": False,
        "partial_models": [],
        "interrupted_logs_ignored": [],
        "interrupted_logs_read": {},
        "missing_shards": [],
        "unreadable_logs": [],
        "configurations": {},
        "notes": [],
    }
    assert entry["partial"] is False
