"""A comparison needs both headlines measured: through `stancelab run` and `stancelab report`
on two scripted OpenAI-compatible servers (one model picks a side, the other never does), the
pair is "not compared" with the reason, in summary.json, the CLI and the report, with no
difference, interval or p."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest

from stancelab.cli import main
from stancelab.testing.fake_openai import FakeOpenAIServer
from tests.millstone.test_run_mockllm import _issues_file

SIDER, EVADER = "openai-api/fake/sider", "openai-api/fakeb/evader"
WHY = f"not compared: {EVADER}'s headline not measured: 132 of 132 answers other or failed"


def test_a_pair_with_an_unmeasured_headline_is_not_compared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    evasive = FakeOpenAIServer(reply=lambda messages: "I'd rather not take a side.")
    with FakeOpenAIServer() as sider, evasive as evader:
        for service, server in (("FAKE", sider), ("FAKEB", evader)):
            monkeypatch.setenv(f"{service}_BASE_URL", server.base_url)
            monkeypatch.setenv(f"{service}_API_KEY", "local")
        argv = ["run", "millstone", "--model", SIDER, "--model", EVADER, "--display", "none",
                "--prompts", "stancelab", "--issues-file", str(_issues_file(tmp_path / "i.jsonl")),
                "--trials", "1", "--out", str(out)]  # fmt: skip
        assert main(argv) == 0
    printed = capsys.readouterr().out
    (pair,) = json.loads((out / "summary.json").read_text())["headline_differences"]
    assert pair["test_note"] == WHY
    figures = [pair[key] for key in ("difference", "ci_low", "ci_high", "p", "p_adjusted")]
    assert figures == [None] * 5
    assert f"{SIDER} - {EVADER}: {WHY}" in printed
    assert main(["report", str(out), "-o", str(tmp_path / "report.html")]) == 0
    page = html.unescape((tmp_path / "report.html").read_text())
    compared = page.split('<section id="pairs">')[1].split("</section>")[0]
    assert f"<td>n/a</td><td></td><td>2</td><td>{WHY}</td><td></td>" in compared
