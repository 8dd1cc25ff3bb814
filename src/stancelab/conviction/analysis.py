"""Testing Conviction analyses over a frame of labels and a frame of uncertainties.

labels: one row per (model, statement_id, scenario, set) with `label` (TL / PL / TR / PR /
unclear). uncertainty: one row per (model, statement_id) with pe, pe_normalised, se, dse.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pandas as pd

from stancelab.conviction.entropy import auroc_ci
from stancelab.conviction.labels import LABELS, UNCLEAR, consistency, transition_probabilities
from stancelab.core.stats import bootstrap_ci

ENTROPIES = ("pe", "pe_normalised", "se", "dse")


def label_shares(labels: pd.DataFrame) -> pd.DataFrame:
    """Share of each label per (model, scenario), unclear included."""
    rows = []
    for (model, scenario), group in labels.groupby(["model", "scenario"]):
        counts = group["label"].value_counts()
        rows.append({"model": model, "scenario": scenario, "n": len(group),
                     **{lab: float(counts.get(lab, 0) / len(group)) for lab in (*LABELS, UNCLEAR)}})  # fmt: skip
    return pd.DataFrame(rows)


def transition_matrices(labels: pd.DataFrame) -> pd.DataFrame:
    """P(persona label | original label) per model, persona and cell (16 cells)."""
    wide = labels.pivot_table(
        index=["model", "statement_id", "set"], columns="scenario", values="label", aggfunc="first"
    )
    rows = []
    for model, group in wide.groupby(level="model"):
        for persona in ("left", "right"):
            if persona not in group.columns or "original" not in group.columns:
                continue
            probabilities = transition_probabilities(
                zip(group["original"], group[persona], strict=True)
            )
            for (source, target), p in probabilities.items():
                rows.append(
                    {"model": model, "persona": persona, "from": source, "to": target, "p": p}
                )
    return pd.DataFrame(rows, columns=["model", "persona", "from", "to", "p"])


def transition_summary(matrices: pd.DataFrame) -> pd.DataFrame:
    """Mean and sd over models of each transition probability (the paper's Table 11 layout)."""
    return matrices.groupby(["persona", "from", "to"], as_index=False)["p"].agg(
        mean="mean", sd="std", models="count"
    )


def consistency_shares(labels: pd.DataFrame) -> pd.DataFrame:
    """Per model: consistent / inconsistent / inconclusive shares over (statement, set) triples
    of (original, left, right) labels (Table 3 layout); unclear triples counted apart."""
    wide = labels.pivot_table(
        index=["model", "statement_id", "set"], columns="scenario", values="label", aggfunc="first"
    )
    rows = []
    for model, group in wide.groupby(level="model"):
        kinds = [
            consistency([row.get(s, UNCLEAR) for s in ("original", "left", "right")])
            for _, row in group.iterrows()
        ]
        clear = [k for k in kinds if k != UNCLEAR]
        row: dict[str, Any] = {
            "model": model,
            "triples": len(kinds),
            "unclear": len(kinds) - len(clear),
        }
        for kind in ("consistent", "inconsistent", "inconclusive"):
            row[kind] = clear.count(kind) / len(clear) if clear else float("nan")
        rows.append(row)
    return pd.DataFrame(rows)


def statement_labels(labels: pd.DataFrame) -> pd.DataFrame:
    """Per (model, statement, scenario): the most common clear label over argument sets, and
    whether the stance is performative (P* in at least half of the clear sets)."""
    rows = []
    for (model, statement, scenario), group in labels.groupby(
        ["model", "statement_id", "scenario"]
    ):
        clear = group[group["label"].isin(LABELS)]["label"]
        if clear.empty:
            rows.append(
                {
                    "model": model,
                    "statement_id": statement,
                    "scenario": scenario,
                    "label": UNCLEAR,
                    "performative": np.nan,
                }
            )
            continue
        rows.append({"model": model, "statement_id": statement, "scenario": scenario,
                     "label": clear.value_counts().idxmax(),
                     "performative": float(clear.str.startswith("P").mean() >= 0.5)})  # fmt: skip
    return pd.DataFrame(rows)


def auroc_table(depth: pd.DataFrame, uncertainty: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """AUROC of each entropy for telling performative from true original-scenario stances,
    per model and pooled, with bootstrap CIs over statements."""
    original = depth[depth["scenario"] == "original"].dropna(subset=["performative"])
    merged = original.merge(uncertainty, on=["model", "statement_id"], how="inner")
    rows = []
    groups = [(model, frame) for model, frame in merged.groupby("model")] + [("all", merged)]
    for (model, frame), measure in itertools.product(groups, ENTROPIES):
        if measure not in frame or frame[measure].isna().all():
            continue
        scores = frame[measure].astype(float).tolist()
        value, low, high = auroc_ci(scores, frame["performative"].astype(bool).tolist(), seed=seed)
        rows.append({"model": model, "measure": measure, "value": value, "ci_low": low, "ci_high": high,
                     "n": len(frame), "performative": int(frame["performative"].sum())})  # fmt: skip
    return pd.DataFrame(
        rows, columns=["model", "measure", "value", "ci_low", "ci_high", "n", "performative"]
    )


def true_stance_share(labels: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Per model: share of labelled answers that are true stances (TL or TR: the opinion held
    under pressure), with a bootstrap CI over statements; unclear answers are counted apart."""
    rows = []
    for model, group in labels.groupby("model"):
        labelled = group[group["label"] != UNCLEAR]
        per_statement = labelled.groupby("statement_id")["label"].agg(
            lambda column: float(column.isin(["TL", "TR"]).mean())
        )
        estimate = bootstrap_ci(per_statement.to_numpy(), seed=seed)
        rows.append({"model": model, **estimate.as_dict(), "labelled": len(labelled),
                     "unclear": int((group["label"] == UNCLEAR).sum()), "answers": len(group)})  # fmt: skip
    columns = ["model", "value", "ci_low", "ci_high", "n", "labelled", "unclear", "answers"]
    return pd.DataFrame(rows, columns=columns)
