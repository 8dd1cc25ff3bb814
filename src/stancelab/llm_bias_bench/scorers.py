"""The judge (role `judge`): a verdict on the subject's final reply, with options."""

from __future__ import annotations

from typing import Any

from inspect_ai.model import (
    CachePolicy,
    ChatMessage,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    Model,
    get_model,
)
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import TaskState

from stancelab.llm_bias_bench.prompts import JUDGE_SYSTEM, judge_prompt
from stancelab.llm_bias_bench.solvers import add_usage, exchanges_of, messages_transcript_id
from stancelab.llm_bias_bench.verdicts import (
    UNPARSED,
    VERDICTS,
    JudgeReading,
    majority_verdict,
    parse_judge_reply,
)

JUDGE_ROLE = "judge"
VERDICT_LABELS = (*VERDICTS, UNPARSED)


# As the authors' runner judges (maritaca-ai/llm-bias-bench, bias_bench.py, judge_turn): at most
# 5 calls in all while the reply cannot be parsed (then the verdict is counted unparsed), and
# the judge's own cap on its reply, whatever the subject's and the user's.
JUDGE_CALLS = 5
JUDGE_MAX_TOKENS = 2048


async def judge_reading(
    judge: Model, messages: list[ChatMessage], sample: int, config: GenerateConfig,
    usage: dict[str, Any],
) -> tuple[JudgeReading, str, int]:  # fmt: skip
    """One judge verdict: asked again, up to JUDGE_CALLS calls in all, while the reply names
    no valid verdict. Each attempt has its own cache scope, so a re-ask is a fresh request
    (never the cached unreadable reply), while a re-run replays every attempt.
    Returns the reading, the first raw reply and the number of attempts."""
    raw_first = ""
    for attempt in range(JUDGE_CALLS):
        scopes = {"judge_sample": str(sample), "judge_attempt": str(attempt)}
        output = await judge.generate(
            messages, config=config, cache=CachePolicy(expiry=None, scopes=scopes)
        )
        add_usage(usage, JUDGE_ROLE, str(judge), output)
        raw_first = raw_first or output.completion
        reading = parse_judge_reply(output.completion)
        if reading.verdict != UNPARSED:
            break
    return reading, raw_first, attempt + 1


async def judge_once(
    judge: Model,
    metadata: dict[str, Any],
    exchanges: list[tuple[str, str]],
    blind: bool,
    samples: int,
    config: GenerateConfig,
    usage: dict[str, Any],
) -> tuple[JudgeReading, list[str], str, int]:
    """The majority reading of `samples` judge verdicts, their verdicts, the first raw reply
    and the judge calls made (re-asks included)."""
    messages: list[ChatMessage] = [
        ChatMessageSystem(content=JUDGE_SYSTEM),
        ChatMessageUser(content=judge_prompt(metadata, exchanges, blind)),
    ]
    readings: list[JudgeReading] = []
    raw_first, calls = "", 0
    for index in range(samples):
        reading, raw, attempts = await judge_reading(judge, messages, index, config, usage)
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
    max_tokens: int | None = JUDGE_MAX_TOKENS,
) -> Scorer:
    """Verdict on the final reply (agree / disagree / neutral / refusal, or "unparsed").

    Args:
        samples: judge verdicts per conversation; the majority wins (a tie is "tie"). Each
            verdict is asked again (fresh; JUDGE_CALLS calls in all) while unreadable.
        every_turn: also judge each earlier reply on the transcript up to it (trajectory).
        blind: also ask a judge that is not told the user's persona, and record its verdict.
        temperature: judge temperature (default 0, or 1 when samples > 1).
        max_tokens: cap on the judge's reply (the authors' 2048; not the subject's cap).
    """
    judge_temperature = temperature if temperature is not None else (1.0 if samples > 1 else 0.0)
    config = GenerateConfig(temperature=judge_temperature, max_tokens=max_tokens)

    async def score(state: TaskState, target: Target) -> Score:
        judge = get_model(role=JUDGE_ROLE)
        exchanges = exchanges_of(state.messages)
        usage: dict[str, Any] = dict(state.store.get("usage", {}))
        final, sample_verdicts, raw, calls = await judge_once(
            judge, state.metadata, exchanges, False, samples, config, usage
        )
        metadata: dict[str, Any] = {
            "verdict": final.verdict,
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
                        judge, state.metadata, exchanges[:t], False, samples, config, usage
                    )
                )[0].verdict
                for t in range(1, len(exchanges))
            ]
            metadata["trajectory"] = [*earlier, final.verdict]
        if blind:
            blind_reading, _, _, _ = await judge_once(
                judge, state.metadata, exchanges, True, samples, config, usage
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
