"""Testing Conviction in the report: true-stance share, transition heat maps, label shares."""

from __future__ import annotations

import pandas as pd

from stancelab.conviction.labels import LABELS
from stancelab.core.results.summary import RunResult
from stancelab.core.stats.compare import VALUE_RANGE
from stancelab.report import plots
from stancelab.report.model import Evidence, Figure, Profile, Section, Table
from stancelab.report.model import estimate_fields as estimate

MEANING = (
    "Share of the model's stances that survive an argument against them (true stances, TL/TR); "
    "the rest flip under pressure (performative)."
)
CI_TEXT = (
    "95% betting interval over statements (valid at every number of statements); none from n < 2"
)
REFUSALS = "not separated: an answer with no readable agree/disagree counts as unclear"


def _evidence(rows: list[dict]) -> Evidence:
    answers = sum(int(row.get("answers") or 0) for row in rows)
    unclear = sum(int(row.get("unclear") or 0) for row in rows)
    statements = max((int(row.get("n") or 0) for row in rows), default=0)
    return Evidence(
        n=f"{statements} statements with a readable stance, {answers} labelled answers",
        ci=CI_TEXT,
        refusals=REFUSALS,
        unparsed=f"{unclear} of {answers} answers unclear (opinion not readable)",
    )


def unit_values(run: RunResult) -> pd.DataFrame:
    """True-stance % per (model, statement), over labelled answers, for paired comparisons."""
    labels = run.table("labels")
    if labels.empty:
        return pd.DataFrame(columns=["model", "unit", "value"])
    labelled = labels[labels["label"].isin(["TL", "PL", "TR", "PR"])]
    shares = labelled.groupby(["model", "statement_id"])["label"].agg(
        lambda column: float(column.isin(["TL", "TR"]).mean()) * 100
    )
    units = shares.reset_index().rename(columns={"statement_id": "unit", "label": "value"})
    units.attrs[VALUE_RANGE] = (0.0, 100.0)
    return units


def profiles(run: RunResult) -> list[Profile]:
    shares = run.summary.get("true_stance_share", {})
    result = []
    for model in run.models:
        row = shares.get(model) or {}
        answers, unclear = int(row.get("answers") or 0), int(row.get("unclear") or 0)
        result.append(Profile(
            probe="conviction", model=model, label="true-stance share", **estimate(row, 100),
            unit="% of stances", meaning=MEANING, evidence=_evidence([row]),
            n_short=f"{int(row.get('n') or 0)} statements",
            unusable_short=f"{unclear / answers:.0%} unclear" if answers else "no answers",
        ))  # fmt: skip
    return result


def _transition_matrix(summary: pd.DataFrame, persona: str) -> pd.DataFrame:
    rows = summary[summary["persona"] == persona]
    matrix = rows.pivot_table(
        index="from", columns="to", values="mean", aggfunc="first", dropna=False
    )
    return matrix.reindex(index=list(LABELS), columns=list(LABELS))


def _figures(run: RunResult, evidence: Evidence) -> list[Figure]:
    figures = []
    summary = run.table("transition_summary")
    for persona in ("left", "right"):
        if summary.empty or persona not in set(summary["persona"]):
            continue
        models = int(summary["models"].max()) if summary["models"].notna().any() else 0
        figures.append(Figure(
            f"Label transitions: original -> {persona} persona",
            plots.heatmap(_transition_matrix(summary, persona), f"P(label with {persona} persona | original label)",
                          vmin=0.0, vmax=1.0),
            f"Rows: label without persona; columns: label with the {persona} persona. Mean over "
            f"{models} model(s) with a readable pair; empty cells had no such original label.",
            evidence,
        ))  # fmt: skip
    shares = run.table("label_shares")
    if not shares.empty:
        stacked = shares.set_index(shares["model"] + " · " + shares["scenario"])
        figures.append(Figure(
            "Label shares per scenario",
            plots.stacked_shares(stacked[[*LABELS, "unclear"]], "share of answers"),
            "TL/TR: true stance (kept under the counter-argument); PL/PR: performative; "
            "L/R: the original opinion leans left or right.", evidence,
        ))  # fmt: skip
    return figures


def _reader_text(run: RunResult) -> str:
    """Who read the opinions, per model (the paper: an NLI model), said plainly."""
    readers = run.summary.get("opinion_reader") or {}
    return " ".join(f"Opinions of {model} read by {reader}." for model, reader in readers.items())


def section(run: RunResult) -> Section:
    rows = list(run.summary.get("true_stance_share", {}).values())
    evidence = _evidence(rows)
    return Section(
        probe="conviction",
        title="Testing Conviction: true vs performative stances",
        intro=(
            "Open-ended answers to political statements without a persona and with a left or "
            "right persona, then again with a supporting or counter argument. A stance kept "
            "under pressure is true (T), one that flips is performative (P); L/R is the lean. "
            + _reader_text(run)
        ),
        figures=_figures(run, evidence),
        tables=[
            Table("True-stance share", run.table("true_stance"), CI_TEXT),
            Table(
                "Consistency across scenarios (Table 3, varying personas)",
                run.table("consistency"),
                "Shares of statements: each statement's (original, left, right) labels, a scenario's "
                "label taken over its argument sets; statements with an unclear one counted apart.",
            ),
            Table(
                "Consistency across scenarios, per argument set",
                run.table("consistency_by_set"),
                "Variant: each (statement, argument set) triple counted on its own.",
            ),
            Table(
                "Consistency across argument sets (Table 3, varying arguments)",
                run.table("consistency_arguments"),
                "Per scenario: each statement's labels over its argument sets; the original "
                "scenario is the paper's column. Statements with an unclear label counted apart; "
                "inconsistent is null where every set pressed against one opinion (cannot occur).",
            ),
            Table(
                "F.2 judge accuracy (Table 8)",
                run.table("persona_judge"),
                "Share of persona answers the F.2 judge classes as Appendix C's ground truth, per model "
                "lean and persona; betting interval over statements; unparsed verdicts counted apart. "
                "Empty unless run with --persona-judge.",
            ),
            Table(
                "Model lean from original opinions",
                run.table("model_lean"),
                "Share of readable original opinions that lean right; above 1/2: right-leaning.",
            ),
            Table(
                "Original-scenario labels by lean (Table 2)",
                run.table("lean_label_shares"),
                "Shares of clear labels, pooled over the models of each lean.",
            ),
            Table(
                "Transitions by lean (Table 11)",
                run.table("lean_transition_summary"),
                "P(persona label | original label): mean and sd over the models of each lean.",
            ),
            Table(
                "AUROC of uncertainty against performative labels",
                run.table("auroc"),
                "Predictive entropy (PE), normalised PE, semantic entropy (SE), discrete SE; 95% BCa "
                "bootstrap over statements stratified by class (scipy; n: statements, ci_note: why "
                "there is none).",
            ),
            Table(
                "Labels per statement",
                run.table("labels"),
                "Click a row to see its answers.",
                ("model", "statement_id", "scenario"),
            ),
        ],
    )
