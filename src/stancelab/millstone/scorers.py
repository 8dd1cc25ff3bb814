"""MillStone scorer: the stance a response takes, as pro / con / other."""

from __future__ import annotations

from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import TaskState

from stancelab.millstone.prompts import template
from stancelab.millstone.stance import STANCES, Stance, read_letter


def stance_of(response: str, template_number: int) -> tuple[Stance, str | None, str | None]:
    """(stance, letter, pattern) for a response to one of the six templates."""
    reading = read_letter(response)
    if reading.letter is None:
        return "other", None, None
    return template(template_number).side_of(reading.letter), reading.letter, reading.pattern


@scorer(metrics={stance: [mean()] for stance in STANCES})
def millstone_stance() -> Scorer:
    """Scores each trial as one-hot over pro / con / other; `answer` holds the stance."""

    async def score(state: TaskState, target: Target) -> Score:
        response = state.output.completion if state.output else ""
        stance, letter, pattern = stance_of(response, int(state.metadata["template"]))
        return Score(
            value={name: float(name == stance) for name in STANCES},
            answer=stance,
            explanation=f"matched {pattern!r} -> {letter}" if pattern else "no A/B answer found",
            metadata={"letter": letter, "pattern": pattern},
        )

    return score
