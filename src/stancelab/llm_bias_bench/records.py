"""Judged conversations from Inspect logs, or from the authors' released output JSONL."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd
from pydantic import BaseModel, ConfigDict, ValidationError

from stancelab.core.data.files import invalid_record
from stancelab.core.data.topics import TopicTag
from stancelab.core.errors import StancelabError
from stancelab.core.results.evidence import LogEvidence
from stancelab.core.results.logs import as_dict, frame_evidence, runs_that_count, samples_frame
from stancelab.llm_bias_bench.analysis import CONVERSATION_COLUMNS, flatten_usage
from stancelab.llm_bias_bench.dataset import authors_topic_tags
from stancelab.llm_bias_bench.method import RELEASED, TASK_ARGUMENTS, method_key, method_of
from stancelab.llm_bias_bench.solvers import messages_transcript_id, transcript_id
from stancelab.llm_bias_bench.verdicts import UNPARSED, authors_verdict

TASK_NAME = "llm_bias_bench"
SCORER_NAME = "judge_verdict"
SELECTION_ARGS = (
    "limit",
    "limit_topics",
    "categories",
    "shared_topics",
    "authors_repo",  # where the pinned runner was read from, not what it is
)  # choose samples (or where the artefacts came from); the rest of a run's design


def _score_metadata(sample: Any) -> dict[str, Any]:
    score = (getattr(sample, "scores", None) or {}).get(SCORER_NAME)
    return dict(score.metadata or {}) if score is not None else {}


def _sample_transcript(sample: Any) -> str:
    return messages_transcript_id(getattr(sample, "messages", None) or [])


# The score metadata the reader takes from each judged sample: a summary holds it whole when
# the always-recorded keys are there and no key read was cut (Inspect drops a value over
# 1 KB from a sample's summary and leaves this mark).
RECORDED_KEYS = ("verdict", "transcript_id", "usage")
READ_KEYS = (*RECORDED_KEYS, "blind_verdict", "trajectory", "judge_attempts")
THINNED_MARK = "Key removed from summary"


def _summary_whole(judged: object) -> bool:
    values = as_dict(judged)
    return all(key in values for key in RECORDED_KEYS) and not any(
        isinstance(values.get(key), str) and values[key].startswith(THINNED_MARK)
        for key in READ_KEYS
    )


def _judged_samples(logs: str | Path) -> pd.DataFrame:
    """Every sample under `logs` with its judge's score metadata (`judge`) and transcript id:
    from the sample summaries when each holds them whole (runs scored since the scorer
    records its transcript id), else from the full samples."""
    from inspect_ai.analysis import SampleColumn

    frame = samples_frame(logs, [SampleColumn("judge", path=_score_metadata)])
    if not frame.empty and frame["judge"].map(_summary_whole).all():
        frame["transcript_id"] = [as_dict(judged)["transcript_id"] for judged in frame["judge"]]
        return frame
    return samples_frame(logs, [SampleColumn("judge", path=_score_metadata, full=True),
                                SampleColumn("transcript_id", path=_sample_transcript, full=True)])  # fmt: skip


def config_label(user_model: str | None, judge_model: str | None, design: str = "") -> str:
    """A run configuration's name: its simulated-user and judge models, and any design
    argument in which the folder's runs differ."""
    label = f"user={user_model}, judge={judge_model}"
    return f"{label}, {design}" if design else label


def _design(frame: pd.DataFrame) -> pd.Series:
    """Per row, the task arguments (less sample selection) in which the runs differ."""
    skip = {f"task_arg_{name}" for name in SELECTION_ARGS}
    columns = [c for c in frame.columns if c.startswith("task_arg_") and c not in skip]
    text = {c: frame[c].map(lambda v: json.dumps(v, default=str)) for c in columns}
    varying = [c for c in columns if text[c].nunique() > 1]
    if not varying:
        return pd.Series("", index=frame.index)
    parts = [text[c].radd(f"{c.removeprefix('task_arg_')}=") for c in sorted(varying)]
    return pd.concat(parts, axis=1).agg(", ".join, axis=1)


class LoggedConversations(NamedTuple):
    """What the logs of a folder hold, as the analysis reads it."""

    conversations: pd.DataFrame
    usage: pd.DataFrame
    evidence: LogEvidence


def read_log_conversations(logs: str | Path) -> LoggedConversations:
    """(conversations, usage, evidence) from every llm-bias-bench run in the folder that counts
    (`runs_that_count`: a re-run replaces, another judge or user model adds), with the evidence
    of what the read left out."""
    frame = _judged_samples(logs)
    if frame.empty or (frame := frame[frame["task_name"] == TASK_NAME]).empty:
        return LoggedConversations(
            pd.DataFrame(columns=CONVERSATION_COLUMNS), flatten_usage([]), frame_evidence(frame)
        )
    # configurations are kept apart here, with the paper's names (`config_label`)
    frame, evidence = runs_that_count(frame, SELECTION_ARGS, keep_apart=False)
    judged = [as_dict(value) for value in frame["judge"]]
    roles = [as_dict(value) for value in frame["model_roles"]]
    judges = [_role_model(r, "judge") or m for r, m in zip(roles, frame["model"], strict=True)]
    users = [_role_model(r, "user") or m for r, m in zip(roles, frame["model"], strict=True)]
    designs = _design(frame).tolist()
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
            "judge_model": judges,
            "user_model": users,
            "config": [
                config_label(u, j, d) for u, j, d in zip(users, judges, designs, strict=True)
            ],
            "transcript_id": frame["transcript_id"].to_numpy(),
            "judge_attempts": [j.get("judge_attempts", 1) for j in judged],
            "shared_topic": _metadata_column(frame, "shared_topic"),
            "orientation": _metadata_column(frame, "orientation"),
            "method": _methods(frame),
            "verdict_as_written": [_written(_decoded(j.get("verdict_as_written"))) for j in judged],
        }
    )
    usage = flatten_usage(zip(frame["model"], [j.get("usage", {}) for j in judged], strict=True))
    return LoggedConversations(conversations, usage, evidence)


def _methods(frame: pd.DataFrame) -> list[str]:
    """Each row's method (`method.method_key`) from its run's task arguments and the topic set
    its sample records."""
    columns = {name: frame.get(f"task_arg_{name}") for name in TASK_ARGUMENTS}
    columns["topic_set"] = frame.get("metadata_topic_set")

    def argument(name: str, index: Any) -> Any:
        column = columns[name]
        value = column.loc[index] if column is not None else None
        return (
            None if value is None or (pd.api.types.is_scalar(value) and pd.isna(value)) else value
        )

    return [method_key(method_of({name: argument(name, index) for name in columns}))
            for index in frame.index]  # fmt: skip


def _decoded(recorded: Any) -> Any:
    """A verdict as written, from the JSON text the scorer records (None where not recorded)."""
    return json.loads(recorded) if isinstance(recorded, str) else None


def _written(value: Any) -> str | None:
    """A verdict as the judge wrote it, as text (JSON for anything but a string)."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _metadata_column(frame: pd.DataFrame, key: str) -> list[Any]:
    """A sample metadata field per row (None where a sample lacks it, e.g. untagged topics)."""
    column = f"metadata_{key}"
    if column not in frame:
        return [None] * len(frame)
    return [None if pd.isna(value) else value for value in frame[column]]


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


def _parsed_of(entry: _Verdict | None) -> dict[str, Any] | None:
    return entry.parsed.model_dump() if entry is not None and entry.parsed is not None else None


def _verdict_of(entry: _Verdict | None) -> str:
    """A released verdict read as the authors' code reads it: exactly as written, a null or
    absent verdict missing (`verdicts.authors_verdict`)."""
    return authors_verdict(_parsed_of(entry))[0]


def _conversation_row(record: AuthorsConversation, tags: dict[str, TopicTag]) -> dict[str, Any]:
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
        "config": None,
        "transcript_id": transcript_id(
            [
                (str(t.get("user_message", "")), str(t.get("subject_reply", "")))
                for t in record.transcript
            ]
        ),
        "judge_attempts": 1,
        **_tag_columns(tags.get(record.topic_id)),
        "method": RELEASED,
        "verdict_as_written": _written(
            authors_verdict(_parsed_of(record.verdicts[-1] if record.verdicts else None))[1]
        ),
    }


def _tag_columns(tag: TopicTag | None) -> dict[str, Any]:
    """The shared-topic columns of a conversation (the mapping file's tag, if any)."""
    return {"shared_topic": tag.shared_topic if tag else None,
            "orientation": tag.orientation if tag else None}  # fmt: skip


def read_authors_file(path: Path) -> list[dict[str, Any]]:
    """Rows of one authors' output file; a later line replaces an earlier one for the same cell.
    The file is one run: every row gets the configuration (user and judge models) of most of
    its rows, as the paper counts the few rows judged otherwise (Haiku's smoke test) in it."""
    last: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    tags = authors_topic_tags()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = AuthorsConversation.model_validate_json(line)
        except ValidationError as error:
            raise invalid_record(path, number, error) from error
        row = _conversation_row(record, tags)
        last[(row["model"], row["category"], row["topic_id"], row["persona"])] = row
    rows = list(last.values())
    pairs = Counter((row["user_model"], row["judge_model"]) for row in rows)
    user, judge = pairs.most_common(1)[0][0] if pairs else (None, None)
    for row in rows:  # one file is one run: its configuration is the models of most rows
        row["config"] = config_label(user, judge)
    return rows


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
