"""One paid call for identical cached requests in flight at once.

Inspect's cache stores an answer once it is back, so two identical requests sent before
either is back are both paid (e.g. two samples asking a reader about the same answer text, or
the answers of one sample that came out the same). Here the others wait for the first and
then ask Inspect themselves: their answer is the first's, read from the cache (each
transcript records a cache read), and nothing is paid twice. A request without a cache
policy is sent as it comes (each is its own draw); a waiter whose key Inspect's cache does
not share (the first failed, or a difference this key does not see) is sent after the
first, and paid."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import anyio
from inspect_ai.model import CachePolicy, GenerateConfig, Model

from stancelab.core.inspect_private import sample_epoch

SHARED = "_stancelab_single_flight"
"""the mark of a model whose identical calls are shared (a copy Inspect makes of it for a
role, with the role's config, keeps it)"""
_SIGNATURE = inspect.signature(Model.generate)
# the calls in flight of this process, by key: set when the first is back
IN_FLIGHT: dict[str, anyio.Event] = {}


def share_identical_calls(models: Iterable[Model]) -> None:
    """Send each model's identical cached requests once at a time. `Model.generate` is
    wrapped once per process, for the models marked here only: Inspect calls a role through a
    shallow copy of its model (`get_model(role=...)`), which an instance's own wrapper would
    not follow."""
    if not getattr(Model.generate, SHARED, False):
        Model.generate = _single_flight(Model.generate)  # type: ignore[method-assign]
    for model in models:
        setattr(model, SHARED, True)


def _single_flight(generate: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    @functools.wraps(generate)
    async def generate_once(model: Model, *args: Any, **kwargs: Any) -> Any:
        key = request_key(model, *args, **kwargs) if getattr(model, SHARED, False) else None
        if key is None:
            return await generate(model, *args, **kwargs)
        first = IN_FLIGHT.get(key)
        if first is not None:  # asked again once the first is back: a cache read
            await first.wait()
            return await generate(model, *args, **kwargs)
        IN_FLIGHT[key] = done = anyio.Event()
        try:
            return await generate(model, *args, **kwargs)
        finally:
            del IN_FLIGHT[key]
            done.set()

    setattr(generate_once, SHARED, True)
    return generate_once


def request_key(model: Model, *args: Any, **kwargs: Any) -> str | None:
    """What Inspect's cache key of a `Model.generate` call holds (the model, its base URL and
    config, the input, tools, the call's config and policy, the epoch of a per-epoch policy),
    as one string; None for a call without a cache policy."""
    call = _SIGNATURE.bind(model, *args, **kwargs)
    call.apply_defaults()
    given = call.arguments
    policy = given["cache"]
    if policy is True:
        policy = CachePolicy()
    if not isinstance(policy, CachePolicy):
        return None
    config = given["config"] if isinstance(given["config"], GenerateConfig) else GenerateConfig()
    messages = given["input"]
    text = messages if isinstance(messages, str) else [
        message.model_dump(exclude={"id"}) for message in messages]  # fmt: skip
    epoch = sample_epoch() if policy.per_epoch else None
    return repr((str(model), model.api.base_url, model.config.model_dump(exclude_none=True), text,
                 repr(given["tools"]), repr(given["tool_choice"]),
                 config.model_dump(exclude_none=True), policy.expiry, policy.scopes, epoch))  # fmt: skip
