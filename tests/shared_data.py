"""Locating ../shared (the authors' released data). Where it is absent the replay tests skip
with the reason, except under CI (`CI=true`), where a missing ../shared is a failure: a green
CI must mean the published numbers were re-derived."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("STANCELAB_SHARED_DIR", REPO_ROOT.parent / "shared"))


def external(*parts: str) -> Path:
    """A path under shared/external; when it is not there, skip the test (fail it under CI)."""
    path = SHARED.joinpath("external", *parts)
    if not path.exists():
        reason = f"{path} is absent (the authors' released data lives in ../shared)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{reason}; CI=true requires it for the replay tests", pytrace=False)
        pytest.skip(reason)
    return path
