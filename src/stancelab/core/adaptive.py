"""Adaptive budgets (`--until-ci W`): run a probe's units in seeded batches and stop once every
model's headline interval is narrower than W, or when the full design is spent.

The design is fixed before the run: `LOOKS` planned looks. Each unit (a MillStone issue, an
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
sizes and why the run stopped (`until_ci`)."""

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
from stancelab.core.results import RunResult, read_tables, write_summary
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
"""planned looks (batches) of an `--until-ci` run, fixed before it starts"""
ALPHA = 0.05
"""error rate of the final interval, over all looks together"""
SUMMARY_KEY = "until_ci"
METHOD = (f"fixed sequential design: {LOOKS} planned looks, each look's interval at level "
          f"1 - {ALPHA}/{LOOKS} (Bonferroni over the looks), so the interval at whichever look "
          f"the run stops covers the truth with probability at least {1 - ALPHA:.0%}")  # fmt: skip
NARROW = "narrower than W for every model"
SPENT = "full design spent"


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


def check_until_ci(probe: Probe, options: ProbeRun) -> None:
    """`--until-ci` is a positive width, on a probe that names its units, in one process."""
    width = options.until_ci
    if width is None:
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
    width: float, looks: list[dict[str, Any]], reason: str, seed: int
) -> dict[str, Any]:
    """The `until_ci` record of summary.json: the rule, every look, and why the run stopped."""
    seen = [look["units"] for look in looks]
    return {
        "width": width, "method": METHOD, "looks_planned": LOOKS, "alpha": ALPHA,
        "level": look_level(), "seed": seed, "looks": looks, "stopped_at_look": len(looks),
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
    for index in range(1, LOOKS + 1):
        batch = Batch(index, LOOKS, options.seed, probe.unit_key)
        probe.run(replace(options, shard=batch))  # type: ignore[arg-type]  # a Shard, as parse_shard takes
        if not batches_ran_samples(options.log_location(), index, options.seed):
            looks.append(look_record(index, pd.DataFrame(columns=["unit"]), {}))
            continue  # no unit in the batches so far (a small design): nothing to analyse yet
        summary, units, intervals = look_at(probe, options, index)
        looks.append(look_record(index, units, intervals))
        if is_narrow(intervals, options.until_ci):
            reason = NARROW
            break
    if summary is None:  # no batch ran a sample
        summary = probe.analyze(options.out_dir, seed=options.seed)
    summary[SUMMARY_KEY] = stopping_record(options.until_ci, looks, reason, options.seed)
    write_summary(options.out_dir, summary)
    return probe.with_differences(options.out_dir, summary, options.seed)


def look_at(
    probe: Probe, options: ProbeRun, index: int
) -> tuple[dict[str, Any], pd.DataFrame, dict[str, Estimate]]:
    """Analyse the folder: its summary, the unit values of batches 1 to `index`, and each
    model's headline interval over those units."""
    assert probe.unit_values is not None
    summary = probe.analyze(options.out_dir, seed=options.seed)
    result = RunResult(probe.name, options.out_dir, summary, read_tables(options.out_dir))
    units = units_through(probe.unit_values(result), index, options.seed)
    models = [str(model) for model in options.models]
    # a model the analysis does not list yet has no interval: the run goes on
    names = result.models if len(result.models) >= len(models) else models
    return summary, units, headline_intervals(units, names, look_level(), options.seed)


def batches_ran_samples(log_dir: str, index: int, seed: int) -> bool:
    """Whether the logs of batches 1 to `index` in `log_dir` selected any sample."""
    from inspect_ai.log import list_eval_logs, read_eval_log

    wanted = {str(Batch(number, LOOKS, seed, "")) for number in range(1, index + 1)}
    for info in list_eval_logs(log_dir, recursive=True):
        spec = read_eval_log(info, header_only=True).eval
        if shard_of_log(spec.metadata) in wanted and spec.config.sample_id:
            return True
    return False


def until_ci_text(summary: dict[str, Any]) -> str:
    """The stopping record as the CLI shows it ('' for a run without `--until-ci`)."""
    record = summary.get(SUMMARY_KEY)
    if not isinstance(record, dict):
        return ""
    level = f"{record['level']:.1%}".replace(".0%", "%")
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
