"""Predicting a run's model calls and tokens before it starts (`stancelab estimate`).

Input tokens are counted from the real prompts at about 4 characters per token (the usual
rule of thumb for English; a provider's tokenizer can differ by 10-30%). Output tokens are
the per-call cap (`max_tokens`), so they are an upper bound. Calls whose number depends on
what a model answers (e.g. follow-ups only for a readable opinion) are given as a range."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

CHARS_PER_TOKEN = 4
COLUMNS = ["task", "role", "calls_min", "calls_max", "input_tokens", "output_tokens_max"]


def tokens(text: str) -> int:
    """Approximate token count of a text."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


@dataclass(frozen=True)
class PlannedCalls:
    """Calls one role makes in one task, for one subject model."""

    task: str
    role: str
    calls_min: int
    calls_max: int
    input_tokens: int
    output_tokens_max: int

    @classmethod
    def exact(
        cls, task: str, role: str, calls: int, input_tokens: int, max_tokens: int
    ) -> PlannedCalls:
        return cls(task, role, calls, calls, input_tokens, calls * max_tokens)


def sample_input_tokens(task: Any) -> tuple[int, int]:
    """(samples, input tokens of all sample prompts) of an Inspect task's dataset."""
    count, total = 0, 0
    for sample in task.dataset:
        text = (
            sample.input
            if isinstance(sample.input, str)
            else "\n".join(m.text for m in sample.input)
        )
        count += 1
        total += tokens(text)
    return count, total


FREE_PREFIXES = ("embedded/", "mockllm/")


def price_of(model: str, prices: dict[str, tuple[float, float]]) -> tuple[float, float] | None:
    """(USD per 1M input, per 1M output) for a model; local models are free; None if unknown."""
    if model in prices:
        return prices[model]
    if model.startswith(FREE_PREFIXES):
        return (0.0, 0.0)
    return None


def plan_frame(
    plans: list[PlannedCalls], models: list[str], prices: dict[str, tuple[float, float]],
    role_models: dict[str, str],
) -> pd.DataFrame:  # fmt: skip
    """One row per (subject model, task, role): calls, tokens, and USD where priced."""
    rows = []
    for subject in models:
        for plan in plans:
            model = role_models.get(plan.role, subject)
            price = price_of(model, prices)
            usd = (
                (plan.input_tokens * price[0] + plan.output_tokens_max * price[1]) / 1e6
                if price
                else math.nan
            )
            rows.append({"subject_model": subject, "model": model, **plan.__dict__, "usd_max": usd})
    return pd.DataFrame(rows)


def format_plan(frame: pd.DataFrame) -> str:
    """A printable plan with totals."""
    calls_min, calls_max = int(frame["calls_min"].sum()), int(frame["calls_max"].sum())
    calls = f"{calls_min}" if calls_min == calls_max else f"{calls_min}-{calls_max}"
    priced = frame["usd_max"].notna().all()
    usd = (
        f"at most ${frame['usd_max'].sum():.2f}"
        if priced
        else "unknown (give --price MODEL=IN,OUT)"
    )
    return "\n".join([
        frame.to_string(index=False),
        "",
        f"total: {calls} calls, about {int(frame['input_tokens'].sum()):,} input tokens, "
        f"at most {int(frame['output_tokens_max'].sum()):,} output tokens; cost {usd}.",
        f"Input tokens are counted from the prompts at ~{CHARS_PER_TOKEN} characters per token; "
        "output tokens are the max_tokens caps. Multi-turn context is counted as it grows, "
        "with every earlier message at its cap. Answers already in Inspect's cache cost nothing.",
    ])  # fmt: skip


# Wall time and cost from a calibration run: what calls cost when measured, not capped.

DEFAULT_CONNECTIONS = 10
"""Inspect's default `max_connections`"""
SUBJECT_ROLE = "subject"
"""the role of a call without a model role (the subject model's own)"""
ALL_ROLES = "*"
HARNESS_BOUND_SHARE = 0.8
"""a calibration run that reached less than this share of concurrency / latency calls per
second was held back by the harness (CPU), not by the server"""


@dataclass(frozen=True)
class Calibration:
    """Model calls measured in the logs of an earlier (or a small calibration) run."""

    calls: int
    """calls the provider answered (cache reads and failed calls left out)"""
    seconds_per_call: float
    """mean time a call took (Inspect's working time of the model event)"""
    wall_s: float
    """the evals' wall time, summed over logs"""
    concurrency: int
    """max_connections the run had (the largest over its logs)"""
    tokens_per_call: dict[str, tuple[float, float]]
    """role (and `*` for all) -> mean (input, output) tokens per call"""

    @property
    def calls_per_s(self) -> float:
        return self.calls / self.wall_s

    @property
    def harness_bound(self) -> bool:
        """Whether the run fell well short of the rate its concurrency and latency allow."""
        return self.calls_per_s < HARNESS_BOUND_SHARE * self.concurrency / self.seconds_per_call


def read_calibration(logs: Any) -> Calibration:
    """The calibration of the successful logs under a folder (a run folder or its `logs/`)."""
    from pathlib import Path

    from inspect_ai.event import ModelEvent
    from inspect_ai.log import read_eval_log

    from stancelab.core.errors import StancelabError
    from stancelab.core.results.logs import log_files

    folder = Path(logs)
    files = log_files(folder / "logs" if (folder / "logs").is_dir() else folder)
    calls: list[tuple[str, int, int, float]] = []
    wall, concurrency = 0.0, 0
    for path in files:
        log = read_eval_log(str(path))
        if log.status != "success" or not log.stats.started_at or not log.stats.completed_at:
            continue
        wall += (
            pd.Timestamp(log.stats.completed_at) - pd.Timestamp(log.stats.started_at)
        ).total_seconds()
        connections = log.eval.model_generate_config.max_connections or DEFAULT_CONNECTIONS
        concurrency = max(concurrency, connections)
        for sample in log.samples or []:
            for event in sample.events:
                if isinstance(event, ModelEvent) and event.cache != "read" and event.error is None:
                    usage = event.output.usage
                    calls.append((event.role or SUBJECT_ROLE, usage.input_tokens if usage else 0,
                                  usage.output_tokens if usage else 0, event.working_time or 0.0))  # fmt: skip
    if not calls or wall <= 0:
        raise StancelabError(
            f"No model calls answered by a provider in finished logs under {logs}."
        )
    frame = pd.DataFrame(calls, columns=["role", "input", "output", "seconds"])
    per_role = {
        role: (group["input"].mean(), group["output"].mean())
        for role, group in frame.groupby("role")
    }
    per_role[ALL_ROLES] = (frame["input"].mean(), frame["output"].mean())
    return Calibration(len(frame), float(frame["seconds"].mean()), wall, concurrency, per_role)


@dataclass(frozen=True)
class WallTime:
    """Predicted wall time of `calls` calls."""

    latency_bound_s: float
    """calls x latency / (concurrency x workers): the server's limit"""
    harness_bound_s: float | None
    """calls / (the calibration's calls per second x workers), when the calibration was
    held back by the harness; None when it was not (the harness's limit is then unknown)"""

    @property
    def seconds(self) -> float:
        return max(self.latency_bound_s, self.harness_bound_s or 0.0)

    @property
    def bound(self) -> str:
        return (
            "harness (CPU)" if (self.harness_bound_s or 0.0) > self.latency_bound_s else "latency"
        )


def predict_wall(calls: int, calibration: Calibration, concurrency: int, workers: int) -> WallTime:
    """Wall time of `calls` calls at `concurrency` connections in each of `workers` processes:
    the larger of the server's limit and (when measured) the harness's, each worker adding its
    own concurrency and, on its own core, its own harness capacity."""
    latency_bound = calls * calibration.seconds_per_call / (concurrency * workers)
    harness = calls / (calibration.calls_per_s * workers) if calibration.harness_bound else None
    return WallTime(latency_bound, harness)


def measured_usd(frame: pd.DataFrame, calibration: Calibration,
                 prices: dict[str, tuple[float, float]]) -> tuple[float, float] | None:  # fmt: skip
    """(lowest, highest) USD of the planned calls at the calibration's tokens per call (per
    role where measured, else over all calls); None when a model is unpriced."""
    low = high = 0.0
    for row in frame.itertuples(index=False):
        price = price_of(str(row.model), prices)
        if price is None:
            return None
        tokens_in, tokens_out = calibration.tokens_per_call.get(
            str(row.role), calibration.tokens_per_call[ALL_ROLES]
        )
        per_call = (tokens_in * price[0] + tokens_out * price[1]) / 1e6
        low, high = low + row.calls_min * per_call, high + row.calls_max * per_call
    return low, high


def format_calibrated(frame: pd.DataFrame, calibration: Calibration, prices: dict[str, tuple[float, float]],
                      concurrency: int | None, workers: int | None, source: str) -> str:  # fmt: skip
    """The wall time and cost lines of a plan, from a calibration."""
    connections, processes = concurrency or DEFAULT_CONNECTIONS, workers or 1
    low = predict_wall(int(frame["calls_min"].sum()), calibration, connections, processes)
    high = predict_wall(int(frame["calls_max"].sum()), calibration, connections, processes)
    held = (
        "held back by the harness" if calibration.harness_bound else "not held back by the harness"
    )
    usd = measured_usd(frame, calibration, prices)
    cost = (
        (_usd(usd[0]) if usd[0] == usd[1] else f"{_usd(usd[0])}-{_usd(usd[1])}")
        if usd
        else "unknown (give --price MODEL=IN,OUT)"
    )
    wall = (
        _duration(low.seconds)
        if low.seconds == high.seconds
        else f"{_duration(low.seconds)}-{_duration(high.seconds)}"
    )
    return "\n".join([
        f"Calibration ({source}): {calibration.calls:,} calls, {calibration.seconds_per_call:.3g} s per "
        f"call, {calibration.calls_per_s:.3g} calls/s at concurrency {calibration.concurrency} ({held}).",
        f"Predicted wall time at concurrency {connections} x {processes} worker(s): {wall}, "
        f"bound by {high.bound}"
        + ("" if calibration.harness_bound else " (the harness's limit was not reached in the "
           "calibration, so this is a lower bound)") + ".",
        f"Predicted cost at the calibration's tokens per call: {cost}. Each worker is assumed to "
        "have its own core; cached answers cost nothing and take no time.",
    ])  # fmt: skip


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _usd(amount: float) -> str:
    return f"${amount:,.2f}" if amount >= 1 else f"${amount:.3g}"
