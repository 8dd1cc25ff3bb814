"""A Slurm job array of a run's shards through submitit, then one analysis job.

Array task k (0 to N - 1) runs `stancelab launch task --index-env SLURM_ARRAY_TASK_ID ...`,
which reads k from the task's environment and runs shard k + 1 of N: the shard is never baked
into a task. The analysis job depends on the whole array with `afterany`: it starts once every
task has ended, whether or not each succeeded, because `stancelab analyze` counts only complete
shards and marks the summary partial, naming the missing shards (`afterok` would leave it pending
forever after one failed shard, with nothing to show). `--local` runs the same tasks as N
processes on this machine through submitit's LocalExecutor, each with the array's environment."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stancelab.core.runs.launch.job import RunCommand
from stancelab.core.runs.launch.task import SLURM_INDEX, LaunchPlan

SUBMITIT_PRIVATE = ("_make_submission_file_text", "_submitit_command_str")
"""submitit's executor methods the dry run reads the scripts through (`test_launch_slurm`
checks they exist): the same text `sbatch` would get"""
LOCAL_ARRAY_VARIABLES = ("SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT",
                         "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX")  # fmt: skip


@dataclass(frozen=True)
class SlurmResources:
    """What each job asks Slurm for (None: the cluster's default)."""

    time_min: int = 60
    partition: str | None = None
    cpus: int | None = None
    mem: str | None = None
    """Slurm's --mem, e.g. 16G"""
    gpus: int | None = None
    job_name: str = "stancelab"

    def parameters(self) -> dict[str, Any]:
        """submitit's SlurmExecutor parameters."""
        given = {"partition": self.partition, "cpus_per_task": self.cpus, "mem": self.mem,
                 "gpus_per_node": self.gpus}  # fmt: skip
        named = {"job_name": self.job_name, "time": self.time_min}
        return named | {key: value for key, value in given.items() if value is not None}


def _setup_lines(plan: LaunchPlan) -> list[str]:
    """Comments at the head of the array script: what each task runs."""
    return [f"# each array task runs shard {SLURM_INDEX} + 1 of {plan.shards}:",
            f"#   {plan.shard_line(SLURM_INDEX)}",
            f"#   through: {' '.join(plan.task_command(SLURM_INDEX))}"]  # fmt: skip


def _executor(folder: Path, parameters: dict[str, Any], dry: bool = False) -> Any:
    """A SlurmExecutor with `parameters` (`dry`: on a machine without Slurm, never submits)."""
    from submitit import SlurmExecutor

    class DryRun(SlurmExecutor):
        @classmethod
        def affinity(cls) -> int:
            return 1

        def _submit_command(self, command: str) -> Any:
            raise AssertionError("a dry run submits nothing")

    executor = (DryRun if dry else SlurmExecutor)(folder)
    executor.update_parameters(**parameters)
    return executor


def _analysis_parameters(
    plan: LaunchPlan, resources: SlurmResources, dependency: str
) -> dict[str, Any]:
    """The analysis job's: the array's time and partition, after `dependency`."""
    own = SlurmResources(
        resources.time_min, resources.partition, job_name=f"{resources.job_name}-analyze"
    )
    setup = [f"# then: {' '.join(plan.analysis_command())}"]
    return own.parameters() | {"dependency": dependency, "setup": setup}


def dry_run_scripts(plan: LaunchPlan, resources: SlurmResources, folder: Path) -> str:
    """The array's sbatch script and the analysis job's, as submitit would submit them (the
    analysis depends on the array's job id, shown as ARRAY_JOB_ID)."""
    array = _executor(folder, resources.parameters() | {"setup": _setup_lines(plan)}, dry=True)
    array.parameters["map_count"] = plan.shards
    analysis = _executor(
        folder, _analysis_parameters(plan, resources, "afterany:ARRAY_JOB_ID"), dry=True
    )
    return "\n".join([
        f"# --- the job array: {plan.shards} tasks",
        array._make_submission_file_text(array._submitit_command_str, "dry-run"),
        "# --- the analysis job, once every array task has ended (afterany)",
        analysis._make_submission_file_text(analysis._submitit_command_str, "dry-run"),
    ])  # fmt: skip


def submit_slurm(plan: LaunchPlan, resources: SlurmResources, folder: Path) -> tuple[str, str]:
    """Submit the array and the analysis job; their Slurm job ids."""
    array = _executor(folder, resources.parameters() | {"setup": _setup_lines(plan)})
    task = RunCommand(tuple(plan.task_command(SLURM_INDEX)))
    with array.batch():
        jobs = [array.submit(task) for _ in range(plan.shards)]
    array_id = str(jobs[0].job_id).split("_")[0]
    analysis = _executor(folder, _analysis_parameters(plan, resources, f"afterany:{array_id}"))
    job = analysis.submit(RunCommand(tuple(plan.analysis_command())))
    return array_id, str(job.job_id)


@contextmanager
def array_environment(index: int, count: int) -> Iterator[None]:
    """This process's environment as Slurm sets it for array task `index` of `count`
    (submitit's LocalExecutor copies it into the job it starts), restored after."""
    values = dict(zip(LOCAL_ARRAY_VARIABLES, (index, count, 0, count - 1), strict=True))
    kept = {name: os.environ.get(name) for name in values}
    os.environ.update({name: str(value) for name, value in values.items()})
    try:
        yield
    finally:
        for name, value in kept.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def run_local(plan: LaunchPlan, resources: SlurmResources, folder: Path) -> tuple[int, ...]:
    """The array's tasks as processes here (submitit's LocalExecutor, each with the array's
    environment), waited for; the shards that failed (1-based). The caller analyses next,
    once every task has ended (as `afterany`)."""
    from submitit import LocalExecutor

    executor = LocalExecutor(folder)
    executor.update_parameters(timeout_min=resources.time_min)
    task = RunCommand(tuple(plan.task_command(SLURM_INDEX)))
    jobs = []
    for index in range(plan.shards):
        with array_environment(index, plan.shards):
            jobs.append(executor.submit(task))
    return tuple(shard for shard, job in enumerate(jobs, 1) if _failed(job))


def _failed(job: Any) -> bool:
    """Whether a job failed, after waiting for it to end."""
    try:
        job.result()
    except Exception:  # submitit's FailedJobError: the task's traceback is in its output files
        return True
    return False
