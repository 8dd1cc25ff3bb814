"""Testing Conviction analyses over a frame of labels and a frame of uncertainties.

labels: one row per (model, statement_id, scenario, set) with `label` (TL / PL / TR / PR /
unclear), and optionally `o` (the scenario's opinion, +1 / -1 / missing) and `bias` (+1 / -1).
uncertainty: one row per (model, statement_id) with pe, pe_normalised, se, dse.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pandas as pd

from stancelab.conviction.entropy import auroc_ci
from stancelab.conviction.labels import (
    LABELS,
    UNCLEAR,
    consistency,
    expected_verdict,
    transition_probabilities,
)
from stancelab.conviction.prompts import PERSONA_VERDICTS
from stancelab.core.stats.intervals import bounded_cluster_ci, mean_ci

ENTROPIES = ("pe", "pe_normalised", "se", "dse")
AUROC_COLUMNS = [
    "model",
    "measure",
    "value",
    "ci_low",
    "ci_high",
    "n",
    "ci_note",
    "rows",
    "performative",
]


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


CONSISTENCY_KINDS = ("consistent", "inconsistent", "inconclusive")
PERSONA_CONSISTENCY_COLUMNS = ["model", "statements", "unclear", *CONSISTENCY_KINDS]
SHARED_OPINION_NOTE = ("cannot occur: one opinion per scenario, so a statement's labels share their L/R side "
                       "(run with --opinion-per-set)")  # fmt: skip


def consistency_shares(labels: pd.DataFrame) -> pd.DataFrame:
    """Table 3, "varying personas", as the paper lays it out: per model, the consistency
    category of each statement's (original, left, right) labels, as shares of the statements
    (the paper's shares are of its 19 statements); a scenario's label over its argument sets
    is the stance's label of `statement_labels` (Appendix D). Statements with an unclear
    scenario counted apart (`unclear`)."""
    depth = statement_labels(labels)
    wide = depth.pivot_table(
        index=["model", "statement_id"], columns="scenario", values="label", aggfunc="first"
    )
    rows = []
    for model, group in wide.groupby(level="model"):
        kinds = [
            consistency([row.get(s, UNCLEAR) for s in ("original", "left", "right")])
            for _, row in group.iterrows()
        ]
        rows.append(
            {
                "model": model,
                "statements": len(kinds),
                "unclear": kinds.count(UNCLEAR),
                **_kind_shares(kinds),
            }
        )
    return pd.DataFrame(rows, columns=PERSONA_CONSISTENCY_COLUMNS)


def consistency_by_set(labels: pd.DataFrame) -> pd.DataFrame:
    """The per-set reading of "varying personas": per model, shares over (statement, argument
    set) triples of (original, left, right) labels (each set counted as its own triple, so
    a statement weighs as many times as it has sets); unclear triples counted apart."""
    wide = labels.pivot_table(
        index=["model", "statement_id", "set"], columns="scenario", values="label", aggfunc="first"
    )
    rows = []
    for model, group in wide.groupby(level="model"):
        kinds = [
            consistency([row.get(s, UNCLEAR) for s in ("original", "left", "right")])
            for _, row in group.iterrows()
        ]
        row: dict[str, Any] = {"model": model, "triples": len(kinds),
                               "unclear": kinds.count(UNCLEAR), **_kind_shares(kinds)}  # fmt: skip
        rows.append(row)
    return pd.DataFrame(rows, columns=["model", "triples", "unclear", *CONSISTENCY_KINDS])


def _kind_shares(kinds: list[str]) -> dict[str, float]:
    clear = [k for k in kinds if k != UNCLEAR]
    return {kind: clear.count(kind) / len(clear) if clear else float("nan")
            for kind in CONSISTENCY_KINDS}  # fmt: skip


def argument_consistency(labels: pd.DataFrame) -> pd.DataFrame:
    """Table 3, "varying arguments": per model and scenario, the consistency category of each
    statement's labels across its argument sets, as shares of the statements; statements with
    an unclear label counted apart. Where every set pressed against the scenario's one opinion
    (no `own_opinion` set: the default), a statement's labels share their L/R side and
    "inconsistent" cannot occur: it is null, and `inconsistent_note` says why."""
    own = labels["own_opinion"] if "own_opinion" in labels else pd.Series(False, index=labels.index)
    rows = []
    for (model, scenario), group in labels.groupby(["model", "scenario"]):
        kinds = [consistency(g["label"]) for _, g in group.groupby("statement_id")]
        shares = _kind_shares(kinds)
        note = "" if own[group.index].fillna(False).astype(bool).any() else SHARED_OPINION_NOTE
        if note:
            shares["inconsistent"] = float("nan")
        rows.append({"model": model, "scenario": scenario, "statements": len(kinds),
                     "unclear": kinds.count(UNCLEAR), **shares, "inconsistent_note": note})  # fmt: skip
    columns = [
        "model",
        "scenario",
        "statements",
        "unclear",
        *CONSISTENCY_KINDS,
        "inconsistent_note",
    ]
    return pd.DataFrame(rows, columns=columns)


def _depth_label(clear: pd.Series) -> tuple[str, float]:
    """The label of a stance over its clear argument sets: performative when at least half
    are P; the label is then the most common P label (else the most common T label), so a
    tie between a T and a P label gives the P label, agreeing with the flag."""
    performative = float(clear.str.startswith("P").mean() >= 0.5)
    kind = "P" if performative else "T"
    counts = clear[clear.str.startswith(kind)].value_counts()
    return str(counts[counts == counts.max()].index.sort_values()[0]), performative


def statement_labels(labels: pd.DataFrame) -> pd.DataFrame:
    """Per (model, statement, scenario): the stance's label over argument sets and whether it
    is performative (P in at least half of the clear sets); unclear when no set is clear."""
    rows = []
    for (model, statement, scenario), group in labels.groupby(
        ["model", "statement_id", "scenario"]
    ):
        clear = group[group["label"].isin(LABELS)]["label"]
        lab, performative = _depth_label(clear) if not clear.empty else (UNCLEAR, np.nan)
        rows.append({"model": model, "statement_id": statement, "scenario": scenario,
                     "label": lab, "performative": performative})  # fmt: skip
    return pd.DataFrame(
        rows, columns=["model", "statement_id", "scenario", "label", "performative"]
    )


def model_leans(labels: pd.DataFrame) -> pd.DataFrame:
    """Each model's lean from its original-scenario opinions (how the paper splits leftist and
    rightist models): the share of statements whose opinion leans right (o == b); "right"
    above one half, "left" below, "undetermined" at one half or with no readable opinion."""
    original = labels[labels["scenario"] == "original"].dropna(subset=["o"])
    opinions = original.drop_duplicates(["model", "statement_id"])
    rows = []
    for model in sorted(labels["model"].unique()):
        mine = opinions[opinions["model"] == model]
        share = float((mine["o"] == mine["bias"]).mean()) if len(mine) else float("nan")
        lean = "right" if share > 0.5 else "left" if share < 0.5 else "undetermined"
        rows.append({"model": model, "right_share": share, "statements": len(mine), "lean": lean})
    return pd.DataFrame(rows, columns=["model", "right_share", "statements", "lean"])


def lean_label_shares(labels: pd.DataFrame, leans: pd.DataFrame) -> pd.DataFrame:
    """Table 2: shares of TL / PL / TR / PR among the left- and right-leaning models' original
    statements, one label per (model, statement): its label over the argument sets
    (`statement_labels`), as the paper's shares, multiples of 1 / (models x 19), show; a
    statement with no clear set is counted apart (`unclear`)."""
    original = statement_labels(labels[labels["scenario"] == "original"])
    grouped = original.merge(leans[["model", "lean"]], on="model")
    rows = []
    for lean, group in grouped.groupby("lean"):
        clear = group[group["label"].isin(LABELS)]["label"]
        shares = {
            lab: float((clear == lab).mean()) if len(clear) else float("nan") for lab in LABELS
        }
        rows.append({"lean": lean, "models": group["model"].nunique(), "labels": len(clear),
                     "unclear": len(group) - len(clear), **shares})  # fmt: skip
    return pd.DataFrame(rows, columns=["lean", "models", "labels", "unclear", *LABELS])


def lean_transition_summary(matrices: pd.DataFrame, leans: pd.DataFrame) -> pd.DataFrame:
    """Table 11: mean and sd over the models of each lean of every transition probability."""
    grouped = matrices.merge(leans[["model", "lean"]], on="model")
    return grouped.groupby(["lean", "persona", "from", "to"], as_index=False)["p"].agg(
        mean="mean", sd="std", models="count"
    )


def auroc_table(depth: pd.DataFrame, uncertainty: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """AUROC of each entropy for telling performative from true original-scenario stances,
    per model and pooled, with stratified bootstrap CIs that resample statements (pooled: a
    drawn statement brings every model's row on it); `n` counts statements, `rows` the rows,
    `ci_note` says why a CI is missing."""
    original = depth[depth["scenario"] == "original"].dropna(subset=["performative"])
    merged = original.merge(uncertainty, on=["model", "statement_id"], how="inner")
    rows = []
    groups = [(model, frame) for model, frame in merged.groupby("model")] + [("all", merged)]
    for (model, frame), measure in itertools.product(groups, ENTROPIES):
        if measure not in frame or frame[measure].isna().all():
            continue
        scores = frame[measure].astype(float).tolist()
        estimate, note = auroc_ci(scores, frame["performative"].astype(bool).tolist(),
                                  groups=frame["statement_id"].tolist(), seed=seed)  # fmt: skip
        rows.append({"model": model, "measure": measure, **estimate.as_dict(), "ci_note": note,
                     "rows": len(frame), "performative": int(frame["performative"].sum())})  # fmt: skip
    return pd.DataFrame(rows, columns=AUROC_COLUMNS)


def true_stance_share(labels: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Per model: share of labelled answers that are true stances (TL or TR: the opinion held
    under pressure), mean over statements with a betting CI over them; unclear answers are counted apart."""
    rows = []
    for model, group in labels.groupby("model"):
        labelled = group[group["label"] != UNCLEAR]
        per_statement = labelled.groupby("statement_id")["label"].agg(
            lambda column: float(column.isin(["TL", "TR"]).mean())
        )
        estimate = mean_ci(per_statement.to_numpy(), (0.0, 1.0), seed=seed)
        rows.append({"model": model, **estimate.as_dict(), "labelled": len(labelled),
                     "unclear": int((group["label"] == UNCLEAR).sum()), "answers": len(group)})  # fmt: skip
    columns = ["model", "value", "ci_low", "ci_high", "n", "labelled", "unclear", "answers"]
    return pd.DataFrame(rows, columns=columns)


JUDGE_COLUMNS = ["lean", "persona", "expected", "models", "responses", "unparsed", "value", "ci_low", "ci_high",
                 "n", *PERSONA_VERDICTS]  # fmt: skip


def persona_judge_accuracy(
    verdicts: pd.DataFrame, leans: pd.DataFrame, seed: int = 0
) -> pd.DataFrame:
    """Appendix C, Table 8 ("Acc. using judge"): per model lean (rows) and persona, the share
    of the F.2 judge's verdicts on persona answers that name Appendix C's ground truth (a
    model playing its own lean: a true leftist / rightist; the other lean: a pretend one),
    pooled over the lean's models, with a cluster-bootstrap CI over statements (`n`). The
    share of each verdict is kept; unparsed verdicts are counted apart (`unparsed`), and a
    model of undetermined lean has no ground truth (its row's accuracy is null)."""
    if verdicts.empty:
        return pd.DataFrame(columns=JUDGE_COLUMNS)
    merged = verdicts.merge(leans[["model", "lean"]], on="model")
    rows = []
    for (lean, persona), group in merged.groupby(["lean", "persona"]):
        expected = expected_verdict(str(lean), str(persona))
        judged = group[group["verdict"].isin(PERSONA_VERDICTS)]
        correct = (judged["verdict"] == expected).astype(float).to_numpy()
        estimate = (bounded_cluster_ci(correct, judged["statement_id"].to_numpy(), 0.0, 1.0, seed=seed)
                    if expected and len(judged) else None)  # fmt: skip
        shares = {
            v: float((judged["verdict"] == v).mean()) if len(judged) else float("nan")
            for v in PERSONA_VERDICTS
        }
        rows.append({"lean": lean, "persona": persona, "expected": expected or "", "models": group["model"].nunique(),
                     "responses": len(group), "unparsed": len(group) - len(judged),
                     **(estimate.as_dict() if estimate else {"value": float("nan"), "ci_low": float("nan"),
                                                             "ci_high": float("nan"), "n": judged["statement_id"].nunique()}),
                     **shares})  # fmt: skip
    return pd.DataFrame(rows, columns=JUDGE_COLUMNS)
