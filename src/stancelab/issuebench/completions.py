"""The authors' raw completions release (IssueBench_Completions) as stancelab responses.

One row per model response, in the authors' column names (as in
`stance_annotations_expost.csv`): `topic_id` (issue), `topic_polarity` (framing),
`template_id`, `response_text`, the classifier's output as `eval_label` (parsed) and/or
`eval_text` (raw, read with the authors' rule: `authors_label`), and optionally `common_id`
(`<model>.<template>.<issue>-<framing>.<call>`), `call_idx`, `response_model` and
`topic_neutral` (the issue phrase). The model is taken from the data: `response_model`, else
the model part of `common_id` (the authors' short names mapped to their released names), and
only where a file has neither, from the file's name without a Hugging Face shard suffix
(`grok.3.mini-00000-of-00002` is `grok.3.mini`; a bare split shard such as
`train-00000-of-00023` is named by its folder). CSV, JSONL or Parquet (read one batch of rows
at a time); response texts are checked but not kept, so a 3.18M-row model file fits in memory.
Every row is validated: a bad one fails with its file, line and field.
"""

from __future__ import annotations

import csv
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pandas as pd
import pyarrow.parquet as pq
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from stancelab.core.data.files import csv_field_limit, invalid_record
from stancelab.core.errors import DataFileError, StancelabError
from stancelab.issuebench.dataset import authors_issue_tags, with_topic_tags
from stancelab.issuebench.labels import authors_label, parse_label
from stancelab.issuebench.results import RESPONSE_COLUMNS

SUFFIXES = (".csv", ".jsonl", ".parquet")
PARQUET_BATCH_ROWS = 10_000
# The model part of the authors' `common_id` -> the model's name in their released tables
# (pairs as they stand in `stance_annotations_expost.csv`).
AUTHORS_MODEL_NAMES = {
    "llama-31-8b": "Llama-3.1-8B-Instruct", "llama-31-70b": "Llama-3.1-70B-Instruct",
    "qwen25-7b": "Qwen-2.5-7B-Instruct", "qwen25-14b": "Qwen-2.5-14B-Instruct",
    "qwen25-72b": "Qwen-2.5-72B-Instruct", "olmo2-7b": "OLMo-2-1124-7B-Instruct",
    "olmo2-13b": "OLMo-2-1124-13B-Instruct", "gpt4o": "gpt-4o-mini-2024-07-18",
    "deepseek": "deepseek-chat-v3-0324", "grok": "grok-3-mini",
}  # fmt: skip
_SHARD_SUFFIX = re.compile(r"-\d{5}-of-\d{5}$")
_SPLIT_NAMES = {"train", "test", "validation", "data", ""}


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
        """The authors' parsed label where given ("PARSE ERROR" is unparsed), else the raw
        classifier reply read with the authors' rule."""
        return (
            parse_label(self.eval_label) if self.eval_label else authors_label(self.eval_text or "")
        )

    def model_in_data(self) -> str | None:
        """`response_model`, else the model part of `common_id` (None where neither says)."""
        if self.response_model:
            return self.response_model
        suffix = f".{self.template_id}.{self.topic_id}-{self.topic_polarity}.{self.call_idx}"
        if self.common_id and self.common_id.endswith(suffix) and len(self.common_id) > len(suffix):
            short = self.common_id[: -len(suffix)]
            return AUTHORS_MODEL_NAMES.get(short, short)
        return None


def model_from_path(path: Path) -> str:
    """A model name from a file that names none in its rows: the file name without a Hugging
    Face shard suffix, or the folder's name for a bare split shard (`train-00000-of-00023`)."""
    stem = _SHARD_SUFFIX.sub("", path.stem)
    if stem.lower() not in _SPLIT_NAMES:
        return stem
    folders = [part for part in reversed(path.parent.parts) if part.lower() not in _SPLIT_NAMES]
    return folders[0] if folders else stem


def _csv_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    with csv_field_limit(sys.maxsize), path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        try:
            for row in reader:
                yield reader.line_num, {k: (v if v != "" else None) for k, v in row.items()}
        except csv.Error as error:
            raise DataFileError(
                path, reader.line_num + 1, None, f"malformed CSV: {error}"
            ) from error


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
    """Rows one batch at a time (a row's number counts from 1 over the whole file)."""
    number = 0
    for batch in pq.ParquetFile(path).iter_batches(batch_size=PARQUET_BATCH_ROWS):
        for record in batch.to_pylist():
            number += 1
            yield number, record


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
    fallback = model_from_path(path)
    for line, record in _rows(path):
        row = _validated(path, line, record)
        rows.append((row.model_in_data() or fallback, row.topic_id, row.topic_neutral or row.topic_id,
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
    frame = pd.concat(
        [read_completions(path) for path in completion_files(source)], ignore_index=True
    )
    keys = ["model", "issue_id", "framing", "template_id", "call"]
    frame = frame.drop_duplicates(subset=keys, keep="last").reset_index(drop=True)
    return with_topic_tags(frame, authors_issue_tags())


__all__ = ["Completion", "authors_label", "load_completions", "model_from_path", "read_completions"]
