"""Running the prior-prejudice probes end to end."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog
from inspect_ai.model import Model

from stancelab.core.data.files import write_jsonl
from stancelab.core.data.topics import load_topic_map
from stancelab.core.runs.evals import ProbeRun, run_eval
from stancelab.prior_prejudice.dataset import TEMPLATES, ArgumentText, load_claims, run_claims
from stancelab.prior_prejudice.results import analyze
from stancelab.prior_prejudice.tasks import (
    JUDGE_ROLE,
    WRITER_ROLE,
    cross_task_samples,
    prior_prejudice,
    prior_prejudice_arguments,
    prior_prejudice_cross_task,
    prior_prejudice_negations,
    prior_prejudice_probe,
)

ROLES = (WRITER_ROLE, JUDGE_ROLE)
ARGUMENTS_FILE = "claims_with_arguments.jsonl"


@dataclass
class PriorPrejudiceRun(ProbeRun):
    """Options of one `stancelab run prior-prejudice`."""

    claims_file: Path | None = None
    """claims file (JSONL, or ConvinceQA CSV/JSONL; default: bundled; "contested": the
    shared-topic claims)"""
    topic_map_file: Path | None = None
    """mapping file (CSV item_id,shared_topic,orientation,note) tagging a ConvinceQA file"""
    templates: str | None = field(
        default=None, metadata={"among": TEMPLATES, "embedded": "T1,T2", "method": "all"}
    )
    """comma-separated rating templates T1,T2,T3,T4 (default all)"""
    generate_arguments: bool = field(default=True, metadata={"flag": "--no-arguments"})
    """have the writer argue for and against each claim (off: rate bare claims only)"""
    write_negations: bool = field(default=True, metadata={"flag": "--no-negations"})
    """have the writer negate claims that lack one (off: their bare delta is skipped)"""
    writer_conversation: bool = False
    """supporting harmful/misinformation arguments via the appendix A.3 conversation"""
    probe: bool = True
    """persuasion-as-probe"""
    cross_task: bool = True
    """essay/debate cross-task checks"""
    argument_tokens: int = field(
        default=400, metadata={"flag": "--max-tokens", "caps": ("writer",)}
    )
    """cap on each argument the writer writes"""
    shared_topics: str = ""
    """only claims of these shared topics ("all" or "a,b"; default claims then: contested;
    skips the group probe and cross-task checks, which have no shared topic)"""

    def topic_args(self) -> dict[str, str | None]:
        """The shared-topic selection every claims task takes."""
        return {"shared_topics": self.shared_topics,
                "topic_map": str(self.topic_map_file) if self.topic_map_file else None}  # fmt: skip


def _eval(run: PriorPrejudiceRun, task: Any, models: list[str | Model],
          shard: dict[str, Any] | None = None) -> list[EvalLog]:  # fmt: skip
    return run_eval(task, models, run.roles, run.log_location(), role_names=ROLES,
                    **run.eval_args(), **(shard or {}))  # fmt: skip


def _scores(log: EvalLog, scorer: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(sample metadata, score metadata) per sample of a log."""
    pairs = []
    for sample in log.samples or []:
        score = (sample.scores or {}).get(scorer)
        pairs.append((sample.metadata or {}, (score.metadata or {}) if score else {}))
    return pairs


def written_arguments(
    run: PriorPrejudiceRun, claims_file: Path | None
) -> dict[str, dict[str, dict[str, ArgumentText]]]:
    """Role `writer` writes the four arguments per claim (A.2, or A.3 with the option)."""
    writer = run.roles.get(WRITER_ROLE, run.models[0])
    task = prior_prejudice_arguments(claims_file=str(claims_file) if claims_file else None,
                                     limit=run.limit, max_tokens=run.argument_tokens,
                                     conversation=run.writer_conversation, **run.topic_args())  # fmt: skip
    (log,) = _eval(run, task, [writer])
    written: dict[str, dict[str, dict[str, ArgumentText]]] = {}
    for sample, metadata in _scores(log, "arguments_written"):
        for intensity, result in (metadata.get("arguments") or {}).items():
            written.setdefault(str(sample["claim_id"]), {}).setdefault(str(sample["stance"]), {})[
                intensity
            ] = ArgumentText(
                text=result.get("text"),
                refused=bool(result.get("refused")),
                writer=metadata.get("writer"),
            )
    return written


def written_negations(
    run: PriorPrejudiceRun, claims_file: Path | None
) -> dict[str, dict[str, Any]]:
    """Role `writer` negates the claims that have none: claim id -> Claim fields."""
    writer = run.roles.get(WRITER_ROLE, run.models[0])
    task = prior_prejudice_negations(claims_file=str(claims_file) if claims_file else None, limit=run.limit,
                                     **run.topic_args())  # fmt: skip
    (log,) = _eval(run, task, [writer])
    return {
        str(sample["claim_id"]): {"negation": metadata.get("negation"), "negation_refused": bool(metadata.get("refused")),
                                  "negation_writer": metadata.get("writer")}
        for sample, metadata in _scores(log, "negation_written")
    }  # fmt: skip


def prepare_claims(run: PriorPrejudiceRun) -> Path | None:
    """The claims file to rate: as given, or, where negations or arguments are missing, one
    completed by the `writer` role and saved as `claims_with_arguments.jsonl`."""
    claims = run_claims(run.claims_file, run.shared_topics, run.limit, run.topic_map_file)
    need_negations = run.write_negations and any(claim.negation is None for claim in claims)
    need_arguments = run.generate_arguments and not all(claim.has_arguments for claim in claims)
    if not (need_negations or need_arguments):
        return run.claims_file
    negations = written_negations(run, run.claims_file) if need_negations else {}
    arguments = written_arguments(run, run.claims_file) if need_arguments else {}
    completed = [
        claim.model_copy(update={**negations.get(claim.id, {}),
                                 "arguments": arguments.get(claim.id, claim.arguments)})
        for claim in claims
    ]  # fmt: skip
    return write_jsonl(run.out_dir / ARGUMENTS_FILE, completed)


def run_prior_prejudice(run: PriorPrejudiceRun) -> dict[str, Any]:
    """Run prior prejudice for every model and return the summary (also written to `out_dir`);
    for a shard, where its logs went. (`stancelab run` adds the run's record and the models'
    paired differences: `core.runs.pipeline`.)"""
    run_evals(run)
    return run.shard_result() if run.shard else analyze(run.out_dir)


def run_evals(run: PriorPrejudiceRun) -> None:
    """The ratings of every model; then, unless the run is on shared topics (whose claims the
    group probe and the cross-task items do not carry), the group probe and the cross-task
    ratings."""
    run.out_dir.mkdir(parents=True, exist_ok=True)
    claims_file = prepare_claims(run)
    claims_arg = str(claims_file) if claims_file else None
    limit = None if claims_file and claims_file.name == ARGUMENTS_FILE else run.limit
    _eval(
        run,
        prior_prejudice(
            claims_file=claims_arg, limit=limit, templates=run.templates, **run.topic_args()
        ),
        run.models,
        run.shard_args(),
    )
    if run.shared_topics.strip():
        return
    if run.probe:
        _eval(run, prior_prejudice_probe(templates=run.templates, limit=run.limit), run.models,
              run.shard_args())  # fmt: skip
    if run.cross_task and cross_task_samples(claims_arg, limit):
        _eval(run, prior_prejudice_cross_task(claims_file=claims_arg, limit=limit), run.models,
              run.shard_args())  # fmt: skip


def read_inputs(run: PriorPrejudiceRun) -> None:
    """Before a run: its claims file and topic map read and validated, the map whether or not
    the claims file is one it tags (one line when either cannot be read)."""
    if run.topic_map_file is not None:
        load_topic_map(run.topic_map_file)
    if run.claims_file is not None:
        load_claims(run.claims_file, run.topic_map_file)
