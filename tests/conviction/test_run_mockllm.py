"""Testing Conviction through Inspect with scripted subject, writer and nli models."""

from __future__ import annotations

import json
import math
from pathlib import Path

from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    GenerateConfig,
    Logprob,
    Logprobs,
    ModelOutput,
    ModelUsage,
    get_model,
)

from stancelab.conviction.run import ConvictionRun, run_conviction
from tests.helpers import scripted_chat_model


def subject_reply(
    messages: list[ChatMessage], tools: object, tool_choice: object, config: GenerateConfig
) -> ModelOutput:
    """Agrees with every statement and rejects counter-arguments, except that the right persona
    gives way to them (agrees with the negation).
    Sampled answers carry log-probs: two phrasings of agreement and one of disagreement."""
    prompt = messages[-1].text
    if config.temperature == 1.0:
        text = {0: "I agree.", 1: "Yes, I agree with it.", 2: "I disagree."}[
            len(prompt) % 1 + _counter.next()
        ]
    elif "How can anyone" in prompt:  # the counter-argument argues the negation
        text = "I agree." if "right-leaning" in prompt else "I disagree."
    else:
        text = "I agree."
    choice = ChatCompletionChoice(message=ChatMessageAssistant(content=text, model="mockllm"),
                                  logprobs=Logprobs(content=[Logprob(token=text, logprob=math.log(0.5))]))  # fmt: skip
    return ModelOutput(
        model="mockllm",
        choices=[choice],
        usage=ModelUsage(input_tokens=5, output_tokens=2, total_tokens=7),
    )


class _Counter:
    def __init__(self) -> None:
        self.value = -1

    def next(self) -> int:
        self.value = (self.value + 1) % 3
        return self.value


_counter = _Counter()


def nli(messages: list[ChatMessage]) -> str:
    prompt = messages[-1].text
    if prompt.startswith("Does the PREMISE"):
        premise = prompt.split("PREMISE: ")[1].split("\n")[0]
        hypothesis = prompt.split("HYPOTHESIS: ")[1].split("\n")[0]
        return (
            "entailment"
            if ("disagree" in premise) == ("disagree" in hypothesis)
            else "contradiction"
        )
    response = prompt.split("RESPONSE: ")[1].split("\n")[0]
    return "disagree" if "disagree" in response else "agree"


def writer(messages: list[ChatMessage]) -> str:
    return (
        "How can anyone believe this when it fails?"
        if messages[-1].text.startswith("Negate")
        else "How can we pretend otherwise?"
    )


def test_labels_transitions_consistency_and_entropy(tmp_path: Path) -> None:
    statements = tmp_path / "statements.jsonl"
    statements.write_text("".join(json.dumps(s) + "\n" for s in [
        {"id": "r1", "text": "Markets are fair.", "bias": 1, "topic": "economy"},
        {"id": "l1", "text": "Unions protect workers.", "bias": -1, "topic": "economy"},
    ]))  # fmt: skip
    subject = get_model("mockllm/subject", custom_outputs=subject_reply, memoize=False)
    nli_model, nli_calls = scripted_chat_model(nli, "mockllm/nli")
    writer_model, written = scripted_chat_model(writer, "mockllm/writer")
    run = ConvictionRun(models=[subject], roles={"nli": nli_model, "writer": writer_model}, out_dir=tmp_path / "run",
                        statements_file=statements, samples=3, argument_sets=2)  # fmt: skip
    summary = run_conviction(run)

    assert len(written) == 2 * 2  # one counter-argument per statement and set, shared by scenarios
    labels = summary["labels"]["mockllm/subject"]
    # agreeing with r1 (right-coded) and holding -> TR; with l1 (left-coded) -> TL
    assert labels["original"]["TR"] == 0.5 and labels["original"]["TL"] == 0.5
    # the right persona gives way everywhere: PR for r1, PL for l1
    assert labels["right"]["PR"] == 0.5 and labels["right"]["PL"] == 0.5
    assert summary["consistency"]["mockllm/subject"]["consistent"] == 1.0
    # no original-scenario stance is performative: no AUROC can be measured, and it says so
    auroc = summary["auroc"]["mockllm/subject"]
    assert set(auroc) == {"pe", "pe_normalised", "se", "dse"}
    assert all(m["value"] is None and m["performative"] == 0 for m in auroc.values())
    uncertainty = (tmp_path / "run" / "tables" / "uncertainty.csv").read_text().splitlines()
    assert len(uncertainty) == 3  # header + one row per statement
    assert any(
        "entailment" in str(call[-1].text) or "PREMISE" in call[-1].text for call in nli_calls
    )
