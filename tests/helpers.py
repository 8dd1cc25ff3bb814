"""Scripted mockllm models for tests. Every output carries a usage record, because
mockllm otherwise counts tokens with a tokenizer it would try to download."""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from inspect_ai.model import ChatMessage, GenerateConfig, Model, ModelOutput, ModelUsage, get_model

Reply = Callable[[str], str]


def output(text: str, model: str = "mockllm") -> ModelOutput:
    """A model output with usage set."""
    result = ModelOutput.from_content(model=model, content=text)
    result.usage = ModelUsage(input_tokens=10, output_tokens=2, total_tokens=12)
    return result


def scripted_model(reply: Reply, name: str = "mockllm/model") -> tuple[Model, list[str]]:
    """A mockllm model answering `reply(prompt)`; also returns the list of prompts it saw."""
    seen: list[str] = []

    def respond(
        messages: list[ChatMessage], tools: object, tool_choice: object, config: GenerateConfig
    ) -> ModelOutput:
        prompt = messages[-1].text
        seen.append(prompt)
        return output(reply(prompt))

    return get_model(name, custom_outputs=respond, memoize=False), seen


ChatReply = Callable[[list[ChatMessage]], str]


def scripted_chat_model(reply: ChatReply, name: str) -> tuple[Model, list[list[ChatMessage]]]:
    """A mockllm model answering `reply(messages)`; also returns every message list it saw."""
    seen: list[list[ChatMessage]] = []

    def respond(
        messages: list[ChatMessage], tools: object, tool_choice: object, config: GenerateConfig
    ) -> ModelOutput:
        seen.append(list(messages))
        return output(reply(messages))

    return get_model(name, custom_outputs=respond, memoize=False), seen


@contextmanager
def own_cache(folder: Path, **env: str) -> Iterator[None]:
    """Inspect's cache in `folder` (and `env` set) for a run outside a test's own monkeypatch,
    e.g. in a module- or session-scoped fixture; the environment is put back after."""
    saved = {name: os.environ.get(name) for name in ["INSPECT_CACHE_DIR", *env]}
    os.environ.update({"INSPECT_CACHE_DIR": str(folder)} | env)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def full_sample_reads(monkeypatch: object) -> list[str]:
    """The logs whose full samples Inspect's `samples_df` reads from now on (a read of the
    summaries only is not listed), as a list that fills as they are read."""
    from stancelab.core.inspect_private import samples_table

    table = samples_table()
    reads: list[str] = []
    read_full = table.read_eval_log_async

    async def recording(location: str, *args: object, **kwargs: object) -> object:
        reads.append(str(location))
        return await read_full(location, *args, **kwargs)

    monkeypatch.setattr(table, "read_eval_log_async", recording)  # type: ignore[attr-defined]
    return reads


BUCKETS = itertools.count()
# what differs between two analyses of the same logs in two places: where they lie
PLACES = ("logs", "log", "path", "folder")


def fresh_bucket(server: Any) -> str:
    """A new bucket on an S3 server (`stancelab.testing.s3_server.S3Server`)."""
    name = f"bucket-{next(BUCKETS)}"
    server.make_bucket(name)
    return name


def summary_figures(summary_file: Path) -> dict[str, Any]:
    """A summary.json less where its logs lay (a local folder, or the copy of a URL's logs)."""
    return without_places(json.loads(summary_file.read_text()))


def without_places(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: without_places(item) for key, item in value.items() if key not in PLACES}
    if isinstance(value, list):
        return [without_places(item) for item in value]
    return value
