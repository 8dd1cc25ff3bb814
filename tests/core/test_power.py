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
from statsmodels.stats.power import TTestPower

from stancelab.core.errors import StancelabError
from stancelab.core.runs.design import PowerRequest, dataset_units, plan_design
from stancelab.core.runs.estimate import PlannedCalls
from stancelab.core.stats.power import (
    check_question,
    default_spread,
    detectable_difference,
    half_width,
    pilot_spread,
    sample_size,
    simulated_power,
    simulated_units,
    units_for_difference,
    units_for_half_width,
)


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
    # with 34 units, the detectable difference is just under 5
    assert detectable_difference(10.0, 34, 0.8, 0.05) == pytest.approx(4.95, abs=0.01)


def test_units_for_a_half_width_are_the_fewest_whose_t_interval_fits() -> None:
    units = units_for_half_width(10.0, 2.0, 0.05)
    assert units == 99  # (1.96 x 10 / 2)^2 = 96 with the normal quantile; t needs 99
    assert half_width(10.0, 99, 0.05) <= 2.0 < half_width(10.0, 98, 0.05)


def test_the_pilot_simulation_agrees_with_the_closed_form_on_normal_data() -> None:
    values = np.random.default_rng(1).normal(3.0, 10.0, 500)
    sd = float(np.std(values, ddof=1))
    closed = units_for_difference(sd, 5.0, 0.8, 0.05)
    simulated = simulated_units(values, 5.0, 0.8, 0.05, seed=0, reps=2000)
    assert simulated is not None and abs(simulated - closed) <= 3, (simulated, closed)
    analytic = TTestPower().power(effect_size=5.0 / sd, nobs=closed, alpha=0.05)
    assert simulated_power(values, closed, 5.0, 0.05, seed=0) == pytest.approx(analytic, abs=0.03)


def test_skewed_pilot_differences_are_simulated_not_given_the_t_closed_form() -> None:
    values = np.random.default_rng(2).exponential(10.0, 40)
    spread = pilot_spread(_two_models(values), "difference", "pilot")
    assert spread is not None
    size = sample_size("difference", spread, 5.0, 0.8, 0.05, dataset_units=None, seed=0)
    assert size.method.startswith("simulation") and size.units is not None and size.reachable
    # the search stops just past the dataset: a design it cannot reach says so
    small = sample_size("difference", spread, 1.0, 0.8, 0.05, dataset_units=5, seed=0)
    assert not small.reachable and small.searched == 6 and small.best_target is not None


def _two_models(differences: np.ndarray) -> pd.DataFrame:
    base = np.linspace(0, 50, len(differences))
    return pd.concat([
        pd.DataFrame({"model": "a", "unit": range(len(base)), "value": base + differences}),
        pd.DataFrame({"model": "b", "unit": range(len(base)), "value": base}),
    ])  # fmt: skip


def test_pilot_spread_uses_paired_differences_or_assumes_uncorrelated_models() -> None:
    paired = pilot_spread(_two_models(np.array([1.0, 3.0, 5.0, 7.0])), "difference", "RUN")
    assert paired is not None and not paired.conservative
    assert paired.sd == pytest.approx(np.std([1, 3, 5, 7], ddof=1))  # the shared base cancels
    one = pilot_spread(
        pd.DataFrame({"model": "a", "unit": range(4), "value": [0.0, 10, 20, 30]}),
        "difference",
        "RUN",
    )
    assert one is not None and one.conservative and "uncorrelated" in one.source
    assert one.sd == pytest.approx(np.std([0, 10, 20, 30], ddof=1) * math.sqrt(2))
    no_pilot = default_spread("half_width", (0.0, 100.0), "no pilot run given")
    assert no_pilot.sd == 50.0 and no_pilot.conservative


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
    assert "Cannot reach 5: it needs 1572 units, the dataset has 12" in text
    assert (
        f"detects a difference of {detectable_difference(50 * math.sqrt(2), 12, 0.8, 0.05):.3g}"
        in text
    )
    assert "conservative" in text and design.limit == 12
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
                               PowerRequest("difference", 20.0, pilot=pilot / "logs"))  # fmt: skip
    sd = float(np.std(values, ddof=1)) * math.sqrt(2)
    assert f"SD {sd:.3g}" in text and "uncorrelated" in text and "conservative" in text
    assert f"Units needed: {units_for_difference(sd, 20.0, 0.8, 0.05)} of the dataset's 12" in text
    assert (
        "the pilot ran 1, so its spread holds the within-unit variance at 1: at 3 the spread is narrower"
        in text
    )
