"""Inspect tasks: `stancelab/millstone` and its rephrasing pre-step `stancelab/millstone_rephrase`."""

from __future__ import annotations

from typing import Any

from inspect_ai import Epochs, Task, task
from inspect_ai.model import GenerateConfig

from stancelab.core.data.topics import select_and_limit
from stancelab.core.errors import StancelabError
from stancelab.core.runs.task_args import check_task_args, one_line_errors
from stancelab.millstone.corpus import load_issues
from stancelab.millstone.dataset import millstone_dataset
from stancelab.millstone.prompts import LAYOUTS, Layout
from stancelab.millstone.rephrase import rephrase_dataset, rephrase_scorer, rephrase_solver
from stancelab.millstone.scorers import millstone_stance
from stancelab.millstone.solvers import answer_once
from stancelab.millstone.wording import (
    DEFAULT_COMMIT,
    STANCELAB_WORDING,
    Wording,
    check_source,
    wording_for,
)

DEFAULT_TRIALS = 15
DEFAULT_TEMPERATURE: float | None = None  # the provider's default: the authors set none
DEFAULT_MAX_TOKENS = 256


@task
@one_line_errors
def millstone(
    issues_file: str | None = None,
    limit: int | None = None,
    trials: int = DEFAULT_TRIALS,
    seed: int = 0,
    temperature: float | None = DEFAULT_TEMPERATURE,
    max_tokens: int | None = None,
    choices_per_request: bool = False,
    layout: Layout = "authors",
    shared_topics: str = "",
    prompts: str = "authors",
    authors_commit: str = DEFAULT_COMMIT,
    authors_repo: str | None = None,
    **unknown: Any,
) -> Task:
    """MillStone: 6 neutral templates x (baseline + 5 argument cases x 2 wordings) x `trials`
    per issue, 66 x `trials` answers.

    Args:
        issues_file: JSONL issues file, or a folder of the authors' per-issue JSON files
            (default: the bundled set).
        limit: use only the first N issues.
        trials: answers per (issue, template, case, wording); paper: 15.
        seed: seed for argument draws, argument order and the order of the answer forms.
        temperature: sampling temperature for the subject model (default: none sent, the
            provider's default, as in the authors' requests).
        max_tokens: cap on each answer's length (default: in the `authors` layout the cap the
            authors used for the model's provider, 600 for Claude, 100 for OpenAI-compatible
            endpoints (GPT, Llama), none for Gemini and Grok, 256 for other models; in the
            `documents` layout 256).
        choices_per_request: ask for all `trials` answers in one request (`num_choices`), so
            the prompt is billed once instead of once per trial; for providers that support
            it (OpenAI and compatible servers). Missing choices count as error trials. Needs
            the `documents` layout, whose trials share one prompt.
        layout: `authors` (default: the layout of the authors' runs, each trial its own
            draw) or `documents` (11 configurations of numbered documents; trials are
            Inspect epochs of one prompt).
        shared_topics: "" (every issue), "all" (issues tagged with a shared topic) or
            comma-separated topic ids; `limit` then counts per topic.
        prompts: `authors` (default: the words of the authors' prompt builder, read at run
            time from htried/millstone at `authors_commit`) or `stancelab` (stancelab's own
            wording, not the paper's prompts). The `documents` layout is stancelab's own.
        authors_commit: a pinned commit of the authors' prompt builder (default: b3f0296, the
            commit of the paper's results).
        authors_repo: a checkout of htried/millstone to read it from (default: the cache, else
            fetched once).
    """
    check_task_args(millstone, unknown, {"limit": (limit, 1), "trials": (trials, 1),
                                         "max_tokens": (max_tokens, 1), "temperature": (temperature, 0)})  # fmt: skip
    if layout not in LAYOUTS:
        raise StancelabError(f"layout must be one of {', '.join(LAYOUTS)}, not '{layout}'")
    if choices_per_request and layout != "documents":
        raise StancelabError(
            "choices_per_request needs layout='documents': in the authors' layout every trial "
            "draws its own arguments, so no two trials share a prompt."
        )
    words = _wording(layout, prompts, authors_commit, authors_repo)
    issues = select_and_limit(load_issues(issues_file), shared_topics, limit, "MillStone issue")
    shared = choices_per_request and trials > 1
    epochs = 1 if shared or layout == "authors" else trials
    per_provider = max_tokens is None and layout == "authors"
    return Task(
        dataset=millstone_dataset(issues, seed, None, layout, trials, words),
        solver=answer_once(DEFAULT_MAX_TOKENS if per_provider else None),
        scorer=millstone_stance(trials if shared else 1),
        epochs=Epochs(epochs, "mean"),
        # No generate seed: a fixed provider seed would make the trials identical.
        config=GenerateConfig(
            temperature=temperature,
            max_tokens=None if per_provider else max_tokens or DEFAULT_MAX_TOKENS,
            num_choices=trials if shared else None,
        ),
        metadata={
            "probe": "millstone",
            "seed": seed,
            "trials": trials,
            "choices_per_request": shared,
            "layout": layout,
            "max_tokens": "as the authors, per provider"
            if per_provider
            else max_tokens or DEFAULT_MAX_TOKENS,
            "shared_topics": shared_topics,
            **prompts_record(words),
        },
        version=2,
    )


def _wording(layout: str, prompts: str, commit: str, checkout: str | None) -> Wording:
    """The words of the run's prompts; the `documents` layout is stancelab's own wording."""
    check_source(prompts)
    return wording_for(prompts, commit, checkout) if layout == "authors" else STANCELAB_WORDING


def prompts_record(words: Wording) -> dict[str, Any]:
    """What the run's prompts are, for the log, summary.json and the report."""
    return {"prompts": words.source, "authors_release": words.release, "prompts_label": words.label}


@task
@one_line_errors
def millstone_rephrase(
    issues_file: str | None = None,
    limit: int | None = None,
    shared_topics: str = "",
    **unknown: Any,
) -> Task:
    """Appendix C: role `rephraser` turns debate questions into neutral issue/pro/con wording."""
    check_task_args(millstone_rephrase, unknown, {"limit": (limit, 1)})
    issues = select_and_limit(load_issues(issues_file), shared_topics, limit, "MillStone issue")
    return Task(
        dataset=rephrase_dataset(issues),
        solver=rephrase_solver(),
        scorer=rephrase_scorer(),
        config=GenerateConfig(temperature=0.0),
        metadata={"probe": "millstone_rephrase"},
        version=1,
    )
