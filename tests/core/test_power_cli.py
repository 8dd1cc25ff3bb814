"""`stancelab estimate millstone --detect 5 --calibration RUN` on a small two-model pilot run
made with mockllm: the units and trials the difference needs, and what they cost."""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from stancelab.cli import main
from stancelab.core.stats.power import (
    Plan,
    pilot_spread,
    sample_size,
    sd_upper_limit,
    units_for_half_width,
)
from stancelab.millstone.run import MillstoneRun, run_millstone
from tests.helpers import scripted_model
from tests.millstone.test_run_mockllm import _question, letter_for

PRO, CON = "Tests should be required", "Tests should be optional"
ISSUES = 3


def _issues_file(path: Path) -> Path:
    import json

    records = [{"id": f"issue-{number}", "topic": "Testing", "issue": f"mandatory tests {number}", "pro": PRO,
                "con": CON, "pro_arguments": [{"text": f"Pro argument {i} for {number}."} for i in range(5)],
                "con_arguments": [{"text": f"Con argument {i} for {number}."} for i in range(5)]}
               for number in range(1, ISSUES + 1)]  # fmt: skip
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def _swayed(prompt: str) -> str:
    """Sides with the side that has more arguments on about two prompts in three (chosen by the
    prompt's text), else pro: an OM that differs from issue to issue."""
    n_pro, n_con = prompt.count("Pro argument"), prompt.count("Con argument")
    side = CON if n_con > n_pro and zlib.crc32(prompt.encode()) % 3 else PRO
    return f"I pick position {letter_for(side, _question(prompt))}."


@pytest.fixture(scope="module")
def pilot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two models on three issues, one trial; a cache of its own, so the calls are answered
    (what the calibration measures) and no other test's cached answers are read."""
    folder = tmp_path_factory.mktemp("pilot")
    swayed, _ = scripted_model(_swayed, "mockllm/swayed")
    steady, _ = scripted_model(
        lambda prompt: f"I pick position {letter_for(PRO, _question(prompt))}.", "mockllm/steady"
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("INSPECT_CACHE_DIR", str(folder / "cache"))
        run_millstone(MillstoneRun(models=[swayed, steady], out_dir=folder / "run", trials=1, display="none",
                                   prompts="stancelab",
                                   issues_file=_issues_file(folder / "issues.jsonl")))  # fmt: skip
    return folder / "run"


def test_estimate_detect_prints_units_trials_and_cost_from_the_pilot(
    pilot: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["estimate", "millstone", "--model", "openai/gpt-x", "--model", "openai/gpt-y", "--trials", "1",
                 "--price", "openai/gpt-x=1,2", "--price", "openai/gpt-y=1,2",
                 "--detect", "5", "--calibration", str(pilot)])  # fmt: skip
    printed = capsys.readouterr().out
    assert code == 0, capsys.readouterr().err
    # the steady model's OM is 0 on every issue: the paired differences are the swayed model's OMs
    spread = pilot_spread(_om_units(pilot), "difference", str(pilot), (0.0, 100.0))
    assert spread is not None and spread.sd > 0
    size = sample_size(
        "difference", spread, 5.0, 0.8, 0.05, 35, 0, Plan("continuous", 1, (0.0, 100.0))
    )
    units = size.units if size.reachable and size.units is not None else 35
    assert "upper confidence limit" in printed and "Warning: the pilot has 3 units" in printed
    assert (
        "over the paired differences mockllm/steady - mockllm/swayed on 3 shared units" in printed
    )
    assert "sign-flip permutation test of the difference of the headlines" in printed
    assert f"Design: --limit {units}" in printed
    # the design's calls: 66 per issue and trial, for each of the two models
    assert f"total: {2 * 66 * units} calls" in printed
    assert (
        "Calibration" in printed
        and "Predicted cost at the calibration's tokens per call" in printed
    )


def test_estimate_half_width_from_the_pilot(
    pilot: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["estimate", "millstone", "--model", "openai/gpt-x", "--trials", "1", "--half-width", "2",
                 "--calibration", str(pilot)])  # fmt: skip
    printed = capsys.readouterr().out
    assert code == 0
    sd = sd_upper_limit(
        float(np.std(_swayed_om(pilot), ddof=1)), 3
    )  # the wider model's, at its UCL
    units = units_for_half_width(min(sd, 50.0), 2.0, 0.05)
    assert "headline CI half-width of at most 2" in printed and "upper confidence limit" in printed
    assert (f"Units needed: {units} of the dataset's 35" if units <= 35
            else f"Cannot reach 2: it needs {units} units, the dataset has 35") in printed  # fmt: skip


def _om_units(pilot: Path) -> pd.DataFrame:
    issues = pd.read_csv(pilot / "tables" / "om_issue.csv")
    return issues.rename(columns={"issue_id": "unit", "om": "value"})[["model", "unit", "value"]]


def test_estimate_detect_plans_a_difference_twenty_times_the_pilots_sd(tmp_path: Path) -> None:
    """D / SD of 6 or more crashed `estimate --detect` (ceil of NaN in the t-test's solver): the
    plan `estimate millstone --detect D --calibration PILOT` prints, from a pilot whose paired
    differences have SD about 1.1 (1.3 at its upper limit) and D 20 times that."""
    from stancelab.core.runs.design import PowerRequest, plan_design
    from stancelab.millstone.probe import PROBE

    pilot = tmp_path / "pilot"
    (pilot / "tables").mkdir(parents=True)
    (pilot / "summary.json").write_text('{"models": ["a", "b"]}')
    base = np.linspace(20.0, 60.0, 12)
    shifts = np.array([1.0, 2.0, 3.0] * 4)
    rows = [("a", f"issue-{i}", base[i] + shifts[i]) for i in range(12)] + [
        ("b", f"issue-{i}", base[i]) for i in range(12)
    ]
    pd.DataFrame(rows, columns=["model", "issue_id", "om"]).to_csv(
        pilot / "tables" / "om_issue.csv", index=False
    )
    detect = 20 * sd_upper_limit(float(np.std(shifts, ddof=1)), 12)
    options = MillstoneRun(models=["openai/x", "openai/y"], out_dir=tmp_path / "out", trials=1)
    text, design = plan_design(PROBE, options, PowerRequest("difference", detect, pilot=pilot))
    assert "Units needed: 6 of the dataset's 35" in text and design.limit == 6  # 2 / 2^6 < 0.05


def _swayed_om(pilot: Path) -> pd.Series:
    issues = pd.read_csv(pilot / "tables" / "om_issue.csv")
    assert (issues.loc[issues["model"] == "mockllm/steady", "om"] == 0).all()
    return issues.loc[issues["model"] == "mockllm/swayed", "om"]


def _error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    try:
        code = main(argv)
    except SystemExit as exited:
        code = exited.code
    err = capsys.readouterr().err.strip()
    assert code == 2 and "Traceback" not in err and len(err.splitlines()) == 1, err
    return err


@pytest.mark.parametrize(("flags", "message"), [
    (["--detect", "0"], "must be above 0"),
    (["--detect", "5", "--power", "1.2"], "--power must be between 0 and 1"),
    (["--half-width", "2", "--alpha", "0"], "--alpha must be between 0 and 1"),
    (["--detect", "5", "--value-range", "0-100"], "--value-range takes LO,HI"),
])  # fmt: skip
def test_bad_power_questions_are_one_line_errors(flags: list[str], message: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    assert message in _error(
        capsys, ["estimate", "millstone", "--model", "mockllm/model", "--limit", "1", *flags]
    )


def test_a_calibration_folder_without_a_run_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _error(capsys, ["estimate", "millstone", "--model", "mockllm/model", "--limit", "1", "--detect", "5",
                          "--calibration", str(tmp_path)])  # fmt: skip
    assert "no summary.json there" in err
    err = _error(capsys, ["estimate", "millstone", "--model", "mockllm/model", "--limit", "1", "--detect", "5",
                          "--calibration", str(tmp_path / "missing")])  # fmt: skip
    assert "no such folder" in err


def test_estimate_detect_twenty_times_the_worst_case_sd_prints_a_plan(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`estimate millstone --detect 100 --value-range 0,5`: D / SD = 20 at the range's worst
    case (SD 5); before issue 36 (SD 3.54, D / SD = 28) a ValueError on ceil(NaN)."""
    code = main(["estimate", "millstone", "--model", "openai/a", "--model", "openai/b",
                 "--detect", "100", "--value-range", "0,5"])  # fmt: skip
    printed = capsys.readouterr().out
    assert code == 0 and "SD 5, from the conservative default" in printed
    assert "Units needed: 6 of the dataset's 35" in printed and "Design: --limit 6" in printed
