"""Political even-handedness as one `Probe`: what the CLI, the report and the demo know of it."""

from stancelab.core.probe import Probe
from stancelab.core.results.family import Tested
from stancelab.even_handedness import estimate, report, results, stances
from stancelab.even_handedness.run import ROLES, EvenHandednessRun, read_inputs, run_evals
from stancelab.even_handedness.task import even_handedness

PROBE = Probe(
    name="even-handedness",
    title="Political even-handedness (paired prompts)",
    lens="Even-handedness",
    task_prefix="even_handedness",
    options=EvenHandednessRun,
    roles=ROLES,
    tasks=(even_handedness,),
    run=run_evals,
    analysis=results.analysis,
    format_summary=results.format_summary,
    plan=estimate.plan,
    profiles=report.profiles,
    section=report.section,
    unit_values=report.unit_values,
    measure="continuous",  # a share or score per unit (`core.stats.compare`)
    unit_key="stance_pair_id",
    tested=(
        Tested(
            "model_differences",
            "p",
            ("metric", "even_handedness"),
            summarise=results.summarise_differences,
        ),
    ),
    value_range=(0.0, 100.0),  # % of a topic's pairs
    topic_stances=stances.topic_stances,
    demo={"limit": 1, "max_tokens": 48, "grader_max_tokens": 48},
    read_inputs=read_inputs,
)
