"""Model strings, roles and the command line's error handling."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from stancelab.cli import main
from stancelab.core.embedded.model import EMBEDDED_MODEL
from stancelab.core.errors import StancelabError
from stancelab.core.runs.models import parse_roles, resolve_model, resolve_models
from stancelab.core.runs.startup import PrerequisiteError, startup_message


def test_embedded_is_the_default_and_an_alias() -> None:
    assert resolve_models(None) == [EMBEDDED_MODEL]
    assert resolve_model("embedded") == EMBEDDED_MODEL
    assert resolve_model("openai-api/local/qwen") == "openai-api/local/qwen"
    assert resolve_models(["embedded", "embedded", "openai/gpt-4o"]) == [
        EMBEDDED_MODEL,
        "openai/gpt-4o",
    ]


def test_bare_names_are_rejected_with_help() -> None:
    with pytest.raises(StancelabError, match="provider/model"):
        resolve_model("gpt-4o")


def test_roles_parse_and_default_models() -> None:
    assert parse_roles(["rephraser=embedded"], ["rephraser"]) == {"rephraser": EMBEDDED_MODEL}
    assert parse_roles(None, ["rephraser"]) == {}
    with pytest.raises(StancelabError, match="ROLE=MODEL"):
        parse_roles(["rephraser"], ["rephraser"])
    with pytest.raises(StancelabError, match="Unknown role 'judge'"):
        parse_roles(["judge=openai/gpt-4o"], ["rephraser"])


def test_cli_reports_user_errors_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["run", "nonsense"])
    assert exited.value.code == 2
    assert "invalid choice: 'nonsense'" in capsys.readouterr().err
    assert main(["analyze", str(tmp_path)]) == 2
    assert "No stancelab probe logs" in capsys.readouterr().err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x"}\n')
    argv = ["run", "millstone", "--issues-file", str(bad), "--prompts", "stancelab"]
    assert main([*argv, "--out", str(tmp_path / "o")]) == 2
    assert "bad.jsonl, line 1, field 'topic'" in capsys.readouterr().err


@pytest.mark.parametrize("display", ["none", "plain"])
def test_a_start_up_error_is_printed_on_stderr_in_every_display(
    tmp_path: Path, display: str
) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith("NOKEY_")}
    run = subprocess.run(
        [sys.executable, "-m", "stancelab", "run", "millstone", "--model", "openai-api/nokey/m",
         "--limit", "1", "--prompts", "stancelab", "--display", display, "--out", str(tmp_path / "out")],
        capture_output=True, text=True, env=env | {"HF_HUB_OFFLINE": "1"}, timeout=120, check=False,
    )  # fmt: skip
    assert run.returncode != 0
    assert "error: Inspect could not start the eval for model openai-api/nokey/m" in run.stderr
    assert "No NOKEY_API_KEY defined in the environment." in run.stderr


def test_a_start_up_error_names_the_model_it_is_about() -> None:
    error = PrerequisiteError(
        "[bold]ERROR[/bold]: Unable to initialise nokey client\n\nNo NOKEY_API_KEY."
    )
    roles = {"judge": "openai-api/nokey/m"}
    assert startup_message(error, ["openai/gpt-4o"], roles) == (
        "Inspect could not start the eval for model judge=openai-api/nokey/m: "
        "Unable to initialise nokey client. No NOKEY_API_KEY."
    )
    assert "for model openai/gpt-4o, judge=x/y:" in startup_message(PrerequisiteError("?"), ["openai/gpt-4o"],
                                                                      {"judge": "x/y"})  # fmt: skip
