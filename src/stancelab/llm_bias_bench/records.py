"""Judged conversations from Inspect logs, or from the authors' released output JSONL."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict, ValidationError

from stancelab.core.errors import DataFileError, StancelabError
from stancelab.core.logs import as_dict, log_files, runs_that_count
from stancelab.llm_bias_bench.analysis import CONVERSATION_COLUMNS, flatten_usage
from stancelab.llm_bias_bench.verdicts import UNPARSED, VERDICTS

TASK_NAME = "llm_bias_bench"
SCORER_NAME = "judge_verdict"
SELECTION_ARGS = ("limit_topics", "categories")  # choose samples; the rest of a run's design


def _score_metadata(sample: Any) -> dict[str, Any]:
    score = (getattr(sample, "scores", None) or {}).get(SCORER_NAME)
    return dict(score.metadata or {}) if score is not None else {}


def read_log_conversations(logs: str | Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(conversations, usage) from every llm-bias-bench run in the folder that counts
    (`runs_that_count`): a re-run replaces, another judge or user model adds."""
    from inspect_ai.analysis import (
        EvalInfo,
        EvalModel,
        EvalTask,
        SampleColumn,
        SampleSummary,
        samples_df,
    )

    files = [str(path) for path in log_files(logs)]
    columns = [
        *SampleSummary, *EvalModel, *EvalInfo, *EvalTask,
        SampleColumn("judge", path=_score_metadata, full=True),
    ]  # fmt: skip
    frame = samples_df(files, columns=columns, quiet=True) if files else pd.DataFrame()
    if frame.empty:
        return pd.DataFrame(columns=CONVERSATION_COLUMNS), flatten_usage([])
    frame = frame[frame["task_name"] == TASK_NAME]
    if frame.empty:
        return pd.DataFrame(columns=CONVERSATION_COLUMNS), flatten_usage([])
    frame = runs_that_count(frame, SELECTION_ARGS)
    judged = [as_dict(value) for value in frame["judge"]]
    roles = [as_dict(value) for value in frame["model_roles"]]
    conversations = pd.DataFrame(
        {
            "model": frame["model"].to_numpy(),
            "category": frame["metadata_category"].to_numpy(),
            "topic_id": frame["metadata_topic_id"].to_numpy(),
            "persona": frame["metadata_persona"].to_numpy(),
            "replicate": frame["epoch"].to_numpy(),
            "verdict": [j.get("verdict", UNPARSED) for j in judged],
            "blind_verdict": [j.get("blind_verdict") for j in judged],
            "trajectory": ["|".join(j.get("trajectory", [])) for j in judged],
            "judge_model": [
                _role_model(r, "judge") or m for r, m in zip(roles, frame["model"], strict=True)
            ],
            "user_model": [
                _role_model(r, "user") or m for r, m in zip(roles, frame["model"], strict=True)
            ],
        }
    )
    usage = flatten_usage(zip(frame["model"], [j.get("usage", {}) for j in judged], strict=True))
    return conversations, usage


def _role_model(roles: Any, role: str) -> str | None:
    entry = roles.get(role) if isinstance(roles, dict) else None
    if isinstance(entry, dict):
        return entry.get("model")
    return str(entry) if entry else None


class _Parsed(BaseModel):
    model_config = ConfigDict(extra="allow")
    verdict: Any = None


class _Verdict(BaseModel):
    model_config = ConfigDict(extra="allow")
    turn: int | None = None
    parsed: _Parsed | None = None


class AuthorsConversation(BaseModel):
    """One line of the authors' `output/<model>_<category>.jsonl` (fields we use)."""

    model_config = ConfigDict(extra="allow")
    category: str
    topic_id: str
    persona: str
    subject_model: str
    user_model: str | None = None
    judge_model: str | None = None
    transcript: list[dict[str, Any]] = []
    verdicts: list[_Verdict] = []


def _verdict_of(entry: _Verdict | None) -> str:
    value = entry.parsed.verdict if entry is not None and entry.parsed is not None else None
    text = str(value).strip().lower() if value is not None else ""
    return text if text in VERDICTS else UNPARSED


def _conversation_row(record: AuthorsConversation) -> dict[str, Any]:
    turns = len(record.transcript)
    trajectory = (
        [_verdict_of(v) for v in record.verdicts]
        if turns and len(record.verdicts) == turns > 1
        else []
    )
    return {
        "model": record.subject_model,
        "category": record.category,
        "topic_id": record.topic_id,
        "persona": record.persona,
        "replicate": 1,
        "verdict": _verdict_of(record.verdicts[-1] if record.verdicts else None),
        "blind_verdict": None,
        "trajectory": "|".join(trajectory),
        "judge_model": record.judge_model,
        "user_model": record.user_model,
    }


def read_authors_file(path: Path) -> list[dict[str, Any]]:
    """Rows of one authors' output file; a later line replaces an earlier one for the same cell."""
    last: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = AuthorsConversation.model_validate_json(line)
        except ValidationError as error:
            first = error.errors()[0]
            field = ".".join(str(p) for p in first.get("loc", ())) or None
            raise DataFileError(path, number, field, first.get("msg", "invalid record")) from error
        row = _conversation_row(record)
        last[(row["model"], row["category"], row["topic_id"], row["persona"])] = row
    return list(last.values())


def read_authors_outputs(path: Path | str) -> pd.DataFrame:
    """Conversations from the authors' released output: a folder of JSONL files, or one file."""
    path = Path(path)
    folder = path / "output" if (path / "output").is_dir() else path
    files = sorted(folder.glob("*.jsonl")) if folder.is_dir() else [folder]
    files = [f for f in files if f.exists()]
    if not files:
        raise StancelabError(f"No llm-bias-bench output files (*.jsonl) under {path}")
    rows = [row for file in files for row in read_authors_file(file)]
    return pd.DataFrame(rows, columns=CONVERSATION_COLUMNS)
