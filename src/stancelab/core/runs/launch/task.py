"""What every launched task shares: the shard commands, and a task's shard and environment
read from the variable its engine sets (Slurm's `SLURM_ARRAY_TASK_ID`, Kubernetes'
`JOB_COMPLETION_INDEX`, both counted from 0)."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from stancelab.core.errors import StancelabError

SLURM_INDEX = "SLURM_ARRAY_TASK_ID"
"""the array task's index (0 to N - 1, as submitit numbers the array)"""
K8S_INDEX = "JOB_COMPLETION_INDEX"
"""an Indexed Job pod's completion index (0 to N - 1)"""
TAKEN_FLAGS = ("--shard", "--workers")
"""run flags a launch sets itself (the shard) or cannot honour (worker processes)"""


@dataclass(frozen=True)
class ShardUrls:
    """`VAR=URL1,URL2,...`: shard I's `VAR` is URL number (I - 1) mod the list's length, so
    one server per shard, or fewer servers that the shards share in turn."""

    variable: str
    urls: tuple[str, ...]

    def for_shard(self, index: int) -> str:
        """The URL of shard `index` (1-based)."""
        return self.urls[(index - 1) % len(self.urls)]

    def __str__(self) -> str:
        return f"{self.variable}={','.join(self.urls)}"


def parse_shard_urls(text: str | None) -> ShardUrls | None:
    """`VAR=URL1,URL2,...` -> ShardUrls; a clear error for anything else."""
    if text is None:
        return None
    variable, _, listed = text.partition("=")
    urls = tuple(url.strip() for url in listed.split(",") if url.strip())
    if not variable.isidentifier() or not urls:
        raise StancelabError(
            f"--base-url-per-shard expects VAR=URL1,URL2,... (e.g. "
            f"VLLM_BASE_URL=http://node1:8000/v1,http://node2:8000/v1), not {text!r}."
        )
    return ShardUrls(variable, urls)


@dataclass(frozen=True)
class LaunchPlan:
    """A launched run: the probe's `stancelab run` arguments (as the user gave them, less the
    shard), the number of shards, the location every shard logs to and the analysis reads, and
    the base URLs of local model servers."""

    run_args: tuple[str, ...]
    """`run PROBE [options]` without `--shard`"""
    shards: int
    location: str
    """what `stancelab analyze` reads: `--log-dir` where given, else the run's `--out` folder"""
    shard_urls: ShardUrls | None = None
    program: tuple[str, ...] = field(default_factory=lambda: (sys.executable, "-m", "stancelab"))
    """how a task starts stancelab: the submitting interpreter (Slurm), `stancelab` (an image)"""
    analysis_out: str | None = None
    """where the analysis of a URL location writes its summary (`analyze URL --out`): Slurm, the
    run's --out, on the file system the nodes share, where the launch keeps run.toml;
    Kubernetes, a URL beside the logs (a pod's own folder ends with it); None: analyze's default"""

    def task_args(self, index_variable: str) -> list[str]:
        """`launch task` arguments: the task reads its shard from `index_variable`."""
        urls = ["--base-url-per-shard", str(self.shard_urls)] if self.shard_urls else []
        return ["launch", "task", "--index-env", index_variable, "--shards", str(self.shards),
                *urls, "--", *self.run_args]  # fmt: skip

    def task_command(self, index_variable: str) -> list[str]:
        """The command a task runs: `stancelab launch task ...`."""
        return [*self.program, *self.task_args(index_variable)]

    def analysis_args(self) -> list[str]:
        """`analyze LOC`, with `--out` for a URL's local run folder where one is given."""
        out = ["--out", self.analysis_out] if self.analysis_out and "://" in self.location else []
        return ["analyze", self.location, *out]

    def analysis_command(self) -> list[str]:
        """The command of the analysis after the shards: `stancelab analyze LOC`."""
        return [*self.program, *self.analysis_args()]

    def shard_line(self, index_variable: str) -> str:
        """Shard I's `stancelab run` as a shell line, I from `index_variable` (for people)."""
        shard = f"$(({index_variable} + 1))/{self.shards}"
        line = shlex.join(["stancelab", *self.run_args]) + f" --shard {shard}"
        if self.shard_urls:
            line += (
                f" (with {self.shard_urls.variable} the shard's URL of {len(self.shard_urls.urls)})"
            )
        return line


def check_run_args(run_args: Sequence[str]) -> None:
    """A launch's run arguments leave the shard to the launch."""
    for flag in TAKEN_FLAGS:
        if any(arg == flag or arg.startswith(f"{flag}=") for arg in run_args):
            raise StancelabError(
                f"{flag} is set by the launch (--shards N gives each task its shard); leave it out."
            )


def task_shard(environment: Mapping[str, str], index_variable: str, shards: int) -> int:
    """This task's shard (1 to `shards`) from the 0-based index in `index_variable`."""
    text = environment.get(index_variable)
    if text is None:
        raise StancelabError(
            f"{index_variable} is not set: `launch task` runs inside a launched task "
            f"(a Slurm array task or an Indexed Job's pod), which sets it."
        )
    try:
        index = int(text)
    except ValueError:
        raise StancelabError(f"{index_variable}={text!r} is not a task index.") from None
    if not 0 <= index < shards:
        raise StancelabError(
            f"{index_variable}={index} is outside 0 to {shards - 1} (--shards {shards})."
        )
    return index + 1


def task_environment(shard: int, shard_urls: ShardUrls | None) -> dict[str, str]:
    """What a task adds to its environment: the shard's base URL, if any."""
    return {shard_urls.variable: shard_urls.for_shard(shard)} if shard_urls else {}
