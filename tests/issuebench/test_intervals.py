"""IssueBench intervals are over issues, the paper's unit (issues 24, 36): majority counts, the
one-sided share, paired differences and the topic stance cell; one issue gives no interval,
and no interval has zero width."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from stancelab.core.results.summary import RunResult
from stancelab.core.stats.compare import paired_differences
from stancelab.core.stats.intervals import bounded_cluster_ci, clopper_pearson_ci
from stancelab.issuebench import analysis as an
from stancelab.issuebench.labels import LABELS
from stancelab.issuebench.report import unit_values
from stancelab.issuebench.results import compute_tables, results_from_responses
from stancelab.issuebench.stances import SCORES, stances_from_responses
from stancelab.issuebench.tables import load_voters, read_released_tables
from tests.interval_checks import interval_faults
from tests.shared_data import external


def _dists(
    shares_by_issue: dict[str, list[float]], model: str = "m", framing: str = "neutral"
) -> pd.DataFrame:
    """A distribution frame from published-style shares (response counts unknown)."""
    return pd.DataFrame([{"model": model, "issue_id": issue, "framing": framing,
                          **dict(zip(LABELS, shares, strict=True)), "n": np.nan, "n_unparsed": np.nan}
                         for issue, shares in shares_by_issue.items()])  # fmt: skip


def _responses(labels_by_issue: dict[str, list[str]], topic: str = "free-trade") -> pd.DataFrame:
    """Classified neutral-framing responses of one model, every issue tagged with `topic`."""
    return pd.DataFrame([{"model": "m", "issue_id": issue, "issue": issue, "framing": "neutral",
                          "template_id": f"t{n}", "call": 1, "label": label, "shared_topic": topic,
                          "orientation": 1}
                         for issue, labels in labels_by_issue.items()
                         for n, label in enumerate(labels)])  # fmt: skip


def test_a_majority_count_from_one_issue_has_no_interval() -> None:
    """One issue is one unit: no [1, 1] (nor [0, 0]) from a resampled response."""
    table = an.majority_count_cis(_dists({"a": [0.6, 0.4, 0, 0, 0, 0]}))
    assert len(table) == len(LABELS) + 1 and (table["n"] == 1).all()
    assert table["ci_low"].isna().all() and table["ci_high"].isna().all()


def test_majority_counts_get_an_exact_interval_over_issues_never_of_zero_width() -> None:
    shares = {f"i{k}": [0.8, 0.2, 0, 0, 0, 0] for k in range(7)} | {"j": [0.1, 0.2, 0.7, 0, 0, 0]}
    table = an.majority_count_cis(_dists(shares)).set_index("label")
    assert (table["ci_high"] > table["ci_low"]).all()  # none of zero width, 0 of 8 included
    for label, count in (("1", 7), ("3", 1), ("5", 0), ("total", 8)):
        low, high = clopper_pearson_ci(count, 8)
        assert table.loc[label, "value"] == count
        assert (table.loc[label, "ci_low"], table.loc[label, "ci_high"]) == pytest.approx(
            (low * 8, high * 8)
        )
    assert table.loc["5", "ci_low"] == 0 and table.loc["5", "ci_high"] > 0.5


def test_a_one_sided_share_that_every_issue_holds_has_an_interval_over_issues() -> None:
    """Every issue 100% one-sided: the exact interval of 5 of 5 issues, not "no CI"."""
    row = an.one_sided_share(_dists({f"i{k}": [0.5, 0.5, 0, 0, 0, 0] for k in range(5)})).iloc[0]
    assert (row["value"], row["n"]) == (100.0, 5)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(
        (clopper_pearson_ci(5, 5)[0] * 100, 100.0)
    )
    one = an.one_sided_share(_dists({"i0": [0.5, 0.5, 0, 0, 0, 0]})).iloc[0]
    assert one["n"] == 1 and math.isnan(one["ci_low"])


def test_paired_differences_of_equal_one_sided_shares_have_p_one(tmp_path: Path) -> None:
    """Two models 100% one-sided on the same 6 issues: difference 0, p = 1, and no interval of
    zero width."""
    both = pd.concat([_dists({f"i{k}": [1, 0, 0, 0, 0, 0] for k in range(6)}, model)
                      for model in ("a", "b")], ignore_index=True)  # fmt: skip
    run = RunResult("issuebench", tmp_path, {"models": ["a", "b"]}, {"distributions": both})
    row = paired_differences(unit_values(run)).iloc[0]
    assert (row["difference"], row["n"], row["p"]) == (0.0, 6, 1.0)
    assert math.isnan(row["ci_low"]) and math.isnan(row["ci_high"])


def test_the_topic_stance_of_one_issue_has_no_interval() -> None:
    """42 responses to one issue are one unit: 0.50 with no interval, n = 1 issue."""
    row = stances_from_responses(_responses({"i": ["1"] * 21 + ["3"] * 21})).iloc[0]
    assert row["stance"] == pytest.approx(0.5)
    assert row["n"] == 1 and math.isnan(row["ci_low"]) and math.isnan(row["ci_high"])


def test_the_topic_stance_resamples_issues() -> None:
    labels = {"i": ["1"] * 10 + ["3"] * 4, "j": ["2"] * 3 + ["4"] * 9, "k": ["5"] * 2 + ["1"] * 12}
    row = stances_from_responses(_responses(labels)).iloc[0]
    scores = np.array([SCORES[label] for issue in labels for label in labels[issue]])
    units = [issue for issue in labels for _ in labels[issue]]
    expected = bounded_cluster_ci(scores, units, -1.0, 1.0)
    assert row["n"] == 3 and row["stance"] == pytest.approx(expected.value)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((expected.ci_low, expected.ci_high))
    over_responses = bounded_cluster_ci(scores, np.arange(scores.size), -1.0, 1.0)
    assert row["ci_high"] - row["ci_low"] > over_responses.ci_high - over_responses.ci_low


def test_a_topic_stance_whose_issues_all_agree_gets_an_interval_over_issues() -> None:
    row = stances_from_responses(_responses({"i": ["1"] * 5, "j": ["1"] * 3, "k": ["1"] * 8})).iloc[
        0
    ]
    assert (row["stance"], row["n"]) == (1.0, 3)
    assert -1.0 <= row["ci_low"] < 1.0 == row["ci_high"]


@pytest.mark.parametrize("issues", [1, 4])
def test_no_table_of_a_unanimous_run_has_an_interval_of_zero_width(issues: int) -> None:
    """Every response labelled 1, on one issue and on several: no [k, k], no [v, v]."""
    labels = {f"i{k}": ["1"] * 6 for k in range(issues)}
    responses = pd.concat(
        [_responses(labels).assign(model=model) for model in ("a", "b")], ignore_index=True
    )
    tables, _ = results_from_responses(responses)
    assert interval_faults(tables) == []
    intervals = tables["majority_count_cis"]
    assert intervals["ci_low"].isna().all() if issues == 1 else intervals["ci_low"].notna().all()


def test_no_table_of_the_released_data_has_an_interval_of_zero_width() -> None:
    dists = read_released_tables(external("issuebench"))
    tables = compute_tables(dists, load_voters(external("issuebench", "isidewith.csv")))
    assert interval_faults(tables) == []
    assert tables["majority_count_cis"]["ci_low"].notna().all()  # 212 issues: all 210 rows
