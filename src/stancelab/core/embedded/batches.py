"""The embedded model's generation queue: Inspect's `hf` batch step, scheduled without waits.

Inspect's `hf` provider collects queued requests until none has arrived for 2 s (or a batch is
full) and looks for each result once a second, so a chain of dependent calls (a conversation's
turns, a writer then its classifier, the last calls of an eval) waited up to 3 s a call while
the model was idle. Here one thread generates what is queued as soon as it is free (requests
that arrive within COLLECT_SECONDS of each other share a batch) and each result wakes its caller
at once. A batch holds up to the calls in flight, as long as its rows (each padded to the
longest prompt) fit TOKEN_BUDGET: decoding a step costs about the same for 4 rows or 16 on a
CPU, while a prefill's memory grows with rows x length. The batch itself (tokenise, generate,
decode) is Inspect's own step.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass, replace
from queue import Empty, Queue
from typing import Any

import anyio

from stancelab.core.inspect_private import GenerateInput, _batch_key, _generate_batch

# How long the thread waits for one more request once one has arrived (and the batch is not
# full): the callers a finished batch wakes send their next requests within a few milliseconds.
COLLECT_SECONDS = 0.05
# Prompt tokens one batch may hold (rows x its longest prompt): two prompts of 1,024 tokens.
# What a batch holds while it generates grows with its tokens (the attention cache and its
# copies, 50-65 KB a token in bfloat16): 205 MiB at 4,096 tokens (4 x 1,024 or 16 x 256),
# about 110 at 2,048 (the demo's MillStone step peaked 50 MB lower, in the same time); 1,024
# made the demo 30% slower for no lower peak (benchmarks/README.md, issue 37 seventh pass).
TOKEN_BUDGET = 2 * 1024
# Under trio (no thread-safe wake-up from asyncio) a result is looked for this often.
POLL_SECONDS = 0.02

_queue: Queue[Any] = Queue()
_held: deque[Any] = deque()  # taken from the queue, not yet generated (over the last budget)
_thread: threading.Thread | None = None
_thread_lock = threading.Lock()


@dataclass
class Request:
    """One queued generation, as Inspect's batch step reads it (`input`, `future`), with its
    batch key and its prompt's own length in tokens."""

    input: GenerateInput
    future: Future[Any]
    key: Any
    prompt_tokens: int


async def generate_in_batches(input: GenerateInput) -> Any:
    """Queue one generation and wait for its `GenerateOutput`, whose input tokens are its own
    prompt's (Inspect's batch step gives every row the padded length of the batch)."""
    _start_thread()
    request = Request(input, Future(), _batch_key(input), prompt_tokens(input))
    _queue.put(request)
    if _in_asyncio():
        # shielded: a cancelled caller must not cancel a future the batch thread will set
        output = await asyncio.shield(asyncio.wrap_future(request.future))
    else:
        while not request.future.done():
            await anyio.sleep(POLL_SECONDS)
        output = request.future.result()
    tokens = request.prompt_tokens
    return replace(output, input_tokens=tokens, total_tokens=tokens + output.output_tokens)


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
        for batch in batches_by_key(collect(_queue, _held, COLLECT_SECONDS, TOKEN_BUDGET)):
            _generate_batch(batch)


def collect(queue: Queue[Any], held: deque[Any], wait_seconds: float, budget: int) -> list[Any]:
    """The next requests to generate: the first held over or to arrive (waiting for it), then
    any that follow within `wait_seconds` of the last, up to the first request's batch size
    and while rows x longest prompt stays within `budget` tokens (the first always goes: a
    longer prompt than the budget is generated alone). A request that does not fit is held
    over for the next batch."""
    items = [held.popleft() if held else queue.get()]
    longest = items[0].prompt_tokens
    while len(items) < items[0].input.batch_size:
        if held:
            item = held.popleft()
        else:
            try:
                item = queue.get(timeout=wait_seconds)
            except Empty:
                break
        tokens = item.prompt_tokens
        if (len(items) + 1) * max(longest, tokens) > budget:
            held.appendleft(item)
            break
        items.append(item)
        longest = max(longest, tokens)
    return items


def prompt_tokens(input: GenerateInput) -> int:
    """A request's prompt length in tokens, with its own tokenizer."""
    return int(input.tokenizer([input.input])["input_ids"].shape[-1])


def batches_by_key(items: list[Any]) -> list[list[Any]]:
    """`items` grouped by batch key (requests that can be generated together), in order of
    each group's first request."""
    groups: dict[Any, list[Any]] = {}
    for item in items:
        groups.setdefault(item.key, []).append(item)
    return list(groups.values())
