"""Issue 36: `--until-ci`'s final interval covers the truth at 95% whatever look the run stops
at, in the settings where issue 27's rule (BCa looks at 1 - 0.05/K) did not: 20 signed units
with K = 5 and W = 1 (87% there), 150 lognormal units with W = 3 (89%; 66% of the runs that
stopped at the first look), and where the headline pools answers over units of unequal size.
Reduced simulations of `benchmarks/until_ci.py` (the full runs)."""

from __future__ import annotations

import math

import pytest
from benchmarks.until_ci import SETTINGS, first_look_coverage, simulate

RUNS = 120
LEAST = 0.94


@pytest.mark.parametrize("name", ["signed", "lognormal", "first look", "pooled"])
def test_the_final_interval_covers_in_the_adversarial_settings(name: str) -> None:
    tallies = simulate(SETTINGS[name], RUNS)
    coverage = sum(tallies["covers"]) / RUNS
    assert coverage >= LEAST, (name, coverage)
    first, stopped = first_look_coverage(tallies)
    assert stopped == 0 or first >= LEAST, (name, first, stopped)


def test_runs_stop_before_the_design_is_spent_and_some_at_the_first_look() -> None:
    """The rule is adaptive: signed units stop before their 20th unit, and 0/100 units with a
    truth near the bound stop at the first look (all of those cover)."""
    signed = simulate(SETTINGS["signed"], 40)
    assert max(signed["units"]) < SETTINGS["signed"].units
    first, stopped = first_look_coverage(simulate(SETTINGS["first look"], 60))
    assert stopped > 0 and not math.isnan(first) and first >= LEAST
