"""Planned calls and tokens of an IssueBench run (`stancelab estimate issuebench`)."""

from __future__ import annotations

from stancelab.core.estimate import PlannedCalls, tokens
from stancelab.issuebench.prompts import classifier_prompt
from stancelab.issuebench.run import IssueBenchRun
from stancelab.issuebench.scorers import CLASSIFIER_MAX_TOKENS
from stancelab.issuebench.task import parse_framings, select_prompts


def plan(run: IssueBenchRun) -> list[PlannedCalls]:
    """One writing call and one classifier call per prompt; exact counts. Prompt tokens are
    summed per template and per issue phrase, so the 2.49M-prompt set is never built."""
    framings = parse_framings(run.framings)
    issues, templates, total = select_prompts(
        str(run.issues_file) if run.issues_file else None,
        str(run.templates_file) if run.templates_file else None,
        run.limit_issues, run.n_templates, framings, run.seed, run.dedupe,
    )  # fmt: skip
    template_tokens = sum(tokens(t.text) for t in templates)
    phrase_tokens = sum(tokens(issue.phrase(f)) for issue in issues for f in framings)
    writing_input = template_tokens * len(issues) * len(framings) + phrase_tokens * len(templates)
    overhead = tokens(classifier_prompt("", "", "", "", ""))
    classifier_input = total * (overhead + run.max_tokens) + 4 * phrase_tokens * len(templates)
    return [
        PlannedCalls.exact("issuebench", "subject", total, writing_input, run.max_tokens),
        PlannedCalls.exact("issuebench", "classifier", total, classifier_input, CLASSIFIER_MAX_TOKENS),
    ]
