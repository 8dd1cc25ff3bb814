"""Scripted mockllm pieces shared by the conviction tests."""

from __future__ import annotations

import json
from pathlib import Path

from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    Logprob,
    Logprobs,
    ModelOutput,
    ModelUsage,
)


def write_statements(folder: Path, rows: list[tuple[str, str, int]]) -> Path:
    """A statements file of (id, text, bias) rows."""
    path = folder / "statements.jsonl"
    path.write_text("".join(json.dumps({"id": i, "text": t, "bias": b}) + "\n" for i, t, b in rows))
    return path


def output_with_logprobs(text: str, token_logprobs: list[float]) -> ModelOutput:
    """An output whose answer carries one log-prob per token (and a usage record)."""
    tokens = [Logprob(token=f"t{i}", logprob=lp) for i, lp in enumerate(token_logprobs)]
    choice = ChatCompletionChoice(
        message=ChatMessageAssistant(content=text, model="mockllm"),
        logprobs=Logprobs(content=tokens),
    )
    usage = ModelUsage(input_tokens=5, output_tokens=len(tokens), total_tokens=5 + len(tokens))
    return ModelOutput(model="mockllm", choices=[choice], usage=usage)


def field(messages: list[ChatMessage], name: str) -> str:
    """The text after `NAME: ` in the last message, to the end of its line."""
    return messages[-1].text.split(f"{name}: ", 1)[1].split("\n", 1)[0]


def literal_reader(messages: list[ChatMessage]) -> str:
    """An `nli` role that reads words, not context: "disagree" in the answer is disagreement
    with whatever statement it is shown; in entailment questions, two answers mean the same
    when both or neither say "disagree"."""
    if messages[-1].text.startswith("Does the PREMISE"):
        same = ("disagree" in field(messages, "PREMISE")) == (
            "disagree" in field(messages, "HYPOTHESIS")
        )
        return "entailment" if same else "contradiction"
    return "disagree" if "disagree" in field(messages, "RESPONSE") else "agree"
