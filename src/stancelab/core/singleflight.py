"""Single-flight: identical cached model calls in flight at the same time are sent once.

The first call for a request (the leader) is sent; an identical call that starts while it is
in flight (a follower) waits in Inspect's `on_before_model_generate` hook until the leader's
answer is in Inspect's cache, then reads it from there. Identical means the same Inspect cache
key (`inspect_ai.model._cache._cache_key`: model, messages, generate config, tools, cache
scopes, epoch), so single-flight never shares an answer the cache would not; uncached calls
(independent draws) are never held. The leader releases its followers when it stores its
answer (or finds it cached); a follower whose leader is gone, or that has waited
FOLLOWER_WAIT seconds, sends its own request. Inspect exposes no hook after a cache store,
so `run` wraps `cache_fetch` and `cache_store` in `inspect_ai.model._model` while active.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from hashlib import md5
from typing import Any

import anyio
import inspect_ai.model._model as inspect_model
from inspect_ai.hooks import BeforeModelGenerate, Hooks, hooks
from inspect_ai.model._cache import CacheEntry, _cache_key_config, epoch

FOLLOWER_WAIT = 600.0  # seconds a follower waits for its leader at most
POLL = 1.0  # seconds between checks that the leader is still running


@dataclass
class Flight:
    """A request in flight: its leader's task, and the event that releases its followers."""

    owner: asyncio.Task[Any] | None
    done: anyio.Event = field(default_factory=anyio.Event)


@dataclass
class _State:
    active: bool = False
    flights: dict[str, Flight] = field(default_factory=dict)
    held: int = 0  # followers that waited for a leader


STATE = _State()


def request_key(model: str, input: list[Any], config: Any, tools: Any, tool_choice: Any) -> str:
    """What Inspect's cache key holds, less the cache policy (scopes and expiry): the
    follower's cache read then checks those."""
    messages = ",".join(str(m.model_dump(exclude={"id": True, "content": {"__all__": {"cache_breakpoint"}}}))
                        for m in input)  # fmt: skip
    parts = [model, _cache_key_config(config), messages, tool_choice, tools, epoch.get(None)]
    return md5("|".join(map(str, parts)).encode()).hexdigest()


def _entry_key(entry: CacheEntry) -> str:
    return request_key(entry.model, entry.input, entry.config, entry.tools, entry.tool_choice)


def _current_task() -> asyncio.Task[Any] | None:
    try:
        return asyncio.current_task()
    except RuntimeError:
        return None


async def before_generate(key: str) -> None:
    """Lead the request `key`, or wait for the leader already sending it."""
    task = _current_task()
    flight = STATE.flights.get(key)
    if flight is None or flight.done.is_set() or (flight.owner is not None and flight.owner.done()):
        STATE.flights[key] = Flight(owner=task)
        return
    if flight.owner is task:  # the leader's own retry
        return
    STATE.held += 1
    with anyio.move_on_after(FOLLOWER_WAIT):
        while not flight.done.is_set() and not (flight.owner is not None and flight.owner.done()):
            with anyio.move_on_after(POLL):
                await flight.done.wait()


def release(key: str) -> None:
    """The leader of `key` has its answer (stored, or read from the cache): release."""
    flight = STATE.flights.get(key)
    if flight is not None and flight.owner is _current_task():
        flight.done.set()
        del STATE.flights[key]


def _fetch(original: Any) -> Any:
    def fetch(entry: CacheEntry) -> Any:
        found = original(entry)
        if found is not None:
            release(_entry_key(entry))
        return found

    return fetch


def _store(original: Any) -> Any:
    def store(entry: CacheEntry, output: Any) -> bool:
        stored = original(entry=entry, output=output)
        release(_entry_key(entry))
        return bool(stored)

    return store


@hooks(name="stancelab_single_flight", description="identical cached calls in flight are sent once")
class SingleFlight(Hooks):
    """Holds a cached call while an identical one is in flight."""

    def enabled(self) -> bool:
        return STATE.active

    async def on_before_model_generate(self, data: BeforeModelGenerate) -> None:
        if data.cache == "write":
            await before_generate(request_key(data.model_name, data.input, data.config, data.tools,
                                              data.tool_choice))  # fmt: skip


@contextmanager
def single_flight(active: bool = True) -> Iterator[_State]:
    """Single-flight for the calls made inside; yields the state (`held` counts followers)."""
    if not active:
        yield STATE
        return
    fetch, store = inspect_model.cache_fetch, inspect_model.cache_store
    inspect_model.cache_fetch, inspect_model.cache_store = _fetch(fetch), _store(store)  # type: ignore[assignment]
    STATE.active, STATE.held = True, 0
    STATE.flights.clear()
    try:
        yield STATE
    finally:
        inspect_model.cache_fetch, inspect_model.cache_store = fetch, store  # type: ignore[assignment]
        STATE.active = False
        STATE.flights.clear()
