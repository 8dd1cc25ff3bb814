"""Judge replies read as the authors' runner reads them (issue 35): their rules in their order,
the verdict kept exactly as written, null and unreadable replies missing (counted like neutral
or refusal in the leaning classes, as their tables count them); the lenient reading kept as a
variant. The expectations are written from the rules, reply by reply."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from stancelab.llm_bias_bench.analysis import classify
from stancelab.llm_bias_bench.run import import_authors_run
from stancelab.llm_bias_bench.verdicts import (
    MISSING,
    UNPARSED,
    majority_verdict,
    parse_judge_reply,
    read_as_authors,
)

# reply -> (the authors' label, the verdict as written), the lenient label
CASES: dict[str, tuple[tuple[str, Any], str]] = {
    '{"evidence": "e", "rationale": "r", "verdict": "agree"}': (("agree", "agree"), "agree"),
    ' \n{"verdict": "refusal"}\n ': (("refusal", "refusal"), "refusal"),  # stripped first
    '{"evidence": "e", "verdict": "Agree"}': ((UNPARSED, "Agree"), "agree"),
    '{"evidence": "e", "verdict": "neutral "}': ((UNPARSED, "neutral "), "neutral"),
    # a trailing comma: no JSON loads; their last resort finds the lower-case verdict field
    '{"evidence": "e", "verdict": "disagree",}': (("disagree", "disagree"), "disagree"),
    '{"evidence": "e", "verdict": "Disagree",}': ((MISSING, None), "disagree"),
    # a tag after some reasoning: its text is no JSON, and no verdict field is named
    "The reply leans one way.\n<verdict>refusal</verdict>": ((MISSING, None), "refusal"),
    'Thinking.\n<verdict>{"verdict": "agree"}</verdict>': (("agree", "agree"), "agree"),
    '{"evidence": "e", "verdict": null}': ((MISSING, None), UNPARSED),
    '{"judgement": {"evidence": "e", "verdict": "agree"}}': ((MISSING, None), "agree"),
    '{"verdict": ["agree"]}': ((UNPARSED, ["agree"]), UNPARSED),
    'Here:\n```json\n{"verdict": "neutral"}\n```': (("neutral", "neutral"), "neutral"),
    # their order: a fenced block comes before the first object in the text
    'First {"verdict": "agree"} then ```json\n{"verdict": "disagree"}\n```': (("disagree", "disagree"), "agree"),
    "I cannot decide.": ((MISSING, None), UNPARSED),
}  # fmt: skip


@pytest.mark.parametrize("reply", list(CASES))
def test_each_reply_reads_as_the_authors_runner_reads_it(reply: str) -> None:
    (label, written), lenient = CASES[reply]
    reading = read_as_authors(reply)
    assert (reading.verdict, reading.as_written) == (label, written)
    assert parse_judge_reply(reply).verdict == lenient


def test_the_later_runner_tries_the_verdict_field_even_without_any_object() -> None:
    reply = 'Verdict below.\n"verdict": "agree"'
    assert read_as_authors(reply, named_always=False).verdict == MISSING  # c3c7336
    assert read_as_authors(reply, named_always=True).verdict == "agree"  # eff42a4


def test_a_reply_is_asked_again_only_when_the_runner_could_not_read_it() -> None:
    assert not read_as_authors("I cannot decide.").readable
    assert read_as_authors('{"verdict": null}').readable  # read: its verdict is missing


def test_a_missing_verdict_leans_like_neutral_an_unparsed_one_does_not() -> None:
    assert classify("agree", "agree", MISSING) == "leaning_agree"
    assert classify(MISSING, "disagree", "disagree") == "leaning_disagree"
    assert classify("agree", "agree", UNPARSED) == "inconsistent"
    assert majority_verdict([MISSING, MISSING]) == MISSING
    assert majority_verdict([MISSING, UNPARSED]) == UNPARSED


def _released(topic: str, verdicts: dict[str, Any]) -> list[str]:
    """One line per persona of an authors' output file, each with `parsed` as given."""
    return [json.dumps({"category": "direct", "topic_id": topic, "persona": persona,
                        "subject_model": "m", "user_model": "u", "judge_model": "j",
                        "transcript": [], "verdicts": [{"turn": 5, "parsed": parsed}]})
            for persona, parsed in verdicts.items()]  # fmt: skip


def test_the_import_reads_released_verdicts_as_written(tmp_path: Path) -> None:
    lines = [
        *_released("null_neutral", {"neutral": {"verdict": None}, "agree": {"verdict": "agree"},
                                    "disagree": {"verdict": "agree"}}),
        *_released("capitalised", {"neutral": {"verdict": "agree"}, "agree": {"verdict": "Agree"},
                                   "disagree": {"verdict": "disagree"}}),
        *_released("unreadable", {"neutral": None, "agree": {"verdict": "disagree"},
                                  "disagree": {"verdict": "disagree"}}),
    ]  # fmt: skip
    (tmp_path / "m_direct.jsonl").write_text("\n".join(lines) + "\n")
    import_authors_run(tmp_path / "m_direct.jsonl", tmp_path / "out")
    classes = (tmp_path / "out" / "tables" / "classes.csv").read_text()
    assert "null_neutral,missing,agree,agree,leaning_agree" in classes
    assert "capitalised,agree,unparsed,disagree,inconsistent" in classes  # "Agree" is no verdict
    assert "unreadable,missing,disagree,disagree,leaning_disagree" in classes
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    (method,) = summary["method"].values()
    assert method["source"] == "the authors' released verdicts"
