"""A client-side rate limit per model (`--rpm N`: requests per minute).

A provider's quota answered with 429 costs a run far more than the refused requests: at 2 x
100 connections into a 3,000/min limit, 3.7 answers of 429 came back per paid call and the
run paid calls at half the quota (benchmarks/README.md, issue 37). So each HTTP attempt of a
model (a retry's included) first takes a token from that model's leaky bucket
(`aiolimiter`), which lets through `--rpm` requests a minute with bursts of at most
BURST_SECONDS of them.

- One bucket per model endpoint (provider, its connection key and base URL: what a quota
  counts), shared by the subject and every role the same model plays in the process.
- A run's quota is the whole run's: each of N shards or worker processes takes 1/N.
- Only real requests take a token: answers from Inspect's cache come before the bucket.
- The provider SDK's own retries (the openai and anthropic clients retry a 429 or 5xx twice)
  are turned off for a limited model, so that every retry is Inspect's and passes the bucket.
- A call waiting for a token holds its connection slot and its attempt's time: the adaptive
  attempt timeout allows for the longest wait (`queue_seconds`: every connection of the
  model waiting at once).
- Batched calls (`--batch`) are not limited: a batch API's quota is its own.
"""

from __future__ import annotations

import asyncio
import math
import weakref
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from aiolimiter import AsyncLimiter
from inspect_ai.model import Model, ModelAPI
from inspect_ai.util import AdaptiveConcurrency

# The longest burst the bucket lets through at once, in seconds of the rate: a quarter of the
# one second's burst a provider's bucket usually allows, so requests that reach it bunched
# by the network still find tokens there.
BURST_SECONDS = 0.25
LIMITED = "_stancelab_rate_limit"  # the attribute a limited ModelAPI keeps its bucket in


@dataclass(frozen=True)
class RateLimit:
    """A run's quota and this process's share of it."""

    total: float
    """requests per minute per model for the whole run"""
    processes: int = 1
    """the shards or workers that split it"""

    @property
    def per_minute(self) -> float:
        """This process's requests per minute per model."""
        return self.total / self.processes

    def header(self) -> str:
        """The run's header line."""
        share = (f", {_number(self.per_minute)} per process in each of {self.processes}"
                 if self.processes > 1 else "")  # fmt: skip
        return (f"rate limit: {_number(self.total)} requests/min per model (--rpm; the subject and "
                f"every role the same model plays share it{share}; each attempt and retry "
                "takes a token, cached answers none)")  # fmt: skip


def _number(value: float) -> str:
    """1,500 or 12.5: thousands separated, decimals only where there are some."""
    return f"{value:,.0f}" if value == round(value) else f"{value:,.4g}"


def rate_limit(rpm: float | None, shards: int = 1) -> RateLimit | None:
    """The run's rate limit (None: off) split over `shards` processes."""
    return None if rpm is None else RateLimit(float(rpm), max(1, shards))


@dataclass
class Bucket:
    """One model's leaky bucket: `per_minute` requests a minute, one limiter per event loop
    (an aiolimiter limiter belongs to the loop it first waited in; Inspect runs each eval in
    a loop of its own)."""

    per_minute: float
    limiters: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AsyncLimiter] = field(
        default_factory=weakref.WeakKeyDictionary
    )

    @property
    def per_second(self) -> float:
        return self.per_minute / 60

    def limiter(self) -> AsyncLimiter:
        loop = asyncio.get_running_loop()
        if loop not in self.limiters:
            burst = max(1.0, self.per_second * BURST_SECONDS)
            self.limiters[loop] = AsyncLimiter(burst, burst / self.per_second)
        return self.limiters[loop]

    async def acquire(self) -> None:
        await self.limiter().acquire()


# The buckets of this process, by endpoint and rate.
BUCKETS: dict[tuple[str, str, str, float], Bucket] = {}


def endpoint_key(api: ModelAPI) -> tuple[str, str, str]:
    """What a provider's quota counts: the provider class, its connection key (the model and
    the key, as Inspect pools connections) and the base URL."""
    return type(api).__name__, str(api.connection_key()), str(api.base_url)


def bucket_for(api: ModelAPI, per_minute: float) -> Bucket:
    key = (*endpoint_key(api), per_minute)
    if key not in BUCKETS:
        BUCKETS[key] = Bucket(per_minute)
    return BUCKETS[key]


def apply_rate_limit(models: Iterable[Model], limit: RateLimit | None) -> None:
    """Put each model's requests behind its endpoint's bucket (once per model), and turn its
    SDK's own retries off; nothing when `limit` is None or the model batches."""
    if limit is None:
        return
    for model in models:
        api = model.api
        if getattr(api, LIMITED, None) is not None or model.config.batch:
            continue
        bucket = bucket_for(api, limit.per_minute)
        api.generate = limited(api.generate, bucket)  # type: ignore[method-assign]
        setattr(api, LIMITED, bucket)
        sdk_retries_off(api)


def limited(generate: Callable[..., Awaitable[Any]],
            bucket: Bucket) -> Callable[..., Awaitable[Any]]:  # fmt: skip
    """`generate` that first waits for a token of `bucket`."""

    async def generate_limited(*args: Any, **kwargs: Any) -> Any:
        await bucket.acquire()
        return await generate(*args, **kwargs)

    return generate_limited


def sdk_retries_off(api: ModelAPI) -> None:
    """No retries inside the provider's SDK client (openai, anthropic and the providers built
    on them), whose retries would not pass the bucket: Inspect retries instead, after the
    server's Retry-After (`core.runs.backoff`). Clients without such a setting are left."""
    client = getattr(api, "client", None)
    if client is None or not hasattr(client, "with_options") or not hasattr(client, "max_retries"):
        return
    api.client = client.with_options(max_retries=0)  # type: ignore[attr-defined]
    model_args = getattr(api, "model_args", None)
    if isinstance(model_args, dict):  # a client made again (new credentials) keeps it
        model_args["max_retries"] = 0


def queue_seconds(models: Iterable[Model], connections: int | None) -> int:
    """The longest a call can wait for a token: every connection of a limited model waiting
    at once (`connections` per model, else Inspect's adaptive maximum), over its rate."""
    slots = connections or AdaptiveConcurrency().max
    waits = [slots / bucket.per_second for model in models
             if (bucket := getattr(model.api, LIMITED, None)) is not None]  # fmt: skip
    return math.ceil(max(waits, default=0.0))
