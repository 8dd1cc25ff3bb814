"""Replaying the authors' released ablations with stancelab's own code: Table 8 (four judges
re-judging 300 conversations, §5.5) and the verdict trajectories of §5.4 (300 conversations
judged at each of their five turns).

The release (`ablation/` beside `output/`) holds `ablation_judge_results.jsonl` (one verdict
per judge and conversation; an unreadable verdict is null), `ablation_trajectory.jsonl` (the
verdict at each turn), `ablation_sample.jsonl` (the sampled conversations' keys) and
`ablation_v2_qwen35_old.json`, the Qwen judge's original verdicts (R1, §5.6) on the same
conversations: the judge file's Qwen rows are its re-run with a JSON prompt (R2). The paper's
Table 8 is R1 beside the three other judges; §5.6 compares R1 with R2. A conversation is keyed
by (topic, subject model, persona, category); its topic is the unit of every interval.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any, Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, RootModel, ValidationError

from stancelab.core.data.files import invalid_record, load_jsonl
from stancelab.core.errors import DataFileError
from stancelab.core.stats.intervals import bounded_cluster_ci
from stancelab.core.values import json_safe
from stancelab.llm_bias_bench import analysis as an
from stancelab.llm_bias_bench import compare
from stancelab.llm_bias_bench.analysis import CONVERSATION_COLUMNS
from stancelab.llm_bias_bench.persuasion import setup_a_lines, setup_a_summary
from stancelab.llm_bias_bench.records import config_label
from stancelab.llm_bias_bench.verdicts import MISSING, VERDICTS, authors_verdict

ABLATION_DIR = "ablation"
JUDGE_FILE = "ablation_judge_results.jsonl"
TRAJECTORY_FILE = "ablation_trajectory.jsonl"
SAMPLE_FILE = "ablation_sample.jsonl"
ORIGINAL_QWEN_FILE = "ablation_v2_qwen35_old.json"  # the Qwen judge's original verdicts (R1)
SETUP_A_TABLE = "persuasion_setup_a"  # §5.3 Setup A, from the release's persuasion/ folder
AUTHORS_USER = "anthropic/claude-opus-4.6"  # the user model of every ablation conversation (§4.1)
AUTHORS_JUDGE = "qwen/qwen3.5-397b-a17b"  # §5.4's judge

# Table 8 as printed (pairwise agreement, %, and each judge's consensus, the row average).
PAPER_TABLE_8 = {
    "pairwise": {
        ("google/gemini-3.1-pro-preview", "anthropic/claude-opus-4.6"): 87.3,
        ("google/gemini-3.1-pro-preview", "x-ai/grok-4.20"): 78.7,
        ("google/gemini-3.1-pro-preview", "qwen/qwen3.5-397b-a17b"): 90.0,
        ("qwen/qwen3.5-397b-a17b", "anthropic/claude-opus-4.6"): 86.7,
        ("qwen/qwen3.5-397b-a17b", "x-ai/grok-4.20"): 77.7,
        ("anthropic/claude-opus-4.6", "x-ai/grok-4.20"): 79.7,
    },
    "consensus": {
        "google/gemini-3.1-pro-preview": 85.3,
        "qwen/qwen3.5-397b-a17b": 84.8,
        "anthropic/claude-opus-4.6": 84.6,
        "x-ai/grok-4.20": 78.7,
    },
    "unanimous": 70.3,
    "supermajority": 91.3,
}
# §5.4 as printed: 289 conversations valid at every turn.
PAPER_SECTION_5_4 = {
    "conversations": 289,
    "stable": 31.5,
    "drift_to_agree": 26.6,
    "drift_to_disagree": 22.5,
    "sycophantic_drift": 44.0,
    "sycophantic_drift_direct": 51.0,
    "sycophantic_drift_indirect": 36.3,
    "neutral->agree": 76,
    "neutral->disagree": 63,
}
# §5.6 as printed: R1 vs R2 on the 299 conversations both judged; the three changes it names.
PAPER_SECTION_5_6 = {
    "conversations": 299,
    "same verdict": 275,
    "neutral->agree": 8,
    "neutral->disagree": 3,
    "disagree->neutral": 3,
}
# Figure 3 as plotted (paper.tex's figure source), % per turn 1-5.
PAPER_FIGURE_3 = {
    ("direct", "sycophancy"): (22.3, 56.3, 67.3, 71.6, 70.9),
    ("indirect", "sycophancy"): (40.6, 64.2, 68.8, 74.2, 77.9),
    ("direct", "positioning"): (35.4, 70.8, 91.7, 95.8, 85.4),
    ("indirect", "positioning"): (7.7, 40.4, 49.0, 67.3, 90.2),
}


class _Key(BaseModel):
    """A sampled conversation's key: one line of `ablation_sample.jsonl`."""

    model_config = ConfigDict(extra="allow")
    topic_id: str
    model_key: str
    persona: str
    category: str

    def key(self) -> str:
        return "|".join((self.topic_id, self.model_key, self.persona, self.category))


class JudgeRecord(_Key):
    """One line of `ablation_judge_results.jsonl`: one judge's verdict on one conversation."""

    judge_short: str
    judge_model: str
    subject_model: str
    verdict: str | None = None


class _TurnVerdict(BaseModel):
    model_config = ConfigDict(extra="allow")
    turn: int
    verdict: str | None = None


class TrajectoryRecord(_Key):
    """One line of `ablation_trajectory.jsonl`: the verdict at each turn of one conversation."""

    verdicts: list[_TurnVerdict]


def ablation_dir(source: Path | str) -> Path | None:
    """The release's `ablation/` folder beside its `output/` (`source` the release or its
    `output/` folder), if it holds a judge or trajectory file."""
    source = Path(source)
    for folder in (source / ABLATION_DIR, source.parent / ABLATION_DIR):
        if folder.is_dir() and any((folder / f).exists() for f in (JUDGE_FILE, TRAJECTORY_FILE)):
            return folder
    return None


def _verdict(value: str | None) -> str:
    """A released verdict as the authors' code reads it (`verdicts.authors_verdict`): exactly
    as written, null `missing`, any other text `unparsed`. No released verdict differs from
    its folded form, so no published cell depends on this (the README says so)."""
    return authors_verdict({"verdict": value})[0]


def _row(
    record: _Key, model: str, judge: str, verdict: str, trajectory: str = ""
) -> dict[str, Any]:
    return {"model": model, "category": record.category, "topic_id": record.topic_id,
            "persona": record.persona, "replicate": 1, "verdict": verdict, "blind_verdict": None,
            "trajectory": trajectory, "judge_model": judge, "user_model": AUTHORS_USER,
            "config": config_label(AUTHORS_USER, judge), "transcript_id": "", "judge_attempts": 1,
            "shared_topic": None, "orientation": None}  # fmt: skip


QwenVerdicts = Literal["original", "rerun"]
"""Whose Qwen verdicts Table 8 uses: `original` (R1, `ORIGINAL_QWEN_FILE`, the paper's) or
`rerun` (R2, the judge file's Qwen rows, from the JSON prompt of §5.6)."""


class _OriginalVerdicts(RootModel[dict[str, str | None]]):
    """`ablation_v2_qwen35_old.json`: "('topic', 'model_key', 'persona', 'category')" -> verdict."""


def _tuple_key(text: str) -> str | None:
    """A conversation key written as a Python tuple of four strings, as `_Key.key` joins it."""
    try:
        parts = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return None
    if not (
        isinstance(parts, tuple) and len(parts) == 4 and all(isinstance(p, str) for p in parts)
    ):
        return None
    return "|".join(parts)


def original_qwen_verdicts(folder: Path) -> dict[str, str | None]:
    """The Qwen judge's original verdicts (R1) by conversation key; a bad file is a
    DataFileError naming it and the key."""
    path = folder / ORIGINAL_QWEN_FILE
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise DataFileError(path, None, None, f"cannot read: {error}") from error
    except json.JSONDecodeError as error:
        raise DataFileError(path, error.lineno, None, f"invalid JSON: {error.msg}") from error
    try:
        verdicts = _OriginalVerdicts.model_validate(raw).root
    except ValidationError as error:
        raise invalid_record(path, None, error) from error
    keyed: dict[str, str | None] = {}
    for text, verdict in verdicts.items():
        key = _tuple_key(text)
        if key is None:
            raise DataFileError(path, None, text, "not a (topic, model, persona, category) tuple")
        keyed[key] = verdict
    if not keyed:
        raise DataFileError(path, None, None, "file holds no verdicts")
    return keyed


def has_original_qwen(folder: Path) -> bool:
    return (folder / ORIGINAL_QWEN_FILE).exists()


def judge_records(folder: Path, qwen: QwenVerdicts = "original") -> list[JudgeRecord]:
    """Table 8's verdicts, one per judge and conversation: the judge file's, with the Qwen
    judge's original verdicts (R1) in place of its re-run where `qwen` is `original` and the
    release has them."""
    records = load_jsonl(folder / JUDGE_FILE, JudgeRecord, lambda r: f"{r.judge_short}|{r.key()}")
    if qwen == "rerun" or not has_original_qwen(folder):
        return records
    by_key = {r.key(): r for r in records}
    original = []
    for key, verdict in original_qwen_verdicts(folder).items():
        topic, model_key, persona, category = key.split("|")
        subject = by_key[key].subject_model if key in by_key else model_key
        original.append(JudgeRecord(topic_id=topic, model_key=model_key, persona=persona,
                                    category=category, judge_short="qwen35",
                                    judge_model=AUTHORS_JUDGE, subject_model=subject,
                                    verdict=verdict))  # fmt: skip
    return [r for r in records if r.judge_model != AUTHORS_JUDGE] + original


def _sample_keys(folder: Path, records: list[JudgeRecord]) -> list[str]:
    """The sampled conversations: the sample file's, else every conversation some judge judged."""
    if (folder / SAMPLE_FILE).exists():
        return [r.key() for r in load_jsonl(folder / SAMPLE_FILE, _Key, _Key.key)]
    return sorted({r.key() for r in records})


def judge_conversations(folder: Path, qwen: QwenVerdicts = "original") -> pd.DataFrame:
    """Table 8's verdicts as conversations, one row per judge and sampled conversation: a null
    verdict, or none at all for a conversation of the sample, is `missing` (counted as a
    disagreement over every sampled conversation, as the paper's 262 / 300 for Gemini-Opus)."""
    records = judge_records(folder, qwen)
    verdicts = {(r.judge_model, r.key()): _verdict(r.verdict) for r in records}
    subjects = {r.model_key: r.subject_model for r in records}
    rows = []
    for judge in sorted({r.judge_model for r in records}):
        for key in _sample_keys(folder, records):
            record = _Key(**dict(zip(("topic_id", "model_key", "persona", "category"),
                                     key.split("|"), strict=True)))  # fmt: skip
            rows.append(_row(record, subjects.get(record.model_key, record.model_key), judge,
                             verdicts.get((judge, key), MISSING)))  # fmt: skip
    return pd.DataFrame(rows, columns=CONVERSATION_COLUMNS)


def trajectory_conversations(folder: Path, models: dict[str, str] | None = None) -> pd.DataFrame:
    """§5.4's conversations with their per-turn verdicts ("|"-joined, turn order), judged by
    the authors' default judge; `models` maps the release's model keys to model names."""
    records = load_jsonl(folder / TRAJECTORY_FILE, TrajectoryRecord, TrajectoryRecord.key)
    rows = []
    for record in records:
        turns = sorted(record.verdicts, key=lambda v: v.turn)
        verdicts = [_verdict(v.verdict) for v in turns]
        model = (models or {}).get(record.model_key, record.model_key)
        rows.append(_row(record, model, AUTHORS_JUDGE, verdicts[-1] if verdicts else MISSING,
                         "|".join(verdicts)))  # fmt: skip
    return pd.DataFrame(rows, columns=CONVERSATION_COLUMNS)


def _model_names(folder: Path) -> dict[str, str]:
    """The release's model keys -> model names, from the judge file where it is there."""
    if not (folder / JUDGE_FILE).exists():
        return {}
    return {r.model_key: r.subject_model for r in load_jsonl(folder / JUDGE_FILE, JudgeRecord)}


def sample_coverage(folder: Path) -> pd.DataFrame:
    """Per ablation file, its conversations and how many lie outside the released sample."""
    if not (folder / SAMPLE_FILE).exists():
        return pd.DataFrame(columns=["file", "conversations", "outside_sample", "sample"])
    sample = {r.key() for r in load_jsonl(folder / SAMPLE_FILE, _Key, _Key.key)}
    rows = []
    for name, record_type in ((JUDGE_FILE, JudgeRecord), (TRAJECTORY_FILE, TrajectoryRecord)):
        if (folder / name).exists():
            keys = {r.key() for r in load_jsonl(folder / name, record_type)}
            rows.append({"file": name, "conversations": len(keys),
                         "outside_sample": len(keys - sample), "sample": len(sample)})  # fmt: skip
    if has_original_qwen(folder):
        keys = set(original_qwen_verdicts(folder))
        rows.append({"file": ORIGINAL_QWEN_FILE, "conversations": len(keys),
                     "outside_sample": len(keys - sample), "sample": len(sample)})  # fmt: skip
    return pd.DataFrame(rows, columns=["file", "conversations", "outside_sample", "sample"])


def trajectory_table(conversations: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """§5.4 pooled over every model: all conversations, then per category and per persona
    (the paper's breakdowns), and per category x persona."""
    parts: list[tuple[str, str, pd.DataFrame]] = [("all", "all", conversations)]
    parts += [(str(c), "all", g) for c, g in conversations.groupby("category")]
    parts += [("all", str(p), g) for p, g in conversations.groupby("persona")]
    parts += [(str(c), str(p), g) for (c, p), g in conversations.groupby(["category", "persona"])]
    rows = [{"category": c, "persona": p, **an.trajectory_row(g, seed)} for c, p, g in parts]
    return pd.DataFrame(rows)


def per_turn_rates(conversations: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Figure 3, per category and turn: sycophancy (agree / disagree personas: the verdict is
    the persona's side) and positioning (neutral persona: agree or disagree rather than
    neutral), each over the conversations with a valid verdict at that turn (the others are
    counted in `left_out`), with a cluster-bootstrap CI over topics."""
    rows = []
    for category, group in conversations.groupby("category"):
        turns = group["trajectory"].astype(str).str.split("|")
        for turn in range(int(turns.map(len).max())):
            verdicts = turns.map(lambda t, i=turn: t[i] if i < len(t) else MISSING)
            valid = verdicts.isin(VERDICTS)
            partisan = valid & group["persona"].isin(("agree", "disagree"))
            neutral = valid & (group["persona"] == "neutral")
            row: dict[str, Any] = {
                "category": category,
                "turn": turn + 1,
                "left_out": int((~valid).sum()),
            }
            for name, mask, hit in (
                ("sycophancy", partisan, verdicts == group["persona"]),
                ("positioning", neutral, verdicts.isin(("agree", "disagree"))),
            ):
                estimate = bounded_cluster_ci(hit[mask].to_numpy(dtype=float) * 100,
                                              group.loc[mask, "topic_id"].to_numpy(), 0.0, 100.0, seed=seed)  # fmt: skip
                row |= {name: estimate.value, f"{name}_ci_low": estimate.ci_low,
                        f"{name}_ci_high": estimate.ci_high, f"{name}_n": int(mask.sum())}  # fmt: skip
            rows.append(row)
    return pd.DataFrame(rows)


def _first_last(trajectory: str) -> str | None:
    """A conversation's turn-1 -> last-turn transition ("neutral->agree"), "" where the two
    verdicts are the same, None where any turn's verdict is not valid (left out, as §5.4)."""
    verdicts = str(trajectory).split("|")
    if not all(v in VERDICTS for v in verdicts):
        return None
    return "" if verdicts[0] == verdicts[-1] else f"{verdicts[0]}->{verdicts[-1]}"


def transition_table(conversations: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """§5.4's turn-1 -> turn-5 transitions, pooled and per category: per transition its count
    and share (%) of the conversations valid at every turn, with a cluster-bootstrap CI over
    topics, and the paper's count where it prints one."""
    columns = ["category", "transition", "count", "conversations", "left_out", "share",
               "ci_low", "ci_high", "paper"]  # fmt: skip
    changes = conversations["trajectory"].map(_first_last)
    valid = conversations.assign(change=changes)[changes.notna()]
    names = valid.loc[valid["change"] != "", "change"].value_counts().index
    parts = [("all", valid), *((str(c), g) for c, g in valid.groupby("category"))]
    totals = {"all": len(conversations), **conversations.groupby("category").size().to_dict()}
    rows = []
    for category, part in parts:
        for name in names:
            hits = part["change"] == name
            estimate = bounded_cluster_ci(hits.to_numpy(dtype=float) * 100, part["topic_id"].to_numpy(),
                                          0.0, 100.0, seed=seed)  # fmt: skip
            paper = PAPER_SECTION_5_4.get(name) if category == "all" else None
            rows.append({"category": category, "transition": name, "count": int(hits.sum()),
                         "conversations": len(part), "left_out": int(totals[category]) - len(part),
                         "share": estimate.value, "ci_low": estimate.ci_low,
                         "ci_high": estimate.ci_high, "paper": paper})  # fmt: skip
    return pd.DataFrame(rows, columns=columns)


def _matches(value: Any, paper: Any) -> bool | None:
    """Whether a replayed figure rounds to the printed one (None where the paper prints none)."""
    if paper is None or pd.isna(paper) or value is None or pd.isna(value):
        return None
    return bool(round(float(value), 1) == float(paper))


SECTION_5_6_COLUMNS = ["figure", "count", "conversations", "share", "ci_low", "ci_high",
                       "left_out", "unreadable", "paper", "reproduces"]  # fmt: skip


def _change(first: str, second: str) -> str:
    """A verdict change "r1->r2" ("" where they are the same valid verdict); an unreadable
    verdict is written "unreadable" and is always a change."""
    if first == second and first in VERDICTS:
        return ""
    return f"{first if first in VERDICTS else 'unreadable'}->{second if second in VERDICTS else 'unreadable'}"


def section_5_6_rows(folder: Path, seed: int = 0) -> pd.DataFrame:
    """§5.6: the Qwen judge's original verdicts (R1) against its JSON-prompt re-run (R2) on the
    conversations both runs judged: how many keep their verdict, and each change's count, in %
    of those conversations with a 95% cluster-bootstrap CI over topics. An unreadable (null)
    verdict is a change (the paper's 299 includes the re-run's 3 nulls); a conversation one run
    lacks is left out (`left_out`)."""
    first = {k: _verdict(v) for k, v in original_qwen_verdicts(folder).items()}
    records = load_jsonl(folder / JUDGE_FILE, JudgeRecord, lambda r: f"{r.judge_short}|{r.key()}")
    second = {r.key(): _verdict(r.verdict) for r in records if r.judge_model == AUTHORS_JUDGE}
    both = sorted(first.keys() & second.keys())
    left_out = len(first.keys() ^ second.keys())
    unreadable = sum(first[k] not in VERDICTS or second[k] not in VERDICTS for k in both)
    changes = pd.Series([_change(first[k], second[k]) for k in both], dtype=str)
    topics = [k.split("|")[0] for k in both]
    named = changes[changes != ""].value_counts()
    figures = [("same verdict", changes == "")]
    figures += [
        (name, changes == name) for name in sorted(named.index, key=lambda n: (-named[n], n))
    ]
    rows = []
    for figure, hits in figures:
        estimate = bounded_cluster_ci(
            hits.to_numpy(dtype=float) * 100, topics, 0.0, 100.0, seed=seed
        )
        paper = PAPER_SECTION_5_6.get(figure)
        rows.append({"figure": figure, "count": int(hits.sum()), "conversations": len(both),
                     "share": estimate.value, "ci_low": estimate.ci_low,
                     "ci_high": estimate.ci_high, "left_out": left_out,
                     "unreadable": unreadable, "paper": paper,
                     "reproduces": None if paper is None else int(hits.sum()) == paper})  # fmt: skip
    return pd.DataFrame(rows, columns=SECTION_5_6_COLUMNS)


def table_8_rows(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Table 8 as one long table beside the paper's cells: each pair's agreement, each judge's
    consensus (its row average), unanimity and supermajority, in % with the 95% CI over
    topics, the conversations each figure rests on and whether it reproduces the paper."""
    pairs, consensus = tables["ablation_judge_agreement"], tables["ablation_judge_consensus"]
    overall = tables["ablation_judge_overall"].iloc[0]
    paper_pairs = {frozenset(k): v for k, v in PAPER_TABLE_8["pairwise"].items()}
    rows = [{"figure": "pairwise agreement", "judges": f"{r['rater_a']} / {r['rater_b']}",
             "value": r["agreement"], "ci_low": r["ci_low"], "ci_high": r["ci_high"],
             "conversations": r["slots"], "unreadable": r["unreadable"],
             "paper": paper_pairs.get(frozenset((r["rater_a"], r["rater_b"])))}
            for _, r in pairs.iterrows()]  # fmt: skip
    rows += [{"figure": "consensus (row average)", "judges": r["rater"], "value": r["consensus"],
              "ci_low": r["ci_low"], "ci_high": r["ci_high"], "conversations": None,
              "unreadable": None, "paper": PAPER_TABLE_8["consensus"].get(r["rater"])}
             for _, r in consensus.iterrows()]  # fmt: skip
    rows += [{"figure": name, "judges": f"all {int(overall['raters'])}", "value": overall[key],
              "ci_low": overall[f"{key}_ci_low"], "ci_high": overall[f"{key}_ci_high"],
              "conversations": overall["complete_slots"], "unreadable": None,
              "paper": PAPER_TABLE_8[key]}
             for key, name in (("unanimous", "unanimous (4/4)"),
                               ("supermajority", "supermajority (3/4+)"))]  # fmt: skip
    frame = pd.DataFrame(rows)
    frame["reproduces"] = [
        _matches(v, p) for v, p in zip(frame["value"], frame["paper"], strict=True)
    ]
    return frame


def table_8_note(rows: pd.DataFrame) -> str:
    """Whose Qwen verdicts the table uses, and whether every cell equals the paper's (else
    which differ and why)."""
    qwen = str(rows["qwen_verdicts"].iloc[0]) if "qwen_verdicts" in rows else RERUN_ONLY
    differ = rows[rows["reproduces"] == False]  # noqa: E712 (None: the paper prints none)
    text = f"Qwen's verdicts: {qwen}. "
    if differ.empty:
        return text + f"Every one of the {len(rows)} cells equals the paper's."
    names = "; ".join(f"{_row_name(r)} {_pct(r['value'])} (paper {_pct(r['paper'])})"
                      for _, r in differ.iterrows())  # fmt: skip
    return (text + f"{len(differ)} of {len(rows)} cells differ from the paper's ({names}): "
            + _why_table_8_differs(qwen) + ".")  # fmt: skip


def section_5_4_rows(trajectories: pd.DataFrame) -> pd.DataFrame:
    """§5.4's rates as printed (pooled, and sycophantic drift per category), in % of the
    conversations valid at every turn, with the 95% CI over topics and the paper's figure."""
    wanted = [("all", name, name) for name in an.TRAJECTORY_RATES]
    wanted += [(c, "sycophantic_drift", f"sycophantic_drift_{c}") for c in ("direct", "indirect")]
    table = trajectories.set_index(["category", "persona"])
    rows = []
    for category, name, paper_key in wanted:
        if (category, "all") not in table.index:
            continue
        row = table.loc[(category, "all")]
        rows.append({"figure": name.replace("_", " "), "category": category,
                     "value": row[name] * 100, "ci_low": row[f"{name}_ci_low"] * 100,
                     "ci_high": row[f"{name}_ci_high"] * 100,
                     "conversations": int(row["conversations"]), "left_out": int(row["left_out"]),
                     "paper": PAPER_SECTION_5_4[paper_key]})  # fmt: skip
    frame = pd.DataFrame(rows)
    if not frame.empty:
        frame["reproduces"] = [
            _matches(v, p) for v, p in zip(frame["value"], frame["paper"], strict=True)
        ]
    return frame


def figure_3_rows(per_turn: pd.DataFrame) -> pd.DataFrame:
    """Figure 3 as a long table: per category, rate and turn, the % with its 95% CI over
    topics, the conversations it rests on and the paper's plotted value."""
    rows = [{"category": r["category"], "rate": name, "turn": int(r["turn"]), "value": r[name],
             "ci_low": r[f"{name}_ci_low"], "ci_high": r[f"{name}_ci_high"], "n": int(r[f"{name}_n"]),
             "left_out": int(r["left_out"]), "paper": _paper_point(str(r["category"]), name, int(r["turn"]))}
            for _, r in per_turn.iterrows() for name in ("sycophancy", "positioning")]  # fmt: skip
    frame = pd.DataFrame(rows)
    return frame.sort_values(["category", "rate", "turn"], ignore_index=True) if rows else frame


def _paper_point(category: str, rate: str, turn: int) -> float | None:
    printed = PAPER_FIGURE_3.get((category, rate), ())
    return printed[turn - 1] if 0 < turn <= len(printed) else None


QWEN_LABELS = {"original": "original run (R1, the paper's)",
               "rerun": "JSON-prompt re-run (R2, §5.6), not the paper's"}  # fmt: skip
RERUN_ONLY = f"{QWEN_LABELS['rerun']}: {ORIGINAL_QWEN_FILE} is not in the release"


def _table_8(folder: Path, qwen: QwenVerdicts, seed: int, label: str) -> dict[str, pd.DataFrame]:
    """Table 8's pairs, consensus and overall agreement with the chosen Qwen verdicts, and
    the three laid out beside the paper's cells (`table`, which names the Qwen verdicts)."""
    pairs, consensus, overall = compare.rater_agreement(
        judge_conversations(folder, qwen), "judge_model", seed
    )
    tables = {"pairs": pairs, "consensus": consensus, "overall": overall}
    if not overall.empty:
        rows = table_8_rows({"ablation_judge_agreement": pairs,
                             "ablation_judge_consensus": consensus,
                             "ablation_judge_overall": overall})  # fmt: skip
        tables["table"] = rows.assign(qwen_verdicts=label)
    return tables


def replay_tables(folder: Path, seed: int = 0) -> dict[str, pd.DataFrame]:
    """Every ablation table the release allows: Table 8 (`ablation_judge_agreement`,
    `ablation_judge_consensus`, `ablation_judge_overall`, and laid out beside the paper's
    cells `ablation_table_8`; with the Qwen judge's original verdicts where the release has
    them, and then `ablation_table_8_rerun` with its re-run instead), §5.6
    (`ablation_section_5_6`), §5.4 (`ablation_trajectories`, `ablation_section_5_4`,
    `ablation_transitions`) and Figure 3 (`ablation_per_turn`, `ablation_figure_3`)."""
    tables: dict[str, pd.DataFrame] = {}
    if (folder / JUDGE_FILE).exists():
        original = has_original_qwen(folder)
        table_8 = (_table_8(folder, "original", seed, QWEN_LABELS["original"]) if original
                   else _table_8(folder, "rerun", seed, RERUN_ONLY))  # fmt: skip
        tables |= {"ablation_judge_agreement": table_8["pairs"],
                   "ablation_judge_consensus": table_8["consensus"],
                   "ablation_judge_overall": table_8["overall"]}  # fmt: skip
        if "table" in table_8:
            tables["ablation_table_8"] = table_8["table"]
        if original:
            rerun = _table_8(folder, "rerun", seed, QWEN_LABELS["rerun"])
            if "table" in rerun:
                tables["ablation_table_8_rerun"] = rerun["table"]
            tables["ablation_section_5_6"] = section_5_6_rows(folder, seed)
    if (folder / TRAJECTORY_FILE).exists():
        trajectories = trajectory_conversations(folder, _model_names(folder))
        tables["ablation_trajectories"] = trajectory_table(trajectories, seed)
        tables["ablation_section_5_4"] = section_5_4_rows(tables["ablation_trajectories"])
        tables["ablation_transitions"] = transition_table(trajectories, seed)
        tables["ablation_per_turn"] = per_turn_rates(trajectories, seed)
        tables["ablation_figure_3"] = figure_3_rows(tables["ablation_per_turn"])
    if tables:
        tables["ablation_sample"] = sample_coverage(folder)
    return tables


def _records(frame: pd.DataFrame, columns: list[str]) -> list[dict[str, Any]]:
    return [{c: json_safe(row[c]) for c in columns} for _, row in frame.iterrows()]


def ablation_summary(tables: dict[str, pd.DataFrame]) -> dict[str, Any]:
    """The summary's `ablation` entry: Table 8, §5.3 Setup A, §5.4 with Figure 3 and §5.6,
    each beside the paper's figures."""
    summary: dict[str, Any] = {}
    if "ablation_sample" in tables:
        summary["sample"] = _records(
            tables["ablation_sample"], list(tables["ablation_sample"].columns)
        )
    if "ablation_judge_agreement" in tables:
        pairs, consensus = tables["ablation_judge_agreement"], tables["ablation_judge_consensus"]
        (overall,) = _records(
            tables["ablation_judge_overall"], list(tables["ablation_judge_overall"].columns)
        )
        summary["table_8"] = {
            "pairwise": _records(pairs, ["rater_a", "rater_b", "slots", "unreadable", "agreement", "ci_low", "ci_high",
                                         "agreement_valid_only", "cohen_kappa"]),
            "consensus": _records(consensus, ["rater", "consensus", "ci_low", "ci_high",
                                              "majority_agreement", "majority_slots"]),
            "overall": overall,
            "paper": {"pairwise": [{"rater_a": a, "rater_b": b, "agreement": v}
                                   for (a, b), v in PAPER_TABLE_8["pairwise"].items()],
                      "consensus": PAPER_TABLE_8["consensus"],
                      "unanimous": PAPER_TABLE_8["unanimous"],
                      "supermajority": PAPER_TABLE_8["supermajority"]},
        }  # fmt: skip
        table_8 = tables.get("ablation_table_8", pd.DataFrame())
        if not table_8.empty:
            summary["table_8"]["qwen_verdicts"] = str(table_8["qwen_verdicts"].iloc[0])
        if "ablation_table_8_rerun" in tables:
            summary["table_8"]["rerun"] = _records(
                tables["ablation_table_8_rerun"], ["figure", "judges", "value", "paper"]
            )
    if SETUP_A_TABLE in tables:
        summary["section_5_3"] = setup_a_summary(tables[SETUP_A_TABLE])
    if "ablation_section_5_6" in tables:
        summary["section_5_6"] = {
            "rows": _records(tables["ablation_section_5_6"], SECTION_5_6_COLUMNS),
            "paper": PAPER_SECTION_5_6,
        }
    if "ablation_trajectories" in tables:
        frame = tables["ablation_trajectories"]
        rates = [*an.TRAJECTORY_RATES]
        summary["section_5_4"] = {
            f"{r['category']}/{r['persona']}": {"conversations": int(r["conversations"]),
                                                "left_out": int(r["left_out"]),
                                                "transitions": r["transitions"],
                                                "turn_changes": r["turn_changes"]}
            | {m: {"value": json_safe(r[m]), "ci_low": json_safe(r[f"{m}_ci_low"]),
                   "ci_high": json_safe(r[f"{m}_ci_high"])} for m in rates}
            for _, r in frame.iterrows()
        } | {"paper": PAPER_SECTION_5_4}  # fmt: skip
    if "ablation_per_turn" in tables:
        frame = tables["ablation_per_turn"]
        summary["figure_3"] = {
            f"{category}/{name}": {
                "per_turn": [json_safe(v) for v in group.sort_values("turn")[name]],
                "ci_low": [json_safe(v) for v in group.sort_values("turn")[f"{name}_ci_low"]],
                "ci_high": [json_safe(v) for v in group.sort_values("turn")[f"{name}_ci_high"]],
                "paper": list(PAPER_FIGURE_3.get((str(category), name), ())),
            }
            for category, group in frame.groupby("category")
            for name in ("sycophancy", "positioning")
        }
    return summary


def _pct(value: Any) -> str:
    return "n/a" if value is None else f"{value:.1f}"


def _short(model: str) -> str:
    return model.split("/")[-1]


DIFFERS = "†"


def _cell(ours: float | None, paper: float | None) -> str:
    """Our figure, and the paper's beside it only where the two differ (marked)."""
    if paper is None or ours is None or round(ours, 1) == paper:
        return _pct(ours)
    return f"{_pct(ours)} (paper {_pct(paper)}){DIFFERS}"


def _why_table_8_differs(qwen: str) -> str:
    """Why a replayed Table 8 cell differs from the paper's, in a phrase."""
    if qwen.startswith(QWEN_LABELS["rerun"]):
        return ("the Qwen judge's verdicts here are its JSON-prompt re-run (R2), not the original "
                "run (R1) behind the paper's table")  # fmt: skip
    return "the released verdicts are not those behind the paper's table"


def table_8_lines(entry: dict[str, Any]) -> list[str]:
    """Table 8 as the paper lays it out: per judge, its agreement with each other judge and its
    consensus (the row average), then unanimity and supermajority; a cell that differs from
    the paper's gives the paper's beside it and a line says why."""
    pairs = {frozenset((p["rater_a"], p["rater_b"])): p["agreement"] for p in entry["pairwise"]}
    paper = {
        frozenset((p["rater_a"], p["rater_b"])): p["agreement"] for p in entry["paper"]["pairwise"]
    }
    judges = [c["rater"] for c in sorted(entry["consensus"], key=lambda c: -(c["consensus"] or 0))]
    cells = [_cell(v, paper.get(k)) for k, v in pairs.items()]
    cells += [_cell(c["consensus"], entry["paper"]["consensus"].get(c["rater"]))
              for c in entry["consensus"]]  # fmt: skip
    width = max(24, *(len(c) + 2 for c in cells))
    header = f"{'judge':<24}" + "".join(f"{_short(j)[: width - 2]:>{width}}" for j in judges)
    overall = entry["overall"]
    qwen = entry.get("qwen_verdicts", RERUN_ONLY)
    lines = [
        f"Table 8: agreement between judges (%, over {overall['complete_slots']} conversations; "
        f"an unreadable or missing verdict a disagreement; Qwen's verdicts: {qwen})",
        header + f"{'consensus':>{width}}",
    ]
    for judge in judges:
        cells = [f"{'-':>{width}}" if judge == other else
                 f"{_cell(pairs.get(frozenset((judge, other))), paper.get(frozenset((judge, other)))):>{width}}"
                 for other in judges]  # fmt: skip
        row = next(c for c in entry["consensus"] if c["rater"] == judge)
        printed = entry["paper"]["consensus"].get(judge)
        lines.append(
            f"{_short(judge):<24}" + "".join(cells) + f"{_cell(row['consensus'], printed):>{width}}"
        )
    lines.append(
        f"unanimous (4/4): {_cell(overall['unanimous'], entry['paper']['unanimous'])}%, "
        f"supermajority (3/4+): {_cell(overall['supermajority'], entry['paper']['supermajority'])}%"
    )
    differ = any(DIFFERS in line for line in lines)
    lines.append(f"{DIFFERS} differs from the paper: {_why_table_8_differs(qwen)}" if differ
                 else "every cell equals the paper's Table 8")  # fmt: skip
    if entry.get("rerun"):
        lines.append(_rerun_line(entry["rerun"]))
    return lines


def _row_name(row: dict[str, Any]) -> str:
    """A Table 8 row's name in a line: a pair, a judge's consensus, or the figure."""
    if row["figure"] == "pairwise agreement":
        return "-".join(_short(j) for j in row["judges"].split(" / "))
    if row["figure"].startswith("consensus"):
        return f"{_short(row['judges'])} consensus"
    return row["figure"]


def _rerun_line(rows: list[dict[str, Any]]) -> str:
    """Table 8 with Qwen's JSON-prompt re-run (R2) in place of R1: the cells that change."""
    changed = [
        f"{_row_name(r)} {_pct(r['value'])} (paper {_pct(r['paper'])})"
        for r in rows
        if r["paper"] is not None and round(r["value"], 1) != r["paper"]
    ]
    return (
        "with Qwen's JSON-prompt re-run (R2, the judge file's Qwen rows) instead of R1, which is "
        "not the paper's table: " + ("; ".join(changed) if changed else "every cell the same")
    )


def section_5_6_lines(entry: dict[str, Any]) -> list[str]:
    """§5.6: how many of the conversations both Qwen runs judged keep their verdict, and the
    changes, each count beside the paper's where it prints one."""
    rows, paper = entry["rows"], entry["paper"]
    if not rows:
        return []
    same, changes = rows[0], rows[1:]

    def count(row: dict[str, Any], total: int) -> str:
        printed = row["paper"]
        if printed is None:
            return f"{row['count']}"
        if row["count"] == printed and total == paper["conversations"]:
            return f"{row['count']} (= paper)"
        return (f"{row['count']} (paper: {int(printed)} of {paper['conversations']}: the "
                "released verdicts are not those behind the paper's figure)")  # fmt: skip

    total = same["conversations"]
    return [
        f"Section 5.6: Qwen judge, original prompt (R1) vs JSON prompt (R2): the same verdict on "
        f"{count(same, total)} of {total} conversations both judged, {_pct(same['share'])}% "
        f"(95% CI {_pct(same['ci_low'])}-{_pct(same['ci_high'])}); an unreadable R2 verdict "
        f"({same['unreadable']}) counts as a change; {same['left_out']} conversation(s) only one "
        "run judged left out",
        "changes (R1->R2): " + ", ".join(f"{r['figure']} {count(r, total)}" for r in changes),
    ]


def section_5_4_lines(entry: dict[str, Any]) -> list[str]:
    """§5.4's figures (all conversations valid at every turn, and sycophantic drift per
    category), the paper's beside them."""
    paper = entry["paper"]
    pooled = entry.get("all/all", {})

    def rate(key: str, name: str) -> str:
        value = entry.get(key, {}).get(name, {}).get("value")
        return _pct(None if value is None else value * 100)

    return [
        f"Section 5.4: verdict trajectories over {pooled.get('conversations', 0)} conversations valid "
        f"at every turn (paper {paper['conversations']}; {pooled.get('left_out', 0)} left out)",
        f"stable {rate('all/all', 'stable')}% (paper {paper['stable']}), drift to agree "
        f"{rate('all/all', 'drift_to_agree')}% ({paper['drift_to_agree']}), drift to disagree "
        f"{rate('all/all', 'drift_to_disagree')}% ({paper['drift_to_disagree']}), sycophantic drift "
        f"{rate('all/all', 'sycophantic_drift')}% ({paper['sycophantic_drift']}): direct "
        f"{rate('direct/all', 'sycophantic_drift')}% ({paper['sycophantic_drift_direct']}), indirect "
        f"{rate('indirect/all', 'sycophantic_drift')}% ({paper['sycophantic_drift_indirect']})",
        f"turn 1 -> turn 5 transitions: {pooled.get('transitions', '')} "
        f"(paper neutral->agree {paper['neutral->agree']}, neutral->disagree {paper['neutral->disagree']})",
    ]  # fmt: skip


def ablation_lines(summary: dict[str, Any]) -> list[str]:
    """The printed ablation section, or nothing when the release has none."""
    entry = summary.get("ablation") or {}
    lines: list[str] = []
    if "table_8" in entry:
        lines += ["", *table_8_lines(entry["table_8"])]
    if "section_5_3" in entry:
        lines += ["", *setup_a_lines(entry["section_5_3"])]
    if "section_5_6" in entry:
        lines += ["", *section_5_6_lines(entry["section_5_6"])]
    if "section_5_4" in entry:
        lines += ["", *section_5_4_lines(entry["section_5_4"])]
    for key, figure in (entry.get("figure_3") or {}).items():
        ours = " ".join(_pct(v) for v in figure["per_turn"])
        printed = " ".join(_pct(v) for v in figure["paper"])
        lines.append(f"Figure 3, {key.replace('/', ' ')} per turn (%): {ours} (paper {printed})")
    return lines
