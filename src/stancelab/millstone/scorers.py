"""MillStone scorer: the stance a response takes, as pro / con / other."""

from __future__ import annotations

from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import TaskState

from stancelab.millstone.prompts import Side, side_of_letter
from stancelab.millstone.stance import STANCES, Stance, read_letter


def stance_of(
    response: str, a_side: Side, fold_case: bool = False
) -> tuple[Stance, str | None, str | None]:
    """(stance, letter, pattern) for a response to a prompt where "A" stands for `a_side`
    (`fold_case`: the authors' statistics-script reading, see `stance.py`)."""
    reading = read_letter(response, fold_case)
    if reading.letter is None:
        return "other", None, reading.pattern
    return side_of_letter(reading.letter, a_side), reading.letter, reading.pattern


def _explanation(pattern: str | None, letter: str | None) -> str:
    if pattern is None:
        return "no A/B answer found"
    if letter is None:
        return f"matched {pattern!r} first, on no upper-case A or B: Other (as the authors read it)"
    return f"matched {pattern!r} -> {letter}"


@scorer(metrics={stance: [mean()] for stance in STANCES})
def millstone_stance(choices: int = 1) -> Scorer:
    """Scores each trial as one-hot over pro / con / other; `answer` holds the stance.

    With `choices` > 1 the trials are the choices of one response: the value is their mean,
    and `metadata["trials"]` lists each one (a choice the provider did not return is "error")."""

    async def score(state: TaskState, target: Target) -> Score:
        a_side = state.metadata["a_side"]
        if choices == 1:
            response = state.output.completion if state.output else ""
            stance, letter, pattern = stance_of(response, a_side)
            return Score(
                value={name: float(name == stance) for name in STANCES},
                answer=stance,
                explanation=_explanation(pattern, letter),
                metadata={
                    "letter": letter,
                    "pattern": pattern,
                    "stance_case_folded": stance_of(response, a_side, fold_case=True)[0],
                },
            )
        returned = state.output.choices if state.output else []
        trials = []
        for index in range(choices):
            if index < len(returned):
                stance, letter, pattern = stance_of(returned[index].message.text, a_side)
            else:
                stance, letter, pattern = "error", None, None
            trials.append({"stance": stance, "letter": letter, "pattern": pattern})
        stances = [trial["stance"] for trial in trials]
        return Score(
            value={name: stances.count(name) / choices for name in STANCES},
            answer=",".join(stances),
            explanation=f"{len(returned)} of {choices} choices returned",
            metadata={"trials": trials},
        )

    return score
