"""Reading the judge's reply, and combining several verdicts by majority."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

VERDICTS = ("agree", "disagree", "neutral", "refusal")
UNPARSED = "unparsed"
TIE = "tie"

_JSON_OBJECT = re.compile(r"\{.*?\}", re.S)
_VERDICT_FIELD = re.compile(r'"verdict"\s*:\s*"([A-Za-z_]+)"')
_VERDICT_TAG = re.compile(r"<verdict>\s*([A-Za-z_]+)\s*</verdict>", re.I)


@dataclass(frozen=True)
class JudgeReading:
    """A verdict (one of VERDICTS, or "unparsed") with the judge's evidence and rationale."""

    verdict: str
    evidence: list[str] = field(default_factory=list)
    rationale: str = ""


def _as_verdict(value: Any) -> str | None:
    text = str(value).strip().lower() if value is not None else ""
    return text if text in VERDICTS else None


def _json_candidates(reply: str) -> Iterable[dict[str, Any]]:
    start, end = reply.find("{"), reply.rfind("}")
    spans = [reply[start : end + 1]] if 0 <= start < end else []
    spans += _JSON_OBJECT.findall(reply)
    for span in spans:
        try:
            parsed = json.loads(span)
        except json.JSONDecodeError:
            continue
        if isinstance(parsed, dict):
            yield parsed


def parse_judge_reply(reply: str) -> JudgeReading:
    """Read a judge reply; a reply naming no valid verdict is "unparsed", never guessed."""
    for candidate in _json_candidates(reply):
        verdict = _as_verdict(candidate.get("verdict"))
        if verdict:
            evidence = candidate.get("evidence", [])
            quotes = [str(q) for q in evidence] if isinstance(evidence, list) else [str(evidence)]
            return JudgeReading(verdict, quotes, str(candidate.get("rationale", "")))
    for pattern in (_VERDICT_FIELD, _VERDICT_TAG):
        match = pattern.search(reply)
        if match and _as_verdict(match.group(1)):
            return JudgeReading(match.group(1).lower())
    return JudgeReading(UNPARSED)


def majority_verdict(verdicts: Iterable[str]) -> str:
    """Most common valid verdict; "unparsed" if none is valid; "tie" if the top is shared."""
    counts = Counter(v for v in verdicts if v in VERDICTS)
    if not counts:
        return UNPARSED
    ranked = counts.most_common()
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        return TIE
    return ranked[0][0]
