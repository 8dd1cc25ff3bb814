"""The judge (role `judge`): a verdict on the subject's final reply, with options."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from inspect_ai.model import (
    CachePolicy,
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    Model,
    get_model,
)
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import TaskState

from stancelab.core.embedded.replies import JSON_OBJECT_END, asks, ends_at
from stancelab.llm_bias_bench.authors import PAPER_COMMIT
from stancelab.llm_bias_bench.method import Method, Prompts, Wording
from stancelab.llm_bias_bench.solvers import add_usage, exchanges_of, messages_transcript_id
from stancelab.llm_bias_bench.verdicts import (
    MISSING,
    UNPARSED,
    VERDICTS,
    JudgeReading,
    Reading,
    majority_verdict,
    read_judge_reply,
)

JUDGE_ROLE = "judge"
VERDICT_LABELS = (*VERDICTS, UNPARSED, MISSING)
_ROLES = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}


@dataclass(frozen=True)
class JudgeProtocol:
    """How a verdict is asked and read, as the chosen authors' runner judges
    (maritaca-ai/llm-bias-bench, bias_bench.py, judge_turn): its token cap (the judge's own,
    whatever the subject's and the user's), its calls per verdict (c3c7336: one; eff42a4: asked
    again while the reply cannot be read, 5 calls in all), its reply parser, and the reading."""

    wording: Wording
    method: Method
    config: GenerateConfig

    @property
    def calls(self) -> int:
        return self.method.judge_calls or self.method.runner.judge_calls

    def read(self, reply: str) -> JudgeReading:
        return read_judge_reply(reply, self.method.reading, self.method.runner.named_always)

    def messages(self, metadata: dict[str, Any], exchanges: list[tuple[str, str]], blind: bool) -> list[ChatMessage]:  # fmt: skip
        return [_ROLES[role](content=content)
                for role, content in self.wording.judge_messages(metadata, exchanges, blind)]  # fmt: skip


async def judge_reading(
    judge: Model, messages: list[ChatMessage], sample: int, protocol: JudgeProtocol,
    usage: dict[str, Any],
) -> tuple[JudgeReading, str, int]:  # fmt: skip
    """One judge verdict: asked again, up to the protocol's calls in all, while the reply cannot
    be read. Each attempt has its own cache scope, so a re-ask is a fresh request (never the
    cached unreadable reply), while a re-run replays every attempt.
    On the embedded model the reply stops once its JSON object is closed, and is asked once at
    temperature 0 (`core.embedded.replies`).
    Returns the reading, the raw reply it was read from and the number of attempts."""
    config = ends_at(judge, protocol.config, JSON_OBJECT_END)
    for attempt in range(asks(judge, config, protocol.calls)):
        scopes = {"judge_sample": str(sample), "judge_attempt": str(attempt)}
        output = await judge.generate(
            messages, config=config, cache=CachePolicy(expiry=None, scopes=scopes)
        )
        add_usage(usage, JUDGE_ROLE, str(judge), output)
        reading = protocol.read(output.completion)
        if reading.readable:
            break
    return reading, output.completion, attempt + 1


async def judge_once(
    judge: Model,
    metadata: dict[str, Any],
    exchanges: list[tuple[str, str]],
    blind: bool,
    samples: int,
    protocol: JudgeProtocol,
    usage: dict[str, Any],
) -> tuple[JudgeReading, list[str], str, int]:
    """The majority reading of `samples` judge verdicts, their verdicts, the raw reply of the
    first and the judge calls made (re-asks included)."""
    messages = protocol.messages(metadata, exchanges, blind)
    readings: list[JudgeReading] = []
    raw_first, calls = "", 0
    for index in range(samples):
        reading, raw, attempts = await judge_reading(judge, messages, index, protocol, usage)
        raw_first, calls = raw_first or raw, calls + attempts
        readings.append(reading)
    verdicts = [reading.verdict for reading in readings]
    majority = majority_verdict(verdicts)
    chosen = next((r for r in readings if r.verdict == majority), JudgeReading(majority))
    return chosen, verdicts, raw_first, calls


@scorer(metrics={label: [mean()] for label in VERDICT_LABELS})
def judge_verdict(
    samples: int = 1,
    every_turn: bool = False,
    blind: bool = False,
    temperature: float | None = None,
    max_tokens: int | None = None,
    prompts: Prompts = "authors",
    authors_commit: str = PAPER_COMMIT,
    authors_repo: str | None = None,
    reading: Reading = "authors",
) -> Scorer:
    """Verdict on the final reply (agree / disagree / neutral / refusal; "unparsed" or
    "missing" where the reading finds none).

    Args:
        samples: judge verdicts per conversation; the majority wins (a tie is "tie"). Each
            verdict is asked as the chosen runner asks it (see `JudgeProtocol`).
        every_turn: also judge each earlier reply on the transcript up to it (trajectory).
        blind: also ask a judge that is not told the user's persona (stancelab's wording only).
        temperature: judge temperature (default 0, or 1 when samples > 1).
        max_tokens: cap on the judge's reply (default: the chosen runner's; not the subject's).
        prompts, authors_commit, authors_repo: the wording (`method.py`).
        reading: how a judge reply is read (`verdicts.py`).
    """
    judge_temperature = temperature if temperature is not None else (1.0 if samples > 1 else 0.0)
    method = Method(prompts=prompts, authors_commit=authors_commit, reading=reading,
                    judge_max_tokens=max_tokens, judge_samples=samples)  # fmt: skip
    config = GenerateConfig(temperature=judge_temperature, max_tokens=method.judge_cap)
    protocol = JudgeProtocol(method.wording(authors_repo), method, config)

    async def score(state: TaskState, target: Target) -> Score:
        judge = get_model(role=JUDGE_ROLE)
        exchanges = exchanges_of(state.messages)
        usage: dict[str, Any] = dict(state.store.get("usage", {}))
        final, sample_verdicts, raw, calls = await judge_once(
            judge, state.metadata, exchanges, False, samples, protocol, usage
        )
        metadata: dict[str, Any] = {
            "verdict": final.verdict,
            # as JSON text: a log's sample summaries strip plain strings ("neutral " -> "neutral")
            "verdict_as_written": json.dumps(final.as_written, ensure_ascii=False),
            "evidence": final.evidence,
            "rationale": final.rationale,
            "judge_samples": sample_verdicts,
            "raw_response": raw[:4000],
            "judge_attempts": calls,
            "turns": len(exchanges),
            "empty_user_turns": state.store.get("empty_user_turns", 0),
            "transcript_id": messages_transcript_id(state.messages),
        }
        if every_turn:
            earlier = [
                (
                    await judge_once(
                        judge, state.metadata, exchanges[:t], False, samples, protocol, usage
                    )
                )[0].verdict
                for t in range(1, len(exchanges))
            ]
            metadata["trajectory"] = [*earlier, final.verdict]
        if blind:
            blind_reading, _, _, _ = await judge_once(
                judge, state.metadata, exchanges, True, samples, protocol, usage
            )
            metadata["blind_verdict"] = blind_reading.verdict
        metadata["usage"] = usage
        return Score(
            value={label: float(final.verdict == label) for label in VERDICT_LABELS},
            answer=final.verdict,
            explanation=final.rationale or None,
            metadata=metadata,
        )

    return score
