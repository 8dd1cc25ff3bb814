"""The authors' raw completions release (IssueBench_Completions) as stancelab responses.

One row per model response, in the authors' column names (as in
`stance_annotations_expost.csv`): `topic_id` (issue), `topic_polarity` (framing),
`template_id`, `response_text`, the classifier's output as `eval_label` (parsed) and/or
`eval_text` (raw, parsed here with the same reader as our runs), and optionally `common_id`
(prompt id), `call_idx`, `response_model` (else the file's name) and `topic_neutral` (the
issue phrase). CSV, JSONL or Parquet; files are streamed and response texts are checked but
not kept, so a 3.18M-row model file fits in memory. Every row is validated: a bad one fails
with its file, line and field.
"""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from stancelab.core.data import csv_field_limit, invalid_record
from stancelab.core.errors import DataFileError, StancelabError
from stancelab.issuebench.dataset import authors_issue_tags, with_topic_tags
from stancelab.issuebench.labels import parse_label
from stancelab.issuebench.results import RESPONSE_COLUMNS

SUFFIXES = (".csv", ".jsonl", ".parquet")


class Completion(BaseModel):
    """One released response with its stance label."""

    model_config = ConfigDict(extra="ignore", coerce_numbers_to_str=True)

    common_id: str | None = None
    topic_id: str = Field(min_length=1)
    topic_polarity: Literal["neutral", "pro", "con"]
    template_id: str = Field(min_length=1)
    response_text: str
    eval_label: str | None = None
    eval_text: str | None = None
    call_idx: int = 0
    response_model: str | None = None
    topic_neutral: str | None = None

    @model_validator(mode="after")
    def _has_a_label(self) -> Completion:
        if not (self.eval_label or self.eval_text is not None):
            raise ValueError("needs the classifier's output: eval_label or eval_text")
        return self

    def label(self) -> str:
        """The authors' parsed label where given ("PARSE ERROR" is unparsed), else our reading
        of the raw classifier reply."""
        return parse_label(self.eval_label) if self.eval_label else parse_label(self.eval_text or "")


def _csv_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    with csv_field_limit(sys.maxsize), path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        try:
            for row in reader:
                yield reader.line_num, {k: (v if v != "" else None) for k, v in row.items()}
        except csv.Error as error:
            raise DataFileError(path, reader.line_num + 1, None, f"malformed CSV: {error}") from error


def _jsonl_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise DataFileError(path, number, None, f"not JSON: {error.msg}") from error
            if not isinstance(record, dict):
                raise DataFileError(path, number, None, "expected a JSON object")
            yield number, record


def _parquet_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    frame = pd.read_parquet(path)
    yield from enumerate(frame.to_dict("records"), start=1)


def _rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    readers = {".csv": _csv_rows, ".jsonl": _jsonl_rows, ".parquet": _parquet_rows}
    if path.suffix not in readers:
        raise DataFileError(path, None, None, f"expected one of {', '.join(SUFFIXES)}")
    return readers[path.suffix](path)


def _validated(path: Path, line: int, record: dict[str, Any]) -> Completion:
    try:
        return Completion.model_validate(record)
    except ValidationError as error:
        raise invalid_record(path, line, error) from error


def read_completions(path: Path) -> pd.DataFrame:
    """One file's responses as a stancelab responses frame (text left out)."""
    rows = []
    for line, record in _rows(path):
        row = _validated(path, line, record)
        rows.append((row.response_model or path.stem, row.topic_id, row.topic_neutral or row.topic_id,
                     row.topic_polarity, row.template_id, row.call_idx, row.label()))  # fmt: skip
    if not rows:
        raise DataFileError(path, None, None, "file holds no rows")
    return pd.DataFrame(rows, columns=RESPONSE_COLUMNS)


def completion_files(source: Path) -> list[Path]:
    """`source` itself, or the CSV / JSONL / Parquet files under it."""
    if source.is_file():
        return [source]
    files = sorted(p for p in source.rglob("*") if p.suffix in SUFFIXES) if source.is_dir() else []
    if not files:
        raise StancelabError(f"No completions ({', '.join(SUFFIXES)}) at {source}")
    return files


def load_completions(source: Path) -> pd.DataFrame:
    """Every released response under `source`; a prompt and call given twice counts once. Each
    issue carries its shared topic (`topic_map_authors.csv`)."""
    frame = pd.concat([read_completions(path) for path in completion_files(source)], ignore_index=True)
    keys = ["model", "issue_id", "framing", "template_id", "call"]
    frame = frame.drop_duplicates(subset=keys, keep="last").reset_index(drop=True)
    return with_topic_tags(frame, authors_issue_tags())


__all__ = ["Completion", "load_completions", "read_completions"]
