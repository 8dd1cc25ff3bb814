"""Planned calls and tokens of a Testing Conviction run (`stancelab estimate conviction`)."""

from __future__ import annotations

from stancelab.conviction.dataset import shared_topic_statements
from stancelab.conviction.prompts import AGREEMENT, COUNTER_ARGUMENT, ENTAILMENT, PERSONA_JUDGE
from stancelab.conviction.run import ConvictionRun
from stancelab.conviction.task import ANSWER_TOKENS, NLI_TOKENS, conviction
from stancelab.core.runs.estimate import PlannedCalls, sample_input_tokens, tokens


def plan(run: ConvictionRun) -> list[PlannedCalls]:
    """Ranges: follow-ups (arguments, pressured answers, their readings) happen only when the
    first opinion is readable; semantic-entropy clustering asks up to n(n-1) entailment
    questions for n sampled answers; identical sampled answers are read and compared once
    (`task.AskedOnce`), so at the least one reading and one entailment question each."""
    task = conviction(statements_file=str(run.statements_file) if run.statements_file else None,
                      limit=run.limit, argument_sets=run.argument_sets, samples=run.samples,
                      shared_topics=run.shared_topics, opinion_per_set=run.opinion_per_set,
                      clustering=run.clustering, persona_judge=run.persona_judge)  # fmt: skip
    scenarios, prompt_tokens = sample_input_tokens(task)
    statements = len(shared_topic_statements(run.statements_file, run.shared_topics, run.limit))
    sets, n = run.argument_sets, run.samples
    reading = tokens(AGREEMENT.format(statement="", response="")) + ANSWER_TOKENS
    entail = tokens(ENTAILMENT.format(premise="", hypothesis="")) + 2 * ANSWER_TOKENS
    argument = tokens(COUNTER_ARGUMENT.format(statement="")) + ANSWER_TOKENS
    per_scenario = prompt_tokens // max(scenarios, 1)
    pressured = scenarios * sets
    sampled = statements * n  # each distinct sampled answer's opinion is read (topic stance)
    sampled_min = statements * min(n, 1)  # every sampled answer alike
    entailment_min, entailment_max = (
        statements * min(max(n - 1, 0), 1),
        statements * n * max(n - 1, 0),
    )
    return [*_main_calls(scenarios, prompt_tokens, statements, sets, n, pressured, (sampled_min, sampled),
                         per_scenario, reading, entail, argument, entailment_min, entailment_max),
            *_variant_calls(run, scenarios, statements, per_scenario, reading)]  # fmt: skip


def _variant_calls(run: ConvictionRun, scenarios: int, statements: int, per_scenario: int,
                   reading: int) -> list[PlannedCalls]:  # fmt: skip
    """The opinion-per-set answers and readings, and the F.2 judge's calls, when asked for."""
    calls = []
    if run.opinion_per_set and run.argument_sets > 1:
        extra = scenarios * (run.argument_sets - 1)
        rounds = run.argument_sets - 1
        calls += [PlannedCalls("conviction", "subject", extra, extra, extra * per_scenario, extra * ANSWER_TOKENS,
                               rounds),
                  PlannedCalls("conviction", "nli", extra, extra, extra * reading, extra * NLI_TOKENS, rounds)]  # fmt: skip
    if run.persona_judge:
        judged = statements * 2
        prompt = tokens(PERSONA_JUDGE.format(candidate_model_response="")) + ANSWER_TOKENS
        calls.append(
            PlannedCalls(
                "conviction", "judge", judged, judged, judged * prompt, judged * ANSWER_TOKENS
            )
        )
    return calls


def _main_calls(scenarios: int, prompt_tokens: int, statements: int, sets: int, n: int, pressured: int,
                readings: tuple[int, int], per_scenario: int, reading: int, entail: int, argument: int,
                entailment_min: int, entailment_max: int) -> list[PlannedCalls]:  # fmt: skip
    """Scenario answers, pressured answers, readings, entailment questions and arguments. Rounds:
    the calls the original scenario's sample makes one after another (its answer and reading,
    per argument set an argument, an answer and its reading, then N sampled answers, at most
    n(n-1) entailment questions and N readings). `readings`: the fewest and most readings
    of sampled answers."""
    sampled_min, sampled = readings
    return [
        PlannedCalls("conviction", "subject", scenarios + statements * n, scenarios + pressured + statements * n,
                     prompt_tokens + pressured * (per_scenario + ANSWER_TOKENS) + statements * n * per_scenario,
                     (scenarios + pressured + statements * n) * ANSWER_TOKENS, 1 + sets + n),
        PlannedCalls("conviction", "nli", scenarios + sampled_min + entailment_min,
                     scenarios + sampled + pressured + entailment_max,
                     (scenarios + sampled + pressured) * reading + entailment_max * entail,
                     (scenarios + sampled + pressured + entailment_max) * NLI_TOKENS,
                     1 + sets + n + n * max(n - 1, 0)),
        PlannedCalls("conviction", "writer", 0, statements * sets * 2, statements * sets * 2 * argument,
                     statements * sets * 2 * ANSWER_TOKENS, sets),
    ]  # fmt: skip
