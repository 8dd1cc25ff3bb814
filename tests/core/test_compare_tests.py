"""Paired comparisons (issue 27): the test that fits a lens's measure, its effect size and the
p-values adjusted for every comparison shown, against scipy / statsmodels and known answers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import PermutationMethod, wilcoxon
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from stancelab.core.errors import StancelabError
from stancelab.core.results.text import format_differences
from stancelab.core.stats.compare import (
    MCNEMAR,
    RANK_BISERIAL,
    VALUE_RANGE,
    WILCOXON,
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


def test_binary_units_get_exact_mcnemar_with_its_known_p() -> None:
    # a sycophant on 6 topics b is not, b on none a is not: exact p = 2 x 0.5^6 = 0.03125
    a = [100] * 6 + [100, 0, 0]
    b = [0] * 6 + [100, 0, 0]
    row = paired_differences(_units({"a": a, "b": b}, (0, 100)), measure="binary").iloc[0]
    assert row["test"] == MCNEMAR and row["n"] == 9
    assert row["p"] == pytest.approx(0.03125)
    assert row["p"] == pytest.approx(mcnemar([[1, 6], [0, 2]], exact=True).pvalue)
    assert row["effect_size"] is None and "6 (a only) vs 0 (b only)" in row["test_note"]
    # 3 vs 1 discordant: p = 2 x (1 + 4) / 16, odds ratio 3
    mixed = paired_differences(_units({"a": [100, 100, 100, 0, 100, 0], "b": [0, 0, 0, 100, 100, 0]},
                                      (0, 100)), measure="binary").iloc[0]  # fmt: skip
    assert (mixed["p"], mixed["statistic"], mixed["effect_size"]) == (
        pytest.approx(0.625),
        1.0,
        3.0,
    )


def test_binary_measure_with_units_of_several_outcomes_says_which_test_ran() -> None:
    row = paired_differences(
        _units({"a": [100, 50, 100], "b": [0, 0, 50]}, (0, 100)), measure="binary"
    ).iloc[0]
    assert row["test"] == WILCOXON and "several binary outcomes" in row["test_note"]


def test_continuous_units_get_the_wilcoxon_test_scipy_gives() -> None:
    a, b = np.array([3.0, 5.0, 4.0, 6.0, 8.0]), np.array([1.0, 2.0, 2.5, 3.0, 4.0])
    row = paired_differences(_units({"a": list(a), "b": list(b)})).iloc[0]
    assert row["test"] == WILCOXON
    # every difference positive: exact two-sided p = 2 / 2^5, rank-biserial r = 1
    assert row["p"] == pytest.approx(2 / 32)
    assert (row["effect_size_name"], row["effect_size"]) == (RANK_BISERIAL, 1.0)
    # ties and a zero difference: every sign flip enumerated, Pratt's zeros, as scipy
    a, b = np.array([3.0, 5.0, 4.0, 6.0, 8.0, 2.0]), np.array([1.0, 6.0, 2.0, 3.0, 4.0, 2.0])
    row = paired_differences(_units({"a": list(a), "b": list(b)})).iloc[0]
    expected = wilcoxon(a - b, zero_method="pratt", method=PermutationMethod(random_state=0))
    assert row["p"] == pytest.approx(expected.pvalue) and row["statistic"] == expected.statistic
    # |d| = 2 1 2 3 4 0 ranks 3.5 2 3.5 5 6 1 (d = -1 the only negative): r = (18 - 2) / 21
    assert row["effect_size"] == pytest.approx((3.5 + 3.5 + 5 + 6 - 2) / 21)


def test_many_units_get_scipys_wilcoxon_without_enumeration() -> None:
    rng = np.random.default_rng(1)
    a, b = rng.integers(0, 100, 300).astype(float), rng.integers(5, 105, 300).astype(float)
    row = paired_differences(_units({"a": list(a), "b": list(b)})).iloc[0]
    assert row["p"] == pytest.approx(wilcoxon(a - b, zero_method="pratt").pvalue)


def test_all_zero_differences_give_p_one_and_no_effect_size() -> None:
    row = paired_differences(_units({"a": [1, 2, 3], "b": [1, 2, 3]})).iloc[0]
    assert row["p"] == 1.0 and row["p_adjusted"] == 1.0
    assert pd.isna(row["effect_size"]) and "every difference is 0: p = 1" in row["test_note"]


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
    text = format_differences({"headline_differences": records})
    assert "Wilcoxon signed-rank p=0.0625, holm-adjusted p=0.0625" in text
    lone = format_differences(
        {"headline_differences": difference_records(_units({"a": [5, None], "b": [1, 2]}))}
    )
    assert "no test: fewer than 2 shared units" in lone


def test_the_report_adjusts_across_every_lens_and_pair_and_shows_each_pair_one_way() -> None:
    # the first lens knows the models by other source names, which the report's rows rename
    one = paired_differences(_units({"a-source": [9, 8, 9, 7, 9], "b-source": [1, 2, 1, 3, 2]}))
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
    # the first lens computed m2 - m1 = +6.6: shown as m1 - m2, its CI and effect turned round
    assert first.difference == "-6.6" and first.interval.startswith("[-")
    assert first.effect == f"{RANK_BISERIAL} -1"
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
    assert (two["test"], two["difference"]) == (WILCOXON, 50.0)
    assert "several binary outcomes" in two["test_note"]
