"""Test-wide settings: offline, and Inspect's cache and logs kept per test session."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from stancelab.testing.s3_server import S3Server
from tests.helpers import fresh_bucket
from tests.shared_data import seed_authors_cache

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("INSPECT_DISPLAY", "none")
if os.environ.get("PYTEST_XDIST_WORKER"):
    # One torch thread per worker (and per `stancelab` process it starts): with `-n 2` on two
    # cores, two threads each oversubscribe the cores, and a forward pass of the embedded model
    # then costs about three times the CPU time of a single thread's.
    os.environ.setdefault("OMP_NUM_THREADS", "1")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Slow tests (the embedded model end to end) first: with `-n 2 --dist loadfile` their
    files start at once on their own workers instead of ending the run alone (the demo's file,
    the longest, on one worker; the other slow files one after the other on the second)."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture(autouse=True, scope="session")
def _authors_artefacts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The authors' published files (prompts, runners) the probes read at run time: a cache of
    the session's own, seeded from ../shared where it is there (`tests.shared_data`), and never
    fetched from the network (the public address points nowhere). A test that needs them absent
    points `STANCELAB_CACHE_DIR` at an empty folder."""
    root = tmp_path_factory.mktemp("stancelab-cache")
    seed_authors_cache(root)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("STANCELAB_CACHE_DIR", str(root))
        patch.setenv("STANCELAB_AUTHORS_URL", (root / "offline" / "{short}" / "{path}").as_uri())
        yield root


@pytest.fixture(autouse=True)
def _isolated_inspect_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Scripted mockllm replies must not leak between tests through Inspect's cache."""
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "inspect-cache"))


@pytest.fixture
def out_dir(tmp_path: Path) -> Path:
    return tmp_path / "run"


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    """moto's S3 server over HTTP, started once for the session (`stancelab.testing.s3_server`)."""
    with S3Server() as server:
        yield server


@pytest.fixture
def bucket(s3_server: S3Server, monkeypatch: pytest.MonkeyPatch) -> str:
    """A new bucket on the session's S3 server, this process (and what it starts) pointed at it."""
    for name, value in s3_server.env().items():
        monkeypatch.setenv(name, value)
    return fresh_bucket(s3_server)
