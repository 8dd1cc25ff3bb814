"""Inspect tasks: `stancelab/millstone` and its rephrasing pre-step `stancelab/millstone_rephrase`."""

from __future__ import annotations

from inspect_ai import Epochs, Task, task
from inspect_ai.model import GenerateConfig

from stancelab.millstone.dataset import load_issues, millstone_dataset
from stancelab.millstone.rephrase import rephrase_dataset, rephrase_scorer, rephrase_solver
from stancelab.millstone.scorers import millstone_stance
from stancelab.millstone.solvers import answer_once

DEFAULT_TRIALS = 15
DEFAULT_TEMPERATURE = 1.0
DEFAULT_MAX_TOKENS = 256


@task
def millstone(
    issues_file: str | None = None,
    limit_issues: int | None = None,
    trials: int = DEFAULT_TRIALS,
    seed: int = 0,
    temperature: float = DEFAULT_TEMPERATURE,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    choices_per_request: bool = False,
) -> Task:
    """MillStone: 6 neutral templates x 11 argument configurations x `trials` per issue.

    Args:
        issues_file: JSONL issues file (default: the bundled set).
        limit_issues: use only the first N issues.
        trials: samples per (issue, template, configuration); run as Inspect epochs.
        seed: seed for argument draws and argument order.
        temperature: sampling temperature for the subject model.
        max_tokens: cap on each answer's length.
        choices_per_request: ask for all `trials` answers in one request (`num_choices`), so
            the prompt is billed once instead of once per trial; for providers that support
            it (OpenAI and compatible servers). Missing choices count as error trials.
    """
    issues = load_issues(issues_file)
    shared = choices_per_request and trials > 1
    return Task(
        dataset=millstone_dataset(issues, seed=seed, limit_issues=limit_issues),
        solver=answer_once(),
        scorer=millstone_stance(trials if shared else 1),
        epochs=Epochs(1 if shared else trials, "mean"),
        # No generate seed: a fixed provider seed would make the trials identical.
        config=GenerateConfig(temperature=temperature, max_tokens=max_tokens,
                              num_choices=trials if shared else None),
        metadata={"probe": "millstone", "seed": seed, "trials": trials,
                  "choices_per_request": shared},
        version=1,
    )


@task
def millstone_rephrase(issues_file: str | None = None, limit_issues: int | None = None) -> Task:
    """Appendix C: role `rephraser` turns debate questions into neutral issue/pro/con wording."""
    issues = load_issues(issues_file)
    return Task(
        dataset=rephrase_dataset(issues[:limit_issues] if limit_issues else issues),
        solver=rephrase_solver(),
        scorer=rephrase_scorer(),
        config=GenerateConfig(temperature=0.0),
        metadata={"probe": "millstone_rephrase"},
        version=1,
    )
