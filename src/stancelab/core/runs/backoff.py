"""The back-off before Inspect retries a failed model call (a provider's `retry_wait`).

Inspect retries a call after 3 s, doubling each time, with up to 3 s of jitter, and the
calling sample keeps the model's connection slot while it waits. (A provider's SDK may
retry first: the openai client retries a 429 or 5xx twice after 0.5-1 s; Inspect's retries
take what is left, above all stalled attempts abandoned at the attempt timeout.) Under
20% faults those idle slots were most of the run. stancelab waits RETRY_WAIT seconds before
the first retry, doubling per retry, with up to as much jitter, at most MAX_WAIT, and never
less than the server's `Retry-After`. `--retry-wait` sets the first wait (3 is Inspect's
own). Providers that set a wait of their own keep it.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

from inspect_ai.model import Model, ModelAPI
from tenacity import RetryCallState
from tenacity.wait import wait_base

RETRY_WAIT = 0.5  # seconds before the first retry (the openai SDK's own first wait)
MAX_WAIT = 30 * 60.0  # Inspect's cap


class RetryAfterOrExponential(wait_base):
    """`initial` x 2^(retry - 1) plus up to `initial` of jitter, capped at `maximum`, and
    never less than the failed response's Retry-After."""

    def __init__(self, initial: float = RETRY_WAIT, maximum: float = MAX_WAIT,
                 rng: random.Random | None = None) -> None:  # fmt: skip
        self.initial, self.maximum = initial, maximum
        self.rng = rng or random.Random()

    def __call__(self, retry_state: RetryCallState) -> float:
        retry = max(1, retry_state.attempt_number)
        exponential = self.initial * 2 ** min(retry - 1, 60) + self.rng.uniform(0, self.initial)
        outcome = retry_state.outcome
        error = outcome.exception() if outcome is not None and outcome.failed else None
        return min(self.maximum, max(exponential, retry_after_seconds(error)))


def retry_after_seconds(error: BaseException | None, now: datetime | None = None) -> float:
    """Seconds the server asked to wait in the error's response (`retry-after-ms`, or
    `retry-after` in seconds or as an HTTP date); 0 when it asked nothing."""
    headers = getattr(getattr(error, "response", None), "headers", None)
    if headers is None:
        return 0.0
    milliseconds = _number(headers.get("retry-after-ms"))
    if milliseconds is not None:
        return max(0.0, milliseconds / 1000)
    value = headers.get("retry-after")
    seconds = _number(value)
    if seconds is not None:
        return max(0.0, seconds)
    try:
        when = parsedate_to_datetime(str(value))
    except (TypeError, ValueError):
        return 0.0
    now = now or datetime.now(UTC)
    return max(0.0, (when - now).total_seconds())


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def apply_retry_wait(models: Iterable[str | Model], initial: float) -> list[Model]:
    """The models as new Inspect Model instances (never Inspect's memoized ones, which keep
    the endpoint of an earlier run) whose providers wait `initial` seconds, then doubling,
    before a retry; a provider with a wait of its own keeps it."""
    from inspect_ai.model import get_model

    resolved = [get_model(model, memoize=False) for model in models]
    for model in resolved:
        api = model.api
        if type(api).retry_wait is ModelAPI.retry_wait:
            wait = RetryAfterOrExponential(initial)
            api.retry_wait = lambda wait=wait: wait  # type: ignore[method-assign]
    return resolved
