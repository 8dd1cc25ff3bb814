"""Answers of the fake server that each probe's parser reads, in every role (subject, judge,
user, writer, classifier, nli, grader): what the benchmark at paper scale is answered with.
Each answer is drawn from the digest of the whole conversation, so a rerun gets the same
answer and the answers spread over the choices."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from stancelab.testing.fake_openai import is_judge_request

ARGUMENT = "Many people weigh the costs and the benefits of this differently."
ESSAY_WORDS = 300  # an open answer (IssueBench's writer, a chat turn): about 300 words


def _text(message: dict[str, Any]) -> str:
    content = message.get("content", "")
    if isinstance(content, list):  # content parts
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content)


def _pick(options: tuple[str, ...], digest: str) -> str:
    return options[int(digest[:6], 16) % len(options)]


def paper_reply(messages: list[dict[str, Any]]) -> str:
    """The answer to one request of any probe (see the module's docstring)."""
    whole = json.dumps(messages, sort_keys=True)
    digest = hashlib.sha256(whole.encode()).hexdigest()
    prompt = _text(messages[-1]) if messages else ""
    if is_judge_request(messages):  # llm-bias-bench's judge
        verdict = _pick(("agree", "disagree", "neutral"), digest)
        return json.dumps({"evidence": [digest[:8]], "rationale": "fake", "verdict": verdict})
    for reply in (_conviction, _even_handedness, _prior_prejudice, _issuebench, _millstone):
        answer = reply(prompt, digest)
        if answer is not None:
            return answer
    return f"{_pick(('I agree.', 'I disagree.', 'I am not sure.'), digest)} {_essay(digest)}"


def _conviction(prompt: str, digest: str) -> str | None:
    if prompt.startswith("Does the PREMISE"):
        return _pick(("entailment", "contradiction", "neutral"), digest)
    if prompt.startswith("Does the RESPONSE"):
        return _pick(("agree", "disagree"), digest)
    if prompt.startswith(("Rephrase the statement", "Negate the statement")):
        return ARGUMENT
    if "Statement: " in prompt:
        return _pick(("I agree with this statement.", "I disagree with this statement."), digest)
    return None


def _even_handedness(prompt: str, digest: str) -> str | None:
    if "<dialogue_a>" in prompt:
        return _pick(("(A)", "(B)", "(C)"), digest)
    if "<conversation>" in prompt:
        return _pick(("(1)", "(2)", "(3)", "(4)", "(5)"), digest)
    return None


def _prior_prejudice(prompt: str, digest: str) -> str | None:
    if prompt.startswith("A language model was asked"):
        return json.dumps({"category": "other", "rationale": "fake"})
    if prompt.startswith("Write the negation") and 'Claim: "' in prompt:
        claim = prompt.split('Claim: "', 1)[1].split('"', 1)[0]
        return f"It is false that {claim[:1].lower()}{claim[1:]}"
    if prompt.startswith(("Write a persuasive argument", "Below is a persuasive argument",
                          "Why do some people", "Based on these reasons", "Now rewrite")):  # fmt: skip
        return ARGUMENT
    if "\n\nAnswer:" in prompt:
        return _pick(tuple("1234567"), digest)
    if prompt.startswith("Who is more ") and " or " in prompt:  # the group probe's question
        first, second = prompt.split(": ", 1)[-1].split("?", 1)[0].split(" or ", 1)
        return _pick((first, second, "I cannot compare groups."), digest)  # asked at 8 tokens
    return None


def _issuebench(prompt: str, digest: str) -> str | None:
    if "### TASK:" in prompt:  # the stance classifier
        return _pick(tuple("12345"), digest)
    return None


def _essay(digest: str) -> str:
    """A long answer (a writer's text, a chat answer): `ESSAY_WORDS` words."""
    words = [digest[i : i + 6] for i in range(0, 60, 6)]
    return " ".join(words[k % len(words)] for k in range(ESSAY_WORDS))


def _millstone(prompt: str, digest: str) -> str | None:
    if "position" in prompt.lower():
        return f"position <<{_pick(('A', 'B'), digest)}>>"
    return None
