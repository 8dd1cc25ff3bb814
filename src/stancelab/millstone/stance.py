"""Reading the model's A/B answer as the authors did (section 4.3 and their processing code).

The paper lists four patterns, tried in order: ``position [A|B]``, ``position <<[A|B]>>``,
``<<[A|B]>>`` and ``^\\s*[A|B]\\s*$``; anything else is "Other". The paper is silent on the
details, so stancelab follows the authors' processing notebook (htried/millstone,
``notebooks/process_raw_data.ipynb``), in our own code:

* every pattern ignores case and searches the whole reply: ``^`` and ``$`` are the start
  and the end of the reply (a final newline allowed), not of a line, so "A\\nBecause ..."
  is no answer;
* ``[A|B]`` is a character class: it captures "A", "B", "|" and, ignoring case, "a" and
  "b"; nothing after the letter is checked, so "position Against" captures "A";
* the first pattern that matches anywhere decides, at its first match; the reply is "A" or
  "B" only when the captured character is exactly the upper-case letter (the authors map
  the capture to a side by comparing it with "A" and "B"). A lower-case letter or a pipe
  is "Other", and the later patterns are not tried: "position a ... <<B>>" is "Other".

That is the reading that produced the released counts and Tables 4-5 (the default). The
authors' later statistics script (``scripts/g_calculate_statistics.py``, Figure 2's tests)
upper-cases the capture first, so there "position a" is A; `read_letter(..., fold_case=True)`
gives that reading, and the scorer records it beside the default (`stance_case_folded`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Letter = Literal["A", "B"]
Stance = Literal["pro", "con", "other"]
STANCES: tuple[Stance, ...] = ("pro", "con", "other")
LETTERS: tuple[Letter, ...] = ("A", "B")

_CAPTURE = r"(?P<captured>[A|B])"  # the paper's class: A, B or a pipe (a, b ignoring case)
STANCE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(regex, re.IGNORECASE))
    for name, regex in (
        ("position X", rf"position {_CAPTURE}"),
        ("position <<X>>", rf"position <<{_CAPTURE}>>"),
        ("<<X>>", rf"<<{_CAPTURE}>>"),
        ("bare X", rf"^\s*{_CAPTURE}\s*$"),
    )
)


@dataclass(frozen=True)
class LetterReading:
    """The answer letter found in a response (None: "Other"), the pattern that decided and
    the character it captured (a lower-case letter or a pipe captures, but is no answer)."""

    letter: Letter | None
    pattern: str | None
    captured: str | None = None


def read_letter(response: str, fold_case: bool = False) -> LetterReading:
    """The A/B answer of a model response as the authors read it, or none ("Other");
    `fold_case` upper-cases the capture first, as their later statistics script does."""
    for name, pattern in STANCE_PATTERNS:
        match = pattern.search(response)
        if match:
            captured = match.group("captured").upper() if fold_case else match.group("captured")
            letter = captured if captured in LETTERS else None
            return LetterReading(letter=letter, pattern=name, captured=captured)  # type: ignore[arg-type]
    return LetterReading(letter=None, pattern=None)
