"""Progress of the model calls of a run: which role is generating and how far it is.

Inspect's display counts samples and steps; a sample whose calls take minutes (a judge on the
embedded model) shows nothing moving. Each model of a run is labelled with the roles it plays
(`subject`, or `subject+judge` where the subject plays an unbound role) and its calls are
counted: done, in flight, and how long the oldest in flight has run. Inspect's display shows
them as counters (its footer); with `--display plain`, a line is printed every
PROGRESS_EVERY_S seconds while a call has been running longer than SLOW_CALL_S:

    generating: judge (openai/gpt-4o) 3 in flight, oldest 42 s; 57 done
"""

from __future__ import annotations

import functools
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

from inspect_ai.model import Model

SLOW_CALL_S = 5.0  # a call running longer than this is worth a progress line
PROGRESS_EVERY_S = 10.0  # seconds between progress lines
SHOW_EVERY_S = 1.0  # seconds between updates of a role's counter in Inspect's display


@dataclass
class RoleCalls:
    """The calls of one model (the roles it plays): done, and the start of each in flight."""

    label: str
    done: int = 0
    started: dict[int, float] = field(default_factory=dict)
    shown_at: float = float("-inf")  # time.monotonic() of the counter's last update

    def status(self, now: float) -> str:
        """`N in flight, oldest S s; M done` (or `M done`)."""
        if not self.started:
            return f"{self.done} done"
        oldest = now - min(self.started.values())
        return f"{len(self.started)} in flight, oldest {oldest:.0f} s; {self.done} done"


@dataclass
class Calls:
    """Every watched model's calls, by its label."""

    by_label: dict[str, RoleCalls] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    next_id: int = 0

    def slow(self, now: float) -> list[RoleCalls]:
        """The roles with a call in flight longer than SLOW_CALL_S."""
        with self.lock:
            return [calls for calls in self.by_label.values()
                    if calls.started and now - min(calls.started.values()) > SLOW_CALL_S]  # fmt: skip


CALLS = Calls()


def role_labels(groups: Iterable[tuple[list[Model], Mapping[str, Model]]]) -> dict[str, Model]:
    """Each model of each (subjects, roles) group under the roles it plays: a subject with
    the roles it plays itself (`subject+judge (embedded/...)`), any other role's model under
    the role's name."""
    labelled: dict[str, Model] = {}
    for models, roles in groups:
        for model in models:
            played = [name for name, role_model in roles.items() if role_model is model]
            labelled[f"{'+'.join(['subject', *played])} ({model})"] = model
        for name, role_model in roles.items():
            if all(role_model is not model for model in models):
                labelled[f"{name} ({role_model})"] = role_model
    return labelled


def watch_progress(labelled: Mapping[str, Model]) -> None:
    """Count each model's calls under its label (its provider's `generate`, wrapped once)."""
    for label, model in labelled.items():
        api = model.api
        if getattr(api.generate, "stancelab_progress", False):
            continue
        calls = CALLS.by_label.setdefault(label, RoleCalls(label))
        api.generate = _counted(api.generate, calls)  # type: ignore[method-assign]


def _counted(
    generate: Callable[..., Awaitable[Any]], calls: RoleCalls
) -> Callable[..., Awaitable[Any]]:
    @functools.wraps(generate)
    async def counted(*args: Any, **kwargs: Any) -> Any:
        with CALLS.lock:
            CALLS.next_id += 1
            call = CALLS.next_id
            calls.started[call] = time.monotonic()
        _show(calls)
        try:
            return await generate(*args, **kwargs)
        finally:
            with CALLS.lock:
                del calls.started[call]
                calls.done += 1
            _show(calls)

    counted.stancelab_progress = True  # type: ignore[attr-defined]
    return counted


def _show(calls: RoleCalls) -> None:
    """The role's counter in Inspect's display (its footer; the plain display has none), at
    most every SHOW_EVERY_S seconds (the rich display redraws on each update)."""
    from inspect_ai.util import display_counter

    now = time.monotonic()
    if now - calls.shown_at < SHOW_EVERY_S:
        return
    calls.shown_at = now
    with suppress(Exception):  # no display active (a call outside an eval)
        display_counter(calls.label, calls.status(now))


def progress_line(now: float) -> str | None:
    """The plain display's line: every role with a slow call in flight (None: none)."""
    slow = CALLS.slow(now)
    if not slow:
        return None
    return "generating: " + "; ".join(f"{calls.label} {calls.status(now)}" for calls in slow)


@contextmanager
def progress_lines(display: str | None) -> Iterator[None]:
    """With the plain display, print `progress_line` every PROGRESS_EVERY_S seconds inside."""
    if display != "plain":
        yield
        return
    stop = threading.Event()

    def report() -> None:
        while not stop.wait(PROGRESS_EVERY_S):
            line = progress_line(time.monotonic())
            if line:
                print(line, file=sys.stdout, flush=True)

    thread = threading.Thread(target=report, daemon=True, name="stancelab-progress")
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=1)
