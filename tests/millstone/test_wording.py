"""MillStone's words read at run time (`wording.py`): from a pinned file, checked; offline
without it one line and exit 2 before any call; `--prompts stancelab` labelled everywhere.

CI has no copy of the authors' prompt builder (htried/millstone has no licence), so the
mechanism is tested on a builder of stancelab's own words laid out as theirs is, pinned here
by its SHA-256 and served from a `file://` source; `test_authors_differential.py` compares the
real one item by item where a checkout is given."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from stancelab.core.data.authors import ArtefactsUnavailable
from stancelab.millstone import wording
from stancelab.millstone.corpus import load_issues
from stancelab.millstone.dataset import authors_samples
from stancelab.millstone.task import millstone
from stancelab.millstone.wording import (
    NOT_THE_PAPERS,
    PROMPT_BUILDER,
    STANCELAB_WORDING,
    wording_for,
)
from tests.helpers import scripted_model
from tests.shared_data import external

FAKE_COMMIT = "f" * 40
# A builder of our own words with the layout of the authors' `c_generate_dataset.py`: the
# parser reads its syntax tree, never runs it.
FAKE_BUILDER = """
def add_evidence(data, sources):
    for d in data:
        d += "\\n[refs]\\n"
        for cite in cites:
            d += f"{cite['index']} {cite['citation']}\\n"
        d += "~~\\n"


def read_evidence(path, which):
    return "\\n--\\n".join(blocks)


def make_prompts(questions):
    case_1 = "<<A>>/<<B>>"
    case_2 = "<<B>>/<<A>>"
    for q in questions:
        out.append(f"{q}\\nPick {case_1 if random.random() < 0.5 else case_2}! End {case_1 if random.random() < 0.5 else case_2}.")
        out.append(f"{q}\\nFirst {case_1 if random.random() < 0.5 else case_2}:\\n{evidence}\\nThen {case_1 if random.random() < 0.5 else case_2}.")
        out.append(f"{q}\\nSecond {case_1 if random.random() < 0.5 else case_2}:\\n{evidence}\\nThen {case_1 if random.random() < 0.5 else case_2}.")
"""


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The fake builder pinned at FAKE_COMMIT and served from a folder (`file://`), with an
    empty cache; returns the folder."""
    folder = tmp_path / "served"
    (folder / "scripts").mkdir(parents=True)
    (folder / PROMPT_BUILDER).write_text(FAKE_BUILDER)
    pin = hashlib.sha256(FAKE_BUILDER.encode()).hexdigest()
    monkeypatch.setitem(wording.PINNED_BUILDERS, FAKE_COMMIT, pin)
    monkeypatch.setenv("STANCELAB_AUTHORS_URL", f"file://{folder}/{{path}}")
    monkeypatch.setenv("STANCELAB_CACHE_DIR", str(tmp_path / "cache"))
    return folder


@pytest.fixture
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No authors' file anywhere: an empty cache and a source that does not exist."""
    monkeypatch.setenv("STANCELAB_AUTHORS_URL", f"file://{tmp_path}/nowhere/{{path}}")
    monkeypatch.setenv("STANCELAB_CACHE_DIR", str(tmp_path / "cache"))


def test_the_words_come_from_the_pinned_file(served: Path) -> None:
    words = wording_for("authors", FAKE_COMMIT)
    assert words.source == "authors" and words.release == f"htried/millstone@{FAKE_COMMIT}"
    assert words.answer_forms == ("<<A>>/<<B>>", "<<B>>/<<A>>")
    assert (words.citations_header, words.separator, words.joiner) == (
        "\n[refs]\n",
        "~~\n",
        "\n--\n",
    )
    assert words.prompt("Q?", [], 1, (True, False)) == "Q?\nPick <<A>>/<<B>>! End <<B>>/<<A>>."
    assert words.prompt("Q?", ["x~~\n", "y~~\n"], 2, (False, True)) == (
        "Q?\nSecond <<B>>/<<A>>:\nx~~\n\n--\ny~~\n\nThen <<A>>/<<B>>."
    )
    assert words.argument_block("Arg [1].", ["[1] S"]) == "Arg [1].\n[refs]\n[1] S\n~~\n"
    assert words.label == f"the authors' prompts (htried/millstone at {FAKE_COMMIT[:7]})"


def test_the_default_run_reads_them_and_records_which(served: Path) -> None:
    task = millstone(limit=1, trials=1, authors_commit=FAKE_COMMIT[:7])
    assert task.metadata is not None
    assert task.metadata["prompts"] == "authors"
    assert task.metadata["authors_release"] == f"htried/millstone@{FAKE_COMMIT}"
    baseline = [str(s.input) for s in task.dataset if s.metadata["case"] == "neither"]
    assert len(baseline) == 6 and all("\nPick <<" in text for text in baseline)


def test_a_changed_file_is_refused(served: Path, tmp_path: Path) -> None:
    (served / PROMPT_BUILDER).write_text(FAKE_BUILDER + "# changed\n")
    with pytest.raises(ArtefactsUnavailable, match="SHA-256 differs"):
        wording_for("authors", FAKE_COMMIT)
    checkout = tmp_path / "checkout"
    (checkout / "scripts").mkdir(parents=True)
    (checkout / PROMPT_BUILDER).write_text("x = 1\n")
    with pytest.raises(ArtefactsUnavailable, match=r"--authors-repo .*SHA-256 differs"):
        wording_for("authors", FAKE_COMMIT, checkout)


def test_a_checkout_is_read_without_the_network(served: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setenv("STANCELAB_AUTHORS_URL", f"file://{tmp_path}/nowhere/{{path}}")
    assert wording_for("authors", FAKE_COMMIT, served).answer_forms[0] == "<<A>>/<<B>>"


def test_unknown_commits_and_sources_are_one_line() -> None:
    with pytest.raises(
        wording.StancelabError, match=r"--authors-commit abc1234: not a pinned.*b3f0296"
    ):
        wording_for("authors", "abc1234")
    with pytest.raises(
        wording.StancelabError, match=r"--prompts must be one of authors, stancelab"
    ):
        millstone(limit=1, trials=1, prompts="mine")


def test_the_temperature_is_the_providers_as_in_the_authors_requests() -> None:
    """The authors' requests set no temperature; stancelab sent 1.0 before issue 35."""
    assert millstone(limit=1, trials=1, prompts="stancelab").config.temperature is None
    assert (
        millstone(limit=1, trials=1, prompts="stancelab", temperature=0.5).config.temperature == 0.5
    )


def test_offline_without_the_file_stops_before_any_call(
    offline: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from stancelab.cli import main

    out = tmp_path / "run"
    code = main(["run", "millstone", "--model", "mockllm/model", "--limit", "1", "--trials", "1",
                 "--out", str(out), "--display", "none"])  # fmt: skip
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert "--authors-repo DIR" in err and "network" in err and "--prompts stancelab" in err
    assert not (out / "logs").exists()  # nothing was called or written


def test_prompts_stancelab_runs_offline_and_says_so_everywhere(
    offline: None, tmp_path: Path
) -> None:
    from stancelab.core.results.summary import RunResult, read_tables
    from stancelab.core.runs.pipeline import run_probe
    from stancelab.millstone.probe import PROBE
    from stancelab.millstone.report import section
    from stancelab.millstone.run import MillstoneRun

    model, _ = scripted_model(lambda prompt: "position <<A>>")
    out = tmp_path / "run"
    printed = run_probe(PROBE, MillstoneRun(models=[model], out_dir=out, limit=1, trials=1,
                                            prompts="stancelab", display="none"))  # fmt: skip
    assert f"Prompts: stancelab's own wording ({NOT_THE_PAPERS})" in printed
    summary = json.loads((out / "summary.json").read_text())
    assert summary["prompts"] == [STANCELAB_WORDING.label]
    intro = section(RunResult("millstone", out, summary, read_tables(out))).intro
    assert NOT_THE_PAPERS in intro


def test_the_demo_runs_on_stancelabs_wording_offline(offline: None, tmp_path: Path) -> None:
    from stancelab.demo import demo_settings, offline_settings

    model, _ = scripted_model(lambda prompt: "position <<A>>")
    chosen = offline_settings(tmp_path, [model], demo_settings())
    assert chosen["millstone"]["prompts"] == "stancelab"


def test_the_published_files_drive_the_same_items_in_either_wording(served: Path) -> None:
    """The words change nothing else: the same samples, sides and argument draws."""
    authors = wording_for("authors", FAKE_COMMIT)
    for issue in load_issues(external("millstone", "data"))[:10]:
        theirs = authors_samples(issue, 1, 0, authors)
        ours = authors_samples(issue, 1, 0, STANCELAB_WORDING)
        assert [(s.id, s.target, s.metadata["argument_ids"]) for s in theirs] == [
            (s.id, s.target, s.metadata["argument_ids"]) for s in ours
        ]
        assert all(str(a.input) != str(b.input) for a, b in zip(theirs, ours, strict=True))
