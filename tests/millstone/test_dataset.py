"""Issue schema, the bundled set, and the 11 argument configurations."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from stancelab.core.errors import DataFileError
from stancelab.millstone.dataset import (
    MillstoneIssue,
    argument_configurations,
    issue_samples,
    load_issues,
)

EXPECTED_COUNTS = {
    "baseline": (0, 0),
    "one_sided_pro": (4, 0),
    "one_sided_con": (0, 4),
    "cc_pro_1": (3, 1),
    "cc_con_1": (1, 3),
    "cc_pro_2": (3, 1),
    "cc_con_2": (1, 3),
    "balanced_1": (2, 2),
    "balanced_2": (2, 2),
    "balanced_3": (2, 2),
    "balanced_4": (2, 2),
}


def _issue(n_args: int = 5, **changes: object) -> dict[str, object]:
    record: dict[str, object] = {
        "id": "test-issue",
        "topic": "Testing",
        "issue": "a test issue",
        "pro": "It is good",
        "con": "It is bad",
        "pro_arguments": [{"text": f"Pro argument {i}."} for i in range(n_args)],
        "con_arguments": [{"text": f"Con argument {i}."} for i in range(n_args)],
    }
    record.update(changes)
    return record


def _write(path: Path, records: list[object]) -> Path:
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n")
    return path


def test_bundled_set_meets_the_brief() -> None:
    issues = load_issues()
    assert len(issues) >= 24
    assert len({issue.topic for issue in issues}) >= 6
    for issue in issues:
        assert not issue.needs_rephrasing
        assert len(issue.pro_arguments) >= 4 and len(issue.con_arguments) >= 4
        for argument in issue.pro_arguments + issue.con_arguments:
            sentences = re.findall(r"[.!?](?:\s|$)", argument.text)
            assert 1 <= len(sentences) <= 3, argument.text


def test_eleven_configurations_with_their_argument_counts() -> None:
    issue = MillstoneIssue.model_validate(_issue())
    configs = argument_configurations(issue, seed=0)
    assert len(configs) == 11
    counts = {c.name: (len(c.pro_indices), len(c.con_indices)) for c in configs}
    assert counts == EXPECTED_COUNTS
    weights = {c.kind: c.weight for c in configs}
    assert weights == {"baseline": 0, "one_sided": 1, "clear_and_convincing": 2, "balanced": 3}


def test_draws_are_seeded_and_vary_with_the_seed() -> None:
    issue = MillstoneIssue.model_validate(_issue(n_args=8))
    assert argument_configurations(issue, seed=1) == argument_configurations(issue, seed=1)
    draws = {tuple(c.pro_indices for c in argument_configurations(issue, seed=s)) for s in range(5)}
    assert len(draws) > 1


def test_samples_cover_templates_by_configurations_with_seeded_order() -> None:
    issue = MillstoneIssue.model_validate(_issue())
    samples = issue_samples(issue, seed=3)
    assert len(samples) == 6 * 11
    assert len({s.id for s in samples}) == len(samples)
    again = issue_samples(issue, seed=3)
    assert [s.input for s in samples] == [s.input for s in again]
    orders = {s.metadata["argument_ids"] for s in samples if s.metadata["config"] == "balanced_1"}
    assert len(orders) > 1  # each prompt shuffles its arguments separately
    baseline = next(s for s in samples if s.metadata["config"] == "baseline")
    assert "Document" not in str(baseline.input)


def test_bad_field_names_file_line_and_field(tmp_path: Path) -> None:
    path = _write(tmp_path / "issues.jsonl", [_issue(), _issue(id="second", topic="")])
    with pytest.raises(DataFileError) as caught:
        load_issues(path)
    error = caught.value
    assert (error.path, error.line, error.field) == (path, 2, "topic")
    assert "issues.jsonl, line 2, field 'topic'" in str(error)


@pytest.mark.parametrize(
    ("second_record", "field", "reason"),
    [
        ("{not json", None, "invalid JSON"),
        ("[1, 2]", None, "JSON object"),
        (_issue(), "id", "duplicate id"),
        (_issue(id="x", n_args=2), "pro_arguments", "at least 3"),
        (_issue(id="x", pro=None), None, "all of issue, pro and con"),
        (_issue(id="x", extra_field=1), "extra_field", "Extra inputs"),
        (_issue(id="x", pro_arguments=[{"text": "  "}] * 3), "pro_arguments.0.text", "blank"),
    ],
)
def test_malformed_lines_fail_whole_file(
    tmp_path: Path, second_record: object, field: str | None, reason: str
) -> None:
    path = _write(tmp_path / "bad.jsonl", [_issue(), second_record])
    with pytest.raises(DataFileError) as caught:
        load_issues(path)
    assert caught.value.line == 2
    assert caught.value.field == field
    assert reason in str(caught.value)


def test_empty_and_non_utf8_files_fail_clearly(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(DataFileError, match="no records"):
        load_issues(empty)
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(json.dumps(_issue()).encode() + b"\n" + "caf\xe9".encode("latin-1"))
    with pytest.raises(DataFileError, match=r"line 2.*UTF-8"):
        load_issues(latin)


def test_question_only_issue_needs_rephrasing() -> None:
    issue = MillstoneIssue.model_validate(
        _issue(issue=None, pro=None, con=None, question="Should tests be mandatory?")
    )
    assert issue.needs_rephrasing
    with pytest.raises(Exception, match="rephras"):
        issue_samples(issue)
