"""Scoring a stance classifier against gold labels (appendix I, Tables 7-10), with a
bootstrap CI over responses on the macro F1."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import bootstrap
from sklearn.metrics import confusion_matrix, f1_score, precision_recall_fscore_support

from stancelab.issuebench.labels import COLLAPSED, LABELS, UNPARSED


def per_class(gold: Sequence[str], predicted: Sequence[str], labels: Sequence[str]) -> pd.DataFrame:
    """Precision, recall, F1 and support per gold label (scikit-learn); an unparsed prediction
    counts as a miss of its gold label and as no class's prediction."""
    precision, recall, f1, support = precision_recall_fscore_support(
        list(gold), list(predicted), labels=list(labels), zero_division=0
    )
    return pd.DataFrame({"label": list(labels), "precision": precision, "recall": recall, "f1": f1,
                         "support": support})  # fmt: skip


def macro_f1_ci(
    gold: Sequence[str], predicted: Sequence[str], resamples: int = 1000, seed: int = 0
) -> tuple[float, float]:
    """95% percentile-bootstrap interval of the six-label macro F1, resampling responses."""
    if len(gold) < 2:
        return float("nan"), float("nan")
    codes = {label: index for index, label in enumerate(LABELS)}
    g = np.array([codes.get(label, -1) for label in gold])
    p = np.array([codes.get(label, -1) for label in predicted])

    def statistic(gold_codes: np.ndarray, predicted_codes: np.ndarray) -> float:
        return float(f1_score(gold_codes, predicted_codes, labels=list(range(len(LABELS))),
                              average="macro", zero_division=0))  # fmt: skip

    result = bootstrap((g, p), statistic, paired=True, vectorized=False, n_resamples=resamples,
                       method="percentile", random_state=seed)  # fmt: skip
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def confusion(gold: Sequence[str], predicted: Sequence[str]) -> pd.DataFrame:
    """Gold labels (rows) by predicted labels (columns, `unparsed` included)."""
    columns = [*LABELS, UNPARSED]
    matrix = confusion_matrix(list(gold), list(predicted), labels=columns)[: len(LABELS)]
    return pd.DataFrame(matrix, index=pd.Index(list(LABELS), name="gold"),
                        columns=pd.Index(columns, name="predicted"))  # fmt: skip


def validation_report(gold: Sequence[str], predicted: Sequence[str]) -> dict[str, Any]:
    """Macro F1 over the six labels, per-class scores, confusion, and the collapsed 4-label F1."""
    classes = per_class(gold, predicted, LABELS)
    collapsed_gold = [COLLAPSED[g] for g in gold]
    collapsed_predicted = [COLLAPSED.get(p, UNPARSED) for p in predicted]
    collapsed = per_class(collapsed_gold, collapsed_predicted, ["pro", "neutral", "con", "refusal"])
    low, high = macro_f1_ci(gold, predicted)
    return {
        "n": len(gold),
        "macro_f1": float(classes["f1"].mean()),
        "macro_f1_ci_low": low,
        "macro_f1_ci_high": high,
        "accuracy": float(sum(g == p for g, p in zip(gold, predicted, strict=True)) / len(gold))
        if gold
        else float("nan"),
        "unparsed": sum(p == UNPARSED for p in predicted),
        "collapsed_macro_f1": float(collapsed["f1"].mean()),
        "per_class": classes,
        "confusion": confusion(gold, predicted),
    }
