"""IssueBench data: loaders, placeholders, lazy prompt stream, de-duplication, sampling."""

from __future__ import annotations

import json
import tracemalloc
from itertools import islice
from pathlib import Path

import pytest

from stancelab.core.errors import DataFileError
from stancelab.issuebench.dataset import (
    Issue,
    Template,
    authors_sample,
    clean_template,
    deduplicate_templates,
    iter_prompts,
    load_issues,
    load_templates,
    sample_templates,
)
from stancelab.issuebench.labels import parse_gold_label, parse_label
from stancelab.issuebench.prompts import classifier_prompt
from tests.shared_data import external


def test_bundled_sets_meet_the_brief() -> None:
    issues, templates = load_issues(), load_templates()
    assert len(issues) >= 24 and len(templates) >= 40
    assert all(t.text.count("[ISSUE]") == 1 for t in templates)
    prompts = list(iter_prompts(issues[:2], templates[:3]))
    assert len(prompts) == 2 * 3 * 3
    assert prompts[0].id == f"{templates[0].id}.{issues[0].id}-neutral"
    assert issues[0].pro in prompts[3].text  # the second framing is pro
    assert len({p.id for p in prompts}) == len(prompts)


def test_template_placeholder_is_checked_with_the_line(tmp_path: Path) -> None:
    path = tmp_path / "templates.jsonl"
    path.write_text(json.dumps({"id": "a", "text": "Write about [ISSUE]."}) + "\n"
                    + json.dumps({"id": "b", "text": "Write about [ISSUE] and [ISSUE]."}) + "\n")  # fmt: skip
    with pytest.raises(DataFileError, match=r"line 2.*exactly once, found 2"):
        load_templates(path)


def test_bad_issue_csv_names_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "issues.csv"
    path.write_text("topic_id,topic_neutral,topic_pro,topic_con\n1,a,b,c\n2,a,,c\n")
    with pytest.raises(DataFileError) as caught:
        load_issues(path)
    assert (caught.value.line, caught.value.field) == (3, "pro")
    (tmp_path / "bad.csv").write_text("topic_id,topic_neutral\n1,a\n")
    with pytest.raises(DataFileError, match="missing column"):
        load_issues(tmp_path / "bad.csv")


def test_prompt_stream_is_lazy() -> None:
    issues = [
        Issue(id=f"i{n}", neutral=f"issue {n}", pro=f"pro {n}", con=f"con {n}") for n in range(2000)
    ]
    templates = [Template(id=f"t{n}", text=f"Template {n} about [ISSUE].") for n in range(400)]
    tracemalloc.start()
    stream = iter_prompts(issues, templates)  # 2.4M prompts
    first = list(islice(stream, 1000))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(first) == 1000 and peak < 5_000_000  # holding 2.4M prompts would take ~1 GB


def test_cleaning_dedup_and_seeded_sampling() -> None:
    assert clean_template("Write an ESSAY,\n about  X!") == "write an essay about x"
    assert clean_template("a pro-life\tessay") == "a pro life essay"  # punctuation -> space
    templates = [
        Template(id="a", text="Write an essay about [ISSUE]."),
        Template(id="b", text="write an essay about [ISSUE]"),  # same once cleaned
        Template(id="c", text="Write an essay on [ISSUE]."),  # ratio 90 to "a": near-duplicate
        Template(id="d", text="Write [ISSUE]"),
        Template(id="e", text="Tweet [ISSUE]"),  # 4 edits from "d" but ratio 73: kept
        Template(
            id="f", text="Compose a limerick that celebrates [ISSUE] for my grandmother's party."
        ),
    ]
    assert [t.id for t in deduplicate_templates(templates, min_ratio=None)] == [
        "a",
        "c",
        "d",
        "e",
        "f",
    ]
    assert [t.id for t in deduplicate_templates(templates)] == ["a", "d", "e", "f"]
    many = [Template(id=str(n), text=f"T{n} [ISSUE]") for n in range(50)]
    assert sample_templates(many, 10, seed=1) == sample_templates(many, 10, seed=1)
    assert sample_templates(many, 10, seed=1) != sample_templates(many, 10, seed=2)
    assert len(sample_templates(many, 10)) == 10


def test_authors_files_load_and_dedupe_as_appendix_g() -> None:
    issues = load_issues(external("issuebench", "issues.csv"))
    assert len(issues) == 212  # the 184 placeholder clusters are dropped
    templates = load_templates(external("issuebench", "templates_full.csv"))
    assert len(templates) == 3916
    assert len(deduplicate_templates(templates, min_ratio=None)) == 3591  # the paper's count
    kept = deduplicate_templates(templates)
    assert abs(len(kept) - 2475) <= 10  # the paper: 2,475 (we get exactly 2,475)
    released = [t.id for t in load_templates(external("issuebench", "templates_sample.csv"))]
    assert set(released) <= {t.id for t in kept}  # the authors' sample survives our de-duplication


def test_authors_sample_reproduces_the_released_1000_templates() -> None:
    kept = deduplicate_templates(load_templates(external("issuebench", "templates_full.csv")))
    released = [t.id for t in load_templates(external("issuebench", "templates_sample.csv"))]
    assert [t.id for t in authors_sample(kept)] == released


@pytest.mark.parametrize(
    ("reply", "label"),
    [("2", "2"), ("Answer: 5 - only con", "5"), ("Refusal.", "refusal"), ('"3"', "3"),
     ("The answer is 4.", "4"), ("1 or 2", "unparsed"), ("3.5", "unparsed"), ("no idea", "unparsed"), ("", "unparsed")],
)  # fmt: skip
def test_classifier_reply_parsing(reply: str, label: str) -> None:
    assert parse_label(reply) == label


def test_gold_labels_and_classifier_prompt() -> None:
    assert parse_gold_label("2 - mostly pro") == "2"
    assert parse_gold_label("refusal") == "refusal"
    assert parse_gold_label("maybe") is None
    prompt = classifier_prompt(
        "TEXT HERE", "cats being good", "cats", "cats being good", "cats being bad"
    )
    assert prompt.startswith('### TEXT:\n"TEXT HERE"\n\n### TASK:\n\nThe TEXT above')
    assert prompt.endswith('or "refusal".\n\n### ANSWER:')
    assert "asked to write about cats being good" in prompt and "stance on cats using" in prompt
