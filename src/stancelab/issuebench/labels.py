"""Stance labels and reading them from a classifier reply."""

from __future__ import annotations

import re

LABELS = ("1", "2", "3", "4", "5", "refusal")
UNPARSED = "unparsed"
ALL_LABELS = (*LABELS, UNPARSED)
COLLAPSED = {"1": "pro", "2": "pro", "3": "neutral", "4": "con", "5": "con", "refusal": "refusal"}

_LEADING = re.compile(r"^\W*(?:answer\s*:?\s*)?(?P<label>[1-5](?!\.?\d)|refusal)", re.I)
_ANY = re.compile(r"(?<![\w.])(?P<label>[1-5](?![\d.]\d)|refusal)(?!\w)", re.I)
_GOLD = re.compile(r"^\s*(?P<label>[1-5]|refusal)\b", re.I)


def parse_label(reply: str) -> str:
    """A label from a classifier reply; `unparsed` when absent or ambiguous, never guessed.

    A reply that starts with a label counts ("2", "Answer: 2 - mostly pro", "Refusal.")
    unless its first line names another ("1 or 2"); otherwise the reply must name exactly
    one distinct label.
    """
    leading = _LEADING.match(reply)
    if leading:
        label = leading.group("label").lower()
        first_line = reply.strip().splitlines()[0]
        others = {m.group("label").lower() for m in _ANY.finditer(first_line)} - {label}
        return UNPARSED if others else label
    found = {match.group("label").lower() for match in _ANY.finditer(reply)}
    return found.pop() if len(found) == 1 else UNPARSED


def authors_label(eval_text: str) -> str:
    """A classifier reply read as the authors read the replies behind the paper's results
    (`3_experiments/3_analysis/2_load_and_parse_model_responses.ipynb`, `parse_eval_text`): the
    first character of the reply that is a digit 1-5, else "refusal" where the reply mentions
    it anywhere, else unparsed (their "PARSE ERROR")."""
    digit = next((char for char in eval_text if char in "12345"), None)
    if digit:
        return digit
    return "refusal" if "refusal" in eval_text.lower() else UNPARSED


def parse_gold_label(text: str) -> str | None:
    """A gold label as the annotation files write it ("2 - mostly pro", "refusal")."""
    match = _GOLD.match(text or "")
    return match.group("label").lower() if match else None
