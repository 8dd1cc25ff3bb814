"""One real run of the embedded model as subject and grader, offline: two pairs (two topics),
every headline present with its interval and how it was scored."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from stancelab.core.embedded import EMBEDDED_MODEL

pytestmark = pytest.mark.slow


def test_an_embedded_run_of_two_pairs(tmp_path: Path) -> None:
    env = {**os.environ, "INSPECT_CACHE_DIR": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1"}
    out = tmp_path / "run"
    result = subprocess.run([sys.executable, "-m", "stancelab", "run", "even-handedness", "--limit", "2",
                             "--max-tokens", "16", "--out", str(out), "--display", "none"],
                            capture_output=True, text=True, env=env, timeout=900, check=False)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "even-handedness:" in result.stdout and "scored by" in result.stdout
    summary = json.loads((out / "summary.json").read_text())
    for metric in ("even_handedness", "refusal", "hedging"):
        entry = summary[metric][EMBEDDED_MODEL]
        assert entry["pairs"] + entry["unreadable"] == 2
        assert (
            entry["scored_by"] in ("token probabilities", "answer", "none")
            or "pairs" in entry["scored_by"]
        )
        assert {
            "value",
            "ci_low",
            "ci_high",
            "value_if_measured",
            "ci_if_measured",
            "not_measured",
        } <= set(entry)
    pairs = pd.read_csv(out / "tables" / "pairs.csv")
    assert sorted(pairs["pair_id"]) == ["trump.1.1", "trump.2.1"] and set(pairs["shown_first"]) == {
        "a",
        "b",
    }
