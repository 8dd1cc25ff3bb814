"""The attempt timeout (Inspect's `attempt_timeout`): from the first call, then from the
latency observed.

A call that takes far longer than calls usually do (a stalled connection) is abandoned and
retried by Inspect. Before any call has answered, the timeout is ATTEMPT_FACTOR times the
usual latency of the slowest provider in the run (USUAL_LATENCY: generous for local servers
and in-process models), and at most half the run's `--timeout` (the whole call's budget, so
that a retry fits in it). Once MIN_OBSERVATIONS calls have answered it is ATTEMPT_FACTOR
times the 95th percentile of the last WINDOW successful calls' durations, at least
MIN_ATTEMPT_TIMEOUT seconds, updated every UPDATE_EVERY calls. Until then, an attempt
abandoned at the first timeout doubles it (at most once per timeout's length, up to
MAX_ATTEMPT_TIMEOUT), so a provider slower than its usual latency is not abandoned over and
over. Under a client-side rate limit (`--rpm`) every value adds the longest wait for a token
(`core.runs.rate_limit.queue_seconds`), which an attempt's time includes. Every value also adds
STALL_FACTOR times the longest time the run's event loop has been held (a full pass of the
garbage collector, a log flush: `watch_event_loop`), during which no answer can be read: a
process at full load on a fast server held its loop for 2-6 s at times, longer than the 2 s
floor, and every call in flight was abandoned and paid again. Every value is set through
Inspect's live `attempt_timeout` override and cleared when the run ends. An explicit
`--attempt-timeout` turns all of this off.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import deque
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from inspect_ai.hooks import Hooks, ModelRetry, ModelUsageData, RunEnd, RunStart, hooks

from stancelab.core.inspect_private import set_generate_config_override

ATTEMPT_FACTOR = 10
MIN_ATTEMPT_TIMEOUT = 2  # seconds; Inspect takes whole seconds
MAX_ATTEMPT_TIMEOUT = 3600  # seconds: the most that doubling the first timeout reaches
MIN_OBSERVATIONS = 20
WINDOW = 500
UPDATE_EVERY = 10  # calls between updates of the timeout
STALL_FACTOR = 2
MIN_STALL = 0.5  # seconds: a shorter hold of the event loop is a busy loop's usual scheduling
MAX_STALL = 60.0  # seconds: a longer hold (a suspended machine) counts as this long
WATCH_INTERVAL = 0.25  # seconds between the event loop watcher's wake-ups

# Seconds one call usually takes, by provider, before a call of the run has been timed. The
# first timeout is ATTEMPT_FACTOR times this: hosted APIs 3 min (the openai client's own
# limit is 10 min), servers on the user's hardware and in-process models 10 min (a CPU, a
# cold start or a queue of batched generations).
HOSTED_LATENCY = 18.0
LOCAL_LATENCY = 60.0
USUAL_LATENCY: dict[str, float] = {
    "mockllm": 1.0,
    **dict.fromkeys(
        ("openai-api", "vllm", "sglang", "ollama", "llama-cpp-python", "lmstudio"), LOCAL_LATENCY
    ),
    **dict.fromkeys(("embedded", "hf", "transformer_lens", "nnterp"), LOCAL_LATENCY),
}


class _Observed:
    """Durations of recent successful calls, and the timeout they set."""

    def __init__(self) -> None:
        self.active = False
        self.durations: deque[float] = deque(maxlen=WINDOW)
        self.calls = 0
        self.timeout: int | None = None
        self.set_at = 0.0  # time.monotonic() when the timeout was last set
        self.allowance = 0  # seconds added to every timeout: the longest wait for a token
        self.stall = 0.0  # the longest time the event loop was held in this run (seconds)

    def reset(self, active: bool, allowance: int = 0) -> None:
        self.active, self.calls, self.timeout, self.set_at = active, 0, None, 0.0
        self.allowance, self.stall = allowance, 0.0
        self.durations.clear()


OBSERVED = _Observed()


def attempt_timeout_for(durations: list[float]) -> int:
    """The attempt timeout (whole seconds) that these call durations set."""
    ranked = sorted(durations)
    p95 = ranked[min(len(ranked) - 1, math.ceil(0.95 * len(ranked)) - 1)]
    return max(MIN_ATTEMPT_TIMEOUT, math.ceil(ATTEMPT_FACTOR * p95))


def provider_of(model: object) -> str:
    """The provider part of a model (an Inspect model string or `Model`)."""
    return str(model).split("/", 1)[0]


def initial_attempt_timeout(models: Iterable[object], timeout: int | None = None) -> int:
    """The attempt timeout (whole seconds) before any call has answered: ATTEMPT_FACTOR times
    the slowest provider's usual latency, at most half of `timeout` (the whole call's budget
    in seconds), at least MIN_ATTEMPT_TIMEOUT."""
    latency = max((USUAL_LATENCY.get(provider_of(model), HOSTED_LATENCY) for model in models),
                  default=HOSTED_LATENCY)  # fmt: skip
    seconds = math.ceil(ATTEMPT_FACTOR * latency)
    if timeout:
        seconds = min(seconds, timeout // 2)
    return max(MIN_ATTEMPT_TIMEOUT, seconds)


def set_attempt_timeout(seconds: int | None) -> None:
    """Set (None: clear) Inspect's live attempt timeout to `seconds` plus the run's allowances
    (the longest wait for a token, STALL_FACTOR times the longest hold of the event loop), and
    remember `seconds`."""
    OBSERVED.timeout, OBSERVED.set_at = seconds, time.monotonic()
    total = None if seconds is None else seconds + OBSERVED.allowance + stall_allowance()
    set_generate_config_override("attempt_timeout", total)


def stall_allowance() -> int:
    """Seconds every attempt timeout adds for the event loop's holds: STALL_FACTOR times the
    longest so far, once one reached MIN_STALL."""
    return math.ceil(STALL_FACTOR * OBSERVED.stall) if OBSERVED.stall >= MIN_STALL else 0


def observe_stall(seconds: float) -> None:
    """The event loop was held for `seconds`: a new longest hold widens the timeout."""
    seconds = min(seconds, MAX_STALL)
    if seconds <= OBSERVED.stall:
        return
    before = stall_allowance()
    OBSERVED.stall = seconds
    if OBSERVED.timeout is not None and stall_allowance() != before:
        set_attempt_timeout(OBSERVED.timeout)


async def watch_event_loop() -> None:
    """While the run has the adaptive timeout on, time how much later than asked the event
    loop wakes this task, and record each hold with `observe_stall`."""
    while OBSERVED.active:
        asked = time.monotonic() + WATCH_INTERVAL
        await asyncio.sleep(WATCH_INTERVAL)
        observe_stall(time.monotonic() - asked)


def observe(duration: float) -> None:
    """Record one successful call; every UPDATE_EVERY calls, set the timeout they imply."""
    OBSERVED.durations.append(duration)
    OBSERVED.calls += 1
    if len(OBSERVED.durations) < MIN_OBSERVATIONS or OBSERVED.calls % UPDATE_EVERY:
        return
    timeout = attempt_timeout_for(list(OBSERVED.durations))
    if timeout != OBSERVED.timeout:
        set_attempt_timeout(timeout)


def abandoned() -> None:
    """An attempt ran out of time: before enough calls have answered to time them, double
    the timeout, unless it was set less than its own length ago (its attempts started before
    it was set: one stall abandons all the calls in flight at once)."""
    if (len(OBSERVED.durations) >= MIN_OBSERVATIONS or OBSERVED.timeout is None
            or time.monotonic() - OBSERVED.set_at < OBSERVED.timeout):  # fmt: skip
        return
    set_attempt_timeout(min(MAX_ATTEMPT_TIMEOUT, 2 * OBSERVED.timeout))


@hooks(
    name="stancelab_adaptive_attempt_timeout", description="attempt timeout from observed latency"
)
class AdaptiveAttemptTimeout(Hooks):
    """Feeds each successful call's duration to `observe`, and each attempt abandoned at
    the timeout to `abandoned`, and watches the event loop's holds (on asyncio), while a run
    has it on."""

    def __init__(self) -> None:
        self.watcher: asyncio.Task[None] | None = None

    def enabled(self) -> bool:
        return OBSERVED.active

    async def on_run_start(self, data: RunStart) -> None:
        try:
            self.watcher = asyncio.get_running_loop().create_task(watch_event_loop())
        except RuntimeError:  # not on asyncio (trio): no watcher
            self.watcher = None

    async def on_run_end(self, data: RunEnd) -> None:
        if self.watcher is not None:
            self.watcher.cancel()
            self.watcher = None

    async def on_model_usage(self, data: ModelUsageData) -> None:
        observe(data.call_duration)

    async def on_model_retry(self, data: ModelRetry) -> None:
        if data.exception_type == "AttemptTimeoutError":
            abandoned()


@contextmanager
def adaptive_attempt_timeout(initial: int | None, allowance: int = 0) -> Iterator[None]:
    """For the calls made inside: the attempt timeout `initial` (None: off, Inspect's own
    settings apply), then the one the observed latency sets, each plus `allowance` seconds."""
    OBSERVED.reset(initial is not None, allowance)
    if initial is not None:
        set_attempt_timeout(initial)
    try:
        yield
    finally:
        if OBSERVED.timeout is not None:
            set_generate_config_override("attempt_timeout", None)
        OBSERVED.reset(False)
