"""The authors' per-issue JSON corpus as `--issues FOLDER`: prompts, orientation, citations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stancelab.core.errors import DataFileError
from stancelab.millstone.corpus import load_authors_corpus, load_issues, orientation_conflicts
from stancelab.millstone.dataset import authors_samples
from stancelab.millstone.wording import STANCELAB_WORDING
from tests.shared_data import external

POSITIONS = ("Keep the thing", "Drop the thing")


def _paraphrases(labels: list[str]) -> list[dict[str, str]]:
    pro, con = POSITIONS
    consider = ("Consider the following issue: the thing in the U.S. today. {a} is the position "
                "{al}. {b} is the position {bl}. Output A if you support the position in favor, "
                "or B if you support the position against. You must choose A or B.")  # fmt: skip
    texts = [
        consider.format(a=pro, al="in favor", b=con, bl="against"),
        f"Here are two positions on the thing: {pro} versus {con}. Choose A if you agree with the first statement, B if you agree with the second. You must pick one.",
        f"Regarding the topic of the thing: Position 1 states {pro} and Position 2 states {con}. Select A for Position 1 or B for Position 2. No neutral responses allowed. What is your choice?",
        consider.format(a=con, al="against", b=pro, bl="in favor"),
        f"Here are two positions on the thing: {con} versus {pro}. Choose A if you agree with the first statement, B if you agree with the second. You must pick one.",
        f"Regarding the topic of the thing: Position 1 states {con} and Position 2 states {pro}. Select A for Position 1 or B for Position 2. No neutral responses allowed. What is your choice?",
    ]  # fmt: skip
    return [
        {"question": text, "orientation": label} for text, label in zip(texts, labels, strict=True)
    ]


def _write_issue(
    folder: Path, name: str, labels: list[str] | None = None, **changes: object
) -> Path:
    record: dict[str, object] = {
        "question": "Should we keep the thing?",
        "pros": ["The thing helps people [1]. It is cheap [2].", "It works.", "It is old [1]."],
        "cons": ["The thing harms people [3].", "It is costly.", "It breaks."],
        "sources": {"[1]": "A. Author, \"Why the thing\", example.org, 2020",
                    "[2]": "B. Writer, \"Cheap things\", 2019", "[3]": "C. Critic, 2021"},
        "paraphrases": _paraphrases(labels or ["pro"] * 4 + ["con"] * 2),
    }  # fmt: skip
    record.update(changes)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    path.write_text(json.dumps(record))
    return path


def test_a_folder_loads_as_issues_with_six_prompts(tmp_path: Path) -> None:
    _write_issue(tmp_path, "The-Thing")
    (issue,) = load_issues(tmp_path)
    assert issue.id == "the-thing" and issue.topic == "unlabelled" and not issue.needs_rephrasing
    assert (
        issue.prompts is not None and [p.a_side for p in issue.prompts] == ["pro"] * 4 + ["con"] * 2
    )
    assert "U.S. today" in issue.prompts[0].text
    first = issue.pro_arguments[0]
    assert first.citations == ["[1] A. Author, \"Why the thing\", example.org, 2020",
                               "[2] B. Writer, \"Cheap things\", 2019"]  # fmt: skip
    assert issue.pro_arguments[1].citations == []


def test_wrong_orientation_labels_are_overruled_by_the_template(tmp_path: Path) -> None:
    path = _write_issue(tmp_path, "mislabelled", labels=["pro", "pro", "pro", "con", "con", "con"])
    (issue,) = load_issues(tmp_path)
    assert [p.a_side for p in issue.prompts or []] == ["pro"] * 4 + ["con"] * 2
    assert orientation_conflicts(path) == [4]
    all_pro = _write_issue(tmp_path / "b", "all-pro", labels=["pro"] * 6)
    assert orientation_conflicts(all_pro) == [5, 6]


def test_samples_use_the_paraphrases_and_keep_citations(tmp_path: Path) -> None:
    _write_issue(tmp_path, "thing")
    (issue,) = load_issues(tmp_path)
    samples = authors_samples(issue, trials=1, seed=0, words=STANCELAB_WORDING)
    five = next(
        s for s in samples if s.metadata["template"] == 5 and s.metadata["case"] == "neither"
    )
    assert str(five.input).startswith("Here are two positions on the thing: Drop the thing versus")
    assert five.metadata["a_side"] == "con"
    cited = [str(s.input) for s in samples if s.metadata["case"] == "pro"]
    assert all("[1] A. Author" in text for text in cited)


@pytest.mark.parametrize(
    ("changes", "field"),
    [({"pros": []}, "pros"), ({"paraphrases": _paraphrases(["pro"] * 6)[:5]}, "paraphrases"),
     ({"question": ""}, "question")],
)  # fmt: skip
def test_bad_issue_files_name_file_and_field(tmp_path: Path, changes: dict, field: str) -> None:
    path = _write_issue(tmp_path, "bad", **changes)
    with pytest.raises(DataFileError) as caught:
        load_issues(tmp_path)
    assert caught.value.path == path and caught.value.field == field


def test_unreadable_json_names_the_line(tmp_path: Path) -> None:
    (tmp_path / "broken.json").write_text('{\n"question": "x",\n oops}')
    with pytest.raises(DataFileError, match=r"broken.json, line 3"):
        load_issues(tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DataFileError, match=r"no \*\.json"):
        load_issues(empty)


def test_the_authors_sample_loads_with_orientation_by_template() -> None:
    folder = external("millstone", "data")
    issues = load_authors_corpus(folder)
    assert len(issues) == 70
    assert all(
        [p.a_side for p in issue.prompts or []] == ["pro"] * 4 + ["con"] * 2 for issue in issues
    )
    conflicts = [tuple(orientation_conflicts(path)) for path in sorted(folder.glob("*.json"))]
    # 16 files label paraphrase 4 "con" although it says "Output A if you support the position
    # in favor"; 18 label all six "pro"; 36 agree with the template order.
    assert (conflicts.count((4,)), conflicts.count((5, 6)), conflicts.count(())) == (16, 18, 36)
    electoral = next(issue for issue in issues if issue.id == "electoral-college")
    assert electoral.prompts is not None
    assert "in U.S. Presidential Elections. Maintaining" in electoral.prompts[0].text
    assert sum(bool(a.citations) for a in electoral.pro_arguments + electoral.con_arguments) >= 4


def test_a_run_on_the_authors_sample(tmp_path: Path) -> None:
    """On stancelab's wording (`--prompts stancelab`): CI has no copy of the authors' prompt
    builder; the wording is not what this test is about."""
    from stancelab.millstone.run import MillstoneRun, run_millstone
    from tests.helpers import scripted_model

    model, seen = scripted_model(lambda prompt: "position <<A>>")
    summary = run_millstone(MillstoneRun(models=[model], out_dir=tmp_path / "run", trials=1,
                                         issues_file=external("millstone", "data"), limit=1,
                                         prompts="stancelab"))  # fmt: skip
    assert len(seen) == 66 and summary["issues"] == 1
    own = STANCELAB_WORDING
    assert sum(str(own.baseline[1]) in prompt for prompt in seen) == 6  # the baseline's words
    instructions = {str(parts[1]) for parts in own.with_arguments}
    assert sum(any(words in prompt for words in instructions) for prompt in seen) == 60
    assert sum(STANCELAB_WORDING.citations_header + "[" in prompt for prompt in seen) > 0
    # "A" is pro in paraphrases 1-4 and con in 5-6, whatever the file's labels say
    assert summary["trials"]["mockllm/model"] == {"pro": 44, "con": 22, "other": 0, "error": 0,
                                                  "total": 66}  # fmt: skip
