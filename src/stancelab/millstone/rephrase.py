"""Appendix C rephrasing: a loaded debate question -> neutral issue, pro and con wording.

The `rephraser` role answers the paper's prompt with six paraphrases; we read
the neutral issue phrase and the two positions back out of the paraphrases
that follow the "Consider the following issue" and "Regarding the topic"
patterns. A reply we cannot read is scored `unparsed` and the issue is left
without wording (the run stops with a clear error rather than guessing).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import CachePolicy, get_model
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver

from stancelab.millstone.dataset import MillstoneIssue
from stancelab.millstone.prompts import REPHRASE_PROMPT

REPHRASER_ROLE = "rephraser"

_POSITION = r"['‘’\"“”]?(?P<{name}>.+?)['‘’\"“”]?"
# A sentence ends at a full stop that closes no abbreviation ("U.S.", "D.C.", "Dr.", "vs.").
_SENTENCE_END = (
    r"(?<!\b[A-Z])(?<!\bMr)(?<!\bMs)(?<!\bDr)(?<!\bSt)(?<!\bJr)(?<!\bSr)(?<!\bvs)(?<!\bMrs)\."
)
_PATTERNS = (
    re.compile(
        r"Consider the following issue:\s*(?P<issue>.+?)"
        + _SENTENCE_END
        + r"\s+"
        + _POSITION.format(name="pro")
        + r"\s+is the position in favou?r\.\s+"
        + _POSITION.format(name="con")
        + r"\s+is the position against",
        re.S,
    ),
    re.compile(
        r"Regarding the topic\s*(?:of\s+)?(?P<issue>.+?):\s*Position 1 states\s+"
        + _POSITION.format(name="pro")
        + r"\s+and Position 2 states\s+"
        + _POSITION.format(name="con")
        + r"\.\s+Select",
        re.S,
    ),
)


@dataclass(frozen=True)
class NeutralWording:
    issue: str
    pro: str
    con: str


def _candidate_questions(reply: str) -> list[str]:
    """Paraphrase texts from a JSON list reply, or the raw reply when it is not JSON."""
    start, end = reply.find("["), reply.rfind("]")
    if start != -1 and end > start:
        try:
            items = json.loads(reply[start : end + 1])
        except json.JSONDecodeError:
            items = None
        if isinstance(items, list):
            return [
                str(item.get("question", ""))
                for item in items
                if isinstance(item, dict) and item.get("orientation") == "pro"
            ]
    return [reply]


def parse_rephrasing(reply: str) -> NeutralWording | None:
    """Neutral wording from a rephraser reply, or None when it cannot be read."""
    for question in _candidate_questions(reply):
        for pattern in _PATTERNS:
            match = pattern.search(question)
            if match:
                wording = NeutralWording(
                    issue=match.group("issue").strip(),
                    pro=match.group("pro").strip(),
                    con=match.group("con").strip(),
                )
                if all((wording.issue, wording.pro, wording.con)):
                    return wording
    return None


def rephrase_dataset(issues: list[MillstoneIssue]) -> MemoryDataset:
    """One sample per issue that lacks neutral wording."""
    samples = [
        Sample(
            id=issue.id,
            input=REPHRASE_PROMPT.format(question=issue.question),
            metadata={"issue_id": issue.id},
        )
        for issue in issues
        if issue.needs_rephrasing
    ]
    return MemoryDataset(samples, name="millstone_rephrase")


@solver
def rephrase_solver() -> Solver:
    """Ask the `rephraser` role (default: the subject model), cached."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        model = get_model(role=REPHRASER_ROLE)
        state.output = await model.generate(state.input, cache=CachePolicy(expiry=None))
        state.messages.append(state.output.message)
        return state

    return solve


@scorer(metrics=[mean()])
def rephrase_scorer() -> Scorer:
    """1 when the reply yields neutral wording (kept in metadata), 0 (`unparsed`) otherwise."""

    async def score(state: TaskState, target: Target) -> Score:
        wording = parse_rephrasing(state.output.completion if state.output else "")
        if wording is None:
            return Score(value=0.0, answer="unparsed", explanation="no neutral wording found")
        return Score(
            value=1.0,
            answer="parsed",
            metadata={"issue": wording.issue, "pro": wording.pro, "con": wording.con},
        )

    return score


def apply_rephrasings(
    issues: list[MillstoneIssue], wordings: dict[str, NeutralWording]
) -> list[MillstoneIssue]:
    """Issues with rephrased wording filled in where it was missing."""
    completed = []
    for issue in issues:
        wording = wordings.get(issue.id)
        if issue.needs_rephrasing and wording is not None:
            issue = issue.model_copy(
                update={"issue": wording.issue, "pro": wording.pro, "con": wording.con}
            )
        completed.append(issue)
    return completed
