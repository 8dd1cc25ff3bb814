"""Running llm-bias-bench end to end, and importing the authors' released runs."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from stancelab.core.errors import StancelabError
from stancelab.core.runs.evals import ProbeRun, run_eval
from stancelab.llm_bias_bench.ablation import SETUP_A_TABLE, ablation_dir, replay_tables
from stancelab.llm_bias_bench.analysis import flatten_usage
from stancelab.llm_bias_bench.authors import (
    PAPER_COMMIT,
    Commit,
    ensure_runner,
    paper_topics_text,
)
from stancelab.llm_bias_bench.dataset import (
    CATEGORIES,
    is_named_set,
    load_topics,
    topics_name,
    uncovered_selection,
)
from stancelab.llm_bias_bench.method import FALLBACK, Prompts
from stancelab.llm_bias_bench.persuasion import persuasion_dir, setup_a_table
from stancelab.llm_bias_bench.records import read_authors_outputs
from stancelab.llm_bias_bench.results import (
    PRICES_FILE,
    add_ablation,
    analyze,
    analyze_conversations,
)
from stancelab.llm_bias_bench.scorers import JUDGE_ROLE
from stancelab.llm_bias_bench.solvers import SUBJECT_TEMPERATURE, USER_ROLE
from stancelab.llm_bias_bench.task import DEFAULT_TURNS, llm_bias_bench

ROLES = (USER_ROLE, JUDGE_ROLE)


@dataclass
class BiasBenchRun(ProbeRun):
    """Options of one `stancelab run llm-bias-bench`."""

    topics_file: Path | None = None
    """topics file (ours or the authors' format), or a set: authors (the paper's 38, read from
    the authors' repository at eff42a4) or stancelab (stancelab's own); default: authors with
    --prompts authors, stancelab with --prompts stancelab"""
    categories: str | None = field(default=None, metadata={"among": CATEGORIES})
    """comma-separated: direct,indirect (default both)"""
    turns: int = field(default=DEFAULT_TURNS, metadata={"embedded": 2})
    """user messages per conversation"""
    replicates: int = 1
    """conversations per cell, majority verdict"""
    judge_samples: int = 1
    """judge calls per verdict, majority"""
    judge_every_turn: bool = False
    """judge after every turn (verdict trajectories)"""
    blind_judge: bool = False
    """also judge without the persona"""
    max_tokens: int | None = field(default=None, metadata={"caps": ("subject", "user")})
    """cap on each message of the subject and the simulated user"""
    judge_max_tokens: int | None = field(default=None, metadata={"caps": ("judge",)})
    """cap on the judge's reply (default: the runner's of --authors-commit, c3c7336: 2048)"""
    temperature: float = SUBJECT_TEMPERATURE
    """subject sampling temperature"""
    shared_topics: str = ""
    """only topics of these shared topics: all, or a,b (default: off)"""
    prompts: Prompts = "authors"
    """authors: the authors' prompts, read from their runner at --authors-commit (the paper's
    method); stancelab: stancelab's own wording (not the paper's prompts)"""
    authors_commit: Commit = PAPER_COMMIT
    """the authors' runner whose prompts and judging (token cap, calls, parser) the run follows:
    c3c7336 (the paper's results) or eff42a4 (later)"""
    authors_repo: Path | None = None
    """DIR: a checkout of maritaca-ai/llm-bias-bench at --authors-commit (default: the cache,
    else fetched once from GitHub)"""
    reading: Literal["authors", "lenient"] = "authors"
    """how judge replies are read: authors (their runner's rules, the paper's) or lenient
    (case and spacing folded, any JSON object or tag searched: not the paper's reading)"""


def _write_prices(out_dir: Path, prices: dict[str, tuple[float, float]]) -> None:
    if prices:
        (out_dir / PRICES_FILE).write_text(json.dumps(prices, indent=2, sort_keys=True) + "\n")


def run_bias_bench(run: BiasBenchRun) -> dict[str, Any]:
    """Run the conversations for every subject model, then analyse the logs; for a shard, where
    its logs went. (`stancelab run` adds the run's record and the models' paired differences:
    `core.runs.pipeline`.)"""
    run_evals(run)
    _write_prices(run.out_dir, run.prices)
    return run.shard_result() if run.shard else analyze(run.out_dir)


def run_evals(run: BiasBenchRun) -> None:
    """The conversations of every subject model, judged (none when the run's shared topics
    have none)."""
    run.out_dir.mkdir(parents=True, exist_ok=True)
    if uncovered_selection(run):
        return
    task = llm_bias_bench(
        topics_file=str(run.topics_file) if run.topics_file else None,
        limit=run.limit,
        categories=run.categories,
        turns=run.turns,
        replicates=run.replicates,
        judge_samples=run.judge_samples,
        judge_every_turn=run.judge_every_turn,
        blind_judge=run.blind_judge,
        max_tokens=run.max_tokens,
        judge_max_tokens=run.judge_max_tokens,
        temperature=run.temperature,
        shared_topics=run.shared_topics,
        prompts=run.prompts,
        authors_commit=run.authors_commit,
        authors_repo=str(run.authors_repo.resolve()) if run.authors_repo else None,
        reading=run.reading,
    )
    run_eval(
        task,
        run.models,
        run.roles,
        run.log_location(),
        role_names=ROLES,
        **run.eval_args(),
        **run.shard_args(),
    )


def read_inputs(run: BiasBenchRun) -> None:
    """Before a run: its topics file read and validated (one line when it cannot be)."""
    name = topics_name(run.topics_file, run.prompts)
    if run.topics_file is not None and not is_named_set(name):
        load_topics(run.topics_file)


def prepare(run: BiasBenchRun) -> None:
    """Before any call: with the authors' prompts, their runner at --authors-commit at hand
    (a checkout, the cache, or fetched once; checked against its pin) and readable; the paper's
    topics at hand when the run reads them; a blind judge only in stancelab's wording."""
    if run.blind_judge and run.prompts == "authors":
        raise StancelabError("--blind-judge: the authors' judge prompt names the persona; run it "
                             "with --prompts stancelab (not the paper's prompts).")  # fmt: skip
    if run.prompts == "authors":
        ensure_runner(run.authors_commit, run.authors_repo, FALLBACK)
    name = topics_name(run.topics_file, run.prompts)
    if is_named_set(name) and name == "authors":
        paper_topics_text(run.authors_repo)


def import_authors_run(
    source: Path, out_dir: Path, prices: dict[str, tuple[float, float]] | None = None
) -> dict[str, Any]:
    """Re-analyse the authors' released output JSONL with stancelab's code, their ablations
    (Table 8, §5.4-5.6) where the release has an `ablation/` folder and their persuasion runs
    (§5.3 Setup A) where it has a `persuasion/` folder."""
    conversations = read_authors_outputs(source)
    out_dir.mkdir(parents=True, exist_ok=True)
    _write_prices(out_dir, prices or {})
    summary = analyze_conversations(out_dir, conversations, flatten_usage([]))
    release = Path(source) if Path(source).is_dir() else None
    ablation = ablation_dir(release) if release else None
    tables = replay_tables(ablation) if ablation else {}
    persuasion = persuasion_dir(release) if release else None
    if persuasion:
        tables[SETUP_A_TABLE] = setup_a_table(persuasion)
    return add_ablation(out_dir, summary, tables)
