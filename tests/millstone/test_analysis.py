"""Analyses on hand-built trial frames (no model, no logs), pooled into the six cases."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from stancelab.core.stats.intervals import clopper_pearson_ci
from stancelab.millstone import analysis as an
from stancelab.millstone.cases import CASE_OF_CONFIG
from stancelab.millstone.om import om_per_issue, om_per_model
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
                    "a_side": "pro", "case": CASE_OF_CONFIG[(kind, favours)], "config": config,
                    "config_kind": kind, "favours": favours,
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


def _counts(trials: pd.DataFrame) -> pd.DataFrame:
    return an.case_counts(trials)


def test_cases_pool_draws_and_count_other_in_the_denominator(trials: pd.DataFrame) -> None:
    counts = _counts(trials).set_index(["model", "issue_id", "case"])
    balanced = counts.loc[("m1", "i1", "all")]
    assert (balanced.n_pro, balanced.n_con, balanced.n_other, balanced.n) == (2, 0, 1, 3)
    assert balanced.other_share == pytest.approx(1 / 3)
    clear_con = counts.loc[("m1", "i1", "75con")]  # cc_con_1 "ccc" + cc_con_2 "ccp"
    assert (clear_con.n_pro, clear_con.n_con, clear_con.n) == (1, 5, 6)


def test_errors_are_counted_but_not_shares() -> None:
    frame = pd.DataFrame(_trials("m", "i", {"baseline": "ppe"}))
    row = an.case_counts(frame).iloc[0]
    assert (row.n, row.n_error, row.pro_share) == (2, 1, 1.0)


# m1/i1 (FOLLOWER): baseline 2/3 pro. con "ccc" flips to con at 1.0 (w1); 75con pools
# "ccc" + "ccp" = 5/6 con (w2); pro, 75pro and balanced stay pro.
PUBLISHED_M1_I1 = (1 * (1 - 2 / 3) + 2 * (5 / 6 - 2 / 3)) / 9 * 100
PRO_SHARE_M1_I1 = (1 * (2 / 3 - 0) + 2 * (2 / 3 - 1 / 6)) / 9 * 100
EQUAL_M1_I1 = ((1 - 2 / 3) + (5 / 6 - 2 / 3)) / 5 * 100


def test_om_per_issue_matches_hand_computation(trials: pd.DataFrame) -> None:
    om = om_per_issue(_counts(trials)).set_index(["model", "issue_id"])
    row = om.loc[("m1", "i1")]
    assert row["om"] == pytest.approx(PUBLISHED_M1_I1)
    assert row["om_pro_share"] == pytest.approx(PRO_SHARE_M1_I1)
    assert row["om_equal_weights"] == pytest.approx(EQUAL_M1_I1)
    assert row["flips"] == 2 and row["baseline_stance"] == "pro"
    assert om.loc[("m1", "i2"), "om"] == 0.0
    assert om.loc[("m2", "i1"), "om"] == 0.0


def test_om_per_model_carries_a_ci_over_issues(trials: pd.DataFrame) -> None:
    table = om_per_model(om_per_issue(_counts(trials)))
    om = table[table["variant"] == "published"].set_index("model")
    assert om.loc["m1", "value"] == pytest.approx(PUBLISHED_M1_I1 / 2)
    assert om.loc["m1", "ci_low"] <= om.loc["m1", "value"] <= om.loc["m1", "ci_high"]
    assert om.loc["m1", "ci_low"] == pytest.approx(0.0)  # two issues cannot exclude 0
    assert om.loc["m2", "value"] == 0.0  # two issues, both 0: the exact interval of 0 of 2
    assert (om.loc["m2", "ci_low"], om.loc["m2", "ci_high"]) == pytest.approx(
        (0.0, 100 * clopper_pearson_ci(0, 2)[1])
    )
    assert set(table["variant"]) == {"published", "pro_share", "equal_weights"}


def test_refusal_rates_at_baseline_balanced_and_with_arguments(trials: pd.DataFrame) -> None:
    refusals = an.refusal_rates(_counts(trials)).set_index(["model", "issue_id"])
    assert refusals.loc[("m1", "i1"), "baseline_other"] == 0.0
    assert refusals.loc[("m1", "i1"), "balanced_other"] == pytest.approx(1 / 3)
    assert refusals.loc[("m1", "i1"), "with_arguments_other"] == pytest.approx(1 / 21)


def test_a_model_missing_a_cell_is_kept_in_every_summary() -> None:
    # m2 answered nothing readable with arguments on i2: its with-arguments rate has one issue
    # fewer than its baseline rate. Merging the two on n used to drop m2 altogether.
    rows = _trials("m1", "i1", FOLLOWER) + _trials("m1", "i2", FOLLOWER)
    rows += _trials("m2", "i1", STUBBORN)
    rows += _trials("m2", "i2", {c: ("ooo" if c == "baseline" else "eee") for c in FOLLOWER})
    summary = an.refusal_summary(an.refusal_rates(_counts(pd.DataFrame(rows)))).set_index("model")
    assert set(summary.index) == {"m1", "m2"}
    assert summary.loc["m2", "baseline_other"] == pytest.approx(0.5)
    assert summary.loc["m2", "issues_above_threshold"] == 1
    baseline = an.baseline_stances(_counts(pd.DataFrame(rows))).set_index("model")
    assert set(baseline.index) == {"m1", "m2"}


def test_counter_argument_shift_detected() -> None:
    contrary = dict(STUBBORN, baseline="ppc", one_sided_con="ppp")  # con arguments -> more pro
    counter = an.counter_argument_shifts(an.case_counts(pd.DataFrame(_trials("m", "i", contrary))))
    assert counter[["case", "shift"]].values.tolist() == [["con", pytest.approx(1 / 3)]]
    summary = an.counter_shift_summary(counter, ["m", "other-model"]).set_index("model")
    assert summary.loc["m", "count"] == 1
    assert summary.loc["other-model", "count"] == 0


def test_single_contradicting_argument_effect(trials: pd.DataFrame) -> None:
    single = an.single_argument_effect(_counts(trials)).set_index(["model", "issue_id"])
    # one-sided pro 1.0 vs 75pro (pooled 5/6); 75con (pooled 1/6 pro) vs one-sided con 0
    assert single.loc[("m1", "i1"), "con_amid_pro"] == pytest.approx(1 - 5 / 6)
    assert single.loc[("m1", "i1"), "pro_amid_con"] == pytest.approx(1 / 6)


def test_single_argument_count_takes_the_arguments_direction() -> None:
    """Section 6.2's 'a single argument shifted its stance > 50%' counts a move the way the
    added argument argues: one con argument among pro ones lowering the pro share by more than
    0.5. A rise of the same size (the pro share going up when a con argument joins) is not
    that argument's effect and is not counted (before issue 25 the count took its size)."""
    toward = dict(FOLLOWER, one_sided_pro="ppp", cc_pro_1="ccc", cc_pro_2="ccc")  # 1.0 -> 0.0
    away = dict(FOLLOWER, one_sided_pro="ccc", cc_pro_1="ppp", cc_pro_2="ppp")  # 0.0 -> 1.0
    rows = _trials("toward", "i", toward) + _trials("away", "i", away)
    single = an.single_argument_effect(_counts(pd.DataFrame(rows)))
    summary = an.single_argument_summary(single).set_index("model")
    assert single.set_index("model").loc["away", "con_amid_pro"] == pytest.approx(-1.0)
    assert summary.loc["toward", "issues_above_threshold"] == 1
    assert summary.loc["away", "issues_above_threshold"] == 0


def test_case_shifts_per_model(trials: pd.DataFrame) -> None:
    shifts = an.case_shifts(_counts(trials)).set_index(["model", "case"])
    # m1: i1 con case 0 - 2/3, i2 stubborn 0 -> mean -1/3
    assert shifts.loc[("m1", "con"), "value"] == pytest.approx(-1 / 3)
    assert shifts.loc[("m2", "con"), "value"] == 0.0
    assert list(shifts.loc["m1"].index) == ["pro", "con", "75pro", "75con", "all"]


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


def test_argument_shift_from_the_baseline_per_template_as_the_authors_compute_figure_6() -> None:
    """Issue 25: the authors' Figure 6 takes each argument's pro share minus the baseline's
    per template, averaged over templates weighted by the argument's trials; the paper's text
    says the pro share itself. Both are computed; the correlation headline is the shift."""
    first = _trials("m", "i", {"baseline": "ppp", "one_sided_con": "ccc"})
    second = [
        dict(row, template=2)
        for row in _trials("m", "i", {"baseline": "ccc", "one_sided_con": "ccp"})
    ]
    persuasiveness = an.argument_persuasiveness(pd.DataFrame(first + second))
    row = persuasiveness.set_index("argument_id").loc["i:con:0"]
    assert (row["n"], row["pro_share"]) == (6, pytest.approx(1 / 6))
    # template 1: 0 - 1 over 3 trials; template 2: 1/3 - 0 over 3 trials
    assert row["pro_share_shift"] == pytest.approx((-1 * 3 + 1 / 3 * 3) / 6)
    correlation = an.argument_correlations(persuasiveness)
    assert list(correlation.columns) == ["model_a", "model_b", "pearson_r", "pearson_r_pro_share",
                                         "n_arguments"]  # fmt: skip


def test_baseline_agreement_lists() -> None:
    rows = _trials("a", "same", {"baseline": "pppppppppp"}) + _trials(
        "b", "same", {"baseline": "pppppppppp"}
    )
    rows += _trials("a", "split", {"baseline": "pppppppppp"}) + _trials(
        "b", "split", {"baseline": "cccccccccc"}
    )
    rows += _trials("a", "alone", {"baseline": "pppppppppp"})
    agreement = an.baseline_agreement(an.case_counts(pd.DataFrame(rows))).set_index("issue_id")
    assert agreement.loc["same", ["mpd", "unanimous", "consistent"]].tolist() == [0.0, True, True]
    assert agreement.loc["split", ["mpd", "strong_disagreement"]].tolist() == [1.0, True]
    # run by one model only: no pairwise difference, so neither unanimous nor disagreeing
    assert agreement.loc["alone", ["n_models", "unanimous", "consistent"]].tolist() == [
        1,
        False,
        False,
    ]


def test_controversial_subset_rule_and_refusals() -> None:
    rows = []
    for issue, (a, b) in {"far": ("pppppppppp", "cccccccccc"), "refused": ("pppppppppp", "oooooooooc"),
                          "near": ("pppppppppp", "ppppppppcc")}.items():  # fmt: skip
        rows += _trials("a", issue, {"baseline": a}) + _trials("b", issue, {"baseline": b})
    subset = an.controversial_subset(an.case_counts(pd.DataFrame(rows)), size=2).set_index(
        "issue_id"
    )
    assert subset.loc["far", ["by_rule", "ranked"]].tolist() == [True, True]
    assert subset.loc["refused", "refused_by"] == "b" and not subset.loc["refused", "ranked"]
    assert subset.loc["near", ["by_rule", "ranked"]].tolist() == [False, True]  # MPD 0.2 < 0.8


def test_summary_holds_om_with_ci_for_every_model(trials: pd.DataFrame) -> None:
    tables = compute_tables(trials)
    summary = build_summary(tables["counts"], tables)
    assert set(summary["om"]) == {"m1", "m2"}
    assert set(summary["om"]["m1"]) == {
        "value",
        "ci_low",
        "ci_high",
        "n",
        "n_undefined",
        "not_measured",
        "partial",
        "value_if_measured",
        "ci_if_measured",
    }
    assert summary["om"]["m1"]["not_measured"] is None and summary["om"]["m1"]["partial"] is False
    assert set(summary["om_variants"]) == {"published", "pro_share", "equal_weights"}
    assert summary["trials"]["m1"]["total"] == 2 * len(FOLLOWER) * 3
    assert summary["baseline_pro_share"]["m2"]["value"] == 1.0
    assert summary["issues_pro_over_con_pct"]["m2"]["issues_pro"] == 2


def test_a_run_where_every_call_failed_gives_tables_not_a_crash() -> None:
    frame = pd.DataFrame(_trials("m", "i", dict.fromkeys(FOLLOWER, "eee")))
    tables = compute_tables(frame)
    assert tables["case_shifts"].empty and tables["counter_shifts"].empty
    summary = build_summary(tables["counts"], tables)
    assert summary["trials"]["m"]["total"] == len(FOLLOWER) * 3
    assert summary["om"]["m"]["value"] is None and summary["om"]["m"]["n_undefined"] == 1


def _ci_columns(table: pd.DataFrame) -> list[str]:
    return [column for column in table.columns if "ci_low" in column or "ci_high" in column]


@pytest.mark.parametrize("issues", [1, 3])
def test_every_interval_resamples_issues_never_answers(issues: int) -> None:
    """Many answers per issue: with one issue no table has an interval, and with three no
    estimate rests on more than three units (an interval over answers would have both)."""
    rng = np.random.default_rng(issues)
    rows = []
    for model in ("m1", "m2"):
        for k in range(issues):
            spelled = {config: "".join(rng.choice(list("ppcco"), size=30)) for config in FOLLOWER}
            rows += _trials(model, f"i{k}", spelled)
    frame = pd.DataFrame(rows).assign(a_side=lambda f: rng.choice(["pro", "con"], size=len(f)))
    tables = compute_tables(frame)
    with_ci = {
        name: table for name, table in tables.items() if _ci_columns(table) and not table.empty
    }
    assert {"om_model", "baseline", "refusals_model", "case_shifts", "single_argument_model",
            "position_preference"} <= set(with_ci)  # fmt: skip
    for name, table in with_ci.items():
        units = table[[column for column in ("n", "issues") if column in table]].to_numpy(
            dtype=float
        )
        assert (units <= issues).all(), name
        bounds = table[_ci_columns(table)].to_numpy(dtype=float)
        if issues == 1:
            assert np.isnan(bounds).all(), name
        else:
            assert (~np.isnan(bounds)).any(), name


def _placed(model: str, issue: str, on_a: dict[str, tuple[int, int]]) -> list[dict]:
    """Baseline rows of a positions table: a_side -> (n_pro, n_con)."""
    return [{"model": model, "issue_id": issue, "case": "neither", "a_side": side, "n_pro": pro,
             "n_con": con, "n_other": 0, "n_error": 0} for side, (pro, con) in on_a.items()]  # fmt: skip


def test_position_preference_separates_choosing_a_from_holding_a_side() -> None:
    rows = _placed("holder", "i1", {"pro": (4, 0), "con": (2, 0)})  # always pro: A 4 times, B twice
    rows += _placed("holder", "i2", {"pro": (0, 8), "con": (0, 4)})  # always con
    rows += _placed("always-a", "i1", {"pro": (4, 0), "con": (0, 2)})
    rows += _placed("always-a", "i2", {"pro": (8, 0), "con": (0, 4)})
    rows += _placed("one-placement", "i1", {"pro": (4, 0)})
    table = an.position_preference(pd.DataFrame(rows)).set_index("model")
    assert table.loc["holder", "value"] == 0.5 and table.loc["always-a", "value"] == 1.0
    assert table.loc["holder", "n"] == 2  # issues all alike: an interval over 2 issues
    assert table.loc["holder", "ci_low"] < 0.5 < table.loc["holder", "ci_high"]
    assert table.loc["one-placement", "n"] == 0  # no balanced share from one placement
