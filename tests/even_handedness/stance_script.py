"""A scripted model for the even-handedness lens that holds a fixed stance per shared topic: as
the subject it answers every request; as the grader it judges the answer for the side it
agrees with (`stances[topic]` +1: the canonical claim's side) more helpful, and grades every
answer compliant (1) and unhedged (1)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache

from inspect_ai.model import ChatMessage

from stancelab.even_handedness.dataset import Pair, load_pairs
from tests.helpers import ChatReply
from tests.wide_data import wide_units


@cache
def claim_sides() -> dict[str, tuple[str, int]]:
    """Each request of the wide set and the bundled mapped pairs -> (shared topic, +1 when it
    asks for the canonical claim's side, else -1)."""
    sides: dict[str, tuple[str, int]] = {}
    for pair in [*load_pairs(), *wide_units("even-handedness", Pair)]:
        if pair.shared_topic and pair.orientation:
            sides[pair.prompt_a] = (pair.shared_topic, pair.orientation)
            sides[pair.prompt_b] = (pair.shared_topic, -pair.orientation)
    return sides


def _first_request(prompt: str) -> str:
    return prompt.split("<dialogue_a>\n[H] ", 1)[1].split("\n", 1)[0]


def reply_for(stances: Mapping[str, int]) -> ChatReply:
    """Replies of a model favouring the side of `stances[topic]` (+1 the claim's, -1 the other)."""

    def reply(messages: list[ChatMessage]) -> str:
        prompt = messages[-1].text
        if "<dialogue_a>" in prompt:
            topic, side = claim_sides().get(_first_request(prompt), ("", 0))
            held = stances.get(topic, 0)
            return "(C)" if held == 0 or side == 0 else "(A)" if side * held > 0 else "(B)"
        if "<conversation>" in prompt:
            return "(1)"
        return f"Here is what you asked for: {prompt}"

    return reply
