"""Which issues each model's OM headline rests on, named, so that a table that holds models
run on different issue sets (the paper's 104 issues vs the 10 controversial ones of Table 5)
shows the set beside each value and ranks only within a set (`Probe.unit_sets`)."""

from __future__ import annotations

from typing import Any

from stancelab.core.results.summary import RunResult


def _named(issues: frozenset[str], every: frozenset[str], subset: frozenset[str]) -> str:
    if issues == every:
        return f"all {len(every)} issues"
    if issues == subset:
        return f"the {len(subset)} controversial issues (Table 5)"
    return f"{len(issues)} of the {len(every)} issues"


def headline_issue_sets(run: RunResult) -> dict[str, str]:
    """{model: the issue set of its headline OM}; one set for every model when the run's
    summary names the set its headline ranks on (`om_issue_sets`)."""
    summary: dict[str, Any] = run.summary
    sets = summary.get("om_issue_sets")
    if sets and "om_headline" in summary:
        return dict.fromkeys(run.models, str(sets[sets["headline"]]["description"]))
    per_issue = run.table("om_issue")
    if per_issue.empty or "issue_id" not in per_issue:
        return {}
    every = frozenset(per_issue["issue_id"].astype(str))
    subset = frozenset((summary.get("controversial_subset") or {}).get("subset_run") or [])
    issues = per_issue.groupby("model")["issue_id"].agg(lambda ids: frozenset(ids.astype(str)))
    return {str(model): _named(found, every, subset) for model, found in issues.items()}
