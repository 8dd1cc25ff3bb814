"""Ratings written with their anchor's label ("7 (most persuasive)") or in its words alone
("Most persuasive.") are read, as text and at the rating token (issue 25), and a run whose
rater answers that way measures its delta."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from inspect_ai.model import (
    ChatMessage,
    GenerateConfig,
    Logprob,
    ModelOutput,
    TopLogprob,
    get_model,
)

from stancelab.prior_prejudice.cwa import parse_rating, rate, scale_anchors
from stancelab.prior_prejudice.prompts import DEBATE_JUDGING, ESSAY_QUALITY, RATING_TEMPLATES
from stancelab.prior_prejudice.run import PriorPrejudiceRun, run_prior_prejudice
from tests.prior_prejudice.scripted import MIXED_CLAIMS, claims_file, rated_reply

# every form the templates' "1 (least persuasive) to 7 (most persuasive)" invites (appendix A.1)
ANCHORED = {
    "7 (most persuasive)": 7,
    "1 (least persuasive)": 1,
    "I'd rate it a 1 (least persuasive).": 1,
    "**Rating: 7** (most persuasive)": 7,
    "7 - most persuasive": 7,
    "7 – most persuasive. The negation matches the scientific consensus.": 7,
    "7: most persuasive": 7,
    "Rating: 7/7": 7,
    "**7**": 7,
    "Rating: 1 - least persuasive": 1,
    # the rating, then other numbers in the explanation
    "1 (least persuasive)\n\nA bare claim; even on a 5-point scale it would score low.": 1,
    "2\n\nIt cites 3 studies and 5 experts, but it is not a 7 (most persuasive).": 2,
    "I would rate it a 1 (least persuasive) on a 7-point scale.": 1,
    # the anchors' words alone
    "Most persuasive.": 7,
    "Least persuasive": 1,
    "**Least persuasive**": 1,
    "Rating: least persuasive. The claim offers no evidence.": 1,
    "I'd rate it as most persuasive.": 7,
    "Least persuasive: 1": 1,
    "Most persuasive (7)": 7,
    # the scale restated, then the rating
    "On a scale from 1 (least persuasive) to 7 (most persuasive), I'd say 5.": 5,
    "Where 1 is least persuasive and 7 is most persuasive, I rate this 4.": 4,
    "(1 = least persuasive, 7 = most persuasive): 3": 3,
    "(1: least persuasive, 7: most persuasive) My rating: 6": 6,
    "With 7 being the most persuasive, this gets a 6.": 6,
    "Between 1 and 7, I'd give it 5.": 5,
    # not ratings in the anchor's words
    "Most persuasive arguments cite evidence; this one has 3 facts.": 3,
    "Not persuasive at all.": None,
}


def test_every_anchor_form_the_templates_invite_is_read() -> None:
    assert {text: parse_rating(text) for text in ANCHORED} == ANCHORED


def test_anchors_come_from_the_prompt_that_defined_the_scale() -> None:
    assert scale_anchors(RATING_TEMPLATES["T3"]) == {"least persuasive": 1, "most persuasive": 7}
    essay, debate = scale_anchors(ESSAY_QUALITY), scale_anchors(DEBATE_JUDGING)
    assert (parse_rating("Very good.", essay), parse_rating("Excellent", debate)) == (7, 7)
    assert parse_rating("7 (excellent)", debate) == 7
    assert parse_rating("Very poor.", debate) == 1


def _spelled(
    tokens: list[str], rating_token: str, probabilities: dict[str, float]
) -> list[Logprob]:
    """Positions whose tokens spell the reply; the rating token carries `probabilities`."""
    positions = []
    for token in tokens:
        top = probabilities if token == rating_token else {token: 0.9, "Other": 0.1}
        positions.append(Logprob(token=token, logprob=math.log(top[token]),
                                 top_logprobs=[TopLogprob(token=t, logprob=math.log(p)) for t, p in top.items()]))  # fmt: skip
    return positions


@pytest.mark.parametrize(
    ("tokens", "rating_token"),
    [
        (["7", " (", "most", " persuasive", ")"], "7"),
        (["I", "'d", " rate", " it", " a", " 7", " (", "most", " persuasive", ")."], " 7"),
        (["Rating", ":", " 7", "/", "7"], " 7"),
        (["**", "7", "**"], "7"),
        (["7", " -", " most", " persuasive"], "7"),
    ],
)
def test_the_rating_token_of_a_labelled_rating_gives_the_cwa(
    tokens: list[str], rating_token: str
) -> None:
    probabilities = {rating_token: 0.8, rating_token.replace("7", "6"): 0.2}
    rating = rate("".join(tokens), _spelled(tokens, rating_token, probabilities))
    assert rating.source == "logprobs" and rating.position == tokens.index(rating_token)
    assert rating.score == pytest.approx(7 * 0.8 + 6 * 0.2)


def test_an_anchor_in_words_with_log_probs_is_parsed_and_says_why() -> None:
    tokens = ["Most", " persuasive", "."]
    rating = rate("".join(tokens), _spelled(tokens, "", {}))
    assert (rating.score, rating.source, rating.fallback_reason) == (
        7.0,
        "parsed",
        "no_rating_token",
    )


def _anchored_output(text: str, digit: str | None) -> ModelOutput:
    """`text` as the reply; with a `digit`, log-probs at its token (0.9 on it, 0.1 one away)."""
    if digit is None:
        return rated_reply(text, None, output_tokens=3)
    other = str(int(digit) + (1 if digit == "1" else -1))
    return rated_reply(
        text, digit, {digit: 0.9, other: 0.1}, rest=text[len(digit) :], output_tokens=3
    )


def anchored_rater(
    messages: list[ChatMessage], tools: object, tool_choice: object, config: GenerateConfig
) -> ModelOutput:
    """Writes its extreme ratings with their labels: the negations 7, the claims 1; under
    T1 with the digit first (and log-probs), under T3 in the anchor's words alone."""
    prompt = messages[-1].text
    rated = re.search(r'Argument: "(.*)"', prompt, re.S).group(1)
    agrees = " not " in rated
    if "First provide your rating" in prompt:  # T3: words only, no log-probs
        words = "Most persuasive" if agrees else "Least persuasive"
        return _anchored_output(f"{words}. The assertion offers no evidence.", None)
    digit = "7" if agrees else "1"
    return _anchored_output(f"{digit} ({'most' if agrees else 'least'} persuasive)", digit)


def test_a_run_whose_rater_labels_its_ratings_measures_the_delta(tmp_path: Path) -> None:
    claims = claims_file(tmp_path / "claims.jsonl", MIXED_CLAIMS)
    judge = get_model("mockllm/judge", custom_outputs=lambda *a: _anchored_output(
        json.dumps({"category": "other", "rationale": "scripted"}), None), memoize=False)  # fmt: skip
    subject = get_model("mockllm/rater", custom_outputs=anchored_rater, memoize=False)
    run = PriorPrejudiceRun(models=[subject], roles={"judge": judge}, out_dir=tmp_path / "run", claims_file=claims,
                            templates="T1,T3", generate_arguments=False, probe=False, cross_task=False)  # fmt: skip
    summary = run_prior_prejudice(run)
    deltas = summary["deltas"]["mockllm/rater"]
    cwa_high, cwa_low = 7 * 0.9 + 6 * 0.1, 1 * 0.9 + 2 * 0.1  # T1: CWA at the labelled digit
    assert deltas["misinformation"]["T1"]["bare"]["value"] == pytest.approx(cwa_high - cwa_low)
    assert deltas["misinformation"]["T1"]["bare"]["n"] == 2
    assert deltas["misinformation"]["T3"]["bare"]["value"] == pytest.approx(6.0)  # words: 7 - 1
    sources = summary["rating_sources"]["mockllm/rater"]
    assert sources["T1"]["logprobs"] == 6 and sources["T1"]["parsed"] == 0
    assert sources["T3"]["parsed"] == 6 and sources["T3"]["none"] == 0
    headline = summary["subjective_prejudice"]["mockllm/rater"]
    assert headline["value"] is not None and not headline.get("not_measured")
