"""A probe run as one straight pipeline: validate -> plan -> execute -> analyse -> compare -> write.

Each stage is entered once, in that order:

1. validate: every check of the options that needs no model call (values, providers, input
   files, the output folder, how `--workers`, `--shard`, `--log-dir` and `--until-ci` go
   together), the authors' artefacts the run reads at hand (`Probe.prepare`) and its input
   files read (`Probe.read_inputs`): a run that stops here writes nothing (not run.toml).
2. plan: how the evals run, one `Strategy` of four (in this process; one shard; N worker
   processes of a shard each; `--until-ci`'s seeded batches), and the run's record in its
   folder (run.toml, prices.json).
3. execute: the strategy runs the probe's Inspect evals (`Probe.run`) into the log
   location; nothing else is written.
4. analyse: the probe's analysis of every log in the folder that counts (`Probe.analysis`),
   in memory: summary, tables and the evidence its readers returned, plus the stopping record
   of an `--until-ci` run (replayed from run.toml and the batch logs).
5. compare: each pair of models' paired difference of the headline (`core.stats.compare`),
   from the per-unit values of the tables as they will be written.
6. write: tables/*.csv and summary.json, once.

A shard ends after execute (a shard alone is not analysed: its folder is, once every shard is
done). `stancelab analyze` and the report enter at analyse (`reanalyse`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from stancelab.core.errors import StancelabError
from stancelab.core.probe import Probe
from stancelab.core.results.evidence import with_unreadable
from stancelab.core.results.family import (
    FAMILY_KEY,
    Part,
    adjust_parts,
    family_record,
    frame_records,
)
from stancelab.core.results.logs import unreadable_logs
from stancelab.core.results.store import check_copy, check_location, is_url, mirror_logs
from stancelab.core.results.summary import (
    Analysis,
    analysis_unit_values,
    analysis_unmeasured,
    write_results,
)
from stancelab.core.results.text import UNTIL_CI_KEY, summary_text, with_results_path
from stancelab.core.runs.caps import (
    CAPS_KEY,
    caps_line,
    caps_record,
    caps_toml,
    design_in_force,
    design_line,
    embedded_caps,
    embedded_players,
    read_caps,
)
from stancelab.core.runs.evals import ProbeRun
from stancelab.core.runs.options import RUN_CONFIG, check_run, write_config
from stancelab.core.runs.rate_limit import RateLimit
from stancelab.core.runs.shard_sets import merge_shard_sets
from stancelab.core.runs.shards import (
    LARGE_RUN_CALLS,
    WorkersChoice,
    available_memory,
    cpu_count,
    default_workers,
    follow_parent,
    parse_shard,
    run_workers,
)
from stancelab.core.runs.startup import inspect_startup
from stancelab.core.runs.until_ci import check_until_ci, replay_until_ci, run_batches
from stancelab.core.stats.compare import DEFAULT_ADJUSTMENT, paired_differences

PRICES_FILE = "prices.json"


# ---------------------------------------------------------------- 1. validate


def validate(probe: Probe, options: ProbeRun) -> None:
    """Every check that needs no model call, the authors' artefacts the run reads fetched or
    checked, and its input files read; raises before anything is written."""
    if not isinstance(options, probe.options):
        raise TypeError(
            f"{probe.name} runs with {probe.options.__name__}, not {type(options).__name__}"
        )
    check_parallel_options(options)
    check_until_ci(probe, options)
    check_run(options)
    if probe.prepare is not None:
        probe.prepare(options)
    if probe.read_inputs is not None:
        probe.read_inputs(options)


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
    remote = bool(options.log_dir) and is_url(str(options.log_dir))
    if options.log_dir and not options.shard and not remote:
        raise StancelabError("--log-dir is for --shard runs, or an object store (s3://bucket/"
                             "prefix); a whole run logs to OUT/logs.")  # fmt: skip
    if remote and options.until_ci is not None:
        raise StancelabError("--until-ci analyses the logs after each batch: it runs into "
                             "OUT/logs, not an object store (--log-dir).")  # fmt: skip
    parse_shard(options.shard)
    if remote:
        check_location(str(options.log_dir))
        if not options.shard:  # its logs will be copied to OUT/logs for the analysis
            check_copy(str(options.log_dir), options.out_dir)


# ---------------------------------------------------------------- 2. plan


class Strategy(Protocol):
    """How a run's evals are executed."""

    analysed: bool
    """whether the run's folder is analysed after them (not for a shard alone)"""

    def execute(self, probe: Probe, options: ProbeRun) -> None: ...


@dataclass(frozen=True)
class InProcess:
    """Every sample in this process."""

    analysed: bool = True

    def execute(self, probe: Probe, options: ProbeRun) -> None:
        probe.run(options)


@dataclass(frozen=True)
class OneShard:
    """One shard's samples (`--shard I/N`, or a worker of `--workers`); its logs are the result."""

    analysed: bool = False

    def execute(self, probe: Probe, options: ProbeRun) -> None:
        worker = follow_parent()  # a worker of `--workers`: ends with the command that started it
        probe.run(options)
        if not worker:  # the last shard to finish merges its set (`--workers`: the command)
            merge_shard_sets(options.log_location())


@dataclass(frozen=True)
class Workers:
    """N worker processes, one shard each, each repeating the run from its run.toml."""

    count: int
    config: Path
    analysed: bool = True

    def execute(self, probe: Probe, options: ProbeRun) -> None:
        # plain display: a worker's progress and errors go to its output file
        command = ["run", probe.name, "--config", str(self.config.resolve()), "--display", "plain"]
        run_workers(command, self.count, options.out_dir)


@dataclass(frozen=True)
class UntilCI:
    """`--until-ci W`: seeded batches of whole units, a look after each (`core.runs.until_ci`)."""

    analysed: bool = True

    def execute(self, probe: Probe, options: ProbeRun) -> None:
        run_batches(probe, options)


def plan(probe: Probe, options: ProbeRun) -> Strategy:
    """The run's record in its folder (run.toml: the options; prices.json: `--price`) and the
    strategy its evals run by. A shard whose folder has a run.toml keeps it (workers read the
    file their parent wrote)."""
    config = options.out_dir / RUN_CONFIG
    design = design_in_force(options)
    caps = caps_record(embedded_caps(options),
                       embedded_players(options.models, options.roles, probe.roles), design)  # fmt: skip
    if caps is not None:
        print(caps_line(caps), flush=True)
    if design:
        print(design_line(options, design), flush=True)
    if not (options.shard and config.exists()):
        write_config(probe.name, options, caps_toml(caps) if caps else "")
    write_prices(options)
    if options.batch and not options.shard:
        print(batch_header(probe, options), flush=True)
    strategy = choose_strategy(probe, options, config)
    if options.rpm is not None:  # a shard's share: its N; a run with workers: theirs
        processes = options.shard_count() if options.shard else getattr(strategy, "count", 1)
        print(RateLimit(options.rpm, processes).header(), flush=True)
    return strategy


def choose_strategy(probe: Probe, options: ProbeRun, config: Path) -> Strategy:
    """How the run's evals run: `--until-ci` batches, N workers, one shard, or this process."""
    if options.until_ci is not None:
        return UntilCI()
    if options.workers and options.workers > 1:
        return Workers(options.workers, config)
    if options.shard:
        return OneShard()
    if options.workers is None:
        choice, calls = choose_workers(probe, options)
        print(f"{probe.title}: {choice.header(calls)}", flush=True)
        if choice.count > 1:
            return Workers(choice.count, config)
    return InProcess()


def batch_header(probe: Probe, options: ProbeRun) -> str:
    """The run's header under `--batch`: its price and which calls wait one on another."""
    from stancelab.core.runs.estimate import batch_lines, plan_frame, price_lines

    models = [str(model) for model in options.models]
    roles = {role: str(model) for role, model in options.roles.items()}
    frame = plan_frame(list(probe.plan(options)), models, options.prices, roles, batch=True)
    return "\n".join([*price_lines(sorted(set(frame["model"])), options.prices, batch=True),
                      *batch_lines(frame)])  # fmt: skip


def choose_workers(probe: Probe, options: ProbeRun) -> tuple[WorkersChoice, int | None]:
    """The processes of a whole run without `--workers` (`shards.default_workers`) and its
    planned calls (None when not needed for the choice: the plan is read only then)."""
    models = [*options.models, *options.roles.values()]
    cores, memory = cpu_count(), available_memory()
    choice = default_workers(LARGE_RUN_CALLS, models, cores, memory)
    if choice.count == 1:  # one process whatever the plan
        return choice, None
    calls = planned_calls(probe, options)
    return default_workers(calls, models, cores, memory), calls


def planned_calls(probe: Probe, options: ProbeRun) -> int | None:
    """The most calls the run plans (every subject model, every role), None if not known."""
    try:
        plans = probe.plan(options)
    except Exception:  # a plan it cannot make costs the run nothing but workers
        return None
    return len(options.models) * sum(int(plan.calls_max) for plan in plans)


def write_prices(options: ProbeRun) -> None:
    """Keep `--price` with the run (prices.json), where the report's cost reads it."""
    if options.prices:
        prices = {model: list(price) for model, price in options.prices.items()}
        (options.out_dir / PRICES_FILE).write_text(
            json.dumps(prices, indent=2, sort_keys=True) + "\n"
        )


# ---------------------------------------------------------------- 4. analyse


def analyse(probe: Probe, folder: Path, seed: int, options: ProbeRun | None = None) -> Analysis:
    """The probe's analysis of the folder's logs (with the run's options, or None when the
    folder is analysed on its own), with the stopping record of an `--until-ci` run; files
    among the logs that are no readable log are named in its evidence, which is then partial."""
    merge_shard_sets(str(folder / "logs"))  # shard sets finished since their last shard ran
    analysis = probe.analysis(folder, seed, options)
    caps = read_caps(folder / RUN_CONFIG)
    if caps is not None:
        analysis.summary[CAPS_KEY] = caps.model_dump()
    evidence = analysis.summary.get("evidence")
    if isinstance(evidence, dict):  # whatever its readers saw, every damaged file is named
        with_unreadable(evidence, unreadable_logs(folder / "logs"))
    record = replay_until_ci(probe, folder, analysis)
    if record is not None:
        analysis.summary[UNTIL_CI_KEY] = record
    return analysis


# ---------------------------------------------------------------- 5. compare


def compare(
    probe: Probe, folder: Path, analysis: Analysis, seed: int, adjust: str = DEFAULT_ADJUSTMENT
) -> None:
    """Add `headline_differences` to the summary (each pair of models' paired difference of the
    headline over the units both share, with its CI, test and effect size), and adjust its p
    and those of the probe's tested tables (`Probe.tested`) by `adjust` (holm or fdr_bh) as one
    family (`core.results.family`), recorded as `p_family`."""
    headline = None
    if probe.unit_values is not None:
        units = analysis_unit_values(probe.name, probe.unit_values, folder, analysis)
        if units is not None and not units.empty and units["model"].nunique() >= 2:
            unmeasured = analysis_unmeasured(probe.name, probe.profiles, folder, analysis)
            headline = paired_differences(units, seed, probe.measure, adjust, unmeasured)
    (adjusted,) = adjust_parts([Part(headline, analysis.tables, probe.tested)], adjust)
    analysis.tables.update(adjusted.tables)
    for spec in probe.tested:
        if spec.summarise is not None and spec.table in adjusted.tables:
            spec.summarise(analysis.summary, adjusted.tables[spec.table])
    if probe.unit_values is not None:
        analysis.summary["headline_differences"] = frame_records(adjusted.headline)
    if sum(adjusted.sizes.values()):
        analysis.summary[FAMILY_KEY] = family_record(adjust, adjusted.sizes)


# ---------------------------------------------------------------- the pipeline


def run_pipeline(probe: Probe, options: ProbeRun) -> dict[str, Any]:
    """Run a probe with its options through every stage; the summary written, or for a shard
    where its logs went."""
    validate(probe, options)
    strategy = plan(probe, options)
    strategy.execute(probe, options)
    if not strategy.analysed:
        return options.shard_result()
    if options.log_dir and is_url(options.log_dir):  # read as a folder: its logs copied to OUT/logs
        print(mirror_logs(options.log_dir, options.out_dir).line(), flush=True)
    return finish(probe, options.out_dir, options.seed, options)


def reanalyse(
    probe: Probe, folder: Path, seed: int = 0, adjust: str = DEFAULT_ADJUSTMENT
) -> dict[str, Any]:
    """Analyse a run folder's logs again (`stancelab analyze`, the report): the stages from
    analyse on; an `--until-ci` run keeps its stopping record."""
    return finish(probe, Path(folder), seed, None, adjust)


def finish(
    probe: Probe,
    folder: Path,
    seed: int,
    options: ProbeRun | None,
    adjust: str = DEFAULT_ADJUSTMENT,
) -> dict[str, Any]:
    """Analyse, compare, write: the summary written to the folder."""
    analysis = analyse(probe, folder, seed, options)
    compare(probe, folder, analysis, seed, adjust)
    write_results(folder, analysis)
    return analysis.summary


def run_probe(probe: Probe, options: ProbeRun) -> str:
    """Run a probe with its options; its summary and where results went, as the CLI prints them
    (for a shard, where its logs went). Inspect's start-up errors name the model."""
    with inspect_startup(options.models, options.roles):
        result = run_pipeline(probe, options)
    if options.shard:
        location = result["log_dir"] if is_url(result["log_dir"]) else options.out_dir
        return (f"Shard {result['shard']} done: logs in {result['log_dir']}. Once every shard "
                f"is done, analyse them: stancelab analyze {location}")  # fmt: skip
    return with_results_path(summary_text(probe, result), options.out_dir)
