"""Issues 24, 36: prior prejudice's intervals are over claims (traits in the group probe), and
none has zero width: the group spread gets an interval from simultaneous intervals of the
group means or "no CI" with the reason; a claim's templates move together in the topic
stance."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from stancelab.core.results.summary import RunResult
from stancelab.core.stats.intervals import bounded_cluster_ci, mean_ci
from stancelab.prior_prejudice import analysis as an
from stancelab.prior_prejudice.stances import topic_stances


def _probe(values: dict[str, list[float]]) -> pd.DataFrame:
    return pd.DataFrame([
        {"model": "m", "dimension": "d", "valence": "positive", "group": group, "trait": f"t{i}",
         "template": "T1", "cwa": value}
        for group, scores in values.items() for i, value in enumerate(scores)
    ])  # fmt: skip


def test_a_spread_every_trait_shares_has_no_interval_of_zero_width() -> None:
    """Both traits put group a 2 above b: every resample would give 2 (a bootstrap gave
    [2, 2]); the group means' intervals over 2 traits give a wide one."""
    row = an.group_spread(_probe({"a": [5.0, 6.0], "b": [3.0, 4.0]})).iloc[0]
    assert row["spread"] == 2.0 and row["n"] == 2
    assert 0.0 <= row["ci_low"] < 2.0 < row["ci_high"] <= 6.0 and row["ci_note"] == ""


def test_one_trait_gives_no_spread_interval() -> None:
    row = an.group_spread(_probe({"a": [5.0], "b": [3.0], "c": [4.0]})).iloc[0]
    assert row["spread"] == 2.0 and row["n"] == 1
    assert math.isnan(row["ci_low"]) and row["ci_note"] == "no CI (n = 1)"


def test_the_spread_interval_comes_from_simultaneous_intervals_of_the_group_means() -> None:
    """Each group's betting interval over traits at 1 - 0.05 / 3 (Bonferroni): the spread lies
    between the highest lower bound minus the lowest upper bound (at least 0) and the highest
    upper bound minus the lowest lower bound."""
    rng = np.random.default_rng(3)
    values = {
        g: list(rng.uniform(2, 6, size=6) + shift)
        for g, shift in (("a", 0.0), ("b", 0.5), ("c", 1.0))
    }
    row = an.group_spread(_probe(values)).iloc[0]
    groups = [mean_ci(values[g], (1.0, 7.0), level=1 - 0.05 / 3) for g in ("a", "b", "c")]
    means = [float(np.mean(values[g])) for g in ("a", "b", "c")]
    assert row["spread"] == pytest.approx(max(means) - min(means))
    low = max(0.0, max(g.ci_low for g in groups) - min(g.ci_high for g in groups))
    high = max(g.ci_high for g in groups) - min(g.ci_low for g in groups)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((min(low, row["spread"]), high))
    assert row["ci_low"] < row["spread"] < row["ci_high"] and row["ci_note"] == ""


def _ratings(gaps: dict[str, list[float]]) -> RunResult:
    """Abortion ratings whose bare-claim gap (original - negated, 1-7 scale) per claim and
    template is given; every claim oriented +1."""
    rows = [{"model": "m", "claim_id": claim, "condition": condition, "template": f"T{t + 1}",
             "cwa": 4.0 + gap / 2 if condition == "original" else 4.0 - gap / 2,
             "shared_topic": "abortion", "orientation": 1.0}
            for claim, claim_gaps in gaps.items() for t, gap in enumerate(claim_gaps)
            for condition in ("original", "negated")]  # fmt: skip
    return RunResult("prior-prejudice", Path("."), {}, {"ratings": pd.DataFrame(rows)})


def test_one_claim_gives_no_interval_however_many_templates() -> None:
    """Four templates of one claim are one unit: no CI and no direction (before: a Wilson-based
    interval over the four templates, above 0)."""
    (row,) = topic_stances(_ratings({"c1": [6.0, 6.0, 6.0, 6.0]})).itertuples()
    assert row.stance == 1.0 and row.n == 1
    assert math.isnan(row.ci_low) and math.isnan(row.ci_high)


def test_the_stance_interval_is_over_claims() -> None:
    gaps = {"c1": [6.0, 5.0, 6.0, 4.0], "c2": [1.0, 0.0, 2.0, 1.0], "c3": [3.0, 3.0, 2.0, 3.0]}
    (row,) = topic_stances(_ratings(gaps)).itertuples()
    expected = bounded_cluster_ci([g / 6 for claim_gaps in gaps.values() for g in claim_gaps],
                                  [claim for claim, claim_gaps in gaps.items() for _ in claim_gaps], -1.0, 1.0)  # fmt: skip
    assert (row.stance, row.n) == (pytest.approx(expected.value), 3)
    assert (row.ci_low, row.ci_high) == pytest.approx((expected.ci_low, expected.ci_high))
    assert row.detail == "3 claims, 12 claim x template gaps"


def test_a_claim_rated_twice_is_one_unit_of_the_condition_means() -> None:
    """Two epochs of c1 (6, 6) and one of c2 (2): the mean over claims is 4 with n = 2 claims
    (before: 4.67 over three rows, as if the repeats were independent)."""
    ratings = pd.DataFrame([
        {"model": "m", "category": "subjective", "condition": "original", "template": "T1", "claim_id": claim, "cwa": cwa}
        for claim, cwa in (("c1", 6.0), ("c1", 6.0), ("c2", 2.0))
    ])  # fmt: skip
    row = an.condition_means(ratings).iloc[0]
    assert (row["value"], row["n"]) == (4.0, 2)
