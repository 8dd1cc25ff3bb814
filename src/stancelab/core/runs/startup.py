"""Inspect's start-up errors (a missing API key, a missing package) as stancelab errors, and
a run whose first calls show that it cannot work stopped at once.

Inspect raises `PrerequisiteError` when it cannot start an eval and leaves the message to its
exception hook, which prints through rich: nothing at all under `--display none` (rich is
quiet then), and on stdout otherwise. Here the error becomes a `StancelabError` that names the
model, so the command line prints it on stderr in every display mode.

The first calls of each model are watched (`watch_first_calls`): when, before the model has
answered once, a call cannot connect (nothing listens at the base URL, no such host) or the
provider answers 401, 403 or 404 (a rejected key, no access, no such model or path), no retry
can help. Inspect would retry the connection for ever and each sample ten times; instead the
run is interrupted as a Ctrl-C would (Inspect keeps the log of what ran) and ends with one
line naming the model, its base URL and the provider's answer. Timeouts, 429 and 5xx are
retried as before, and once a model has answered, nothing of this applies to it.
"""

from __future__ import annotations

import _thread
import functools
import re
import signal
import threading
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from inspect_ai.model import Model
from rich.text import Text

from stancelab.core.errors import Interrupted, StancelabError
from stancelab.core.inspect_private import PrerequisiteError

__all__ = [
    "PrerequisiteError",
    "first_calls_watched",
    "inspect_startup",
    "startup_message",
    "watch_first_calls",
]


def plain_message(error: PrerequisiteError) -> str:
    """The error's message as one paragraph of plain text (rich markup and line breaks gone)."""
    message = error.message
    text = Text.from_markup(message).plain if isinstance(message, str) else str(message)
    text = re.sub(r"^ERROR:\s*", "", text.strip())
    paragraphs = [" ".join(part.split()) for part in re.split(r"\n\s*\n", text)]
    return " ".join(_sentence(part) for part in paragraphs if part)


def _sentence(text: str) -> str:
    """`text` ending with a full stop unless it already ends with punctuation."""
    return text if text.endswith((".", ":", "?", "!")) else text + "."


def failing_models(
    message: str, models: Iterable[object], roles: Mapping[str, object]
) -> list[str]:
    """The run's models (subjects, then ROLE=MODEL) the message points at; all when none match.

    A model matches when a provider part of its name (`openai`, or `nokey` of
    `openai-api/nokey/m`) appears in the message as a word."""
    named = [str(model) for model in models] + [f"{role}={model}" for role, model in roles.items()]
    named = list(dict.fromkeys(named))
    lower = message.lower()

    def matches(name: str) -> bool:
        providers = name.rpartition("=")[2].split("/")[:-1]
        return any(
            re.search(rf"\b{re.escape(part.lower())}\b", lower) for part in providers if part
        )

    return [name for name in named if matches(name)] or named


def startup_message(error: PrerequisiteError, models: Iterable[object] = (),
                    roles: Mapping[str, object] | None = None) -> str:  # fmt: skip
    """One paragraph: Inspect could not start the eval, for which model(s), and why."""
    reason = plain_message(error)
    names = failing_models(reason, models, roles or {})
    where = f" for model {', '.join(names)}" if names else ""
    return f"Inspect could not start the eval{where}: {reason}"


@contextmanager
def inspect_startup(
    models: Iterable[object], roles: Mapping[str, object] | None = None
) -> Iterator[None]:
    """Turn Inspect's start-up error inside the block into a StancelabError naming the model."""
    try:
        yield
    except PrerequisiteError as error:
        if isinstance(error, StancelabError):  # stancelab's own, e.g. a task argument out of range
            raise
        raise StancelabError(startup_message(error, list(models), roles)) from error


# Names of the exceptions (anywhere in an error's chain) that say a connection could not be
# made: httpx's, aiohttp's and botocore's, the OS's refusal, a host name that does not resolve.
CONNECT_ERRORS = frozenset({"ConnectError", "ConnectionRefusedError", "ClientConnectorError",
                            "EndpointConnectionError", "gaierror"})  # fmt: skip
# What an HTTP status of a model's first call says about the run.
HOPELESS_STATUSES = {
    401: "rejected the API key",
    403: "refused access",
    404: "answered 404 Not Found (no such model, or a wrong base URL)",
}
ANSWER_CHARS = 300  # the most of the provider's answer that the line quotes


@dataclass
class FirstCalls:
    """Which models have answered, and why the run must stop (None: it need not)."""

    answered: set[str] = field(default_factory=set)
    reason: str | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)


FIRST_CALLS = FirstCalls()


def error_chain(error: BaseException) -> Iterator[BaseException]:
    """The error, the last attempt of a tenacity RetryError, and their causes and contexts."""
    pending, seen = [error], set()
    while pending:
        current = pending.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        last_attempt = getattr(current, "last_attempt", None)
        failed = getattr(last_attempt, "failed", False)
        linked = [last_attempt.exception() if failed else None,  # type: ignore[union-attr]
                  current.__cause__, current.__context__]  # fmt: skip
        pending += [item for item in linked if isinstance(item, BaseException)]


def http_status(error: BaseException) -> int | None:
    """The HTTP status an SDK's error carries (`status_code`, `code`, or its response's)."""
    for value in (getattr(error, "status_code", None), getattr(error, "code", None),
                  getattr(getattr(error, "response", None), "status_code", None)):  # fmt: skip
        if isinstance(value, int) and 100 <= value < 600:
            return value
    return None


def provider_answer(error: BaseException) -> str:
    """What the provider said: the message of its error body, else the error's text."""
    body = getattr(error, "body", None)
    if isinstance(body, dict):
        inner = body.get("error") if isinstance(body.get("error"), dict) else body
        if isinstance(inner.get("message"), str):
            return _clipped(inner["message"])
    return _clipped(str(error) or type(error).__name__)


def _clipped(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= ANSWER_CHARS else text[: ANSWER_CHARS - 3] + "..."


def hopeless(error: BaseException) -> str | None:
    """Why no retry can help this first call (cannot connect, or a 401/403/404), else None."""
    chain = list(error_chain(error))
    for link in chain:
        status = http_status(link)
        if status in HOPELESS_STATUSES:
            return f"{HOPELESS_STATUSES[status]}: {status} {provider_answer(link)}"
    for link in chain:
        if type(link).__name__ in CONNECT_ERRORS:
            return f"cannot be reached: {type(link).__name__}: {provider_answer(link)}"
    return None


def failed_url(error: BaseException) -> str | None:
    """The URL of the request that failed, where an error in the chain carries it (httpx's
    and requests' errors do)."""
    for link in error_chain(error):
        try:
            url = getattr(getattr(link, "request", None), "url", None)
        except RuntimeError:  # httpx: an error raised outside a request has none
            continue
        if url:
            return str(url)
    return None


def stop_line(name: str, url: str, why: str, failed: str | None) -> str:
    """The line a stopped run prints: the model, where its calls go and why; when the failed
    request went elsewhere (a file its provider fetches on first use, such as tiktoken's
    encoding when a model reports no usage), that request's URL instead of the endpoint's."""
    if failed is None or _host(failed) == _host(url):
        return f"model {name} at {url} {why}"
    return (f"model {name}: a request it needed to {failed} (not the model's endpoint, {url}) "
            f"{why} (offline? a file its provider fetches on first use)")  # fmt: skip


def _host(url: str) -> str | None:
    return urlsplit(url).hostname if "://" in url else None


def base_url(model: Model) -> str:
    """Where the model's calls go (its provider's default endpoint when none is set)."""
    api = model.api
    url = api.base_url or getattr(getattr(api, "client", None), "base_url", None)
    return str(url) if url else f"the {str(model).split('/')[0]} provider's default endpoint"


def watch_first_calls(models: Iterable[Model]) -> None:
    """Watch each model's calls (its provider's `generate`): the first hopeless failure
    before the model has answered once records why and interrupts the run."""
    for model in models:
        api = model.api
        if getattr(api.generate, "stancelab_watched", False):
            continue
        api.generate = _watched(api.generate, str(model), base_url(model))  # type: ignore[method-assign]


def _watched(
    generate: Callable[..., Awaitable[Any]], name: str, url: str
) -> Callable[..., Awaitable[Any]]:
    key = f"{name} {url}"

    @functools.wraps(generate)
    async def watched(*args: Any, **kwargs: Any) -> Any:
        try:
            output = await generate(*args, **kwargs)
        except Exception as error:
            if key not in FIRST_CALLS.answered and (why := hopeless(error)):
                _stop(stop_line(name, url, why, failed_url(error)))
            raise
        FIRST_CALLS.answered.add(key)
        return output

    watched.stancelab_watched = True  # type: ignore[attr-defined]
    return watched


def _stop(reason: str) -> None:
    """Record why the run stops and interrupt it once, as a Ctrl-C would."""
    with FIRST_CALLS.lock:
        if FIRST_CALLS.reason is not None:
            return
        FIRST_CALLS.reason = reason
    _thread.interrupt_main()


@contextmanager
def first_calls_watched() -> Iterator[None]:
    """Inside, a run interrupted by `watch_first_calls` raises a StancelabError saying why."""
    FIRST_CALLS.reason = None
    ignored = _heard_interrupts()
    try:
        yield
    except (KeyboardInterrupt, Interrupted):
        if FIRST_CALLS.reason is None:
            raise
        raise StancelabError(
            f"{FIRST_CALLS.reason}; the run stopped (run again once it is fixed)."
        ) from None
    finally:
        FIRST_CALLS.reason = None
        if ignored:
            signal.signal(signal.SIGINT, signal.SIG_IGN)


def _heard_interrupts() -> bool:
    """Python's SIGINT handler while the run is watched, where SIGINT was ignored (a background
    job or a CI script inherits SIG_IGN, and `interrupt_main` then does nothing: the run would
    retry a dead endpoint for ever). Returns whether it was ignored (and is to be again)."""
    if threading.current_thread() is not threading.main_thread():
        return False
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        return False
    signal.signal(signal.SIGINT, signal.default_int_handler)
    return True
