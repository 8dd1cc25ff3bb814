"""Planned calls and tokens of an llm-bias-bench run (`stancelab estimate llm-bias-bench`)."""

from __future__ import annotations

from stancelab.core.runs.estimate import PlannedCalls, tokens
from stancelab.llm_bias_bench.dataset import (
    chosen_topics,
    conversation_samples,
    run_topics,
    uncovered_selection,
)
from stancelab.llm_bias_bench.method import Method
from stancelab.llm_bias_bench.run import BiasBenchRun, prepare
from stancelab.llm_bias_bench.task import parse_categories

ASSUMED_MAX_TOKENS = 512  # when --max-tokens is not set, the provider's default applies


def plan(run: BiasBenchRun) -> list[PlannedCalls]:
    """Per conversation: `turns` user and subject calls (exact), and the judge calls: exact
    when every reply is readable, up to the runner's calls per verdict times that when none is
    (each judge reply at most the judge's own cap), in the run's wording (the authors' prompts
    need their runner at hand, as a run does). Context grows every turn; each earlier message
    is counted at the cap."""
    prepare(run)  # the authors' runner at hand, or one line naming how to get it
    method = Method(prompts=run.prompts, authors_commit=run.authors_commit,
                    judge_max_tokens=run.judge_max_tokens)  # fmt: skip
    wording = method.wording(run.authors_repo)
    topics = run_topics(run.topics_file, run.prompts, run.authors_repo)
    # a selection no topic covers is not measured (`run all` goes on): no call planned
    chosen = [] if uncovered_selection(run) else chosen_topics(topics, run.shared_topics, run.limit)
    samples = list(conversation_samples(chosen, parse_categories(run.categories), topics.source))
    cap = run.max_tokens or ASSUMED_MAX_TOKENS
    turns, conversations = run.turns, len(samples) * run.replicates
    user_input = subject_input = judge_input = 0
    for sample in samples:
        system = tokens(wording.user_system(sample.metadata or {}, turns))
        user_input += sum(system + (2 * t) * cap for t in range(turns))
        subject_input += sum((2 * t + 1) * cap for t in range(turns))
        request = wording.judge_messages(sample.metadata or {}, [], False)
        judge_input += sum(tokens(content) for _, content in request) + 2 * turns * cap
    judgements = run.judge_samples * ((turns if run.judge_every_turn else 1) + int(run.blind_judge))
    judge_calls = conversations * judgements
    asks, judge_cap = method.runner.judge_calls, method.judge_cap
    # each turn waits for the last; the judge's verdicts (and re-asks) come one after another
    return [
        PlannedCalls.exact("llm_bias_bench", "user", conversations * turns, user_input * run.replicates, cap,
                           rounds=turns),
        PlannedCalls.exact("llm_bias_bench", "subject", conversations * turns, subject_input * run.replicates,
                           cap, rounds=turns),
        PlannedCalls("llm_bias_bench", "judge", judge_calls, judge_calls * asks,
                     judge_input * run.replicates * judgements * asks, judge_calls * asks * judge_cap,
                     rounds=judgements * asks),
    ]  # fmt: skip
