"""What a probe is: the one typed interface each probe package exports (its `PROBE`).

The registry of probes lives above the probe packages (`stancelab.probes`); nothing here
imports a probe."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stancelab.core.adaptive import SUMMARY_KEY as UNTIL_CI_KEY
from stancelab.core.adaptive import (
    check_until_ci,
    replay_until_ci,
    run_until_ci,
    until_ci_text,
)
from stancelab.core.compare import DEFAULT_ADJUSTMENT, MeasureKind, difference_records
from stancelab.core.errors import StancelabError
from stancelab.core.evals import ProbeRun
from stancelab.core.logs import evidence_text
from stancelab.core.options import RUN_CONFIG, check_run, write_config
from stancelab.core.results import SUMMARY_FILE, folder_unit_values, write_summary
from stancelab.core.shards import follow_parent, parse_shard, run_workers
from stancelab.core.startup import inspect_startup
from stancelab.core.stats import no_ci_reason

PRICES_FILE = "prices.json"


@dataclass(frozen=True)
class Probe:
    """One method: names, its Inspect tasks, its run options and every function the CLI, the
    report and the demo call on it."""

    name: str
    """CLI name, e.g. `llm-bias-bench`"""
    title: str
    """paper title"""
    lens: str
    """what the headline measures, e.g. `Sycophancy`"""
    task_prefix: str
    """Inspect task name (prefix) of the logs its analysis reads"""
    options: type[ProbeRun]
    """run options dataclass"""
    roles: tuple[str, ...]
    """helper roles (`--role ROLE=MODEL`)"""
    tasks: tuple[Callable[..., Any], ...]
    """its Inspect tasks"""
    run: Callable[[Any], dict[str, Any]]
    """run with options; returns the summary"""
    analyze: Callable[..., dict[str, Any]]
    """(out_dir, seed=) -> summary, recomputed from the logs"""
    format_summary: Callable[[dict[str, Any]], str]
    """the CLI text of a summary"""
    plan: Callable[[Any], Sequence[Any]]
    """options -> planned calls (`stancelab estimate`)"""
    profiles: Callable[[Any], Iterable[Any]]
    """run result -> headline profiles (one per model)"""
    section: Callable[[Any], Any]
    """run result -> its report section"""
    unit_values: Callable[[Any], Any] | None = None
    """run result -> per-unit headline values (for paired differences)"""
    topic_stances: Callable[[Any], Any] | None = None
    """run result -> its stance per model and shared topic (`core.topics.STANCE_COLUMNS`)"""
    demo: dict[str, Any] = field(default_factory=dict)
    """options `stancelab demo` sets (small limits)"""
    extra_task_prefixes: bool = False
    """whether tasks named `<task_prefix>_...` are this probe's too"""
    unit_sets: Callable[[Any], Any] | None = None
    """run result -> {model: the named set of units its headline rests on}, where models of
    one lens can rest on different sets (MillStone's issues); the report ranks within a set"""
    measure: MeasureKind = "continuous"
    """what `unit_values` holds per unit: a number, or one yes/no outcome at either end of its
    value range (`binary`: McNemar's test compares two models, `core.compare`)"""
    unit_key: str | None = None
    """sample metadata key of the unit a sample belongs to (`--until-ci` batches whole units)"""

    def reads_task(self, task_name: str) -> bool:
        """Whether this probe's analysis reads logs of the Inspect task `task_name`."""
        base = task_name.split("/")[-1]
        return base == self.task_prefix or (
            self.extra_task_prefixes and base.startswith(self.task_prefix)
        )

    def default_out(self) -> Path:
        return Path("runs") / self.name

    def execute(self, options: ProbeRun) -> dict[str, Any]:
        """Run with `options`, first writing them to `run.toml` in the run's folder; the
        summary gains the models' paired differences. With `workers`, N processes run a shard
        each (`core.shards`), then the folder is analysed; with `shard`, one shard runs and
        its result is only where its logs went."""
        if not isinstance(options, self.options):
            raise TypeError(
                f"{self.name} runs with {self.options.__name__}, not {type(options).__name__}"
            )
        check_parallel_options(options)
        check_until_ci(self, options)
        check_run(options)
        config = options.out_dir / RUN_CONFIG
        if not (options.shard and config.exists()):  # workers read the file their parent wrote
            write_config(self.name, options)
        write_prices(options)
        if options.until_ci is not None:
            return run_until_ci(self, options)
        if options.workers and options.workers > 1:
            # plain display: a worker's progress and errors go to its output file
            command = ["run", self.name, "--config", str(config.resolve()), "--display", "plain"]
            run_workers(command, options.workers, options.out_dir)
            return self.analyse(options.out_dir, options.seed)
        if options.shard:
            follow_parent()  # a worker of `--workers`: ends with the command that started it
            return self.run(options)
        return self.with_differences(options.out_dir, self.run(options), options.seed)

    def analyse(
        self, out_dir: Path, seed: int = 0, adjust: str = DEFAULT_ADJUSTMENT
    ) -> dict[str, Any]:
        """Recompute the summary from the logs, with the models' paired differences (p adjusted
        by `adjust`: holm or fdr_bh). An `--until-ci` run keeps its stopping record, replayed
        from its batch logs (`core.adaptive`)."""
        summary = self.analyze(out_dir, seed=seed)
        record = replay_until_ci(self, Path(out_dir), summary)
        if record is not None:
            summary[UNTIL_CI_KEY] = record
            write_summary(Path(out_dir), summary)
        return self.with_differences(Path(out_dir), summary, seed, adjust)

    def with_differences(
        self, folder: Path, summary: dict[str, Any], seed: int = 0, adjust: str = DEFAULT_ADJUSTMENT
    ) -> dict[str, Any]:
        """`summary` with `headline_differences`: each pair of models' paired difference of
        the headline over the units both share, with its CI, test, effect size and p adjusted
        over the pairs (`core.compare`); written to summary.json."""
        if self.unit_values is None or not (folder / SUMMARY_FILE).exists():
            return summary
        units = folder_unit_values(self.name, self.unit_values, folder, summary)
        summary["headline_differences"] = difference_records(units, seed, self.measure, adjust)
        write_summary(folder, summary)
        return summary


def write_prices(options: ProbeRun) -> None:
    """Keep `--price` with the run (prices.json), where the report's cost reads it."""
    if options.prices:
        prices = {model: list(price) for model, price in options.prices.items()}
        (options.out_dir / PRICES_FILE).write_text(
            json.dumps(prices, indent=2, sort_keys=True) + "\n"
        )


def with_results_path(text: str, out_dir: Path) -> str:
    return f"{text}\n\nResults: {out_dir}/summary.json, tables in {out_dir}/tables/"


def format_differences(summary: dict[str, Any]) -> str:
    """The paired differences of the headline, a line per pair of models ('' with one model):
    difference, CI, shared units, then the test with its p and adjusted p (or why none)."""
    lines = []
    for row in summary.get("headline_differences", []):
        low, high = row.get("ci_low"), row.get("ci_high")
        interval = (
            f"[{low:.3g}, {high:.3g}]"
            if low is not None and high is not None
            else no_ci_reason(row["n"], row["difference"])
        )
        value = "n/a" if row["difference"] is None else f"{row['difference']:+.3g}"
        lines.append(f"  {row['model_a']} - {row['model_b']}: {value} {interval} over {row['n']} shared units"
                     f"{_test_text(row)}")  # fmt: skip
    return "\n".join(["Headline, paired differences between models:", *lines]) if lines else ""


def _test_text(row: dict[str, Any]) -> str:
    """'; exact McNemar p=0.03, holm-adjusted p=0.06', or the note saying why there is no test."""
    if row.get("p") is None:
        return f"; {row['test_note']}" if row.get("test_note") else ""
    adjusted = row.get("p_adjusted")
    text = f"; {row['test']} p={row['p']:.3g}"
    return text + (
        f", {row['adjustment']}-adjusted p={adjusted:.3g}" if adjusted is not None else ""
    )


def summary_text(probe: Probe, summary: dict[str, Any]) -> str:
    """A probe's CLI summary, what its read of the logs left out ("2 interrupted logs
    ignored", "shards 2-4 of 4 missing: partial"), then the models' paired differences."""
    parts = (probe.format_summary(summary), evidence_text(summary), until_ci_text(summary),
             format_differences(summary))  # fmt: skip
    return "\n\n".join(part for part in parts if part)


def run_probe(probe: Probe, options: ProbeRun) -> str:
    """Run a probe with its options (writing run.toml); its summary and where results went
    (for a shard, where its logs went). Inspect's start-up errors name the model."""
    with inspect_startup(options.models, options.roles):
        result = probe.execute(options)
    if options.shard:
        return (f"Shard {result['shard']} done: logs in {result['log_dir']}. Once every shard "
                f"is done, analyse the folder: stancelab analyze {options.out_dir} (copy an "
                f"object-store location to {options.out_dir}/logs first).")  # fmt: skip
    return with_results_path(summary_text(probe, result), options.out_dir)


def check_parallel_options(options: ProbeRun) -> None:
    """`--workers`, `--shard` and `--log-dir` go together only as they can."""
    if options.workers is not None and options.workers < 1:
        raise StancelabError("--workers must be at least 1.")
    if options.workers and options.workers > 1 and options.shard:
        raise StancelabError("Give --workers (shards run here) or --shard (one shard), not both.")
    if (
        options.workers
        and options.workers > 1
        and any(not isinstance(m, str) for m in options.models)
    ):
        raise StancelabError(
            "--workers needs models named by string (each worker resolves its own)."
        )
    if options.log_dir and not options.shard:
        raise StancelabError("--log-dir is for --shard runs; a whole run logs to OUT/logs.")
    parse_shard(options.shard)
