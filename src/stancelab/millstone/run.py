"""Running MillStone end to end: optional rephrasing, the Inspect evals, then the analysis."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from inspect_ai.log import EvalLog
from inspect_ai.model import Model

from stancelab.core.data.files import write_jsonl
from stancelab.core.data.topics import select_and_limit
from stancelab.core.errors import StancelabError
from stancelab.core.runs.evals import ProbeRun, run_eval
from stancelab.millstone.corpus import load_issues
from stancelab.millstone.dataset import bundled_issues_path
from stancelab.millstone.rephrase import REPHRASER_ROLE, NeutralWording, apply_rephrasings
from stancelab.millstone.results import analyze
from stancelab.millstone.task import (
    DEFAULT_TEMPERATURE,
    DEFAULT_TRIALS,
    millstone,
    millstone_rephrase,
)
from stancelab.millstone.wording import DEFAULT_COMMIT, check_available

ROLES = (REPHRASER_ROLE,)
REPHRASED_FILE = "issues_rephrased.jsonl"


@dataclass
class MillstoneRun(ProbeRun):
    """Options of one `stancelab run millstone`."""

    issues_file: Path | None = None
    """issues file (JSONL) or a folder of the authors' per-issue JSON files (default: bundled)"""
    trials: int = field(default=DEFAULT_TRIALS, metadata={"embedded": 1})
    """trials per (issue, template, config)"""
    temperature: float | None = DEFAULT_TEMPERATURE
    """subject sampling temperature (default: none sent, the provider's, as the authors)"""
    max_tokens: int | None = field(
        default=None,
        metadata={"caps": ("subject",), "embedded": 16, "method": "the provider's"},
    )
    """cap on each answer (default: authors layout, the authors' cap per provider: Claude 600,
    GPT and Llama 100, Gemini and Grok none, others 256; documents layout 256)"""
    choices_per_request: bool = False
    """all trials of a prompt in one request (num_choices; OpenAI-compatible)"""
    layout: Literal["authors", "documents"] = "authors"
    """prompt layout: authors (as the authors ran it) or documents"""
    shared_topics: str = ""
    """only issues of these shared topics: 'all' or ids a,b (default: every issue)"""
    prompts: Literal["authors", "stancelab"] = "authors"
    """authors: the words of the authors' prompt builder, read from htried/millstone at run
    time; stancelab: stancelab's own wording (not the paper's prompts)"""
    authors_commit: str = DEFAULT_COMMIT
    """pinned commit of the authors' prompt builder (default: b3f0296, the paper's results)"""
    authors_repo: str | None = field(default=None, metadata={"metavar": "DIR"})
    """a checkout of htried/millstone to read the prompt builder from (default: the cache, else
    fetched once)"""


def _eval(
    run: MillstoneRun, task: Any, models: list[str | Model], role_names: tuple[str, ...] = (),
    shard: dict[str, Any] | None = None,
) -> list[EvalLog]:  # fmt: skip
    return run_eval(task, models, run.roles, run.log_location(), role_names=role_names,
                    **run.eval_args(), **(shard or {}))  # fmt: skip


def _wordings_from(log: EvalLog) -> tuple[dict[str, NeutralWording], list[str]]:
    wordings: dict[str, NeutralWording] = {}
    unparsed: list[str] = []
    for sample in log.samples or []:
        score = (sample.scores or {}).get("rephrase_scorer")
        if score is not None and score.answer == "parsed" and score.metadata:
            wordings[str(sample.id)] = NeutralWording(**score.metadata)
        else:
            unparsed.append(str(sample.id))
    return wordings, unparsed


def rephrase_issues(run: MillstoneRun, issues_file: Path, out_file: Path) -> Path:
    """Run the rephrasing task and write the issues with neutral wording to `out_file`."""
    issues = load_issues(issues_file)
    rephraser = run.roles.get(REPHRASER_ROLE, run.models[0])
    task = millstone_rephrase(
        issues_file=str(issues_file), limit=run.limit, shared_topics=run.shared_topics
    )
    (log,) = _eval(run, task, [rephraser], ROLES)
    wordings, unparsed = _wordings_from(log)
    if unparsed:
        raise StancelabError(
            f"The rephraser ({rephraser}) gave no usable neutral wording for: "
            f"{', '.join(sorted(unparsed))}. See the log {log.location}; add issue/pro/con "
            "to these issues by hand or use a stronger --role rephraser=MODEL."
        )
    return write_jsonl(out_file, apply_rephrasings(issues, wordings))


def run_millstone(run: MillstoneRun) -> dict[str, Any]:
    """Run MillStone for every model and return the summary (also written to `out_dir`); for a
    shard, where its logs went. (`stancelab run` adds the run's record and the models' paired
    differences: `core.runs.pipeline`.)"""
    run_evals(run)
    return run.shard_result() if run.shard else analyze(run.out_dir, seed=run.seed)


def run_evals(run: MillstoneRun) -> None:
    """MillStone's evals for every model (the rephraser's first where issues need it)."""
    run.out_dir.mkdir(parents=True, exist_ok=True)
    issues_file = run.issues_file or bundled_issues_path()
    chosen = select_and_limit(
        load_issues(issues_file), run.shared_topics, run.limit, "MillStone issue"
    )
    if any(issue.needs_rephrasing for issue in chosen):
        issues_file = rephrase_issues(run, Path(issues_file), run.out_dir / REPHRASED_FILE)
    task = millstone(issues_file=str(issues_file), **task_args(run))
    _eval(run, task, run.models, shard=run.shard_args())


def task_args(run: MillstoneRun) -> dict[str, Any]:
    """The `millstone` task's arguments from the run's options (all but the issues file)."""
    return {
        "limit": run.limit, "trials": run.trials, "seed": run.seed,
        "temperature": run.temperature, "max_tokens": run.max_tokens,
        "choices_per_request": run.choices_per_request, "layout": run.layout,
        "shared_topics": run.shared_topics, "prompts": run.prompts,
        "authors_commit": run.authors_commit,
        "authors_repo": run.authors_repo,
    }  # fmt: skip


def read_inputs(run: MillstoneRun) -> None:
    """Before a run: its issues file read and validated (one line when it cannot be)."""
    if run.issues_file is not None:
        load_issues(run.issues_file)


def prepare(run: MillstoneRun) -> None:
    """Before a run: the authors' prompt builder at hand when the run reads its words (checked,
    from the checkout or the cache, or fetched once); one line and no call otherwise."""
    if run.layout == "authors":
        check_available(run.prompts, run.authors_commit, run.authors_repo)
