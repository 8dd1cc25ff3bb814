"""Running Testing Conviction end to end."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from stancelab.conviction.dataset import load_statements
from stancelab.conviction.results import analyze
from stancelab.conviction.task import (
    DEFAULT_ARGUMENT_SETS,
    DEFAULT_SAMPLES,
    JUDGE_ROLE,
    NLI_ROLE,
    WRITER_ROLE,
    conviction,
)
from stancelab.core.runs.evals import ProbeRun, run_eval

ROLES = (NLI_ROLE, WRITER_ROLE, JUDGE_ROLE)


@dataclass
class ConvictionRun(ProbeRun):
    """Options of one `stancelab run conviction`."""

    statements_file: Path | None = None
    """statements (JSONL or CSV; default: bundled)"""
    samples: int = field(default=DEFAULT_SAMPLES, metadata={"minimum": 0, "embedded": 3})
    """sampled answers per statement for the entropies (0: none)"""
    argument_sets: int = field(default=DEFAULT_ARGUMENT_SETS, metadata={"embedded": 1})
    """argument sets per statement"""
    shared_topics: str = ""
    """only statements of these shared topics ("all" or "a,b"; default set then: topics)"""
    opinion_per_set: bool = False
    """each argument set after the first reads its own opinion (fresh answer, temperature 1)"""
    clustering: Literal["strict", "non-strict"] = "strict"
    """semantic-entropy clusters: strict bidirectional entailment (Farquhar et al.'s default), or their non-strict variant"""
    persona_judge: bool = False
    """ask role judge the F.2 question (true / pretend leftist / rightist) of each persona answer"""


def run_conviction(run: ConvictionRun) -> dict[str, Any]:
    """Run Conviction for every model and return the summary (also written to `out_dir`); for a
    shard, where its logs went. (`stancelab run` adds the run's record and the models' paired
    differences: `core.runs.pipeline`.)"""
    run_evals(run)
    return run.shard_result() if run.shard else analyze(run.out_dir)


def run_evals(run: ConvictionRun) -> None:
    """Conviction's eval for every model."""
    run.out_dir.mkdir(parents=True, exist_ok=True)
    task = conviction(statements_file=str(run.statements_file) if run.statements_file else None,
                      limit=run.limit, argument_sets=run.argument_sets, samples=run.samples,
                      shared_topics=run.shared_topics, opinion_per_set=run.opinion_per_set,
                      clustering=run.clustering, persona_judge=run.persona_judge)  # fmt: skip
    run_eval(
        task,
        run.models,
        run.roles,
        run.log_location(),
        role_names=ROLES,
        **run.eval_args(),
        **run.shard_args(),
    )


def read_inputs(run: ConvictionRun) -> None:
    """Before a run: its statements file read and validated (one line when it cannot be)."""
    if run.statements_file is not None:
        load_statements(run.statements_file)
