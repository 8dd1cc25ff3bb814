"""Replay tests skip without ../shared on a developer's machine, and fail under CI."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import shared_data


def test_missing_shared_skips_locally_and_fails_under_ci(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shared_data, "SHARED", tmp_path / "absent")
    monkeypatch.setenv("CI", "false")
    with pytest.raises(pytest.skip.Exception, match="absent"):
        shared_data.external("millstone")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true"):
        shared_data.external("millstone")


def test_present_shared_is_returned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "external" / "millstone").mkdir(parents=True)
    monkeypatch.setattr(shared_data, "SHARED", tmp_path)
    monkeypatch.setenv("CI", "true")
    assert shared_data.external("millstone") == tmp_path / "external" / "millstone"
