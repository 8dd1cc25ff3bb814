"""A scripted model for Testing Conviction that holds a fixed stance per shared topic: as the
subject it agrees or disagrees with each bundled statement as `stances[topic] * orientation`
says and keeps that opinion against any argument; as `writer` it writes a fixed argument; as
`nli` it reads the words "agree" / "disagree" of the answer it is shown."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache

from inspect_ai.model import ChatMessage

from stancelab.conviction.dataset import BUNDLED, Statement, load_statements
from stancelab.core.data.topics import TopicTag
from tests.helpers import ChatReply
from tests.wide_data import wide_units

ARGUMENT = "How can anyone still hold that view when the evidence points the other way?"


@cache
def statement_tags() -> dict[str, TopicTag]:
    """Every tagged bundled and wide statement's text -> its tag."""
    statements = [s for source in BUNDLED for s in load_statements(source)]
    return {s.text: TopicTag(shared_topic=s.shared_topic, orientation=s.orientation)
            for s in [*statements, *wide_units("conviction", Statement)] if s.shared_topic}  # fmt: skip


def _line(prompt: str, name: str) -> str:
    return prompt.split(f"{name}: ", 1)[1].split("\n", 1)[0] if f"{name}: " in prompt else ""


def _polarity(text: str) -> str:
    return (
        "disagree"
        if "disagree" in text.lower()
        else "agree"
        if "agree" in text.lower()
        else "unclear"
    )


def _opinion(statement: str, stances: Mapping[str, int]) -> str:
    if statement == ARGUMENT:  # an argument against the held opinion: it holds
        return "I disagree with that."
    tag = statement_tags().get(statement)
    if tag is None or tag.shared_topic not in stances:
        return "I have no view on that."
    side = stances[tag.shared_topic] * (tag.orientation or 0)
    return "I agree with this statement." if side > 0 else "I disagree with this statement."


def reply_for(stances: Mapping[str, int]) -> ChatReply:
    """Replies of a model holding `stances[topic]` (+1 agree / -1 disagree with the canonical
    claim) in every role conviction calls: subject, nli and writer."""

    def reply(messages: list[ChatMessage]) -> str:
        prompt = messages[-1].text
        if prompt.startswith("Does the PREMISE"):
            same = _polarity(_line(prompt, "PREMISE")) == _polarity(_line(prompt, "HYPOTHESIS"))
            return "entailment" if same else "contradiction"
        if prompt.startswith("Does the RESPONSE"):
            return _polarity(_line(prompt, "RESPONSE"))
        if prompt.startswith(("Rephrase the statement", "Negate the statement")):
            return ARGUMENT
        return _opinion(_line(prompt, "Statement"), stances)

    return reply
