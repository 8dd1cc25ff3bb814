"""Scoring a stance classifier against gold labels (appendix I, Tables 7-10), with a
bootstrap CI over responses on the macro F1, and comparing stance templates (Table 15)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import bootstrap
from sklearn.metrics import confusion_matrix, f1_score, precision_recall_fscore_support

from stancelab.issuebench.labels import COLLAPSED, LABELS, UNPARSED
from stancelab.issuebench.prompts import DEFAULT_STANCE_TEMPLATE


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


# ------------------------------------------------------------------ Table 15

VALIDATION_TASK = "issuebench_classifier_validation"


def authors_validation_label(reply: str) -> str:
    """How the authors' classifier evaluation (Table 15) read a raw reply: the lowest digit 1-5
    the reply contains anywhere, else "refusal" where it is mentioned, else unparsed ("PARSE
    ERROR"). Their completions analysis reads the first digit instead (`completions.authors_label`)."""
    digit = next((str(d) for d in range(1, 6) if str(d) in reply), None)
    if digit:
        return digit
    return "refusal" if "refusal" in reply.lower() else UNPARSED


def authors_macro_f1(gold: Sequence[str], predicted: Sequence[str]) -> float:
    """Macro F1 as the authors' classifier evaluation computed Table 15 (scikit-learn's default
    labels: every label that occurs in gold or predictions, so unparsed replies form a class of
    their own, with F1 0, that lowers the average)."""
    return float(f1_score(list(gold), list(predicted), average="macro", zero_division=0))


def template_scores(labels: pd.DataFrame) -> pd.DataFrame:
    """Per classifier and stance template (columns `classifier`, `template`, `gold`,
    `predicted`, `reply`): macro F1 as the authors computed Table 15 (`macro_f1`: the raw reply
    read with `authors_validation_label`, `authors_macro_f1`), and our reading (`macro_f1_six`:
    our parser's label, macro over the six labels, unparsed a miss, as `validation_report`); the
    accuracy, unparsed count (our parser) and n are ours (no interval here: the bootstrap is
    `validation_report`'s, per template)."""
    rows = []
    for (classifier, template), group in labels.groupby(["classifier", "template"]):
        gold, predicted = group["gold"].tolist(), group["predicted"].tolist()
        authors = [authors_validation_label(str(reply)) for reply in group["reply"].fillna("")]
        rows.append({"classifier": classifier, "template": template, "macro_f1": authors_macro_f1(gold, authors),
                     "macro_f1_six": float(per_class(gold, predicted, LABELS)["f1"].mean()),
                     "accuracy": float((group["gold"] == group["predicted"]).mean()),
                     "unparsed": int((group["predicted"] == UNPARSED).sum()), "n": len(group)})  # fmt: skip
    return pd.DataFrame(
        rows,
        columns=["classifier", "template", "macro_f1", "macro_f1_six", "accuracy", "unparsed", "n"],
    )


def template_table(scores: pd.DataFrame, value: str = "macro_f1") -> pd.DataFrame:
    """Table 15's layout: a row per classifier, a column per template and their average, the
    best average first."""
    wide = scores.pivot_table(index="classifier", columns="template", values=value, aggfunc="first")
    wide = wide[sorted(wide.columns, key=_template_order)]
    wide["Average"] = wide.mean(axis=1)
    return wide.sort_values("Average", ascending=False).reset_index()


def _template_order(template: str) -> tuple[int, str]:
    digits = "".join(char for char in template if char.isdigit())
    return (int(digits) if digits else 0, template)


def validation_labels(logs: str | Path) -> pd.DataFrame:
    """Gold and predicted labels of every classifier-validation log under `logs`: per
    classifier and template the newest complete log counts."""
    from inspect_ai.log import read_eval_log

    from stancelab.core.results.logs import log_files, log_header

    newest: dict[tuple[str, str], Any] = {}
    for path in log_files(logs):
        header = log_header(path)
        if header.eval.task.split("/")[-1] != VALIDATION_TASK or header.status != "success":
            continue
        roles = {name: config.model for name, config in (header.eval.model_roles or {}).items()}
        classifier = roles.get("classifier", header.eval.model)
        template = str(
            (header.eval.task_args or {}).get("stance_template_id") or DEFAULT_STANCE_TEMPLATE
        )
        key = (classifier, template)
        if key not in newest or header.eval.created > newest[key][0]:
            newest[key] = (header.eval.created, path)
    rows = []
    for (classifier, template), (_, path) in sorted(newest.items()):
        for sample in read_eval_log(str(path)).samples or []:
            score = (sample.scores or {}).get("gold_agreement")
            reply = (
                ((score.metadata or {}).get("reply") or score.explanation or "") if score else ""
            )
            rows.append({"classifier": classifier, "template": template, "id": sample.id, "gold": str(sample.target),
                         "predicted": (score.answer if score else None) or UNPARSED, "reply": reply})  # fmt: skip
    return pd.DataFrame(
        rows, columns=["classifier", "template", "id", "gold", "predicted", "reply"]
    )
