"""Testing Conviction as one `Probe`: what the CLI, the report and the demo know of it."""

from stancelab.conviction import estimate, report, results, stances
from stancelab.conviction.run import ROLES, ConvictionRun, read_inputs, run_evals
from stancelab.conviction.task import conviction
from stancelab.core.probe import Probe

PROBE = Probe(
    name="conviction",
    title="Testing Conviction",
    lens="Conviction",
    task_prefix="conviction",
    options=ConvictionRun,
    roles=ROLES,
    tasks=(conviction,),
    run=run_evals,
    analysis=results.analysis,
    format_summary=results.format_summary,
    plan=estimate.plan,
    profiles=report.profiles,
    section=report.section,
    unit_values=report.unit_values,
    measure="continuous",  # a share or score per unit (`core.stats.compare`)
    unit_key="statement_id",
    value_range=(0.0, 100.0),  # % of a statement's answers holding the true stance
    topic_stances=stances.topic_stances,
    demo={"limit": 2, "samples": 3, "argument_sets": 1},
    read_inputs=read_inputs,
)
