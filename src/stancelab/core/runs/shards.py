"""Shards of a run's samples, and worker processes that run one shard each.

A shard `I/N` (1 <= I <= N) holds the samples whose id hashes to I - 1 modulo N (SHA-256 of
the id), so a sample is in the same shard whatever the limit or order of the dataset. A shard
runs through Inspect's own sample selection (`eval(sample_id=...)`, recorded in the log and
honoured by `eval_retry`) into Inspect's shard layout, one eval per subject model, merged
into one eval once every shard is done (`core.runs.shard_sets`); the log carries the shard in its
eval metadata (`SHARD_KEY`), which is part of its run identity (`core.results.logs`): shards add
up, and a re-run of a shard replaces that shard only. Any number of processes or machines can run shards into one Inspect log
location (a folder, or an object store such as `s3://bucket/prefix` through Inspect's fsspec
support); a shard that already has a finished log there is skipped, and one cut short
resumes from Inspect's cache."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stancelab.core.errors import Interrupted, StancelabError
from stancelab.core.results.logs import shard_of_log
from stancelab.core.tether import tethered

WORKER_LOGS = "workers"
"""folder (in the run's folder) of each worker's output"""
STOP_GRACE_S = 4.0
"""seconds a worker has to stop (Inspect writes its cancelled log) before it is killed, so that
a Ctrl-C stops the run within 5 s"""
PARENT_ENV = "STANCELAB_WORKER_PARENT"
"""set in a worker's environment: the process id of the command that started it"""


@dataclass(frozen=True)
class Shard:
    """Shard `index` of `count` (1-based)."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def holds(self, sample_id: object) -> bool:
        """Whether the sample with this id is in the shard."""
        digest = hashlib.sha256(str(sample_id).encode()).digest()
        return int.from_bytes(digest[:8], "big") % self.count == self.index - 1

    def holds_sample(self, sample: Any) -> bool:
        """Whether an Inspect sample is in the shard (by its id)."""
        return self.holds(sample.id)


def parse_shard(text: str | Shard | None) -> Shard | None:
    """`I/N` -> Shard(I, N); None stays None."""
    if text is None or isinstance(text, Shard):
        return text
    index, _, count = str(text).partition("/")
    try:
        shard = Shard(int(index), int(count))
    except ValueError:
        raise StancelabError(f"--shard expects I/N (e.g. 2/3), got '{text}'.") from None
    if not 1 <= shard.index <= shard.count:
        raise StancelabError(f"--shard {text}: I must be between 1 and N.")
    return shard


def shard_sample_ids(task: Any, shard: Shard) -> list[str | int]:
    """The ids of a task's samples in the shard, in dataset order (every sample needs an id)."""
    samples = list(task.dataset)
    if any(sample.id is None for sample in samples):
        raise StancelabError(f"Task {task.name} has samples without ids; it cannot be sharded.")
    return [sample.id for sample in samples if shard.holds_sample(sample)]


def finished_shard(log_dir: str, task: Any, model: str, roles: dict[str, str],
                   shard: Shard, sample_ids: Sequence[str | int]) -> str | None:  # fmt: skip
    """A successful log at `log_dir` of this shard, task (name and arguments), subject model,
    helper models and selection, if there is one (an attempt renamed once merged counts)."""
    from stancelab.core.runs.shard_sets import logs_with_merged_attempts

    if not _exists(log_dir):
        return None
    wanted = {"ids": sorted(map(str, sample_ids)), "roles": roles, "model": model}
    for info in logs_with_merged_attempts(log_dir):
        header = _header(info)
        if header is None:  # no readable log (a cut copy): not a finished shard
            continue
        spec = header.eval
        if (header.status != "success" or shard_of_log(spec.metadata) != str(shard)
                or spec.task.split("/")[-1] != task.name.split("/")[-1]):  # fmt: skip
            continue
        if _json(spec.task_args_passed or {}) != _json(_task_args(task)):
            continue
        roles_of = {role: config.model for role, config in (spec.model_roles or {}).items()}
        seen = {"ids": sorted(map(str, spec.config.sample_id or [])), "roles": roles_of,
                "model": spec.model}  # fmt: skip
        if seen == wanted:
            return info.name
    return None


_HEADERS: dict[tuple[str, float | None, int], Any] = {}


def _header(info: Any) -> Any:
    """A log's header, read once per process while the file is unchanged (a location with
    thousands of shard logs is listed before every piece of a run); None for a file that is
    no readable log."""
    from inspect_ai.log import read_eval_log

    from stancelab.core.runs.shard_sets import MERGED_SUFFIX

    key = (info.name, info.mtime, info.size)
    if key not in _HEADERS:
        try:
            _HEADERS[key] = read_eval_log(info, header_only=True, format="eval"
                                          if info.name.endswith(MERGED_SUFFIX) else "auto")  # fmt: skip
        except Exception:
            _HEADERS[key] = None
    return _HEADERS[key]


def _json(value: object) -> object:
    """A value as its JSON form (tuples as lists, paths as strings), for comparison."""
    return json.loads(json.dumps(value, sort_keys=True, default=str))


def _exists(log_dir: str) -> bool:
    if "://" in log_dir and not log_dir.startswith("file://"):
        return True  # an object store: list it
    return Path(log_dir.removeprefix("file://")).exists()


def _task_args(task: Any) -> dict[str, Any]:
    """The task arguments a task object was made with (as the log's `task_args_passed`)."""
    from stancelab.core.inspect_private import resolve_task_args

    return dict(resolve_task_args(task))


@dataclass
class Worker:
    """One worker process and the file its output goes to."""

    shard: Shard
    process: subprocess.Popen
    output: Path

    def error_tail(self, chars: int = 2000) -> str:
        text = self.output.read_text(errors="replace") if self.output.exists() else ""
        return text[-chars:].strip()


def worker_command(base: Sequence[str], shard: Shard) -> list[str]:
    """`python -m stancelab <base> --shard I/N`: one worker's command line."""
    return [sys.executable, "-m", "stancelab", *base, "--shard", str(shard)]


def run_workers(base: Sequence[str], count: int, out_dir: Path) -> list[Worker]:
    """Run `count` worker processes (`base` + `--shard I/N`), each's output into
    `out_dir/workers/`; wait for all. A worker that fails stops the others and raises its
    error; SIGTERM or Ctrl-C of this process stops every worker before it raises (Ctrl-C:
    `Interrupted`). Workers die with this process even when it is killed (`core.tether`, and
    a pipe each worker watches: `follow_parent`)."""
    folder = out_dir / WORKER_LOGS
    folder.mkdir(parents=True, exist_ok=True)
    workers: list[Worker] = []
    try:
        with _stop_on_sigterm(), _stopping(workers):
            for index in range(1, count + 1):
                shard = Shard(index, count)
                output = folder / f"shard-{index}-of-{count}.log"
                process = _start_worker(worker_command(base, shard), output)
                workers.append(Worker(shard, process, output))
            _wait(workers)
    except KeyboardInterrupt:
        raise Interrupted(f"interrupted: workers stopped, their logs kept in {out_dir}; run the "
                          "same command again to resume (answers already stored come from the "
                          "cache)") from None  # fmt: skip
    return workers


def _start_worker(command: list[str], output: Path) -> subprocess.Popen:
    """Start a worker: output to `output`, stdin a pipe from this process (closed when it
    ends: `follow_parent`), in its own process group (a terminal's Ctrl-C reaches this process
    only, which stops each worker once: `_stopping`), killed when this process ends."""
    env = {**os.environ, PARENT_ENV: str(os.getpid())}
    with output.open("w") as sink:
        return subprocess.Popen(tethered(command), stdout=sink, stderr=subprocess.STDOUT,
                                stdin=subprocess.PIPE, env=env, process_group=0)  # fmt: skip


def follow_parent() -> bool:
    """In a worker (`PARENT_ENV` set): end this process when the command that started it ends,
    i.e. when its stdin pipe from that command reaches EOF (portable; on Linux the parent-death
    signal of `core.tether` comes first). Whether this process is such a worker."""
    if os.environ.pop(PARENT_ENV, None) is None:
        return False
    threading.Thread(target=_exit_at_eof, args=(sys.stdin.fileno(),), daemon=True,
                     name="follow-parent").start()  # fmt: skip
    return True


def _exit_at_eof(descriptor: int) -> None:
    # os.read, not sys.stdin: a daemon thread blocked in a buffered read holds its lock, and
    # the interpreter aborts at exit when it cannot take that lock
    while os.read(descriptor, 4096):
        pass
    os.kill(os.getpid(), signal.SIGKILL)


def _wait(workers: list[Worker]) -> None:
    """Wait for every worker; the first to fail raises its error (the others are stopped)."""
    pending = list(workers)
    while pending:
        for worker in list(pending):
            code = worker.process.poll()
            if code is None:
                continue
            pending.remove(worker)
            if code != 0:
                raise StancelabError(worker_failure(worker, code))
            print(f"worker {worker.shard} done", flush=True)
        time.sleep(0.2)


def worker_failure(worker: Worker, code: int) -> str:
    """Why a worker failed: its own one-line error (e.g. a refused key), else its output's end."""
    tail = worker.error_tail()
    last = tail.splitlines()[-1] if tail else ""
    if last.startswith("error: "):
        return f"worker {worker.shard} failed: {last.removeprefix('error: ')}"
    return f"worker {worker.shard} failed (exit {code}); its output ({worker.output}) ends:\n{tail}"


@contextmanager
def _stopping(workers: list[Worker]) -> Iterator[None]:
    """On leaving (normally or not), stop every worker still running: SIGINT (Inspect cancels
    the eval and writes its log), then SIGKILL after `STOP_GRACE_S` (or at once on a second
    Ctrl-C or SIGTERM)."""
    try:
        yield
    finally:
        running = [worker.process for worker in workers if worker.process.poll() is None]
        try:
            for process in running:
                process.send_signal(signal.SIGINT)
            deadline = time.monotonic() + STOP_GRACE_S
            for process in running:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except (subprocess.TimeoutExpired, KeyboardInterrupt, Terminated):
            pass
        finally:
            for process in running:
                if process.poll() is None:
                    process.kill()
                    process.wait()
            for worker in workers:
                if worker.process.stdin is not None:
                    worker.process.stdin.close()


class Terminated(StancelabError):
    """This process got SIGTERM."""


@contextmanager
def _stop_on_sigterm() -> Iterator[None]:
    """SIGTERM raises `Terminated` (so workers are stopped on the way out) while inside."""

    def handler(signum: int, frame: object) -> None:
        raise Terminated(f"stopped by signal {signum}; workers stopped")

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def cpu_count() -> int:
    """CPU cores this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


# ---------------------------------------------------------------- workers by default

LARGE_RUN_CALLS = 5_000
"""planned calls (per run, every model and role) from which a run uses every core by default:
below it, the workers' start-up (each imports Inspect and reads the design, a few seconds)
outweighs what a second core gains at a harness cost of ~10 ms per call"""
WORKER_MEMORY_BYTES = 1 << 30
"""memory set aside per default worker (a worker of MillStone's full design peaks below it)"""
IN_PROCESS_PROVIDERS = frozenset(
    {"embedded", "hf", "transformer_lens", "nnterp", "vllm", "sglang", "mockllm"}
)
"""providers whose model lives in (or is started by) each process: a worker would load its
weights again (or start its own server), so they never get workers by default (mockllm is
Inspect's test model)"""


@dataclass(frozen=True)
class WorkersChoice:
    """How many processes a run uses when `--workers` is not given, and why."""

    count: int
    reason: str

    def header(self, planned_calls: int | None) -> str:
        """The run's header line that states the choice."""
        calls = "" if planned_calls is None else f"{planned_calls:,} planned calls: "
        if self.count > 1:
            return (f"{calls}{self.count} worker processes, one shard each ({self.reason}; "
                    "--max-connections is per worker; --workers 1 keeps one process)")  # fmt: skip
        return f"{calls}one process ({self.reason}; --workers N runs N)"


def default_workers(planned_calls: int | None, models: Sequence[object], cores: int,
                    available_bytes: int | None = None) -> WorkersChoice:  # fmt: skip
    """The worker processes of a run without `--workers`: one per core (at most one per
    `WORKER_MEMORY_BYTES` of available memory) for a large run (`LARGE_RUN_CALLS` or more) whose
    every model (subjects and roles) is called over a network; else one process."""
    local = sorted({provider for model in models if (provider := str(model).split("/", 1)[0])
                    in IN_PROCESS_PROVIDERS})  # fmt: skip
    if local:
        return WorkersChoice(1, f"{', '.join(local)} runs in-process: a worker would load it again")
    if any(not isinstance(model, str) for model in models):
        return WorkersChoice(1, "a model given as an object, not by name")
    if planned_calls is None or planned_calls < LARGE_RUN_CALLS:
        return WorkersChoice(1, f"under {LARGE_RUN_CALLS:,} planned calls")
    by_memory = cores if available_bytes is None else available_bytes // WORKER_MEMORY_BYTES
    count = max(1, min(cores, by_memory))
    if count == 1:
        return WorkersChoice(1, "one core" if cores <= 1 else "memory for one worker only")
    per = "one per core" if count == cores else f"memory for {count} on {cores} cores"
    return WorkersChoice(count, f"a large run of API models: {per}")


def available_memory() -> int | None:
    """Bytes of memory available to new processes (None where unknown)."""
    try:
        import psutil
    except ImportError:
        return None
    return int(psutil.virtual_memory().available)
