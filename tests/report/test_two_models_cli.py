"""Two models through `stancelab run` and `stancelab report` on two scripted OpenAI-compatible
servers (one picks a side, the other never does), as a user runs them:

- a comparison needs both headlines measured: the pair is "not compared" with the reason, in
  summary.json, the CLI and the report, with no difference, interval or p;
- a model name is text, not mathtext: a `$...$` in it leaves the report's figures whole;
- an unmeasured model's counter-argument shifts read "not measured", not figures;
- the report's headings count no lenses (there are six, not five)."""

from __future__ import annotations

import contextlib
import html
import io
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import stancelab.report
from stancelab.cli import main
from stancelab.testing.fake_openai import FakeOpenAIServer
from tests.millstone.test_run_mockllm import _issues_file

SIDER, EVADER = r"openai-api/fake/ab-$\undefinedmacro{x}$", "openai-api/fakeb/evader"
WHY = f"not compared: {EVADER}'s headline not measured: 132 of 132 answers other or failed"


@dataclass(frozen=True)
class TwoModelRun:
    out: Path
    printed: str


@pytest.fixture(scope="module")
def two_models(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TwoModelRun]:
    """One MillStone run of both models (its printed summary kept)."""
    tmp = tmp_path_factory.mktemp("two-models")
    evasive = FakeOpenAIServer(reply=lambda messages: "I'd rather not take a side.")
    printed = io.StringIO()
    with pytest.MonkeyPatch.context() as patch, FakeOpenAIServer() as sider, evasive as evader:
        patch.setenv("INSPECT_CACHE_DIR", str(tmp / "cache"))
        for service, server in (("FAKE", sider), ("FAKEB", evader)):
            patch.setenv(f"{service}_BASE_URL", server.base_url)
            patch.setenv(f"{service}_API_KEY", "local")
        argv = ["run", "millstone", "--model", SIDER, "--model", EVADER, "--display", "none",
                "--prompts", "stancelab", "--issues-file", str(_issues_file(tmp / "i.jsonl")),
                "--trials", "1", "--out", str(tmp / "run")]  # fmt: skip
        with contextlib.redirect_stdout(printed):
            assert main(argv) == 0
        yield TwoModelRun(tmp / "run", printed.getvalue())


def _report(run: TwoModelRun, tmp_path: Path) -> str:
    """`stancelab report` of the run: its page, unescaped."""
    assert main(["report", str(run.out), "-o", str(tmp_path / "report.html")]) == 0
    return html.unescape((tmp_path / "report.html").read_text())


def test_a_pair_with_an_unmeasured_headline_is_not_compared(
    two_models: TwoModelRun, tmp_path: Path
) -> None:
    (pair,) = json.loads((two_models.out / "summary.json").read_text())["headline_differences"]
    assert pair["test_note"] == WHY
    figures = [pair[key] for key in ("difference", "ci_low", "ci_high", "p", "p_adjusted")]
    assert figures == [None] * 5
    assert f"{SIDER} - {EVADER}: {WHY}" in two_models.printed
    compared = _report(two_models, tmp_path).split('<section id="pairs">')[1].split("</section>")[0]
    assert f"<td>n/a</td><td></td><td>2</td><td>{WHY}</td><td></td>" in compared


def test_mathtext_in_a_model_name_is_plain_text_in_the_report(
    two_models: TwoModelRun, tmp_path: Path
) -> None:
    page = _report(two_models, tmp_path)
    for labelled in ("Models ranked by", "Pairwise differences in"):  # model names on an axis
        assert f'<img alt="{labelled} open-mindedness (OM)" src="data:image/png;base64,' in page
    assert f'data-model="{SIDER}"' in page


def test_counter_argument_shifts_of_an_unmeasured_model_say_not_measured(
    two_models: TwoModelRun,
) -> None:
    shifts = two_models.printed.split("Counter-argument shifts")[1].split("\n\n")[0]
    assert f"  {EVADER:<34} not measured: 132 of 132 answers other or failed" in shifts
    assert "models with any: 0 of 1 (paper: four); none: " + SIDER in shifts


def test_the_report_headings_name_no_count_of_lenses(
    two_models: TwoModelRun, tmp_path: Path
) -> None:
    """Six lenses, so no heading says five (the matrix's heading is in the same template)."""
    page = _report(two_models, tmp_path)
    headings = re.findall(r"<h2>(.*?)</h2>", page)
    assert "Opinion profiles: a column per lens" in headings
    template = (Path(stancelab.report.__file__).parent / "templates" / "report.html").read_text()
    assert "One question, every lens: topic x lens" in template
    assert not re.search(r"\b(five|six)\b", " ".join(headings) + template, re.IGNORECASE)


def test_an_unmeasured_model_is_not_ranked_and_its_empty_cells_stay_empty(
    two_models: TwoModelRun, tmp_path: Path
) -> None:
    """The OM ranking is over measured models (the evader once topped it at +100% over the
    median); a pair not compared shows empty cells, not "None", in the report's tables."""
    summary = json.loads((two_models.out / "summary.json").read_text())
    assert {row["model"] for row in summary["om_ranking"]} == {SIDER}
    assert f"Top of the OM ranking on 2 issues: {EVADER}" not in two_models.printed
    assert "<td>None</td>" not in _report(two_models, tmp_path)
