"""What model calls cost, in USD per million tokens: `--price MODEL=IN,OUT` first, else the
maintained table of genai-prices for known models (its data ships in the wheel; stancelab never
fetches prices and never starts its auto-update), local in-process models free, others unknown.

A batch call (`--batch`) pays the table's batch price where it has one, else the share of the
standard price its provider documents for its batch API, named; a provider Inspect has no
batch API for pays the standard price."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from decimal import Decimal
from functools import cache
from typing import Any

LIBRARY = "genai-prices"
LOCAL_PREFIXES = ("embedded/", "mockllm/")
"""in-process models: no provider bills them"""
BATCH_CONTEXT = {"processing": "batch"}
"""genai-prices' request context of a batch call"""
BATCH_TURNAROUND_H = 24
"""the completion window OpenAI, Anthropic and Google give a batch (most finish sooner)"""


@dataclass(frozen=True)
class Provider:
    """How an Inspect provider is priced and batched."""

    prices_id: str
    """the provider's id in genai-prices"""
    name: str
    batches: bool = False
    """whether Inspect sends this provider's calls to its batch API under `--batch`"""
    batch_share: float | None = None
    """share of the standard price a batch call pays, as the provider documents it"""


# Inspect's provider prefix -> the price table's provider. Batch: the providers Inspect has a
# batcher for (OpenAI, Anthropic, Google, xAI, Together); the documented discounts are those of
# OpenAI's Batch API, Anthropic's Message Batches and Google's Gemini Batch Mode (50% each).
PROVIDERS: dict[str, Provider] = {
    "openai": Provider("openai", "OpenAI", batches=True, batch_share=0.5),
    "anthropic": Provider("anthropic", "Anthropic", batches=True, batch_share=0.5),
    "google": Provider("google", "Google", batches=True, batch_share=0.5),
    "grok": Provider("x-ai", "xAI", batches=True),
    "together": Provider("together", "Together", batches=True),
    "mistral": Provider("mistral", "Mistral"),
    "groq": Provider("groq", "Groq"),
    "fireworks": Provider("fireworks", "Fireworks"),
    "openrouter": Provider("openrouter", "OpenRouter"),
    "perplexity": Provider("perplexity", "Perplexity"),
    "bedrock": Provider("aws", "AWS Bedrock"),
    "azureai": Provider("azure", "Azure AI"),
    "cf": Provider("cloudflare", "Cloudflare"),
}
OPENAI_API = "openai-api"
"""Inspect's OpenAI-compatible provider: `openai-api/<provider>/<model>`"""


@dataclass(frozen=True)
class Price:
    """USD per million tokens of one model's calls, and where the figures come from."""

    input: float
    output: float
    cached_input: float | None = None
    """a cache read's price (None: billed as input)"""
    cache_write: float | None = None
    """a cache write's price (None: billed as input)"""
    source: str = "--price"
    batch: str | None = None
    """how the batch price was found (None: not a batch price)"""

    def usd(self, input_tokens: float, output_tokens: float, cached_tokens: float = 0.0,
            written_tokens: float = 0.0) -> float:  # fmt: skip
        """The cost of these tokens (input excludes cache reads and writes, as Inspect counts)."""
        cached = self.input if self.cached_input is None else self.cached_input
        written = self.input if self.cache_write is None else self.cache_write
        return (input_tokens * self.input + output_tokens * self.output
                + cached_tokens * cached + written_tokens * written) / 1e6  # fmt: skip

    def scaled(self, share: float, how: str) -> Price:
        """This price times `share` (a documented batch discount)."""

        def times(value: float | None) -> float | None:
            return None if value is None else value * share

        return replace(self, input=self.input * share, output=self.output * share,
                       cached_input=times(self.cached_input), cache_write=times(self.cache_write),
                       batch=how)  # fmt: skip


Prices = dict[str, tuple[float, float]]
"""`--price`: model -> (USD per 1M input, per 1M output tokens)"""


def provider_of(model: str) -> tuple[Provider | None, str]:
    """(the table's provider, the model's name there) of an Inspect model string; (None, model)
    for a provider the table does not know (vllm/, ollama/, hf/, ...)."""
    prefix, _, rest = model.partition("/")
    if prefix == OPENAI_API:
        name, _, ref = rest.partition("/")
        known = _library_provider(name)
        return (Provider(known, name) if known and ref else None), ref or rest
    return PROVIDERS.get(prefix), rest


def batches(model: str) -> bool:
    """Whether Inspect sends this model's calls to a batch API under `--batch`."""
    provider, _ = provider_of(model)
    return provider is not None and provider.batches


def price_of(model: str, overrides: Prices | None = None, batch: bool = False) -> Price | None:
    """A model's price per call kind: `--price` first, else the table's; local models are
    free; None when unknown. With `batch`, the batch price (see the module's docstring)."""
    overrides = overrides or {}
    if model in overrides:
        per_input, per_output = overrides[model]
        standard = Price(float(per_input), float(per_output), source="--price")
        return _batch_from_discount(standard, model) if batch else standard
    if model.startswith(LOCAL_PREFIXES):
        return Price(0.0, 0.0, 0.0, 0.0, source="local (free)")
    provider, ref = provider_of(model)
    if provider is None or not ref:
        return None
    standard = _table_price(provider.prices_id, ref, None)
    if standard is None or not batch:
        return standard
    batched = _table_price(provider.prices_id, ref, BATCH_CONTEXT) if provider.batches else None
    if batched is not None and batched != standard:
        return replace(batched, batch=f"the {LIBRARY} batch price")
    return _batch_from_discount(standard, model)


def _batch_from_discount(standard: Price, model: str) -> Price:
    provider, _ = provider_of(model)
    if provider is None or not provider.batches:
        name = provider.name if provider else model.partition("/")[0]
        return replace(standard, batch=f"standard price: Inspect has no batch API for {name}")
    if provider.batch_share is None:
        return replace(standard, batch=f"standard price: no batch price known for {provider.name}")
    return standard.scaled(provider.batch_share, f"{provider.name}'s documented batch discount "
                                                 f"({1 - provider.batch_share:.0%} off)")  # fmt: skip


def _table_price(provider_id: str, ref: str, context: dict[str, str] | None) -> Price | None:
    """The table's price of a model now (base tier: prompts below the long-context tiers)."""
    from genai_prices import Usage, calc_price

    try:
        found = calc_price(Usage(), ref, provider_id=provider_id, price_context=context)
    except LookupError:
        return None
    prices = found.model_price
    per_input, per_output = _per_mtok(prices, "input_mtok"), _per_mtok(prices, "output_mtok")
    if per_input is None or per_output is None:
        return None
    return Price(per_input, per_output, _per_mtok(prices, "cache_read_mtok"),
                 _per_mtok(prices, "cache_write_mtok"), source=table_source())  # fmt: skip


def _per_mtok(prices: Any, key: str) -> float | None:
    value = getattr(prices, key, None)
    value = getattr(value, "base", value)  # tiered: the base tier's price
    return float(value) if isinstance(value, Decimal | int | float) else None


@cache
def _library_provider(name: str) -> str | None:
    from genai_prices.data_snapshot import find_provider_by_id, get_snapshot

    found = find_provider_by_id(get_snapshot().providers, name)
    return found.id if found else None


@cache
def table_source() -> str:
    """'genai-prices X.Y (data of DATE)': the library's version and its data's date (the latest
    date its price notes were checked on, none after today)."""
    from genai_prices import __version__
    from genai_prices.data_snapshot import get_snapshot

    return f"{LIBRARY} {__version__} (data of {_data_date(get_snapshot().providers)})"


DATE = re.compile(r"\b(20\d\d)-(\d\d)-(\d\d)\b")


def _data_date(providers: list[Any]) -> str:
    today = datetime.now(UTC).date()
    notes = [provider.price_comments or "" for provider in providers]
    notes += [model.price_comments or "" for provider in providers for model in provider.models]
    dates = []
    for match in DATE.finditer("\n".join(notes)):
        try:
            dates.append(date(*(int(part) for part in match.groups())))
        except ValueError:
            continue
    past = [day for day in dates if day <= today]
    return max(past).isoformat() if past else "unknown"
