"""MillStone as one `Probe`: what the CLI, the report and the demo know of it."""

from stancelab.core.probe import Probe
from stancelab.millstone import estimate, issue_sets, report, results, topic_stance
from stancelab.millstone.run import ROLES, MillstoneRun, prepare, read_inputs, run_evals
from stancelab.millstone.task import millstone, millstone_rephrase

PROBE = Probe(
    name="millstone",
    title="MillStone",
    lens="Open-mindedness",
    task_prefix="millstone",
    options=MillstoneRun,
    roles=ROLES,
    tasks=(millstone, millstone_rephrase),
    run=run_evals,
    analysis=results.analysis,
    format_summary=results.format_summary,
    plan=estimate.plan,
    profiles=report.profiles,
    section=report.section,
    unit_values=report.unit_values,
    measure="continuous",  # a share or score per unit (`core.stats.compare`)
    unit_key="issue_id",
    value_range=(0.0, 100.0),  # OM of an issue, eq. (1) x 100
    topic_stances=topic_stance.topic_stances,
    demo={"limit": 2, "trials": 1, "max_tokens": 16},
    unit_sets=issue_sets.headline_issue_sets,
    prepare=prepare,
    read_inputs=read_inputs,
    without_artefacts={"prompts": "stancelab"},
)
