"""Coverage settings of issue 36's items 5-7, for `benchmarks/coverage.py` (which imports
`settings()`) and on their own (`python benchmarks/coverage_extra.py` prints the rows):

- the topic x lens matrix under a true 0 (every lens's stance 0 on every topic): each cell's
  95% CI (`core.data.topics.signed_mean`, as the probes read a stance over units), its
  direction and the (model, topic) pairs marked "conflict", with the directions controlled
  across cells (Holm, Benjamini-Hochberg) and, for comparison, read from a BCa CI alone (the
  rule before issue 36: 71% of pairs in conflict with 2 units a cell);
- one family per summary: three models compared on three metrics (even-handedness's), every
  pair's paired difference with its CI and test (`core.stats.compare`), the p-values adjusted
  as one family (`core.results.family`) or per metric (the rule before);
- `--until-ci`'s final interval on `benchmarks/until_ci.py`'s settings.

Each row: measure, method, distribution, n, printed (whether stancelab prints the interval),
coverage (of the printed 95% intervals), width (their mean width), false_direction (the share
of printed directions, or of summaries with any false one, when the truth is 0; None where the
truth is not 0: not measured) and, for the matrix, false_conflict."""

from __future__ import annotations

import argparse
import itertools
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.until_ci import SETTINGS as UNTIL_CI_SETTINGS
from benchmarks.until_ci import simulate as simulate_until_ci

from stancelab.core.data.topics import signed_mean, stance_frame, stance_p, topic_ids
from stancelab.core.results.family import Part, Tested, adjust_parts
from stancelab.core.stats.family import adjusted_pvalues
from stancelab.core.stats.intervals import bootstrap_ci
from stancelab.core.stats.signflip import sign_flip_pvalues
from stancelab.matrix.analysis import CONFLICT, build_matrix
from stancelab.probes import PROBES

LENSES = tuple(PROBES)  # the matrix's lenses: every registered probe
MATRIX_UNITS = (2, 3, 5, 12, 20)
MATRIX_TOPICS = 12
MODELS = ("a", "b", "c")
METRICS = ("even_handedness", "refusal", "hedging")
FAMILY_UNITS = (12, 35)


def _null_scores(
    rng: np.random.Generator, units: int, topics: int
) -> dict[tuple[str, str], np.ndarray]:
    """Every lens's unit values on every topic with a true stance of 0: `units` continuous
    values uniform on [-1, 1] a cell."""
    return {
        (topic, lens): rng.uniform(-1.0, 1.0, units)
        for topic in topic_ids()[:topics]
        for lens in LENSES
    }


def _stances(
    scores: dict[tuple[str, str], np.ndarray], seed: int, bca: bool = False
) -> pd.DataFrame:
    """One model's stance frame of the cells' `scores`, each cell's mean with its CI and p as
    the probes give them (`bca`: the BCa interval the probes printed before issue 36)."""
    rows = []
    for (topic, lens), values in scores.items():
        estimate = bootstrap_ci(values, seed=seed) if bca else signed_mean(values, seed)
        rows.append({"model": "m", "topic": topic, "lens": lens, "stance": estimate.value,
                     "ci_low": estimate.ci_low, "ci_high": estimate.ci_high, "n": estimate.n,
                     "p": stance_p(values, seed=seed), "unusable": 0, "measure": "uniform",
                     "detail": "", "transcripts": ""})  # fmt: skip
    return stance_frame(rows)


def _null_stances(rng: np.random.Generator, units: int, topics: int, seed: int) -> pd.DataFrame:
    """One model's stance frame with every lens's stance 0 on every topic (`_null_scores`)."""
    return _stances(_null_scores(rng, units, topics), seed)


def _ci_only(stances: pd.DataFrame) -> tuple[float, float]:
    """(share of cells with a direction, share of topics in conflict) when each cell points
    the way its CI lies, untested (the rule before issue 36)."""
    cells = stances[stances["ci_low"].notna()]
    sides = np.where(cells["ci_low"] > 0, 1, np.where(cells["ci_high"] < 0, -1, 0))
    sides = pd.Series(sides, index=cells.index)
    conflicts = [
        bool((sides[group.index] > 0).any() and (sides[group.index] < 0).any())
        for _, group in stances.groupby("topic")
    ]
    return float(np.mean(sides != 0)) if len(sides) else 0.0, float(np.mean(conflicts))


def matrix_rows(
    units: int, reps: int, topics: int = MATRIX_TOPICS, seed: int = 0
) -> list[dict[str, Any]]:
    """The matrix under a true 0 with `units` units a cell: Holm, Benjamini-Hochberg and the
    CI alone; coverage and width of the cells' CIs."""
    rng = np.random.default_rng(seed)
    tallies: dict[str, list[float]] = {key: [] for key in
                                       ("covers", "width", "holm_dir", "holm_conf", "bh_dir", "bh_conf",
                                        "ci_dir", "ci_conf", "expected")}  # fmt: skip
    for rep in range(reps):
        scores = _null_scores(rng, units, topics)
        stances = _stances(scores, seed + rep)
        for method, key in (("holm", "holm"), ("fdr_bh", "bh")):
            matrix = build_matrix(stances, LENSES, method)
            cells = matrix.cells[matrix.cells["measured"]]
            tallies[f"{key}_dir"].append(float(np.mean(cells["direction"] != 0)))
            tallies[f"{key}_conf"].append(float(np.mean(matrix.statuses["status"] == CONFLICT)))
            if method == "holm":
                tallies["expected"].append(matrix.family["conflicts_expected_by_chance"] / topics)
        direction, conflict = _ci_only(_stances(scores, seed + rep, bca=True))
        tallies["ci_dir"].append(direction)
        tallies["ci_conf"].append(conflict)
        has_ci = cells["ci_low"].notna()
        tallies["covers"] += list(((cells["ci_low"] <= 0) & (cells["ci_high"] >= 0))[has_ci])
        tallies["width"] += list((cells["ci_high"] - cells["ci_low"])[has_ci])
    coverage = float(np.mean(tallies["covers"])) if tallies["covers"] else None
    width = float(np.mean(tallies["width"])) if tallies["width"] else None
    base = {"measure": "topic x lens matrix cell", "distribution": "uniform on [-1, 1], 6 lenses, truth 0",
            "n": units, "printed": coverage is not None, "coverage": coverage, "width": width}  # fmt: skip
    return [
        base | {"method": "CI and sign-flip test, Holm across cells", "false_direction": np.mean(tallies["holm_dir"]),
                "false_conflict": np.mean(tallies["holm_conf"]),
                "conflicts_expected_by_chance": np.mean(tallies["expected"])},
        base | {"method": "CI and sign-flip test, Benjamini-Hochberg across cells",
                "false_direction": np.mean(tallies["bh_dir"]), "false_conflict": np.mean(tallies["bh_conf"])},
        base | {"method": "BCa CI alone (before issue 36)", "false_direction": np.mean(tallies["ci_dir"]),
                "false_conflict": np.mean(tallies["ci_conf"])},
    ]  # fmt: skip


def _summary_tests(rng: np.random.Generator, units: int) -> pd.DataFrame:
    """Each pair of three models on each of three metrics, no true difference (every unit 0 or
    100 with P = 0.5 for every model): the test the summary runs (`core.stats.compare`'s exact
    McNemar on yes/no units, the exact sign-flip p of their differences, vectorised:
    `core.stats.signflip.sign_flip_pvalues`)."""
    rows, differences = [], []
    for metric in METRICS:
        values = {model: 100.0 * (rng.random(units) < 0.5) for model in MODELS}
        for first, second in itertools.combinations(MODELS, 2):
            rows.append({"metric": metric, "model_a": first, "model_b": second})
            differences.append(values[first] - values[second])
    return pd.DataFrame(rows).assign(p=sign_flip_pvalues(np.array(differences)))


def family_rows(units: int, reps: int, seed: int = 0) -> list[dict[str, Any]]:
    """A summary of three models on three metrics, no true difference: the share of summaries
    with any pair called different (the family-wise error), one family across the metrics vs
    Holm per metric. The intervals of the differences are `benchmarks/coverage.py`'s."""
    rng = np.random.default_rng(seed)
    one, each = [], []
    for _ in range(reps):
        table = _summary_tests(rng, units)
        per_metric = [
            adjusted_pvalues(group["p"].to_numpy(dtype=float), "holm")
            for _, group in table.groupby("metric")
        ]
        each.append(bool(any((adjusted < 0.05).any() for adjusted in per_metric)))
        headline = table[table["metric"] == METRICS[0]].drop(columns="metric")
        tested = (Tested("model_differences", "p", ("metric", METRICS[0])),)
        (done,) = adjust_parts([Part(headline, {"model_differences": table}, tested)], "holm")
        one.append(
            bool((pd.to_numeric(done.tables["model_differences"]["p_adjusted"]) < 0.05).any())
        )
    base = {"measure": "paired tests, 3 models x 3 metrics (9 tests)", "n": units, "printed": False,
            "distribution": "0/100 units, P = 0.5 for every model (truth 0)", "coverage": None, "width": None}  # fmt: skip
    return [base | {"method": "Holm across the summary (one family)", "false_direction": float(np.mean(one))},
            base | {"method": "Holm per metric (before issue 36)", "false_direction": float(np.mean(each))}]  # fmt: skip


def until_ci_rows(runs: int) -> list[dict[str, Any]]:
    """`--until-ci`'s final interval on each setting of `benchmarks/until_ci.py`."""
    rows = []
    for name, setting in UNTIL_CI_SETTINGS.items():
        tallies = simulate_until_ci(setting, runs)
        widths = [width for width in tallies["width"] if not math.isnan(width)]
        false = float(np.mean(tallies["excludes_zero"])) if setting.truth == 0 else None
        rows.append({"measure": "--until-ci final interval", "method": "betting confidence sequence",
                     "distribution": f"{name} (truth {setting.truth:.3g}, W = {setting.width:g})",
                     "n": setting.units, "printed": True, "coverage": float(np.mean(tallies["covers"])),
                     "width": float(np.mean(widths)) if widths else None, "false_direction": false})  # fmt: skip
    return rows


def settings(
    reps: int = 40, family_reps: int = 200, until_ci_runs: int = 200
) -> list[dict[str, Any]]:
    """Every row of the three groups (see the module)."""
    rows: list[dict[str, Any]] = []
    for units in MATRIX_UNITS:
        rows += matrix_rows(units, reps)
    for units in FAMILY_UNITS:
        rows += family_rows(units, family_reps)
    rows += until_ci_rows(until_ci_runs)
    return rows


def _text(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "not measured"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=40, help="simulated matrices per size")
    parser.add_argument("--family-reps", type=int, default=200, help="simulated summaries per size")
    parser.add_argument("--until-ci-runs", type=int, default=200, help="simulated runs per setting")
    args = parser.parse_args(argv)
    rows = settings(args.reps, args.family_reps, args.until_ci_runs)
    keys = ["measure", "method", "distribution", "n", "printed", "coverage", "width", "false_direction",
            "false_conflict"]  # fmt: skip
    print(" | ".join(keys))
    for row in rows:
        print(" | ".join(_text(row.get(key)) for key in keys))
    printed = [row["coverage"] for row in rows if row["printed"] and row["coverage"] is not None]
    print(f"minimum coverage: {min(printed):.3f} over {len(printed)} settings")
    controlled = [row for row in rows if "before issue 36" not in row["method"]]
    false = [row["false_direction"] for row in controlled if row.get("false_direction") is not None]
    print(f"maximum false-direction rate (the rules stancelab applies): {max(false):.3f}")


if __name__ == "__main__":
    main()
