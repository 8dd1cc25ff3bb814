"""Running Testing Conviction end to end."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stancelab.conviction.results import analyze
from stancelab.conviction.task import (
    DEFAULT_ARGUMENT_SETS,
    DEFAULT_SAMPLES,
    NLI_ROLE,
    WRITER_ROLE,
    conviction,
)
from stancelab.core.evals import ProbeRun, run_eval

ROLES = (NLI_ROLE, WRITER_ROLE)


@dataclass
class ConvictionRun(ProbeRun):
    statements_file: Path | None = None
    limit: int | None = None
    samples: int = DEFAULT_SAMPLES
    argument_sets: int = DEFAULT_ARGUMENT_SETS


def run_conviction(run: ConvictionRun) -> dict[str, Any]:
    run.out_dir.mkdir(parents=True, exist_ok=True)
    task = conviction(statements_file=str(run.statements_file) if run.statements_file else None,
                      limit=run.limit, argument_sets=run.argument_sets, samples=run.samples)  # fmt: skip
    run_eval(task, run.models, run.roles, run.out_dir / "logs", run.display, ROLES, **run.eval_options())
    return analyze(run.out_dir)
