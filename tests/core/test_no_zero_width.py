"""Issue 24: no interval of zero width anywhere. A property over every table (`tables/*.csv`)
and every `summary.json` of every probe and of the matrix: each (ci_low, ci_high) pair, in
columns or keys named `ci_low` / `ci_high` or `<x>_ci_low` / `<x>_ci_high`, is either missing
(no CI, said so) or has ci_low < ci_high. Read from small scripted runs of all five probes
(mockllm, through `run all` on shared topics, plus a prior-prejudice run with the group probe)
and from the imports of the authors' released data."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from stancelab.cli import main
from stancelab.matrix.run import RunAll, run_all
from stancelab.prior_prejudice.run import PriorPrejudiceRun, run_prior_prejudice
from stancelab.probes import PROBES
from tests.helpers import own_cache, scripted_chat_model
from tests.interval_checks import folder_faults
from tests.matrix.test_scripted_stances import SCRIPTS
from tests.shared_data import external

MODEL = "mockllm/scripted"
# Held stances on two topics; gun-control is held by no script (no view, a middling rating):
# units that differ and units that agree, so both kinds of estimate are read.
HELD = {"abortion": 1, "minimum-wage": -1}
TOPICS = "abortion,minimum-wage,gun-control"
SETTINGS: dict[str, dict[str, Any]] = {
    # stancelab's own prompts: CI has no copy of the authors' MillStone prompt builder, nor
    # IssueBench's files in the cache
    "millstone": {"trials": 1, "prompts": "stancelab"},
    "conviction": {"samples": 2, "argument_sets": 1},
    "llm-bias-bench": {"turns": 1, "replicates": 2},
    "prior-prejudice": {},
    "issuebench": {"n_templates": 3, "prompts": "stancelab"},
    "even-handedness": {"limit": 3, "max_tokens": 16},
}
RELEASED = {
    "millstone": "millstone",
    "llm-bias-bench": "llm-bias-bench",
    "issuebench-tables": "issuebench",
}


def test_the_reader_finds_every_kind_of_pair(tmp_path: Path) -> None:
    """The property can fail: zero widths in a column pair, a prefixed pair and a summary key."""
    (tmp_path / "p" / "tables").mkdir(parents=True)
    pd.DataFrame({"value": [1.0, 2.0, 3.0], "ci_low": [0.5, 2.0, None], "ci_high": [1.5, 2.0, None],
                  "signed_ci_low": [0.1, 0.2, 0.3], "signed_ci_high": [0.2, 0.3, 0.3]}).to_csv(
        tmp_path / "p" / "tables" / "t.csv", index=False)  # fmt: skip
    (tmp_path / "p" / "summary.json").write_text(json.dumps(
        {"a": {"m": {"value": 4, "ci_low": 4, "ci_high": 4}}, "b": [{"x_ci_low": None, "x_ci_high": None}]}))  # fmt: skip
    found = folder_faults(tmp_path)
    assert len(found) == 3, found
    assert any("row 1 ci_low" in hit for hit in found) and any(
        "row 2 signed_ci_low" in hit for hit in found
    )
    assert any("a.m.ci_low" in hit for hit in found)


def test_the_reader_finds_one_bound_alone(tmp_path: Path) -> None:
    """An interval with one bound missing is a fault too, in a table row and a summary key."""
    (tmp_path / "p" / "tables").mkdir(parents=True)
    pd.DataFrame({"ci_low": [0.5, None], "ci_high": [1.5, 1.0]}).to_csv(
        tmp_path / "p" / "tables" / "t.csv", index=False
    )
    (tmp_path / "p" / "summary.json").write_text(
        json.dumps({"m": {"ci_low": 0.1, "ci_high": None}})
    )
    found = folder_faults(tmp_path)
    assert len(found) == 2 and all(hit.endswith("one bound missing") for hit in found), found
    assert any("row 1 ci_low" in hit for hit in found) and any("m.ci_low" in hit for hit in found)


def _lens_settings(lens: str) -> dict[str, Any]:
    model, _ = scripted_chat_model(importlib.import_module(SCRIPTS[lens]).reply_for(HELD), MODEL)
    return SETTINGS[lens] | {"models": [model]}


@pytest.fixture(scope="module")
def scripted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`run all` of scripted models on three shared topics (every probe and the matrix), and
    a prior-prejudice run of the paper's claims with the group probe (which `run all` skips)."""
    out = tmp_path_factory.mktemp("zero-width")
    with own_cache(out / "cache"):
        options = RunAll(models=[MODEL], out_dir=out / "all", shared_topics=TOPICS, display="none")
        run_all(
            options, {lens: _lens_settings(lens) for lens in PROBES}, progress=lambda text: None
        )
        model, _ = scripted_chat_model(
            importlib.import_module(SCRIPTS["prior-prejudice"]).reply_for(HELD), MODEL
        )
        run_prior_prejudice(PriorPrejudiceRun(models=[model], out_dir=out / "prior-prejudice-probe", limit=2,
                                              templates="T1,T2", generate_arguments=False, cross_task=False,
                                              display="none"))  # fmt: skip
    return out


@pytest.mark.parametrize("folder", [*PROBES, "matrix", "prior-prejudice-probe"])
def test_no_zero_width_interval_in_a_scripted_run(scripted: Path, folder: str) -> None:
    path = scripted / folder if folder == "prior-prejudice-probe" else scripted / "all" / folder
    found = folder_faults(path)
    assert not found, f"{len(found)} intervals of zero width: " + "; ".join(found[:8])


@pytest.mark.parametrize("command", sorted(RELEASED))
def test_no_zero_width_interval_in_the_authors_released_data(tmp_path: Path, command: str) -> None:
    source = external(RELEASED[command])
    assert main(["import", command, str(source), "--out", str(tmp_path / "import")]) == 0
    found = folder_faults(tmp_path / "import")
    assert not found, f"{len(found)} intervals of zero width: " + "; ".join(found[:8])
