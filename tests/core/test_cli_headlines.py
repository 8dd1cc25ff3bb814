"""The CLI summary gives each headline as the report does: 'not measured' when most answers
are unusable, for every probe (here conviction, whose own summary prints numbers)."""

from __future__ import annotations

from pathlib import Path

from stancelab.cli import headlines
from stancelab.conviction.run import ConvictionRun, run_conviction
from tests.helpers import scripted_chat_model


def test_unusable_answers_read_not_measured_in_the_cli_headlines(tmp_path: Path) -> None:
    evasive, _ = scripted_chat_model(
        lambda messages: "That is a complex question.", "mockllm/evasive"
    )
    run_conviction(ConvictionRun(models=[evasive], out_dir=tmp_path / "run", limit=1, samples=0,
                                 argument_sets=1))  # fmt: skip
    text = headlines(tmp_path / "run")
    line = next(line for line in text.splitlines() if line.startswith("mockllm/evasive"))
    assert "not measured" in line and "unclear" in line
