"""The stance classifier (role `classifier`) as an Inspect scorer."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from inspect_ai.model import CachePolicy, GenerateConfig, get_model
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import TaskState

from stancelab.issuebench.labels import ALL_LABELS, authors_label, parse_label
from stancelab.issuebench.prompts import CLASSIFIER_T5, classifier_prompt

CLASSIFIER_ROLE = "classifier"
CACHE = CachePolicy(expiry=None)
CLASSIFIER_TEMPERATURE = 1.0  # appendix J, Table 11
CLASSIFIER_MAX_TOKENS = 64


async def classify_response(
    response: str, metadata: dict[str, Any], config: GenerateConfig, template: str = CLASSIFIER_T5,
    read: Callable[[str], str] = authors_label,
) -> tuple[str, str, Any]:  # fmt: skip
    """(label, raw reply, usage) for one response, from the `classifier` role, prompted with
    `template` (default: template 5) and its reply read with `read` (default: as the authors
    read the replies behind the paper's results)."""
    classifier = get_model(role=CLASSIFIER_ROLE)
    prompt = classifier_prompt(
        response_text=response,
        issue_prompt=metadata["issue_prompt"],
        issue_neutral=metadata["issue_neutral"],
        issue_pro=metadata["issue_pro"],
        issue_con=metadata["issue_con"],
        template=template,
    )
    output = await classifier.generate(prompt, config=config, cache=CACHE)
    return read(output.completion), output.completion, output.usage


@scorer(metrics={label: [mean()] for label in ALL_LABELS})
def stance_classifier(
    temperature: float = CLASSIFIER_TEMPERATURE, max_tokens: int = CLASSIFIER_MAX_TOKENS
) -> Scorer:
    """Labels the subject's response 1-5 or refusal, reading the classifier's reply as the
    authors read it (`labels.authors_label`; `label_strict` in the score's metadata is
    stancelab's stricter reading); an unreadable reply is `unparsed`."""
    config = GenerateConfig(temperature=temperature, max_tokens=max_tokens)

    async def score(state: TaskState, target: Target) -> Score:
        response = state.output.completion if state.output else ""
        label, raw, usage = await classify_response(response, state.metadata, config)
        return Score(
            value={name: float(label == name) for name in ALL_LABELS},
            answer=label,
            explanation=raw[:500],
            metadata={
                "classifier_usage": usage.model_dump() if usage else None,
                "label_strict": parse_label(raw),
            },
        )

    return score


@scorer(metrics=[mean()])
def gold_agreement(
    temperature: float = CLASSIFIER_TEMPERATURE,
    max_tokens: int = CLASSIFIER_MAX_TOKENS,
    template: str = CLASSIFIER_T5,
) -> Scorer:
    """Classifier validation: the label for a gold-annotated response (prompted with `template`),
    scored against the gold. The label is stancelab's stricter reading of the reply
    (`labels.parse_label`); Table 15's macro F1 reads the raw reply as the authors' classifier
    evaluation did (`validation.authors_validation_label`)."""
    config = GenerateConfig(temperature=temperature, max_tokens=max_tokens)

    async def score(state: TaskState, target: Target) -> Score:
        label, raw, _ = await classify_response(
            state.metadata["response_text"], state.metadata, config, template, parse_label
        )
        return Score(value=float(label == target.text), answer=label, explanation=raw[:500],
                     metadata={"reply": raw[:500]})  # fmt: skip

    return score
