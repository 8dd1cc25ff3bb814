"""One sign-flip test (`core.stats.signflip`): the paired test's p, the matrix cell's p of "no
stance" (`family.sign_flip_p`, `topics.stance_p`) and the planning's vectorised p are the same
numbers, exact wherever the units allow."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binomtest

from stancelab.core.data.topics import stance_p
from stancelab.core.stats import signflip
from stancelab.core.stats.compare import paired_test
from stancelab.core.stats.family import sign_flip_p as cell_p
from stancelab.core.stats.signflip import sign_flip_p, sign_flip_pvalues


def _sample(rng: np.random.Generator, kind: str, units: int) -> tuple[np.ndarray, np.ndarray]:
    """Unit values and weights: continuous, tied integers, weighted, or yes/no differences."""
    ones = np.ones(units)
    if kind == "normal":
        return rng.normal(0.3, 1.0, units), ones
    if kind == "ties":
        return rng.integers(-2, 3, units).astype(float), ones
    if kind == "weights":
        return rng.normal(0.3, 1.0, units), rng.integers(1, 5, units).astype(float)
    return rng.choice([-1.0, 0.0, 1.0], units), ones


@pytest.mark.parametrize("units", [2, 5, 6, 9, 15, 16, 24, 40])
@pytest.mark.parametrize("kind", ["normal", "ties", "weights", "yes/no"])
def test_the_paired_test_the_cell_test_and_the_planning_share_one_p(kind: str, units: int) -> None:
    rng = np.random.default_rng(units)
    samples = [_sample(rng, kind, units) for _ in range(6)]
    values = np.array([values for values, _ in samples])
    weights = np.array([weights for _, weights in samples])
    batch = sign_flip_pvalues(values, weights)
    for row, (differences, stakes) in enumerate(samples):
        paired = paired_test(differences, np.zeros(units), value_range=(-1.0, 1.0),
                             weights_a=stakes, weights_b=stakes).p  # fmt: skip
        assert paired == pytest.approx(batch[row], abs=1e-9), (kind, units, row)
        assert sign_flip_p(differences, stakes) == pytest.approx(batch[row], abs=1e-9)
        if kind != "weights":  # a cell's units each one score: the sums are the values
            assert cell_p(differences) == pytest.approx(batch[row], abs=1e-9)
            assert stance_p(differences) == pytest.approx(batch[row], abs=1e-9)


def test_a_cells_answers_pool_as_the_headline_weights_them() -> None:
    """A cell's p over units of several answers is the weighted test of the pooled mean: the
    sum of each unit's answers is its mean times its answers."""
    scores = np.array([1.0, 1.0, -1.0, 1.0, 1.0, 1.0, -1.0, 1.0, 1.0, 1.0])
    units = ["a", "a", "a", "b", "c", "c", "d", "e", "e", "f"]
    means = np.array([1 / 3, 1.0, 1.0, -1.0, 1.0, 1.0])
    answers = np.array([3.0, 1.0, 2.0, 1.0, 2.0, 1.0])
    assert stance_p(scores, units) == pytest.approx(sign_flip_p(means, answers), abs=1e-12)


def test_a_unanimous_cell_of_many_units_gets_its_exact_p() -> None:
    """Twenty units all agreeing: the exact p is 2 / 2^20 (the matrix's test once drew 9,999
    random flips beyond 13 units, which cannot go below 2 / 10,000)."""
    assert cell_p(np.full(20, 0.5)) == pytest.approx(2 / 2**20, rel=1e-9)
    assert cell_p(np.r_[np.full(19, 0.5), -0.5]) == pytest.approx(42 / 2**20, rel=1e-9)


def test_yes_no_units_get_mcnemars_p_from_the_flips() -> None:
    """On yes/no differences the exact sign-flip p is the exact McNemar (binomial) p of the
    discordant units, whatever the number of concordant ones (here 200 units, grouped)."""
    differences = np.r_[np.ones(14), -np.ones(4), np.zeros(182)]
    expected = binomtest(4, 18, 0.5).pvalue
    assert sign_flip_p(differences) == pytest.approx(expected, rel=1e-9)
    assert sign_flip_pvalues(differences[None])[0] == pytest.approx(expected, rel=1e-9)


def test_the_planning_may_trade_large_exact_enumerations_for_the_tests_random_flips() -> None:
    """The planning's smaller enumeration limit tests a tied sample of 30 units by the random
    flips; its p stays within their Monte Carlo error of the exact one."""
    rng = np.random.default_rng(7)
    tied = rng.integers(-3, 4, (5, 30)).astype(float) + 1.0
    exact = sign_flip_pvalues(tied)
    drawn = sign_flip_pvalues(tied, exact_cells=1_000)
    assert not np.allclose(exact, drawn, atol=1e-12)
    assert drawn == pytest.approx(exact, abs=0.01)


def test_random_flips_drawn_for_many_seeds_are_not_all_kept() -> None:
    """Random flips are cached per (units, seed); a caller looping over seeds (the coverage
    benchmark: one per replication, 4 MB each at 50 units) once held every draw until it ran
    out of memory. The cache keeps a few."""
    values = np.linspace(-1.0, 2.0, 50)
    for seed in range(40):
        sign_flip_p(values, seed=seed)
    assert signflip._random_flips.cache_info().currsize <= 8
