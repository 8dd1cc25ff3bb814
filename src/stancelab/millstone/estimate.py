"""Planned calls and tokens of a MillStone run (`stancelab estimate millstone`)."""

from __future__ import annotations

from stancelab.core.data.authors import ArtefactsUnavailable
from stancelab.core.runs.estimate import PlannedCalls, sample_input_tokens
from stancelab.millstone.dataset import bundled_issues_path
from stancelab.millstone.prompts import authors_max_tokens
from stancelab.millstone.run import MillstoneRun, task_args
from stancelab.millstone.task import DEFAULT_MAX_TOKENS, millstone


def answer_cap(run: MillstoneRun) -> int:
    """The largest answer cap of the run's models (a provider without one counts 256)."""
    if run.max_tokens is not None:
        return run.max_tokens
    if run.layout != "authors":
        return DEFAULT_MAX_TOKENS
    caps = [authors_max_tokens(str(model), DEFAULT_MAX_TOKENS) for model in run.models]
    return max((cap or DEFAULT_MAX_TOKENS for cap in caps), default=DEFAULT_MAX_TOKENS)


def plan(run: MillstoneRun) -> list[PlannedCalls]:
    """One subject call per trial (66 per issue and trial), or, in the documents layout with
    `choices_per_request`, one per prompt with all its trials as choices; exact. Where the
    authors' prompt builder is not at hand (offline), the input tokens are counted on
    stancelab's wording: the same prompts but for a few instruction words (an estimate calls
    no model)."""
    issues_file = str(run.issues_file or bundled_issues_path())
    try:
        task = millstone(issues_file=issues_file, **task_args(run))
    except ArtefactsUnavailable:
        task = millstone(issues_file=issues_file, **(task_args(run) | {"prompts": "stancelab"}))
    samples, input_tokens = sample_input_tokens(task)
    if run.choices_per_request and run.trials > 1:
        return [PlannedCalls("millstone", "subject", samples, samples, input_tokens,
                             samples * run.trials * answer_cap(run))]  # fmt: skip
    epochs = int(task.epochs or 1)
    return [PlannedCalls.exact("millstone", "subject", samples * epochs,
                               input_tokens * epochs, answer_cap(run))]  # fmt: skip
