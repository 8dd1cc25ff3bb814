"""Issue 36's must-shows at the sizes users run: the coverage benchmark's own functions on a
reduced set of settings (the full run is `python benchmarks/coverage.py`), and one estimand per
headline (headlines 80 and 20 give a paired difference of +60) through the probes' own
headline and unit paths."""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pandas as pd
import pytest

from stancelab.core.results.summary import RunResult
from stancelab.core.stats.compare import difference_records, paired_differences

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
REPLICATIONS = 300  # +-2.5% on a coverage near 95% (the script runs 1,000)


@pytest.fixture(scope="module")
def coverage() -> ModuleType:
    sys.path.insert(0, str(BENCHMARKS))
    import coverage as module  # type: ignore[import-not-found]

    return module


def _rows(coverage: ModuleType, chosen: list[tuple[str, str, int]]) -> list[dict[str, Any]]:
    """The benchmark's rows of the settings named (measure prefix, distribution prefix, n)."""
    settings = [setting for setting in coverage.settings()
                if any(setting.measure.startswith(measure) and setting.distribution.startswith(shape)
                       and setting.n == n for measure, shape, n in chosen)]  # fmt: skip
    assert len(settings) >= len(chosen)
    return [coverage.measure(setting, REPLICATIONS) for setting in settings]


def test_two_and_three_normal_units_are_covered_or_get_no_interval(coverage: ModuleType) -> None:
    """A BCa bootstrap covered 43% at n = 2 and 71% at n = 3 (issue 36)."""
    rows = _rows(coverage, [(measure, "normal", n) for n in (2, 3)
                            for measure in ("mean over units", "signed stance", "paired difference a - b")])  # fmt: skip
    for row in rows:
        assert set(row) == set(coverage.ROW_KEYS)
        assert row["printed"] == 0 or row["coverage"] >= 0.94, row


def test_no_false_direction_above_five_percent_under_a_true_zero(coverage: ModuleType) -> None:
    """A BCa bootstrap called a direction 57% of the time at n = 2, 17% at n = 5."""
    rows = _rows(coverage, [("signed stance", "normal", 2), ("signed stance", "normal", 5),
                            ("mean pooled", "+-1 stances, 4 answers per unit; true 0", 5),
                            ("paired difference a - b", "normal differences; true 0", 8),
                            ("paired difference a - b", "0/100, one outcome per unit, 30% vs 30%", 12)])  # fmt: skip
    for row in rows:
        assert row["false_direction"] <= 0.05, row


def test_small_skewed_and_discrete_units_are_covered(coverage: ModuleType) -> None:
    """Lognormal shares: a BCa bootstrap covered 38-79% up to 20 units."""
    rows = _rows(coverage, [("mean over units", "skewed", 5), ("mean over units", "skewed", 12),
                            ("mean over units", "4 answer levels", 5),
                            ("mean pooled", "0/1 outcomes, clusters of 1-8", 5)])  # fmt: skip
    assert min(row["coverage"] for row in rows) >= 0.94


def test_the_benchmark_ends_with_its_two_lines(coverage: ModuleType) -> None:
    rows = _rows(coverage, [("share of units", "yes/no per unit, 10% yes", 5),
                            ("signed stance", "+-1", 8)])  # fmt: skip
    minimum, false = coverage.summary(rows)
    assert re.fullmatch(r"minimum coverage: \d\.\d{3} over 2 settings", minimum)
    assert re.fullmatch(r"maximum false-direction rate: \d\.\d{3}", false)
    assert "| measure | method |" in coverage.table(rows)


def test_llm_bias_bench_headlines_80_and_20_differ_by_60(tmp_path: Path) -> None:
    """Sycophancy pools a model's topic x category cells: a is sycophant in 4 of 5 cells, b in 1
    of 5 (a topic has one or two cells). Averaging topic means instead gave +33.3."""
    from stancelab.llm_bias_bench.analysis import sycophancy_rate
    from stancelab.llm_bias_bench.report import unit_values

    cells = {"a": [("t1", "S"), ("t1", "S"), ("t2", "S"), ("t2", "S"), ("t3", "-")],
             "b": [("t1", "-"), ("t1", "-"), ("t2", "-"), ("t2", "-"), ("t3", "S")]}  # fmt: skip
    classes = pd.DataFrame([{"model": model, "topic_id": topic, "category": f"c{index % 2}",
                             "class": "sycophant" if mark == "S" else "agree"}
                            for model, rows in cells.items() for index, (topic, mark) in enumerate(rows)])  # fmt: skip
    headlines = sycophancy_rate(classes).set_index("model")["value"]
    assert (headlines["a"], headlines["b"]) == (pytest.approx(80.0), pytest.approx(20.0))
    run = RunResult("llm-bias-bench", tmp_path, {"models": ["a", "b"]}, {"classes": classes})
    (row,) = difference_records(unit_values(run))
    assert row["difference"] == pytest.approx(60.0) and row["n"] == 3


def test_even_handedness_headlines_80_and_20_differ_by_60() -> None:
    """Even-handedness pools pairs: topic t1 holds 8 pairs, t2 and t3 one each."""
    from stancelab.even_handedness import analysis as an

    marks = {"a": [1.0] * 8 + [0.0, 0.0], "b": [0.0] * 8 + [1.0, 1.0]}
    topics = ["t1"] * 8 + ["t2", "t3"]
    scored = pd.DataFrame([{"model": model, "grader": an.PRIMARY_GRADER, "grader_model": "g", an.UNIT: topic,
                            "pair_id": f"p{index}", "scored_by": "letters",
                            **{metric: mark for metric in an.METRICS},
                            **{f"{metric}_by_answer": mark for metric in an.METRICS}}
                           for model, values in marks.items()
                           for index, (topic, mark) in enumerate(zip(topics, values, strict=True))])  # fmt: skip
    headlines = (
        an.headlines(scored).query("metric == 'even_handedness'").set_index("model")["value"]
    )
    assert (headlines["a"], headlines["b"]) == (pytest.approx(0.8), pytest.approx(0.2))
    row = paired_differences(an.unit_values(scored)).iloc[0]
    assert row["difference"] == pytest.approx(60.0)
    assert math.isnan(row["ci_low"])  # three topics: too few for an interval, never [60, 60]
