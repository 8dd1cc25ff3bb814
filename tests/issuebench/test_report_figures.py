"""The new IssueBench figures in the report, from imported tables and from a run."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

from inspect_ai.model import ChatMessage

from stancelab.cli import main
from stancelab.issuebench.report import section
from stancelab.issuebench.run import IssueBenchRun, run_issuebench
from stancelab.report.build import build_report
from stancelab.report.runs import load_run
from tests.helpers import scripted_chat_model
from tests.shared_data import external

# stancelab's bundled issues and templates (`--prompts stancelab`): these tests are about the
# run, not the prompts; test_authors_prompts.py runs the authors' published files.
own_run = partial(IssueBenchRun, prompts="stancelab")


def _titles(folder: Path) -> tuple[list[str], list[str], dict[str, int]]:
    part = section(load_run(folder))
    return [f.title for f in part.figures], part.notes, {t.title: len(t.frame) for t in part.tables}


def test_imported_tables_show_the_new_figures_and_say_what_they_cannot(tmp_path: Path) -> None:
    assert (
        main(
            [
                "import",
                "issuebench-tables",
                str(external("issuebench")),
                "--out",
                str(tmp_path / "ib"),
            ]
        )
        == 0
    )
    titles, notes, tables = _titles(tmp_path / "ib")
    for figure in ("Figure 5", "Figure 6", "Figure 7", "Figure 8", "Figure 12"):
        assert sum(figure in title for title in titles) == 1, figure
    assert sum("Figure 11" in title for title in titles) == 2  # pro and con
    assert any("Figure 9" in note for note in notes) and any("Figure 10" in note for note in notes)
    assert tables["Partisan positions per issue (Figure 8)"] == 20
    assert tables["Top issues per stance (Table 2)"] == 10 * 3 * 5
    assert tables["Distorted stance under pro/con framings (§6)"] == 10 * 2
    assert tables["Majority stance counts with CIs"] == 10 * 3 * 7


def _writer(lean: str) -> Callable[[list[ChatMessage]], str]:
    def write(messages: list[ChatMessage]) -> str:
        return f"A {lean} text: {messages[-1].text}"

    return write


def _classifier(messages: list[ChatMessage]) -> str:
    prompt = messages[-1].text
    return "1" if "A keen text" in prompt else ("3" if len(prompt) % 2 else "4")


def test_a_run_shows_every_new_figure(tmp_path: Path) -> None:
    keen, _ = scripted_chat_model(_writer("keen"), "mockllm/keen")
    wary, _ = scripted_chat_model(_writer("wary"), "mockllm/wary")
    classifier, _ = scripted_chat_model(_classifier, "mockllm/classifier")
    run_issuebench(own_run(models=[keen, wary], roles={"classifier": classifier}, out_dir=tmp_path / "run",
                           limit=2, n_templates=4, calls=2))  # fmt: skip
    titles, notes, _ = _titles(tmp_path / "run")
    for figure in ("Figure 5", "Figure 6", "Figure 7", "Figure 12", "Figure 9", "Figure 10"):
        assert sum(figure in title for title in titles) == 1, (figure, titles)
    assert sum("Figure 11" in title for title in titles) == 2
    assert [note.split(" (")[0] for note in notes] == ["Figure 8"]  # no voter file was given
    result = build_report([tmp_path / "run"], tmp_path / "report.html")
    assert result.figures >= len(titles)
