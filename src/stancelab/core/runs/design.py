"""From a probe, its options and a pilot run to a design: the units `estimate --detect D` or
`--half-width H` asks for (the statistics are `core.stats.power`'s), as run options."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from stancelab.core.errors import StancelabError
from stancelab.core.probe import Probe
from stancelab.core.results.summary import SUMMARY_FILE, folder_unit_values
from stancelab.core.runs.evals import ProbeRun
from stancelab.core.runs.options import RUN_CONFIG, read_config
from stancelab.core.stats.compare import VALUE_RANGE
from stancelab.core.stats.power import (
    DEFAULT_RANGE,
    MIN_PILOT_UNITS,
    Plan,
    Question,
    Spread,
    check_question,
    default_spread,
    format_sample_size,
    pilot_spread,
    planned_measure,
    sample_size,
)


@dataclass(frozen=True)
class PowerRequest:
    """What `estimate --detect D` or `--half-width H` asks."""

    question: Question
    target: float
    power: float = 0.8
    alpha: float = 0.05
    pilot: Path | None = None
    value_range: tuple[float, float] | None = None
    seed: int = 0


def pilot_folder(probe: Probe, pilot: Path) -> Path:
    """The probe's run folder of a pilot given as a run folder, its logs, or a `run all` folder."""
    folder = pilot.parent if pilot.name == "logs" else pilot
    return folder / probe.name if (folder / probe.name / SUMMARY_FILE).is_file() else folder


def pilot_trials(probe: Probe, pilot: Path | None) -> int | None:
    """The trials per unit the pilot ran, from its run.toml (None when it does not say)."""
    config = pilot_folder(probe, pilot) / RUN_CONFIG if pilot is not None else None
    if config is None or not config.is_file():
        return None
    trials = read_config(config)[1].get("trials")
    return trials if isinstance(trials, int) else None


def read_pilot(probe: Probe, pilot: Path) -> pd.DataFrame:
    """A pilot run's unit values (model, unit, value), from its summary.json and tables."""
    folder = pilot_folder(probe, pilot)
    if probe.unit_values is None:
        raise StancelabError(
            f"{probe.name} has no per-unit headline values, so its power cannot be planned."
        )
    if not folder.is_dir():
        raise StancelabError(
            f"--calibration {pilot}: no such folder (give a {probe.name} run folder)."
        )
    if not (folder / SUMMARY_FILE).is_file():
        raise StancelabError(f"--calibration {pilot}: no {SUMMARY_FILE} there; give a {probe.name} run folder "
                             f"(analyse its logs first: stancelab analyze {folder}).")  # fmt: skip
    summary = json.loads((folder / SUMMARY_FILE).read_text())
    units = folder_unit_values(probe.name, probe.unit_values, folder, summary)
    return units if units is not None else pd.DataFrame(columns=["model", "unit", "value"])


def stated_range(
    probe: Probe, request: PowerRequest, units: pd.DataFrame | None
) -> tuple[float, float] | None:
    """The headline's value range: --value-range, else the probe's, else the pilot's units'."""
    found = (
        request.value_range
        or getattr(probe, "value_range", None)
        or (units.attrs.get(VALUE_RANGE) if units is not None else None)
    )
    return tuple(found) if found is not None else None  # type: ignore[return-value]


def question_spread(probe: Probe, request: PowerRequest) -> tuple[Spread, tuple[float, float]]:
    """The spread the question rests on (the pilot's at its upper confidence limit, else the
    conservative default) and the value range it was bounded by."""
    units = read_pilot(probe, request.pilot) if request.pilot is not None else None
    value_range = stated_range(probe, request, units)
    if units is not None:
        spread = pilot_spread(units, request.question, str(request.pilot), value_range)
        if spread is not None:
            return spread, value_range or DEFAULT_RANGE
        why = f"the pilot {request.pilot} has fewer than {MIN_PILOT_UNITS} units with a value"
    else:
        why = "no pilot run given (--calibration RUN)"
    if value_range is None:
        why += f"; scale assumed {DEFAULT_RANGE[0]:g}-{DEFAULT_RANGE[1]:g} (give --value-range LO,HI for another)"
    value_range = value_range or DEFAULT_RANGE
    return default_spread(request.question, value_range, why), value_range


def _planned_calls(probe: Probe, options: ProbeRun, limit: int | None) -> int:
    return sum(plan.calls_max for plan in probe.plan(replace(options, limit=limit)))


def dataset_units(probe: Probe, options: ProbeRun) -> int:
    """Units the probe's dataset has under the options: the fewest `--limit` whose plan is
    the whole dataset's (guessed from calls per unit, then checked by bisection)."""
    calls = functools.cache(lambda limit: _planned_calls(probe, options, limit))
    full = calls(None)
    guess = max(1, round(full / max(calls(1), 1)))
    if calls(guess) == full and (guess == 1 or calls(guess - 1) < full):
        return guess
    high = guess
    while calls(high) < full:
        high *= 2
    low = 0  # below every limit: fewer calls than the whole dataset
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if calls(middle) == full else (middle, high)
    return high


def _trials_text(planned: int | None, piloted: int | None) -> str:
    if planned is None:
        return "as the probe plans them"
    if piloted is None or piloted == planned:
        return f"{planned} (--trials, as planned{' and piloted' if piloted else ''})"
    change = "wider" if planned < piloted else "narrower"
    return (
        f"{planned} (--trials; the pilot ran {piloted}, so its spread holds the within-unit variance at "
        f"{piloted}: at {planned} the spread is {change} and these units {'too few' if change == 'wider' else 'enough'})"
    )


def plan_design(probe: Probe, options: ProbeRun, request: PowerRequest) -> tuple[str, ProbeRun]:
    """The printed sample size and the options of the design it asks for (`limit` set to the
    units; all of the dataset's where it has fewer)."""
    check_question(request.target, request.power, request.alpha)
    spread, value_range = question_spread(probe, request)
    models = len(options.models)
    measure = planned_measure(getattr(probe, "measure", "continuous"), spread)
    plan = Plan(measure, max(1, models * (models - 1) // 2), value_range)
    available = dataset_units(probe, options)
    size = sample_size(request.question, spread, request.target, request.power, request.alpha, available,
                       request.seed, plan)  # fmt: skip
    units = min(size.units or available, available)
    trials_text = _trials_text(getattr(options, "trials", None), pilot_trials(probe, request.pilot))
    text = format_sample_size(request.question, spread, size, request.target, request.power, request.alpha,
                              trials_text, plan)  # fmt: skip
    one_model = request.question == "difference" and len(options.models) < 2
    models = " (calls below are per subject model: a comparison runs two)" if one_model else ""
    heading = f"{probe.title}: units and trials for its {probe.lens.lower()} headline"
    return f"{heading}\n{text}\nDesign: --limit {units}{models}", replace(options, limit=units)
