"""A scripted MillStone subject that holds a fixed stance per shared topic, for the topic x
lens tests: `reply_for(stances)` answers every prompt of a run on the bundled issues (with or
without arguments, any template or layout) with the letter of the side it holds. MillStone's
default run needs no helper role (the bundled issues have their neutral wording)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

from inspect_ai.model import ChatMessage

from stancelab.millstone.corpus import load_issues
from tests.helpers import ChatReply

IN_FAVOUR_IS_A = "Output A if you support the position in favor"
NO_CHOICE = "I would rather not pick a side."


@dataclass(frozen=True)
class TaggedPositions:
    """A bundled issue's two quoted positions and its place on the topic key."""

    topic: str
    orientation: int
    pro: str
    con: str


@cache
def bundled_positions() -> tuple[TaggedPositions, ...]:
    return tuple(
        TaggedPositions(issue.shared_topic, int(issue.orientation), f"'{issue.pro}'", f"'{issue.con}'")
        for issue in load_issues()
        if issue.shared_topic is not None and issue.orientation is not None
    )


def _issue_of(prompt: str) -> TaggedPositions | None:
    return next((p for p in bundled_positions() if p.pro in prompt and p.con in prompt), None)


def letter_for(prompt: str, positions: TaggedPositions, side: str) -> str:
    """The letter that picks `side` (pro / con): "A" is the position in favour in the
    'Output A if you support the position in favor' templates, else the position named first."""
    if IN_FAVOUR_IS_A in prompt:
        return "A" if side == "pro" else "B"
    pro_first = prompt.index(positions.pro) < prompt.index(positions.con)
    return "A" if (side == "pro") == pro_first else "B"


def answer(prompt: str, stances: Mapping[str, int]) -> str:
    """The reply of a model holding `stances[topic]` (+1 agrees with the canonical claim, -1
    disagrees); no choice on a prompt of an issue without a shared topic or a stance."""
    positions = _issue_of(prompt)
    if positions is None or positions.topic not in stances:
        return NO_CHOICE
    side = "pro" if stances[positions.topic] * positions.orientation > 0 else "con"
    return f"position <<{letter_for(prompt, positions, side)}>>"


def reply_for(stances: Mapping[str, int]) -> ChatReply:
    """A `scripted_chat_model` reply function for a subject holding `stances`."""

    def reply(messages: list[ChatMessage]) -> str:
        return answer(messages[-1].text, stances)

    return reply
