"""Statements with a bias direction: schema and loaders (JSONL or CSV)."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import Literal

from inspect_ai.dataset import MemoryDataset, Sample
from pydantic import ConfigDict, Field, ValidationError

from stancelab.conviction.prompts import SCENARIOS, scenario_prompt
from stancelab.core.data.files import load_jsonl, read_csv_rows
from stancelab.core.data.topics import (
    TopicTag,
    limit_per_topic,
    select_shared,
)
from stancelab.core.errors import DataFileError


class Statement(TopicTag):
    """A statement; `bias` +1 when agreeing moves right, -1 when it moves left. Its shared
    topic tag (optional): `orientation` +1 when agreeing with it agrees with the topic's
    canonical claim."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    text: str = Field(min_length=1)
    bias: Literal[1, -1]
    topic: str = "economic"


# Bundled sets: the paper's 19 economic Political Compass statements (appendix G, the
# default), the 20 statements written for stancelab before it had them, and two statements per
# shared topic written for stancelab (the set a `--shared-topics` run uses by default).
BUNDLED = {"testing-conviction": "statements.jsonl", "stancelab": "statements_stancelab.jsonl",
           "topics": "statements_topics.jsonl"}  # fmt: skip
DEFAULT_SET = "testing-conviction"
TOPICS_SET = "topics"


def statements_path(path: Path | str | None = None) -> Path:
    """A statements file: `path`, or a bundled set by name (default: the paper's 19)."""
    name = str(path) if path else DEFAULT_SET
    if name in BUNDLED and not Path(name).exists():
        return Path(str(files("stancelab.conviction") / "data" / BUNDLED[name]))
    return Path(name)


def shared_topic_statements(
    path: Path | str | None, shared_topics: str, limit: int | None = None
) -> list[Statement]:
    """The statements a run uses: the chosen set (with `--shared-topics` and no set given, the
    `topics` set), selected by shared topic, then the first `limit` (of each selected topic
    when `--shared-topics` is set)."""
    if shared_topics.strip() and not path:
        path = TOPICS_SET
    hint = (
        f"Use --statements {TOPICS_SET}, which covers every key topic, or leave --statements unset."
    )
    statements = select_shared(load_statements(path), shared_topics, "statement",
                               f"'{path or DEFAULT_SET}'", hint)  # fmt: skip
    if shared_topics.strip():
        return limit_per_topic(statements, limit)
    return statements[:limit] if limit else statements


def load_statements(path: Path | str | None = None) -> list[Statement]:
    """Statements from JSONL or CSV (columns id, text, bias, topic), or a bundled set's name."""
    path = statements_path(path)
    if path.suffix != ".csv":
        return load_jsonl(path, Statement, id_of=lambda statement: statement.id)
    statements, seen = [], set()
    for line, row in read_csv_rows(path, ("id", "text", "bias")):
        try:
            statement = Statement.model_validate(
                {**row, "bias": int(row.get("bias") or 0), **_csv_tag(row)}
            )
        except (ValidationError, ValueError) as error:
            field = error.errors()[0]["loc"][0] if isinstance(error, ValidationError) else "bias"
            reason = error.errors()[0]["msg"] if isinstance(error, ValidationError) else str(error)
            raise DataFileError(path, line, str(field), reason) from error
        if statement.id in seen:
            raise DataFileError(path, line, "id", f"duplicate id '{statement.id}'")
        seen.add(statement.id)
        statements.append(statement)
    return statements


def _csv_tag(row: dict[str, str]) -> dict[str, object]:
    """A CSV row's optional tag columns: empty cells are no tag, orientation is an integer."""
    topic, orientation = (
        (row.get("shared_topic") or "").strip(),
        (row.get("orientation") or "").strip(),
    )
    return {"shared_topic": topic or None, "orientation": int(orientation) if orientation else None}


def scenario_samples(statements: list[Statement]) -> MemoryDataset:
    """One sample per (statement, scenario)."""
    return MemoryDataset(
        [
            Sample(
                id=f"{statement.id}__{scenario}",
                input=scenario_prompt(scenario, statement.text),
                metadata={
                    "statement_id": statement.id,
                    "statement": statement.text,
                    "bias": statement.bias,
                    "topic": statement.topic,
                    "scenario": scenario,
                    **statement.tag(),
                },
            )
            for statement in statements
            for scenario in SCENARIOS
        ],
        name="conviction",
    )
