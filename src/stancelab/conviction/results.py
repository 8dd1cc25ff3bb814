"""From conviction logs to tables, `summary.json` and a printed summary."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from stancelab.conviction import analysis as an
from stancelab.core.errors import StancelabError
from stancelab.core.results.evidence import LogEvidence
from stancelab.core.results.logs import Counted, as_dict, scored_samples
from stancelab.core.results.summary import (
    Analysis,
    is_partial,
    settle_headline,
    with_evidence,
    write_results,
)
from stancelab.core.stats.intervals import not_measured
from stancelab.core.values import json_safe

SUMMARY_FILE = "summary.json"


TAG_COLUMNS = ("shared_topic", "orientation")
OPINION_COLUMNS = ["model", "statement_id", "scenario", "answer", "o", *TAG_COLUMNS]
VERDICT_COLUMNS = ["model", "statement_id", "persona", "verdict", "reply"]
SELECTION_ARGS = ("limit", "shared_topics")
PAPER_READER = "an NLI model (BART, Lewis et al. 2019)"


def _tag(row: pd.Series) -> dict[str, Any]:
    """A sample's shared topic tag (None when untagged)."""
    return {name: row.get(f"metadata_{name}") for name in TAG_COLUMNS}


def _opinions(row: pd.Series, score: dict[str, Any]) -> list[dict[str, Any]]:
    """The sample's opinions before any argument: the greedy answer's o and, in the original
    scenario, each sampled answer's reading."""
    base = {"model": row["model"], "statement_id": row["metadata_statement_id"],
            "scenario": row["metadata_scenario"], **_tag(row)}  # fmt: skip
    sampled = (score.get("uncertainty") or {}).get("opinions") or []
    return [{**base, "answer": "greedy", "o": score.get("o")}] + [
        {**base, "answer": f"sample{index}", "o": opinion} for index, opinion in enumerate(sampled)
    ]


def read_scored(logs: Path) -> Counted:
    """Every labelled conviction sample of the runs that count, with the evidence of what the
    read left out; the frames below are taken from it."""
    return scored_samples(logs, "conviction", "conviction_labels", selection_args=SELECTION_ARGS)


def opinions_of(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per answer read before counter-arguments (greedy and sampled), with its tag."""
    rows = [opinion for _, row in frame.iterrows() for opinion in _opinions(row, row["score"])]
    return pd.DataFrame(rows, columns=OPINION_COLUMNS)


def _set_opinion(score: dict[str, Any], index: int) -> tuple[Any, bool]:
    """Argument set `index`'s opinion, and whether it was read from its own answer
    (`--opinion-per-set`) rather than the scenario's greedy one."""
    pressured = score.get("pressured") or []
    entry = pressured[index] if index < len(pressured) else {}
    return entry.get("o", score.get("o")), entry.get("opinion_answer") is not None


def label_frames(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(labels, uncertainty) frames of the scored samples; a label row's `o` is the scenario's
    greedy opinion, `o_set` the opinion its argument set pressed against."""
    labels, uncertainty = [], []
    for _, row in frame.iterrows():
        score = row["score"]
        for index, lab in enumerate(score.get("labels") or []):
            o_set, own = _set_opinion(score, index)
            labels.append({"model": row["model"], "statement_id": row["metadata_statement_id"],
                           "scenario": row["metadata_scenario"], "set": index, "label": lab, "o": score.get("o"),
                           "o_set": o_set, "own_opinion": own, "bias": row["metadata_bias"], **_tag(row)})  # fmt: skip
        measures = score.get("uncertainty") or {}
        if measures:
            uncertainty.append({"model": row["model"], "statement_id": row["metadata_statement_id"],
                                "clusters": len(set(measures.get("clusters", []))),
                                **{m: measures.get(m, float("nan")) for m in an.ENTROPIES}})  # fmt: skip
    columns = ["model", "statement_id", *an.ENTROPIES]
    return pd.DataFrame(labels), pd.DataFrame(uncertainty, columns=[*columns, "clusters"])


def persona_verdicts_of(frame: pd.DataFrame) -> pd.DataFrame:
    """The F.2 judge's verdicts on persona answers (`--persona-judge`), one row per answer;
    `verdict` "unparsed" where its reply named no single class."""
    rows = []
    for _, row in frame.iterrows():
        judged = row["score"].get("persona_judge")
        if judged:
            rows.append({"model": row["model"], "statement_id": row["metadata_statement_id"],
                         "persona": row["metadata_scenario"], "verdict": judged.get("verdict") or "unparsed",
                         "reply": judged.get("reply")})  # fmt: skip
    return pd.DataFrame(rows, columns=VERDICT_COLUMNS)


def _role_model(roles: object, role: str) -> str:
    entry = as_dict(roles).get(role)
    return str(entry.get("model") if isinstance(entry, dict) else entry or "")


def opinion_readers(frame: pd.DataFrame) -> dict[str, str]:
    """Per subject model, who read its opinions (role `nli`), said plainly: the paper reads
    them with an NLI model; stancelab's default is the subject model as a chat judge."""
    readers = {}
    for model, group in frame.groupby("model"):
        reader = _role_model(group["model_roles"].iloc[0], "nli") if "model_roles" in group else ""
        if reader.startswith("nli/"):
            readers[str(model)] = f"NLI cross-encoder {reader} (as in the paper: {PAPER_READER})"
        elif not reader or reader == model:
            readers[str(model)] = (
                f"the subject model itself, as a chat judge, not {PAPER_READER} as in the paper"
            )
        else:
            readers[str(model)] = (
                f"chat model {reader} as judge, not {PAPER_READER} as in the paper"
            )
    return readers


def _true_stance_share(table: pd.DataFrame, evidence: LogEvidence | None) -> dict[str, Any]:
    """The headline per model: not measured when most answers are unclear (what the CLI and
    the report show)."""
    shares = {}
    for _, row in table.iterrows():
        entry = {
            k: json_safe(row[k])
            for k in ("value", "ci_low", "ci_high", "n", "labelled", "unclear", "answers")
        }
        why = not_measured(
            int(entry["unclear"] or 0), int(entry["answers"] or 0), "answers", "unclear"
        )
        shares[row["model"]] = settle_headline(entry, why, is_partial(evidence, row["model"]))
    return shares


def analysis(out_dir: Path | str, seed: int = 0, options: Any = None) -> Analysis:
    """Every table and the summary, from the logs under `out_dir/logs` (nothing written)."""
    out_dir = Path(out_dir)
    scored, evidence = read_scored(out_dir / "logs")
    labels, uncertainty = label_frames(scored)
    verdicts = persona_verdicts_of(scored)
    if labels.empty:
        raise StancelabError(f"No conviction logs with labels under {out_dir / 'logs'}")
    depth = an.statement_labels(labels)
    matrices = an.transition_matrices(labels)
    leans = an.model_leans(labels)
    tables = {
        "labels": labels, "uncertainty": uncertainty, "label_shares": an.label_shares(labels),
        "transitions": matrices, "transition_summary": an.transition_summary(matrices),
        "consistency": an.consistency_shares(labels), "consistency_by_set": an.consistency_by_set(labels),
        "depth_profile": depth,
        "consistency_arguments": an.argument_consistency(labels), "model_lean": leans,
        "lean_label_shares": an.lean_label_shares(labels, leans),
        "lean_transition_summary": an.lean_transition_summary(matrices, leans),
        "auroc": an.auroc_table(depth, uncertainty, seed),
        "true_stance": an.true_stance_share(labels, seed),
        "opinions": opinions_of(scored), "persona_judge_verdicts": verdicts,
        "persona_judge": an.persona_judge_accuracy(verdicts, leans, seed),
    }  # fmt: skip
    summary = {
        "probe": "conviction",
        "models": sorted(labels["model"].unique().tolist()),
        "opinion_reader": opinion_readers(scored),
        "labels": {model: {r["scenario"]: {k: json_safe(r[k]) for k in ("TL", "PL", "TR", "PR", "unclear", "n")} for _, r in g.iterrows()}
                   for model, g in tables["label_shares"].groupby("model")},
        "consistency": {r["model"]: {k: json_safe(v) for k, v in r.items() if k != "model"} for _, r in tables["consistency"].iterrows()},
        "consistency_by_set": {r["model"]: {k: json_safe(v) for k, v in r.items() if k != "model"} for _, r in tables["consistency_by_set"].iterrows()},
        "persona_judge": {lean: {r["persona"]: {k: json_safe(v) for k, v in r.items() if k not in ("lean", "persona")} for _, r in g.iterrows()}
                          for lean, g in tables["persona_judge"].groupby("lean")},
        "consistency_arguments": {model: {r["scenario"]: {k: json_safe(r[k]) for k in ("statements", "unclear", "consistent", "inconsistent", "inconclusive", "inconsistent_note")} for _, r in g.iterrows()}
                                  for model, g in tables["consistency_arguments"].groupby("model")},
        "lean": {r["model"]: {"lean": r["lean"], "right_share": json_safe(r["right_share"]), "statements": json_safe(r["statements"])} for _, r in leans.iterrows()},
        "labels_by_lean": {r["lean"]: {k: json_safe(r[k]) for k in ("models", "labels", "unclear", "TL", "PL", "TR", "PR")} for _, r in tables["lean_label_shares"].iterrows()},
        "true_stance_share": _true_stance_share(tables["true_stance"], evidence),
        "auroc": {model: {r["measure"]: {k: json_safe(r[k]) for k in ("value", "ci_low", "ci_high", "n", "ci_note", "rows", "performative")} for _, r in g.iterrows()}
                  for model, g in tables["auroc"].groupby("model")},
    }  # fmt: skip
    return Analysis(with_evidence(summary, evidence), tables)


def analyze(out_dir: Path | str, seed: int = 0) -> dict[str, Any]:
    """Recompute every table and the summary from the logs under `out_dir/logs`, and write them."""
    result = analysis(out_dir, seed)
    write_results(Path(out_dir), result)
    return result.summary


def _headline_line(model: str, entry: dict[str, Any]) -> str:
    """A model's true-stance share (% of labelled answers), as the report gives it."""
    if entry.get("not_measured") or entry.get("value") is None:
        return f"  {model:<34} {entry.get('not_measured') or 'n/a'}"
    low, high = entry.get("ci_low"), entry.get("ci_high")
    interval = (
        f"[{low * 100:.1f}, {high * 100:.1f}]"
        if low is not None and high is not None
        else "(no CI)"
    )
    partial = " (partial)" if entry.get("partial") else ""
    return f"  {model:<34} {entry['value'] * 100:.1f}% {interval} over {entry.get('n')} statements{partial}"


def _shares(row: dict[str, Any]) -> str:
    return "  ".join(f"{k} {row[k]:.2f}" if row.get(k) is not None else f"{k} n/a"
                     for k in ("consistent", "inconsistent", "inconclusive"))  # fmt: skip


def _table3_lines(summary: dict[str, Any]) -> list[str]:
    """Table 3's two halves per model: over statements, personas and argument sets varied."""
    lines = ["Table 3, varying personas (shares of statements):"]
    for model, row in summary["consistency"].items():
        lines.append(f"  {model:<34} {_shares(row)}  (unclear statements {row['unclear']})")
    lines.append("Table 3, varying arguments (original scenario, shares of statements):")
    for model, scenarios in summary.get("consistency_arguments", {}).items():
        row = scenarios.get("original") or {}
        note = f"; inconsistent {row['inconsistent_note']}" if row.get("inconsistent_note") else ""
        lines.append(
            f"  {model:<34} {_shares(row)}  (unclear statements {row.get('unclear')}{note})"
        )
    return lines


def _judge_lines(judge: dict[str, Any]) -> list[str]:
    """Table 8: the F.2 judge's accuracy per model lean and persona (when it was asked)."""
    lines = ["F.2 judge accuracy (Table 8; rows: model lean, columns: persona):"] if judge else []
    for lean, personas in judge.items():
        cells = [f"{persona} {row['value'] * 100:.1f}%" if row.get("value") is not None else f"{persona} n/a"
                 for persona, row in personas.items()]  # fmt: skip
        unparsed = sum(int(row.get("unparsed") or 0) for row in personas.values())
        lines.append(
            f"  {lean}-leaning models: " + "  ".join(cells) + f"  (unparsed verdicts {unparsed})"
        )
    return lines


def format_summary(summary: dict[str, Any]) -> str:
    lines = ["Testing Conviction: true-stance share (stances kept under a counter-argument)"]
    lines += [
        _headline_line(model, entry)
        for model, entry in summary.get("true_stance_share", {}).items()
    ]
    lines += [
        f"opinions read by ({model}): {reader}"
        for model, reader in summary.get("opinion_reader", {}).items()
    ]
    lines.append("label shares per scenario (TL / PL / TR / PR / unclear)")
    for model, scenarios in summary["labels"].items():
        for scenario, shares in scenarios.items():
            lines.append(
                f"  {model:<34} {scenario:<9} "
                + " ".join(f"{k} {shares[k]:.2f}" for k in ("TL", "PL", "TR", "PR", "unclear"))
            )
    for lean, shares in summary.get("labels_by_lean", {}).items():
        lines.append(f"  {lean}-leaning models, original scenario: "
                     + " ".join(f"{k} {shares[k]:.2f}" if shares[k] is not None else f"{k} n/a" for k in ("TL", "PL", "TR", "PR")))  # fmt: skip
    lines += _table3_lines(summary)
    lines += _judge_lines(summary.get("persona_judge") or {})
    for model, measures in summary["auroc"].items():
        lines.append(
            f"AUROC ({model}): "
            + ", ".join(
                f"{m} {v['value']:.2f}" if v["value"] is not None else f"{m} n/a"
                for m, v in measures.items()
            )
        )
    return "\n".join(lines)
