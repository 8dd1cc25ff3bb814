"""Prior prejudice as one `Probe`: what the CLI, the report and the demo know of it."""

from stancelab.core.probe import Probe
from stancelab.core.results.family import Tested
from stancelab.prior_prejudice import analysis as an
from stancelab.prior_prejudice import estimate, report, results, stances, tasks
from stancelab.prior_prejudice.run import ROLES, PriorPrejudiceRun, read_inputs, run_evals

PROBE = Probe(
    name="prior-prejudice",
    title="Prior prejudice",
    lens="Judging prejudice",
    task_prefix="prior_prejudice",
    options=PriorPrejudiceRun,
    roles=ROLES,
    tasks=(
        tasks.prior_prejudice,
        tasks.prior_prejudice_arguments,
        tasks.prior_prejudice_negations,
        tasks.prior_prejudice_probe,
        tasks.prior_prejudice_cross_task,
    ),
    run=run_evals,
    analysis=results.analysis,
    format_summary=results.format_summary,
    plan=estimate.plan,
    profiles=report.profiles,
    section=report.section,
    unit_values=report.unit_values,
    measure="continuous",  # a share or score per unit (`core.stats.compare`)
    unit_key="claim_id",
    tested=(
        Tested(
            "group_spread", "p_value", decide=an.group_effects, summarise=results.summarise_spread
        ),
    ),
    value_range=(0.0, 6.0),  # |negated - original| of a claim's 1-7 ratings
    topic_stances=stances.topic_stances,
    demo={"limit": 1, "templates": "T1,T2", "argument_tokens": 64},
    read_inputs=read_inputs,
    extra_task_prefixes=True,
)
