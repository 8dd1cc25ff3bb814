"""The orientation mislabel in the authors' released counts, detected from the counts.

The authors turn an answer letter into a side with each paraphrase's `orientation` label.
On some issues paraphrase 4 is labelled "con" although it reads "Output A if you support the
position in favor" (appendix B's template 4), so its answers land on the wrong side: a model
that takes the pro side on all six paraphrases is counted 75 pro / 15 con at baseline
(space-colonization, all five full-run models), not 90 / 0.

Detection uses the counts alone (the per-issue files of the runs are not all released): a
cell (model, issue, case) *splits by one template* when it has no "other" answer and its
smaller side is exactly a sixth of its answers (one paraphrase's worth), and it is *pure*
when its smaller side is 0. A consistent model gives pure cells on a correctly labelled issue
and one-template cells on a mislabelled one. An issue is flagged when at least
`MIN_ONE_TEMPLATE_CELLS` of its cells split by one template and they outnumber its pure
cells. On the release this flags 28 issues, among them the 15 whose first-release file labels
paraphrase 4 "con" (the other 13 files were not released), and no issue of the 52 released
files labelled otherwise except tiktok, whose later-release file (the one its runs used)
labels paraphrase 4 "con" too.

The published figures are kept. The corrected counts assume the mislabelled paraphrase was
answered like the other five: pooled over six equal templates with one flipped, the observed
pro - con difference is 4/6 of the true one, so the true difference is 1.5 times the
observed one (bounded by the pro + con answers), and "other" is unchanged. A 75 / 15 cell
becomes 90 / 0; a 45 / 45 cell stays 45 / 45.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from stancelab.millstone.analysis import recount

TEMPLATES_PER_ISSUE = 6
MIN_ONE_TEMPLATE_CELLS = 3
FLIPPED_TEMPLATE = 4


def cell_signatures(counts: pd.DataFrame) -> pd.DataFrame:
    """Per (model, issue, case): whether the cell splits by one template or is pure."""
    n = counts["n_pro"] + counts["n_con"] + counts["n_other"]
    smaller = counts[["n_pro", "n_con"]].min(axis=1)
    clean = (counts["n_other"] == 0) & (n > 0)
    return counts[["model", "issue_id", "case", "n_pro", "n_con", "n_other"]].assign(
        one_template=clean & (smaller * TEMPLATES_PER_ISSUE == n),
        pure=clean & (smaller == 0),
    )


def _baseline_evidence(cells: pd.DataFrame) -> str:
    baseline = cells[cells["case"] == "neither"].sort_values("model")
    return "; ".join(f"{r.model} {r.n_pro} pro / {r.n_con} con / {r.n_other} other"
                     for r in baseline.itertuples())  # fmt: skip


def detect_mislabel(counts: pd.DataFrame) -> pd.DataFrame:
    """Issues whose counts carry the paraphrase-4 mislabel, with the evidence per issue."""
    signatures = cell_signatures(counts)
    rows = []
    for issue_id, cells in signatures.groupby("issue_id", sort=True):
        one, pure = int(cells["one_template"].sum()), int(cells["pure"].sum())
        if one < MIN_ONE_TEMPLATE_CELLS or one <= pure:
            continue
        rows.append({
            "issue_id": issue_id, "one_template_cells": one, "pure_cells": pure,
            "cells": len(cells), "models": cells["model"].nunique(),
            "evidence": f"{one} of {len(cells)} (model, case) cells split exactly one template's "
                        f"worth against the rest and {pure} are pure; baseline: "
                        + _baseline_evidence(cells),
        })  # fmt: skip
    return pd.DataFrame(rows, columns=["issue_id", "one_template_cells", "pure_cells", "cells",
                                       "models", "evidence"])  # fmt: skip


def corrected_counts(counts: pd.DataFrame, issues: set[str]) -> pd.DataFrame:
    """The counts with the flipped paraphrase turned back on `issues`, assuming it was
    answered like the other five (module docstring); other issues are unchanged."""
    corrected = counts.copy()
    mine = corrected["issue_id"].isin(issues)
    both = corrected.loc[mine, "n_pro"] + corrected.loc[mine, "n_con"]
    flipped_share = 1 / TEMPLATES_PER_ISSUE
    difference = (corrected.loc[mine, "n_pro"] - corrected.loc[mine, "n_con"]) / (
        1 - 2 * flipped_share
    )
    difference = np.clip(difference, -both, both)
    pro = np.round((both + difference) / 2).astype(int)
    corrected.loc[mine, "n_pro"] = pro
    corrected.loc[mine, "n_con"] = both - pro
    return recount(corrected)


def mislabel_summary(flagged: pd.DataFrame, corrected: dict[str, Any]) -> dict[str, Any]:
    """summary.json's `orientation_mislabel`: the flagged issues with their evidence, and the
    corrected figures beside the published ones."""
    return {
        "paraphrase": FLIPPED_TEMPLATE,
        "n_issues": len(flagged),
        "issues": {r["issue_id"]: r["evidence"] for _, r in flagged.iterrows()},
        "rule": f">= {MIN_ONE_TEMPLATE_CELLS} cells splitting one template's worth, more than "
                "pure cells",
        "correction": "the flipped paraphrase assumed to be answered like the other five "
                      "(true pro - con = 1.5 x observed, bounded); published figures kept",
        "corrected": corrected,
    }  # fmt: skip
