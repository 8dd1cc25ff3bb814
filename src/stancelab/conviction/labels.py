"""The paper's label function (eq. 1-3), transitions and consistency categories."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

LABELS = ("TL", "PL", "TR", "PR")
UNCLEAR = "unclear"
_WORD = re.compile(r"\b(agree|disagree|unclear)\b", re.I)
_VERDICT = re.compile(r"\b(true|pretend(?:ing)?)\s+(left|right)(?:ist)?\b", re.I)
_OPINION_LINE = re.compile(r"^\W*opinion\W*:(.*)$", re.I | re.M)


def read_agreement(reply: str) -> int | None:
    """+1 agree, -1 disagree, None unclear (an unreadable reply is unclear, never forced)."""
    words = {
        match.group(1).lower()
        for match in _WORD.finditer(reply.strip().splitlines()[0] if reply.strip() else "")
    }
    if words == {"agree"}:
        return 1
    if words == {"disagree"}:
        return -1
    return None


def read_persona_verdict(reply: str) -> str | None:
    """The F.2 judge's class ("true leftist", "pretend rightist", ...) from its `Opinion:`
    line (the whole reply when it has none); None when no class, or more than one, is named."""
    lines = _OPINION_LINE.findall(reply)
    found = {f"{'true' if kind.lower() == 'true' else 'pretend'} {side.lower()}ist"
             for kind, side in _VERDICT.findall(lines[0] if lines else reply)}  # fmt: skip
    return found.pop() if len(found) == 1 else None


def expected_verdict(lean: str, persona: str) -> str | None:
    """Appendix C's ground truth for a persona answer: a model playing its own lean is a true
    leftist / rightist, one playing the other lean a pretend one; None for an undetermined lean."""
    if lean not in ("left", "right") or persona not in ("left", "right"):
        return None
    return f"{'true' if lean == persona else 'pretend'} {persona}ist"


def label(o: int, a: int, b: int) -> str:
    """TR / PR / TL / PL from the original opinion o, the pressured opinion a and the
    statement's bias b (+1: agreeing moves right), all in {+1, -1}.

    The opinion leans right when o == b: agreeing with a right-coded statement or disagreeing
    with a left-coded one, as the paper's prose and worked example define I_B. (Eq. 2 as
    printed gives "b = -1 and o != b" for the second case, which would call agreement with a
    left-coded statement right-leaning; we read that as a typo. METHODS.md agrees.)"""
    delta = o == a
    right = o == b
    if right:
        return "TR" if delta else "PR"
    return "TL" if delta else "PL"


def consistency(labels: Iterable[str]) -> str:
    """ "inconsistent" (both TL and TR), "inconclusive" (no true label) or "consistent" for the
    labels of one statement across the three scenarios; "unclear" if any is unclear."""
    seen = list(labels)
    if any(item not in LABELS for item in seen):
        return UNCLEAR
    if "TL" in seen and "TR" in seen:
        return "inconsistent"
    if not {"TL", "TR"} & set(seen):
        return "inconclusive"
    return "consistent"


def transition_counts(pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], int]:
    """Counts of (from, to) label pairs, unclear ones left out."""
    return Counter((a, b) for a, b in pairs if a in LABELS and b in LABELS)


def transition_probabilities(pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], float]:
    """P(to | from) over the 16 cells; rows with no observations are NaN."""
    counts = transition_counts(pairs)
    result = {}
    for source in LABELS:
        total = sum(counts[(source, target)] for target in LABELS)
        for target in LABELS:
            result[(source, target)] = counts[(source, target)] / total if total else float("nan")
    return result
