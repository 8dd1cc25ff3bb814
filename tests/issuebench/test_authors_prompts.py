"""A default IssueBench run reads the authors' published issues and templates (pinned files,
served here from the byte-identical copies in ../shared), builds their prompts, and reads the
classifier's replies as they did; offline without the files it stops with one line; with
`--prompts stancelab` every output says the prompts are not the paper's."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from inspect_ai.model import ChatMessage

from stancelab.core.data.authors import ArtefactsUnavailable
from stancelab.issuebench.dataset import load_templates
from stancelab.issuebench.labels import authors_label, parse_label
from stancelab.issuebench.release import NOT_THE_PAPERS
from stancelab.issuebench.task import issuebench
from stancelab.issuebench.validation import authors_validation_label
from tests.helpers import scripted_chat_model
from tests.issuebench.authors_files import serve_authors_files
from tests.shared_data import external


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return serve_authors_files(tmp_path, monkeypatch)


@pytest.fixture
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STANCELAB_AUTHORS_URL", f"file://{tmp_path}/nowhere/{{path}}")
    monkeypatch.setenv("STANCELAB_CACHE_DIR", str(tmp_path / "cache"))


def test_a_default_run_builds_the_authors_prompts_from_their_published_files(served: Path) -> None:
    """The 212 issues of issues.csv and the paper's 1,000 templates, each filled as the authors'
    create_prompts.ipynb fills it (every capital X replaced by the issue phrase)."""
    task = issuebench(limit=2, n_templates=5, seed=3)
    assert task.metadata is not None and task.metadata["prompts"] == "authors"
    assert (
        "the authors' issues.csv (paul-rottger/issuebench at 730aa08)"
        in task.metadata["prompts_label"]
    )
    issues = pd.read_csv(external("issuebench", "issues.csv")).set_index("topic_id")
    templates = pd.read_csv(external("issuebench", "templates_sample.csv")).set_index("id")
    samples = list(task.dataset)
    assert len(samples) == 2 * 3 * 5
    for sample in samples:
        issue = issues.loc[int(sample.metadata["issue_id"])]
        phrase = issue[f"topic_{sample.metadata['framing']}"]
        template = templates.loc[sample.metadata["template_id"], "annot1_template"]
        assert sample.input == template.replace("X", phrase)


def test_the_authors_sample_is_used_as_published_under_the_paper_protocol(served: Path) -> None:
    """templates_sample.csv is already the authors' de-duplicated draw of 1,000: the paper
    protocol's de-duplication and draw do not apply to it."""
    task = issuebench(limit=1, framings="neutral", dedupe=True, authors_sample=True)
    published = load_templates(external("issuebench", "templates_sample.csv"))
    assert [s.metadata["template_id"] for s in task.dataset] == [t.id for t in published]


def test_a_changed_file_is_refused(served: Path) -> None:
    path = next(served.rglob("issues.csv"))
    path.unlink()
    path.write_text("topic_id,topic_neutral,topic_pro,topic_con\n1,a,b,c\n")
    with pytest.raises(ArtefactsUnavailable, match="SHA-256 differs"):
        issuebench(limit=1, n_templates=1)


def test_offline_without_the_files_stops_before_any_call(
    offline: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from stancelab.cli import main

    out = tmp_path / "run"
    code = main(["run", "issuebench", "--model", "mockllm/model", "--limit", "1",
                 "--n-templates", "1", "--out", str(out), "--display", "none"])  # fmt: skip
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert "--authors-repo DIR" in err and "network" in err and "--prompts stancelab" in err
    assert not (out / "logs").exists()


def _classifier(messages: list[ChatMessage]) -> str:
    return "3 (neutral about the 9/11 attacks, not 5)"  # strict reading: two labels, unparsed


def test_prompts_stancelab_is_labelled_everywhere_and_replies_are_read_as_the_authors_did(
    offline: None, tmp_path: Path
) -> None:
    from stancelab.core.results.summary import RunResult, read_tables
    from stancelab.core.runs.pipeline import run_probe
    from stancelab.issuebench.probe import PROBE
    from stancelab.issuebench.report import section
    from stancelab.issuebench.run import IssueBenchRun

    writer, _ = scripted_chat_model(lambda messages: "Some text.", "mockllm/writer")
    classifier, _ = scripted_chat_model(_classifier, "mockllm/classifier")
    out = tmp_path / "run"
    printed = run_probe(PROBE, IssueBenchRun(models=[writer], roles={"classifier": classifier},
                                             out_dir=out, limit=1, n_templates=2, prompts="stancelab",
                                             display="none"))  # fmt: skip
    label = f"stancelab's bundled issues ({NOT_THE_PAPERS}); stancelab's bundled templates"
    assert f"Prompts: {label}" in printed
    summary = json.loads((out / "summary.json").read_text())
    assert summary["prompts"][0].startswith(label)
    assert NOT_THE_PAPERS in section(RunResult("issuebench", out, summary, read_tables(out))).intro
    counts = summary["responses"]["mockllm/writer"]
    assert counts["3"] == 6 and counts["unparsed"] == 0  # before issue 35: 6 unparsed


def test_the_demo_runs_on_the_bundled_set_offline(offline: None, tmp_path: Path) -> None:
    from stancelab.demo import demo_settings, offline_settings

    chosen = offline_settings(tmp_path, ["mockllm/model"], demo_settings())
    assert chosen["issuebench"]["prompts"] == "stancelab"


@pytest.mark.parametrize(
    ("reply", "production", "evaluation"),
    [("2", "2", "2"), ("4 - mostly con, not 2", "4", "2"), ("Answer: 10", "1", "1"),
     ("Refusal.", "refusal", "refusal"), ("It refuses: refusal", "refusal", "refusal"),
     ("I cannot decide", "unparsed", "unparsed"), ("0", "unparsed", "unparsed")],
)  # fmt: skip
def test_replies_are_read_as_the_authors_read_them(
    reply: str, production: str, evaluation: str
) -> None:
    """Their analysis notebook (the paper's results) takes the reply's first digit 1-5; their
    classifier evaluation (Table 15) the smallest digit it contains."""
    assert (authors_label(reply), authors_validation_label(reply)) == (production, evaluation)


def test_the_readings_on_the_authors_classifier_replies() -> None:
    """On the 27,500 replies of the authors' classifier evaluation: stancelab's stricter reading
    (before issue 35 the live default) differs from the authors' on one, the two notebooks'
    readings on 19."""
    replies = [text for path in sorted(external("issuebench", "classifier_responses").glob("*/*.csv"))
               for text in pd.read_csv(path)["eval_text"].fillna("").astype(str)]  # fmt: skip
    production = [authors_label(text) for text in replies]
    assert len(replies) == 27_500
    assert sum(a != parse_label(t) for a, t in zip(production, replies, strict=True)) == 1
    assert (
        sum(a != authors_validation_label(t) for a, t in zip(production, replies, strict=True))
        == 19
    )
