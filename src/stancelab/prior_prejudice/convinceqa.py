"""ConvinceQA in its published format (the authors' Hugging Face release, gated: download it
yourself). The release is Parquet (`data/test-00000-of-00001.parquet`, the split the paper's
experiments run on), one row per claim: `category, claim, supporting, strongly_supporting,
opposing, strongly_opposing` (test split: 1,264 claims). Read from that Parquet file, or from
CSV or JSON Lines with the same columns; every row is validated and a bad one names the file,
line (for Parquet: the row, counted from 1) and field. The release has no negations.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from stancelab.core.data.files import invalid_record, load_jsonl, read_csv_rows
from stancelab.core.errors import DataFileError

COLUMNS = (
    "category",
    "claim",
    "supporting",
    "strongly_supporting",
    "opposing",
    "strongly_opposing",
)
ARGUMENT_COLUMNS = {
    ("supporting", "standard"): "supporting",
    ("supporting", "strong"): "strongly_supporting",
    ("opposing", "standard"): "opposing",
    ("opposing", "strong"): "strongly_opposing",
}
CATEGORY_NAMES = {
    "subjective": "subjective",
    "harmful": "harmful",
    "harm": "harmful",
    "misinformation": "misinformation",
    "misinfo": "misinformation",
}
SOURCE = "ConvinceQA"
PARQUET_SUFFIXES = (".parquet", ".pq")


class ConvinceQARow(BaseModel):
    """One ConvinceQA row; an empty argument cell means the argument is absent."""

    model_config = ConfigDict(extra="ignore")
    category: str
    claim: str
    supporting: str | None = None
    strongly_supporting: str | None = None
    opposing: str | None = None
    strongly_opposing: str | None = None

    @field_validator("category")
    @classmethod
    def _known_category(cls, value: str) -> str:
        name = CATEGORY_NAMES.get(value.strip().lower())
        if name is None:
            raise ValueError(
                f"unknown category {value!r} (expected one of {sorted(CATEGORY_NAMES)})"
            )
        return name

    @field_validator("claim")
    @classmethod
    def _claim_text(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the claim is empty")
        return value.strip()

    @field_validator("supporting", "strongly_supporting", "opposing", "strongly_opposing")
    @classmethod
    def _argument_text(cls, value: str | None) -> str | None:
        return value.strip() if isinstance(value, str) and value.strip() else None


def is_convinceqa(path: Path) -> bool:
    """Whether a claims file is in ConvinceQA's format (Parquet or CSV, or JSON Lines with its
    columns)."""
    if path.suffix.lower() in (".csv", *PARQUET_SUFFIXES):
        return True
    try:
        with path.open(encoding="utf-8") as handle:
            first = next((line for line in handle if line.strip()), "")
        record = json.loads(first) if first else {}
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    return isinstance(record, dict) and "supporting" in record and "arguments" not in record


def _validate(path: Path, line: int, raw: dict[str, Any]) -> ConvinceQARow:
    try:
        return ConvinceQARow.model_validate(raw)
    except ValidationError as error:
        raise invalid_record(path, line, error) from error


def _parquet_rows(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """(row number from 1, row) pairs of a Parquet file with ConvinceQA's columns; a missing
    or unreadable file, a missing column or no rows is a DataFileError. Null cells are None."""
    if not path.exists():
        raise DataFileError(path, None, None, "file does not exist")
    try:
        frame = pd.read_parquet(path)
    except (OSError, ValueError, pa.ArrowException) as error:
        raise DataFileError(path, None, None, f"not a readable Parquet file ({error})") from error
    missing = [column for column in COLUMNS if column not in frame.columns]
    if missing:
        raise DataFileError(path, None, missing[0], "missing column")
    if frame.empty:
        raise DataFileError(path, None, None, "file holds no rows")
    cells = frame[list(COLUMNS)].astype(object)
    records = cells.where(cells.notna(), None).to_dict("records")
    return [(number, record) for number, record in enumerate(records, start=1)]


def read_rows(path: Path | str) -> list[ConvinceQARow]:
    """The validated rows of a ConvinceQA file (Parquet, CSV or JSON Lines)."""
    path = Path(path)
    if path.suffix.lower() in PARQUET_SUFFIXES:
        return [_validate(path, number, row) for number, row in _parquet_rows(path)]
    if path.suffix.lower() == ".csv":
        return [_validate(path, line, row) for line, row in read_csv_rows(path, COLUMNS)]
    return load_jsonl(path, ConvinceQARow)


def as_claim_records(rows: list[ConvinceQARow]) -> list[dict[str, Any]]:
    """Rows as stancelab claim records: ids `<category>-<n>` numbered in file order, each
    argument cell an argument written by ConvinceQA, and no negation (the release has none)."""
    counts: dict[str, int] = {}
    records = []
    for row in rows:
        counts[row.category] = counts.get(row.category, 0) + 1
        arguments: dict[str, dict[str, dict[str, Any]]] = {}
        for (stance, intensity), column in ARGUMENT_COLUMNS.items():
            text = getattr(row, column)
            if text is not None:
                arguments.setdefault(stance, {})[intensity] = {"text": text, "writer": SOURCE}
        records.append({"id": f"{row.category}-{counts[row.category]:04d}", "category": row.category,
                        "claim": row.claim, "arguments": arguments})  # fmt: skip
    return records
