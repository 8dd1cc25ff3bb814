"""Inspect task `stancelab/llm_bias_bench`."""

from __future__ import annotations

from typing import Any

from inspect_ai import Epochs, Task, task
from inspect_ai.model import GenerateConfig

from stancelab.core.data.files import parse_subset
from stancelab.core.errors import TaskArgumentError
from stancelab.core.runs.task_args import check_task_args, one_line_errors
from stancelab.llm_bias_bench.authors import PAPER_COMMIT, RUNNERS
from stancelab.llm_bias_bench.dataset import (
    CATEGORIES,
    Category,
    chosen_topics,
    conversation_samples,
    run_topics,
)
from stancelab.llm_bias_bench.method import PROMPTS
from stancelab.llm_bias_bench.scorers import judge_verdict
from stancelab.llm_bias_bench.solvers import SUBJECT_TEMPERATURE, USER_TEMPERATURE, converse
from stancelab.llm_bias_bench.verdicts import READINGS

DEFAULT_TURNS = 5


def parse_categories(categories: str | list[str] | tuple[str, ...] | None) -> tuple[Category, ...]:
    """`direct,indirect` (or a list) -> a tuple of known categories, in canonical order."""
    return parse_subset(categories, CATEGORIES, "categories")  # type: ignore[return-value]


@task
@one_line_errors
def llm_bias_bench(
    topics_file: str | None = None,
    limit: int | None = None,
    categories: str | None = None,
    turns: int = DEFAULT_TURNS,
    replicates: int = 1,
    judge_samples: int = 1,
    judge_every_turn: bool = False,
    blind_judge: bool = False,
    max_tokens: int | None = None,
    judge_max_tokens: int | None = None,
    user_temperature: float | None = USER_TEMPERATURE,
    temperature: float | None = SUBJECT_TEMPERATURE,
    shared_topics: str = "",
    prompts: str = "authors",
    authors_commit: str = PAPER_COMMIT,
    authors_repo: str | None = None,
    reading: str = "authors",
    **unknown: Any,
) -> Task:
    """llm-bias-bench: simulated-user conversations per topic x category x persona, judged.

    Args:
        topics_file: topics JSONL (ours or the authors' format), or a set by name: "authors"
            (the paper's 38, read from the authors' repository at eff42a4) or "stancelab"
            (stancelab's own); default: "authors" with prompts=authors, else "stancelab".
        limit: use only the first N topics (of each selected shared topic when
            `shared_topics` is set).
        categories: comma-separated subset of direct,indirect.
        turns: user messages per conversation (paper: 5).
        replicates: conversations per cell (Inspect epochs); the analysis takes the majority.
        judge_samples: judge calls per verdict, majority wins.
        judge_every_turn: also judge every earlier turn (verdict trajectories).
        blind_judge: also judge without telling the judge the user's persona.
        max_tokens: cap on each message of the subject and the simulated user.
        judge_max_tokens: cap on the judge's reply (default: the chosen runner's, c3c7336: 2048).
        user_temperature: sampling temperature of the simulated user (paper: 0.8).
        temperature: sampling temperature of the subject (paper: 0.7).
        shared_topics: only topics tagged with these shared topics ("all", or "a,b"; "" = off).
        prompts: "authors" (read from the authors' runner at `authors_commit`) or "stancelab"
            (stancelab's own wording: not the paper's prompts).
        authors_commit: the authors' runner: c3c7336 (the paper's results) or eff42a4 (later);
            its judge cap, calls per verdict and parser apply whichever the prompts.
        authors_repo: a checkout of the authors' repository at that commit (default: the
            cache, else fetched once from GitHub).
        reading: how judge replies are read: "authors" (their rules) or "lenient" (a variant).
    """
    check_task_args(llm_bias_bench, unknown, {
        "limit": (limit, 1), "turns": (turns, 1), "replicates": (replicates, 1), "judge_samples": (judge_samples, 1),
        "max_tokens": (max_tokens, 1), "judge_max_tokens": (judge_max_tokens, 1), "user_temperature": (user_temperature, 0), "temperature": (temperature, 0)})  # fmt: skip
    _check_method(prompts, authors_commit, reading, blind_judge)
    topics = run_topics(topics_file, prompts, authors_repo)
    chosen = chosen_topics(topics, shared_topics, limit)
    return Task(
        dataset=conversation_samples(chosen, parse_categories(categories), topics.source),
        solver=converse(turns, user_temperature, max_tokens, prompts, authors_commit, authors_repo),  # type: ignore[arg-type]
        scorer=judge_verdict(
            samples=judge_samples,
            every_turn=judge_every_turn,
            blind=blind_judge,
            max_tokens=judge_max_tokens,
            prompts=prompts,  # type: ignore[arg-type]
            authors_commit=authors_commit,
            authors_repo=authors_repo,
            reading=reading,  # type: ignore[arg-type]
        ),
        epochs=Epochs(replicates, "mean"),
        config=GenerateConfig(temperature=temperature, max_tokens=max_tokens),
        metadata={"probe": "llm-bias-bench", "turns": turns},
        version=3,
    )


def _check_method(prompts: str, authors_commit: str, reading: str, blind_judge: bool) -> None:
    """The method's arguments among their choices, and a blind judge only in stancelab's wording
    (the authors' judge prompt names the persona)."""
    for name, value, choices in (("prompts", prompts, PROMPTS), ("reading", reading, READINGS),
                                 ("authors_commit", authors_commit, tuple(RUNNERS))):  # fmt: skip
        if value not in choices:
            raise TaskArgumentError(
                f"task llm_bias_bench: {name} must be one of {', '.join(choices)}, not {value!r}."
            )
    if blind_judge and prompts == "authors":
        raise TaskArgumentError(
            "task llm_bias_bench: the authors' judge prompt names the persona, so a blind judge "
            "runs only with prompts=stancelab (--prompts stancelab)."
        )
