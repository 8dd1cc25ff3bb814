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
    def exact(cls, task: str, role: str, calls: int, input_tokens: int, max_tokens: int) -> PlannedCalls:
        return cls(task, role, calls, calls, input_tokens, calls * max_tokens)


def sample_input_tokens(task: Any) -> tuple[int, int]:
    """(samples, input tokens of all sample prompts) of an Inspect task's dataset."""
    count, total = 0, 0
    for sample in task.dataset:
        text = sample.input if isinstance(sample.input, str) else "\n".join(m.text for m in sample.input)
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
            usd = (plan.input_tokens * price[0] + plan.output_tokens_max * price[1]) / 1e6 if price else math.nan
            rows.append({"subject_model": subject, "model": model, **plan.__dict__, "usd_max": usd})
    return pd.DataFrame(rows)


def format_plan(frame: pd.DataFrame) -> str:
    """A printable plan with totals."""
    calls_min, calls_max = int(frame["calls_min"].sum()), int(frame["calls_max"].sum())
    calls = f"{calls_min}" if calls_min == calls_max else f"{calls_min}-{calls_max}"
    priced = frame["usd_max"].notna().all()
    usd = f"at most ${frame['usd_max'].sum():.2f}" if priced else "unknown (give --price MODEL=IN,OUT)"
    return "\n".join([
        frame.to_string(index=False),
        "",
        f"total: {calls} calls, about {int(frame['input_tokens'].sum()):,} input tokens, "
        f"at most {int(frame['output_tokens_max'].sum()):,} output tokens; cost {usd}.",
        f"Input tokens are counted from the prompts at ~{CHARS_PER_TOKEN} characters per token; "
        "output tokens are the max_tokens caps. Multi-turn context is counted as it grows, "
        "with every earlier message at its cap. Answers already in Inspect's cache cost nothing.",
    ])  # fmt: skip
