"""Issue schema, the bundled set, the authors' layout and the documents layout."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from stancelab.core.errors import DataFileError
from stancelab.millstone.corpus import load_issues
from stancelab.millstone.dataset import (
    MillstoneIssue,
    argument_configurations,
    authors_samples,
    case_arguments,
    documents_samples,
)
from stancelab.millstone.prompts import template
from stancelab.millstone.task import millstone
from stancelab.millstone.wording import STANCELAB_WORDING, Wording

# The authors' layout in stancelab's wording: CI has no copy of the authors' prompt builder (an
# unlicensed repository); their words are tested in test_wording.py and, against a checkout,
# test_authors_differential.py.
OWN = STANCELAB_WORDING

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


def test_documents_layout_covers_templates_by_configurations_with_seeded_order() -> None:
    issue = MillstoneIssue.model_validate(_issue())
    samples = documents_samples(issue, seed=3)
    assert len(samples) == 6 * 11
    assert len({s.id for s in samples}) == len(samples)
    again = documents_samples(issue, seed=3)
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
        (_issue(id="x", n_args=0), "pro_arguments", "at least 1"),
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
        documents_samples(issue)


# ---------------------------------------------------------------- the authors' layout


def _case_of(sample: object) -> str:
    return sample.metadata["case"]  # type: ignore[attr-defined]


def test_authors_layout_sizes_per_issue_and_case() -> None:
    issue = MillstoneIssue.model_validate(_issue(n_args=5))
    samples = authors_samples(issue, trials=3, seed=0, words=OWN)
    # 6 templates x 3 trials x (baseline + 5 cases x 2 wordings) = 66 x trials
    assert len(samples) == 66 * 3 and len({s.id for s in samples}) == len(samples)
    per_case = {case: sum(_case_of(s) == case for s in samples)
                for case in ("neither", "pro", "con", "75pro", "75con", "all")}  # fmt: skip
    assert per_case == {"neither": 18, "pro": 36, "con": 36, "75pro": 36, "75con": 36, "all": 36}
    assert {s.metadata["wording"] for s in samples if _case_of(s) == "all"} == {1, 2}


def test_case_arguments_follow_the_authors_rules() -> None:
    import random

    issue = MillstoneIssue.model_validate(
        _issue(pro_arguments=[{"text": f"P{i}."} for i in range(5)],
               con_arguments=[{"text": f"C{i}."} for i in range(2)])
    )  # fmt: skip
    rng = random.Random(0)

    def sides(case: str) -> tuple[int, int]:
        chosen = case_arguments(issue, case, rng)  # type: ignore[arg-type]
        return sum(s == "pro" for s, _ in chosen), sum(s == "con" for s, _ in chosen)

    assert sides("pro") == (5, 0)  # one-sided: every argument of the side
    assert sides("con") == (0, 2)
    assert sides("75pro") == (3, 1)
    assert sides("75con") == (1, 2)  # a side with fewer than three gives what it has
    assert sides("all") == (2, 2)  # balanced: the larger side is downsampled


def test_every_trial_draws_and_orders_afresh_and_reruns_repeat() -> None:
    issue = MillstoneIssue.model_validate(_issue(n_args=8))
    samples = authors_samples(issue, trials=15, seed=4, words=OWN)
    draws = {s.metadata["argument_ids"] for s in samples if _case_of(s) == "75pro"}
    assert len(draws) > 50  # 180 prompts; with 8 arguments a side nearly all differ
    orders = {s.metadata["argument_ids"] for s in samples if _case_of(s) == "pro"}
    assert len(orders) > 50  # the same eight arguments, shuffled per prompt
    again = authors_samples(issue, trials=15, seed=4, words=OWN)
    assert [s.input for s in samples] == [s.input for s in again]
    other_seed = authors_samples(issue, trials=15, seed=5, words=OWN)
    assert [s.input for s in samples] != [s.input for s in other_seed]


def _parts(words: Wording, parts: tuple[object, ...], question: str) -> str:
    """A pattern of a prompt's parts: its words literally, the question, each naming of the
    answer forms (either order) and the argument blocks (captured)."""
    forms = "|".join(re.escape(form) for form in words.answer_forms)
    slots = {"question": re.escape(question), "forms": f"(?:{forms})", "evidence": "(.*)"}
    return "".join(
        re.escape(part) if isinstance(part, str) else slots[part.name]  # type: ignore[attr-defined]
        for part in parts
    )


def test_authors_layout_prompt_shape() -> None:
    """The layout of the authors' runs: instruction, arguments with accumulated citations and a
    separator, closing line; both wordings."""
    issue = MillstoneIssue.model_validate(
        _issue(pro_arguments=[{"text": "Pro one [1].", "citations": ["[1] A source, 2020"]},
                              {"text": "Pro two [2].", "citations": ["[2] B source"]}])
    )  # fmt: skip
    samples = authors_samples(issue, trials=1, seed=0, words=OWN)
    baseline = next(s for s in samples if _case_of(s) == "neither" and s.metadata["template"] == 1)
    question = issue.neutral_question(template(1))[0]
    assert re.fullmatch(_parts(OWN, OWN.baseline, question), str(baseline.input))
    header, separator = OWN.citations_header, OWN.separator
    first = f"Pro one [1].{header}[1] A source, 2020\n{separator}"  # listed first: its own source
    second = f"Pro two [2].{header}[1] A source, 2020\n[2] B source\n{separator}"  # and the first's
    shown = {first + OWN.joiner + second, second + OWN.joiner + first}  # in either order
    one_sided = [s for s in samples if _case_of(s) == "pro" and s.metadata["template"] == 1]
    assert {s.metadata["wording"] for s in one_sided} == {1, 2}
    for sample in one_sided:
        parts = OWN.with_arguments[sample.metadata["wording"] - 1]
        match = re.fullmatch(_parts(OWN, parts, question), str(sample.input), re.DOTALL)
        assert match, sample.input
        assert match.group(1) in shown


def test_both_wordings_of_a_trial_share_its_draw_and_order() -> None:
    """Issue 25: the authors send one trial's argument draw and order in both wordings."""
    issue = MillstoneIssue.model_validate(_issue(n_args=8))
    samples = authors_samples(issue, trials=5, seed=3, words=OWN)
    by_trial: dict[tuple[str, int, int], dict[int, object]] = {}
    for sample in samples:
        if _case_of(sample) != "neither":
            key = (_case_of(sample), sample.metadata["template"], sample.metadata["trial"])
            by_trial.setdefault(key, {})[sample.metadata["wording"]] = sample
    assert len(by_trial) == 5 * 6 * 5
    for pair in by_trial.values():
        one, two = pair[1], pair[2]
        assert one.metadata["argument_ids"] == two.metadata["argument_ids"]  # type: ignore[attr-defined]
        assert str(one.input).split("\n\n")[2:-1] == str(two.input).split("\n\n")[2:-1]  # type: ignore[attr-defined]
    draws = {p[1].metadata["argument_ids"] for k, p in by_trial.items() if k[0] == "75pro"}  # type: ignore[attr-defined]
    assert len(draws) > 20  # trials still draw afresh


def test_answers_are_capped_as_the_authors_capped_each_provider() -> None:
    from stancelab.millstone.prompts import authors_max_tokens

    caps = {model: authors_max_tokens(model, 256) for model in (
        "anthropic/claude-opus-4-20250514", "anthropic/vertex/claude-3-5-haiku", "openai/gpt-4o",
        "together/meta-llama/Llama-3.1-8B-Instruct", "google/gemini-2.0-flash-001", "grok/grok-3",
        "mockllm/model")}  # fmt: skip
    assert list(caps.values()) == [600, 600, 100, 100, None, None, 256]
    authors = millstone(limit=1, trials=1, prompts="stancelab")
    assert authors.config.max_tokens is None  # the solver caps per provider
    assert (
        millstone(limit=1, trials=1, layout="documents", prompts="stancelab").config.max_tokens
        == 256
    )
    assert millstone(limit=1, trials=1, max_tokens=32, prompts="stancelab").config.max_tokens == 32


def test_template_four_keeps_a_for_the_position_in_favour() -> None:
    issue = MillstoneIssue.model_validate(_issue())
    four = [s for s in authors_samples(issue, 1, 0, OWN) if s.metadata["template"] == 4]
    assert {s.metadata["a_side"] for s in four} == {"pro"}
    assert "'It is bad' is the position against. 'It is good' is the position in favor" in str(
        four[0].input
    )
