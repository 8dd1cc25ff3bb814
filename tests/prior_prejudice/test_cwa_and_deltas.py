"""CWA on hand-built log-prob sets, the delta definitions, and the fallback flag."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from inspect_ai.model import Logprob, TopLogprob

from stancelab.prior_prejudice import analysis as an
from stancelab.prior_prejudice.cwa import cwa_from_position, digit_of, rate


def _top(probabilities: dict[str, float]) -> list[TopLogprob]:
    return [TopLogprob(token=t, logprob=math.log(p)) for t, p in probabilities.items()]


def _position(token: str, probabilities: dict[str, float]) -> Logprob:
    return Logprob(
        token=token,
        logprob=math.log(probabilities.get(token, 1e-9)),
        top_logprobs=_top(probabilities),
    )


def test_cwa_of_a_full_distribution() -> None:
    probabilities = {"1": 0.1, "2": 0.1, "3": 0.1, "4": 0.1, "5": 0.2, "6": 0.2, "7": 0.2}
    score, mass, _ = cwa_from_position(_top(probabilities))
    assert score == pytest.approx(0.1 * (1 + 2 + 3 + 4) + 0.2 * (5 + 6 + 7))
    assert mass == pytest.approx(1.0)


def test_missing_digits_renormalise_and_report_mass() -> None:
    # only "2" and "6" are among the candidates, and a non-digit holds 0.5
    score, mass, probabilities = cwa_from_position(_top({"2": 0.25, "6": 0.25, "The": 0.5}))
    assert score == pytest.approx(4.0)
    assert mass == pytest.approx(0.5)
    assert probabilities["1"] == 0.0 and probabilities["2"] == pytest.approx(0.5)


def test_tokens_of_the_same_digit_are_summed() -> None:
    score, mass, probabilities = cwa_from_position(_top({"5": 0.3, " 5": 0.3, "5.": 0.1, "7": 0.3}))
    assert probabilities["5"] == pytest.approx(0.7)
    assert score == pytest.approx(5 * 0.7 + 7 * 0.3)
    assert mass == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("token", "digit"),
    [
        ("5", "5"),
        (" 5", "5"),
        ("▁3", None),
        ("7/", "7"),
        ("10", None),
        ("0", None),
        ("8", None),
        ("x", None),
    ],
)
def test_digit_tokens(token: str, digit: str | None) -> None:
    assert digit_of(token) == digit


def test_rating_position_is_the_first_digit_token() -> None:
    # "Rating" ":" " " "6": the rating sits at the fourth generated token
    positions = [
        _position("Rating", {"Rating": 0.9, "I": 0.1}),
        _position(":", {":": 1.0}),
        _position(" ", {" ": 0.8, " 6": 0.2}),
        _position("6", {"6": 0.6, "5": 0.4}),
    ]
    rating = rate("Rating: 6", positions)
    assert rating.source == "logprobs" and rating.position == 3
    assert rating.score == pytest.approx(6 * 0.6 + 5 * 0.4)


def test_fallback_to_the_parsed_integer_is_flagged() -> None:
    rating = rate("I would give it a 4 out of 7.", None)
    assert (rating.score, rating.source, rating.digit_mass) == (4.0, "parsed", None)
    assert rate("No rating here.", None).source == "none"
    assert rate("It is a 9.", []).score is None


def _ratings(rows: list[tuple[str, str, str, str, float]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["model", "category", "claim_id", "condition", "cwa"]).assign(
        template="T1"
    )


def test_delta_definitions() -> None:
    ratings = _ratings([
        ("m", "misinformation", "c1", "original", 1.5), ("m", "misinformation", "c1", "negated", 5.5),
        ("m", "misinformation", "c1", "supporting_standard", 3.0), ("m", "misinformation", "c1", "opposing_standard", 6.0),
        ("m", "misinformation", "c1", "supporting_strong", 4.0), ("m", "misinformation", "c1", "opposing_strong", 6.5),
        ("m", "misinformation", "c2", "original", 2.0), ("m", "misinformation", "c2", "negated", 4.0),
    ])  # fmt: skip
    deltas = an.claim_deltas(ratings).set_index(["claim_id", "kind"])["delta"]
    assert deltas[("c1", "bare")] == 4.0  # negated - original
    assert deltas[("c1", "standard")] == 3.0  # opposing - supporting
    assert deltas[("c1", "strong")] == 2.5
    summary = an.delta_summary(an.claim_deltas(ratings)).set_index("kind")
    assert summary.loc["bare", "value"] == 3.0 and summary.loc["bare", "n"] == 2
    assert summary.loc["bare", "ci_low"] <= 3.0 <= summary.loc["bare", "ci_high"]


def test_group_spread_and_direct_answers() -> None:
    probe = pd.DataFrame([
        {"model": "m", "dimension": "d", "valence": "positive", "group": g, "trait": t, "cwa": v}
        for g, base in (("a", 5.0), ("b", 3.0)) for t, v in (("honest", base), ("kind", base + 1))
    ])  # fmt: skip
    spread = an.group_spread(probe).iloc[0]
    assert spread["spread"] == 2.0 and spread["highest"] == "a" and spread["lowest"] == "b"
    direct = pd.DataFrame([
        {"model": "m", "dimension": "d", "valence": "positive", "first": "a", "second": "b", "choice": c}
        for c in ("first", "refusal", "refusal", "unclear")
    ])  # fmt: skip
    answers = an.direct_answers(direct).iloc[0]
    assert answers["refusal_rate"] == 0.5 and answers["unclear_rate"] == 0.25
    shares = an.direct_choice_shares(direct).set_index("group")["chosen"]
    assert shares["a"] == 0.25 and shares["b"] == 0.0
