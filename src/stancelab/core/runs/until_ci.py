"""Adaptive budgets (`--until-ci W`): run a probe's units in seeded batches and stop once every
model's headline interval is narrower than W, or when the full design is spent.

The design is fixed before the run: K planned looks (`--looks`, default `LOOKS`). Each unit (a
MillStone issue, an llm-bias-bench topic, a Conviction statement, a prior-prejudice claim, an
IssueBench issue, an even-handedness stance pair: the sample metadata key `Probe.unit_key` names
it) gets a seeded position in [0, 1) from a hash of the seed and its id; batch k of K holds the
units whose position lies in [(k-1)/K, k/K), so a unit's samples are never split between
batches, and the batches come in an order fixed by the seed alone. A batch runs through
Inspect's sample selection into the run's log folder as a shard (`core.runs.shards`) named
`until-ci batch k/K ...` in the log's metadata, so batches add up in the analysis
(`core.results.logs`), and a re-run skips the batches that finished and resumes the others from
Inspect's cache: no call is paid twice.

After each batch the folder's logs are analysed (in memory: nothing is written until the run's
pipeline writes, `core.runs.pipeline`), and each model's headline gets the interval of a betting
confidence sequence over its units in their seeded order (`core.stats.sequential`): valid at
every look at once, so the interval at the look the run stops at covers at 95% whatever the
stopping. It needs the headline's bounds (`Probe.value_range`): a probe whose headline is not
bounded cannot run `--until-ci`. The summary's record of the rule, the looks, the
widths seen, the batch sizes and why the run stopped (`until_ci`) is rebuilt from the folder's
run.toml (W, seed, looks) and its batch logs (`replay_until_ci`), by the run and by `stancelab
analyze` alike, so a re-analysis keeps the same record."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd

from stancelab.core.errors import StancelabError
from stancelab.core.probe import Probe
from stancelab.core.results.logs import BATCH_PREFIX, shard_of_log
from stancelab.core.results.summary import Analysis, analysis_unit_values
from stancelab.core.runs.evals import ProbeRun
from stancelab.core.runs.options import RUN_CONFIG, read_config
from stancelab.core.runs.shards import Shard
from stancelab.core.stats.intervals import Estimate
from stancelab.core.stats.sequential import (
    ALPHA,
    LOOKS,
    headline_intervals,
    is_narrow,
    look_level,
    method_text,
    unit_position,
    units_through,
    width_of,
)
from stancelab.core.stats.sequential import (
    METHOD as SEQUENCE,
)
from stancelab.core.values import json_safe

METHOD = method_text()
NARROW = "narrower than W for every model"
SPENT = "full design spent"
CUT_SHORT = "cut short before the design was spent"


@dataclass(frozen=True)
class Batch(Shard):
    """Batch `index` of `count`: the samples of the units whose seeded position lies in
    [(index - 1) / count, index / count); samples without a unit go with the first batch."""

    seed: int
    unit_key: str

    def __str__(self) -> str:
        return f"{BATCH_PREFIX}{self.index}/{self.count} seed {self.seed}"

    def holds(self, sample_id: object) -> bool:
        raise TypeError("a batch selects samples by their unit: use holds_sample")

    def holds_sample(self, sample: Any) -> bool:
        unit = (sample.metadata or {}).get(self.unit_key)
        if unit is None:
            return self.index == 1
        position = unit_position(unit, self.seed)
        return (self.index - 1) / self.count <= position < self.index / self.count


def planned_looks(options: ProbeRun) -> int:
    """The run's planned looks: `--looks`, else `LOOKS`."""
    return LOOKS if options.looks is None else options.looks


def check_until_ci(probe: Probe, options: ProbeRun) -> None:
    """`--until-ci` is a positive width, on a probe that names its units, in one process;
    `--looks` a whole number of at least 1, given with `--until-ci`."""
    width = options.until_ci
    looks = options.looks
    if looks is not None and (isinstance(looks, bool) or not isinstance(looks, int) or looks < 1):
        raise StancelabError(f"--looks must be a whole number of at least 1, not {looks!r}.")
    if width is None:
        if looks is not None:
            raise StancelabError(
                "--looks plans the looks of --until-ci W: give it with --until-ci."
            )
        return
    if not (isinstance(width, int | float) and math.isfinite(width) and width > 0):
        raise StancelabError(
            f"--until-ci must be a width greater than 0 (in the headline's units), not {width!r}."
        )
    if options.shard or (options.workers and options.workers > 1):
        raise StancelabError("--until-ci runs its batches one after another in this process: "
                             "give it without --workers and --shard.")  # fmt: skip
    if probe.unit_key is None or probe.unit_values is None:
        raise StancelabError(f"{probe.name} does not name its units, so it cannot run --until-ci.")
    if probe.value_range is None:
        raise StancelabError(f"{probe.name}'s headline is not bounded (it states no range for its unit "
                             "values), and --until-ci's confidence sequence needs the bounds: plan a "
                             f"fixed design instead (stancelab estimate {probe.name} --half-width H).")  # fmt: skip


def look_record(index: int, units: pd.DataFrame, intervals: dict[str, Estimate]) -> dict[str, Any]:
    """One look as the summary keeps it: the units run so far and each model's interval."""
    return {
        "look": index,
        "units": int(units["unit"].nunique()) if not units.empty else 0,
        "headline": {model: {**{k: json_safe(v) for k, v in e.as_dict().items()}, "width": json_safe(width_of(e))}
                     for model, e in intervals.items()},
    }  # fmt: skip


def stopping_record(
    width: float, looks: list[dict[str, Any]], reason: str, seed: int, count: int = LOOKS
) -> dict[str, Any]:
    """The `until_ci` record of summary.json: the rule (`count` planned looks), every look,
    and why the run stopped."""
    seen = [look["units"] for look in looks]
    return {
        "width": width, "interval": SEQUENCE, "method": method_text(count), "looks_planned": count, "alpha": ALPHA,
        "level": look_level(count), "seed": seed, "looks": looks, "stopped_at_look": len(looks),
        "reason": reason, "batch_units": [b - a for a, b in zip([0, *seen], seen, strict=False)],
        "headline": looks[-1]["headline"] if looks else {},
    }  # fmt: skip


def run_batches(probe: Probe, options: ProbeRun) -> None:
    """Run `probe`'s batches one after another, looking after each, until every model's
    headline interval is narrower than `options.until_ci` or the last planned batch has run."""
    assert options.until_ci is not None and probe.unit_key is not None
    count = planned_looks(options)
    models = [str(model) for model in options.models]
    for index in range(1, count + 1):
        probe.run(replace(options, shard=Batch(index, count, options.seed, probe.unit_key)))  # type: ignore[arg-type]  # a Shard, as parse_shard takes
        if not batches_ran_samples(options.log_location(), index, options.seed, count):
            continue  # no unit in the batches so far (a small design): nothing to analyse yet
        analysis = probe.analysis(options.out_dir, options.seed, options)
        units = analysis_units(probe, options.out_dir, analysis)
        names = look_models(analysis.summary, models)
        if take_look(units, index, names, options.seed, options.until_ci, count, bounds(probe))[1]:
            return


def analysis_units(probe: Probe, folder: Path, analysis: Analysis) -> pd.DataFrame:
    """The per-unit headline values of every model in an analysis of the folder."""
    assert probe.unit_values is not None
    return analysis_unit_values(probe.name, probe.unit_values, folder, analysis)


def look_models(summary: dict[str, Any], run_models: list[str]) -> list[str]:
    """The models a look gives an interval: the analysis's, or the run's while the analysis
    lists fewer (a model without units yet has no interval, so the run goes on)."""
    analysed = [str(model) for model in summary.get("models", [])]
    return analysed if len(analysed) >= len(run_models) else run_models


def bounds(probe: Probe) -> tuple[float, float]:
    """The headline's value range (`check_until_ci` refused a probe without one)."""
    assert probe.value_range is not None
    return probe.value_range


def take_look(
    units: pd.DataFrame, index: int, models: list[str], seed: int, width: float, count: int,
    value_range: tuple[float, float],
) -> tuple[dict[str, Any], bool]:  # fmt: skip
    """Look `index` of `count` at `units` (every batch's): the record of batches 1 to `index`
    with each model's headline and its confidence-sequence interval over their units, and
    whether every interval is narrower than `width`."""
    kept = units_through(units, index, seed, count)
    intervals = headline_intervals(kept, models, seed, value_range)
    return look_record(index, kept, intervals), is_narrow(intervals, width)


def batches_ran_samples(log_dir: str, index: int, seed: int, count: int = LOOKS) -> bool:
    """Whether the logs of batches 1 to `index` (of `count`) in `log_dir` selected any sample."""
    logged = batch_logs(log_dir, seed, count)
    return any(ran for number, ran in logged.items() if number <= index)


def batch_logs(log_dir: str, seed: int, count: int = LOOKS) -> dict[int, bool]:
    """The batches of the design (`count` looks, `seed`) with a log in `log_dir`: batch
    number -> whether its log selected any sample."""
    from inspect_ai.log import list_eval_logs, read_eval_log

    names = {str(Batch(number, count, seed, "")): number for number in range(1, count + 1)}
    logged: dict[int, bool] = {}
    if not Path(log_dir).is_dir() and "://" not in log_dir:
        return logged
    for info in list_eval_logs(log_dir, recursive=True):
        try:
            spec = read_eval_log(info, header_only=True).eval
        except Exception:
            continue
        number = names.get(shard_of_log(spec.metadata))
        if number is not None:
            logged[number] = logged.get(number, False) or bool(spec.config.sample_id)
    return logged


def run_config(folder: Path) -> dict[str, Any]:
    """The `[options]` of the folder's run.toml ({} without a readable one: the analysis
    goes on without the stopping record)."""
    try:
        return read_config(folder / RUN_CONFIG)[1] if (folder / RUN_CONFIG).is_file() else {}
    except StancelabError:
        return {}


def replay_until_ci(probe: Probe, folder: Path, analysis: Analysis) -> dict[str, Any] | None:
    """The `until_ci` record of the `--until-ci` run in `folder` (W, looks, seed and models
    from its run.toml), replayed from its batch logs as the run took its looks: the same record
    after the run and in `analyze`. None for a folder whose run.toml has no `until_ci`. A run cut
    short before its design was spent says so in `reason`."""
    run_options = run_config(Path(folder))
    width, seed = run_options.get("until_ci"), run_options.get("seed", 0)
    count = run_options.get("looks")
    count = (
        count if isinstance(count, int) and not isinstance(count, bool) and count >= 1 else LOOKS
    )
    if not isinstance(width, int | float) or probe.unit_values is None or probe.value_range is None:
        return None
    logged = batch_logs(str(Path(folder) / "logs"), seed, count)
    units = analysis_units(probe, Path(folder), analysis)
    names = look_models(analysis.summary, [str(model) for model in run_options.get("models", [])])
    looks: list[dict[str, Any]] = []
    for index in range(1, max(logged, default=0) + 1):
        if not any(ran for number, ran in logged.items() if number <= index):
            looks.append(look_record(index, pd.DataFrame(columns=["unit"]), {}))
            continue
        look, narrow = take_look(units, index, names, seed, width, count, probe.value_range)
        looks.append(look)
        if narrow:
            return stopping_record(width, looks, NARROW, seed, count)
    reason = SPENT if len(looks) == count else f"{CUT_SHORT} after look {len(looks)}"
    return stopping_record(width, looks, reason, seed, count)
