"""Every loader against the same bad files: one clear error naming file, line and field,
and nothing returned (a file loads whole or not at all)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from stancelab.conviction.dataset import load_statements
from stancelab.core.data import MAX_LINE_CHARS
from stancelab.core.errors import DataFileError
from stancelab.issuebench.dataset import load_issues as load_issuebench_issues
from stancelab.issuebench.dataset import load_templates
from stancelab.llm_bias_bench.dataset import load_topics
from stancelab.millstone.dataset import load_issues as load_millstone_issues
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
        return (json.dumps({**record, text_field: record[text_field] + " café"}, ensure_ascii=False) + "\n").encode("latin-1")
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
def test_bad_file_gives_one_error_naming_file_line_and_field(name: str, case: str, tmp_path: Path) -> None:
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
    path.write_text('{"id": "t1", "text": "Write about [ISSUE]."}\n{"id": "t2", "text": "Write about {issue}."}\n')
    with pytest.raises(DataFileError, match=r"line 2") as caught:
        load_templates(path)
    assert "[ISSUE]" in caught.value.reason


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    for load, *_rest in LOADERS.values():
        with pytest.raises(DataFileError, match="does not exist"):
            load(tmp_path / "absent.jsonl")
