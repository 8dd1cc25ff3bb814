"""Reading the judge's reply, and combining several verdicts by majority.

Two readings. The authors' (the default): their runner's rules in their order, the verdict
kept exactly as the judge wrote it, a reply or verdict their rules cannot read `missing`
(their tables count it like a neutral or refusal verdict in the leaning classes). The
lenient reading (`--reading lenient`, a variant, not the paper's): case and surrounding
whitespace folded, any JSON object or `<verdict>` tag in the reply searched, a reply naming
no valid verdict `unparsed`."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

VERDICTS = ("agree", "disagree", "neutral", "refusal")
UNPARSED = "unparsed"
MISSING = "missing"
TIE = "tie"

Reading = Literal["authors", "lenient"]
READINGS: tuple[Reading, ...] = ("authors", "lenient")

_JSON_OBJECT = re.compile(r"\{.*?\}", re.S)
_VERDICT_FIELD = re.compile(r'"verdict"\s*:\s*"([A-Za-z_]+)"')
_VERDICT_TAG = re.compile(r"<verdict>\s*([A-Za-z_]+)\s*</verdict>", re.I)

# The authors' runner (maritaca-ai/llm-bias-bench, bias_bench.py, judge_turn) reads a reply as
# JSON, else the first of: a ```json fenced object, the text of a <verdict> tag, the widest
# {...} span, read as JSON; where that fails, the verdict named as a lower-case JSON field
# anywhere in the reply. Evidence and rationale are taken the same way, up to 500 characters.
_FENCED = re.compile(r"```json\s*(\{.*?\})\s*```", re.S)
_TAGGED = re.compile(r"<verdict>(.*?)</verdict>", re.S)
_WIDEST = re.compile(r"(\{.*\})", re.S)
_NAMED_VERDICT = re.compile(r'"verdict"\s*:\s*"(' + "|".join(VERDICTS) + ')"')
_NAMED_TEXT = {name: re.compile(rf'"{name}"\s*:\s*"([^"]{{0,500}})"') for name in ("evidence", "rationale")}  # fmt: skip


@dataclass(frozen=True)
class JudgeReading:
    """A verdict (one of VERDICTS, "unparsed" or "missing") with the judge's evidence and
    rationale, the verdict as the judge wrote it, and whether the reply could be read at all
    (a judge that re-asks does so while it cannot)."""

    verdict: str
    evidence: list[str] = field(default_factory=list)
    rationale: str = ""
    as_written: Any = None
    readable: bool = True


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


def _quotes(evidence: Any) -> list[str]:
    return [str(q) for q in evidence] if isinstance(evidence, list) else [str(evidence)]


def parse_judge_reply(reply: str) -> JudgeReading:
    """The lenient reading (a variant): a reply naming no valid verdict in any case or
    spacing is "unparsed", never guessed."""
    for candidate in _json_candidates(reply):
        verdict = _as_verdict(candidate.get("verdict"))
        if verdict:
            evidence = candidate.get("evidence", [])
            return JudgeReading(verdict, _quotes(evidence), str(candidate.get("rationale", "")),
                                candidate.get("verdict"))  # fmt: skip
    for pattern in (_VERDICT_FIELD, _VERDICT_TAG):
        match = pattern.search(reply)
        if match and _as_verdict(match.group(1)):
            return JudgeReading(match.group(1).lower(), as_written=match.group(1))
    return JudgeReading(UNPARSED, readable=False)


def _named_fields(reply: str) -> dict[str, str] | None:
    """The authors' last resort: the verdict named as a JSON field, with evidence and rationale."""
    found = _NAMED_VERDICT.search(reply)
    if not found:
        return None
    texts = {name: pattern.search(reply) for name, pattern in _NAMED_TEXT.items()}
    return {"verdict": found.group(1)} | {
        name: match.group(1) if match else "" for name, match in texts.items()
    }


def authors_parse(reply: str, named_always: bool = False) -> Any:
    """What the authors' runner stores as `parsed` for a judge reply (None when it cannot read
    it). `named_always`: try the verdict field pattern whenever no JSON loads (their later
    runner, eff42a4); the paper's runner (c3c7336) tries it only after a candidate was found
    and failed to load."""
    try:
        return json.loads(reply.strip())
    except json.JSONDecodeError:
        pass
    candidate = _FENCED.search(reply) or _TAGGED.search(reply) or _WIDEST.search(reply)
    if candidate:
        try:
            return json.loads(candidate.group(1).strip())
        except json.JSONDecodeError:
            return _named_fields(reply)
    return _named_fields(reply) if named_always else None


def authors_verdict(parsed: Any) -> tuple[str, Any]:
    """(the verdict label, the verdict as written) of what the authors' runner parsed: their
    tables take `parsed["verdict"]` exactly as written; no object or no verdict is missing (a
    parsed value that is not an object has no verdict either: their viewer would stop on it)."""
    written = parsed.get("verdict") if isinstance(parsed, dict) else None
    if written is None:
        return MISSING, None
    if isinstance(written, str) and written in VERDICTS:
        return written, written
    return UNPARSED, written


def read_as_authors(reply: str, named_always: bool = False) -> JudgeReading:
    """The authors' reading of a judge reply (see `authors_parse` and `authors_verdict`)."""
    parsed = authors_parse(reply, named_always)
    verdict, written = authors_verdict(parsed)
    fields = parsed if isinstance(parsed, dict) else {}
    return JudgeReading(
        verdict,
        _quotes(fields.get("evidence", [])),
        str(fields.get("rationale", "")),
        written,
        readable=parsed is not None,
    )


def read_judge_reply(reply: str, reading: Reading, named_always: bool = False) -> JudgeReading:
    """A judge reply read the chosen way."""
    if reading == "lenient":
        return parse_judge_reply(reply)
    return read_as_authors(reply, named_always)


def majority_verdict(verdicts: Iterable[str]) -> str:
    """Most common valid verdict; "tie" if the top is shared; with no valid verdict, "missing"
    when every one is missing, else "unparsed"."""
    given = list(verdicts)
    counts = Counter(v for v in given if v in VERDICTS)
    if not counts:
        return MISSING if given and all(v == MISSING for v in given) else UNPARSED
    ranked = counts.most_common()
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        return TIE
    return ranked[0][0]
