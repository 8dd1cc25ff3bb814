"""Every loader against the same bad files: one clear error naming file, line and field,
and nothing returned (a file loads whole or not at all)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from stancelab.conviction.dataset import load_statements
from stancelab.core.data.files import MAX_LINE_CHARS
from stancelab.core.errors import DataFileError
from stancelab.issuebench.dataset import load_issues as load_issuebench_issues
from stancelab.issuebench.dataset import load_templates
from stancelab.llm_bias_bench.dataset import load_topics
from stancelab.millstone.corpus import load_issues as load_millstone_issues
from stancelab.prior_prejudice.dataset import load_claims

SRC = Path(__file__).resolve().parents[2] / "src" / "stancelab"


def _first_record(relative: str) -> dict:
    return json.loads((SRC / relative).read_text().splitlines()[0])


# loader, a valid record, a required field, a text field
LOADERS: dict[str, tuple[Callable[[Path], object], dict, str, str]] = {
    "millstone issues": (load_millstone_issues, _first_record("millstone/data/issues.jsonl"), "topic", "topic"),
    "llm-bias-bench topics": (load_topics, _first_record("llm_bias_bench/data/topics.jsonl"), "claim", "claim"),
    "issuebench issues": (load_issuebench_issues, _first_record("issuebench/data/issues.jsonl"), "neutral", "pro"),
    "issuebench templates": (load_templates, _first_record("issuebench/data/templates.jsonl"), "text", "text"),
    "prior-prejudice claims": (load_claims, _first_record("prior_prejudice/data/claims.jsonl"), "claim", "claim"),
    "conviction statements": (load_statements, _first_record("conviction/data/statements.jsonl"), "text", "text"),
}  # fmt: skip


def _lines(valid: dict, text_field: str, case: str, required: str) -> bytes:
    record = dict(valid)
    if case == "empty":
        return b""
    if case == "missing field":
        del record[required]
    if case == "wrong type":
        record[required] = 12345
    if case == "wrong encoding":
        return (
            json.dumps({**record, text_field: record[text_field] + " café"}, ensure_ascii=False)
            + "\n"
        ).encode("latin-1")
    if case == "huge line":
        record[text_field] = "x" * (MAX_LINE_CHARS + 10)
    line = json.dumps(record) + "\n"
    if case == "duplicate id":
        return (line + line).encode()
    good = json.dumps(dict(valid, id=valid["id"] + "-0")) + "\n"
    return (good + line).encode()  # the bad record is on line 2


CASES = {  # case -> (line of the error, field named)
    "empty": (None, None),
    "missing field": (2, "required"),
    "wrong type": (2, "required"),
    "wrong encoding": (1, None),
    "duplicate id": (2, "id"),
    "huge line": (2, None),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("name", list(LOADERS))
def test_bad_file_gives_one_error_naming_file_line_and_field(
    name: str, case: str, tmp_path: Path
) -> None:
    load, record, required, text_field = LOADERS[name]
    path = tmp_path / f"{case.replace(' ', '_')}.jsonl"
    path.write_bytes(_lines(record, text_field, case, required))
    with pytest.raises(DataFileError) as caught:
        load(path)
    line, field = CASES[case]
    error = caught.value
    assert error.path == path and path.name in str(error)
    assert error.line == line
    if field == "required":
        assert error.field is not None and error.field.split(".")[0] == required
        assert f"field '{error.field}'" in str(error)
    elif field is not None:
        assert error.field == field


def test_template_without_its_placeholder_is_named(tmp_path: Path) -> None:
    path = tmp_path / "templates.jsonl"
    path.write_text(
        '{"id": "t1", "text": "Write about [ISSUE]."}\n{"id": "t2", "text": "Write about {issue}."}\n'
    )
    with pytest.raises(DataFileError, match=r"line 2") as caught:
        load_templates(path)
    assert "[ISSUE]" in caught.value.reason


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    for load, *_rest in LOADERS.values():
        with pytest.raises(DataFileError, match="does not exist"):
            load(tmp_path / "absent.jsonl")


CSV_LOADERS: dict[str, tuple[Callable[[Path], object], list[str], list[str]]] = {
    "conviction statements (CSV)": (load_statements, ["id", "text", "bias", "topic"],
                                    ["free-trade", "Free trade helps workers.", "1", "trade"]),
    "issuebench issues (authors' CSV)": (load_issuebench_issues, ["topic_id", "topic_neutral", "topic_pro", "topic_con"],
                                         ["7", "nuclear energy", "nuclear energy being good", "nuclear energy being bad"]),
    "issuebench templates (authors' CSV)": (load_templates, ["id", "annot1_template"], ["t1", "Write about X."]),
}  # fmt: skip
CSV_CASES = {  # case -> (line of the error, field named)
    "empty": (None, None),
    "missing column": (1, "header"),
    "wrong encoding": (3, None),
    "duplicate id": (3, "id"),
    "huge line": (3, None),
}


def _csv(header: list[str], row: list[str], case: str) -> bytes:
    import csv
    import io

    if case == "empty":
        return b""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(header[1:] if case == "missing column" else header)
    second = list(row)
    if case == "wrong encoding":
        second[-1] += " café"
    if case == "huge line":
        second[-1] += "x" * 200_000
    first = list(row) if case == "duplicate id" else [f"{row[0]}-0", *row[1:]]
    writer.writerow(first if case != "missing column" else first[1:])
    writer.writerow(second if case != "missing column" else second[1:])
    return buffer.getvalue().encode("latin-1" if case == "wrong encoding" else "utf-8")


@pytest.mark.parametrize("case", list(CSV_CASES))
@pytest.mark.parametrize("name", list(CSV_LOADERS))
def test_bad_csv_gives_one_error_naming_file_line_and_field(
    name: str, case: str, tmp_path: Path
) -> None:
    load, header, row = CSV_LOADERS[name]
    path = tmp_path / f"{case.replace(' ', '_')}.csv"
    path.write_bytes(_csv(header, row, case))
    with pytest.raises(DataFileError) as caught:
        load(path)
    line, field = CSV_CASES[case]
    assert caught.value.path == path and caught.value.line == line
    if field == "header":
        assert caught.value.field == header[0] and "missing column" in caught.value.reason
    elif field is not None:
        assert caught.value.field == field


def test_an_oversized_csv_field_is_refused_whatever_limit_another_reader_set(
    tmp_path: Path,
) -> None:
    """csv's field limit is process-wide; a reader that raised it (IssueBench's completions)
    must not let an oversized field through here, nor leave its own limit behind."""
    import csv
    import sys

    from stancelab.core.data.files import read_csv_rows

    path = tmp_path / "big.csv"
    path.write_text("id,text\na," + "x" * 200_000 + "\n")
    previous = csv.field_size_limit(sys.maxsize)
    try:
        with pytest.raises(DataFileError, match="malformed CSV"):
            list(read_csv_rows(path, ["id", "text"]))
        assert csv.field_size_limit() == sys.maxsize
    finally:
        csv.field_size_limit(previous)
