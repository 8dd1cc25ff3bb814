"""From IssueBench logs (or released tables) to tables, `summary.json` and a printed summary."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pandas as pd

from stancelab.core.errors import StancelabError
from stancelab.core.results.evidence import LogEvidence
from stancelab.core.results.logs import (
    Counted,
    counted_rows,
    frame_evidence,
    interrupted_reads,
    log_files,
    log_header,
    samples_frame,
)
from stancelab.core.results.summary import (
    Analysis,
    headline_text,
    is_partial,
    settle_headline,
    with_evidence,
)
from stancelab.core.results.summary import write_results as write_analysis
from stancelab.core.stats.intervals import not_measured
from stancelab.core.values import json_safe
from stancelab.issuebench import analysis as an
from stancelab.issuebench.labels import LABELS, UNPARSED

SUMMARY_FILE = "summary.json"
TABLES_DIR = "tables"
VOTERS_FILE = "voters.csv"
TASK_NAME = "issuebench"


RESPONSE_COLUMNS = ["model", "issue_id", "issue", "framing", "template_id", "call", "label"]
TAG_COLUMNS = ["shared_topic", "orientation"]  # an issue's shared-topic tag, where it has one
# task arguments that change neither prompts nor answers (`authors_repo`: where the pinned
# files were read from)
RUN_KEY_IGNORED = ("shard", "batch", "authors_repo")


def run_key(task_args: dict[str, Any], roles: dict[str, str]) -> str:
    """What makes two logs parts of the same run: task arguments (but the shard) and the model
    in every helper role."""
    args = {k: v for k, v in task_args.items() if k not in RUN_KEY_IGNORED}
    return json.dumps({"args": args, "roles": roles}, sort_keys=True, default=str)


def log_run_key(header: Any) -> str:
    """`run_key` of an Inspect log header."""
    roles = {name: config.model for name, config in (header.eval.model_roles or {}).items()}
    return run_key(dict(header.eval.task_args or {}), roles)


# Task arguments that choose which prompts run; the same sample id is the same prompt.
SELECTION_ARGS = ("limit", "limit_issues", "n_templates", "framings", "seed", "dedupe", "authors_sample",
                  "shard", "shard_size", "batch", "shared_topics", "authors_repo")  # fmt: skip


def _log_keys(files: list[str]) -> dict[str, tuple[str, str, str]]:
    """Per log: (run key, configuration key, configuration label). The configuration is what
    changes answers or labels: helper models and the non-selection task arguments."""
    keys = {}
    for path in files:
        header = log_header(path)
        roles = {name: config.model for name, config in (header.eval.model_roles or {}).items()}
        args = {k: v for k, v in (header.eval.task_args or {}).items() if k not in SELECTION_ARGS}
        label = ", ".join(f"{role}={model}" for role, model in sorted(roles.items()))
        keys[path] = (log_run_key(header), run_key(args, roles), label)
    return keys


def _configuration_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """Every run in the folder counts: runs of a model that differ only in their selection pool
    their prompts; runs with another helper model or setting are kept apart, as rows named
    `model · configuration`."""
    configs = frame.groupby("model")["config_key"].transform("nunique")
    labels = frame["config_label"].where(
        frame.groupby(["model", "config_label"])["config_key"].transform("nunique") == 1,
        frame["config_label"] + " #" + frame["config_key"].map(_short_hash),
    )  # fmt: skip
    return frame.assign(model=frame["model"].where(configs == 1, frame["model"] + " · " + labels))


def _short_hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:6]


def _one_run_per_model(frame: pd.DataFrame, keys: dict[str, str] | None) -> pd.DataFrame:
    """Rows of the given run per subject model (just after a run: its own selection and
    labels only), else every configuration in the folder, kept apart."""
    if keys is None:
        return _configuration_rows(frame)
    return frame[frame["run_key"] == frame["model"].map(keys)]


def read_responses(logs: Path, keys: dict[str, str] | None = None) -> Counted:
    """One row per classified response (every call of a prompt): of the given run per subject
    model (`keys`: model -> `run_key`), or of every run in the folder, configurations kept
    apart. A prompt and call answered in several logs counts once, the newest; an interrupted
    log counts only where its run has no complete log (`core.results.logs.counted_rows`). With
    the evidence of what the read left out."""
    from inspect_ai.analysis import SampleColumn

    frame = samples_frame(logs, [
        SampleColumn("label", path=lambda s: (s.scores or {}).get("stance_classifier").answer
                     if (s.scores or {}).get("stance_classifier") else None)])  # fmt: skip
    if frame.empty or "task_name" not in frame:
        return Counted(pd.DataFrame(columns=RESPONSE_COLUMNS), frame_evidence(frame))
    frame, evidence = counted_rows(frame[frame["task_name"] == TASK_NAME], SELECTION_ARGS)
    logs = sorted(set(frame["log"]))
    # Inspect's `created` has whole seconds; a log file is last written when its eval ends.
    finished = {log: Path(log).stat().st_mtime_ns for log in logs}
    log_keys = _log_keys(logs)
    frame = frame.assign(run_key=frame["log"].map(lambda log: log_keys[log][0]),
                         config_key=frame["log"].map(lambda log: log_keys[log][1]),
                         config_label=frame["log"].map(lambda log: log_keys[log][2]),
                         finished=frame["log"].map(finished))  # fmt: skip
    frame = _one_run_per_model(frame, keys).sort_values(["created", "finished"])
    frame = frame.drop_duplicates(subset=["model", "id", "epoch"], keep="last")
    evidence.add(interrupted_reads(frame))
    responses = pd.DataFrame(
        {
            "model": frame["model"].to_numpy(),
            "issue_id": frame["metadata_issue_id"].astype(str).to_numpy(),
            "issue": frame["metadata_issue_neutral"].astype(str).to_numpy(),
            "framing": frame["metadata_framing"].to_numpy(),
            "template_id": frame["metadata_template_id"].astype(str).to_numpy(),
            "call": frame["epoch"].astype(int).to_numpy(),
            "label": frame["label"].fillna(UNPARSED).to_numpy(),
            "shared_topic": _metadata_column(frame, "shared_topic"),
            "orientation": _metadata_column(frame, "orientation"),
        },
        columns=[*RESPONSE_COLUMNS, *TAG_COLUMNS],
    )
    return Counted(responses, evidence)


def _metadata_column(frame: pd.DataFrame, key: str) -> list[Any]:
    """A sample metadata field per row (None where a sample lacks it: an untagged issue)."""
    column = f"metadata_{key}"
    if column not in frame:
        return [None] * len(frame)
    return [None if pd.isna(value) else value for value in frame[column]]


def compute_tables(
    dists: pd.DataFrame,
    voters: pd.DataFrame | None = None,
    responses: pd.DataFrame | None = None,
    seed: int = 0,
) -> dict[str, pd.DataFrame]:
    """Every IssueBench table from label distributions (and responses, for Figures 9 and 10)."""
    counts = an.majority_counts(dists)
    pairs = an.pairwise_jsd_all(dists)
    plurality = an.plurality_shares(dists)
    tables = {
        "distributions": dists,
        "majority_counts": counts,
        "majority_count_cis": an.majority_count_cis(dists),
        "hedging": an.hedging(counts),
        "distortion": an.distortion_rates(dists, seed),
        "framing_correlations": an.framing_correlations(dists),
        "jsd_issue_pairs": pairs,
        "jsd_model_pairs": an.model_pair_jsd(pairs, seed),
        "jsd_issues": an.issue_jsd(pairs),
        "jsd_issues_largest": an.issue_jsd_largest(dists),
        "plurality": plurality,
        "plurality_thresholds": an.threshold_robustness(plurality),
        "top_issues": an.top_issues(dists),
        "one_sided": an.one_sided_share(dists, seed=seed),
    }
    if voters is not None:
        per_issue, per_model = an.partisan_distances(dists, voters, seed)
        tables["partisan_issues"], tables["partisan"] = per_issue, per_model
        tables["partisan_issue_summary"] = an.partisan_issue_summary(per_issue)
    if responses is not None and not responses.empty:
        sizes, on_grid = an.template_grid(responses["template_id"].nunique())
        curve = an.downsampling_curve(responses, sizes)
        tables["downsampling"] = curve.assign(paper_grid=on_grid)
        tables["call_downsampling"] = an.call_downsampling(responses)
    return tables


def _not_measured(row: dict[str, Any]) -> str:
    """Not measured when most neutral-framing responses are refused or unparsed (published
    tables hold shares only: those are taken as measured)."""
    responses = row.get("responses")
    if responses is None:
        return ""
    unusable = int(row.get("refusals") or 0) + int(row.get("unparsed") or 0)
    return not_measured(unusable, int(responses), "responses", "refused or unparsed")


def _one_sided(table: pd.DataFrame, evidence: LogEvidence | None) -> dict[str, Any]:
    """The headline per model, as the CLI and the report show it."""
    shares = {}
    for _, r in table.iterrows():
        entry = {
            k: json_safe(r[k])
            for k in (
                "value",
                "ci_low",
                "ci_high",
                "n",
                "refusal_share",
                "responses",
                "refusals",
                "unparsed",
            )
        }
        shares[r["model"]] = settle_headline(
            entry, _not_measured(entry), is_partial(evidence, r["model"])
        )
    return shares


def build_summary(
    tables: dict[str, pd.DataFrame],
    responses: pd.DataFrame | None = None,
    evidence: LogEvidence | None = None,
) -> dict[str, Any]:
    counts = tables["majority_counts"]
    summary: dict[str, Any] = {
        "probe": "issuebench",
        "models": sorted(tables["distributions"]["model"].unique().tolist()),
        "issues": int(tables["distributions"]["issue_id"].nunique()),
        "majority_counts": {
            model: {r["framing"]: {label: int(r[label]) for label in LABELS} | {"total": int(r["total"]), "issues": int(r["issues"])}
                    for _, r in group.iterrows()}
            for model, group in counts.groupby("model")
        },
        "hedging": {r["model"]: {k: json_safe(v) for k, v in r.items() if k != "model"} for _, r in tables["hedging"].iterrows()},
        "one_sided_share": _one_sided(tables["one_sided"], evidence),
        "jsd": _jsd_entries(tables["jsd_model_pairs"], "neutral"),
        "jsd_by_framing": {f: _jsd_entries(tables["jsd_model_pairs"], f) for f in ("neutral", "pro", "con")},
        "majority_count_ci": {
            model: {framing: {r["label"]: [json_safe(r["ci_low"]), json_safe(r["ci_high"])] for _, r in rows.iterrows()}
                    for framing, rows in group.groupby("framing")}
            for model, group in tables["majority_count_cis"].groupby("model")
        },
        "distortion": {
            model: {r["framing"]: {k: json_safe(r[k]) for k in ("issues", "complied", "hedged", "opposite", "distortion_rate", "ci_low", "ci_high")}
                    for _, r in group.iterrows()}
            for model, group in tables["distortion"].groupby("model")
        },
    }  # fmt: skip
    if "partisan" in tables:
        summary["partisan"] = {
            r["model"]: {group: {"value": json_safe(r[group]), "ci_low": json_safe(r[f"{group}_ci_low"]), "ci_high": json_safe(r[f"{group}_ci_high"])}
                         for group in ("dem", "rep", "all")} | {"issues": int(r["issues"])}
            for _, r in tables["partisan"].iterrows()
        }  # fmt: skip
    if responses is not None:
        summary["responses"] = {
            model: {label: int((group["label"] == label).sum()) for label in (*LABELS, UNPARSED)} | {"total": len(group)}
            for model, group in responses.groupby("model")
        }  # fmt: skip
    return with_evidence(summary, evidence)


def _jsd_entries(pairs: pd.DataFrame, framing: str) -> list[dict[str, Any]]:
    chosen = pairs[pairs["framing"] == framing].drop(columns="framing")
    return [{k: json_safe(v) for k, v in r.items()} for _, r in chosen.iterrows()]


def write_results(out_dir: Path, tables: dict[str, pd.DataFrame], summary: dict[str, Any]) -> None:
    """Write tables/*.csv and summary.json under `out_dir`."""
    write_analysis(out_dir, Analysis(summary, tables))


def results_from_responses(
    responses: pd.DataFrame,
    voters: pd.DataFrame | None = None,
    seed: int = 0,
    evidence: LogEvidence | None = None,
) -> tuple[dict[str, pd.DataFrame], dict[str, Any]]:
    """Tables and summary from one row per classified response (a run's, or the authors')."""
    dists = an.label_distributions(responses)
    names = responses.drop_duplicates("issue_id").set_index("issue_id")["issue"]
    dists.insert(2, "issue", dists["issue_id"].map(names))
    if set(TAG_COLUMNS) <= set(responses.columns):
        tags = responses.drop_duplicates("issue_id").set_index("issue_id")[TAG_COLUMNS]
        dists = dists.join(tags, on="issue_id")
    tables = compute_tables(dists, voters, responses, seed)
    return tables, build_summary(tables, responses, evidence)


def analysis(out_dir: Path | str, seed: int = 0, options: Any = None) -> Analysis:
    """Tables and summary from `out_dir/logs` (nothing written): of the run `options` describe
    (its `run_keys`), else every run in the folder."""
    return logs_analysis(Path(out_dir), seed, options.run_keys() if options is not None else None)


def logs_analysis(out_dir: Path, seed: int = 0, keys: dict[str, str] | None = None) -> Analysis:
    """Tables and summary from `out_dir/logs` (voter data from `out_dir/voters.csv`): per
    subject model the run in `keys` (model -> `run_key`), else every run in the folder (runs
    with other helper models or settings kept apart as `model · configuration`)."""
    from stancelab.issuebench.tables import load_voters

    responses, evidence = read_responses(out_dir / "logs", keys)
    if responses.empty:
        raise StancelabError(f"No IssueBench logs with samples under {out_dir / 'logs'}")
    voters_path = out_dir / VOTERS_FILE
    voters = load_voters(voters_path) if voters_path.exists() else None
    tables, summary = results_from_responses(responses, voters, seed, evidence)
    summary["prompts"] = prompts_labels(out_dir / "logs", set(responses["model"]))
    tables["responses"] = responses
    return Analysis(summary, tables)


UNRECORDED = "not recorded (a run before stancelab read the authors' files at run time)"


def prompts_labels(logs: Path, models: set[str]) -> list[str]:
    """What the prompts of the folder's IssueBench runs of `models` were (the authors' files
    at a commit, stancelab's bundled set or files of one's own), from their logs."""
    labels = set()
    for path in log_files(logs):
        header = log_header(path)
        if header.eval.task.split("/")[-1] == TASK_NAME and header.eval.model in {
            model.split(" · ")[0] for model in models
        }:
            labels.add((header.eval.metadata or {}).get("prompts_label") or UNRECORDED)
    return sorted(labels)


def analyze(
    out_dir: Path | str, seed: int = 0, keys: dict[str, str] | None = None
) -> dict[str, Any]:
    """Recompute tables and summary from `out_dir/logs` and write them (`logs_analysis`)."""
    result = logs_analysis(Path(out_dir), seed, keys)
    write_analysis(Path(out_dir), result)
    return result.summary


def descriptive_lines(entries: dict[str, Any] | None) -> list[str]:
    """Table 5 and Figure 3 as the import measured them, or the line saying why not."""
    if not entries:
        return []
    lines = [""]
    table_5, figure_3 = entries.get("table_5") or {}, entries.get("figure_3") or {}
    if table_5.get("measured"):
        lines.append(f"Table 5 (appendix E): most similar issue pairs of {table_5['issues']}, cosine "
                     f"similarity of {table_5['model']} embeddings")  # fmt: skip
        for pair in table_5["pairs"]:
            paper = pair.get("paper_similarity")
            printed = f"(paper {paper:.2f})" if paper is not None else "(not in the paper's table)"
            names = f"{pair['issue_1']} / {pair['issue_2']}"
            lines.append(f"  {pair['similarity']:.4f} {printed}  {names}")
    elif table_5:
        lines.append(table_5["line"])
    if figure_3.get("measured"):
        lines.append(f"Figure 3 (§3.3), a variant: most frequent words in {figure_3['templates']:,} templates, "
                     f"tagged by {figure_3['tagger']} (the paper names no tagger)")  # fmt: skip
        for group in figure_3["words"]:
            ranked = ", ".join(f"{word} {count}" for word, count in group["ranked"])
            lines.append(f"  {group['pos']}s: {ranked}")
    elif figure_3:
        lines.append(figure_3["line"])
    return lines


RELEASED_SOURCES = ("released tables", "released completions")
# Table 12 as printed: mean |model - voters| for Democrats, Republicans and all US voters.
PAPER_TABLE_12 = {
    "Llama-3.1-70B-Instruct": (0.28, 0.77, 0.39),
    "Qwen-2.5-72B-Instruct": (0.28, 0.79, 0.41),
    "OLMo-2-1124-13B-Instruct": (0.29, 0.80, 0.42),
    "deepseek-chat-v3-0324": (0.25, 0.74, 0.33),
    "grok-3-mini": (0.27, 0.72, 0.34),
    "gpt-4o-mini-2024-07-18": (0.27, 0.81, 0.42),
}


def _table_12_cell(value: float, paper: float | None) -> str:
    """A Table 12 cell of a replay: ours, and the paper's with why where the two differ."""
    if paper is None or round(value, 2) == paper:
        return f"{value:.2f}"
    why = (
        f"within rounding, the release gives {value:.4f}; dropping refusals from the "
        "denominator would give the paper's cell but break GPT-4o-mini's 0.81 and section 8's "
        "positions"
        if abs(value - paper) < 0.01
        else "the released shares are not those behind the paper's cell"
    )
    return f"{value:.2f} (paper {paper:.2f}: {why})"


def table_12_note(summary: dict[str, Any]) -> str:
    """In a replay of the authors' release, the Table 12 cells that differ from the paper's,
    each with the paper's and why ("" where every cell is the paper's or it is no replay)."""
    if summary.get("source") not in RELEASED_SOURCES:
        return ""
    differ = [
        f"{model} {group} {_table_12_cell(row[group]['value'], printed[i])}"
        for model, row in summary.get("partisan", {}).items()
        if (printed := PAPER_TABLE_12.get(model))
        for i, group in enumerate(("dem", "rep", "all"))
        if round(row[group]["value"], 2) != printed[i]
    ]
    return "Differs from the paper's Table 12: " + "; ".join(differ) + "." if differ else ""


def format_summary(summary: dict[str, Any]) -> str:
    """Majority-stance counts per model and framing (Tables 1 and 3), and partisan distances."""
    header = (
        f"{'model':<36} {'framing':<8} "
        + " ".join(f"{label:>7}" for label in LABELS)
        + f" {'total':>6} {'issues':>6}"
    )
    lines = [f"Prompts: {label}" for label in summary.get("prompts", [])]
    lines += ["IssueBench: issues with a majority stance (> 50%)", header, "-" * len(header)]
    for model in summary["models"]:
        for framing in ("neutral", "pro", "con"):
            row = summary["majority_counts"].get(model, {}).get(framing)
            if row:
                lines.append(f"{model:<36} {framing:<8} " + " ".join(f"{row[label]:>7}" for label in LABELS)
                             + f" {row['total']:>6} {row['issues']:>6}")  # fmt: skip
    lines += ["", "one-sided writing (% of neutral-framing responses):"]
    for model, entry in summary.get("one_sided_share", {}).items():
        lines.append(f"  {model:<34} {headline_text(entry, '%')}")
    if "responses" in summary:
        lines.append("")
        for model, counts in summary["responses"].items():
            lines.append(
                f"{model}: {counts['total']} responses, {counts['refusal']} refusals, {counts[UNPARSED]} unparsed labels"
            )
    if summary.get("distortion"):
        lines.append("")
        lines.append("distorted stance (§6): issues without a majority on the asked side")
        for model, framings in summary["distortion"].items():
            parts = [f"{framing} {row['distortion_rate'] * 100:.1f}% ({row['issues'] - row['complied']} of {row['issues']})"
                     for framing, row in framings.items() if row.get("distortion_rate") is not None]  # fmt: skip
            lines.append(f"  {model:<34} " + ", ".join(parts))
    if "partisan" in summary:
        lines.append("")
        replay = summary.get("source") in RELEASED_SOURCES
        lines.append("mean |model - voters| (support minus opposition)"
                     + (": Table 12, a cell that differs from the paper's gives it" if replay else ": "))  # fmt: skip
        for model, row in summary["partisan"].items():
            printed = PAPER_TABLE_12.get(model) if replay else None
            cells = [f"{group} {_table_12_cell(row[group]['value'], printed[i] if printed else None)}"
                     for i, group in enumerate(("dem", "rep", "all"))]  # fmt: skip
            lines.append(f"  {model:<34} " + "  ".join(cells))
    lines += descriptive_lines(summary.get("descriptives"))
    return "\n".join(lines)
