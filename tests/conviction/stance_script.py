"""A scripted model for Testing Conviction that holds a fixed stance per shared topic: as the
subject it agrees or disagrees with each bundled statement as `stances[topic] * orientation`
says and keeps that opinion against any argument; as `writer` it writes a fixed argument; as
`nli` it reads the words "agree" / "disagree" of the answer it is shown."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path

from inspect_ai.model import ChatMessage

from stancelab.conviction.dataset import BUNDLED, load_statements
from stancelab.core.data.topics import TopicTag
from tests.helpers import ChatReply

ARGUMENT = "How can anyone still hold that view when the evidence points the other way?"
WIDE_STATEMENTS = Path(__file__).with_name("statements_wide.jsonl")
"""Five statements on each of abortion, minimum-wage and gun-control (the `topics` set's two
and three more), enough units for a unanimous stance's CI to exclude 0."""


@cache
def statement_tags() -> dict[str, TopicTag]:
    """Every tagged bundled statement's text (and WIDE_STATEMENTS') -> its tag."""
    return {s.text: TopicTag(shared_topic=s.shared_topic, orientation=s.orientation)
            for source in (*BUNDLED, WIDE_STATEMENTS) for s in load_statements(source) if s.shared_topic}  # fmt: skip


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
