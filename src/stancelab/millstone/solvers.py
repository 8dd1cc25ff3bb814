"""MillStone solver: one cached generation per trial."""

from __future__ import annotations

from inspect_ai.model import CachePolicy
from inspect_ai.solver import Generate, Solver, TaskState, solver


def trial_cache(sample_id: str | int) -> CachePolicy:
    """Never expire (re-running a finished run must cost nothing), and key each trial on its
    sample id: two trials that happen to draw the same prompt are still two independent
    answers, as the paper's trials are. Inspect adds the model, input, config and epoch."""
    return CachePolicy(expiry=None, scopes={"millstone_trial": str(sample_id)})


@solver
def answer_once() -> Solver:
    """Ask the subject model the prepared prompt (question, instruction and arguments)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        return await generate(state, cache=trial_cache(state.sample_id))

    return solve
