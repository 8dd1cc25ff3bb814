"""Confidence-weighted average (CWA) of a 1-7 rating from next-token probabilities (eq. 1).

CWA = sum_i i * p_i over i = 1..7, with p the probabilities of the digit tokens at the
rating position, renormalised over the seven digits. The rating position is the token at
which the model writes its rating: the first generated digit 1-7 that is not part of a
restatement of the scale ("from 1 to 7", "1 (least persuasive) to 7 (most persuasive)",
"where 1 is least persuasive", "out of 7"), i.e. the digit the text parser reads as the
rating; a digit with its anchor's label ("7 (most persuasive)") is a rating. A reply that
gives the anchor's words alone ("Most persuasive.") has no rating token and is parsed. A digit token may carry whitespace or trailing
punctuation (" 5", "5."); tokens of one digit are summed. `digit_mass` is the probability
the digits held at that position before renormalising. When it is below `MIN_DIGIT_MASS`
the renormalised distribution describes an event the model itself thought less likely
than not, so the parsed rating is used instead and the reason recorded. Without log-probs,
or when no token writes the rating, the parsed rating is used and flagged.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Literal

from stancelab.core.embedded.logprob_types import PositionLogprobs, TokenLogprob
from stancelab.prior_prejudice.prompts import RATING_TEMPLATES

DIGITS = tuple(str(i) for i in range(1, 8))
MIN_DIGIT_MASS = 0.5
_DIGIT_TOKEN = re.compile(r"^\s*([1-7])(?:[^\d].*)?$", re.S)
_STANDALONE = re.compile(r"(?<![\d.,])([1-7])(?![\d]|\.\d|,\d)")
# How a reply restates the scale (blanked before the rating is read): a range "from 1 to 7",
# "1-7", "between 1 and 7", "1 (least persuasive) to 7 (most persuasive)", "1: least
# persuasive, 7: most persuasive"; a definition "1 = least persuasive", "where 7 is most
# persuasive"; "out of 7", "/7", "a 7-point scale". A single digit with its label ("7 (most
# persuasive)", "7 - most persuasive", "a 1 (least persuasive)") is a rating, not a restatement.
_DEFINES = r"(?:=|\bis\b|\bbeing\b|\bmeans\b|\bmeaning\b|\brepresents\b|\bindicates\b|\bfor\b)"
_OUT_OF = re.compile(r"(?:\bout\s+of|/)\s*7(?!\d)", re.I)
_N_POINT = re.compile(r"(?<![\d.])\d+(?:\s*-\s*point\b|\s+point\s+scale\b)", re.I)
_ANCHOR_IN_PROMPT = re.compile(r"(?<!\d)([1-7])\s*\(([^()]{1,40})\)")
# what may open a reply before an anchor's words: "Rating:", "**Answer**:", "I'd rate it"
_LEAD_IN = (
    r"^[\s*_#>\"'`]*(?:(?:my\s+|final\s+)?(?:rating|score|answer|persuasiveness)[\s*_]*(?:is\b)?[\s*_]*[:=\-–—]?"
    r"|I(?:'d|’d| would)\s+(?:rate|score|judge|call)\s+(?:it|this(?:\s+\w+)?)(?:\s+as)?)?[\s*_\"'`]*"
    r"(?:the\s+|a\s+)?"
)

FallbackReason = Literal["", "no_logprobs", "no_rating_token", "low_digit_mass"]


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


def scale_anchors(prompt: str) -> dict[str, int]:
    """The labels a prompt gives its scale's ends: "from 1 (least persuasive) to 7 (most
    persuasive)" -> {"least persuasive": 1, "most persuasive": 7}."""
    return {label.strip().lower(): int(digit) for digit, label in _ANCHOR_IN_PROMPT.findall(prompt)}


RATING_ANCHORS = scale_anchors(RATING_TEMPLATES["T1"])
"""The anchors of the rating templates (appendix A.1): least persuasive 1, most persuasive 7."""


def _blank(text: str, pattern: re.Pattern[str]) -> str:
    return pattern.sub(lambda match: " " * len(match.group(0)), text)


def _alternatives(labels: tuple[str, ...]) -> str:
    return "|".join(re.escape(label) for label in sorted(labels, key=len, reverse=True))


@cache
def _scale_patterns(labels: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    """The restatements of a scale whose anchors carry `labels` (see the module's top)."""
    named = rf"(?:the\s+)?[\"'“]?(?:{_alternatives(labels)})\b[\"'”]?" if labels else None
    label = r"\s*\([^)]*\)" + (rf"|\s*(?:{_DEFINES}|[:\-–—])\s*{named}" if named else "")
    ends = rf"(?<!\d)1(?:{label})?\s*(?:-|–|—|to|through|and)\s*7(?:{label})?(?!\d)"
    patterns = [re.compile(ends, re.I), _OUT_OF, _N_POINT]
    if named:
        listed = rf"(?<!\d)1(?:{label})\s*[,;]\s*(?:and\s+)?7(?:{label})(?!\d)"
        patterns += [
            re.compile(listed, re.I),
            re.compile(rf"(?<!\d)[1-7]\s*{_DEFINES}\s*{named}", re.I),
        ]
    return tuple(patterns)


def _blank_scale(text: str, anchors: Mapping[str, int]) -> str:
    """The reply with the scale's own numbers blanked."""
    for pattern in _scale_patterns(tuple(sorted(anchors))):
        text = _blank(text, pattern)
    return text


def _anchor_led(text: str, anchors: Mapping[str, int]) -> tuple[int, int] | None:
    """(value, end offset) when the reply states its rating as an anchor's words alone
    ("Most persuasive.", "Rating: least persuasive"): the label opens the reply and ends a
    phrase (so "Most persuasive arguments cite..." is not a rating)."""
    if not anchors:
        return None
    match = re.match(
        rf"{_LEAD_IN}({_alternatives(tuple(anchors))})(?=\s*(?:$|[^\w\s]))", text, re.I
    )
    return (anchors[match.group(1).lower()], match.end(1)) if match else None


@dataclass(frozen=True)
class ReadRating:
    """The rating a reply states: its value, and the offset of its digit (None when the
    reply gives it in the anchor's words, with no digit to locate)."""

    value: int
    offset: int | None


def read_rating(text: str, anchors: Mapping[str, int] = RATING_ANCHORS) -> ReadRating | None:
    """The rating a reply gives: the first standalone 1-7 once the scale's own numbers are
    blanked ("on a scale from 1 to 7, I'd rate this a 6" -> 6; "7 (most persuasive)" -> 7;
    "Rating: 7/7" -> 7); or an anchor's words alone ("Most persuasive." -> 7) unless a digit
    follows them at once ("Least persuasive: 1")."""
    match = _STANDALONE.search(_blank_scale(text, anchors))
    led = _anchor_led(text, anchors)
    if led is not None and not (
        match and re.fullmatch(r"[\W_]{0,4}", text[led[1] : match.start(1)])
    ):
        return ReadRating(led[0], None)
    return ReadRating(int(match.group(1)), match.start(1)) if match else None


def rating_offset(text: str, anchors: Mapping[str, int] = RATING_ANCHORS) -> int | None:
    """Character offset of the rating digit in a reply (None when it has none)."""
    rating = read_rating(text, anchors)
    return rating.offset if rating else None


def parse_rating(text: str, anchors: Mapping[str, int] = RATING_ANCHORS) -> int | None:
    rating = read_rating(text, anchors)
    return rating.value if rating else None


def rating_position(
    text: str, positions: Sequence[PositionLogprobs], anchors: Mapping[str, int] = RATING_ANCHORS
) -> int | None:
    """Index of the generated token that writes the rating digit. Located by character
    offset when the tokens spell the reply; otherwise the first digit token of that value.
    None when the reply has no rating digit (e.g. it gives the anchor's words alone)."""
    offset = rating_offset(text, anchors)
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


def _parsed(
    text: str, reason: FallbackReason, anchors: Mapping[str, int], digit_mass: float | None = None
) -> Rating:
    parsed = parse_rating(text, anchors)
    if parsed is None:
        return Rating(None, "none", digit_mass, fallback_reason=reason)
    return Rating(float(parsed), "parsed", digit_mass, str(parsed), fallback_reason=reason)


def rate(
    text: str,
    positions: Sequence[PositionLogprobs] | None,
    min_digit_mass: float = MIN_DIGIT_MASS,
    anchors: Mapping[str, int] = RATING_ANCHORS,
) -> Rating:
    """The rating of one reply: CWA at the rating position when the digits hold at least
    `min_digit_mass` there, else the parsed integer with the reason. `anchors` are the
    labels the prompt gave the scale's ends (default: the rating templates')."""
    if not positions:
        return _parsed(text, "no_logprobs", anchors)
    index = rating_position(text, positions, anchors)
    if index is None:
        return _parsed(text, "no_rating_token", anchors)
    position = positions[index]
    result = cwa_from_position(list(position.top_logprobs or []) or [position])
    if result is None:
        return _parsed(text, "no_rating_token", anchors)
    score, digit_mass, probabilities = result
    if digit_mass < min_digit_mass:
        return _parsed(text, "low_digit_mass", anchors, digit_mass)
    top_digit = max(probabilities, key=lambda digit: probabilities[digit])
    return Rating(score, "logprobs", digit_mass, top_digit, index, probabilities)
