"""A scripted MillStone subject that holds a fixed stance per shared topic, for the topic x
lens tests: `reply_for(stances)` answers every prompt of a run on the bundled issues (with or
without arguments, any template or layout) with the letter of the side it holds. MillStone's
default run needs no helper role (the bundled issues have their neutral wording).

The bundled set has one issue per topic, and MillStone's unit is the issue, so such a run
gives no interval. `write_issues(path, topics)` writes ten issues per topic, the fewest whose
unanimous direction the matrix calls over its 18 cells (`tests/wide_data.py` says why): the
bundled one, COPIES copies under other ids, and RESTATEMENTS restated copies on which the
subject wavers (it picks the other side on the "Regarding the topic" templates, 3 and 6), so
the issues differ (+1 on seven, +0.25 position-balanced on three) and the interval over them
is not one of identical values."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from inspect_ai.model import ChatMessage

from stancelab.millstone.corpus import load_issues
from tests.helpers import ChatReply

IN_FAVOUR_IS_A = "Output A if you support the position in favor"
NO_CHOICE = "I would rather not pick a side."
WAVERS_ON = (
    "Regarding the topic"  # templates 3 and 6: the claim's side on A in one, on B in the other
)
RESTATED = " (restated)"
COPIES = 6
RESTATEMENTS = 3
ISSUE_VALUES = (1.0,) * (1 + COPIES) + (0.25,) * RESTATEMENTS
"""each issue's position-balanced stance for a subject holding +1 (the bundled issue first)"""


@dataclass(frozen=True)
class TaggedPositions:
    """A bundled issue's two quoted positions and its place on the topic key."""

    topic: str
    orientation: int
    pro: str
    con: str
    wavers: bool = False


@cache
def bundled_positions() -> tuple[TaggedPositions, ...]:
    """The tagged bundled issues' positions, and those of their restated copies (`write_issues`)."""
    tagged = [
        issue
        for issue in load_issues()
        if issue.shared_topic is not None and issue.orientation is not None
    ]
    return tuple(
        TaggedPositions(
            issue.shared_topic,
            int(issue.orientation),
            f"'{issue.pro}{suffix}'",
            f"'{issue.con}{suffix}'",
            wavers=bool(suffix),
        )
        for issue in tagged
        for suffix in ("", RESTATED)
    )


def write_issues(path: Path, topics: Iterable[str]) -> Path:
    """An issues file with ten issues per topic: the bundled one, its copies, its restated copies."""
    lines = []
    for issue in load_issues():
        if issue.shared_topic not in set(topics):
            continue
        copies = [issue.model_copy(update={"id": f"{issue.id}-copy-{k}"}) for k in range(COPIES)]
        restated = [issue.model_copy(update={"id": f"{issue.id}-restated-{k}", "pro": f"{issue.pro}{RESTATED}",
                                             "con": f"{issue.con}{RESTATED}"}) for k in range(RESTATEMENTS)]  # fmt: skip
        lines += [unit.model_dump_json(exclude_none=True) for unit in (issue, *copies, *restated)]
    path.write_text("\n".join(lines) + "\n")
    return path


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
    if positions.wavers and WAVERS_ON in prompt:
        side = "con" if side == "pro" else "pro"
    return f"position <<{letter_for(prompt, positions, side)}>>"


def reply_for(stances: Mapping[str, int]) -> ChatReply:
    """A `scripted_chat_model` reply function for a subject holding `stances`."""

    def reply(messages: list[ChatMessage]) -> str:
        return answer(messages[-1].text, stances)

    return reply
