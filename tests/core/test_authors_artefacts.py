"""The authors' artefacts at run time (`core.data.authors`): read from a checkout, the cache or
their public address, each file checked against its pinned SHA-256; offline without them, one line
naming both ways to get them. A local HTTP server stands in for GitHub."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from stancelab.core.data.authors import (
    ArtefactsUnavailable,
    Release,
    artefact_text,
    cached_path,
    ensure_release,
    is_available,
)

COMMIT = "0123456789abcdef0123456789abcdef01234567"
FILES = {"prompts.md": b"Our own test text, not the authors'.\n", "data/rubric.txt": b"rubric\n"}


def release(files: dict[str, bytes] = FILES) -> Release:
    pins = {path: hashlib.sha256(data).hexdigest() for path, data in files.items()}
    return Release("someone/method", COMMIT, pins, "the method's prompts")


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("STANCELAB_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, bytes]]:
    """A server of `/{repository}/{commit}/{path}`; the test changes what it serves."""
    content: dict[str, bytes] = dict(FILES)
    requests: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            requests.append(self.path)
            path = self.path.removeprefix(f"/someone/method/{COMMIT}/")
            if path not in content:
                self.send_error(404)
                return
            self.send_response(200)
            self.end_headers()
            self.wfile.write(content[path])

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv(
        "STANCELAB_AUTHORS_URL",
        f"http://127.0.0.1:{server.server_port}/{{repository}}/{{commit}}/{{path}}",
    )
    content["__requests__"] = requests  # type: ignore[assignment]
    try:
        yield content
    finally:
        server.shutdown()
        server.server_close()


def test_fetched_once_into_the_cache_then_read_from_it(cache: Path, served: dict) -> None:
    assert artefact_text(release(), "prompts.md") == FILES["prompts.md"].decode()
    assert cached_path(release(), "prompts.md").read_bytes() == FILES["prompts.md"]
    served["prompts.md"] = b"changed upstream"
    assert artefact_text(release(), "prompts.md") == FILES["prompts.md"].decode()
    assert len(served["__requests__"]) == 1


def test_a_file_that_does_not_match_its_pin_is_refused_and_not_stored(
    cache: Path, served: dict
) -> None:
    served["prompts.md"] = b"tampered"
    with pytest.raises(ArtefactsUnavailable, match="SHA-256 differs"):
        artefact_text(release(), "prompts.md")
    assert not cached_path(release(), "prompts.md").exists()


def test_a_damaged_cache_file_is_fetched_again(cache: Path, served: dict) -> None:
    target = cached_path(release(), "prompts.md")
    target.parent.mkdir(parents=True)
    target.write_bytes(b"half a fi")
    assert artefact_text(release(), "prompts.md") == FILES["prompts.md"].decode()
    assert target.read_bytes() == FILES["prompts.md"]


def test_offline_without_the_files_one_line_names_both_ways(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STANCELAB_AUTHORS_URL", "http://127.0.0.1:9/{repository}/{commit}/{path}")
    with pytest.raises(ArtefactsUnavailable) as caught:
        ensure_release(release(), fallback="--prompts ours runs without them")
    message = str(caught.value)
    assert "\n" not in message and "--authors-repo DIR" in message
    assert "someone/method at 0123456" in message and "--prompts ours runs without them" in message
    assert not is_available(release())


def test_a_folder_of_copies_serves_through_a_file_url(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "copies" / COMMIT[:7]
    for path, data in FILES.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_bytes(data)
    monkeypatch.setenv("STANCELAB_AUTHORS_URL", f"file://{tmp_path}/copies/{{short}}/{{path}}")
    ensure_release(release())
    assert cached_path(release(), "data/rubric.txt").read_bytes() == b"rubric\n"


def test_a_checkout_is_read_when_its_files_are_the_pinned_ones(tmp_path: Path, cache: Path) -> None:
    checkout = tmp_path / "checkout"
    for path, data in FILES.items():
        (checkout / path).parent.mkdir(parents=True, exist_ok=True)
        (checkout / path).write_bytes(data)
    ensure_release(release(), checkout)
    assert artefact_text(release(), "data/rubric.txt", checkout) == "rubric\n"
    (checkout / "prompts.md").write_bytes(b"another commit's prompts")
    with pytest.raises(ArtefactsUnavailable, match="not the file of someone/method at 0123456"):
        artefact_text(release(), "prompts.md", checkout)
    (checkout / "prompts.md").unlink()
    with pytest.raises(ArtefactsUnavailable, match=r"no prompts\.md there"):
        artefact_text(release(), "prompts.md", checkout)
