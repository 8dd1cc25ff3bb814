"""What a probe is: the one typed interface each probe package exports (its `PROBE`).

The registry of probes lives above the probe packages (`stancelab.probes`); nothing in `core`
imports a probe. A run of a probe goes through `core.runs.pipeline`, which calls the functions
below in order: `run` (its Inspect evals), `analysis` (its reading of the logs), then
`unit_values` (the paired differences) on what the analysis returned."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stancelab.core.results.family import Tested
from stancelab.core.results.summary import Analysis
from stancelab.core.runs.evals import ProbeRun
from stancelab.core.stats.compare import MeasureKind


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
    run: Callable[[Any], Any]
    """options -> run its Inspect evals into the run's log location (only the shard's samples
    when `options.shard` is set); writes no results"""
    analysis: Callable[[Path, int, Any], Analysis]
    """(folder, seed, run options or None) -> its analysis of the folder's logs (summary with
    the evidence its readers returned, and tables); writes nothing"""
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
    """run result -> its stance per model and shared topic (`core.data.topics.STANCE_COLUMNS`)"""
    demo: dict[str, Any] = field(default_factory=dict)
    """options `stancelab demo` sets (small limits)"""
    extra_task_prefixes: bool = False
    """whether tasks named `<task_prefix>_...` are this probe's too"""
    unit_sets: Callable[[Any], Any] | None = None
    """run result -> {model: the named set of units its headline rests on}, where models of
    one lens can rest on different sets (MillStone's issues); the report ranks within a set"""
    measure: MeasureKind = "continuous"
    """what `unit_values` holds per unit: a number, or one yes/no outcome at either end of its
    value range (`binary`: McNemar's test compares two models, `core.stats.compare`)"""
    unit_key: str | None = None
    """sample metadata key of the unit a sample belongs to (`--until-ci` batches whole units)"""
    prepare: Callable[[Any], None] | None = None
    """options -> check, or fetch into the cache, what the run reads besides its data files (the
    authors' published artefacts, `core.data.authors`), before anything is written or called;
    raises `core.data.authors.ArtefactsUnavailable` with one line when it cannot"""
    read_inputs: Callable[[Any], object] | None = None
    """options -> read and validate every input file the run names (its data files, a topic
    map), before anything is written or called; raises one line (`StancelabError`) when one
    cannot be read, so a run that would fail on its files leaves the folder as it was"""
    without_artefacts: dict[str, Any] = field(default_factory=dict)
    """options that run without the authors' artefacts (stancelab's own wording, labelled as not
    the paper's); `stancelab demo` takes them offline when the artefacts are not at hand"""
    tested: tuple[Tested, ...] = ()
    """the tables whose p-values the summary and the report show besides the headline's
    paired differences: adjusted with them as one family (`core.results.family`)"""
    value_range: tuple[float, float] | None = None
    """(lowest, highest) every per-unit headline value can take (`unit_values`): the bounds
    `--until-ci`'s confidence sequence needs and the worst-case spread `estimate` plans for;
    None for a headline that is not bounded"""

    def reads_task(self, task_name: str) -> bool:
        """Whether this probe's analysis reads logs of the Inspect task `task_name`."""
        base = task_name.split("/")[-1]
        return base == self.task_prefix or (
            self.extra_task_prefixes and base.startswith(self.task_prefix)
        )

    def default_out(self) -> Path:
        return Path("runs") / self.name
