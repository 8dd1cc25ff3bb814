"""Adaptive budgets (`--until-ci W`): run a probe's units in seeded batches and stop once every
model's headline interval is narrower than W, or when the full design is spent.

The design is fixed before the run: K planned looks (`--looks`, default `LOOKS`). Each unit (a MillStone issue, an
llm-bias-bench topic, a Conviction statement, a prior-prejudice claim, an IssueBench issue, an
even-handedness stance pair: the sample metadata key `Probe.unit_key` names it) gets a seeded
position in [0, 1) from a hash of the seed and its id; batch k of K holds the units whose
position lies in [(k-1)/K, k/K), so a unit's samples are never split between batches, and the
batches come in an order fixed by the seed alone. A batch runs through Inspect's sample
selection into the run's log folder as a shard (`core.shards`) named `until-ci batch k/K ...`
in the log's metadata, so batches add up in the analysis (`core.logs`), and a re-run skips the
batches that finished and resumes the others from Inspect's cache: no call is paid twice.

After each batch the folder is analysed, and each model's headline (the mean of its per-unit
values, `Probe.unit_values`, over the units run so far) gets an interval over units
(`core.stats`) at level 1 - alpha/K. By Bonferroni's inequality over the K planned looks, the
chance that any look's interval misses the truth is at most alpha, so the interval reported at
whichever look the run stops is valid at 1 - alpha whatever the stopping (a fixed sequential
design; conservative). The summary records the rule, the looks, the widths seen, the batch
sizes and why the run stopped (`until_ci`). `stancelab analyze` replays the looks from the
folder's run.toml (W, seed) and its batch logs, so a re-analysis keeps the same record."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pandas as pd

from stancelab.core.compare import VALUE_RANGE
from stancelab.core.errors import StancelabError
from stancelab.core.evals import ProbeRun, json_safe
from stancelab.core.options import RUN_CONFIG, read_config
from stancelab.core.results import folder_unit_values, write_summary
from stancelab.core.shards import BATCH_PREFIX, Shard, shard_of_log
from stancelab.core.stats import Estimate, bootstrap_ci, bounded_cluster_ci


class Probe(Protocol):
    """What `--until-ci` calls on a probe (`core.probes.Probe`, which imports this module)."""

    name: str
    unit_key: str | None
    unit_values: Callable[[Any], Any] | None
    run: Callable[[Any], dict[str, Any]]
    analyze: Callable[..., dict[str, Any]]

    def with_differences(
        self, folder: Path, summary: dict[str, Any], seed: int = 0
    ) -> dict[str, Any]: ...


LOOKS = 5
"""planned looks (batches) of an `--until-ci` run without `--looks`, fixed before it starts"""
ALPHA = 0.05
"""error rate of the final interval, over all looks together"""
SUMMARY_KEY = "until_ci"


def method_text(count: int = LOOKS) -> str:
    """The stopping rule of a design of `count` looks, as the summary states it."""
    return (f"fixed sequential design: {count} planned looks, each look's interval at level "
            f"1 - {ALPHA}/{count} (Bonferroni over the looks), so the interval at whichever look "
            f"the run stops covers the truth with probability at least {1 - ALPHA:.0%}")  # fmt: skip


METHOD = method_text()
NARROW = "narrower than W for every model"
SPENT = "full design spent"
CUT_SHORT = "cut short before the design was spent"


def look_level(looks: int = LOOKS, alpha: float = ALPHA) -> float:
    """The confidence level of each look's interval: 1 - alpha / looks."""
    return 1 - alpha / looks


def unit_position(unit: object, seed: int) -> float:
    """A unit's seeded place in [0, 1): the first 8 bytes of SHA-256 of `seed:unit`."""
    digest = hashlib.sha256(f"{seed}:{unit}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


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


def units_through(units: pd.DataFrame, index: int, seed: int, count: int = LOOKS) -> pd.DataFrame:
    """The rows of `units` in batches 1 to `index`: a look reads no later batch, even where the
    folder holds one already (a re-run with another W, or a whole run before)."""
    positions = units["unit"].map(lambda unit: unit_position(unit, seed))
    kept = units[(positions < index / count).to_numpy(dtype=bool)]
    kept.attrs = units.attrs
    return kept


def headline_intervals(
    units: pd.DataFrame, models: list[str], level: float, seed: int
) -> dict[str, Estimate]:
    """Each model's headline as the mean of its per-unit values, with an interval over units at
    `level` (bounded by the probe's value range where it states one); NaN for a model without
    units yet."""
    value_range = units.attrs.get(VALUE_RANGE)
    intervals = {}
    for model in models:
        rows = units[(units["model"].astype(str) == model)].dropna(subset=["value"])
        means = rows.groupby("unit")["value"].mean()
        if value_range is None:
            intervals[model] = bootstrap_ci(means.to_numpy(dtype=float), level=level, seed=seed)
        else:
            intervals[model] = bounded_cluster_ci(means.to_numpy(dtype=float), means.index.to_numpy(), *value_range,
                                                  level=level, seed=seed)  # fmt: skip
    return intervals


def width_of(estimate: Estimate) -> float:
    return estimate.ci_high - estimate.ci_low


def is_narrow(intervals: dict[str, Estimate], width: float) -> bool:
    """Whether every model has an interval narrower than `width` (none: not narrow)."""
    return bool(intervals) and all(width_of(e) < width for e in intervals.values())


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
        "width": width, "method": method_text(count), "looks_planned": count, "alpha": ALPHA,
        "level": look_level(count), "seed": seed, "looks": looks, "stopped_at_look": len(looks),
        "reason": reason, "batch_units": [b - a for a, b in zip([0, *seen], seen, strict=False)],
        "headline": looks[-1]["headline"] if looks else {},
    }  # fmt: skip


def run_until_ci(probe: Probe, options: ProbeRun) -> dict[str, Any]:
    """Run `probe` batch by batch until every model's headline interval is narrower than
    `options.until_ci` or the last planned batch has run; the summary of every batch's logs,
    with the stopping record under `until_ci` and the paired differences."""
    assert (
        options.until_ci is not None
        and probe.unit_key is not None
        and probe.unit_values is not None
    )
    looks: list[dict[str, Any]] = []
    summary: dict[str, Any] | None = None
    reason = SPENT
    count = planned_looks(options)
    for index in range(1, count + 1):
        batch = Batch(index, count, options.seed, probe.unit_key)
        probe.run(replace(options, shard=batch))  # type: ignore[arg-type]  # a Shard, as parse_shard takes
        if not batches_ran_samples(options.log_location(), index, options.seed, count):
            looks.append(look_record(index, pd.DataFrame(columns=["unit"]), {}))
            continue  # no unit in the batches so far (a small design): nothing to analyse yet
        summary = probe.analyze(options.out_dir, seed=options.seed)
        units = run_units(probe, options.out_dir, summary)
        names = look_models(summary, [str(model) for model in options.models])
        look, narrow = take_look(units, index, names, options.seed, options.until_ci, count)
        looks.append(look)
        if narrow:
            reason = NARROW
            break
    if summary is None:  # no batch ran a sample
        summary = probe.analyze(options.out_dir, seed=options.seed)
    summary[SUMMARY_KEY] = stopping_record(options.until_ci, looks, reason, options.seed, count)
    write_summary(options.out_dir, summary)
    return probe.with_differences(options.out_dir, summary, options.seed)


def run_units(probe: Probe, folder: Path, summary: dict[str, Any]) -> pd.DataFrame:
    """The per-unit headline values of every model in the folder's analysis."""
    assert probe.unit_values is not None
    return folder_unit_values(probe.name, probe.unit_values, folder, summary)


def look_models(summary: dict[str, Any], run_models: list[str]) -> list[str]:
    """The models a look gives an interval: the analysis's, or the run's while the analysis
    lists fewer (a model without units yet has no interval, so the run goes on)."""
    analysed = [str(model) for model in summary.get("models", [])]
    return analysed if len(analysed) >= len(run_models) else run_models


def take_look(
    units: pd.DataFrame, index: int, models: list[str], seed: int, width: float, count: int
) -> tuple[dict[str, Any], bool]:
    """Look `index` of `count` at `units` (every batch's): the record of batches 1 to `index`
    with each model's headline interval over their units, and whether every interval is
    narrower than `width`."""
    kept = units_through(units, index, seed, count)
    intervals = headline_intervals(kept, models, look_level(count), seed)
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
        spec = read_eval_log(info, header_only=True).eval
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


def replay_until_ci(probe: Probe, folder: Path, summary: dict[str, Any]) -> dict[str, Any] | None:
    """The `until_ci` record of the `--until-ci` run in `folder` (W, looks, seed and models
    from its run.toml), replayed from its batch logs as the run took its looks: the same record, so
    `analyze` keeps the valid interval and the stopping rule. None for a folder whose run.toml
    has no `until_ci`. A run cut short before its design was spent says so in `reason`."""
    run_options = run_config(Path(folder))
    width, seed = run_options.get("until_ci"), run_options.get("seed", 0)
    count = run_options.get("looks")
    count = (
        count if isinstance(count, int) and not isinstance(count, bool) and count >= 1 else LOOKS
    )
    if not isinstance(width, int | float) or probe.unit_values is None:
        return None
    logged = batch_logs(str(Path(folder) / "logs"), seed, count)
    units = run_units(probe, Path(folder), summary)
    names = look_models(summary, [str(model) for model in run_options.get("models", [])])
    looks: list[dict[str, Any]] = []
    for index in range(1, max(logged, default=0) + 1):
        if not any(ran for number, ran in logged.items() if number <= index):
            looks.append(look_record(index, pd.DataFrame(columns=["unit"]), {}))
            continue
        look, narrow = take_look(units, index, names, seed, width, count)
        looks.append(look)
        if narrow:
            return stopping_record(width, looks, NARROW, seed, count)
    reason = SPENT if len(looks) == count else f"{CUT_SHORT} after look {len(looks)}"
    return stopping_record(width, looks, reason, seed, count)


def level_text(level: float) -> str:
    """A confidence level as a percentage: 0.99 -> '99%', 0.9875 -> '98.8%'."""
    return f"{level:.1%}".replace(".0%", "%")


def adjusted_interval_texts(summary: dict[str, Any]) -> dict[str, str]:
    """model -> its headline at the stop with the interval valid despite the stopping, as the
    report shows it beside the 95% one ({} for a run without `--until-ci`)."""
    record = summary.get(SUMMARY_KEY)
    if not isinstance(record, dict):
        return {}
    texts = {}
    for model, row in record["headline"].items():
        low, high = row.get("ci_low"), row.get("ci_high")
        interval = f"[{low:.3g}, {high:.3g}]" if low is not None and high is not None else "none"
        value = "n/a" if row.get("value") is None else f"{row['value']:.3g}"
        texts[model] = (f"--until-ci: mean over {row.get('n', 0)} units {value}, "
                        f"{level_text(record['level'])} interval {interval}")  # fmt: skip
    return texts


def stopping_note(summary: dict[str, Any]) -> str:
    """One line for the report: the 95% intervals do not account for the stopping ('' for a
    run without `--until-ci`)."""
    record = summary.get(SUMMARY_KEY)
    if not isinstance(record, dict):
        return ""
    return (f"Run with --until-ci {record['width']:g}, stopped at look {record['stopped_at_look']} "
            f"of {record['looks_planned']} ({record['reason']}): the 95% intervals do not account "
            f"for the stopping; the {level_text(record['level'])} interval beside each headline "
            f"does (Bonferroni over the {record['looks_planned']} looks).")  # fmt: skip


def until_ci_text(summary: dict[str, Any]) -> str:
    """The stopping record as the CLI shows it ('' for a run without `--until-ci`)."""
    record = summary.get(SUMMARY_KEY)
    if not isinstance(record, dict):
        return ""
    level = level_text(record["level"])
    lines = [
        f"--until-ci {record['width']:g}: stopped at look {record['stopped_at_look']} of "
        f"{record['looks_planned']} ({record['reason']}); units per batch "
        f"{', '.join(map(str, record['batch_units']))}.",
        f"Headline valid despite the stopping, the mean over units with its {level} interval "
        f"({record['method']}); the 95% intervals above take no account of the stopping:",
    ]
    for model, row in record["headline"].items():
        low, high = row.get("ci_low"), row.get("ci_high")
        value = "n/a" if row.get("value") is None else f"{row['value']:.3g}"
        measured = low is not None and high is not None
        interval = f"[{low:.3g}, {high:.3g}], width {high - low:.3g}," if measured else "no CI"
        lines.append(f"  {model}: {value} {interval} over {row.get('n', 0)} units")
    return "\n".join(lines)


def units_in_batches(unit_ids: list[object], seed: int, count: int = LOOKS) -> list[int]:
    """How many of `unit_ids` each of `count` batches holds (for planning and the benchmark)."""
    positions = np.array([unit_position(unit, seed) for unit in unit_ids])
    return [int(np.count_nonzero((positions >= (k - 1) / count) & (positions < k / count)))
            for k in range(1, count + 1)]  # fmt: skip
