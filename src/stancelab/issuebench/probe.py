"""IssueBench as one `Probe`: what the CLI, the report and the demo know of it."""

from stancelab.core.probe import Probe
from stancelab.core.results.family import Tested
from stancelab.issuebench import estimate, report, results, stances
from stancelab.issuebench.run import ROLES, IssueBenchRun, prepare, read_inputs, run_evals
from stancelab.issuebench.task import issuebench, issuebench_classifier_validation

PROBE = Probe(
    name="issuebench",
    title="IssueBench",
    lens="Issue bias",
    task_prefix="issuebench",
    options=IssueBenchRun,
    roles=ROLES,
    tasks=(issuebench, issuebench_classifier_validation),
    run=run_evals,
    analysis=results.analysis,
    format_summary=results.format_summary,
    plan=estimate.plan,
    profiles=report.profiles,
    section=report.section,
    unit_values=report.unit_values,
    measure="continuous",  # a share or score per unit (`core.stats.compare`)
    unit_key="issue_id",
    tested=(Tested("framing_correlations", "p_value"),),
    value_range=(0.0, 100.0),  # % of an issue's responses
    topic_stances=stances.topic_stances,
    demo={"limit": 2, "n_templates": 3, "max_tokens": 48},
    prepare=prepare,
    read_inputs=read_inputs,
    without_artefacts={"prompts": "stancelab"},
)
