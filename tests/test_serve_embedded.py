"""The embedded model behind `stancelab serve-embedded` (transformers serve on 127.0.0.1),
used through Inspect's `openai-api` provider: the same kind of results as in-process."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from stancelab.cli import main
from stancelab.core.embedded.model import EMBEDDED_MODEL, materialise
from stancelab.core.embedded.serve import PROVIDER, served_model_name
from stancelab.testing.fake_openai import free_port

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "stancelab", "serve-embedded", "--port", str(port)],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.time() + 120
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                if process.poll() is not None or time.time() > deadline:
                    pytest.fail(
                        f"server did not start: {process.stdout.read() if process.stdout else ''}"
                    )
                time.sleep(0.5)
        yield base_url
    finally:
        process.terminate()
        process.wait(timeout=30)


def _run(model: str, out: Path, capsys: pytest.CaptureFixture[str]) -> dict:
    """`stancelab run issuebench` in this process (its embedded model loaded once per worker)."""
    args = ["run", "issuebench", "--model", model, "--limit", "1", "--n-templates", "2",
            "--framings", "neutral", "--max-tokens", "8", "--prompts", "stancelab", "--out", str(out),
            "--display", "none"]  # fmt: skip
    assert main(args) == 0, capsys.readouterr().err[-3000:]
    return json.loads((out / "summary.json").read_text())


def test_a_probe_through_the_local_server_matches_the_in_process_model(
    server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(f"{PROVIDER.upper()}_BASE_URL", server)
    monkeypatch.setenv(f"{PROVIDER.upper()}_API_KEY", "local")
    served = served_model_name(materialise())
    remote = _run(served, tmp_path / "served", capsys)
    local = _run(EMBEDDED_MODEL, tmp_path / "local", capsys)
    assert remote["models"] == [served] and local["models"] == [EMBEDDED_MODEL]
    labels = {"1", "2", "3", "4", "5", "refusal", "unparsed", "total"}
    assert set(remote["responses"][served]) == set(local["responses"][EMBEDDED_MODEL]) == labels
    assert remote["responses"][served]["total"] == local["responses"][EMBEDDED_MODEL]["total"] == 2
    assert set(remote["one_sided_share"][served]) == set(local["one_sided_share"][EMBEDDED_MODEL])
