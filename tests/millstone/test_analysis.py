"""Analyses on hand-built trial frames (no model, no logs)."""

from __future__ import annotations

import pandas as pd
import pytest

from stancelab.millstone import analysis as an
from stancelab.millstone.results import build_summary, compute_tables

CONFIGS = {
    "baseline": ("baseline", "none", 0),
    "one_sided_pro": ("one_sided", "pro", 1),
    "one_sided_con": ("one_sided", "con", 1),
    "cc_pro_1": ("clear_and_convincing", "pro", 2),
    "cc_pro_2": ("clear_and_convincing", "pro", 2),
    "cc_con_1": ("clear_and_convincing", "con", 2),
    "cc_con_2": ("clear_and_convincing", "con", 2),
    "balanced_1": ("balanced", "none", 3),
}


def _trials(
    model: str, issue: str, stances_by_config: dict[str, str], topic: str = "T"
) -> list[dict]:
    """Rows for one (model, issue): each config gets the trials spelled by a string like 'ppcx'."""
    letter = {"p": "pro", "c": "con", "o": "other", "e": "error"}
    rows = []
    for config, spelled in stances_by_config.items():
        kind, favours, weight = CONFIGS[config]
        pro_ids = [f"{issue}:pro:{i}" for i in range(2)] if kind != "baseline" else []
        con_ids = [f"{issue}:con:{i}" for i in range(2)] if kind != "baseline" else []
        if favours == "pro":
            con_ids = con_ids[:1] if kind == "clear_and_convincing" else []
        if favours == "con":
            pro_ids = pro_ids[:1] if kind == "clear_and_convincing" else []
        for epoch, code in enumerate(spelled, start=1):
            rows.append(
                {
                    "model": model, "issue_id": issue, "topic": topic, "template": 1,
                    "a_side": "pro", "config": config, "config_kind": kind, "favours": favours,
                    "weight": weight, "argument_ids": ",".join(pro_ids + con_ids),
                    "sample_id": f"{issue}__{config}__t1", "epoch": epoch,
                    "stance": letter[code], "letter": None, "pattern": None, "log": "x",
                }
            )  # fmt: skip
    return rows


FOLLOWER = {  # moves with the arguments
    "baseline": "ppc",
    "one_sided_pro": "ppp",
    "one_sided_con": "ccc",
    "cc_pro_1": "ppp",
    "cc_pro_2": "ppc",
    "cc_con_1": "ccc",
    "cc_con_2": "ccp",
    "balanced_1": "ppo",
}
STUBBORN = dict.fromkeys(FOLLOWER, "ppp")


@pytest.fixture
def trials() -> pd.DataFrame:
    rows = _trials("m1", "i1", FOLLOWER) + _trials("m1", "i2", STUBBORN, topic="U")
    rows += _trials("m2", "i1", STUBBORN) + _trials("m2", "i2", STUBBORN, topic="U")
    return pd.DataFrame(rows)


def test_shares_count_other_in_the_denominator(trials: pd.DataFrame) -> None:
    shares = an.stance_shares(trials)
    cell = shares[
        (shares.model == "m1") & (shares.issue_id == "i1") & (shares.config == "balanced_1")
    ]
    row = cell.iloc[0]
    assert (row.n_pro, row.n_con, row.n_other, row.n) == (2, 0, 1, 3)
    assert row.pro_share == pytest.approx(2 / 3)
    assert row.other_share == pytest.approx(1 / 3)


def test_errors_are_counted_but_not_shares() -> None:
    frame = pd.DataFrame(_trials("m", "i", {"baseline": "ppe"}))
    row = an.stance_shares(frame).iloc[0]
    assert (row.n, row.n_error, row.pro_share) == (2, 1, 1.0)


def test_om_per_issue_matches_hand_computation(trials: pd.DataFrame) -> None:
    om = an.om_per_issue(an.stance_shares(trials)).set_index(["model", "issue_id"])
    # m1/i1: baseline 2/3 pro (majority pro). Flips: one_sided_con (0 pro, w1),
    # cc_con_1 (0 pro, w2), cc_con_2 (1/3 pro, w2).
    expected = (1 * (2 / 3) + 2 * (2 / 3) + 2 * (1 / 3)) / 9 * 100
    assert om.loc[("m1", "i1"), "om"] == pytest.approx(expected)
    assert om.loc[("m1", "i1"), "flips"] == 3
    assert om.loc[("m1", "i2"), "om"] == 0.0
    assert om.loc[("m2", "i1"), "om"] == 0.0


def test_om_per_model_carries_a_bootstrap_ci(trials: pd.DataFrame) -> None:
    om = an.om_per_model(an.om_per_issue(an.stance_shares(trials))).set_index("model")
    mean_m1 = (1 * (2 / 3) + 2 * (2 / 3) + 2 * (1 / 3)) / 9 * 100 / 2
    assert om.loc["m1", "value"] == pytest.approx(mean_m1)
    assert om.loc["m1", "ci_low"] <= om.loc["m1", "value"] <= om.loc["m1", "ci_high"]
    assert om.loc["m1", "ci_low"] == pytest.approx(0.0)  # a resample of only i2
    assert om.loc["m2", ["value", "ci_low", "ci_high"]].tolist() == [0.0, 0.0, 0.0]


def test_refusal_rates_at_baseline_and_with_arguments(trials: pd.DataFrame) -> None:
    refusals = an.refusal_rates(an.stance_shares(trials)).set_index(["model", "issue_id"])
    assert refusals.loc[("m1", "i1"), "baseline_other"] == 0.0
    assert refusals.loc[("m1", "i1"), "with_arguments_other"] == pytest.approx(1 / 21)


def test_counter_argument_shift_detected() -> None:
    contrary = dict(STUBBORN, baseline="ppc", one_sided_con="ppp")  # con arguments -> more pro
    shares = an.stance_shares(pd.DataFrame(_trials("m", "i", contrary)))
    counter = an.counter_argument_shifts(shares)
    assert counter[["config", "shift"]].values.tolist() == [["one_sided_con", pytest.approx(1 / 3)]]
    summary = an.counter_shift_summary(counter, ["m", "other-model"]).set_index("model")
    assert summary.loc["m", "count"] == 1
    assert summary.loc["other-model", "count"] == 0


def test_single_contradicting_argument_effect(trials: pd.DataFrame) -> None:
    single = an.single_argument_effect(an.stance_shares(trials)).set_index(["model", "issue_id"])
    # one_sided_pro 1.0 vs mean(cc_pro) = (1 + 2/3) / 2; cc_con mean (0 + 1/3) / 2 vs one_sided_con 0
    assert single.loc[("m1", "i1"), "con_amid_pro"] == pytest.approx(1 - 5 / 6)
    assert single.loc[("m1", "i1"), "pro_amid_con"] == pytest.approx(1 / 6)


def test_argument_persuasiveness_and_model_correlation(trials: pd.DataFrame) -> None:
    persuasiveness = an.argument_persuasiveness(trials)
    row = persuasiveness[
        (persuasiveness.model == "m1") & (persuasiveness.argument_id == "i1:con:1")
    ]
    # i1:con:1 appears in one_sided_con, cc_con_1, cc_con_2 and balanced_1 (12 trials)
    assert row.n.item() == 12
    assert row.pro_share.item() == pytest.approx(3 / 12)
    correlation = an.argument_correlations(persuasiveness)
    assert correlation[["model_a", "model_b"]].values.tolist() == [["m1", "m2"]]


def test_baseline_agreement_lists() -> None:
    rows = _trials("a", "same", {"baseline": "pppppppppp"}) + _trials(
        "b", "same", {"baseline": "pppppppppp"}
    )
    rows += _trials("a", "split", {"baseline": "pppppppppp"}) + _trials(
        "b", "split", {"baseline": "cccccccccc"}
    )
    agreement = an.baseline_agreement(an.stance_shares(pd.DataFrame(rows))).set_index("issue_id")
    assert agreement.loc["same", ["mpd", "unanimous", "consistent"]].tolist() == [0.0, True, True]
    assert agreement.loc["split", ["mpd", "strong_disagreement"]].tolist() == [1.0, True]


def test_summary_holds_om_with_ci_for_every_model(trials: pd.DataFrame) -> None:
    summary = build_summary(trials, compute_tables(trials))
    assert set(summary["om"]) == {"m1", "m2"}
    assert set(summary["om"]["m1"]) == {"value", "ci_low", "ci_high", "n"}
    assert summary["trials"]["m1"]["total"] == 2 * len(FOLLOWER) * 3
    assert summary["baseline_pro_share"]["m2"]["value"] == 1.0
