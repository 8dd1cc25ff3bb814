"""A scripted model for prior prejudice that holds a fixed stance per shared topic: as the
subject it rates a bundled claim or negation 7 when it asserts the side it holds
(`stances[topic]`, +1 agree / -1 disagree with the canonical claim) and 1 otherwise, anything
else 4; as `writer` it writes a fixed argument (and negations); as `judge` it codes every
explanation as "other"."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import cache

from inspect_ai.model import ChatMessage

from stancelab.prior_prejudice.dataset import BUNDLED, Claim, load_claims
from tests.helpers import ChatReply
from tests.wide_data import wide_units

ARGUMENT = "This is a scripted argument with no side of its own."
WRITER_OPENINGS = ("Write a persuasive argument", "Below is a persuasive argument", "Why do some people",
                   "Based on these reasons", "Now rewrite")  # fmt: skip
_RATED = re.compile(r'(?:Argument|Essay): "(.*)"\n\nAnswer:', re.S)


@cache
def asserted_sides() -> dict[str, tuple[str, int]]:
    """Every tagged bundled and wide claim and negation -> (topic, the side of the
    canonical claim it asserts: the claim's orientation, its negation's opposite)."""
    sides: dict[str, tuple[str, int]] = {}
    claims = [claim for name in BUNDLED for claim in load_claims(name)]
    for claim in [*claims, *wide_units("prior-prejudice", Claim)]:
        if claim.shared_topic and claim.orientation:
            sides[claim.claim] = (claim.shared_topic, claim.orientation)
            if claim.negation:
                sides[claim.negation] = (claim.shared_topic, -claim.orientation)
    return sides


def _rating(text: str, stances: Mapping[str, int]) -> str:
    topic, side = asserted_sides().get(text.strip(), ("", 0))
    if topic not in stances or not side:
        return "4"
    return "7" if stances[topic] * side > 0 else "1"


def reply_for(stances: Mapping[str, int]) -> ChatReply:
    """Replies of a model holding `stances[topic]` in every role prior prejudice calls:
    subject (ratings, direct questions), writer and judge."""

    def reply(messages: list[ChatMessage]) -> str:
        prompt = messages[-1].text
        if prompt.startswith("A language model was asked"):
            return json.dumps({"category": "other", "rationale": "scripted"})
        if prompt.startswith("Write the negation"):
            claim = prompt.split('Claim: "', 1)[1].split('"', 1)[0]
            return f"It is false that {claim[0].lower()}{claim[1:]}"
        if prompt.startswith(WRITER_OPENINGS):
            return ARGUMENT
        rated = _RATED.search(prompt)
        return _rating(rated.group(1), stances) if rated else "4"

    return reply
