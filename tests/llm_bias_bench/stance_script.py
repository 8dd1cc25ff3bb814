"""A scripted llm-bias-bench model that holds a fixed stance per shared topic, in every role.

`reply_for(stances)` answers as the simulated user (it states the claim and its persona's
side), as the subject (whatever the user says, it agrees with the topic's claim exactly when
that is the side `stances[topic]` holds: +1 agrees with the key's canonical claim, -1
disagrees; topics it holds no stance on get a balanced answer) and as the judge (it reads the
subject's last reply). The topic is recognised from the claim text of a bundled topic or
one of the lens's wide topics (tests/wide_data.py). It reads stancelab's own wording, so runs with
it take `--prompts stancelab` (`WORDING`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import cache

from inspect_ai.model import ChatMessage

from stancelab.llm_bias_bench.dataset import Topic, load_topics
from tests.helpers import ChatReply
from tests.wide_data import wide_units

WORDING = "stancelab"  # the prompts this script reads (not the paper's; a run's `prompts`)
CLAIM_IN_SYSTEM = re.compile(r'Claim under discussion: "(.*)"')
CLAIM_IN_MESSAGE = re.compile(r'Claim: "(.*?)"')
LAST_ASSISTANT = re.compile(r"\[Turn \d+\] Assistant: (.*)")
AGREES = "I agree with the claim."
DISAGREES = "I disagree with the claim."
BALANCED = "There are good arguments on both sides."


@cache
def topics_by_claim() -> dict[str, Topic]:
    return {topic.claim: topic for topic in [*load_topics(), *wide_units("llm-bias-bench", Topic)]}


def _system(messages: list[ChatMessage]) -> str:
    return messages[0].text if messages and messages[0].role == "system" else ""


def user_reply(messages: list[ChatMessage]) -> str:
    """The simulated user: names the claim and its side, and the turn (no repeated inputs)."""
    system = _system(messages)
    claim = CLAIM_IN_SYSTEM.search(system).group(1)  # type: ignore[union-attr]
    side = ("I am for it." if "You personally agree" in system
            else "I am against it." if "You personally disagree" in system else "I am undecided.")  # fmt: skip
    style = "debate" if "Never ask" in system else "question"
    return f'Claim: "{claim}" {side} [{style}; message {len(messages)}]'


def subject_reply(messages: list[ChatMessage], stances: Mapping[str, int]) -> str:
    """The subject: the side of the claim that its stance on the shared topic implies."""
    for message in messages:
        found = CLAIM_IN_MESSAGE.search(message.text) if message.role == "user" else None
        topic = topics_by_claim().get(found.group(1)) if found else None
        if topic is not None and topic.shared_topic in stances:
            position = stances[topic.shared_topic] * (topic.orientation or 0)
            return AGREES if position > 0 else DISAGREES
    return BALANCED


def judge_reply(messages: list[ChatMessage]) -> str:
    """The judge: the verdict of the subject's last reply, as JSON."""
    replies = LAST_ASSISTANT.findall(messages[-1].text)
    last = replies[-1] if replies else ""
    verdict = "agree" if AGREES in last else "disagree" if DISAGREES in last else "neutral"
    return json.dumps({"evidence": [last], "rationale": "scripted judge", "verdict": verdict})


def reply_for(stances: Mapping[str, int]) -> ChatReply:
    """One reply function for the subject and both helper roles (user, judge)."""

    def reply(messages: list[ChatMessage]) -> str:
        system = _system(messages)
        if CLAIM_IN_SYSTEM.search(system):
            return user_reply(messages)
        if "Classify the assistant's reply" in messages[-1].text:
            return judge_reply(messages)
        return subject_reply(messages, stances)

    return reply
