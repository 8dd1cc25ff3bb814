"""Issue 27's must-show: models through one probe (MillStone, scripted mockllm models) give
summary.json a row per pair with its test, interval and adjusted p; `analyze --adjust fdr_bh`
switches the adjustment; the report shows every pair's lenses with adjusted p."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from statsmodels.stats.multitest import multipletests

from stancelab.cli import main
from stancelab.core.results.summary import write_summary
from stancelab.core.runs.pipeline import run_probe
from stancelab.core.runs.until_ci import NARROW
from stancelab.core.stats.compare import SIGN_FLIP, STANDARDIZED
from stancelab.core.stats.sequential import LOOKS, look_level
from stancelab.millstone.run import MillstoneRun
from stancelab.probes import PROBES
from stancelab.report.build import build_report
from tests.helpers import scripted_model
from tests.millstone.test_run_mockllm import _issues_file, follower

MODELS = ("mockllm/follows", "mockllm/half", "mockllm/stubborn")


def _half(prompt: str) -> str:
    """Follows the arguments on the first issue only."""
    return follower(prompt) if "mandatory tests 1" in prompt else "I pick position A."


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("compare")
    models = [scripted_model(follower, MODELS[0])[0], scripted_model(_half, MODELS[1])[0],
              scripted_model(lambda prompt: "I pick position A.", MODELS[2])[0]]  # fmt: skip
    options = MillstoneRun(models=models, out_dir=out / "run", trials=1, prompts="stancelab",
                           issues_file=_issues_file(out / "issues.jsonl"), display="none")  # fmt: skip
    return out / "run", run_probe(PROBES["millstone"], options)


def test_summary_json_has_each_pairs_test_interval_and_adjusted_p(
    run_folder: tuple[Path, str],
) -> None:
    folder, text = run_folder
    rows = json.loads((folder / "summary.json").read_text())["headline_differences"]
    assert [(row["model_a"], row["model_b"]) for row in rows] == [
        (MODELS[0], MODELS[1]), (MODELS[0], MODELS[2]), (MODELS[1], MODELS[2])]  # fmt: skip
    for row in rows:
        assert row["n"] == 2 and row["test"] == SIGN_FLIP and row["adjustment"] == "holm"
        assert 0 < row["p"] <= row["p_adjusted"] <= 1
        assert row["effect_size_name"] == STANDARDIZED
    assert [row["p_adjusted"] for row in rows] == pytest.approx(
        multipletests([row["p"] for row in rows], method="holm")[1]
    )
    # two issues are too few for a sign-flip interval: none, and the CLI says why
    assert all(row["ci_low"] is None and row["ci_high"] is None for row in rows)
    assert "holm-adjusted p=" in text and SIGN_FLIP in text
    assert "no CI (n = 2, a sign-flip interval needs 6 units)" in text


def test_analyze_adjusts_by_benjamini_hochberg_when_asked(
    run_folder: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    folder, _ = run_folder
    assert main(["analyze", str(folder), "--adjust", "fdr_bh"]) == 0
    assert "fdr_bh-adjusted p=" in capsys.readouterr().out
    rows = json.loads((folder / "summary.json").read_text())["headline_differences"]
    assert {row["adjustment"] for row in rows} == {"fdr_bh"}
    assert [row["p_adjusted"] for row in rows] == pytest.approx(
        multipletests([row["p"] for row in rows], method="fdr_bh")[1]
    )
    assert main(["analyze", str(folder)]) == 0  # back to the default for the other tests
    with pytest.raises(SystemExit):
        main(["analyze", str(folder), "--adjust", "bonferroni"])


def test_the_report_lets_one_pick_two_models_and_see_each_lens(
    run_folder: tuple[Path, str], tmp_path: Path
) -> None:
    folder, _ = run_folder
    page = build_report(
        [folder], tmp_path / "report.html", max_transcripts=0, adjust="fdr_bh"
    ).path.read_text()
    assert '<section id="pairs">' in page and 'id="pair-select"' in page
    assert page.count('<details class="pair"') == 3
    assert f"{MODELS[0]} − {MODELS[1]}" in page and "Benjamini-Hochberg" in page
    assert "(fdr_bh)" in page and SIGN_FLIP in page


def test_the_report_shows_an_until_ci_runs_adjusted_interval_beside_the_headline(
    run_folder: tuple[Path, str], tmp_path: Path
) -> None:
    """Issue 27 (--until-ci): the run's folder given the stopping record of an `--until-ci`
    run; the front page and the model's card show its adjusted interval, and the section says
    the 95% intervals do not account for the stopping."""
    folder = Path(shutil.copytree(run_folder[0], tmp_path / "run"))  # keeps the logs' times
    summary = json.loads((folder / "summary.json").read_text())
    headline = {"value": 0.5, "ci_low": 0.25, "ci_high": 0.75, "n": 2, "width": 0.5}
    summary["until_ci"] = {"width": 0.6, "looks_planned": LOOKS, "level": look_level(),
                           "stopped_at_look": 3, "reason": NARROW,
                           "headline": {MODELS[0]: headline}}  # fmt: skip
    write_summary(folder, summary)
    page = build_report([folder], tmp_path / "report.html", max_transcripts=0).path.read_text()
    assert "stopped at look 3 of 5" in page
    assert "the 95% intervals do not account for the stopping" in page
    adjusted = "--until-ci: mean over 2 units 0.5, 95% interval [0.25, 0.75]"
    assert page.count(adjusted) == 2  # front page and card
