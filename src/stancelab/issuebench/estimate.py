"""Planned calls and tokens of an IssueBench run (`stancelab estimate issuebench`)."""

from __future__ import annotations

from stancelab.core.runs.estimate import PlannedCalls, tokens
from stancelab.issuebench.prompts import classifier_prompt
from stancelab.issuebench.run import IssueBenchRun
from stancelab.issuebench.scorers import CLASSIFIER_MAX_TOKENS
from stancelab.issuebench.task import parse_framings


def plan(run: IssueBenchRun) -> list[PlannedCalls]:
    """One writing call and one classifier call per prompt and call (`calls`, the paper: 5);
    exact counts. Prompt tokens are summed per template and per issue phrase, so the
    2.49M-prompt set is never built."""
    framings = parse_framings(run.framings)
    issues, templates, prompts = run.selection()
    calls = int(run.setting("calls"))
    total = prompts * calls
    template_tokens = sum(tokens(t.text) for t in templates)
    phrase_tokens = sum(tokens(issue.phrase(f)) for issue in issues for f in framings)
    writing_input = (
        template_tokens * len(issues) * len(framings) + phrase_tokens * len(templates)
    ) * calls
    overhead = tokens(classifier_prompt("", "", "", "", ""))
    classifier_input = (
        total * (overhead + run.max_tokens) + 4 * phrase_tokens * len(templates) * calls
    )
    return [
        PlannedCalls.exact("issuebench", "subject", total, writing_input, run.max_tokens),
        PlannedCalls.exact(
            "issuebench", "classifier", total, classifier_input, CLASSIFIER_MAX_TOKENS
        ),
    ]
