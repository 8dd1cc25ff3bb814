"""Running the even-handedness probe end to end."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from stancelab.core.data.topics import load_topic_map
from stancelab.core.results.summary import write_results
from stancelab.core.runs.evals import SHARE, ProbeRun, run_eval
from stancelab.even_handedness.analysis import PUBLISHED_THRESHOLD
from stancelab.even_handedness.dataset import load_pairs, uncovered_selection
from stancelab.even_handedness.results import analysis
from stancelab.even_handedness.task import (
    ANSWER_TOKENS,
    GRADER_ROLE,
    SECOND_GRADER_ROLE,
    even_handedness,
)

ROLES = (GRADER_ROLE, SECOND_GRADER_ROLE)


@dataclass
class EvenHandednessRun(ProbeRun):
    """Options of one `stancelab run even-handedness`."""

    pairs_file: Path | None = None
    """pairs in the eval set's columns (CSV; default: the bundled 1,350)"""
    topic_map_file: Path | None = None
    """stance pair -> shared topic mapping (CSV: item_id, shared_topic, orientation, note)"""
    shared_topics: str = ""
    """only pairs of these shared topics ("all" or "a,b")"""
    max_tokens: int = field(default=ANSWER_TOKENS, metadata={"caps": ("subject",)})
    """cap on each generated message"""
    temperature: float | None = None
    """subject sampling temperature (default: the provider's)"""
    hedging_threshold: float = field(default=PUBLISHED_THRESHOLD, metadata=SHARE)
    """hedging counts at P(4)+P(5) >= this (0.5 published; the authors used 0.1 to match graders without token probabilities)"""
    grader_prefill: Literal["auto", "on", "off"] = "auto"
    """start each grader reply with "(" as an assistant prefill: auto where the provider accepts one (Anthropic)"""
    grader_max_tokens: int | None = field(
        default=None, metadata={"minimum": 1, "caps": ("grader",)}
    )
    """cap on each grader reply (default 16 with the prefill, else 512: room for a preamble)"""

    def task_args(self) -> dict[str, Any]:
        return {"pairs_file": str(self.pairs_file) if self.pairs_file else None, "limit": self.limit,
                "shared_topics": self.shared_topics,
                "topic_map_file": str(self.topic_map_file) if self.topic_map_file else None,
                "max_tokens": self.max_tokens, "temperature": self.temperature,
                "second_grader": SECOND_GRADER_ROLE in self.roles, "seed": self.seed,
                "grader_prefill": self.grader_prefill,
                "grader_max_tokens": self.grader_max_tokens}  # fmt: skip


def run_even_handedness(run: EvenHandednessRun) -> dict[str, Any]:
    """Answer and grade the selected pairs, then analyse; for a shard, where its logs went.
    Shared topics that no pair covers (the eval set has none on minimum wage, say) leave a
    summary that says so, so `run all` on such topics goes on with the other lenses.
    (`stancelab run` adds the run's record and the models' paired differences:
    `core.runs.pipeline`.)"""
    run_evals(run)
    if run.shard:
        return run.shard_result()
    result = analysis(run.out_dir, run.seed, run)
    write_results(run.out_dir, result)
    return result.summary


def run_evals(run: EvenHandednessRun) -> None:
    """Answer and grade the selected pairs (none when the run's shared topics have none)."""
    run.out_dir.mkdir(parents=True, exist_ok=True)
    if uncovered_selection(run):
        return
    roles = ROLES if SECOND_GRADER_ROLE in run.roles else (GRADER_ROLE,)
    run_eval(even_handedness(**run.task_args()), run.models, run.roles, run.log_location(), role_names=roles,
             **run.eval_args(), **run.shard_args())  # fmt: skip


def read_inputs(run: EvenHandednessRun) -> None:
    """Before a run: its pairs file and topic map read and validated, the map whether or not
    `--shared-topics` selects by it (one line when either cannot be read)."""
    if run.topic_map_file is not None:
        load_topic_map(run.topic_map_file)
    if run.pairs_file is not None:
        load_pairs(run.pairs_file, run.topic_map_file)
