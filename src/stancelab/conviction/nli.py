"""Inspect model provider `nli/<folder>`: a transformers sequence-classification (NLI) model
read from a local folder, playing Testing Conviction's `nli` role as the paper does (it reads
opinions with an entailment model, not a chat model).

The role asks two questions (`prompts.AGREEMENT`, `prompts.ENTAILMENT`); the provider parses
them back into a premise and a hypothesis, classifies the pair, and answers with the word the
task reads: agree / disagree / unclear for entailment / contradiction / neutral of (answer,
statement), and the label itself for (premise, hypothesis). The class probabilities go into
the output's metadata. Labels are found by name in the model's `id2label`, so any MNLI-style
label order works. Nothing touches the network.
"""

from __future__ import annotations

import asyncio
import os
import re
import threading
from pathlib import Path
from typing import Any

from inspect_ai.model import ChatMessage, GenerateConfig, ModelAPI, ModelOutput, ModelUsage
from inspect_ai.tool import ToolChoice, ToolInfo

from stancelab.conviction.prompts import AGREEMENT, ENTAILMENT

NLI_PROVIDER = "nli"
ENTAILMENT_LABEL, NEUTRAL_LABEL, CONTRADICTION_LABEL = "entailment", "neutral", "contradiction"
AGREEMENT_WORD = {
    ENTAILMENT_LABEL: "agree",
    CONTRADICTION_LABEL: "disagree",
    NEUTRAL_LABEL: "unclear",
}


def _template_pattern(template: str) -> re.Pattern[str]:
    """A pattern matching `template` formatted with any field values."""
    pattern = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>.*?)", re.escape(template))
    return re.compile(pattern, re.DOTALL)


_AGREEMENT, _ENTAILMENT = _template_pattern(AGREEMENT), _template_pattern(ENTAILMENT)


def nli_question(prompt: str) -> tuple[str, str, str]:
    """(kind, premise, hypothesis) of an `nli`-role prompt: "agreement" has the answer as
    premise and the statement as hypothesis; "entailment" its own premise and hypothesis."""
    if match := _AGREEMENT.fullmatch(prompt):
        return "agreement", match["response"], match["statement"]
    if match := _ENTAILMENT.fullmatch(prompt):
        return "entailment", match["premise"], match["hypothesis"]
    raise ValueError(
        "The nli provider answers only Testing Conviction's agreement and entailment questions "
        f"(stancelab.conviction.prompts); got: {prompt[:120]!r}"
    )


def label_names(id2label: dict[int, str]) -> dict[int, str]:
    """Class index -> entailment / neutral / contradiction, read from the model's label names
    (any case, e.g. ENTAILMENT, entailment); other classes count as neutral."""
    names = {}
    for index, name in id2label.items():
        lowered = str(name).lower()
        names[int(index)] = (
            ENTAILMENT_LABEL if lowered.startswith("entail")
            else CONTRADICTION_LABEL if lowered.startswith("contradict")
            else NEUTRAL_LABEL
        )  # fmt: skip
    missing = {ENTAILMENT_LABEL, CONTRADICTION_LABEL} - set(names.values())
    if missing:
        raise ValueError(
            f"An NLI model needs classes named entailment and contradiction in its id2label; "
            f"{sorted(missing)} missing from {dict(id2label)}"
        )
    return names


class NLIClassifierAPI(ModelAPI):
    """A sequence-classification NLI model from a local folder (`nli/<folder>`, or
    `model_path=`); runs on the CPU unless `device=` says otherwise."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),  # noqa: B008 (Inspect's own signature)
        **model_args: Any,
    ) -> None:
        super().__init__(model_name=model_name, base_url=base_url, api_key=api_key, config=config)
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        folder = Path(str(model_args.get("model_path") or model_name)).expanduser()
        if not folder.is_dir():
            raise ValueError(
                f"The nli provider loads a model from a local folder; '{folder}' is not one "
                "(download one first, e.g. `hf download facebook/bart-large-mnli --local-dir DIR`)."
            )
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(folder)
        self.classifier = AutoModelForSequenceClassification.from_pretrained(folder)
        self.classifier.to(str(model_args.get("device", "cpu"))).eval()
        self.names = label_names(self.classifier.config.id2label)
        self._lock = threading.Lock()

    def classify(self, premise: str, hypothesis: str) -> tuple[dict[str, float], int]:
        """Probabilities of entailment / neutral / contradiction, and the input's token count."""
        import torch

        encoded = self.tokenizer(premise, hypothesis, truncation=True, return_tensors="pt")
        encoded = encoded.to(self.classifier.device)
        with self._lock, torch.no_grad():
            probabilities = self.classifier(**encoded).logits.softmax(dim=-1)[0].tolist()
        result = dict.fromkeys((ENTAILMENT_LABEL, NEUTRAL_LABEL, CONTRADICTION_LABEL), 0.0)
        for index, p in enumerate(probabilities):
            result[self.names[index]] += p
        return result, int(encoded["input_ids"].shape[-1])

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        kind, premise, hypothesis = nli_question(input[-1].text)
        probabilities, tokens = await asyncio.to_thread(self.classify, premise, hypothesis)
        predicted = max(probabilities, key=lambda name: probabilities[name])
        answer = AGREEMENT_WORD[predicted] if kind == "agreement" else predicted
        output = ModelOutput.from_content(model=self.model_name, content=answer)
        output.usage = ModelUsage(input_tokens=tokens, output_tokens=1, total_tokens=tokens + 1)
        output.metadata = {"nli": probabilities, "question": kind}
        return output
