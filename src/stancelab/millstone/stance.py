"""Reading the model's A/B answer with the paper's regular expressions (section 4.3).

The paper searches, in order, for ``position [A|B]``, ``position <<[A|B]>>``,
``<<[A|B]>>`` and ``^\\s*[A|B]\\s*$``; anything else is "Other". We keep those
four patterns in that order, with four documented readings:

* ``[A|B]`` is written ``[AB]``: inside a character class ``|`` is a literal
  pipe, which is no answer.
* the word "position" matches in any case ("Position A" is an answer), while
  the letter stays upper case;
* a letter directly followed by another letter does not count ("position
  Against" is not "position A");
* ``^`` and ``$`` are read per line, so a reply whose first line is just
  "A" followed by an explanation counts as A.

The first pattern that matches decides; within it, the first match.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Letter = Literal["A", "B"]
Stance = Literal["pro", "con", "other"]
STANCES: tuple[Stance, ...] = ("pro", "con", "other")

_LETTER = r"(?P<letter>[AB])(?![A-Za-z])"
STANCE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("position X", re.compile(r"(?i:position) " + _LETTER)),
    ("position <<X>>", re.compile(r"(?i:position) <<(?P<letter>[AB])>>")),
    ("<<X>>", re.compile(r"<<(?P<letter>[AB])>>")),
    ("bare X", re.compile(r"^[ \t]*(?P<letter>[AB])[ \t]*$", re.MULTILINE)),
)


@dataclass(frozen=True)
class LetterReading:
    """The answer letter found in a response (None: "Other") and the pattern that found it."""

    letter: Letter | None
    pattern: str | None


def read_letter(response: str) -> LetterReading:
    """Find the A/B answer in a model response, or report none ("Other")."""
    for name, pattern in STANCE_PATTERNS:
        match = pattern.search(response)
        if match:
            return LetterReading(letter=match.group("letter"), pattern=name)  # type: ignore[arg-type]
    return LetterReading(letter=None, pattern=None)
