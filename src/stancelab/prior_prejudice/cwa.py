"""Confidence-weighted average (CWA) of a 1-7 rating from next-token probabilities (eq. 1).

CWA = sum_i i * p_i over i = 1..7, with p the probabilities of the digit tokens at the
rating position, renormalised over the seven digits. The rating position is the token at
which the model writes its rating: the first generated digit 1-7 that is not part of a
restatement of the scale ("from 1 to 7", "1 (least persuasive)", "out of 7"), i.e. the digit
the text parser reads as the rating. A digit token may carry whitespace or trailing
punctuation (" 5", "5."); tokens of one digit are summed. `digit_mass` is the probability
the digits held at that position before renormalising. When it is below `MIN_DIGIT_MASS`
the renormalised distribution describes an event the model itself thought less likely
than not, so the parsed rating is used instead and the reason recorded. Without log-probs,
or when no token writes the rating, the parsed rating is used and flagged.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

DIGITS = tuple(str(i) for i in range(1, 8))
MIN_DIGIT_MASS = 0.5
_DIGIT_TOKEN = re.compile(r"^\s*([1-7])(?:[^\d].*)?$", re.S)
_STANDALONE = re.compile(r"(?<![\d.,])([1-7])(?![\d]|\.\d|,\d)")
# Restatements of the scale, blanked before the rating is read: "from 1 to 7", "1-7",
# "1 (least persuasive) to 7 (most persuasive)", "a scale of 1 to 7", "out of 7", "/7".
_SCALE = (
    re.compile(r"(?<!\d)1\s*(?:\([^)]*\)\s*)?(?:-|–|—|to|through)\s*7(?:\s*\([^)]*\))?(?!\d)", re.I),
    re.compile(r"(?:\bout\s+of|/)\s*7(?!\d)", re.I),
    re.compile(r"(?<!\d)[1-7]\s*\((?:least|most)\b[^)]*\)", re.I),
)

FallbackReason = Literal["", "no_logprobs", "no_rating_token", "low_digit_mass"]


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
    fallback_reason: FallbackReason = ""


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


def _blank_scale(text: str) -> str:
    for pattern in _SCALE:
        text = pattern.sub(lambda match: " " * len(match.group(0)), text)
    return text


def rating_offset(text: str) -> int | None:
    """Character offset of the rating digit in a reply: the first standalone 1-7 once the
    scale's own numbers are blanked ("on a scale from 1 to 7, I'd rate this a 6" -> the 6)."""
    match = _STANDALONE.search(_blank_scale(text))
    return match.start(1) if match else None


def parse_rating(text: str) -> int | None:
    offset = rating_offset(text)
    return int(text[offset]) if offset is not None else None


def rating_position(text: str, positions: Sequence[PositionLogprobs]) -> int | None:
    """Index of the generated token that writes the rating digit. Located by character
    offset when the tokens spell the reply; otherwise the first digit token of that value."""
    offset = rating_offset(text)
    if offset is None:
        return None
    digit = text[offset]
    if "".join(position.token for position in positions) == text:
        start = 0
        for index, position in enumerate(positions):
            end = start + len(position.token)
            if start <= offset < end:
                return index if digit_of(position.token) == digit else None
            start = end
        return None
    # the tokens do not spell the reply (e.g. it was trimmed): take the digit token of the
    # same value and rank, so "from 1 to 7, I rate it 7" still finds the second 7
    rank = sum(match.group(1) == digit for match in _STANDALONE.finditer(text[:offset]))
    candidates = [i for i, position in enumerate(positions) if digit_of(position.token) == digit]
    return candidates[rank] if rank < len(candidates) else None


def _parsed(text: str, reason: FallbackReason, digit_mass: float | None = None) -> Rating:
    parsed = parse_rating(text)
    if parsed is None:
        return Rating(None, "none", digit_mass, fallback_reason=reason)
    return Rating(float(parsed), "parsed", digit_mass, str(parsed), fallback_reason=reason)


def rate(
    text: str,
    positions: Sequence[PositionLogprobs] | None,
    min_digit_mass: float = MIN_DIGIT_MASS,
) -> Rating:
    """The rating of one reply: CWA at the rating position when the digits hold at least
    `min_digit_mass` there, else the parsed integer with the reason."""
    if not positions:
        return _parsed(text, "no_logprobs")
    index = rating_position(text, positions)
    if index is None:
        return _parsed(text, "no_rating_token")
    position = positions[index]
    result = cwa_from_position(list(position.top_logprobs or []) or [position])
    if result is None:
        return _parsed(text, "no_rating_token")
    score, digit_mass, probabilities = result
    if digit_mass < min_digit_mass:
        return _parsed(text, "low_digit_mass", digit_mass)
    top_digit = max(probabilities, key=lambda digit: probabilities[digit])
    return Rating(score, "logprobs", digit_mass, top_digit, index, probabilities)
