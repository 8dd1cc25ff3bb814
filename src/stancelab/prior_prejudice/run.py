"""Running the prior-prejudice probes end to end."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog
from inspect_ai.model import Model

from stancelab.core.data import write_jsonl
from stancelab.core.evals import ProbeRun, run_eval
from stancelab.prior_prejudice.dataset import ArgumentText, limit_per_category, load_claims
from stancelab.prior_prejudice.results import analyze
from stancelab.prior_prejudice.tasks import (
    JUDGE_ROLE,
    WRITER_ROLE,
    cross_task_samples,
    prior_prejudice,
    prior_prejudice_arguments,
    prior_prejudice_cross_task,
    prior_prejudice_probe,
)

ROLES = (WRITER_ROLE, JUDGE_ROLE)
ARGUMENTS_FILE = "claims_with_arguments.jsonl"


@dataclass
class PriorPrejudiceRun(ProbeRun):
    """Options of one `stancelab run prior-prejudice`."""

    claims_file: Path | None = None
    limit: int | None = None
    templates: str | None = None
    generate_arguments: bool = True
    probe: bool = True
    cross_task: bool = True
    argument_tokens: int = 400


def _eval(run: PriorPrejudiceRun, task: Any, models: list[str | Model]) -> list[EvalLog]:
    return run_eval(task, models, run.roles, run.out_dir / "logs", run.display, ROLES)


def generate_arguments(run: PriorPrejudiceRun, claims_file: Path | None) -> Path:
    """Role `writer` writes the four arguments per claim; saves a claims file with them."""
    claims = limit_per_category(load_claims(claims_file), run.limit)
    writer = run.roles.get(WRITER_ROLE, run.models[0])
    task = prior_prejudice_arguments(claims_file=str(claims_file) if claims_file else None,
                                     limit=run.limit, max_tokens=run.argument_tokens)  # fmt: skip
    (log,) = _eval(run, task, [writer])
    written: dict[str, dict[str, dict[str, ArgumentText]]] = {}
    for sample in log.samples or []:
        score = (sample.scores or {}).get("arguments_written")
        metadata = score.metadata if score and score.metadata else {}
        stance = str(sample.metadata["stance"])
        for intensity, result in (metadata.get("arguments") or {}).items():
            written.setdefault(str(sample.metadata["claim_id"]), {}).setdefault(stance, {})[
                intensity
            ] = ArgumentText(
                text=result.get("text"),
                refused=bool(result.get("refused")),
                writer=metadata.get("writer"),
            )
    completed = [
        claim.model_copy(update={"arguments": written.get(claim.id, claim.arguments)})
        for claim in claims
    ]
    return write_jsonl(run.out_dir / ARGUMENTS_FILE, completed)


def run_prior_prejudice(run: PriorPrejudiceRun) -> dict[str, Any]:
    run.out_dir.mkdir(parents=True, exist_ok=True)
    claims_file = run.claims_file
    claims = limit_per_category(load_claims(claims_file), run.limit)
    if run.generate_arguments and not all(claim.has_arguments for claim in claims):
        claims_file = generate_arguments(run, claims_file)
    claims_arg = str(claims_file) if claims_file else None
    limit = None if claims_file and claims_file.name == ARGUMENTS_FILE else run.limit
    _eval(
        run,
        prior_prejudice(claims_file=claims_arg, limit=limit, templates=run.templates),
        run.models,
    )
    if run.probe:
        _eval(run, prior_prejudice_probe(templates=run.templates, limit=run.limit), run.models)
    if run.cross_task and cross_task_samples(claims_arg, limit):
        _eval(run, prior_prejudice_cross_task(claims_file=claims_arg, limit=limit), run.models)
    return analyze(run.out_dir)
