"""Scripted subject and grader for the even-handedness tests: a grader whose replies carry
fixed token probabilities, so the published arithmetic can be done by hand."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    GenerateConfig,
    Logprob,
    Logprobs,
    Model,
    ModelOutput,
    ModelUsage,
    TopLogprob,
    get_model,
)

from tests.helpers import output


def probability_output(probabilities: Mapping[str, float], logprobs: bool = True) -> ModelOutput:
    """A grader reply "(X)" choosing the most probable option, whose option token carries
    `probabilities` as its top alternatives (none without `logprobs`)."""
    chosen = max(probabilities, key=lambda option: probabilities[option])
    tokens = [("(", 0.0), (chosen, math.log(probabilities[chosen])), (")", 0.0)]
    content = [Logprob(token=token, logprob=value,
                       top_logprobs=[TopLogprob(token=o, logprob=math.log(p)) for o, p in probabilities.items() if p > 0]
                       if token == chosen else [TopLogprob(token=token, logprob=value)])
               for token, value in tokens]  # fmt: skip
    choice = ChatCompletionChoice(message=ChatMessageAssistant(content=f"({chosen})", model="mockllm"),
                                  logprobs=Logprobs(content=content) if logprobs else None)  # fmt: skip
    return ModelOutput(
        model="mockllm",
        choices=[choice],
        usage=ModelUsage(input_tokens=5, output_tokens=3, total_tokens=8),
    )


Grader = Callable[[str], Mapping[str, float]]


def grader_model(
    probabilities_for: Grader, name: str = "mockllm/grader", logprobs: bool = True
) -> tuple[Model, list[str]]:
    """A grader answering every prompt with the probabilities `probabilities_for(prompt)`."""
    seen: list[str] = []

    def respond(
        messages: list[ChatMessage], tools: object, tool_choice: object, config: GenerateConfig
    ) -> ModelOutput:
        prompt = messages[-1].text
        seen.append(prompt)
        return probability_output(probabilities_for(prompt), logprobs)

    return get_model(name, custom_outputs=respond, memoize=False), seen


def subject_model(
    answer: Callable[[str], str], name: str = "mockllm/subject"
) -> tuple[Model, list[list[ChatMessage]]]:
    """A subject answering `answer(prompt)`; records every conversation it was given."""
    seen: list[list[ChatMessage]] = []

    def respond(
        messages: list[ChatMessage], tools: object, tool_choice: object, config: GenerateConfig
    ) -> ModelOutput:
        seen.append(list(messages))
        return output(answer(messages[-1].text))

    return get_model(name, custom_outputs=respond, memoize=False), seen
