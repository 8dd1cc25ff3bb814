"""The conversation: a simulated user (role `user`) talks with the subject for N turns, in the
run's wording (the authors' prompts by default, `method.py`)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from inspect_ai.model import (
    CachePolicy,
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    ModelOutput,
    get_model,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver

from stancelab.llm_bias_bench.authors import PAPER_COMMIT
from stancelab.llm_bias_bench.method import Method, Prompts

USER_ROLE = "user"
CACHE = CachePolicy(expiry=None)
EMPTY_USER_MESSAGE = "..."
USER_TEMPERATURE = 0.8  # §3.1 as the authors ran it: user 0.8, subject 0.7, judge 0.0
SUBJECT_TEMPERATURE = 0.7


def add_usage(store: dict[str, Any], role: str, model: str, output: ModelOutput) -> None:
    """Accumulate token usage of one call under its role."""
    usage = store.setdefault(role, {"model": model, "input_tokens": 0, "output_tokens": 0})
    if output.usage is not None:
        usage["input_tokens"] += output.usage.input_tokens
        usage["output_tokens"] += output.usage.output_tokens


def _stripped_reply(state: TaskState) -> TaskState:
    """The subject's last reply stripped of surrounding whitespace where it is kept, as the
    authors' runner keeps it (what the subject, the simulated user and the judge read)."""
    last = state.messages[-1]
    if isinstance(last, ChatMessageAssistant) and last.text != last.text.strip():
        state.messages[-1] = last.model_copy(update={"content": last.text.strip()})
    return state


@solver
def converse(
    turns: int = 5,
    user_temperature: float | None = USER_TEMPERATURE,
    user_max_tokens: int | None = None,
    prompts: Prompts = "authors",
    authors_commit: str = PAPER_COMMIT,
    authors_repo: str | None = None,
) -> Solver:
    """Alternate simulated-user and subject messages; the subject sees a plain chat, the
    simulated user its replies with a turn cue, in the run's wording."""
    method = Method(prompts=prompts, authors_commit=authors_commit)
    wording = method.wording(authors_repo)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        simulator = get_model(role=USER_ROLE)
        config = GenerateConfig(temperature=user_temperature, max_tokens=user_max_tokens)
        simulator_view: list[ChatMessage] = [
            ChatMessageSystem(content=wording.user_system(state.metadata, turns))
        ]
        usage: dict[str, Any] = {}
        state.messages = []
        empty_user_turns = 0
        for turn in range(1, turns + 1):
            reply = (state.messages[-1].text or EMPTY_USER_MESSAGE) if turn > 1 else ""
            cue = wording.user_cue(turn, turns, reply)
            simulator_view.append(ChatMessageUser(content=cue))
            user_output = await simulator.generate(simulator_view, config=config, cache=CACHE)
            add_usage(usage, USER_ROLE, str(simulator), user_output)
            user_text = user_output.completion.strip()
            if not user_text:
                empty_user_turns += 1
                user_text = EMPTY_USER_MESSAGE
            simulator_view.append(ChatMessageAssistant(content=user_text))
            state.messages.append(ChatMessageUser(content=user_text))
            state = await generate(state, cache=CACHE)
            if method.strips_replies:
                state = _stripped_reply(state)
            add_usage(usage, "subject", str(state.model), state.output)
        state.store.set("usage", usage)
        state.store.set("empty_user_turns", empty_user_turns)
        return state

    return solve


def exchanges_of(messages: list[ChatMessage]) -> list[tuple[str, str]]:
    """(user message, assistant reply) pairs of a conversation, in order."""
    pairs: list[tuple[str, str]] = []
    pending_user: str | None = None
    for message in messages:
        if message.role == "user":
            pending_user = message.text
        elif message.role == "assistant" and pending_user is not None:
            pairs.append((pending_user, message.text))
            pending_user = None
    return pairs


def transcript_id(exchanges: list[tuple[str, str]]) -> str:
    """A short hash of a conversation's (user, assistant) messages: equal for the same
    conversation judged in two runs (e.g. by two judges, served from the cache)."""
    return hashlib.sha1(json.dumps(exchanges, ensure_ascii=False).encode()).hexdigest()[:16]


def messages_transcript_id(messages: list[ChatMessage]) -> str:
    """`transcript_id` of a conversation's user and assistant messages, in order."""
    return transcript_id([(m.role, m.text) for m in messages if m.role in ("user", "assistant")])
