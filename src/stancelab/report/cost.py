"""Tokens per role per model, read from Inspect log headers, and dollars where priced."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
from inspect_ai.log import read_eval_log

from stancelab.core.results.logs import log_files
from stancelab.core.runs.estimate import price_of

COLUMNS = ["probe", "subject_model", "role", "model", "input_tokens", "output_tokens", "usd"]


def _usage_rows(probe: str, path: Path) -> list[dict]:
    header = read_eval_log(str(path), header_only=True)
    subject = header.eval.model
    role_models = {role: config.model for role, config in (header.eval.model_roles or {}).items()}
    rows, helper_by_model = [], {}
    for role, usage in (header.stats.role_usage or {}).items():
        model = role_models.get(role, subject)
        rows.append({"probe": probe, "subject_model": subject, "role": role, "model": model,
                     "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens})  # fmt: skip
        spent = helper_by_model.setdefault(model, [0, 0])
        spent[0] += usage.input_tokens
        spent[1] += usage.output_tokens
    for model, usage in (header.stats.model_usage or {}).items():
        spent = helper_by_model.get(model, [0, 0])
        rest_in, rest_out = usage.input_tokens - spent[0], usage.output_tokens - spent[1]
        if rest_in > 0 or rest_out > 0:
            role = "subject" if model == subject else "other"
            rows.append({"probe": probe, "subject_model": subject, "role": role, "model": model,
                         "input_tokens": rest_in, "output_tokens": rest_out})  # fmt: skip
    return rows


def token_usage(
    runs: list[tuple[str, Path]], prices: dict[str, tuple[float, float]] | None = None
) -> pd.DataFrame:
    """Tokens billed per (probe, subject model, role, model) over every log of the runs
    (reruns included; answers served from Inspect's cache are not billed and not counted)."""
    rows = [row for probe, folder in runs for path in log_files(folder / "logs")
            for row in _usage_rows(probe, path)]  # fmt: skip
    if not rows:
        return pd.DataFrame(columns=COLUMNS)
    table = pd.DataFrame(rows).groupby(COLUMNS[:4], as_index=False)[COLUMNS[4:6]].sum()

    def usd(row: pd.Series) -> float:
        price = price_of(row["model"], prices or {})
        if price is None:
            return math.nan
        return (row["input_tokens"] * price[0] + row["output_tokens"] * price[1]) / 1e6

    table["usd"] = [usd(row) for _, row in table.iterrows()]
    return table[COLUMNS]
