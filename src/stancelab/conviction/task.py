"""Inspect task `stancelab/conviction`: scenarios, argument pressure, sampled answers."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from inspect_ai import Task, task
from inspect_ai.model import CachePolicy, GenerateConfig, ModelOutput, get_model
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import collect

from stancelab.conviction.dataset import scenario_samples, shared_topic_statements
from stancelab.conviction.entropy import (
    CLUSTERING,
    STRICT,
    cluster_by_relation,
    discrete_semantic_entropy,
    predictive_entropy,
    semantic_entropy,
)
from stancelab.conviction.labels import label, read_agreement, read_persona_verdict
from stancelab.conviction.prompts import (
    AGREEMENT,
    COUNTER_ARGUMENT,
    ENTAILMENT,
    PERSONA_JUDGE,
    SUPPORTING_ARGUMENT,
    scenario_prompt,
)
from stancelab.core.runs.task_args import check_task_args, one_line_errors

NLI_ROLE, WRITER_ROLE, JUDGE_ROLE = "nli", "writer", "judge"
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


async def entailment_label(premise: str, hypothesis: str) -> str:
    """entailment / contradiction / neutral of (premise, hypothesis) by role `nli`; a reply
    naming neither of the first two reads as neutral."""
    nli = get_model(role=NLI_ROLE)
    output = await nli.generate(ENTAILMENT.format(premise=premise, hypothesis=hypothesis),
                                config=GenerateConfig(temperature=0.0, max_tokens=NLI_TOKENS), cache=_cache())  # fmt: skip
    reply = output.completion.strip().lower()
    return (
        "entailment"
        if reply.startswith("entail")
        else "contradiction"
        if reply.startswith("contradict")
        else "neutral"
    )


async def judge_persona(response: str) -> dict[str, Any]:
    """The F.2 judge (role `judge`, Appendix C): which of a true / pretend leftist / rightist
    wrote a persona answer; `verdict` None when its reply names no single class (counted)."""
    judge = get_model(role=JUDGE_ROLE)
    output = await judge.generate(PERSONA_JUDGE.format(candidate_model_response=response),
                                  config=GenerateConfig(temperature=0.0, max_tokens=ANSWER_TOKENS), cache=_cache())  # fmt: skip
    return {"reply": output.completion, "verdict": read_persona_verdict(output.completion)}


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


class AskedOnce:
    """`ask` called once per distinct arguments, its answer shared by every caller, those
    waiting while it is in flight included: identical requests asked at once would each miss
    Inspect's cache and each be paid (identical sampled answers give identical readings)."""

    def __init__(self, ask: Callable[..., Awaitable[Any]]) -> None:
        self.ask = ask
        self.answers: dict[tuple[Any, ...], Any] = {}
        self.asking: dict[tuple[Any, ...], anyio.Event] = {}

    async def __call__(self, *args: Any) -> Any:
        while args not in self.answers:
            if args in self.asking:
                await self.asking[args].wait()
                continue  # answered, or the asker failed: ask again
            self.asking[args] = done = anyio.Event()
            try:
                self.answers[args] = await self.ask(*args)
            finally:
                del self.asking[args]
                done.set()
        return self.answers[args]


async def sampled_answers(
    state: TaskState, samples: int, clustering: str = STRICT
) -> dict[str, Any]:
    """N answers at temperature 1 with log-probs, each answer's opinion (role `nli`, for the
    topic stance), and the answers clustered by meaning as Farquhar et al.'s code clusters
    them (`entropy.CLUSTERING`: strict bidirectional entailment, their default, or their
    non-strict variant), the question, here the statement, put before each answer in both."""
    subject = get_model()
    config = GenerateConfig(
        temperature=1.0, max_tokens=ANSWER_TOKENS, logprobs=True, top_logprobs=1
    )
    # independent answers (each its own cache key): asked at once, not one after another
    outputs = await collect(*(subject.generate(state.input_text, config=config, cache=_cache(sample=i))
                              for i in range(samples)))  # fmt: skip
    texts = [o.completion for o in outputs]
    logprobs = [_sequence_logprob(o) for o in outputs]
    compared = [f"{state.metadata['statement']} {text}" for text in texts]
    label = AskedOnce(entailment_label)

    async def relation(a: int, b: int) -> str:
        return await label(compared[a], compared[b])

    clusters = await cluster_by_relation(len(texts), relation, clustering)
    opinion = AskedOnce(read_opinion)
    result: dict[str, Any] = {
        "clustering": clustering,
        "answers": texts,
        "opinions": await collect(*(opinion(state.metadata["statement"], text) for text in texts)),
        "clusters": clusters,
        "dse": discrete_semantic_entropy(clusters),
    }
    if all(lp is not None for lp, _ in logprobs):
        sequence = [lp for lp, _ in logprobs]
        lengths = [n for _, n in logprobs]
        result |= {"pe": predictive_entropy(sequence), "pe_normalised": predictive_entropy(sequence, lengths),
                   "se": semantic_entropy(clusters, sequence, lengths)}  # fmt: skip
    return result


async def set_opinion(
    state: TaskState, index: int, o: int | None, opinion_per_set: bool
) -> tuple[int | None, str | None]:
    """The opinion argument set `index` presses against: the scenario's greedy one, or with
    `opinion_per_set`, for sets after the first, the reading of a fresh answer to the scenario
    at temperature 1 (so a set's L/R side can differ, as Table 3's "varying arguments" needs)."""
    if not opinion_per_set or index == 0:
        return o, None
    answer = await get_model().generate(state.input_text, cache=_cache(opinion_set=index),
                                        config=GenerateConfig(temperature=1.0, max_tokens=ANSWER_TOKENS))  # fmt: skip
    return await read_opinion(state.metadata["statement"], answer.completion), answer.completion


@solver
def conviction_solver(
    argument_sets: int = DEFAULT_ARGUMENT_SETS,
    samples: int = DEFAULT_SAMPLES,
    opinion_per_set: bool = False,
    clustering: str = STRICT,
    persona_judge: bool = False,
) -> Solver:
    """Opinion o in the scenario (with `opinion_per_set`, one per argument set); opinions a_k
    under each argument set against it; for the original scenario, N sampled answers for the
    entropies; with `persona_judge`, the F.2 judge's verdict on a persona answer."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        metadata = state.metadata
        state = await generate(state, cache=_cache(), temperature=0.0, max_tokens=ANSWER_TOKENS)
        o = await read_opinion(metadata["statement"], state.output.completion)

        async def pressed(index: int) -> dict[str, Any]:
            o_set, opinion_answer = await set_opinion(state, index, o, opinion_per_set)
            if o_set is None:
                return {"set": index, "o": None, "opinion_answer": opinion_answer,
                        "argument": None, "answer": None, "a": None}  # fmt: skip
            supporting = o_set == -1
            argument = await write_argument(
                metadata["statement_id"], metadata["statement"], supporting, index=index
            )
            answer = await get_model().generate(scenario_prompt(metadata["scenario"], argument),
                                                config=GenerateConfig(temperature=0.0, max_tokens=ANSWER_TOKENS), cache=_cache())  # fmt: skip
            a = await read_pressured(argument, answer.completion, supporting)
            return {"set": index, "o": o_set, "opinion_answer": opinion_answer, "supporting": supporting,
                    "argument": argument, "answer": answer.completion, "a": a}  # fmt: skip

        async def uncertainty() -> dict[str, Any] | None:
            if metadata["scenario"] != "original" or samples <= 0:
                return None
            return await sampled_answers(state, samples, clustering)

        # the argument sets and the sampled answers wait on nothing but the first answer: each
        # set's chain (argument, answer, reading) and the samples run side by side
        *pressured, sampled = await collect(*(pressed(index) for index in range(argument_sets)),
                                            uncertainty())  # fmt: skip
        state.store.set("o", o)
        state.store.set("pressured", pressured)
        if sampled is not None:
            state.store.set("uncertainty", sampled)
        if persona_judge and metadata["scenario"] in ("left", "right"):
            state.store.set("persona_judge", await judge_persona(state.output.completion))
        return state

    return solve


@scorer(metrics=[mean()])
def conviction_labels() -> Scorer:
    """Labels TL / PL / TR / PR per argument set, from the set's own opinion o ("unclear" when
    o or a is unclear)."""

    async def score(state: TaskState, target: Target) -> Score:
        o, b = state.store.get("o"), int(state.metadata["bias"])
        pressured = state.store.get("pressured", [])
        labels = []
        for p in pressured:
            o_set = p.get("o", o)
            labels.append(
                label(o_set, p["a"], b) if o_set is not None and p["a"] is not None else "unclear"
            )
        true_share = (
            sum(lab in ("TL", "TR") for lab in labels) / len(labels) if labels else float("nan")
        )
        return Score(value=true_share, answer=",".join(labels),
                     metadata={"o": o, "labels": labels, "pressured": pressured,
                               "uncertainty": state.store.get("uncertainty"),
                               "persona_judge": state.store.get("persona_judge")})  # fmt: skip

    return score


@task
@one_line_errors
def conviction(statements_file: str | None = None, limit: int | None = None,
               argument_sets: int = DEFAULT_ARGUMENT_SETS, samples: int = DEFAULT_SAMPLES,
               shared_topics: str = "", opinion_per_set: bool = False, clustering: str = STRICT,
               persona_judge: bool = False, **unknown: Any) -> Task:  # fmt: skip
    """Testing Conviction: true vs performative stances across three scenarios.

    Args:
        statements_file: statements (JSONL or CSV) or a bundled set ("testing-conviction", the
            paper's 19, by default; "stancelab", 20 written for stancelab).
        limit: first N statements.
        argument_sets: argument sets written per statement (temperature 1).
        samples: sampled answers per statement for the entropies (0 to skip).
        shared_topics: "" (off), "all" or "a,b": only statements tagged with those shared
            topics (with no statements file, from the "topics" set), before `limit`.
        opinion_per_set: each argument set after the first reads its own opinion from a fresh
            answer at temperature 1 (Table 3's "varying arguments" can then be inconsistent).
        clustering: "strict" (bidirectional entailment; Farquhar et al. 2024's default) or
            "non-strict" (their variant: no contradiction, not neutral both ways); the
            statement is put before each answer in both, as their code does.
        persona_judge: ask role `judge` the F.2 question about each persona answer (Table 8).
    """
    check_task_args(conviction, unknown, {"limit": (limit, 1), "argument_sets": (argument_sets, 1),
                                          "samples": (samples, 0)})  # fmt: skip
    if clustering not in CLUSTERING:
        raise ValueError(f"clustering must be one of {', '.join(CLUSTERING)}, got '{clustering}'")
    statements = shared_topic_statements(statements_file, shared_topics, limit)
    solver = conviction_solver(argument_sets, samples, opinion_per_set, clustering, persona_judge)
    return Task(dataset=scenario_samples(statements), solver=solver, scorer=conviction_labels(),
                metadata={"probe": "conviction"}, version=2)  # fmt: skip
