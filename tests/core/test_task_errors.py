"""`inspect eval stancelab/<task> -T <file>=missing.jsonl` stops with one line naming the file,
not a traceback: a task's user errors are Inspect's `PrerequisiteError` too (and keep their
own type for stancelab's callers)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from stancelab.core.errors import DataFileError
from stancelab.core.inspect_private import PrerequisiteError, task_create

FILE_ARGUMENTS = {
    "millstone": {"issues_file": "missing.jsonl", "prompts": "stancelab"},
    "conviction": {"statements_file": "missing.jsonl"},
    "llm_bias_bench": {"topics_file": "missing.jsonl", "prompts": "stancelab"},
    "prior_prejudice": {"claims_file": "missing.jsonl"},
    "issuebench": {"issues_file": "missing.jsonl", "prompts": "stancelab"},
    "even_handedness": {"pairs_file": "missing.jsonl"},
}


@pytest.mark.parametrize("name", FILE_ARGUMENTS)
def test_a_missing_file_stops_the_task_as_inspect_prints_it(name: str) -> None:
    with pytest.raises(PrerequisiteError, match=r"missing\.jsonl") as caught:
        task_create(f"stancelab/{name}", **FILE_ARGUMENTS[name])
    assert isinstance(caught.value, DataFileError)
    assert caught.value.message == str(caught.value)


def test_inspect_eval_prints_one_short_message(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "inspect_ai", "eval", "stancelab/millstone",
               "-T", "issues_file=missing.jsonl", "-T", "prompts=stancelab",
               "--model", "mockllm/model", "--log-dir", str(tmp_path)]  # fmt: skip
    shown = {k: v for k, v in os.environ.items() if k != "INSPECT_DISPLAY"}  # none prints nothing
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=120, cwd=tmp_path, env=shown
    )
    printed = (done.stdout + done.stderr).strip()
    assert done.returncode != 0 and "Traceback" not in printed
    assert printed == "missing.jsonl: file does not exist"
