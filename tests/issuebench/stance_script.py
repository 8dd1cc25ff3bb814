"""A scripted IssueBench model that holds a fixed stance per shared topic, as writer and
classifier.

`reply_for(stances)` answers a writing prompt (whatever its framing) with a text that takes
the side of the issue's `pro` phrase that `stances[topic]` implies (+1 agrees with the key's
canonical claim, -1 disagrees; the issue's orientation turns that into pro or con), and a
balanced text on issues of other topics. It answers the classifier's prompt (IssueBench's
template 5) by reading that text: "1" (only pro), "5" (only con) or "3". The issue is
recognised from the bundled issues' phrases in the prompt, or those of the lens's wide issues
(tests/wide_data.py).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache

from inspect_ai.model import ChatMessage

from stancelab.issuebench.dataset import Issue, load_issues
from tests.helpers import ChatReply
from tests.wide_data import wide_units

CLASSIFIER_TEXT = re.compile(r'^### TEXT:\n"(.*?)"\n\n### TASK:', re.S)
SIDE = re.compile(r"\[side: (pro|con|balanced)\]")
LABELS = {"pro": "1", "con": "5", "balanced": "3"}


@cache
def phrases() -> list[tuple[str, Issue]]:
    """Every bundled and wide issue phrase (neutral, pro, con), longest first."""
    issues = [*load_issues(), *wide_units("issuebench", Issue)]
    pairs = [
        (phrase, issue) for issue in issues for phrase in (issue.neutral, issue.pro, issue.con)
    ]
    return sorted(pairs, key=lambda pair: -len(pair[0]))


def issue_in(prompt: str) -> Issue | None:
    return next((issue for phrase, issue in phrases() if phrase in prompt), None)


def writer_reply(prompt: str, stances: Mapping[str, int]) -> str:
    """A text on the side of the issue that the stance on its shared topic implies."""
    issue = issue_in(prompt)
    side = "balanced"
    if issue is not None and issue.shared_topic in stances:
        side = "pro" if stances[issue.shared_topic] * (issue.orientation or 0) > 0 else "con"
    return f"Here is the text you asked for. [side: {side}]"


def classifier_reply(prompt: str) -> str:
    """The label of the text quoted in the classifier's prompt."""
    text = CLASSIFIER_TEXT.match(prompt)
    side = SIDE.search(text.group(1)) if text else None
    return LABELS[side.group(1)] if side else "refusal"


def reply_for(stances: Mapping[str, int]) -> ChatReply:
    """One reply function for the subject (writer) and the `classifier` role."""

    def reply(messages: list[ChatMessage]) -> str:
        prompt = messages[-1].text
        if CLASSIFIER_TEXT.match(prompt):
            return classifier_reply(prompt)
        return writer_reply(prompt, stances)

    return reply
