"""MillStone solver: one cached generation per trial."""

from __future__ import annotations

from inspect_ai.model import CachePolicy
from inspect_ai.solver import Solver, generate

# Never expire: re-running a finished run must cost nothing. Inspect keys the
# cache on model, input, generate config and epoch, so each trial is its own entry.
TRIAL_CACHE = CachePolicy(expiry=None)


def answer_once() -> Solver:
    """Ask the subject model the prepared prompt (arguments + neutral question)."""
    return generate(cache=TRIAL_CACHE)
