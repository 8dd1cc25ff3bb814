"""An attempt timeout set from the latency observed so far (Inspect's `attempt_timeout`).

A call that takes far longer than the calls around it (a stalled connection) is abandoned
and retried by Inspect. The timeout is ATTEMPT_FACTOR times the 95th percentile of the
last WINDOW successful calls' durations, at least MIN_ATTEMPT_TIMEOUT seconds; it is set
through Inspect's live `attempt_timeout` override once MIN_OBSERVATIONS calls have
answered, and cleared when the run ends. An explicit `--attempt-timeout` turns it off.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager

from inspect_ai.hooks import Hooks, ModelUsageData, hooks
from inspect_ai.model._generate_overrides import set_generate_config_override

ATTEMPT_FACTOR = 10
MIN_ATTEMPT_TIMEOUT = 2  # seconds; Inspect takes whole seconds
MIN_OBSERVATIONS = 20
WINDOW = 500
UPDATE_EVERY = 10  # calls between updates of the timeout


class _Observed:
    """Durations of recent successful calls, and the timeout they set."""

    def __init__(self) -> None:
        self.active = False
        self.durations: deque[float] = deque(maxlen=WINDOW)
        self.calls = 0
        self.timeout: int | None = None

    def reset(self, active: bool) -> None:
        self.active, self.calls, self.timeout = active, 0, None
        self.durations.clear()


OBSERVED = _Observed()


def attempt_timeout_for(durations: list[float]) -> int:
    """The attempt timeout (whole seconds) that these call durations set."""
    ranked = sorted(durations)
    p95 = ranked[min(len(ranked) - 1, math.ceil(0.95 * len(ranked)) - 1)]
    return max(MIN_ATTEMPT_TIMEOUT, math.ceil(ATTEMPT_FACTOR * p95))


def observe(duration: float) -> None:
    """Record one successful call; every UPDATE_EVERY calls, set the timeout they imply."""
    OBSERVED.durations.append(duration)
    OBSERVED.calls += 1
    if len(OBSERVED.durations) < MIN_OBSERVATIONS or OBSERVED.calls % UPDATE_EVERY:
        return
    timeout = attempt_timeout_for(list(OBSERVED.durations))
    if timeout != OBSERVED.timeout:
        OBSERVED.timeout = timeout
        set_generate_config_override("attempt_timeout", timeout)


@hooks(name="stancelab_adaptive_attempt_timeout", description="attempt timeout from observed latency")
class AdaptiveAttemptTimeout(Hooks):
    """Feeds each successful call's duration to `observe` while a run has it on."""

    def enabled(self) -> bool:
        return OBSERVED.active

    async def on_model_usage(self, data: ModelUsageData) -> None:
        observe(data.call_duration)


@contextmanager
def adaptive_attempt_timeout(active: bool = True) -> Iterator[None]:
    """Set the attempt timeout from observed latency for the calls made inside."""
    OBSERVED.reset(active)
    try:
        yield
    finally:
        if OBSERVED.timeout is not None:
            set_generate_config_override("attempt_timeout", None)
        OBSERVED.reset(False)
