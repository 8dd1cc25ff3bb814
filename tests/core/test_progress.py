"""A run whose calls take long says which role is generating and how far it is (issue 40,
item 3): with the plain display, a line while a call is slow; Inspect's display gets counters."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from stancelab.cli import main
from stancelab.core.runs import progress
from stancelab.testing.fake_openai import FakeOpenAIServer
from tests.millstone.test_run_mockllm import _issues_file


def test_a_slow_call_prints_which_role_generates_and_how_far(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(progress, "SLOW_CALL_S", 0.3)
    monkeypatch.setattr(progress, "PROGRESS_EVERY_S", 0.2)
    monkeypatch.setattr(progress, "CALLS", progress.Calls())
    with FakeOpenAIServer(latency=1.0) as server:
        monkeypatch.setenv("FAKE_BASE_URL", server.base_url)
        monkeypatch.setenv("FAKE_API_KEY", "local")
        monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
        code = main(["run", "millstone", "--model", "openai-api/fake/fake-model",
                     "--display", "plain", "--limit", "1", "--trials", "1", "--max-connections", "100", "--prompts", "stancelab",
                     "--issues-file", str(_issues_file(tmp_path / "issues.jsonl")),
                     "--out", str(tmp_path / "run")])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    lines = [line for line in out.splitlines() if line.startswith("generating: ")]
    assert lines, out[-2000:]
    assert all("subject (openai-api/fake/fake-model) " in line for line in lines)
    assert all(" in flight, oldest " in line and " done" in line for line in lines)


def test_each_model_is_named_by_the_roles_it_plays() -> None:
    subject, judge = object(), object()
    groups = [([subject], {"user": subject, "judge": judge})]
    labels = progress.role_labels(groups)  # type: ignore[arg-type]
    assert labels == {f"subject+user ({subject})": subject, f"judge ({judge})": judge}


async def test_inspects_display_gets_each_roles_calls_as_a_counter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shown: list[tuple[str, str]] = []
    monkeypatch.setattr("inspect_ai.util.display_counter", lambda *pair: shown.append(pair))
    monkeypatch.setattr(progress, "SHOW_EVERY_S", 0.0)
    monkeypatch.setattr(progress, "CALLS", progress.Calls())

    class Api:
        async def generate(self) -> str:
            return "answer"

    judge = SimpleNamespace(api=Api())
    progress.watch_progress({"judge (m)": judge})  # type: ignore[dict-item]
    assert await judge.api.generate() == "answer"
    assert shown[0][0] == "judge (m)" and shown[0][1].startswith("1 in flight, oldest ")
    assert shown[-1] == ("judge (m)", "1 done")
