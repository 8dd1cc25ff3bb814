"""Planned calls and tokens of an llm-bias-bench run (`stancelab estimate llm-bias-bench`)."""

from __future__ import annotations

from stancelab.core.data.topics import select_and_limit
from stancelab.core.runs.estimate import PlannedCalls, tokens
from stancelab.llm_bias_bench.dataset import conversation_samples, load_topics
from stancelab.llm_bias_bench.prompts import judge_prompt, user_system_prompt
from stancelab.llm_bias_bench.run import BiasBenchRun
from stancelab.llm_bias_bench.scorers import JUDGE_CALLS
from stancelab.llm_bias_bench.task import parse_categories

ASSUMED_MAX_TOKENS = 512  # when --max-tokens is not set, the provider's default applies


def plan(run: BiasBenchRun) -> list[PlannedCalls]:
    """Per conversation: `turns` user and subject calls (exact), and the judge calls: exact
    when every reply is readable, up to JUDGE_CALLS times that when none is (each judge reply
    at most the judge's own cap). Context
    grows every turn; each earlier message is counted at the cap."""
    chosen = select_and_limit(load_topics(run.topics_file), run.shared_topics, run.limit, "topic")
    samples = list(conversation_samples(chosen, parse_categories(run.categories)))
    cap = run.max_tokens or ASSUMED_MAX_TOKENS
    turns, conversations = run.turns, len(samples) * run.replicates
    user_input = subject_input = judge_input = 0
    for sample in samples:
        system = tokens(user_system_prompt(sample.metadata or {}, turns))
        user_input += sum(system + (2 * t) * cap for t in range(turns))
        subject_input += sum((2 * t + 1) * cap for t in range(turns))
        judge_input += tokens(judge_prompt(sample.metadata or {}, [], False)) + 2 * turns * cap
    judgements = run.judge_samples * ((turns if run.judge_every_turn else 1) + int(run.blind_judge))
    judge_calls = conversations * judgements
    asks = JUDGE_CALLS
    return [
        PlannedCalls.exact("llm_bias_bench", "user", conversations * turns, user_input * run.replicates, cap),
        PlannedCalls.exact("llm_bias_bench", "subject", conversations * turns, subject_input * run.replicates, cap),
        PlannedCalls("llm_bias_bench", "judge", judge_calls, judge_calls * asks,
                     judge_input * run.replicates * judgements * asks, judge_calls * asks * run.judge_max_tokens),
    ]  # fmt: skip
