"""Do stancelab's intervals cover at the sizes users run? Every interval, direction and paired
test that stancelab prints, simulated with each probe's unit structure at 2 to 50 units, through
stancelab's own functions: the coverage of the 95% interval, its mean width, and how often a
direction is called when the truth is 0.

Rows (`measure, method, distribution, n, printed, coverage, width, false_direction,
false_conflict`; the last only for the matrix, from `coverage_extra.py`):
`printed` is the share of replications that print an interval, `coverage` and `width` are over
those, `false_direction` is the share of replications that call a direction (an interval
excluding 0; for a paired test, p < 0.05, averaged as the chance given the sizes of the
differences, see `Outcome`) where the truth is 0, and empty elsewhere. Rows from
`benchmarks/coverage_extra.py` (`settings()`, same schema) are added when it exists.

Replications: 1,000 per setting by default, so a coverage near 95% is measured to +-1.4% (95%
Monte Carlo interval); the paired tests and Clopper-Pearson, whose coverage is near 95% by
construction, four times as many (+-0.7%); the AUROC's bootstrap a quarter (+-2.7%). Seeded:
each setting draws from its own generator, seeded by its name, so a rerun prints the same table.

    python benchmarks/coverage.py [--replications 1000] [--workers 2]
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import math
import sys
import time
import warnings
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import integrate, stats

from stancelab.conviction.entropy import auroc_ci
from stancelab.core.data.topics import signed_cluster_mean, signed_mean
from stancelab.core.stats.compare import VALUE_RANGE, WEIGHT, paired_test, unit_table
from stancelab.core.stats.intervals import bounded_cluster_ci, mean_ci, proportion_ci
from stancelab.core.stats.signflip import flip_size
from stancelab.llm_bias_bench.analysis import sycophancy_rate
from stancelab.prior_prejudice.analysis import spread_ci

UNITS = (2, 3, 5, 8, 12, 20, 35, 50)
REPLICATIONS = 1000
NEAR_NOMINAL = 4  # exact tests and Clopper-Pearson cover near 95%: 4,000 replications (+-0.7%)
TARGET_COVERAGE = 0.94
TARGET_FALSE_DIRECTION = 0.05
ROW_KEYS = (
    "measure",
    "method",
    "distribution",
    "n",
    "printed",
    "coverage",
    "width",
    "false_direction",
    "false_conflict",
)
REFERENCE = "before issue 36"
"""in a method's name: a rule stancelab no longer applies, shown for comparison only (not held
to the targets)"""
PERCENT = (0.0, 100.0)
SIGNED = (-1.0, 1.0)

Outcome = tuple[float, float, float | Callable[[], float] | None]
"""one replication: the interval's bounds (NaN: none printed) and whether a direction was called
(1 or 0), or for a paired test the chance it calls one given the sizes of the differences
(`core.stats.signflip.flip_size`, read only under a true 0, whose draws have exchangeable signs:
a conditional Monte Carlo estimate, exact over the signs; a callable, evaluated only there);
None where no direction is printed"""


@dataclass(frozen=True)
class Setting:
    """One measure, its method and a distribution of units at one number of units `n`."""

    measure: str
    method: str
    distribution: str
    n: int
    truth: float
    draw: Callable[[np.random.Generator, int, int], Outcome]
    """(generator, n, replication) -> one replication's outcome"""
    share: float = 1.0
    """the share of the replications this setting runs (the slow bootstrap ones run fewer)"""

    @property
    def key(self) -> str:
        return f"{self.measure}|{self.method}|{self.distribution}|{self.n}"


def _expected(transform: Callable[[np.ndarray], np.ndarray], scale: float = 1.0) -> float:
    """E[transform(scale * Z)] for a standard normal Z, by quadrature."""
    value, _ = integrate.quad(lambda z: float(transform(np.array(scale * z))) * stats.norm.pdf(z), -12, 12,
                              limit=200)  # fmt: skip
    return value


def _lognormal_share(scale: float) -> Callable[[np.ndarray], np.ndarray]:
    """A share in % that is lognormal below its bound: 100 min(1, scale e^z)."""
    return lambda z: 100 * np.minimum(1.0, scale * np.exp(z))


def _clipped_normal(
    centre: float, spread: float, low: float, high: float
) -> Callable[[np.ndarray], np.ndarray]:
    return lambda z: np.clip(centre + spread * z, low, high)


FOUR_LEVELS = np.array([0.0, 100 / 3, 200 / 3, 100.0])
FOUR_LEVEL_SHARES = np.array([0.55, 0.25, 0.12, 0.08])


def _interval(estimate: Any, direction: bool | None = None) -> Outcome:
    called = None if direction is None else float(direction)
    return float(estimate.ci_low), float(estimate.ci_high), called


def _excludes_zero(low: float, high: float) -> bool:
    return not math.isnan(low) and (low > 0 or high < 0)


# ------------------------------------------------------------------ one value per unit


def _unit_means() -> list[Setting]:
    """Means over units of one bounded value each (MillStone's OM, IssueBench's one-sided
    share per issue, Conviction's true-stance share, prior prejudice's rating gap): `mean_ci`."""
    normal = _clipped_normal(40, 15, *PERCENT)
    skewed = _lognormal_share(0.15)
    shapes: list[tuple[str, Callable[[np.random.Generator, int], np.ndarray], float]] = [
        ("normal (40, 15), clipped to 0-100", lambda g, n: normal(g.standard_normal(n)), _expected(normal)),
        ("skewed: lognormal share, 100 min(1, 0.15 e^Z)", lambda g, n: skewed(g.standard_normal(n)), _expected(skewed)),
        ("0/100 outcomes, 20% at 100", lambda g, n: 100.0 * (g.random(n) < 0.2), 20.0),
        ("4 answer levels 0/33/67/100 (55/25/12/8%)", lambda g, n: g.choice(FOUR_LEVELS, n, p=FOUR_LEVEL_SHARES),
         float(FOUR_LEVELS @ FOUR_LEVEL_SHARES)),
    ]  # fmt: skip
    settings = []
    for name, values, truth in shapes:

        def draw(g: np.random.Generator, n: int, seed: int, values: Any = values) -> Outcome:
            return _interval(mean_ci(values(g, n), PERCENT, seed=seed))

        settings += [Setting("mean over units (0-100)", "mean_ci: betting / Clopper-Pearson", name, n, truth, draw)
                     for n in UNITS]  # fmt: skip
    return settings


def _signed_stances() -> list[Setting]:
    """A topic's signed stance, one value per unit in [-1, 1] (MillStone's issues): `signed_mean`;
    a direction where its interval excludes 0 (the matrix's agree / disagree)."""
    normal = _clipped_normal(0, 0.4, *SIGNED)
    skewed = lambda z: 1 - 2 * np.minimum(1.0, 0.15 * np.exp(z))  # noqa: E731
    shapes: list[tuple[str, Callable[[np.random.Generator, int], np.ndarray], float]] = [
        ("normal (0, 0.4), clipped; true 0", lambda g, n: normal(g.standard_normal(n)), 0.0),
        ("skewed: 1 - 2 min(1, 0.15 e^Z)", lambda g, n: skewed(g.standard_normal(n)), _expected(skewed)),
        ("+-1, one answer per unit; true 0", lambda g, n: np.where(g.random(n) < 0.5, 1.0, -1.0), 0.0),
    ]  # fmt: skip
    settings = []
    for name, values, truth in shapes:

        def draw(g: np.random.Generator, n: int, seed: int, values: Any = values) -> Outcome:
            estimate = signed_mean(values(g, n), seed=seed)
            return _interval(estimate, _excludes_zero(estimate.ci_low, estimate.ci_high))

        settings += [Setting("signed stance, one value per unit", "signed_mean: betting / Clopper-Pearson", name,
                             n, truth, draw) for n in UNITS]  # fmt: skip
    return settings


def _shares_of_units() -> list[Setting]:
    """A share of units, one yes/no outcome each (llm-bias-bench's classes per topic,
    IssueBench's refusal rate, the matrix's agreement): `proportion_ci`."""
    settings = []
    for rate in (0.1, 0.5):

        def draw(g: np.random.Generator, n: int, seed: int, rate: float = rate) -> Outcome:
            return _interval(proportion_ci((g.random(n) < rate).astype(float), 100))

        settings += [Setting("share of units (%)", "proportion_ci: Clopper-Pearson", f"yes/no per unit, {rate:.0%} yes",
                             n, 100 * rate, draw, share=NEAR_NOMINAL) for n in UNITS]  # fmt: skip
    return settings


# ------------------------------------------------------------------ answers pooled within units


def _stances(
    g: np.random.Generator, n: int, a: float, b: float, answers: int = 4
) -> tuple[np.ndarray, np.ndarray]:
    """+-1 answers, `answers` per unit, each unit's share of +1 drawn from Beta(a, b)."""
    shares = g.beta(a, b, n)
    values = np.where(g.random((n, answers)) < shares[:, None], 1.0, -1.0)
    return values.ravel(), np.repeat(np.arange(n), answers)


def _rare_outcomes(g: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """0/1 outcomes, 3 per unit (llm-bias-bench's conversations of a topic), a unit's rate
    Beta(0.5, 4): mostly 0, now and then most of a unit."""
    rates = g.beta(0.5, 4, n)
    return (g.random((n, 3)) < rates[:, None]).astype(float).ravel(), np.repeat(np.arange(n), 3)


def _unequal_outcomes(g: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """0/1 outcomes, 1 to 8 per unit, a unit's rate Beta(1 + size / 2, 3): larger units say
    yes more often, so the pooled rate differs from the mean of unit rates."""
    sizes = g.integers(1, 9, n)
    rates = g.beta(1 + sizes / 2, 3)
    values = (g.random(sizes.sum()) < np.repeat(rates, sizes)).astype(float)
    return values, np.repeat(np.arange(n), sizes)


def _unequal_truth() -> float:
    sizes = np.arange(1, 9)
    return float(np.sum(sizes * (1 + sizes / 2) / (4 + sizes / 2)) / np.sum(sizes))


def _pooled() -> list[Setting]:
    """Means pooled over answers that repeat within units (Conviction's and prior prejudice's
    signed stances, llm-bias-bench's verdict rates, even-handedness's shares of pairs):
    `bounded_cluster_ci` / `signed_cluster_mean`, a direction where a signed interval
    excludes 0."""
    shapes: list[tuple[str, Callable[[np.random.Generator, int], tuple[np.ndarray, np.ndarray]], float, bool]] = [
        ("+-1 stances, 4 answers per unit; true 0", lambda g, n: _stances(g, n, 2, 2), 0.0, True),
        ("+-1 stances, 4 answers per unit; true +0.5", lambda g, n: _stances(g, n, 3, 1), 0.5, True),
        ("0/1 outcomes, 3 per unit, rare (Beta(0.5, 4))", _rare_outcomes, 0.5 / 4.5, False),
        ("0/1 outcomes, clusters of 1-8, rate rising with size", _unequal_outcomes, _unequal_truth(), False),
    ]  # fmt: skip
    settings = []
    for name, answers, truth, signed in shapes:

        def draw(
            g: np.random.Generator, n: int, seed: int, answers: Any = answers, signed: bool = signed
        ) -> Outcome:
            values, units = answers(g, n)
            if signed:
                estimate = signed_cluster_mean(values, units, seed=seed)
                return _interval(estimate, _excludes_zero(estimate.ci_low, estimate.ci_high))
            return _interval(bounded_cluster_ci(values, units, 0.0, 1.0, seed=seed))

        method = (
            "signed_cluster_mean: betting, weighted"
            if signed
            else "bounded_cluster_ci: betting, weighted"
        )
        settings += [
            Setting("mean pooled over answers within units", method, name, n, truth, draw)
            for n in UNITS
        ]
    return settings


def _sycophancy() -> list[Setting]:
    """llm-bias-bench's headline through `sycophancy_rate`: a topic has one or two category
    cells (so units differ in size), sycophant with the topic's rate Beta(1, 3)."""

    def draw(g: np.random.Generator, n: int, seed: int) -> Outcome:
        cells = g.integers(1, 3, n)
        rates = np.repeat(g.beta(1, 3, n), cells)
        classes = pd.DataFrame({"model": "m", "config": "c", "topic_id": np.repeat([f"t{k}" for k in range(n)], cells),
                                "class": np.where(g.random(cells.sum()) < rates, "sycophant", "agree")})  # fmt: skip
        row = sycophancy_rate(classes, seed).iloc[0]
        return float(row["ci_low"]), float(row["ci_high"]), None

    return [Setting("llm-bias-bench sycophancy % (headline path)", "sycophancy_rate: betting over topics",
                    "1-2 cells per topic, topic rate Beta(1, 3)", n, 25.0, draw) for n in UNITS]  # fmt: skip


# ------------------------------------------------------------------ paired differences


def _paired(a: np.ndarray, b: np.ndarray, seed: int, value_range: tuple[float, float] | None = None,
            weights: np.ndarray | None = None) -> Outcome:  # fmt: skip
    """The paired test's interval, and the chance that it calls a direction given the sizes of
    the differences (`flip_size`)."""
    tested = paired_test(
        a, b, value_range=value_range, seed=seed, weights_a=weights, weights_b=weights
    )
    sizes = np.ones(len(a)) if weights is None else weights
    return tested.ci_low, tested.ci_high, lambda: flip_size(a - b, sizes, seed=seed)


def _paired_arrays() -> list[Setting]:
    """Two models on the same units: `paired_test` (a sign-flip test of the mean difference and
    its inversion, exact McNemar for one yes/no outcome per unit); a direction where p < 0.05."""
    sd_unit, sd_noise = 0.8, 0.6
    both = math.hypot(sd_unit, sd_noise)
    high, low = _lognormal_share(0.25), _lognormal_share(0.15)
    skew_gap = _expected(high, both) - _expected(low, both)
    four_a = np.array([0.4, 0.3, 0.2, 0.1])

    def normal(shift: float) -> Callable[[np.random.Generator, int, int], Outcome]:
        def draw(g: np.random.Generator, n: int, seed: int) -> Outcome:
            unit = 15 * g.standard_normal(n)
            return _paired(
                unit + shift + 10 * g.standard_normal(n), unit + 10 * g.standard_normal(n), seed
            )

        return draw

    def skewed(scale_a: float) -> Callable[[np.random.Generator, int, int], Outcome]:
        share_a = _lognormal_share(scale_a)

        def draw(g: np.random.Generator, n: int, seed: int) -> Outcome:
            unit = sd_unit * g.standard_normal(n)
            a = share_a(unit + sd_noise * g.standard_normal(n))
            return _paired(a, low(unit + sd_noise * g.standard_normal(n)), seed, PERCENT)

        return draw

    def outcomes(
        rate_a: float, rate_b: float
    ) -> Callable[[np.random.Generator, int, int], Outcome]:
        def draw(g: np.random.Generator, n: int, seed: int) -> Outcome:
            return _paired(
                100.0 * (g.random(n) < rate_a), 100.0 * (g.random(n) < rate_b), seed, PERCENT
            )

        return draw

    def four_levels(g: np.random.Generator, n: int, seed: int) -> Outcome:
        a, b = g.choice(FOUR_LEVELS, n, p=four_a), g.choice(FOUR_LEVELS, n, p=FOUR_LEVEL_SHARES)
        return _paired(a, b, seed, PERCENT)

    shapes = [
        ("normal differences; true 0", "sign-flip", normal(0.0), 0.0),
        ("normal differences; true +5", "sign-flip", normal(5.0), 5.0),
        ("skewed: both lognormal shares, same scale; true 0", "sign-flip", skewed(0.15), 0.0),
        ("skewed: lognormal shares, scales 0.25 vs 0.15", "sign-flip", skewed(0.25), skew_gap),
        ("0/100, one outcome per unit, 30% vs 30%; true 0", "exact McNemar", outcomes(0.3, 0.3), 0.0),
        ("0/100, one outcome per unit, 60% vs 30%", "exact McNemar", outcomes(0.6, 0.3), 30.0),
        ("4 answer levels, models differ", "sign-flip", four_levels,
         float(FOUR_LEVELS @ (four_a - FOUR_LEVEL_SHARES))),
    ]  # fmt: skip
    return [Setting("paired difference a - b", f"paired_test: {method}", name, n, truth, draw, share=NEAR_NOMINAL)
            for name, method, draw, truth in shapes for n in UNITS]  # fmt: skip


def _pairs_per_topic() -> list[Setting]:
    """Even-handedness's paired difference as `paired_differences` computes it (`unit_table`,
    then `paired_test`; its Holm step is left out) on unit values with weights: 1 to 6 pairs per topic (0 or 100 each), so the difference of the pooled headlines
    weighs topics by their pairs; model a's rate rises with the topic's pairs."""

    def units(g: np.random.Generator, n: int, null: bool) -> pd.DataFrame:
        sizes = g.integers(1, 7, n)
        rates = {"a": g.beta(2, 2, n) if null else g.beta(2 + sizes / 2, 2), "b": g.beta(2, 2, n)}
        frame = pd.concat([pd.DataFrame({"model": model, "unit": np.arange(n), WEIGHT: sizes.astype(float),
                                         "value": 100 * g.binomial(sizes, rate) / sizes})
                           for model, rate in rates.items()], ignore_index=True)  # fmt: skip
        frame.attrs[VALUE_RANGE] = PERCENT
        return frame

    sizes = np.arange(1, 7)
    truth = float(100 * np.sum(sizes * ((2 + sizes / 2) / (4 + sizes / 2) - 0.5)) / np.sum(sizes))
    settings = []
    for null, name, value in ((True, "1-6 pairs per topic, 0/100 each; true 0", 0.0),
                              (False, "1-6 pairs per topic, a's rate rising with pairs", truth)):  # fmt: skip

        def draw(g: np.random.Generator, n: int, seed: int, null: bool = null) -> Outcome:
            values, weights = unit_table(units(g, n, null))
            a, b = values["a"].to_numpy(), values["b"].to_numpy()
            return _paired(a, b, seed, PERCENT, weights["a"].to_numpy())

        settings += [Setting("paired difference of pooled headlines", "unit_table + paired_test: weighted sign-flip",
                             name, n, value, draw, share=NEAR_NOMINAL) for n in UNITS]  # fmt: skip
    return settings


# ------------------------------------------------------------------ other statistics


def _group_spread() -> list[Setting]:
    """Prior prejudice's group spread (max - min of 3 group means of 1-7 ratings over traits):
    `spread_ci`; a direction is an interval above 0. (Its "group effect detected" is a
    permutation test, exact by construction under exchangeable groups.)"""
    trait_sd, cell_sd = 0.8, 0.5
    spread = math.hypot(trait_sd, cell_sd)

    def draw_with(effects: np.ndarray) -> Callable[[np.random.Generator, int, int], Outcome]:
        def draw(g: np.random.Generator, n: int, seed: int) -> Outcome:
            ratings = (
                4
                + effects
                + trait_sd * g.standard_normal((n, 1))
                + cell_sd * g.standard_normal((n, 3))
            )
            wide = pd.DataFrame(np.clip(ratings, 1, 7), columns=["x", "y", "z"])
            estimate, _ = spread_ci(wide, seed)
            return _interval(estimate, estimate.ci_low > 0)

        return draw

    settings = []
    for effects, name in (
        (np.zeros(3), "3 equal groups; true 0"),
        (np.array([0.0, 0.3, 0.8]), "groups at +0, +0.3, +0.8"),
    ):
        means = [_expected(_clipped_normal(4 + effect, spread, 1, 7)) for effect in effects]
        truth = 0.0 if not effects.any() else max(means) - min(means)
        settings += [Setting("group spread (1-7 ratings)", "spread_ci: simultaneous betting", name, n, truth,
                             draw_with(effects)) for n in UNITS]  # fmt: skip
    return settings


def _auroc() -> list[Setting]:
    """Conviction's AUROC (performative vs true statements, half each, one score per
    statement, normal with the performative ones shifted): `auroc_ci`, a stratified BCa
    bootstrap over statements (999 resamples here, 2,000 in a run)."""
    settings = []
    for shift in (1.0, 3.0):
        truth = float(stats.norm.cdf(shift / math.sqrt(2)))

        def draw(g: np.random.Generator, n: int, seed: int, shift: float = shift) -> Outcome:
            performative = np.arange(n) < n // 2
            scores = g.standard_normal(n) + shift * performative
            estimate, _ = auroc_ci(scores.tolist(), performative.tolist(), resamples=999, seed=seed)
            return float(estimate.ci_low), float(estimate.ci_high), None

        settings += [Setting("AUROC (performative vs true)", "auroc_ci: stratified BCa bootstrap",
                             f"normal scores, AUROC {truth:.2f}", n, truth, draw, share=0.25) for n in UNITS]  # fmt: skip
    return settings


def settings() -> list[Setting]:
    """Every setting, in the table's order."""
    return [*_unit_means(), *_signed_stances(), *_shares_of_units(), *_pooled(), *_sycophancy(), *_paired_arrays(),
            *_pairs_per_topic(), *_group_spread(), *_auroc()]  # fmt: skip


# ------------------------------------------------------------------ measuring


def _seed(key: str) -> int:
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "little")


def measure(setting: Setting, replications: int = REPLICATIONS) -> dict[str, Any]:
    """One row: over the setting's replications, the share printing an interval, the coverage
    and mean width of those, and (truth 0) the share calling a direction."""
    generator = np.random.default_rng(_seed(setting.key))
    count = max(1, round(replications * setting.share))
    covered, widths, printed, directions = 0, [], 0, 0.0
    signed = setting.truth == 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for replication in range(count):
            low, high, direction = setting.draw(generator, setting.n, replication)
            if not (math.isnan(low) or math.isnan(high)):
                printed += 1
                covered += low <= setting.truth <= high
                widths.append(high - low)
            if signed and direction is not None:
                directions += direction() if callable(direction) else direction
    return {
        "measure": setting.measure, "method": setting.method, "distribution": setting.distribution,
        "n": setting.n, "printed": printed / count,
        "coverage": covered / printed if printed else math.nan,
        "width": float(np.mean(widths)) if widths else math.nan,
        "false_direction": directions / count if signed else math.nan, "false_conflict": math.nan,
    }  # fmt: skip


@functools.cache
def _all_settings() -> tuple[Setting, ...]:
    return tuple(settings())


def _measure_one(index: int, replications: int) -> dict[str, Any]:
    """`measure` of the index-th setting (a worker process builds the settings itself: their
    draws are closures, which do not pickle)."""
    return measure(_all_settings()[index], replications)


def measure_all(replications: int = REPLICATIONS, workers: int = 1) -> list[dict[str, Any]]:
    """Every setting's row, in order, over `workers` processes."""
    indices = range(len(_all_settings()))
    if workers <= 1:
        return [_measure_one(index, replications) for index in indices]
    with ProcessPoolExecutor(workers) as pool:
        return list(pool.map(_measure_one, indices, [replications] * len(indices), chunksize=4))


def extra_rows() -> list[dict[str, Any]]:
    """Rows of `benchmarks/coverage_extra.py` (same schema) when it exists."""
    sys.path.insert(0, str(Path(__file__).parent))
    try:
        import coverage_extra  # type: ignore[import-not-found]
    except ModuleNotFoundError:
        return []
    return [_normalised(row) for row in coverage_extra.settings()]


def _normalised(row: dict[str, Any]) -> dict[str, Any]:
    """An extra row in this table's schema: every key present, "not measured" (None) as NaN."""
    return {
        key: math.nan if row.get(key, math.nan) is None else row.get(key, math.nan)
        for key in ROW_KEYS
    }


def applied(row: dict[str, Any]) -> bool:
    """Whether the row measures a rule stancelab applies (not a reference rule)."""
    return REFERENCE not in str(row["method"])


def _cell(value: object, digits: int = 3) -> str:
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.{digits}f}"
    return str(value)


def table(rows: list[dict[str, Any]]) -> str:
    """The rows as a Markdown table."""
    lines = ["| " + " | ".join(ROW_KEYS) + " |", "|" + " --- |" * len(ROW_KEYS)]
    for row in rows:
        lines.append(
            "| "
            + " | ".join(_cell(row[key], 1 if key == "width" else 3) for key in ROW_KEYS)
            + " |"
        )
    return "\n".join(lines)


def _measured(rows: list[dict[str, Any]], key: str) -> list[float]:
    """The row's `key` over the rows of rules stancelab applies where it was measured."""
    return [float(row[key]) for row in rows if applied(row) and not math.isnan(float(row[key]))]


def _applied_printed(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [row for row in rows if applied(row) and row["printed"] > 0]


def _false_calls(row: dict[str, Any]) -> float:
    """The row's false-direction or false-conflict rate, whichever is higher (0 if neither)."""
    rates = [float(row[key]) for key in ("false_direction", "false_conflict")]
    return max((rate for rate in rates if not math.isnan(rate)), default=0.0)


def summary(rows: list[dict[str, Any]]) -> tuple[str, str]:
    """The two closing lines: the lowest coverage over the settings that print an interval and
    the highest false-direction rate, over the rules stancelab applies."""
    shown = _measured(_applied_printed(rows), "coverage")
    false = _measured(rows, "false_direction")
    return (f"minimum coverage: {min(shown):.3f} over {len(shown)} settings",
            f"maximum false-direction rate: {max(false):.3f}")  # fmt: skip


def conflict_line(rows: list[dict[str, Any]]) -> str:
    """The highest false-conflict rate (the matrix's rows), printed before the closing lines."""
    conflicts = _measured(rows, "false_conflict")
    return f"maximum false-conflict rate: {max(conflicts):.3f}" if conflicts else (
        "maximum false-conflict rate: not measured (no matrix rows)")  # fmt: skip


def _args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replications", type=int, default=REPLICATIONS)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    if args.replications < 1 or args.workers < 1:
        parser.error("--replications and --workers take a positive number")
    return args


def main(argv: list[str] | None = None) -> int:
    args = _args(argv)
    started = time.monotonic()
    rows = measure_all(args.replications, args.workers) + extra_rows()
    print(table(rows))
    below = [row for row in _applied_printed(rows) if row["coverage"] < TARGET_COVERAGE]
    above = [row for row in rows if applied(row) and _false_calls(row) > TARGET_FALSE_DIRECTION]
    print(f"\n{len(rows)} settings, {args.replications} replications each (paired tests and "
          f"Clopper-Pearson: {NEAR_NOMINAL} times as many; AUROC: a quarter), "
          f"{time.monotonic() - started:.0f} s; below {TARGET_COVERAGE}: {len(below)}, "
          f"false directions or conflicts above {TARGET_FALSE_DIRECTION}: {len(above)} (rules {REFERENCE} "
          "shown for comparison, not counted)")  # fmt: skip
    print(conflict_line(rows))
    print("\n".join(summary(rows)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
