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

from stancelab.core.runs.caps import EmbeddedCaps, is_embedded_name
from stancelab.core.runs.prices import BATCH_TURNAROUND_H, Price, Prices, batches, price_of

CHARS_PER_TOKEN = 4
COLUMNS = ["task", "role", "calls_min", "calls_max", "input_tokens", "output_tokens_max", "rounds"]


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
    rounds: int = 1
    """calls of this role in one sample that wait one on another (turns of a conversation):
    under `--batch` each is a batch of its own"""

    @classmethod
    def exact(
        cls, task: str, role: str, calls: int, input_tokens: int, max_tokens: int, rounds: int = 1
    ) -> PlannedCalls:
        return cls(task, role, calls, calls, input_tokens, calls * max_tokens, rounds)


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


def plan_frame(
    plans: list[PlannedCalls], models: list[str], prices: Prices, role_models: dict[str, str],
    batch: bool = False,
) -> pd.DataFrame:  # fmt: skip
    """One row per (subject model, task, role): calls, tokens, and USD where priced (at the
    batch price with `batch`); `rounds` is how many of the role's calls wait one on another."""
    rows = []
    for subject in models:
        for plan in plans:
            model = role_models.get(plan.role, subject)
            price = price_of(model, prices, batch)
            usd = price.usd(plan.input_tokens, plan.output_tokens_max) if price else math.nan
            rows.append({"subject_model": subject, "model": model, **plan.__dict__, "usd_max": usd})
    return pd.DataFrame(rows)


def capped_on_embedded(frame: pd.DataFrame, caps: EmbeddedCaps) -> pd.DataFrame:
    """`frame` with each embedded model's output tokens at most its caps (`core.runs.caps`:
    what a run of it generates), where they are lower than the method's."""
    embedded = frame["model"].map(lambda model: is_embedded_name(str(model)))
    cap = frame["role"].map(lambda role: caps.for_role(str(role))).astype("float")
    ceiling = (frame["calls_max"] * cap).where(embedded)
    capped = frame.copy()
    capped["output_tokens_max"] = (
        frame["output_tokens_max"]
        .where(ceiling.isna() | (frame["output_tokens_max"] <= ceiling), ceiling)
        .astype(int)
    )
    return capped


def format_plan(frame: pd.DataFrame, prices: Prices | None = None, batch: bool = False) -> str:
    """A printable plan with totals, the prices used and where they come from."""
    calls_min, calls_max = int(frame["calls_min"].sum()), int(frame["calls_max"].sum())
    calls = f"{calls_min}" if calls_min == calls_max else f"{calls_min}-{calls_max}"
    shown = frame.drop(columns=["rounds"])
    return "\n".join([
        shown.to_string(index=False),
        "",
        f"total: {calls} calls, about {int(frame['input_tokens'].sum()):,} input tokens, "
        f"at most {int(frame['output_tokens_max'].sum()):,} output tokens; cost {_plan_cost(frame, prices, batch)}.",
        *price_lines(sorted(set(frame["model"])), prices, batch),
        f"Input tokens are counted from the prompts at ~{CHARS_PER_TOKEN} characters per token; "
        "output tokens are the max_tokens caps. Multi-turn context is counted as it grows, "
        "with every earlier message at its cap, and none of it as a cache read (the providers' "
        "prompt caches only lower this). Answers already in Inspect's cache cost nothing.",
    ])  # fmt: skip


def _plan_cost(frame: pd.DataFrame, prices: Prices | None, batch: bool) -> str:
    if not frame["usd_max"].notna().all():
        return "unknown (give --price MODEL=IN,OUT)"
    cost = f"at most {_usd(float(frame['usd_max'].sum()))}"
    if not batch:
        return cost
    standard = 0.0
    for row in frame.itertuples(index=False):
        price = price_of(str(row.model), prices)
        standard += price.usd(row.input_tokens, row.output_tokens_max) if price else math.nan
    return f"{cost} with --batch ({_usd(standard)} without)"


def price_lines(models: list[str], prices: Prices | None, batch: bool = False) -> list[str]:
    """One line per model: its price per 1M tokens and the price's source, or why unknown."""
    lines = []
    for model in models:
        price = price_of(model, prices)
        if price is None:
            lines.append(f"prices: {model}: cost unknown (not in the price table; give "
                         f"--price {model}=IN,OUT in USD per 1M tokens)")  # fmt: skip
            continue
        line = f"prices: {model}: {_rates(price)} per 1M tokens, from {price.source}"
        batched = price_of(model, prices, batch=True) if batch else None
        if batched is not None:
            line += f"; batch: {_rates(batched)} ({batched.batch})"
        lines.append(line)
    return lines


def _rates(price: Price) -> str:
    cached = "" if price.cached_input is None else f", {_rate(price.cached_input)} cached input"
    return f"{_rate(price.input)} input, {_rate(price.output)} output{cached}"


def _rate(value: float) -> str:
    return f"${value:.4g}"


def batch_lines(frame: pd.DataFrame) -> list[str]:
    """What `--batch` means for the plan's calls: each call waits in the provider's batch queue
    (up to BATCH_TURNAROUND_H hours), and a call that needs an earlier one's answer waits for
    that batch first, so the turnaround multiplies by the calls that wait one on another."""
    one_subject = frame[frame["subject_model"] == frame["subject_model"].iloc[0]]
    per_role = one_subject.groupby(["task", "role"], sort=False, as_index=False)["rounds"].sum()
    lines = ["batch: every call can go to the provider's batch API, but a call that needs an "
             "earlier answer waits for that answer's batch; calls one after another per sample:"]  # fmt: skip
    for task, roles in per_role.groupby("task", sort=False):
        steps = ", ".join(f"{row.role} {row.rounds}" for row in roles.itertuples(index=False))
        lines.append(f"  {task}: {int(roles['rounds'].sum())} ({steps})")
    rounds = int(per_role["rounds"].sum())
    lines.append(f"batch turnaround: up to {rounds} x {BATCH_TURNAROUND_H} h = {rounds * BATCH_TURNAROUND_H} h "
                 f"(providers complete a batch within {BATCH_TURNAROUND_H} h, often within an hour; "
                 "--max-connections caps the calls a batch holds)")  # fmt: skip
    unbatched = sorted({model for model in frame["model"] if not batches(str(model))})
    if unbatched:
        lines.append(f"not batched (Inspect has no batch API for them): {', '.join(unbatched)}")
    return lines


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
    """the evals' wall time: the time some log's eval was running (evals run side by side
    counted once)"""
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
    spans: list[tuple[pd.Timestamp, pd.Timestamp]] = []
    concurrency = 0
    for path in files:
        log = read_eval_log(str(path))
        if log.status != "success" or not log.stats.started_at or not log.stats.completed_at:
            continue
        spans.append((pd.Timestamp(log.stats.started_at), pd.Timestamp(log.stats.completed_at)))
        connections = log.eval.model_generate_config.max_connections or DEFAULT_CONNECTIONS
        concurrency = max(concurrency, connections)
        for sample in log.samples or []:
            for event in sample.events:
                if isinstance(event, ModelEvent) and event.cache != "read" and event.error is None:
                    usage = event.output.usage
                    calls.append((event.role or SUBJECT_ROLE, usage.input_tokens if usage else 0,
                                  usage.output_tokens if usage else 0, event.working_time or 0.0))  # fmt: skip
    wall = covered_seconds(spans)
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


def covered_seconds(spans: list[tuple[pd.Timestamp, pd.Timestamp]]) -> float:
    """Seconds inside at least one (start, end) span: overlapping spans counted once."""
    covered, reached = 0.0, None
    for start, end in sorted(spans):
        if reached is not None and start < reached:
            start = reached
        if end > start:
            covered += (end - start).total_seconds()
            reached = end if reached is None else max(reached, end)
    return covered


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


def measured_usd(frame: pd.DataFrame, calibration: Calibration, prices: Prices,
                 batch: bool = False) -> tuple[float, float] | None:  # fmt: skip
    """(lowest, highest) USD of the planned calls at the calibration's tokens per call (per
    role where measured, else over all calls); None when a model is unpriced."""
    low = high = 0.0
    for row in frame.itertuples(index=False):
        price = price_of(str(row.model), prices, batch)
        if price is None:
            return None
        tokens_in, tokens_out = calibration.tokens_per_call.get(
            str(row.role), calibration.tokens_per_call[ALL_ROLES]
        )
        per_call = price.usd(tokens_in, tokens_out)
        low, high = low + row.calls_min * per_call, high + row.calls_max * per_call
    return low, high


def format_calibrated(frame: pd.DataFrame, calibration: Calibration, prices: Prices,
                      concurrency: int | None, workers: int | None, source: str,
                      batch: bool = False) -> str:  # fmt: skip
    """The wall time and cost lines of a plan, from a calibration."""
    connections, processes = concurrency or DEFAULT_CONNECTIONS, workers or 1
    low = predict_wall(int(frame["calls_min"].sum()), calibration, connections, processes)
    high = predict_wall(int(frame["calls_max"].sum()), calibration, connections, processes)
    held = (
        "held back by the harness" if calibration.harness_bound else "not held back by the harness"
    )
    usd = measured_usd(frame, calibration, prices, batch)
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
        *(["Under --batch the wall time is the batch turnaround, not this prediction; the cost is "
           "at the batch price."] if batch else []),
    ])  # fmt: skip


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _usd(amount: float) -> str:
    return f"${amount:,.2f}" if amount >= 1 else f"${amount:.3g}"
