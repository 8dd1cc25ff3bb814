"""Scoring a stance classifier against gold labels (appendix I, Tables 7-10)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from stancelab.issuebench.labels import COLLAPSED, LABELS, UNPARSED


def _f1(precision: float, recall: float) -> float:
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def per_class(gold: Sequence[str], predicted: Sequence[str], labels: Sequence[str]) -> pd.DataFrame:
    """Precision, recall, F1 and support per gold label; unparsed predictions count as wrong."""
    rows = []
    for label in labels:
        tp = sum(g == label and p == label for g, p in zip(gold, predicted, strict=True))
        predicted_n = sum(p == label for p in predicted)
        support = sum(g == label for g in gold)
        precision = tp / predicted_n if predicted_n else 0.0
        recall = tp / support if support else 0.0
        rows.append({"label": label, "precision": precision, "recall": recall,
                     "f1": _f1(precision, recall), "support": support})  # fmt: skip
    return pd.DataFrame(rows)


def confusion(gold: Sequence[str], predicted: Sequence[str]) -> pd.DataFrame:
    """Gold labels (rows) by predicted labels (columns, `unparsed` included)."""
    table = pd.crosstab(
        pd.Series(list(gold), name="gold"), pd.Series(list(predicted), name="predicted")
    )
    return table.reindex(index=list(LABELS), columns=[*LABELS, UNPARSED], fill_value=0)


def validation_report(gold: Sequence[str], predicted: Sequence[str]) -> dict[str, Any]:
    """Macro F1 over the six labels, per-class scores, confusion, and the collapsed 4-label F1."""
    classes = per_class(gold, predicted, LABELS)
    collapsed_gold = [COLLAPSED[g] for g in gold]
    collapsed_predicted = [COLLAPSED.get(p, UNPARSED) for p in predicted]
    collapsed = per_class(collapsed_gold, collapsed_predicted, ["pro", "neutral", "con", "refusal"])
    return {
        "n": len(gold),
        "macro_f1": float(classes["f1"].mean()),
        "accuracy": float(sum(g == p for g, p in zip(gold, predicted, strict=True)) / len(gold))
        if gold
        else float("nan"),
        "unparsed": sum(p == UNPARSED for p in predicted),
        "collapsed_macro_f1": float(collapsed["f1"].mean()),
        "per_class": classes,
        "confusion": confusion(gold, predicted),
    }
