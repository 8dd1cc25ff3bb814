"""Inspect task `stancelab/conviction`: scenarios, argument pressure, sampled answers."""

from __future__ import annotations

import asyncio
from typing import Any

from inspect_ai import Task, task
from inspect_ai.model import CachePolicy, GenerateConfig, ModelOutput, get_model
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver

from stancelab.conviction.dataset import scenario_samples, shared_topic_statements
from stancelab.conviction.entropy import (
    cluster_by_entailment,
    discrete_semantic_entropy,
    predictive_entropy,
    semantic_entropy,
)
from stancelab.conviction.labels import label, read_agreement
from stancelab.conviction.prompts import (
    AGREEMENT,
    COUNTER_ARGUMENT,
    ENTAILMENT,
    SUPPORTING_ARGUMENT,
    scenario_prompt,
)
from stancelab.core.task_args import check_task_args

NLI_ROLE, WRITER_ROLE = "nli", "writer"
DEFAULT_SAMPLES, DEFAULT_ARGUMENT_SETS = 10, 3
ANSWER_TOKENS, NLI_TOKENS = 200, 8
_argument_locks: dict[str, asyncio.Lock] = {}


def _cache(**scopes: Any) -> CachePolicy:
    return CachePolicy(expiry=None, per_epoch=False, scopes={k: str(v) for k, v in scopes.items()})


async def read_opinion(statement: str, response: str) -> int | None:
    """Agreement with the statement read from an open answer by role `nli`."""
    nli = get_model(role=NLI_ROLE)
    output = await nli.generate(AGREEMENT.format(statement=statement, response=response),
                                config=GenerateConfig(temperature=0.0, max_tokens=NLI_TOKENS), cache=_cache())  # fmt: skip
    return read_agreement(output.completion)


async def read_pressured(argument: str, answer: str, supporting: bool) -> int | None:
    """Agreement with the original statement of an answer to `argument`, read in context: the
    reader sees the argument the answer responds to. A counter-argument (F.4) argues the
    negation, so agreeing with it is disagreeing with the statement, and vice versa."""
    reading = await read_opinion(argument, answer)
    return None if reading is None else reading * (1 if supporting else -1)


async def entails(premise: str, hypothesis: str) -> bool:
    nli = get_model(role=NLI_ROLE)
    output = await nli.generate(ENTAILMENT.format(premise=premise, hypothesis=hypothesis),
                                config=GenerateConfig(temperature=0.0, max_tokens=NLI_TOKENS), cache=_cache())  # fmt: skip
    return output.completion.strip().lower().startswith("entail")


async def write_argument(statement_id: str, statement: str, supporting: bool, index: int) -> str:
    """Argument set `index` for a statement (role `writer`, temperature 1), written once and
    shared by the three scenarios."""
    key = f"{statement_id}|{supporting}|{index}"
    lock = _argument_locks.setdefault(key, asyncio.Lock())
    async with lock:
        writer = get_model(role=WRITER_ROLE)
        prompt = (SUPPORTING_ARGUMENT if supporting else COUNTER_ARGUMENT).format(
            statement=statement
        )
        output = await writer.generate(prompt, config=GenerateConfig(temperature=1.0, max_tokens=ANSWER_TOKENS),
                                       cache=_cache(argument_set=index))  # fmt: skip
        return output.completion.strip()


def _sequence_logprob(output: ModelOutput) -> tuple[float | None, int]:
    choice = output.choices[0] if output.choices else None
    if not choice or not choice.logprobs or not choice.logprobs.content:
        return None, 0
    tokens = choice.logprobs.content
    return float(sum(token.logprob for token in tokens)), len(tokens)


async def sampled_answers(state: TaskState, samples: int) -> dict[str, Any]:
    """N answers at temperature 1 with log-probs, each answer's opinion (role `nli`, for the
    topic stance), and the answers clustered by bidirectional entailment."""
    subject = get_model()
    config = GenerateConfig(
        temperature=1.0, max_tokens=ANSWER_TOKENS, logprobs=True, top_logprobs=1
    )
    outputs = [
        await subject.generate(state.input_text, config=config, cache=_cache(sample=i))
        for i in range(samples)
    ]
    texts = [o.completion for o in outputs]
    logprobs = [_sequence_logprob(o) for o in outputs]
    decided: dict[tuple[int, int], bool] = {}

    async def entail(a: int, b: int) -> bool:
        if (a, b) not in decided:
            decided[(a, b)] = await entails(texts[a], texts[b])
        return decided[(a, b)]

    clusters = await cluster_by_entailment(len(texts), entail)
    result: dict[str, Any] = {
        "answers": texts,
        "opinions": [await read_opinion(state.metadata["statement"], text) for text in texts],
        "clusters": clusters,
        "dse": discrete_semantic_entropy(clusters),
    }
    if all(lp is not None for lp, _ in logprobs):
        sequence = [lp for lp, _ in logprobs]
        lengths = [n for _, n in logprobs]
        result |= {"pe": predictive_entropy(sequence), "pe_normalised": predictive_entropy(sequence, lengths),
                   "se": semantic_entropy(clusters, sequence, lengths)}  # fmt: skip
    return result


@solver
def conviction_solver(
    argument_sets: int = DEFAULT_ARGUMENT_SETS, samples: int = DEFAULT_SAMPLES
) -> Solver:
    """Opinion o in the scenario; opinions a_k under each argument set against o; for the
    original scenario, N sampled answers for the entropies."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        metadata = state.metadata
        state = await generate(state, cache=_cache(), temperature=0.0, max_tokens=ANSWER_TOKENS)
        o = await read_opinion(metadata["statement"], state.output.completion)
        pressured = []
        for index in range(argument_sets):
            if o is None:
                pressured.append({"set": index, "argument": None, "answer": None, "a": None})
                continue
            supporting = o == -1
            argument = await write_argument(
                metadata["statement_id"], metadata["statement"], supporting, index=index
            )
            answer = await get_model().generate(scenario_prompt(metadata["scenario"], argument),
                                                config=GenerateConfig(temperature=0.0, max_tokens=ANSWER_TOKENS), cache=_cache())  # fmt: skip
            a = await read_pressured(argument, answer.completion, supporting)
            pressured.append({"set": index, "supporting": supporting, "argument": argument,
                              "answer": answer.completion, "a": a})  # fmt: skip
        state.store.set("o", o)
        state.store.set("pressured", pressured)
        if metadata["scenario"] == "original" and samples > 0:
            state.store.set("uncertainty", await sampled_answers(state, samples))
        return state

    return solve


@scorer(metrics=[mean()])
def conviction_labels() -> Scorer:
    """Labels TL / PL / TR / PR per argument set ("unclear" when o or a is unclear)."""

    async def score(state: TaskState, target: Target) -> Score:
        o, b = state.store.get("o"), int(state.metadata["bias"])
        pressured = state.store.get("pressured", [])
        labels = [
            label(o, p["a"], b) if o is not None and p["a"] is not None else "unclear"
            for p in pressured
        ]
        true_share = (
            sum(lab in ("TL", "TR") for lab in labels) / len(labels) if labels else float("nan")
        )
        return Score(value=true_share, answer=",".join(labels),
                     metadata={"o": o, "labels": labels, "pressured": pressured,
                               "uncertainty": state.store.get("uncertainty")})  # fmt: skip

    return score


@task
def conviction(statements_file: str | None = None, limit: int | None = None,
               argument_sets: int = DEFAULT_ARGUMENT_SETS, samples: int = DEFAULT_SAMPLES,
               shared_topics: str = "", **unknown: Any) -> Task:  # fmt: skip
    """Testing Conviction: true vs performative stances across three scenarios.

    Args:
        statements_file: statements (JSONL or CSV) or a bundled set ("testing-conviction", the
            paper's 19, by default; "stancelab", 20 written for stancelab).
        limit: first N statements.
        argument_sets: argument sets written per statement (temperature 1).
        samples: sampled answers per statement for the entropies (0 to skip).
        shared_topics: "" (off), "all" or "a,b": only statements tagged with those shared
            topics (with no statements file, from the "topics" set), before `limit`.
    """
    check_task_args(conviction, unknown, {"limit": (limit, 1), "argument_sets": (argument_sets, 1),
                                          "samples": (samples, 0)})  # fmt: skip
    statements = shared_topic_statements(statements_file, shared_topics, limit)
    return Task(dataset=scenario_samples(statements),
                solver=conviction_solver(argument_sets, samples), scorer=conviction_labels(),
                metadata={"probe": "conviction"}, version=2)  # fmt: skip
