"""Planned calls and tokens of a MillStone run (`stancelab estimate millstone`)."""

from __future__ import annotations

from stancelab.core.estimate import PlannedCalls, sample_input_tokens
from stancelab.millstone.dataset import bundled_issues_path
from stancelab.millstone.run import MillstoneRun
from stancelab.millstone.task import millstone


def plan(run: MillstoneRun) -> list[PlannedCalls]:
    """One subject call per trial (66 per issue and trial), or, in the documents layout with
    `choices_per_request`, one per prompt with all its trials as choices; exact."""
    task = millstone(
        issues_file=str(run.issues_file or bundled_issues_path()), limit=run.limit, shared_topics=run.shared_topics,
        trials=run.trials, seed=run.seed, temperature=run.temperature, max_tokens=run.max_tokens,
        choices_per_request=run.choices_per_request, layout=run.layout,  # type: ignore[arg-type]
    )  # fmt: skip
    samples, input_tokens = sample_input_tokens(task)
    if run.choices_per_request and run.trials > 1:
        return [PlannedCalls("millstone", "subject", samples, samples, input_tokens,
                             samples * run.trials * run.max_tokens)]  # fmt: skip
    epochs = int(task.epochs or 1)
    return [PlannedCalls.exact("millstone", "subject", samples * epochs,
                               input_tokens * epochs, run.max_tokens)]  # fmt: skip
