"""Power and sample size (`core.stats.power`, `stancelab estimate PROBE --detect D | --half-width H`):
sample sizes against statsmodels and the closed form, the pilot-resampling simulation against
the closed form on normal data, and what a pilot's spread and the dataset's size allow."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.power import TTestPower

from stancelab.core.errors import StancelabError
from stancelab.core.runs.design import PowerRequest, dataset_units, plan_design
from stancelab.core.runs.estimate import PlannedCalls
from stancelab.core.stats.compare import WEIGHT, paired_test, weighted_sd
from stancelab.core.stats.power import (
    Plan,
    Spread,
    check_question,
    default_spread,
    detectable_difference,
    half_width,
    mcnemar_power,
    normal_limit_pvalues,
    pilot_spread,
    planned_measure,
    sample_size,
    sd_upper_limit,
    simulated_power,
    simulated_samples,
    simulated_units,
    units_for_difference,
    units_for_half_width,
)
from stancelab.core.stats.signflip import sign_flip_pvalues


def test_units_for_a_paired_difference_match_statsmodels_and_gpower() -> None:
    # d = 0.5, two-sided alpha 0.05, power 0.8: G*Power's paired t-test gives 34
    assert units_for_difference(10.0, 5.0, 0.8, 0.05) == 34
    exact = TTestPower().solve_power(
        effect_size=0.25, alpha=0.01, power=0.9, alternative="two-sided"
    )
    assert units_for_difference(8.0, 2.0, 0.9, 0.01) == math.ceil(exact)
    # the normal approximation ((z_a/2 + z_b) / d)^2 is the t-test's lower bound, within 3 units
    normal = ((stats.norm.ppf(0.975) + stats.norm.ppf(0.8)) / 0.5) ** 2
    assert 0 <= 34 - normal <= 3


def test_units_for_a_half_width_are_the_fewest_whose_t_interval_fits() -> None:
    units = units_for_half_width(10.0, 2.0, 0.05)
    assert units == 99  # (1.96 x 10 / 2)^2 = 96 with the normal quantile; t needs 99
    assert half_width(10.0, 99, 0.05) <= 2.0 < half_width(10.0, 98, 0.05)


def test_the_sign_flip_simulation_needs_about_the_t_tests_units_on_normal_data() -> None:
    """The sign-flip test of the mean is as efficient as the t-test on normal data (its
    asymptotic relative efficiency is 1): the 34 units of the t-test (d = 0.5) stay about 34."""
    spread = Spread(10.0, "known", False)
    simulated = simulated_units(spread, Plan(), 5.0, 0.8, 0.05, seed=0, reps=1000)
    assert simulated is not None and 32 <= simulated <= 37, simulated
    analytic = TTestPower().power(effect_size=0.5, nobs=simulated, alpha=0.05)
    assert simulated_power(spread, simulated, 5.0, 0.05, seed=0) == pytest.approx(
        analytic, abs=0.05
    )


def _weighted_pilot(units: int = 16) -> pd.DataFrame:
    """Two models on `units` topics of 1 to 4 answers each (`weight`), a's rate rising with
    them: the headline pools answers, so a difference weights each topic by its answers."""
    weights = np.array([1.0, 2.0, 3.0, 4.0] * (units // 4))
    a = np.clip(20.0 + 12.0 * weights + np.linspace(-8, 8, units), 0, 100)
    b = np.full(units, 30.0) + np.linspace(5, -5, units)
    return pd.concat([
        pd.DataFrame({"model": "a", "unit": range(units), "value": a, WEIGHT: weights}),
        pd.DataFrame({"model": "b", "unit": range(units), "value": b, WEIGHT: weights}),
    ])  # fmt: skip


def test_the_simulated_test_is_the_reports_paired_test() -> None:
    """Each simulated sample (units with their weights, resampled from a pilot whose headline
    pools answers) is tested by the report's own test: the power is the share of samples
    whose `paired_test` p is below alpha (before issue 36's merge: a Wilcoxon test of
    unweighted differences)."""
    spread = pilot_spread(_weighted_pilot(), "difference", "pilot", (0.0, 100.0))
    assert spread is not None and spread.weights is not None and spread.yes_no is False
    values, weights = simulated_samples(spread, 9, 20.0, seed=4, reps=120)
    assert weights.max() == pytest.approx(4 * weights.min())  # each topic's answers, as shares
    pvalues = [paired_test(row, np.zeros(9), value_range=(0.0, 100.0), weights_a=w, weights_b=w).p
               for row, w in zip(values, weights, strict=True)]  # fmt: skip
    expected = float(np.mean(np.array(pvalues) < 0.05))
    assert 0.1 < expected < 0.95
    assert simulated_power(spread, 9, 20.0, 0.05, seed=4, reps=120) == expected


def test_a_pooled_headlines_pilot_is_read_on_the_headlines_estimand() -> None:
    """The pilot's paired differences are each topic's contribution to the difference of the
    pooled headlines, weighted by its answers: their weighted SD is the spread planned."""
    units = _weighted_pilot()
    spread = pilot_spread(units, "difference", "RUN", (0.0, 100.0))
    assert spread is not None and spread.values is not None and spread.weights is not None
    a, b = (units[units["model"] == model] for model in ("a", "b"))
    pooled = np.average(a["value"], weights=a[WEIGHT]) - np.average(b["value"], weights=b[WEIGHT])
    assert np.average(spread.values, weights=spread.weights) == pytest.approx(pooled)
    sd = weighted_sd(spread.values, spread.weights)
    assert spread.sd == pytest.approx(sd_upper_limit(sd, 16))
    assert "weighted by their answers" in spread.source
    size = sample_size("difference", spread, 10.0, 0.8, 0.05, None, seed=0)
    assert "resampled with their weights" in size.method and "sign-flip" in size.method


def test_the_plan_runs_mcnemar_only_where_the_pilots_units_are_yes_no() -> None:
    """A binary lens whose units pool two outcomes (llm-bias-bench's two categories a topic)
    is compared by the sign-flip test, so it is planned for it; one outcome a unit, McNemar."""
    rng = np.random.default_rng(1)
    one = pd.DataFrame({"model": np.repeat(["a", "b"], 12), "unit": np.tile(range(12), 2),
                        "value": 100.0 * (rng.random(24) < 0.5)})  # fmt: skip
    single = pilot_spread(one, "difference", "RUN", (0.0, 100.0))
    two = pd.concat([one, one.assign(value=100.0 * (rng.random(24) < 0.5))])
    pooled = pilot_spread(two, "difference", "RUN", (0.0, 100.0))
    assert single is not None and pooled is not None
    assert planned_measure("binary", single) == "binary"
    assert planned_measure("binary", pooled) == "continuous"
    assert planned_measure("continuous", single) == "binary"  # whatever the lens declares
    assert planned_measure("binary", Spread(100.0, "default", True)) == "binary"


def test_many_units_read_their_p_from_the_sign_flip_tests_normal_limit() -> None:
    """Above LARGE_UNITS units the simulation reads each sample's p from the normal limit of
    its sign-flip distribution: the power agrees with the test's own flips at 200 units."""
    spread = Spread(10.0, "known", False)
    values, weights = simulated_samples(spread, 200, 1.6, seed=2, reps=400)
    flips = np.mean(sign_flip_pvalues(values, weights) < 0.05)
    limit = np.mean(normal_limit_pvalues(values, weights) < 0.05)
    assert 0.4 < flips < 0.9 and limit == pytest.approx(flips, abs=0.02)


def test_skewed_pilot_differences_are_resampled() -> None:
    values = np.random.default_rng(2).exponential(10.0, 40)
    spread = pilot_spread(_two_models(values), "difference", "pilot")
    assert spread is not None and spread.values is not None
    size = sample_size("difference", spread, 5.0, 0.8, 0.05, dataset_units=None, seed=0)
    assert "resampled" in size.method and size.units is not None and size.reachable
    # the search stops just past the dataset: a design it cannot reach says so
    small = sample_size("difference", spread, 1.0, 0.8, 0.05, dataset_units=5, seed=0)
    assert not small.reachable and small.searched == 6 and small.best_target is not None


def _two_models(differences: np.ndarray) -> pd.DataFrame:
    base = np.linspace(0, 50, len(differences))
    return pd.concat([
        pd.DataFrame({"model": "a", "unit": range(len(base)), "value": base + differences}),
        pd.DataFrame({"model": "b", "unit": range(len(base)), "value": base}),
    ])  # fmt: skip


def test_pilot_spread_takes_the_upper_confidence_limit_of_paired_differences() -> None:
    paired = pilot_spread(_two_models(np.array([1.0, 3.0, 5.0, 7.0])), "difference", "RUN")
    assert paired is not None and not paired.conservative
    sd = np.std([1, 3, 5, 7], ddof=1)  # the shared base cancels
    assert paired.sd == pytest.approx(sd * math.sqrt(3 / stats.chi2.ppf(0.2, 3)))
    assert "80% upper confidence limit" in paired.source and "fewer than 10" in paired.warning
    one = pilot_spread(
        pd.DataFrame({"model": "a", "unit": range(4), "value": [0.0, 10, 20, 30]}),
        "difference",
        "RUN",
    )
    assert one is not None and one.conservative and "uncorrelated" in one.source
    assert one.sd == pytest.approx(
        sd_upper_limit(np.std([0, 10, 20, 30], ddof=1), 4) * math.sqrt(2)
    )
    no_pilot = default_spread("half_width", (0.0, 100.0), "no pilot run given")
    assert no_pilot.sd == 50.0 and no_pilot.conservative


def test_a_small_pilot_underestimates_the_sd_rarely_at_its_upper_limit() -> None:
    """A 3-unit pilot's SD falls short of the truth about 60% of the time; its 80% upper
    confidence limit about 20% of the time."""
    samples = np.random.default_rng(4).normal(0.0, 1.0, (4000, 3))
    sds = np.std(samples, axis=1, ddof=1)
    assert np.mean(sds < 1.0) > 0.55
    upper = np.array([sd_upper_limit(sd, 3) for sd in sds])
    assert np.mean(upper < 1.0) == pytest.approx(0.2, abs=0.02)


def test_the_worst_case_spread_of_a_difference_is_the_value_range() -> None:
    """Two models at opposite ends of 0-100, either way, on every unit: SD 100, not 70.7."""
    spread = default_spread("difference", (0.0, 100.0), "no pilot run given")
    assert spread.sd == 100.0 and "opposite ends" in spread.source
    pilot = pilot_spread(
        _two_models(np.array([-90.0, 90.0, -90.0])), "difference", "RUN", (0.0, 100.0)
    )
    assert pilot is not None and pilot.sd == 100.0 and "capped" in pilot.source


@pytest.mark.parametrize("ratio", [6.0, 20.0, 1000.0])
def test_a_large_difference_plans_without_error(ratio: float) -> None:
    """D / SD of 6 or more crashed the t-test's solver (ceil of NaN); the sign-flip test needs
    the units its smallest p allows: 6 at alpha 0.05 (2 / 2^6), 7 at 0.05 / 3."""
    spread = Spread(2.0, "pilot", False)
    closed = units_for_difference(2.0, 2.0 * ratio, 0.8, 0.05)
    assert 2 <= closed <= 4 and TTestPower().power(ratio, closed, 0.05) >= 0.8
    one = sample_size("difference", spread, 2.0 * ratio, 0.8, 0.05, dataset_units=None)
    three = sample_size(
        "difference", spread, 2.0 * ratio, 0.8, 0.05, None, plan=Plan(comparisons=3)
    )
    assert (one.units, three.units) == (6, 7)


def test_the_plan_is_at_the_alpha_holm_leaves_each_pair() -> None:
    """The t-test's 34 units (d = 0.5) have power 0.65 at 0.05 / 3; the plan for three pairs
    asks for more, at 0.0167."""
    assert TTestPower().power(0.5, 34, 0.05 / 3) == pytest.approx(0.65, abs=0.01)
    spread = Spread(10.0, "known", False)
    one = sample_size("difference", spread, 5.0, 0.8, 0.05, None, plan=Plan(comparisons=1))
    three = sample_size("difference", spread, 5.0, 0.8, 0.05, None, plan=Plan(comparisons=3))
    assert one.units is not None and three.units is not None and three.units > one.units + 8
    assert "0.05 / 3 = 0.0167" in three.method and "Holm" in three.method
    assert simulated_power(spread, three.units, 5.0, 0.05 / 3, seed=0) >= 0.8


def test_a_binary_lens_is_planned_for_exact_mcnemar() -> None:
    """The t-test plans 152 units for d = 0.229; exact McNemar over 152 yes/no units has power
    about 0.75 there, so the plan for a binary lens asks for more."""
    effect = TTestPower().solve_power(nobs=152, alpha=0.05, power=0.8)
    sd = 100 / math.sqrt(2)
    assert mcnemar_power(152, effect * sd, sd, 0.05) == pytest.approx(0.76, abs=0.015)
    plan = Plan("binary", 1, (0.0, 100.0))
    size = sample_size("difference", Spread(sd, "x", True), effect * sd, 0.8, 0.05, None, plan=plan)
    assert size.units is not None and size.units > 152 and "exact McNemar" in size.method
    # against a simulation of the report's test itself (`paired_test` runs exact McNemar here)
    rng = np.random.default_rng(5)
    delta, discordant = effect * sd / 100, 0.5 + (effect * sd / 100) ** 2
    rejected = 0
    for _ in range(600):
        cells = rng.multinomial(152, [discordant * (1 + delta / discordant) / 2,
                                      discordant * (1 - delta / discordant) / 2, 1 - discordant])  # fmt: skip
        a = np.repeat([100.0, 0.0, 100.0], cells)
        b = np.repeat([0.0, 100.0, 100.0], cells)
        tested = paired_test(a, b, "binary", (0.0, 100.0))
        assert tested.test == "exact McNemar"
        assert tested.p == pytest.approx(
            mcnemar([[cells[2], cells[0]], [cells[1], 0]], exact=True).pvalue
        )
        rejected += tested.p < 0.05
    assert rejected / 600 == pytest.approx(mcnemar_power(152, effect * sd, sd, 0.05), abs=0.05)


@dataclass
class _Options:
    models: list[str]
    out_dir: Path
    limit: int | None = None
    seed: int = 0
    trials: int = 3


@dataclass
class _Probe:
    """A probe of 12 units of 5 calls each."""

    unit_values: object = None
    name: str = "toy"
    title: str = "Toy"
    lens: str = "Toy lens"

    def plan(self, options: _Options) -> list[PlannedCalls]:
        units = min(options.limit or 12, 12)
        return [PlannedCalls.exact("toy", "subject", 5 * units, 100 * units, 10)]


def test_the_dataset_size_caps_the_design_and_says_what_it_detects(tmp_path: Path) -> None:
    probe, options = _Probe(), _Options(["mockllm/a"], tmp_path)
    assert dataset_units(probe, options) == 12  # type: ignore[arg-type]
    text, design = plan_design(probe, options, PowerRequest("difference", 5.0))  # type: ignore[arg-type]
    assert "Cannot reach 5: it needs more than 12 units, the dataset has 12" in text
    worst = default_spread("difference", (0.0, 100.0), "no pilot")
    best = detectable_difference(worst, Plan(), 12, 0.8, 0.05, seed=0)
    assert f"detects a difference of {best:.3g}" in text and 60 < best < 100
    assert "conservative" in text and design.limit == 12
    # three models: three pairs, each tested at 0.05 / 3
    text, _ = plan_design(
        probe, _Options(["a", "b", "c"], tmp_path), PowerRequest("difference", 5.0)
    )  # type: ignore[arg-type]
    assert "0.05 / 3 = 0.0167" in text and "over 3 pairs" in text
    # SD 50 (the widest spread of 0-100): t(8) x 50 / sqrt(9) = 38.4 <= 40 < t(7) x 50 / sqrt(8)
    text, design = plan_design(probe, options, PowerRequest("half_width", 40.0))  # type: ignore[arg-type]
    assert "Units needed: 9 of the dataset's 12; trials per unit: 3" in text and design.limit == 9


@pytest.mark.parametrize(("target", "power", "alpha", "message"), [
    (0.0, 0.8, 0.05, "above 0"), (-2.0, 0.8, 0.05, "above 0"),
    (5.0, 1.0, 0.05, "--power must be between 0 and 1"), (5.0, 0.8, 0.0, "--alpha must be between 0 and 1"),
])  # fmt: skip
def test_bad_questions_are_refused(target: float, power: float, alpha: float, message: str) -> None:
    with pytest.raises(StancelabError, match=message):
        check_question(target, power, alpha)


def test_a_pilot_of_a_probe_without_unit_values_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StancelabError, match="no per-unit headline values"):
        plan_design(
            _Probe(), _Options(["m"], tmp_path), PowerRequest("difference", 5.0, pilot=tmp_path)
        )  # type: ignore[arg-type]


def _toy_units(run: object) -> pd.DataFrame:
    return run.table("units")  # type: ignore[attr-defined]


def test_a_one_model_pilot_with_fewer_trials_says_what_it_assumes(tmp_path: Path) -> None:
    pilot = tmp_path / "pilot"
    (pilot / "tables").mkdir(parents=True)
    (pilot / "summary.json").write_text('{"models": ["a"]}')
    (pilot / "run.toml").write_text('probe = "toy"\n\n[options]\ntrials = 1\n')
    values = [0.0, 10.0, 20.0, 30.0]
    pd.DataFrame({"model": "a", "unit": range(4), "value": values}).to_csv(
        pilot / "tables" / "units.csv", index=False
    )
    text, _ = plan_design(_Probe(unit_values=_toy_units), _Options(["m"], tmp_path),  # type: ignore[arg-type]
                               PowerRequest("difference", 40.0, pilot=pilot / "logs"))  # fmt: skip
    sd = sd_upper_limit(float(np.std(values, ddof=1)), 4) * math.sqrt(2)
    assert f"SD {sd:.3g}" in text and "uncorrelated" in text and "conservative" in text
    units = simulated_units(Spread(sd, "pilot", True), Plan(), 40.0, 0.8, 0.05, seed=0)
    assert (
        f"Units needed: {units} of the dataset's 12" in text
        and "Warning: the pilot has 4 units" in text
    )
    assert (
        "the pilot ran 1, so its spread holds the within-unit variance at 1: at 3 the spread is narrower"
        in text
    )
