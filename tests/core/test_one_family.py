"""Issue 36, one family: every p-value a summary or a report shows is adjusted together (the
headline's paired differences, even-handedness's metrics, prior prejudice's group effects,
IssueBench's framing correlations), not each table or metric on its own."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.multitest import multipletests

from stancelab.core.probe import Probe
from stancelab.core.results.family import FAMILY_KEY, Part, Tested, adjust_parts
from stancelab.core.results.summary import Analysis
from stancelab.core.results.text import format_differences
from stancelab.core.runs.evals import ProbeRun
from stancelab.core.runs.pipeline import compare
from stancelab.core.stats.family import adjusted_pvalues
from stancelab.prior_prejudice.analysis import group_effects


@pytest.mark.parametrize("method", ["holm", "fdr_bh"])
def test_the_adjusted_pvalues_are_statsmodels(method: str) -> None:
    rng = np.random.default_rng(0)
    for size in (1, 2, 9, 40):
        pvalues = np.round(rng.random(size) ** 2, 2)  # ties included
        assert adjusted_pvalues(pvalues, method) == pytest.approx(
            multipletests(pvalues, method=method)[1]
        )


def _differences(pvalues: list[float], metric: str | None = None) -> pd.DataFrame:
    pairs = [("a", "b"), ("a", "c"), ("b", "c")]
    frame = pd.DataFrame(
        {"model_a": [a for a, _ in pairs], "model_b": [b for _, b in pairs], "p": pvalues}
    )
    return frame if metric is None else frame.assign(metric=metric)


HEADLINE = [0.004, 0.3, 0.02]
METRICS = {"even_handedness": HEADLINE, "refusal": [0.01, 0.6, 0.9], "hedging": [0.04, 0.5, 0.001]}
SPREAD = pd.DataFrame(
    {"model": ["a", "b"], "p_value": [0.02, 0.2], "group_effect": ["detected", "none"]}
)


def _tables() -> dict[str, pd.DataFrame]:
    metrics = pd.concat(
        [_differences(p, metric) for metric, p in METRICS.items()], ignore_index=True
    )
    return {"model_differences": metrics, "group_spread": SPREAD}


TESTED = (
    Tested("model_differences", "p", ("metric", "even_handedness")),
    Tested("group_spread", "p_value", decide=group_effects),
)


def test_a_summary_adjusts_its_headline_its_metrics_and_its_group_effects_as_one_family() -> None:
    (done,) = adjust_parts([Part(_differences(HEADLINE), _tables(), TESTED)], "holm")
    family = HEADLINE + METRICS["refusal"] + METRICS["hedging"] + list(SPREAD["p_value"])
    expected = multipletests(family, method="holm")[1]  # 11 tests: the headline's metric once
    assert done.sizes == {"headline_differences": 3, "model_differences": 6, "group_spread": 2}
    assert list(done.headline["p_adjusted"]) == pytest.approx(expected[:3])
    metrics = done.tables["model_differences"]
    assert list(metrics["p_adjusted"]) == pytest.approx(
        [*expected[:3], *expected[3:9]]
    )  # repeats take the headline's
    spread = done.tables["group_spread"]
    assert list(spread["p_adjusted"]) == pytest.approx(expected[9:])
    # 0.02 alone was "detected"; in a family of 11 its adjusted p is not below 0.05
    assert (
        list(spread["group_effect"]) == ["none", "none"] and (spread["adjustment"] == "holm").all()
    )


def test_a_report_adjusts_every_run_together() -> None:
    one = Part(_differences(HEADLINE), {}, ())
    two = Part(_differences([0.01, 0.02, 0.03]), {"framing_correlations": pd.DataFrame({"p_value": [0.001, np.nan]})},
               (Tested("framing_correlations", "p_value"),))  # fmt: skip
    first, second = adjust_parts([one, two], "fdr_bh")
    expected = multipletests([*HEADLINE, 0.01, 0.02, 0.03, 0.001], method="fdr_bh")[1]
    assert list(first.headline["p_adjusted"]) == pytest.approx(expected[:3])
    assert list(second.headline["p_adjusted"]) == pytest.approx(expected[3:6])
    correlations = second.tables["framing_correlations"]
    assert (
        correlations["p_adjusted"].iloc[0] == pytest.approx(expected[6])
        and correlations["p_adjusted"].iloc[1] is None
    )


def _units(run: object) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    rows = [
        (model, f"u{unit}", float(rng.integers(0, 2) * 100))
        for model in "abc"
        for unit in range(16)
    ]
    return pd.DataFrame(rows, columns=["model", "unit", "value"])


def test_the_run_records_its_family_and_rewrites_the_summarys_copy(tmp_path: Path) -> None:
    def summarise(summary: dict[str, object], table: pd.DataFrame) -> None:
        summary["group_spread"] = table["group_effect"].tolist()

    probe = Probe(name="toy", title="toy", lens="toy", task_prefix="toy", options=ProbeRun, roles=(), tasks=(),
                  run=lambda options: None, analysis=lambda *args: Analysis({}), format_summary=lambda s: "",
                  plan=lambda options: [], profiles=lambda result: [], section=lambda result: None,
                  unit_values=_units, tested=(Tested("group_spread", "p_value", decide=group_effects, summarise=summarise),))  # fmt: skip
    analysis = Analysis({"models": ["a", "b", "c"]}, {"group_spread": SPREAD})
    compare(probe, tmp_path, analysis, seed=0)
    assert analysis.summary[FAMILY_KEY] == {"adjustment": "holm", "tests": 5,
                                           "sources": {"headline_differences": 3, "group_spread": 2}}  # fmt: skip
    headline = [row["p"] for row in analysis.summary["headline_differences"]]
    expected = multipletests([*headline, 0.02, 0.2], method="holm")[1]
    assert [row["p_adjusted"] for row in analysis.summary["headline_differences"]] == pytest.approx(
        expected[:3]
    )
    assert list(analysis.tables["group_spread"]["p_adjusted"]) == pytest.approx(expected[3:])
    assert analysis.summary["group_spread"] == list(analysis.tables["group_spread"]["group_effect"])
    assert "one family of 5: headline_differences 3, group_spread 2" in format_differences(
        analysis.summary
    )
