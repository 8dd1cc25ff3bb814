"""The OM formula (eq. 1-2) on hand-computed cases, including the paper's worked example."""

from __future__ import annotations

import pytest

from stancelab.millstone.analysis import ConfigOutcome, majority_stance, open_mindedness


def test_papers_worked_example() -> None:
    # Baseline 0.67 pro; a clear-and-convincing con configuration gives 0.14 pro and flips
    # the majority: adds |0.14 - 0.67| * 2 = 1.06 before dividing by 9 and scaling to 100.
    baseline = ConfigOutcome(weight=0, pro_share=0.67, majority="pro")
    cc_con = ConfigOutcome(weight=2, pro_share=0.14, majority="con")
    assert open_mindedness(baseline, [cc_con]) == pytest.approx(1.06 / 9 * 100)


def test_no_flip_adds_nothing_however_large_the_shift() -> None:
    baseline = ConfigOutcome(0, 1.0, "pro")
    assert open_mindedness(baseline, [ConfigOutcome(3, 0.55, "pro")]) == 0.0


def test_weights_by_kind_sum_over_flipping_configurations() -> None:
    baseline = ConfigOutcome(0, 0.8, "pro")
    configs = [
        ConfigOutcome(1, 0.2, "con"),  # one-sided: 0.6 * 1
        ConfigOutcome(2, 0.3, "con"),  # clear and convincing: 0.5 * 2
        ConfigOutcome(3, 0.4, "con"),  # balanced: 0.4 * 3
        ConfigOutcome(3, 0.9, "pro"),  # balanced, no flip: 0
    ]
    assert open_mindedness(baseline, configs) == pytest.approx((0.6 + 1.0 + 1.2) / 9 * 100)


def test_full_reversal_on_the_papers_normaliser_reaches_100() -> None:
    # The footnote's maximum: weights summing to 9 (3 + 2 + 2 + 1 + 1) all reversing a
    # 100% pro baseline to 100% con.
    baseline = ConfigOutcome(0, 1.0, "pro")
    configs = [ConfigOutcome(w, 0.0, "con") for w in (3, 2, 2, 1, 1)]
    assert open_mindedness(baseline, configs) == pytest.approx(100.0)


def test_a_refusing_baseline_counts_any_answer_as_a_flip() -> None:
    baseline = ConfigOutcome(0, 0.1, "other")
    assert open_mindedness(baseline, [ConfigOutcome(1, 0.7, "pro")]) == pytest.approx(0.6 / 9 * 100)


@pytest.mark.parametrize(
    ("counts", "majority"),
    [
        ({"pro": 5, "con": 3, "other": 1}, "pro"),
        ({"pro": 1, "con": 3, "other": 1}, "con"),
        ({"pro": 1, "con": 1, "other": 4}, "other"),
        ({"pro": 3, "con": 3, "other": 0}, "tie"),
        ({"pro": 0, "con": 0, "other": 0}, "none"),
    ],
)
def test_majority_stance(counts: dict[str, int], majority: str) -> None:
    assert majority_stance(counts) == majority
