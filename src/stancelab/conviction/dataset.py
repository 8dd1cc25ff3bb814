"""Statements with a bias direction: schema and loaders (JSONL or CSV)."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import Literal

from inspect_ai.dataset import MemoryDataset, Sample
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from stancelab.conviction.prompts import SCENARIOS, scenario_prompt
from stancelab.core.data import load_jsonl, read_csv_rows
from stancelab.core.errors import DataFileError


class Statement(BaseModel):
    """A statement; `bias` +1 when agreeing moves right, -1 when it moves left."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    text: str = Field(min_length=1)
    bias: Literal[1, -1]
    topic: str = "economic"


# Bundled sets: the paper's 19 economic Political Compass statements (appendix G, the
# default) and the 20 statements written for stancelab before it had them.
BUNDLED = {"testing-conviction": "statements.jsonl", "stancelab": "statements_stancelab.jsonl"}
DEFAULT_SET = "testing-conviction"


def statements_path(path: Path | str | None = None) -> Path:
    """A statements file: `path`, or a bundled set by name (default: the paper's 19)."""
    name = str(path) if path else DEFAULT_SET
    if name in BUNDLED and not Path(name).exists():
        return Path(str(files("stancelab.conviction") / "data" / BUNDLED[name]))
    return Path(name)


def load_statements(path: Path | str | None = None) -> list[Statement]:
    """Statements from JSONL or CSV (columns id, text, bias, topic), or a bundled set's name."""
    path = statements_path(path)
    if path.suffix != ".csv":
        return load_jsonl(path, Statement, id_of=lambda statement: statement.id)
    statements, seen = [], set()
    for line, row in read_csv_rows(path, ("id", "text", "bias")):
        try:
            statement = Statement.model_validate({**row, "bias": int(row.get("bias") or 0)})
        except (ValidationError, ValueError) as error:
            field = error.errors()[0]["loc"][0] if isinstance(error, ValidationError) else "bias"
            reason = error.errors()[0]["msg"] if isinstance(error, ValidationError) else str(error)
            raise DataFileError(path, line, str(field), reason) from error
        if statement.id in seen:
            raise DataFileError(path, line, "id", f"duplicate id '{statement.id}'")
        seen.add(statement.id)
        statements.append(statement)
    return statements


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
                },
            )
            for statement in statements
            for scenario in SCENARIOS
        ],
        name="conviction",
    )
