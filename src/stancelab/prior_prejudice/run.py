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


def _eval(run: PriorPrejudiceRun, tasks: Any | list[Any], models: list[str | Model],
          shard: dict[str, Any] | None = None) -> list[EvalLog]:  # fmt: skip
    """A task, or tasks side by side (one Inspect eval), for the models."""
    return run_eval(tasks, models, run.roles, run.log_location(), role_names=ROLES,
                    **run.eval_args(), **(shard or {}))  # fmt: skip


def _scores(log: EvalLog, scorer: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(sample metadata, score metadata) per sample of a log."""
    pairs = []
    for sample in log.samples or []:
        score = (sample.scores or {}).get(scorer)
        pairs.append((sample.metadata or {}, (score.metadata or {}) if score else {}))
    return pairs


def writer_model(run: PriorPrejudiceRun) -> str | Model:
    """The model that plays `writer`: its role's, else the first subject's."""
    return run.roles.get(WRITER_ROLE, run.models[0])


def writer_tasks(run: PriorPrejudiceRun) -> dict[str, Any]:
    """The writer's tasks the claims need (by scorer: `negation_written`,
    `arguments_written`): negations where a claim lacks one, arguments where a claim lacks
    them (each as the options allow)."""
    claims = run_claims(run.claims_file, run.shared_topics, run.limit, run.topic_map_file)
    claims_arg = str(run.claims_file) if run.claims_file else None
    tasks: dict[str, Any] = {}
    if run.write_negations and any(claim.negation is None for claim in claims):
        tasks["negation_written"] = prior_prejudice_negations(
            claims_file=claims_arg, limit=run.limit, **run.topic_args()
        )
    if run.generate_arguments and not all(claim.has_arguments for claim in claims):
        tasks["arguments_written"] = prior_prejudice_arguments(
            claims_file=claims_arg, limit=run.limit, max_tokens=run.argument_tokens,
            conversation=run.writer_conversation, **run.topic_args())  # fmt: skip
    return tasks


def written_arguments(log: EvalLog) -> dict[str, dict[str, dict[str, ArgumentText]]]:
    """The four arguments per claim role `writer` wrote (A.2, or A.3 with the option):
    claim id -> stance -> intensity -> argument."""
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


def written_negations(log: EvalLog) -> dict[str, dict[str, Any]]:
    """The negations role `writer` wrote for the claims that had none: claim id -> Claim
    fields."""
    return {
        str(sample["claim_id"]): {"negation": metadata.get("negation"), "negation_refused": bool(metadata.get("refused")),
                                  "negation_writer": metadata.get("writer")}
        for sample, metadata in _scores(log, "negation_written")
    }  # fmt: skip


def completed_claims(run: PriorPrejudiceRun, written: dict[str, EvalLog]) -> Path | None:
    """The claims file to rate: as given, or, where the writer completed negations or
    arguments (`written`: its logs by scorer), one saved as `claims_with_arguments.jsonl`."""
    if not written:
        return run.claims_file
    claims = run_claims(run.claims_file, run.shared_topics, run.limit, run.topic_map_file)
    negation_log, arguments_log = written.get("negation_written"), written.get("arguments_written")
    negations = written_negations(negation_log) if negation_log else {}
    arguments = written_arguments(arguments_log) if arguments_log else {}
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


def group_probe(run: PriorPrejudiceRun) -> Any | None:
    """The group probe's task, unless it is off or the run is on shared topics (whose claims
    the group probe does not carry)."""
    if not run.probe or run.shared_topics.strip():
        return None
    return prior_prejudice_probe(templates=run.templates, limit=run.limit)


def run_evals(run: PriorPrejudiceRun) -> None:
    """Two rounds of evals, each of tasks side by side: the writer's negations and arguments
    where the claims lack them (and the group probe, which needs nothing written, where it
    runs on the writer's model as a whole run); then the ratings of every model of the claims so completed and, unless the
    run is on shared topics, the group probe (if not run yet) and the cross-task ratings."""
    run.out_dir.mkdir(parents=True, exist_ok=True)
    writing = writer_tasks(run)
    probe = group_probe(run)
    probe_first = (probe is not None and bool(writing) and run.shard is None
                   and [writer_model(run)] == run.models)  # fmt: skip
    first = [*writing.values(), *([probe] if probe_first else [])]
    logs = _eval(run, first, [writer_model(run)]) if first else []
    by_task = {log.eval.task: log for log in logs}
    claims_file = completed_claims(
        run, {scorer: by_task[task.name] for scorer, task in writing.items()}
    )
    claims_arg = str(claims_file) if claims_file else None
    limit = None if claims_file and claims_file.name == ARGUMENTS_FILE else run.limit
    tasks = [prior_prejudice(claims_file=claims_arg, limit=limit, templates=run.templates,
                             **run.topic_args())]  # fmt: skip
    if probe is not None and not probe_first:
        tasks.append(probe)
    if not run.shared_topics.strip() and run.cross_task and cross_task_samples(claims_arg, limit):
        tasks.append(prior_prejudice_cross_task(claims_file=claims_arg, limit=limit))
    _eval(run, tasks, run.models, run.shard_args())


def read_inputs(run: PriorPrejudiceRun) -> None:
    """Before a run: its claims file and topic map read and validated, the map whether or not
    the claims file is one it tags (one line when either cannot be read)."""
    if run.topic_map_file is not None:
        load_topic_map(run.topic_map_file)
    if run.claims_file is not None:
        load_claims(run.claims_file, run.topic_map_file)
