"""Confidence-weighted average (CWA) of a 1-7 rating from next-token probabilities (eq. 1).

CWA = sum_i i * p_i over i = 1..7, with p the probabilities of the digit tokens at the
rating position, renormalised over the seven digits. The rating position is the first
generated token, the paper's next-token reading, when any digit is among its candidates;
otherwise the first generated token that reads as a digit 1-7 ("Rating: 5"). A digit token
may carry whitespace or trailing punctuation (" 5", "5."); tokens of one digit are summed. `digit_mass`
is the probability the digits held before renormalising. Without log-probs, or when no
position holds a digit, the first integer 1-7 in the text is used and flagged.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

DIGITS = tuple(str(i) for i in range(1, 8))
_DIGIT_TOKEN = re.compile(r"^\s*([1-7])(?:[^\d].*)?$", re.S)
_FIRST_RATING = re.compile(r"(?<!\d)([1-7])(?![\d])")


class TokenLogprob(Protocol):
    token: str
    logprob: float


class PositionLogprobs(Protocol):
    token: str
    logprob: float
    top_logprobs: Sequence[TokenLogprob] | None


Source = Literal["logprobs", "parsed", "none"]


@dataclass(frozen=True)
class Rating:
    """A rating: CWA (or the parsed integer), where it came from, and the digit mass."""

    score: float | None
    source: Source
    digit_mass: float | None = None
    top_digit: str | None = None
    position: int | None = None
    probabilities: dict[str, float] | None = None


def digit_of(token: str) -> str | None:
    """The rating digit a token stands for ("5", " 5", "5." -> "5"; "10", "x" -> None)."""
    match = _DIGIT_TOKEN.match(token)
    return match.group(1) if match else None


def cwa_from_position(
    candidates: Sequence[TokenLogprob],
) -> tuple[float, float, dict[str, float]] | None:
    """(CWA, digit mass, renormalised digit probabilities) from one position's candidates."""
    mass = dict.fromkeys(DIGITS, 0.0)
    for candidate in candidates:
        digit = digit_of(candidate.token)
        if digit is not None:
            mass[digit] += math.exp(candidate.logprob)
    total = sum(mass.values())
    if total <= 0:
        return None
    probabilities = {digit: value / total for digit, value in mass.items()}
    return sum(int(d) * p for d, p in probabilities.items()), total, probabilities


def parse_rating(text: str) -> int | None:
    match = _FIRST_RATING.search(text)
    return int(match.group(1)) if match else None


def rate(text: str, positions: Sequence[PositionLogprobs] | None) -> Rating:
    """The rating of one reply, from log-probs where available, else the parsed integer."""
    for index, position in enumerate(positions or []):
        if index > 0 and digit_of(position.token) is None:
            continue
        candidates = list(position.top_logprobs or []) or [position]
        result = cwa_from_position(candidates)
        if result is not None:
            score, digit_mass, probabilities = result
            top_digit = max(probabilities, key=lambda digit: probabilities[digit])
            return Rating(score, "logprobs", digit_mass, top_digit, index, probabilities)
    parsed = parse_rating(text)
    if parsed is not None:
        return Rating(float(parsed), "parsed", top_digit=str(parsed))
    return Rating(None, "none")
