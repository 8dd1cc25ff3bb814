"""Issue 27: `--until-ci W` runs a probe's units in seeded batches and stops once every model's
headline interval (a betting confidence sequence, valid at every look: issue 36) is narrower
than W. Through a small probe of scripted units (two samples each, a number per answer in
0-100) on mockllm."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import read_eval_log
from inspect_ai.model import CachePolicy
from inspect_ai.scorer import Score, Target, mean, scorer
from inspect_ai.solver import TaskState, generate

from stancelab.cli import main
from stancelab.core.errors import StancelabError
from stancelab.core.probe import Probe
from stancelab.core.results.logs import scored_samples
from stancelab.core.results.summary import Analysis, RunResult
from stancelab.core.results.text import until_ci_text
from stancelab.core.runs.evals import ProbeRun, run_eval
from stancelab.core.runs.pipeline import reanalyse, run_pipeline
from stancelab.core.runs.until_ci import NARROW, SPENT
from stancelab.core.stats.intervals import bootstrap_ci
from stancelab.core.stats.sequential import (
    ALPHA,
    LOOKS,
    betting_interval,
    look_level,
    unit_position,
)
from stancelab.probes import PROBES
from tests.helpers import own_cache, scripted_model

UNITS = 20
PER_UNIT = 2
TASK = "toy_units"


@scorer(metrics=[mean()])
def number() -> Any:
    async def score(state: TaskState, target: Target) -> Score:
        return Score(value=float(state.output.completion))

    return score


def toy_task() -> Task:
    samples = [Sample(id=f"u{unit}__s{index}", input=f"unit {unit} sample {index}", metadata={"unit_id": f"u{unit}"})
               for unit in range(UNITS) for index in range(PER_UNIT)]  # fmt: skip
    return Task(dataset=MemoryDataset(samples, name=TASK), solver=generate(cache=CachePolicy(expiry=None)),
                scorer=number(), name=TASK)  # fmt: skip


def analysis(out_dir: Path, seed: int = 0, options: Any = None) -> Analysis:
    frame, _ = scored_samples(Path(out_dir) / "logs", TASK, "number")
    return Analysis({"models": sorted(frame["model"].unique().tolist()), "samples": len(frame)})


def unit_values(run: RunResult) -> pd.DataFrame:
    frame, _ = scored_samples(run.folder / "logs", TASK, "number")
    units = frame["metadata_unit_id"]
    values = frame.assign(unit=units, value=frame["score_value"].astype(float))
    return values.groupby(["model", "unit"], as_index=False)["value"].mean()


def run(options: ProbeRun) -> None:
    run_eval(toy_task(), options.models, options.roles, options.log_location(), **options.eval_args(),
             **options.shard_args())  # fmt: skip


TOY = Probe(name="toy", title="toy", lens="toy", task_prefix=TASK, options=ProbeRun, roles=(), tasks=(toy_task,),
            run=run, analysis=analysis, format_summary=lambda summary: "", plan=lambda options: [],
            profiles=lambda result: [], section=lambda result: None, unit_values=unit_values,
            unit_key="unit_id", value_range=(0.0, 100.0))  # fmt: skip


def steady(prompt: str) -> str:
    """Low variance: 50, 51 or 52 by unit."""
    return str(50 + int(prompt.split()[1]) % 3)


def noisy(prompt: str) -> str:
    """High variance: 0 or 100 by unit."""
    return str(100 * (int(prompt.split()[1]) % 2))


WIDTH = 50.0
"""the steady model's interval is narrower at look 2 (11 units: 44.4); the noisy model's never"""


def options(tmp_path: Path, model: Any, width: float | None = WIDTH, **more: Any) -> ProbeRun:
    return ProbeRun(
        models=[model], out_dir=tmp_path / "run", until_ci=width, display="none", **more
    )


def test_low_variance_stops_early_and_records_the_rule(tmp_path: Path) -> None:
    model, seen = scripted_model(steady)
    summary = run_pipeline(TOY, options(tmp_path, model))
    record = summary["until_ci"]
    assert record["reason"] == NARROW and record["stopped_at_look"] < LOOKS
    assert record["looks_planned"] == LOOKS and record["width"] == WIDTH
    assert (
        record["interval"] == "betting confidence sequence" and "Waudby-Smith" in record["method"]
    )
    assert len(record["looks"]) == record["stopped_at_look"]
    assert all(
        look["headline"]["mockllm/model"]["width"] is not None for look in record["looks"][-1:]
    )
    run_units = record["looks"][-1]["units"]
    assert sum(record["batch_units"]) == run_units < UNITS
    assert len(seen) == run_units * PER_UNIT  # only the batches run were paid
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["until_ci"] == record
    assert "stopped at look" in until_ci_text(summary)
    # `stancelab analyze` (pipeline.reanalyse) replays the looks from run.toml and the batch logs
    assert reanalyse(TOY, tmp_path / "run")["until_ci"] == record
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["until_ci"] == record


@pytest.fixture(scope="module")
def noisy_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], int]:
    """(the run's folder, its `until_ci` record, the calls it paid) of the noisy model."""
    folder = tmp_path_factory.mktemp("noisy")
    model, seen = scripted_model(noisy)
    with own_cache(folder / "cache"):
        record = run_pipeline(TOY, options(folder, model))["until_ci"]
    return folder / "run", record, len(seen)


def test_noisy_model_spends_the_full_design(noisy_run: tuple[Path, dict[str, Any], int]) -> None:
    _, record, paid = noisy_run
    assert record["reason"] == SPENT and record["stopped_at_look"] == LOOKS
    assert record["looks"][-1]["units"] == UNITS and paid == UNITS * PER_UNIT
    assert all(look["headline"]["mockllm/model"]["width"] >= WIDTH for look in record["looks"])


def test_the_interval_is_the_confidence_sequence_over_the_seeded_order(
    noisy_run: tuple[Path, dict[str, Any], int],
) -> None:
    _, record, _ = noisy_run
    assert record["level"] == pytest.approx(1 - ALPHA) == look_level()
    order = sorted(range(UNITS), key=lambda unit: unit_position(f"u{unit}", 0))
    units = [100.0 * (unit % 2) for unit in order]
    low, high = betting_interval(units, 0.0, 100.0)
    final = record["headline"]["mockllm/model"]
    assert (final["ci_low"], final["ci_high"]) == pytest.approx((low, high), abs=1e-6)
    nominal = bootstrap_ci(units)  # a fixed-size interval: narrower, and not valid after looks
    assert final["ci_high"] - final["ci_low"] > nominal.ci_high - nominal.ci_low
    widths = [look["headline"]["mockllm/model"]["width"] for look in record["looks"][1:]]
    assert widths == sorted(widths, reverse=True)  # the running intersection never widens


def test_a_headline_without_bounds_cannot_run_until_ci(tmp_path: Path) -> None:
    """The confidence sequence needs the headline's value range: none, and nothing is run."""
    from dataclasses import replace

    model, seen = scripted_model(steady)
    with pytest.raises(StancelabError, match="headline is not bounded"):
        run_pipeline(replace(TOY, value_range=None), options(tmp_path, model))
    assert seen == [] and not (tmp_path / "run" / "logs").exists()


def test_batches_hold_whole_units_and_a_rerun_pays_nothing(
    noisy_run: tuple[Path, dict[str, Any], int],
) -> None:
    folder, record, _ = noisy_run
    frame, _ = scored_samples(folder / "logs", TASK, "number")
    logs_per_unit = frame.groupby("metadata_unit_id")["log"].nunique()
    assert len(logs_per_unit) == UNITS and (logs_per_unit == 1).all()  # a unit in one log
    assert frame.groupby("metadata_unit_id").size().eq(PER_UNIT).all()
    units_per_log = frame.groupby("log")["metadata_unit_id"].nunique().tolist()
    assert sorted(record["batch_units"]) == sorted(units_per_log)  # every batch's log counts
    again, seen_again = scripted_model(noisy)
    with own_cache(folder.parent / "cache"):
        rerun = run_pipeline(TOY, options(folder.parent, again))["until_ci"]
    assert seen_again == [] and rerun == record


@pytest.mark.parametrize(("width", "more", "message"), [
    (0.0, {}, "greater than 0"), (-2.0, {}, "greater than 0"),
    (5.0, {"workers": 2}, "without --workers"), (5.0, {"shard": "1/2"}, "without --workers and --shard"),
    (5.0, {"looks": 0}, "--looks must be a whole number of at least 1"),
    (None, {"looks": 3}, "give it with --until-ci"),
])  # fmt: skip
def test_bad_until_ci_is_a_clear_error(
    tmp_path: Path, width: float | None, more: dict[str, Any], message: str
) -> None:
    with pytest.raises(StancelabError, match=message):
        run_pipeline(TOY, options(tmp_path, "mockllm/model", width=width, **more))


def test_a_probe_without_units_cannot_run_until_ci(tmp_path: Path) -> None:
    from dataclasses import replace

    with pytest.raises(StancelabError, match="does not name its units"):
        run_pipeline(replace(TOY, unit_key=None), options(tmp_path, "mockllm/model"))


@pytest.mark.parametrize("probe", sorted(PROBES))
def test_every_probe_names_its_units_and_takes_until_ci(
    probe: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert PROBES[probe].unit_key  # the sample metadata key of its unit
    status = main(
        ["run", probe, "--model", "mockllm/model", "--until-ci", "0", "--out", str(tmp_path)]
    )
    assert status == 2 and "--until-ci must be a width greater than 0" in capsys.readouterr().err


def test_a_small_design_with_empty_batches_runs_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys.modules[__name__], "UNITS", 3)  # seed 0: batches of 0, 2, 0, 1, 0 units
    model, seen = scripted_model(noisy)
    record = run_pipeline(TOY, options(tmp_path, model))["until_ci"]
    assert record["batch_units"] == [0, 2, 0, 1, 0] and record["reason"] == SPENT
    assert record["looks"][0]["headline"] == {} and len(seen) == 3 * PER_UNIT


def test_analyze_keeps_the_stopping_record_of_a_spent_design(
    noisy_run: tuple[Path, dict[str, Any], int],
) -> None:
    folder, record, _ = noisy_run
    assert reanalyse(TOY, folder, seed=7)["until_ci"] == record  # the run's seed, not analyze's
    summary = json.loads((folder / "summary.json").read_text())
    assert "stopped at look 5 of 5" in until_ci_text(summary)


def copy_of(folder: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(folder, tmp_path / "copy"))


def test_analyze_of_a_run_cut_short_says_so(
    noisy_run: tuple[Path, dict[str, Any], int], tmp_path: Path
) -> None:
    folder = copy_of(noisy_run[0], tmp_path)
    for log in (folder / "logs").iterdir():  # as if stopped after batch 2
        shard = read_eval_log(str(log), header_only=True).eval.metadata["stancelab_shard"]
        if not shard.startswith(("until-ci batch 1/", "until-ci batch 2/")):
            log.unlink()
    record = reanalyse(TOY, folder)["until_ci"]
    assert record["stopped_at_look"] == 2 and record["reason"].startswith("cut short")
    assert record["looks"] == noisy_run[1]["looks"][:2]


def test_analyze_of_a_whole_run_adds_no_record(
    noisy_run: tuple[Path, dict[str, Any], int], tmp_path: Path
) -> None:
    folder = copy_of(noisy_run[0], tmp_path)
    config = folder / "run.toml"
    config.write_text(config.read_text().replace(f"until_ci = {WIDTH}\n", ""))
    assert "until_ci" not in reanalyse(TOY, folder)


def test_looks_sets_the_design_and_the_summary_records_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--looks 1`: one batch of every unit at level 1 - 0.05/1; analyze replays it."""
    model, seen = scripted_model(noisy)
    record = run_pipeline(TOY, options(tmp_path, model, looks=1))["until_ci"]
    assert record["looks_planned"] == 1 and record["level"] == pytest.approx(0.95)
    assert record["batch_units"] == [UNITS] and record["reason"] == SPENT
    assert "1 planned looks" in record["method"] and len(seen) == UNITS * PER_UNIT
    assert reanalyse(TOY, tmp_path / "run")["until_ci"] == record
    argv = ["run", "millstone", "--model", "mockllm/model", "--until-ci", "5", "--looks", "0"]
    assert main([*argv, "--out", str(tmp_path / "cli")]) == 2
    assert "--looks must be a whole number of at least 1" in capsys.readouterr().err
