"""The embedded model's generation queue (`core.embedded.batches`): Inspect's batch step run
as soon as the thread is free, each result waking its caller."""

from __future__ import annotations

import asyncio
import functools
import time
from collections import deque
from queue import Queue
from types import SimpleNamespace
from typing import Any

import torch

from stancelab.core.embedded.batches import batches_by_key, collect, generate_in_batches
from stancelab.core.inspect_private import GenerateInput


def _tokenize(texts: list[str]) -> dict[str, torch.Tensor]:
    """A token per character, left-padded to the longest."""
    longest = max(len(text) for text in texts)
    mask = torch.tensor([[0] * (longest - len(text)) + [1] * len(text) for text in texts])
    return {"input_ids": mask * 3, "attention_mask": mask}


def _generate(calls: list[int], input_ids: torch.Tensor, attention_mask: torch.Tensor) -> Any:
    calls.append(int(input_ids.shape[0]))
    answer = attention_mask.sum(dim=1, keepdim=True)  # each request's answer: its length
    return SimpleNamespace(
        sequences=torch.cat([input_ids, answer], dim=1), logits=None, hidden_states=None
    )


def _decode(sequences: torch.Tensor) -> list[str]:
    return [f"reply {int(row[0])}" for row in sequences]


def _request(text: str, calls: list[int], batch_size: int = 4) -> GenerateInput:
    generator = functools.partial(_generate, calls)
    return GenerateInput(input=text, device="cpu", tokenizer=_tokenize, generator=generator,
                         decoder=_decode, batch_size=batch_size)  # fmt: skip


def test_a_chain_of_dependent_calls_waits_for_nothing_but_the_model() -> None:
    """Each call of a conversation needs the last one's reply: Inspect's queue held each for
    2 s (waiting for company) and found its result up to 1 s late; ten such calls took about
    half a minute of waiting."""
    calls: list[int] = []

    async def conversation() -> list[str]:
        replies = []
        for turn in range(10):
            output = await generate_in_batches(_request("x" * (turn + 1), calls))
            replies.append(output.output)
        return replies

    start = time.monotonic()
    replies = asyncio.run(conversation())
    assert replies == [f"reply {turn + 1}" for turn in range(10)] and calls == [1] * 10
    assert time.monotonic() - start < 5  # Inspect's queue: at least 20 s


def test_requests_in_flight_together_share_batches_of_at_most_the_batch_size() -> None:
    calls: list[int] = []

    async def together() -> list[Any]:
        requests = [generate_in_batches(_request("q" * (i + 1), calls, 3)) for i in range(7)]
        return list(await asyncio.gather(*requests))

    outputs = asyncio.run(together())
    assert [output.output for output in outputs] == [f"reply {i + 1}" for i in range(7)]
    # each call's input tokens are its own prompt's, not the batch's padded width
    assert [output.input_tokens for output in outputs] == list(range(1, 8))
    assert sum(calls) == 7 and max(calls) == 3 and len(calls) < 7


def _queued(prompt_tokens: int, key: str = "a", batch_size: int = 4) -> SimpleNamespace:
    request = SimpleNamespace(input="x" * prompt_tokens, batch_size=batch_size)
    return SimpleNamespace(input=request, key=key, prompt_tokens=prompt_tokens)


def test_collect_takes_what_follows_within_the_window_up_to_the_batch_size() -> None:
    queue: Queue[Any] = Queue()
    for key in "aabab":
        queue.put(_queued(10, key))
    held: deque[Any] = deque()
    taken = collect(queue, held, 0.01, budget=1_000)
    assert [item.key for item in taken] == list("aaba")
    assert [[item.key for item in batch] for batch in batches_by_key(taken)] == [
        ["a", "a", "a"],
        ["b"],
    ]
    start = time.monotonic()
    assert [item.key for item in collect(queue, held, 0.01, budget=1_000)] == ["b"]
    assert time.monotonic() - start < 1  # alone, once the window has passed


def test_a_batch_keeps_rows_times_its_longest_prompt_within_the_token_budget() -> None:
    queue: Queue[Any] = Queue()
    for tokens in (100, 100, 300, 50, 900, 20):
        queue.put(_queued(tokens, batch_size=16))
    held: deque[Any] = deque()
    batches = [
        [len(item.input.input) for item in collect(queue, held, 0.01, budget=600)] for _ in range(4)
    ]
    # 3 x 300 would be 900: the 300-token prompt waits for the next batch; 900 goes alone
    assert batches == [[100, 100], [300, 50], [900], [20]]
    assert queue.empty() and not held
