"""MillStone solver: one cached generation per trial."""

from __future__ import annotations

from inspect_ai.model import CachePolicy, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from stancelab.core.embedded.replies import MARKED_LETTER_END, stop_args
from stancelab.millstone.prompts import authors_max_tokens


def trial_cache(sample_id: str | int) -> CachePolicy:
    """Never expire (re-running a finished run must cost nothing), and key each trial on its
    sample id: two trials that happen to draw the same prompt are still two independent
    answers, as the paper's trials are. Inspect adds the model, input, config and epoch."""
    return CachePolicy(expiry=None, scopes={"millstone_trial": str(sample_id)})


@solver
def answer_once(cap_per_provider: int | None = None) -> Solver:
    """Ask the subject model the prepared prompt (question, instruction and arguments).

    With `cap_per_provider` (the cap for a model of a kind the authors did not run), each
    answer is capped as the authors capped that model's provider (`authors_max_tokens`)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        # on the embedded model an answer stops once its letter is written ("<<A>>")
        stops = stop_args(get_model(), MARKED_LETTER_END)
        if cap_per_provider is None:
            return await generate(state, cache=trial_cache(state.sample_id), **stops)
        cap = authors_max_tokens(str(get_model()), cap_per_provider)
        if cap is None:  # the provider's default, as the authors left it
            return await generate(state, cache=trial_cache(state.sample_id), **stops)
        return await generate(state, cache=trial_cache(state.sample_id), max_tokens=cap, **stops)

    return solve
