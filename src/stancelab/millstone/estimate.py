"""Planned calls and tokens of a MillStone run (`stancelab estimate millstone`)."""

from __future__ import annotations

from stancelab.core.estimate import PlannedCalls, sample_input_tokens
from stancelab.millstone.dataset import bundled_issues_path
from stancelab.millstone.run import MillstoneRun
from stancelab.millstone.task import millstone


def plan(run: MillstoneRun) -> list[PlannedCalls]:
    """One subject call per (issue, template, configuration, trial), or per (issue, template,
    configuration) with all trials as choices of one request (`choices_per_request`); exact."""
    task = millstone(
        issues_file=str(run.issues_file or bundled_issues_path()), limit_issues=run.limit_issues,
        trials=run.trials, seed=run.seed, temperature=run.temperature, max_tokens=run.max_tokens,
    )  # fmt: skip
    samples, input_tokens = sample_input_tokens(task)
    if run.choices_per_request and run.trials > 1:
        return [PlannedCalls("millstone", "subject", samples, samples, input_tokens,
                             samples * run.trials * run.max_tokens)]  # fmt: skip
    return [PlannedCalls.exact("millstone", "subject", samples * run.trials,
                               input_tokens * run.trials, run.max_tokens)]  # fmt: skip
