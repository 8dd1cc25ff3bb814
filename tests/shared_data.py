"""Locating ../shared (the authors' released data); tests skip cleanly when it is absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("STANCELAB_SHARED_DIR", REPO_ROOT.parent / "shared"))


def external(*parts: str) -> Path:
    """A path under shared/external, or skip the test when it is not there."""
    path = SHARED.joinpath("external", *parts)
    if not path.exists():
        pytest.skip(f"{path} is absent (the authors' released data lives in ../shared)")
    return path
