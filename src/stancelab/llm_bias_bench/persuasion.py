"""Replaying the authors' persuasion runs (§5.3) with stancelab's own code: Setup A, the
neutral baselines (vacuum-filling).

Setup A takes the (assistant, topic) pairs whose neutral-persona verdict in indirect mode was
neutral and runs both partisan personas on each with other user models. The release
(`persuasion/` beside `output/`) holds one file per user model, `<user>_persuasion_results.jsonl`,
one line per conversation with the final verdict. A conversation persuades when its verdict is
the persona's side; an unreadable verdict is counted and does not persuade. The topic is the
unit of every interval. Opus 4.6's Setup A conversations are the main run's (it is the main
run's user model), most of whose subjects the release lacks; `opus_stress_results.jsonl` is
another experiment.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict

from stancelab.core.data.files import load_jsonl
from stancelab.core.stats.intervals import bounded_cluster_ci
from stancelab.core.values import json_safe
from stancelab.llm_bias_bench.verdicts import VERDICTS, authors_verdict

PERSUASION_DIR = "persuasion"
SETUP_A_SUFFIX = "_persuasion_results.jsonl"
PARTISAN = ("agree", "disagree")
# §5.3 Results A as printed: conversations persuaded of those run, per user model.
PAPER_SETUP_A = {"anthropic/claude-haiku-4.5": (89, 110), "sabiazinho-4": (85, 110)}
SETUP_A_COLUMNS = ["user_model", "persuaded", "conversations", "unreadable", "subjects",
                   "topics", "rate", "ci_low", "ci_high", "paper_persuaded",
                   "paper_conversations", "reproduces", "file"]  # fmt: skip


class PersuasionRecord(BaseModel):
    """One line of a `<user>_persuasion_results.jsonl`: one conversation and its final verdict."""

    model_config = ConfigDict(extra="allow")
    userllm_model: str
    subject_model: str
    topic_id: str
    persona: str
    category: str
    verdict: str | None = None

    def key(self) -> str:
        return "|".join((self.subject_model, self.topic_id, self.persona, self.category))


def persuasion_dir(source: Path | str) -> Path | None:
    """The release's `persuasion/` folder beside its `output/` (`source` the release or its
    `output/` folder), if it holds a Setup A file."""
    source = Path(source)
    for folder in (source / PERSUASION_DIR, source.parent / PERSUASION_DIR):
        if folder.is_dir() and any(folder.glob(f"*{SETUP_A_SUFFIX}")):
            return folder
    return None


def _setup_a_row(path: Path, seed: int) -> dict[str, Any]:
    """One user model's Setup A: conversations persuaded (verdict = persona) of those run."""
    records = load_jsonl(path, PersuasionRecord, PersuasionRecord.key)
    users = {r.userllm_model for r in records}
    user = users.pop() if len(users) == 1 else ", ".join(sorted(users))
    partisan = [r for r in records if r.persona in PARTISAN]
    verdicts = [authors_verdict({"verdict": r.verdict})[0] for r in partisan]  # as written
    hits = [
        float(verdict == r.persona) * 100 for verdict, r in zip(verdicts, partisan, strict=True)
    ]
    estimate = bounded_cluster_ci(hits, [r.topic_id for r in partisan], 0.0, 100.0, seed=seed)
    persuaded = sum(h > 0 for h in hits)
    paper = PAPER_SETUP_A.get(user)
    return {"user_model": user, "persuaded": persuaded, "conversations": len(partisan),
            "unreadable": sum(verdict not in VERDICTS for verdict in verdicts),
            "subjects": len({r.subject_model for r in partisan}),
            "topics": len({r.topic_id for r in partisan}), "rate": estimate.value,
            "ci_low": estimate.ci_low, "ci_high": estimate.ci_high,
            "paper_persuaded": paper[0] if paper else None,
            "paper_conversations": paper[1] if paper else None,
            "reproduces": None if paper is None else (persuaded, len(partisan)) == paper,
            "file": path.name}  # fmt: skip


def setup_a_table(folder: Path, seed: int = 0) -> pd.DataFrame:
    """§5.3 Setup A per user model: the persuasion rate (% of partisan-persona conversations
    whose final verdict is the persona's side) with a 95% cluster-bootstrap CI over topics,
    beside the paper's count."""
    rows = [_setup_a_row(path, seed) for path in sorted(folder.glob(f"*{SETUP_A_SUFFIX}"))]
    return pd.DataFrame(rows, columns=SETUP_A_COLUMNS)


def setup_a_summary(table: pd.DataFrame) -> dict[str, Any]:
    """The summary's `section_5_3` entry: Setup A's rows."""
    return {
        "setup_a": [{c: json_safe(row[c]) for c in SETUP_A_COLUMNS} for _, row in table.iterrows()]
    }


def _count(row: dict[str, Any]) -> str:
    """`persuaded of conversations = rate%`, the paper's beside it: '= paper' or why not."""
    text = f"{row['persuaded']} of {row['conversations']} = {row['rate']:.1f}%"
    if row["paper_persuaded"] is None:
        return text + " (the paper prints no figure for this user model)"
    if row["reproduces"]:
        return text + " (= paper)"
    printed, total = row["paper_persuaded"], row["paper_conversations"]
    return (text + f" (paper: {printed} of {total} = {100 * printed / total:.1f}%: the released "
            "conversations are not those behind the paper's figure)")  # fmt: skip


def setup_a_lines(entry: dict[str, Any]) -> list[str]:
    """§5.3 Setup A as printed: per user model, conversations persuaded, with its CI."""
    rows = entry.get("setup_a") or []
    if not rows:
        return []
    lines = ["Section 5.3 Setup A (neutral baselines, indirect; judge Qwen3.5): persuasion rate "
             "(final verdict = persona's side) per user model, 95% CI over topics"]  # fmt: skip
    for row in rows:
        lines.append(f"  {row['user_model']}: {_count(row)}, CI {row['ci_low']:.1f}-"
                     f"{row['ci_high']:.1f}; {row['unreadable']} unreadable verdicts counted, "
                     f"{row['subjects']} assistants, {row['topics']} topics")  # fmt: skip
    lines.append("  anthropic/claude-opus-4.6: not measured: its Setup A conversations are the main "
                 "run's indirect ones, which the release holds for only some of the 13 assistants")  # fmt: skip
    return lines
