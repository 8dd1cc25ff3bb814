"""`stancelab launch`'s command line: its flags and parser, and the command, which plans the
launch (`task.LaunchPlan`) and hands it to an engine (`slurm`, `k8s`) or, inside a launched
task, runs the task's shard. The CLI passes in what sits above core: each probe's command
(`probe_parsers`), its run options (`options_from_args`) and how to run a command line."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from stancelab.core.errors import StancelabError
from stancelab.core.runs.options import positive_int

ProbeParsers = Callable[[argparse._SubParsersAction], list[argparse.ArgumentParser]]
"""adds each probe's command (with its run options) to a sub-command action; returns them"""
OptionsFromArgs = Callable[[argparse.Namespace], tuple[Any, Any]]
"""the probe and its run options from the parsed arguments"""
RunCommand = Callable[[list[str]], int]
"""runs a `stancelab` command line; its exit status"""


LAUNCH_FLAGS = {"--shards": True, "--dry-run": False, "--local": False, "--jobs-folder": True,
                "--partition": True, "--time": True, "--cpus": True, "--mem": True, "--gpus": True,
                "--image": True, "--secret": True, "--secret-env": True, "--namespace": True,
                "--parallelism": True, "--volume": True, "--output": True, "--apply": False,
                "--base-url-per-shard": True}  # fmt: skip
"""launch flags (`stancelab launch ENGINE PROBE`) that are not run options: left out of the
shards' `stancelab run` command; True when the flag takes a value"""


def add_launch(subparsers: argparse._SubParsersAction, probe_parsers: ProbeParsers) -> None:
    """`launch slurm|k8s PROBE [run options] --shards N ...` and `launch task` (in a task);
    `probe_parsers` adds each probe's command with its run options."""
    launch = subparsers.add_parser(
        "launch", help="run a probe's shards on Slurm or Kubernetes, then analyse the logs"
    )
    engines = launch.add_subparsers(dest="engine", required=True)
    for engine, about in (("slurm", "a Slurm job array (submitit), then a dependent analysis job"),
                          ("k8s", "a Kubernetes Indexed Job manifest, and the analysis Job")):  # fmt: skip
        sub = engines.add_parser(engine, help=about, description=about)
        probes = sub.add_subparsers(dest="probe_name", metavar="PROBE", required=True)
        for command in probe_parsers(probes):
            _add_launch_options(command.add_argument_group(f"launch {engine}"), engine)
    task = engines.add_parser(
        "task", help="inside a launched task: run the shard its environment names"
    )
    task.add_argument(
        "--index-env", required=True, help="variable holding the task's 0-based index"
    )
    _add_shards(task)
    task.add_argument("run_args", nargs=argparse.REMAINDER, help="-- run PROBE [options]")


def _add_shards(group: Any) -> None:
    group.add_argument(
        "--shards", type=positive_int, required=True, help="number of shards (tasks)"
    )
    group.add_argument("--base-url-per-shard", metavar="VAR=URL1,URL2,...",
                       help="local model servers: shard I sets VAR to URL number (I - 1) mod their "
                            "number (one per shard, or fewer that the shards share in turn)")  # fmt: skip


def _add_launch_options(group: Any, engine: str) -> None:
    _add_shards(group)
    if engine == "slurm":
        group.add_argument(
            "--dry-run", action="store_true", help="print the sbatch scripts; submit nothing"
        )
        group.add_argument("--local", action="store_true", help="run the array here as N processes "
                           "(submitit's LocalExecutor, the array's environment each), then the analysis")  # fmt: skip
        group.add_argument("--jobs-folder", type=Path, help="submitit's folder of job files and "
                           "outputs, on a file system the nodes share (default OUT/slurm)")  # fmt: skip
        group.add_argument("--partition", help="Slurm partition")
        group.add_argument(
            "--time", type=positive_int, default=60, help="minutes per job (default 60)"
        )
        group.add_argument("--cpus", type=positive_int, help="CPUs per task")
        group.add_argument("--mem", help="memory per task, as Slurm's --mem (e.g. 16G)")
        group.add_argument("--gpus", type=positive_int, help="GPUs per task")
        return
    group.add_argument("--image", required=True, help="container image with stancelab installed")
    group.add_argument("--secret", action="append", default=[], metavar="NAME",
                       help="a Secret whose every key becomes a variable (envFrom secretRef)")  # fmt: skip
    group.add_argument("--secret-env", action="append", default=[], metavar="VAR=SECRET:KEY",
                       help="one variable from one key of a Secret (valueFrom secretKeyRef)")  # fmt: skip
    group.add_argument("--namespace", default="default", help="namespace (default: default)")
    group.add_argument(
        "--parallelism", type=positive_int, help="pods at once (default: every shard)"
    )
    group.add_argument("--volume", metavar="CLAIM:MOUNT", help="a PersistentVolumeClaim every pod "
                       "mounts at MOUNT (for --out on a shared volume instead of --log-dir URL)")  # fmt: skip
    where = group.add_mutually_exclusive_group(required=True)
    where.add_argument("--output", type=Path, metavar="FILE",
                       help="write the shards' Job to FILE and the analysis Job beside it (FILE stem + -analyze)")  # fmt: skip
    where.add_argument("--apply", action="store_true", help="create the Jobs with your kubeconfig: the "
                       "shards', then the analysis once it has finished")  # fmt: skip


def launch_run_args(given: list[str]) -> list[str]:
    """`run PROBE [run options]` from `launch ENGINE PROBE ...`: the launch's own flags left out."""
    kept, skip = [], False
    for token in given[2:]:
        flag = token.split("=", 1)[0]
        if skip:
            skip = False
        elif flag in LAUNCH_FLAGS:
            skip = LAUNCH_FLAGS[flag] and "=" not in token
        else:
            kept.append(token)
    return ["run", *kept]


def _launch_plan(args: argparse.Namespace, options_from_args: OptionsFromArgs) -> Any:
    from stancelab.core.results.store import analysis_url, is_url
    from stancelab.core.runs.launch.task import LaunchPlan, check_run_args, parse_shard_urls

    probe, options = options_from_args(args)
    run_args = launch_run_args(args.given)
    run_args[1] = probe.name
    check_run_args(run_args)
    if options.until_ci is not None:
        raise StancelabError(
            "--until-ci looks at the whole run between batches; a launch runs fixed shards: leave it out."
        )
    if args.shards < 2:
        raise StancelabError("--shards must be at least 2 (one shard is `stancelab run`).")
    if options.log_dir and "://" not in options.log_dir:
        raise StancelabError(f"--log-dir {options.log_dir}: the analysis reads a run folder; give a "
                             "shared folder as --out FOLDER (the shards log to FOLDER/logs), or an "
                             "object store as --log-dir URL.")  # fmt: skip
    if args.engine == "k8s" and not (options.log_dir or args.volume):
        raise StancelabError("launch k8s needs a location every pod reaches: --log-dir URL (e.g. "
                             "s3://bucket/run), or --out FOLDER on --volume CLAIM:MOUNT.")  # fmt: skip
    location = options.log_dir or str(options.out_dir)
    program = ("stancelab",) if args.engine == "k8s" else (sys.executable, "-m", "stancelab")
    out = str(options.out_dir.absolute())  # Slurm: the run's folder, on the shared file system
    if args.engine == "k8s":  # a pod's folder is lost with it: the results go beside the logs
        out = analysis_url(location) if is_url(location) else None
    return options, LaunchPlan(tuple(run_args), args.shards, location,
                               parse_shard_urls(args.base_url_per_shard), program, out)  # fmt: skip


def launch(
    args: argparse.Namespace, options_from_args: OptionsFromArgs, run_command: RunCommand
) -> int:
    """`stancelab launch ...`: `options_from_args` gives the probe and its run options,
    `run_command` runs a `stancelab` command line (the analysis, a task's shard)."""
    if args.engine == "task":
        return _launch_task(args, run_command)
    options, plan = _launch_plan(args, options_from_args)
    if args.engine == "k8s":
        return _launch_k8s(args, plan)
    from stancelab.core.runs.launch.slurm import (
        SlurmResources,
        dry_run_scripts,
        run_local,
        submit_slurm,
    )

    resources = SlurmResources(
        args.time, args.partition, args.cpus, args.mem, args.gpus, f"stancelab-{plan.run_args[1]}"
    )
    folder = (args.jobs_folder or options.out_dir / "slurm").absolute()
    if args.dry_run:
        print(dry_run_scripts(plan, resources, folder))
        return 0
    if args.local:
        failed = run_local(plan, resources, folder)
        print(f"{plan.shards} shards ran here, {len(failed)} failed; their outputs in {folder}")
        code = run_command(plan.analysis_args())
        if failed:
            print(f"error: shard(s) {', '.join(map(str, failed))} of {plan.shards} failed (their output: "
                  f"{folder}/*_log.err); the analysis above counts the others", file=sys.stderr)  # fmt: skip
            return 1
        return code
    array_id, analysis_id = submit_slurm(plan, resources, folder)
    print(f"submitted job array {array_id} ({plan.shards} tasks) and analysis job {analysis_id} "
          f"(afterany:{array_id}); outputs in {folder}; the summary: {plan.location}")  # fmt: skip
    return 0


def _launch_k8s(args: argparse.Namespace, plan: Any) -> int:
    from stancelab.core.runs.launch.k8s import (
        KubernetesSpec,
        analysis_job,
        apply_jobs,
        manifest_yaml,
        parse_secret_key,
        parse_volume,
        shards_job,
    )

    spec = KubernetesSpec(args.image, tuple(args.secret), tuple(map(parse_secret_key, args.secret_env)),
                          args.namespace, args.parallelism, parse_volume(args.volume))  # fmt: skip
    shards, analysis = shards_job(plan, spec), analysis_job(plan, spec)
    if args.apply:
        apply_jobs(shards, analysis, args.namespace)
        return 0
    beside = args.output.with_name(f"{args.output.stem}-analyze{args.output.suffix or '.yaml'}")
    args.output.write_text(manifest_yaml(shards))
    beside.write_text(manifest_yaml(analysis))
    name = shards["metadata"]["name"]
    print(f"wrote {args.output} (the shards' Indexed Job, {plan.shards} completions) and {beside} "
          f"(the analysis). Run:\n  kubectl apply -f {args.output}\n"
          f"  kubectl wait --for=condition=complete --timeout=-1s job/{name}\n"
          f"  kubectl apply -f {beside}\n(if a shard fails, the Job fails instead: apply the "
          f"analysis anyway; it names the missing shards)")  # fmt: skip
    return 0


def _launch_task(args: argparse.Namespace, run_command: RunCommand) -> int:
    """Inside a launched task: its shard from `--index-env`, its base URL, then the shard's run."""
    from stancelab.core.runs.launch.task import (
        check_run_args,
        parse_shard_urls,
        task_environment,
        task_shard,
    )

    run_args = args.run_args[1:] if args.run_args[:1] == ["--"] else args.run_args
    if run_args[:1] != ["run"]:
        raise StancelabError("launch task expects -- run PROBE [options] after its own flags.")
    check_run_args(run_args)
    shard = task_shard(os.environ, args.index_env, args.shards)
    os.environ.update(task_environment(shard, parse_shard_urls(args.base_url_per_shard)))
    return run_command([*run_args, "--shard", f"{shard}/{args.shards}"])
