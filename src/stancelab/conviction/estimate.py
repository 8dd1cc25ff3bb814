"""Planned calls and tokens of a Testing Conviction run (`stancelab estimate conviction`)."""

from __future__ import annotations

from stancelab.conviction.dataset import shared_topic_statements
from stancelab.conviction.prompts import AGREEMENT, COUNTER_ARGUMENT, ENTAILMENT
from stancelab.conviction.run import ConvictionRun
from stancelab.conviction.task import ANSWER_TOKENS, NLI_TOKENS, conviction
from stancelab.core.estimate import PlannedCalls, sample_input_tokens, tokens


def plan(run: ConvictionRun) -> list[PlannedCalls]:
    """Ranges: follow-ups (arguments, pressured answers, their readings) happen only when the
    first opinion is readable, and semantic-entropy clustering asks between n-1 and
    n(n-1) entailment questions for n sampled answers."""
    task = conviction(statements_file=str(run.statements_file) if run.statements_file else None,
                      limit=run.limit, argument_sets=run.argument_sets, samples=run.samples,
                      shared_topics=run.shared_topics)  # fmt: skip
    scenarios, prompt_tokens = sample_input_tokens(task)
    statements = len(shared_topic_statements(run.statements_file, run.shared_topics, run.limit))
    sets, n = run.argument_sets, run.samples
    reading = tokens(AGREEMENT.format(statement="", response="")) + ANSWER_TOKENS
    entail = tokens(ENTAILMENT.format(premise="", hypothesis="")) + 2 * ANSWER_TOKENS
    argument = tokens(COUNTER_ARGUMENT.format(statement="")) + ANSWER_TOKENS
    per_scenario = prompt_tokens // max(scenarios, 1)
    pressured = scenarios * sets
    sampled = statements * n  # each sampled answer's opinion is read (topic stance)
    entailment_min, entailment_max = statements * max(n - 1, 0), statements * n * max(n - 1, 0)
    return [
        PlannedCalls("conviction", "subject", scenarios + statements * n, scenarios + pressured + statements * n,
                     prompt_tokens + pressured * (per_scenario + ANSWER_TOKENS) + statements * n * per_scenario,
                     (scenarios + pressured + statements * n) * ANSWER_TOKENS),
        PlannedCalls("conviction", "nli", scenarios + sampled + entailment_min,
                     scenarios + sampled + pressured + entailment_max,
                     (scenarios + sampled + pressured) * reading + entailment_max * entail,
                     (scenarios + sampled + pressured + entailment_max) * NLI_TOKENS),
        PlannedCalls("conviction", "writer", 0, statements * sets * 2, statements * sets * 2 * argument,
                     statements * sets * 2 * ANSWER_TOKENS),
    ]  # fmt: skip
