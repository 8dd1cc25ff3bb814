"""Paired comparisons (issues 27, 36): one estimand (the difference of the headlines), one
procedure for the test and the interval (a sign-flip test of the mean and its inversion; exact
McNemar where every shared unit is one yes/no outcome), exact with ties and zeros, its effect
size, and the p-values adjusted for every comparison shown, against scipy / statsmodels and
known answers."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import permutation_test
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from stancelab.core.errors import StancelabError
from stancelab.core.results.text import format_differences
from stancelab.core.stats.compare import (
    MCNEMAR,
    SIGN_FLIP,
    STANDARDIZED,
    VALUE_RANGE,
    WEIGHT,
    adjust_p,
    difference_records,
    paired_differences,
)
from stancelab.probes import PROBES
from stancelab.report.compare import LensDifferences, adjust_across, pair_view


def _units(
    values: dict[str, list[float | None]], value_range: tuple[float, float] | None = None
) -> pd.DataFrame:
    units = pd.DataFrame([{"model": model, "unit": f"u{index}", "value": value}
                          for model, series in values.items()
                          for index, value in enumerate(series)])  # fmt: skip
    if value_range:
        units.attrs[VALUE_RANGE] = value_range
    return units


def _differences(a: list[float], b: list[float], value_range: tuple[float, float] | None = None,
                 **kwargs: object) -> pd.Series:  # fmt: skip
    return paired_differences(_units({"a": a, "b": b}, value_range), **kwargs).iloc[0]  # type: ignore[arg-type]


def _agree(row: pd.Series) -> bool:
    """The interval excludes 0 exactly when p < 0.05 (a direction only with the test)."""
    excludes = not pd.isna(row["ci_low"]) and (row["ci_low"] > 0 or row["ci_high"] < 0)
    return excludes == (row["p"] < 0.05)


def test_binary_units_get_exact_mcnemar_with_its_known_p() -> None:
    # a sycophant on 6 topics b is not, b on none a is not: exact p = 2 x 0.5^6 = 0.03125
    a = [100] * 6 + [100, 0, 0]
    b = [0] * 6 + [100, 0, 0]
    row = _differences(a, b, (0, 100), measure="binary")
    assert row["test"] == MCNEMAR and row["n"] == 9
    assert row["p"] == pytest.approx(0.03125)
    assert row["p"] == pytest.approx(mcnemar([[1, 6], [0, 2]], exact=True).pvalue)
    assert row["effect_size"] is None and "6 (a only) vs 0 (b only)" in row["test_note"]
    assert 0 < row["ci_low"] < row["difference"] < row["ci_high"] and _agree(row)
    # 3 vs 1 discordant: p = 2 x (1 + 4) / 16, odds ratio 3
    mixed = _differences(
        [100, 100, 100, 0, 100, 0], [0, 0, 0, 100, 100, 0], (0, 100), measure="binary"
    )
    assert (mixed["p"], mixed["statistic"], mixed["effect_size"]) == (
        pytest.approx(0.625),
        1.0,
        3.0,
    )


def test_yes_no_units_get_mcnemar_whatever_the_lens_declares() -> None:
    """Even-handedness (a continuous lens) with one pair per topic: each unit 0 or 100."""
    row = _differences([100] * 6 + [0] * 3, [0] * 6 + [0] * 3, (0, 100))
    assert row["test"] == MCNEMAR and row["p"] == pytest.approx(2 * 0.5**6)


def test_binary_measure_with_units_of_several_outcomes_says_which_test_ran() -> None:
    row = _differences([100, 50, 100], [0, 0, 50], (0, 100), measure="binary")
    assert row["test"] == SIGN_FLIP and "several binary outcomes" in row["test_note"]


def test_five_units_at_100_and_nine_at_0_give_the_exact_p() -> None:
    """Ties and zeros dominate: every sign flip counts, p = 2 / 2^5 (the normal approximation
    of Wilcoxon's test gave 0.025)."""
    for value_range in (None, (0.0, 100.0)):
        row = _differences([100.0] * 5 + [0.0] * 9, [0.0] * 14, value_range)
        assert row["p"] == pytest.approx(0.0625) and _agree(row)
        assert row["ci_low"] == 0.0  # the interval's end touches 0: no direction


def test_continuous_units_get_the_sign_flip_test_scipy_gives() -> None:
    a, b = (
        np.array([3.0, 5.0, 4.0, 6.0, 8.0, 9.0, 2.0]),
        np.array([1.0, 6.0, 2.5, 3.0, 4.0, 5.0, 2.0]),
    )
    row = _differences(list(a), list(b))
    expected = permutation_test((a, b), lambda x, y, axis=-1: np.mean(x - y, axis=axis),
                                permutation_type="samples", n_resamples=np.inf, vectorized=True)  # fmt: skip
    assert row["test"] == SIGN_FLIP and row["difference"] == pytest.approx(np.mean(a - b))
    assert row["p"] == pytest.approx(expected.pvalue)
    assert row["effect_size_name"] == STANDARDIZED
    assert row["effect_size"] == pytest.approx(np.mean(a - b) / np.std(a - b, ddof=1))
    assert row["ci_low"] < row["difference"] < row["ci_high"] and _agree(row)


def test_the_counterexamples_of_issue_36_give_one_answer() -> None:
    """15 x (-1) and 5 x (+10): a mean of +1.75 whose interval and test agree (the Wilcoxon
    test said b > a, the bootstrap a > b); n = 2 with differences 1 and 2: p = 0.5 and no
    interval (a bootstrap printed [1, 2])."""
    row = _differences([-1.0] * 15 + [10.0] * 5, [0.0] * 20)
    assert row["difference"] == pytest.approx(1.75) and row["effect_size"] > 0
    assert row["ci_low"] < 0 < row["ci_high"] and row["p"] > 0.05
    two = _differences([1.0, 2.0], [0.0, 0.0])
    assert (
        two["p"] == pytest.approx(0.5) and math.isnan(two["ci_low"]) and math.isnan(two["ci_high"])
    )
    assert "n = 2, a sign-flip interval needs 6 units" in format_differences(
        {"headline_differences": difference_records(_units({"a": [1.0, 2.0], "b": [0.0, 0.0]}))}
    )


def test_the_interval_and_the_test_agree_on_random_pairs() -> None:
    rng = np.random.default_rng(8)
    for n in (6, 9, 14, 30):
        for _ in range(15):
            b = rng.integers(0, 5, n) * 25.0
            a = np.clip(b + rng.choice([-25.0, 0.0, 25.0, 50.0], n), 0, 100)
            row = _differences(list(a), list(b), (0.0, 100.0), seed=int(rng.integers(100)))
            assert _agree(row), row.to_dict()


def test_many_units_get_seeded_random_flips() -> None:
    rng = np.random.default_rng(1)
    a, b = rng.integers(0, 100, 300).astype(float), rng.integers(5, 105, 300).astype(float)
    row = _differences(list(a), list(b))
    assert row["p"] == _differences(list(a), list(b))["p"]  # seeded
    assert "9999 random sign flips" in row["test_note"] and _agree(row)
    assert row["ci_low"] < np.mean(a - b) < row["ci_high"]


def test_all_zero_differences_give_p_one_and_no_effect_size() -> None:
    row = _differences([1, 2, 3], [1, 2, 3])
    assert row["p"] == 1.0 and row["p_adjusted"] == 1.0
    assert pd.isna(row["effect_size"]) and "every difference is 0: p = 1" in row["test_note"]


def test_a_difference_is_the_difference_of_pooled_headlines() -> None:
    """Units carrying the answers behind them (`weight`): headlines 80 and 20 give +60."""
    units = pd.DataFrame({"model": ["a"] * 3 + ["b"] * 3, "unit": ["t1", "t2", "t3"] * 2,
                          "value": [100.0, 0.0, 0.0, 0.0, 100.0, 100.0], WEIGHT: [8.0, 1.0, 1.0] * 2})  # fmt: skip
    units.attrs[VALUE_RANGE] = (0.0, 100.0)
    (row,) = difference_records(units)
    assert row["difference"] == pytest.approx(60.0)


def test_fewer_than_two_shared_units_get_no_test_and_say_why() -> None:
    (record,) = difference_records(_units({"a": [5, None], "b": [1, 2]}))
    assert record["n"] == 1 and record["test"] is None
    assert record["p"] is None and record["p_adjusted"] is None
    assert "fewer than 2 shared units" in record["test_note"]


def test_holm_and_benjamini_hochberg_on_known_p_values() -> None:
    frame = pd.DataFrame({"p": [0.01, 0.04, 0.03, None]})
    holm = adjust_p(frame, "holm")
    assert list(holm["p_adjusted"][:3]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm["p_adjusted"][3] is None and holm["adjustment"][3] is None
    assert list(holm["adjustment"][:3]) == ["holm"] * 3
    bh = adjust_p(frame, "fdr_bh")
    assert list(bh["p_adjusted"][:3]) == pytest.approx([0.03, 0.04, 0.04])
    assert list(bh["p_adjusted"][:3]) == pytest.approx(
        multipletests([0.01, 0.04, 0.03], method="fdr_bh")[1]
    )
    with pytest.raises(StancelabError, match="fdr_bh"):
        adjust_p(frame, "bonferonni")


def test_a_summary_adjusts_across_its_pairs() -> None:
    units = _units({"a": [9, 8, 9, 7, 9, 8], "b": [1, 2, 1, 3, 2, 1], "c": [1, 2, 2, 3, 1, 1]})
    records = difference_records(units)
    raw = [record["p"] for record in records]
    assert [record["p_adjusted"] for record in records] == pytest.approx(
        multipletests(raw, method="holm")[1]
    )
    assert {record["adjustment"] for record in records} == {"holm"}
    for key in (
        "difference",
        "ci_low",
        "ci_high",
        "n",
        "test",
        "statistic",
        "effect_size_name",
        "effect_size",
    ):
        assert key in records[0]


def test_the_cli_text_names_the_test_and_the_adjusted_p() -> None:
    records = difference_records(_units({"a": [3, 5, 4, 6, 8], "b": [1, 2, 2.5, 3, 4]}))
    assert "no CI (n = 5, a sign-flip interval needs 6 units)" in format_differences(
        {"headline_differences": records}
    )
    text = format_differences({"headline_differences": records})
    assert f"{SIGN_FLIP} p=0.0625, holm-adjusted p=0.0625" in text
    lone = format_differences(
        {"headline_differences": difference_records(_units({"a": [5, None], "b": [1, 2]}))}
    )
    assert "no test: fewer than 2 shared units" in lone


def test_the_report_adjusts_across_every_lens_and_pair_and_shows_each_pair_one_way() -> None:
    # the first lens knows the models by other source names, which the report's rows rename
    one = paired_differences(
        _units({"a-source": [9, 8, 9, 7, 9, 8, 9], "b-source": [1, 2, 1, 3, 2, 2, 1]})
    )
    two = paired_differences(
        _units({"m1": [100, 100, 100, 100, 100, 0], "m2": [0] * 6}, (0, 100)), measure="binary"
    )
    adjusted = adjust_across([one, None, two], "holm")
    raw = [one["p"].iloc[0], two["p"].iloc[0]]
    expected = multipletests(raw, method="holm")[1]
    assert adjusted[1] is None
    assert [adjusted[0]["p_adjusted"].iloc[0], adjusted[2]["p_adjusted"].iloc[0]] == pytest.approx(
        expected
    )
    entries = [LensDifferences("Open-mindedness", "MillStone", "probe-millstone", adjusted[0]),  # type: ignore[arg-type]
               LensDifferences("Sycophancy", "llm-bias-bench", "probe-llm-bias-bench", adjusted[2])]  # type: ignore[arg-type]  # fmt: skip
    rows = {"a-source": "m2", "b-source": "m1"}
    (pair,) = pair_view(entries, lambda source: rows.get(source, source))
    assert (pair.first, pair.second) == ("m1", "m2")
    first, second = pair.rows
    # the first lens computed m2 - m1 = +6.71: shown as m1 - m2, its CI and effect turned round
    assert first.difference == "-6.71" and first.interval.startswith("[-")
    assert first.effect.startswith(f"{STANDARDIZED} -")
    assert second.difference == "+83.3" and second.test == MCNEMAR
    assert second.p_adjusted == f"{expected[1]:.3g} (holm)"


def test_each_probe_states_its_measure() -> None:
    assert PROBES["llm-bias-bench"].measure == "binary"
    assert {probe.measure for name, probe in PROBES.items() if name != "llm-bias-bench"} == {
        "continuous"
    }


def test_llm_bias_bench_topics_of_one_category_get_mcnemar_and_of_two_say_why_not(
    tmp_path: Path,
) -> None:
    from stancelab.core.results.summary import RunResult
    from stancelab.llm_bias_bench import analysis as an
    from stancelab.llm_bias_bench.report import unit_values
    from tests.llm_bias_bench.test_intervals import A, D, N, _conversations

    def units(categories: tuple[str, ...]) -> pd.DataFrame:
        """a: sycophant in the direct category only; b: never."""
        cells = [(f"t{k}", c) for k in range(6) for c in categories]
        a = {cell: (N, A, D) if cell[1] == "direct" else (A, A, A) for cell in cells}
        frames = [_conversations(a, "a"), _conversations(dict.fromkeys(cells, (A, A, A)), "b")]
        classes = an.topic_classes(an.cell_verdicts(pd.concat(frames, ignore_index=True)))
        return unit_values(
            RunResult("llm-bias-bench", tmp_path, {"models": ["a", "b"]}, {"classes": classes})
        )

    measure = PROBES["llm-bias-bench"].measure
    (one,) = difference_records(units(("direct",)), measure=measure)
    assert (one["test"], one["n"], one["difference"]) == (MCNEMAR, 6, 100.0)
    assert one["p"] == pytest.approx(2 * 0.5**6)
    (two,) = difference_records(units(("direct", "indirect")), measure=measure)  # a topic: 50%
    assert (two["test"], two["difference"]) == (SIGN_FLIP, 50.0)
    assert "several binary outcomes" in two["test_note"]
