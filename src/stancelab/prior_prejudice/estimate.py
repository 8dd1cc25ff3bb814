"""Planned calls and tokens of a prior-prejudice run (`stancelab estimate prior-prejudice`)."""

from __future__ import annotations

from stancelab.core.runs.estimate import PlannedCalls, sample_input_tokens, tokens
from stancelab.prior_prejudice.dataset import run_claims
from stancelab.prior_prejudice.prompts import (
    CONTROL_ARGUMENT,
    DEBATE_JUDGING,
    ESSAY_QUALITY,
    FAILURE_MODE_JUDGE,
    NEGATION,
    REASONING_TEMPLATES,
    STRONGER_ARGUMENT,
)
from stancelab.prior_prejudice.run import PriorPrejudiceRun
from stancelab.prior_prejudice.tasks import (
    NEGATION_TOKENS,
    RATING_TOKENS,
    REASONING_TOKENS,
    RESTRICTED_CATEGORIES,
    parse_templates,
    prior_prejudice,
    prior_prejudice_probe,
)

ARGUMENTS_PER_CLAIM = 4  # supporting / opposing x standard / strong


def _rating_tokens(templates: tuple[str, ...]) -> float:
    """Mean output cap per rating call over the templates."""
    return sum(
        REASONING_TOKENS if t in REASONING_TEMPLATES else RATING_TOKENS for t in templates
    ) / len(templates)


def plan(run: PriorPrejudiceRun) -> list[PlannedCalls]:
    """Ranges: the stronger rewrite is skipped after a refusal, refused arguments are not
    rated, and the judge codes only high ratings of bare claims under reasoning templates."""
    claims = run_claims(run.claims_file, run.shared_topics, run.limit, run.topic_map_file)
    templates = parse_templates(run.templates)
    written = run.generate_arguments and not all(claim.has_arguments for claim in claims)
    plans = []
    unnegated = sum(claim.negation is None for claim in claims) if run.write_negations else 0
    if unnegated:
        plans.append(PlannedCalls.exact("prior_prejudice_negations", "writer", unnegated,
                                        unnegated * tokens(NEGATION.format(claim="x" * 80)), NEGATION_TOKENS))  # fmt: skip
    if written:
        control = tokens(CONTROL_ARGUMENT.format(verb="supports", claim="x" * 80))
        stronger = (
            tokens(STRONGER_ARGUMENT.format(claim="x" * 80, argument="")) + run.argument_tokens
        )
        calls = len(claims) * 2
        # the A.3 conversation adds an elicitation turn for restricted supporting arguments
        extra = (
            sum(c.category in RESTRICTED_CATEGORIES for c in claims)
            if run.writer_conversation
            else 0
        )
        # the control argument, then its stronger rewrite (after the elicitation turn)
        plans.append(PlannedCalls("prior_prejudice_arguments", "writer", calls, 2 * calls + extra,
                                  (calls + extra) * (control + stronger), (2 * calls + extra) * run.argument_tokens,
                                  rounds=3 if run.writer_conversation else 2))  # fmt: skip
    bare_calls, bare_input = sample_input_tokens(prior_prejudice(
        claims_file=str(run.claims_file) if run.claims_file else None, limit=run.limit, templates=run.templates,
        **run.topic_args()))  # fmt: skip
    present_bare = (2 * len(claims) - sum(c.negation is None for c in claims)) * len(templates)
    bare_only = present_bare + unnegated * len(templates)
    argument_calls = (
        len(claims) * len(templates) * ARGUMENTS_PER_CLAIM if written else bare_calls - present_bare
    )
    per_call = bare_input // max(bare_calls, 1)
    argument_tokens = run.argument_tokens if written else 0
    rating_cap = _rating_tokens(templates)
    total_max = bare_only + argument_calls
    plans.append(PlannedCalls("prior_prejudice", "subject", bare_only, total_max,
                              bare_input + unnegated * len(templates) * per_call
                              + (argument_calls if written else 0) * (per_call + argument_tokens),
                              int(total_max * rating_cap)))  # fmt: skip
    reasoning = sum(t in REASONING_TEMPLATES for t in templates) * len(claims)  # negations only
    judge = (
        tokens(FAILURE_MODE_JUDGE.format(assertion="x" * 80, rating="5.0", explanation=""))
        + REASONING_TOKENS
    )
    plans.append(
        PlannedCalls("prior_prejudice", "judge", 0, reasoning, reasoning * judge, reasoning * 200)
    )
    if run.shared_topics.strip():  # no group probe or cross-task checks on shared topics
        return plans
    if run.probe:
        calls, input_tokens = sample_input_tokens(
            prior_prejudice_probe(templates=run.templates, limit=run.limit)
        )
        plans.append(
            PlannedCalls.exact(
                "prior_prejudice_probe", "subject", calls, input_tokens, int(rating_cap)
            )
        )
    if run.cross_task:
        factual = sum(claim.category in RESTRICTED_CATEGORIES for claim in claims)
        essay = tokens(ESSAY_QUALITY.format(essay="")) + run.argument_tokens
        debate = (
            tokens(DEBATE_JUDGING.format(claim="x" * 80, first="", second="", rated="A"))
            + 2 * run.argument_tokens
        )
        plans.append(PlannedCalls("prior_prejudice_cross_task", "subject", 0, 6 * factual,
                                  factual * (2 * essay + 4 * debate), 6 * factual * RATING_TOKENS))  # fmt: skip
    return plans
