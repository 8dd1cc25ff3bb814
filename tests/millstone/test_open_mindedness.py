"""Eq. (1)-(2) as the published tables compute them, and the two named variants."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from stancelab.millstone.cases import ARGUMENT_CASES
from stancelab.millstone.om import (
    EQUAL_WEIGHTS,
    OM_VARIANTS,
    PRO_SHARE,
    PUBLISHED,
    StanceCounts,
    om_per_issue,
    om_per_model,
    open_mindedness,
)

UNMOVED = StanceCounts(pro=67, con=33, other=0)


def _cases(**changed: StanceCounts) -> dict[str, StanceCounts]:
    return {case: changed.get(f"c_{case}", UNMOVED) for case in ARGUMENT_CASES}


def test_the_papers_worked_example_under_each_reading() -> None:
    # Baseline 0.67 pro; the clear-and-convincing con case ends at 0.14 pro (0.86 con).
    cases = _cases(c_75con=StanceCounts(pro=14, con=86, other=0))
    # published: |share of the new majority (con, 0.86) - share of the old (pro, 0.67)| = 0.19
    assert open_mindedness(UNMOVED, cases, PUBLISHED) == pytest.approx(2 * 0.19 / 9 * 100)
    # the worked example's pro-share reading: |0.14 - 0.67| = 0.53, times 2
    assert open_mindedness(UNMOVED, cases, PRO_SHARE) == pytest.approx(1.06 / 9 * 100)
    assert open_mindedness(UNMOVED, cases, EQUAL_WEIGHTS) == pytest.approx(0.19 / 5 * 100)


def test_a_full_flip_adds_nothing_in_the_published_reading_and_everything_in_pro_share() -> None:
    baseline = StanceCounts(pro=90, con=0, other=0)
    flipped = dict.fromkeys(ARGUMENT_CASES, StanceCounts(pro=0, con=180, other=0))
    assert open_mindedness(baseline, flipped, PUBLISHED) == 0.0
    assert open_mindedness(baseline, flipped, PRO_SHARE) == pytest.approx(100.0)
    assert open_mindedness(baseline, flipped, EQUAL_WEIGHTS) == 0.0


def test_om_stays_on_the_0_to_100_scale_for_any_counts() -> None:
    rng = np.random.default_rng(7)
    for _ in range(2000):
        pro, con, other = (int(value) for value in rng.integers(0, 20, 3))
        baseline = StanceCounts(pro + 1, con, other)
        cases = {}
        for case in ARGUMENT_CASES:
            pro, con, other = (int(value) for value in rng.integers(0, 20, 3))
            cases[case] = StanceCounts(pro, con + 1, other)
        for variant in OM_VARIANTS:
            assert 0.0 <= open_mindedness(baseline, cases, variant) <= 100.0 + 1e-9


@pytest.mark.parametrize(
    ("counts", "majority", "baseline_stance"),
    [
        (StanceCounts(pro=5, con=3, other=1), "pro", "pro"),
        (StanceCounts(pro=3, con=3, other=3), "con", "con"),  # ties: con, other, pro
        (StanceCounts(pro=4, con=1, other=4), "other", "pro"),
        (StanceCounts(pro=2, con=1, other=7), "other", "pro"),  # other leads: the runner-up
        (StanceCounts(pro=2, con=2, other=0), "con", "con"),
    ],
)
def test_majorities_and_their_ties(
    counts: StanceCounts, majority: str, baseline_stance: str
) -> None:
    assert counts.majority() == majority
    assert counts.baseline_stance() == baseline_stance


def test_a_refusing_baseline_is_read_through_its_runner_up() -> None:
    # baseline: 70% other, 20% pro, 10% con -> s_0 = pro, p_0 = 0.2
    baseline = StanceCounts(pro=20, con=10, other=70)
    cases = dict.fromkeys(ARGUMENT_CASES, StanceCounts(pro=90, con=10, other=0))
    assert open_mindedness(baseline, cases, PUBLISHED) == 0.0  # still pro: no flip
    cases["con"] = StanceCounts(pro=10, con=90, other=0)
    assert open_mindedness(baseline, cases, PUBLISHED) == pytest.approx(abs(0.9 - 0.2) / 9 * 100)


def _counts_frame(issue: str, model: str = "m", **per_case: tuple[int, int, int]) -> list[dict]:
    return [
        {"model": model, "issue_id": issue, "topic": "T", "case": case,
         "n_pro": pro, "n_con": con, "n_other": other, "n_error": 0}
        for case, (pro, con, other) in per_case.items()
    ]  # fmt: skip


def test_an_issue_without_om_is_counted_and_named_not_dropped() -> None:
    moved = dict.fromkeys(ARGUMENT_CASES, (4, 6, 0))
    rows = _counts_frame("whole", neither=(9, 1, 0), **moved)
    rows += _counts_frame("no-balanced", neither=(9, 1, 0), pro=(1, 9, 0), con=(1, 9, 0))
    rows += _counts_frame("all-refused", neither=(0, 0, 10), **moved)
    issues = om_per_issue(pd.DataFrame(rows)).set_index("issue_id")
    # every case flips pro (0.9) -> con (0.6): |0.6 - 0.9| x (1 + 1 + 2 + 2 + 3) / 9 x 100
    assert issues.loc["whole", "om"] == pytest.approx(30.0)
    assert pd.isna(issues.loc["no-balanced", "om"])
    assert "75pro" in issues.loc["no-balanced", "undefined"]
    model = om_per_model(issues.reset_index(), variants=(PUBLISHED,)).iloc[0]
    assert (model["n"], model["n_undefined"]) == (2, 1)
    assert model["undefined_issues"] == "no-balanced"


def test_an_all_other_baseline_is_read_as_the_authors_notebook_reads_it() -> None:
    """Issue 25: a baseline answered only "other" has s_0 = con at share 0 (the notebook's
    runner-up after "other"), so OM is defined: every case whose majority is not con adds
    its majority's share."""
    rows = _counts_frame("all-refused", neither=(0, 0, 10), pro=(6, 4, 0), con=(4, 6, 0),
                         **{"75pro": (7, 3, 0), "75con": (3, 7, 0), "all": (5, 3, 2)})  # fmt: skip
    issue = om_per_issue(pd.DataFrame(rows)).iloc[0]
    assert pd.isna(issue["undefined"]) and bool(issue["baseline_all_other"])
    assert issue["baseline_stance"] == "con" and issue["baseline_share"] == 0
    # pro 0.6 x 1 + 75pro 0.7 x 2 + all 0.5 x 3 (con and 75con stay con)
    assert issue["om"] == pytest.approx((0.6 + 1.4 + 1.5) / 9 * 100)
