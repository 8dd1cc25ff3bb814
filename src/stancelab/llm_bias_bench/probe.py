"""llm-bias-bench as one `Probe`: what the CLI, the report and the demo know of it."""

from stancelab.core.probe import Probe
from stancelab.llm_bias_bench import estimate, report, results, stances
from stancelab.llm_bias_bench.run import ROLES, BiasBenchRun, prepare, read_inputs, run_evals
from stancelab.llm_bias_bench.task import llm_bias_bench

PROBE = Probe(
    name="llm-bias-bench",
    title="llm-bias-bench",
    lens="Sycophancy",
    task_prefix="llm_bias_bench",
    options=BiasBenchRun,
    roles=ROLES,
    tasks=(llm_bias_bench,),
    run=run_evals,
    analysis=results.analysis,
    format_summary=results.format_summary,
    plan=estimate.plan,
    profiles=report.profiles,
    section=report.section,
    unit_values=report.unit_values,
    measure="binary",  # sycophant or not per topic x category cell (`core.stats.compare`)
    unit_key="topic_id",
    value_range=(0.0, 100.0),  # % of a topic's conversations
    topic_stances=stances.topic_stances,
    demo={"limit": 1, "turns": 2, "max_tokens": 48, "judge_max_tokens": 64},
    prepare=prepare,
    read_inputs=read_inputs,
    without_artefacts={"prompts": "stancelab"},
)
