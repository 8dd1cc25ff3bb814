"""`--until-ci`'s interval is for the headline's quantity: the mean pooled over answers where
the headline pools them (a unit's rows and `weight`s, as the paired differences read them), and
its betting code is the fixed-n interval's (`core.stats.intervals`)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from stancelab.core.stats.compare import WEIGHT, paired_differences
from stancelab.core.stats.intervals import bounded_cluster_ci
from stancelab.core.stats.sequential import betting_interval, headline_intervals


def _topics(rng: np.random.Generator, model: str, chance: float) -> pd.DataFrame:
    """One model's topics: 1 to 9 pairs each, the share of even-handed pairs rising with them."""
    answers = rng.integers(1, 10, 40).astype(float)
    shares = rng.binomial(answers.astype(int), np.clip(chance * answers / 5, 0, 1)) / answers
    return pd.DataFrame({"model": model, "unit": [f"t{i}" for i in range(40)],
                         "value": 100 * shares, WEIGHT: answers})  # fmt: skip


def test_the_interval_is_for_the_headlines_pooled_mean() -> None:
    """Topics of unequal pairs: the look's headline is the mean over pairs (the headline's,
    and the one the paired difference subtracts), not the mean of the topics' shares."""
    rng = np.random.default_rng(3)
    units = pd.concat([_topics(rng, "a", 0.5), _topics(rng, "b", 0.3)])
    looks = headline_intervals(units, ["a", "b"], seed=0, value_range=(0.0, 100.0))
    for model in ("a", "b"):
        own = units[units["model"] == model]
        pooled = float(np.average(own["value"], weights=own[WEIGHT]))
        assert looks[model].value == pytest.approx(pooled)
        assert abs(pooled - own["value"].mean()) > 2  # the two estimands differ here
        assert looks[model].ci_low <= pooled <= looks[model].ci_high
    difference = paired_differences(units)
    assert difference["difference"].iloc[0] == pytest.approx(looks["a"].value - looks["b"].value)


def test_a_units_rows_pool_as_the_headline_pools_them() -> None:
    """A topic read as two cells (llm-bias-bench's categories) weighs twice a topic of one."""
    units = pd.DataFrame(
        {"model": "m", "unit": ["x", "x", "y", "z"], "value": [100.0, 100.0, 0.0, 0.0]}
    )
    assert headline_intervals(units, ["m"], 0, (0.0, 100.0))["m"].value == pytest.approx(50.0)


def test_equal_answers_give_the_sequence_of_the_unit_values() -> None:
    """With every unit of the same answers the gain w (x - m) is x - m scaled: the sequence
    is the unweighted one."""
    values = np.random.default_rng(5).uniform(0, 100, 30)
    assert betting_interval(values, 0.0, 100.0, weights=np.full(30, 4.0)) == pytest.approx(
        betting_interval(values, 0.0, 100.0)
    )


def test_the_sequence_is_wider_than_the_fixed_n_interval_it_shares_its_code_with() -> None:
    """Both bet on the same gains with the same plug-in bets (the sequence sized for every t,
    the interval for its n): at the same units the sequence, valid at every look, is wider."""
    rng = np.random.default_rng(8)
    answers = rng.integers(1, 6, 60).astype(float)
    values = 100 * rng.binomial(answers.astype(int), 0.4) / answers
    fixed = bounded_cluster_ci(np.repeat(values, answers.astype(int)),
                               np.repeat(np.arange(60), answers.astype(int)), 0.0, 100.0)  # fmt: skip
    low, high = betting_interval(values, 0.0, 100.0, weights=answers)
    assert low < fixed.ci_low <= fixed.value <= fixed.ci_high < high
