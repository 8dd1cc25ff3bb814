"""Model strings, roles and the command line's error handling."""

from __future__ import annotations

from pathlib import Path

import pytest

from stancelab.cli import main
from stancelab.core.embedded import EMBEDDED_MODEL
from stancelab.core.errors import StancelabError
from stancelab.core.models import parse_roles, resolve_model, resolve_models


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
    assert main(["run", "millstone", "--issues", str(bad), "--out", str(tmp_path / "o")]) == 2
    assert "bad.jsonl, line 1, field 'topic'" in capsys.readouterr().err
