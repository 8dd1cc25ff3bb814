"""Tokens per role per model, read from Inspect log headers, and dollars where priced: `--price`
first, else the maintained price table (`core.runs.prices`), at the batch price for a run
made with `--batch`."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd

from stancelab.core.results.logs import log_files, log_header
from stancelab.core.runs.prices import Prices, price_of

TOKENS = ["input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens"]
KEYS = ["probe", "subject_model", "role", "model", "batch"]
COLUMNS = [*KEYS, *TOKENS, "usd", "price"]


def _tokens(usage: Any) -> list[int]:
    """(input less cache reads and writes, cache reads, cache writes, output), as Inspect counts."""
    return [usage.input_tokens, usage.input_tokens_cache_read or 0,
            usage.input_tokens_cache_write or 0, usage.output_tokens]  # fmt: skip


def _usage_rows(probe: str, path: Path) -> list[dict]:
    header = log_header(path)
    subject = header.eval.model
    batch = bool(header.eval.model_generate_config.batch)
    roles = {role: config for role, config in (header.eval.model_roles or {}).items()
             if not isinstance(config, list)}  # fmt: skip
    rows, helper_by_model = [], {}
    for role, usage in (header.stats.role_usage or {}).items():
        config = roles.get(role)
        model = config.model if config else subject
        batched = bool(config.config.batch) if config else batch
        spent = _tokens(usage)
        rows.append(dict(zip(KEYS, [probe, subject, role, model, batched], strict=True))
                    | dict(zip(TOKENS, spent, strict=True)))  # fmt: skip
        counted = helper_by_model.setdefault(model, [0] * len(TOKENS))
        helper_by_model[model] = [a + b for a, b in zip(counted, spent, strict=True)]
    for model, usage in (header.stats.model_usage or {}).items():
        counted = helper_by_model.get(model, [0] * len(TOKENS))
        rest = [a - b for a, b in zip(_tokens(usage), counted, strict=True)]
        if any(value > 0 for value in rest):
            role = "subject" if model == subject else "other"
            rows.append(dict(zip(KEYS, [probe, subject, role, model, batch], strict=True))
                        | dict(zip(TOKENS, [max(value, 0) for value in rest], strict=True)))  # fmt: skip
    return rows


def token_usage(runs: list[tuple[str, Path]], prices: Prices | None = None) -> pd.DataFrame:
    """Tokens billed per (probe, subject model, role, model, batch) over every log of the runs
    (reruns included; answers served from Inspect's cache are not billed and not counted),
    their dollars where the model's price is known and where that price comes from."""
    rows = [row for probe, folder in runs for path in log_files(folder / "logs")
            for row in _usage_rows(probe, path)]  # fmt: skip
    if not rows:
        return pd.DataFrame(columns=COLUMNS)
    table = pd.DataFrame(rows).groupby(KEYS, as_index=False)[TOKENS].sum()
    priced = [_priced(row, prices or {}) for _, row in table.iterrows()]
    table["usd"] = [usd for usd, _ in priced]
    table["price"] = [source for _, source in priced]
    return table[COLUMNS]


def _priced(row: pd.Series, prices: Prices) -> tuple[float, str]:
    price = price_of(str(row["model"]), prices, batch=bool(row["batch"]))
    if price is None:
        return math.nan, "cost unknown (give --price MODEL=IN,OUT)"
    usd = price.usd(row["input_tokens"], row["output_tokens"], row["cached_input_tokens"],
                    row["cache_write_tokens"])  # fmt: skip
    return usd, price.source + (f"; batch: {price.batch}" if price.batch else "")
