"""Validated loading of JSON Lines data files.

Every record is checked with a pydantic model. A bad file raises
:class:`DataFileError` naming the file, the 1-based line, the field and the
reason, and nothing is returned: a file loads whole or not at all.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from stancelab.core.errors import DataFileError, TaskArgumentError

RecordT = TypeVar("RecordT", bound=BaseModel)
MAX_LINE_CHARS = 1_000_000  # one record; far above any real argument, template or topic
MAX_CSV_FIELD_CHARS = 131_072  # the csv module's own default field limit


def _field_of(error: ValidationError) -> tuple[str | None, str]:
    first = error.errors()[0]
    location = ".".join(str(part) for part in first.get("loc", ())) or None
    return location, first.get("msg", str(error))


def invalid_record(path: Path, line: int | None, error: ValidationError) -> DataFileError:
    """The error for a record pydantic rejected: file, line, its first field and reason."""
    field, reason = _field_of(error)
    return DataFileError(path, line, field, reason)


def _read_text(path: Path) -> str:
    if not path.exists():
        raise DataFileError(path, None, None, "file does not exist")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        line = path.read_bytes()[: error.start].count(b"\n") + 1
        raise DataFileError(path, line, None, "file is not valid UTF-8") from error


def _read_lines(path: Path) -> list[str]:
    return _read_text(path).splitlines()


@contextmanager
def csv_field_limit(chars: int) -> Iterator[None]:
    """Set the csv module's field-size limit, which is process-wide, for one read only."""
    previous = csv.field_size_limit(chars)
    try:
        yield
    finally:
        csv.field_size_limit(previous)


def read_csv_rows(
    path: Path | str, required: Iterable[str]
) -> Iterator[tuple[int, dict[str, str]]]:
    """(line number, row) pairs of a UTF-8 CSV file with the `required` columns. A missing
    file or column, bad encoding, a malformed or oversized row, or no rows at all is a
    DataFileError naming the file and line."""
    path = Path(path)
    text = _read_text(path)
    if not text.strip():
        raise DataFileError(path, None, None, "file is empty")
    with csv_field_limit(MAX_CSV_FIELD_CHARS):
        yield from _csv_rows(path, text, required)


def _csv_rows(
    path: Path, text: str, required: Iterable[str]
) -> Iterator[tuple[int, dict[str, str]]]:
    reader = csv.DictReader(io.StringIO(text, newline=""))
    try:
        missing = sorted(set(required) - set(reader.fieldnames or []))
        if missing:
            raise DataFileError(path, 1, missing[0], "missing column")
        rows = 0
        for row in reader:
            if len(str(row)) > MAX_LINE_CHARS:
                raise DataFileError(
                    path, reader.line_num, None, f"row is longer than {MAX_LINE_CHARS:,} characters"
                )
            rows += 1
            yield reader.line_num, row
    except csv.Error as error:  # raised while reading the row after the last one read
        raise DataFileError(path, reader.line_num + 1, None, f"malformed CSV: {error}") from error
    if rows == 0:
        raise DataFileError(path, None, None, "file holds no rows")


def load_jsonl(
    path: Path | str,
    record_type: type[RecordT],
    id_of: Callable[[RecordT], str] | None = None,
) -> list[RecordT]:
    """Load and validate every record of a JSONL file; blank lines are skipped."""
    path = Path(path)
    records: list[RecordT] = []
    first_line_of_id: dict[str, int] = {}
    for line_number, line in enumerate(_read_lines(path), start=1):
        if not line.strip():
            continue
        if len(line) > MAX_LINE_CHARS:
            raise DataFileError(
                path,
                line_number,
                None,
                f"line has {len(line):,} characters (limit {MAX_LINE_CHARS:,})",
            )
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as error:
            raise DataFileError(path, line_number, None, f"invalid JSON: {error.msg}") from error
        if not isinstance(raw, dict):
            raise DataFileError(path, line_number, None, "each line must be a JSON object")
        try:
            record = record_type.model_validate(raw)
        except ValidationError as error:
            field, reason = _field_of(error)
            raise DataFileError(path, line_number, field, reason) from error
        if id_of is not None:
            record_id = id_of(record)
            if record_id in first_line_of_id:
                raise DataFileError(
                    path,
                    line_number,
                    "id",
                    f"duplicate id '{record_id}' (first seen on line {first_line_of_id[record_id]})",
                )
            first_line_of_id[record_id] = line_number
        records.append(record)
    if not records:
        raise DataFileError(path, None, None, "file holds no records")
    return records


def write_jsonl(path: Path | str, records: Iterable[BaseModel]) -> Path:
    """Write records as JSON Lines (excluding unset optional fields)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(record.model_dump_json(exclude_none=True) + "\n")
    return path


def parse_subset(
    value: str | Iterable[str] | None, allowed: tuple[str, ...], what: str
) -> tuple[str, ...]:
    """`a,b` (or a list) -> the named members of `allowed` (case aside), in its order; all when
    None. Else an error naming `what`, the bad value and the allowed ones."""
    if value is None:
        return allowed
    names = value.split(",") if isinstance(value, str) else list(value)
    canonical = {item.casefold(): item for item in allowed}
    chosen = {name.strip() for name in names if name.strip()}
    unknown = sorted(name for name in chosen if name.casefold() not in canonical)
    if unknown or not chosen:
        got = ", ".join(repr(name) for name in unknown) or "none"
        raise TaskArgumentError(f"{what} must be among {', '.join(allowed)}; got {got}.")
    named = {canonical[name.casefold()] for name in chosen}
    return tuple(item for item in allowed if item in named)
