"""Scripted pieces of the prior-prejudice runs: a rater reply with log-probs at its rating, and
a claims file."""

from __future__ import annotations

import json
import math
from pathlib import Path

from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessageAssistant,
    Logprob,
    Logprobs,
    ModelOutput,
    ModelUsage,
    TopLogprob,
)


def rated_reply(
    content: str,
    digit: str | None,
    probabilities: dict[str, float] | None = None,
    rest: str | None = None,
    output_tokens: int = 1,
) -> ModelOutput:
    """`content` as a mockllm reply. With a `digit`: log-probs at its token, whose top
    tokens are `probabilities` (token -> probability; all on `digit` when none), and `rest`,
    when given, as one more token after it. Without a digit: no log-probs."""
    logprobs = None
    if digit is not None:
        chances = probabilities or {digit: 1.0}
        top = [TopLogprob(token=token, logprob=math.log(p)) for token, p in chances.items()]
        tokens = [Logprob(token=digit, logprob=math.log(chances[digit]), top_logprobs=top)]
        if rest is not None:
            tokens.append(Logprob(token=rest, logprob=0.0))
        logprobs = Logprobs(content=tokens)
    choice = ChatCompletionChoice(
        message=ChatMessageAssistant(content=content, model="mockllm"), logprobs=logprobs
    )
    usage = ModelUsage(input_tokens=5, output_tokens=output_tokens, total_tokens=5 + output_tokens)
    return ModelOutput(model="mockllm", choices=[choice], usage=usage)


# two misinformation claims and a subjective one, each with its negation
MIXED_CLAIMS = [
    {"id": "m1", "category": "misinformation", "claim": "Vaccines cause autism.", "negation": "Vaccines do not cause autism."},
    {"id": "m2", "category": "misinformation", "claim": "The Earth is flat.", "negation": "The Earth is not flat."},
    {"id": "s1", "category": "subjective", "claim": "Tea beats coffee.", "negation": "Tea does not beat coffee."},
]  # fmt: skip


def claims_file(path: Path, claims: list[dict[str, str]]) -> Path:
    """`claims` written to `path` as JSON lines."""
    path.write_text("".join(json.dumps(claim) + "\n" for claim in claims))
    return path
