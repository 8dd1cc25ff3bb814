"""The embedded model's generation queue: Inspect's `hf` batch step, scheduled without waits.

Inspect's `hf` provider collects queued requests until none has arrived for 2 s (or a batch is
full) and looks for each result once a second, so a chain of dependent calls (a conversation's
turns, a writer then its classifier, the last calls of an eval) waited up to 3 s a call while
the model was idle. Here one thread generates what is queued as soon as it is free (requests
that arrive within COLLECT_SECONDS of each other share a batch) and each result wakes its caller
at once. The batch itself (tokenise, generate, decode) is Inspect's own step.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import Future
from queue import Empty, Queue
from typing import Any

import anyio

from stancelab.core.inspect_private import GenerateInput, _batch_key, _generate_batch, _QueueItem

# How long the thread waits for one more request once one has arrived (and the batch is not
# full): the callers a finished batch wakes send their next requests within a few milliseconds.
COLLECT_SECONDS = 0.05
# Under trio (no thread-safe wake-up from asyncio) a result is looked for this often.
POLL_SECONDS = 0.02

_queue: Queue[Any] = Queue()
_thread: threading.Thread | None = None
_thread_lock = threading.Lock()


async def generate_in_batches(input: GenerateInput) -> Any:
    """Queue one generation and wait for its `GenerateOutput`."""
    _start_thread()
    future: Future[Any] = Future()
    _queue.put(_QueueItem(input=input, future=future, key=_batch_key(input)))
    if _in_asyncio():
        # shielded: a cancelled caller must not cancel a future the batch thread will set
        return await asyncio.shield(asyncio.wrap_future(future))
    while not future.done():
        await anyio.sleep(POLL_SECONDS)
    return future.result()


def _in_asyncio() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _start_thread() -> None:
    global _thread
    with _thread_lock:
        if _thread is None:
            _thread = threading.Thread(
                target=_generate_forever, name="stancelab-embedded", daemon=True
            )
            _thread.start()


def _generate_forever() -> None:
    while True:
        for batch in batches_by_key(collect(_queue, COLLECT_SECONDS)):
            _generate_batch(batch)


def collect(queue: Queue[Any], wait_seconds: float) -> list[Any]:
    """The next requests to generate: the first to arrive (waiting for it), then any that
    follow within `wait_seconds` of the last, up to the first request's batch size."""
    items = [queue.get()]
    while len(items) < items[0].input.batch_size:
        try:
            items.append(queue.get(timeout=wait_seconds))
        except Empty:
            break
    return items


def batches_by_key(items: list[Any]) -> list[list[Any]]:
    """`items` grouped by batch key (requests that can be generated together), in order of
    each group's first request."""
    groups: dict[Any, list[Any]] = {}
    for item in items:
        groups.setdefault(item.key, []).append(item)
    return list(groups.values())
