"""Running Inspect evals for the probes: settings, helper roles, shards and interruptions."""

from __future__ import annotations

import gc
import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.model import BatchConfig, GenerateConfig, Model
from inspect_ai.util import DisplayType

from stancelab.core.errors import Interrupted, StancelabError
from stancelab.core.inspect_private import single_threaded_zstd, thin_text_without_rewrap
from stancelab.core.results.logs import BATCH_PREFIX, SHARD_KEY
from stancelab.core.runs.attempts import adaptive_attempt_timeout, initial_attempt_timeout
from stancelab.core.runs.backoff import RETRY_WAIT, apply_retry_wait
from stancelab.core.runs.caps import SUBJECT, EmbeddedCaps, embedded_caps
from stancelab.core.runs.prices import batches
from stancelab.core.runs.progress import progress_lines, role_labels, watch_progress
from stancelab.core.runs.rate_limit import RateLimit, apply_rate_limit, queue_seconds, rate_limit
from stancelab.core.runs.sample_ids import install_plain_id_filter
from stancelab.core.runs.shard_sets import set_name, shard_dir
from stancelab.core.runs.shards import (
    Shard,
    finished_shard,
    parse_shard,
    shard_sample_ids,
)
from stancelab.core.runs.single_flight import share_identical_calls
from stancelab.core.runs.startup import first_calls_watched, watch_first_calls

# A sample that fails on an error the provider layer does not retry (e.g. a response body cut
# mid-JSON) is run again; its calls that had completed come from the cache, unpaid. At 5%
# cut bodies, 3 retries lost conversations of 11 calls; 10 lose none in practice.
SAMPLE_RETRIES = 10
# Above this many samples a run is lean: no realtime sample buffer, no live score display and
# no control server (`inspect ctl`), whose event routing cost 8% of the eval's CPU on a
# 2,508-call run; the finished log is the same (`inspect view` reads it once the eval ends).
LEAN_ABOVE_SAMPLES = 200
LEAN_SETTINGS = {"log_realtime": False, "score_display": False, "ctl_server": False}
# Inspect's variable for the control server: a user who sets it keeps their choice.
CTL_SERVER_ENV = "INSPECT_EVAL_CTL_SERVER"
# Samples in flight per connection: a sample waiting out a retry's back-off leaves its
# connection to another, so faults do not starve the run of requests.
SAMPLES_PER_CONNECTION = 2
# The garbage collector's thresholds while an eval runs. Python 3.11's defaults (700, 10, 10)
# made 1,270 young and 11 full passes in a 2,508-call run (2.8 s of CPU, the event loop
# stopped for each); a young pass every 10,000 allocations made 177 and 2 (1.2 s).
EVAL_GC_THRESHOLDS = (10_000, 10, 10)


def sample_count(task: Any) -> int:
    """Samples x epochs of an Inspect task, or of a list of tasks together (0 if it cannot
    tell)."""
    if isinstance(task, list | tuple):
        return sum(sample_count(one) for one in task)
    try:
        return len(task.dataset) * int(task.epochs or 1)
    except (AttributeError, TypeError):
        return 0


def eval_settings(task: Any, lean: bool | None, options: dict[str, Any]) -> dict[str, Any]:
    """Keyword arguments for `inspect_ai.eval`: the run options that are set, and the lean
    settings when `lean` is true (or None and the task, or the tasks together, have many
    samples)."""
    settings = {name: value for name, value in options.items() if value is not None}
    if settings.get("max_connections") and "max_samples" not in settings:
        settings["max_samples"] = SAMPLES_PER_CONNECTION * settings["max_connections"]
    if lean or (lean is None and sample_count(task) > LEAN_ABOVE_SAMPLES):
        settings |= lean_settings()
    return settings


def lean_settings() -> dict[str, Any]:
    """The lean run's Inspect settings, less the control server when the user chose it."""
    settings = dict(LEAN_SETTINGS)
    if os.environ.get(CTL_SERVER_ENV):
        del settings["ctl_server"]
    return settings


def run_eval(
    task: Any | list[Any],
    models: list[str | Model],
    roles: dict[str, str | Model] | None,
    log_dir: Path | str,
    display: str | None = None,
    role_names: tuple[str, ...] = (),
    *,
    lean: bool | None = None,
    shard: Shard | None = None,
    retry_wait: float | None = None,
    batch: bool | BatchConfig | None = None,
    embedded_caps: EmbeddedCaps | None = None,
    rate_limit: RateLimit | None = None,
    **eval_args: Any,
) -> list[EvalLog]:
    """Run one task, or several side by side, for every model into `log_dir`; an eval that
    does not finish is an error.

    Several tasks (a list) are one Inspect eval with every task and model in flight at once
    (`max_tasks`), sharing each model's connections: for tasks that wait on nothing of each
    other; their logs are those each task run alone writes. A shard's tasks run one after
    another (each its own shard set's folder).

    Helper roles in `role_names` that `roles` leaves unbound are played by each subject model
    itself, bound by name so that logs attribute every call (and its tokens) to its role.
    `eval_args` (max_connections, max_samples, max_retries, timeout, attempt_timeout, ...) go
    to `inspect_ai.eval`; `lean` (default: above LEAN_ABOVE_SAMPLES samples) drops the realtime
    buffer, score display and control server. Without `attempt_timeout`, it is set from the
    providers' usual latency and `timeout` from the first call, then from the observed latency
    (`core.runs.attempts`). A failed call is retried after `retry_wait` seconds, doubling
    (`core.runs.backoff`). With `shard`, only the shard's samples run (`core.runs.shards`), and a
    model whose shard already has a finished log in `log_dir` is skipped. With `embedded_caps`,
    the subject and each role the embedded model plays are capped (`core.runs.caps`). `batch` (Inspect's
    batch config) sends the calls of every model, subjects and roles, to batch APIs. With
    `rate_limit`, each model's requests pass its endpoint's bucket (`core.runs.rate_limit`)."""
    if isinstance(task, list | tuple) and (shard is not None or len(task) == 1):
        return [log for one in task
                for log in run_eval(one, models, roles, log_dir, display, role_names, lean=lean, shard=shard,
                                    retry_wait=retry_wait, batch=batch, embedded_caps=embedded_caps,
                                    rate_limit=rate_limit, **eval_args)]  # fmt: skip
    tasks = list(task) if isinstance(task, list | tuple) else [task]
    settings = eval_settings(tasks, lean, eval_args) | shard_settings(tasks[0], shard)
    if settings.get("sample_id") is not None:
        install_plain_id_filter()
    initial_timeout = None
    if settings.get("attempt_timeout") is None:
        every_model = [*models, *(roles or {}).values()]
        initial_timeout = initial_attempt_timeout(every_model, settings.get("timeout"))
    wait = RETRY_WAIT if retry_wait is None else retry_wait
    caps = embedded_caps or EmbeddedCaps(cap=None)
    models = with_batch(
        apply_retry_wait([caps.model(SUBJECT, model) for model in models], wait), batch
    )
    bound = dict(zip(roles or {}, with_batch(apply_retry_wait(
        [caps.model(role, model) for role, model in (roles or {}).items()], wait), batch), strict=True))  # fmt: skip
    if batch is not None and all(batches(str(model)) for model in models):
        settings["batch"] = batch  # the subjects' batch config, recorded in the log
    unbound = [name for name in role_names if name not in bound]
    if unbound:
        groups = [([model], {name: _played_by(name, model, caps, wait) for name in unbound}
                   | bound) for model in models]  # fmt: skip
    else:
        groups = [(models, bound)]
    every_bound = [model for group_models, group_roles in groups
                   for model in [*group_models, *group_roles.values()]]  # fmt: skip
    apply_rate_limit(every_bound, rate_limit)
    share_identical_calls(every_bound)
    thin_text_without_rewrap()  # each finished sample's summary
    allowance = queue_seconds(every_bound, settings.get("max_connections"))
    watch_first_calls(every_bound)
    watch_progress(role_labels(groups))
    shown = progress_display(display) or os.environ.get("INSPECT_DISPLAY")
    logs: list[EvalLog] = []
    for group_models, group_roles, eval_dir in eval_folders(tasks[0], groups, log_dir, shard):
        if shard and all(_shard_done(eval_dir, tasks[0], model, group_roles, shard, settings)
                         for model in group_models):  # fmt: skip
            continue
        with (first_calls_watched(), progress_lines(shown),
              adaptive_attempt_timeout(initial_timeout, allowance), frozen_heap(),
              single_threaded_zstd()):  # fmt: skip
            done = inspect_eval(tasks, model=group_models, model_roles=group_roles or None,
                                log_dir=eval_dir, display=progress_display(display),
                                retry_on_error=SAMPLE_RETRIES, **side_by_side(tasks, group_models),
                                **settings)  # type: ignore[arg-type]  # fmt: skip
            # Ctrl-C: Inspect writes what it had, then returns no log (or a cancelled one)
            expected = len(tasks) * len(group_models)
            if len(done) < expected or any(log.status == "cancelled" for log in done):
                names = ", ".join(one.name for one in tasks)
                raise Interrupted(f"interrupted: the eval of {names} was cancelled; its log "
                                  f"is kept in {log_dir}; run the same command again to resume "
                                  "(answers already paid come from Inspect's cache)")  # fmt: skip
        logs.extend(done)
    for log in logs:
        if log.status != "success":
            reason = log.error.message if log.error else log.status
            raise StancelabError(f"Inspect eval of {log.eval.model} did not finish: {reason}")
    return logs


def side_by_side(tasks: list[Any], models: list[Any]) -> dict[str, Any]:
    """`inspect_ai.eval`'s `max_tasks` for several tasks: every task x model at once (one
    task keeps Inspect's default, every model at once)."""
    return {"max_tasks": len(tasks) * len(models)} if len(tasks) > 1 else {}


def _played_by(role: str, subject: Model, caps: EmbeddedCaps, wait: float) -> Model:
    """The model that plays an unbound role: the subject itself, or, where the subject is the
    embedded model and the role's cap differs from the subject's, the same model capped for
    the role."""
    from stancelab.core.embedded.model import EMBEDDED_MODEL
    from stancelab.core.embedded.replies import is_embedded

    if caps.for_role(role) == caps.for_role(SUBJECT) or not is_embedded(subject):
        return subject
    (played,) = apply_retry_wait([caps.model(role, EMBEDDED_MODEL)], wait)
    return played


@contextmanager
def frozen_heap() -> Iterator[None]:
    """Keep the objects that exist before an eval (imports, the task, the dataset), and those
    that outlive each full pass of the garbage collector while it runs, out of its later full
    passes, and run its passes less often: each stops the event loop (EVAL_GC_THRESHOLDS).
    Without the freeze after each full pass, a pass over a full design's 2.5 million live
    objects held the loop for 2-6 s, longer than a fast server's attempt timeout (2 s), and
    the calls in flight were abandoned and paid again. No collection first: it took 0.2 s,
    and what garbage is frozen with the heap is collected once the eval ends."""
    gc.freeze()
    thresholds = gc.get_threshold()
    gc.set_threshold(*EVAL_GC_THRESHOLDS)
    gc.callbacks.append(freeze_survivors)
    try:
        yield
    finally:
        gc.callbacks.remove(freeze_survivors)
        gc.set_threshold(*thresholds)
        gc.unfreeze()


def freeze_survivors(phase: str, info: dict[str, int]) -> None:
    """After a full pass of the garbage collector (the young generations are then empty),
    move what survived it out of the next passes' way."""
    if phase == "stop" and info["generation"] == 2:
        gc.freeze()


def eval_folders(task: Any, groups: list[tuple[list[Any], dict[str, Any]]], log_dir: Path | str,
                 shard: Shard | None) -> list[tuple[list[Any], dict[str, Any], str]]:  # fmt: skip
    """Each eval's models, roles and log folder: `log_dir` itself, or for an `I/N` shard one eval
    per subject model into its shard set's folder `LOC/<name>.shards/<I>` (Inspect's layout:
    `core.runs.shard_sets`). An `--until-ci` batch keeps `log_dir`: its batches are never all
    run, so they are no shard set."""
    if shard is None or str(shard).startswith(BATCH_PREFIX):
        return [(models, roles, str(log_dir)) for models, roles in groups]
    args = _json_args(task)
    folders = []
    for models, roles in groups:
        names = {role: str(bound) for role, bound in roles.items()}
        for model in models:
            name = set_name(task.name, args, str(model), names, shard.count)
            folders.append(([model], roles, shard_dir(str(log_dir), name, shard.index)))
    return folders


def _json_args(task: Any) -> dict[str, Any]:
    from stancelab.core.inspect_private import resolve_task_args

    return json.loads(json.dumps(dict(resolve_task_args(task)), sort_keys=True, default=str))


def shard_settings(task: Any, shard: Shard | None) -> dict[str, Any]:
    """`inspect_ai.eval` arguments that run only a shard's samples and name it in the log."""
    if shard is None:
        return {}
    return {"sample_id": shard_sample_ids(task, shard), "metadata": {SHARD_KEY: str(shard)}}


def _shard_done(log_dir: Path | str, task: Any, model: str | Model, roles: dict[str, Any],
                shard: Shard, settings: dict[str, Any]) -> bool:  # fmt: skip
    names = {role: str(bound) for role, bound in roles.items()}
    done = finished_shard(str(log_dir), task, str(model), names, shard, settings["sample_id"])
    if done:
        print(f"shard {shard} of {task.name} for {model}: finished already ({done}); skipped")
    return done is not None


# Inspect's log levels (`--log-level`), lower case as its command line takes them.
LogLevel = Literal["debug", "trace", "http", "info", "warning", "error", "critical", "notset"]
# The metadata of an option that is a probability, a share or a threshold on one: its range,
# which `runs.options.check_options` holds it to (`minimum` and `maximum` may be given alone).
SHARE = {"minimum": 0, "maximum": 1}
# ProbeRun fields handed to `inspect_ai.eval` unchanged (None: Inspect's own default).
INSPECT_OPTIONS = ("max_connections", "max_samples", "max_retries", "timeout", "attempt_timeout",
                   "log_level")  # fmt: skip


@dataclass
class ProbeRun:
    """Options every probe run shares; each probe's run options extend it."""

    models: list[str | Model]
    """subject model (Inspect model string, or 'embedded'); repeat to compare models"""
    out_dir: Path
    """output folder (default: runs/<probe>)"""
    roles: dict[str, str | Model] = field(default_factory=dict)
    """helper role ROLE=MODEL (unbound roles are played by each subject model)"""
    limit: int | None = None
    """use only the first N issues, topics, statements or claims"""
    seed: int = field(default=0, metadata={"minimum": None})
    """seed for draws, order and bootstrap intervals"""
    max_connections: int | None = None
    """Inspect: concurrent connections per model"""
    max_samples: int | None = None
    """Inspect: samples run in parallel"""
    max_retries: int | None = field(default=None, metadata={"minimum": 0})
    """Inspect: retries of a failed model call"""
    timeout: int | None = None
    """Inspect: seconds before a model call times out"""
    display: DisplayType | None = None
    """Inspect display (default: full in a terminal, else plain)"""
    log_level: LogLevel | None = None
    """Inspect log level"""
    attempt_timeout: int | None = None
    """Inspect: seconds before one attempt of a call is abandoned and retried (default: from the
    first call, 10x the provider's usual latency (3 min hosted, 10 min local or in-process) and
    at most half of --timeout; after 20 calls, 10x their 95th-percentile latency, at least 2 s)"""
    lean: bool | None = None
    """no realtime log buffer and no live score display (default: on above 200 samples)"""
    retry_wait: float | None = None
    """seconds before a failed call's first retry, doubling per retry, at least the
    server's Retry-After (default: 0.5; Inspect's own is 3)"""
    workers: int | None = None
    """run N worker processes, a shard of the samples each, into one log folder, then analyse"""
    shard: str | None = None
    """I/N: run only shard I of N of the samples into the log folder, without the analysis
    (for workers on several machines; a shard finished there already is skipped)"""
    log_dir: str | None = None
    """Inspect log location (default OUT/logs): for a --shard run a shared folder or an object
    store (s3://bucket/prefix); for a whole run an object store, whose logs are copied to
    OUT/logs for the analysis (run.toml, summary.json and tables stay in OUT)"""
    prices: dict[str, tuple[float, float]] = field(default_factory=dict)
    """MODEL=IN,OUT: USD per million input and output tokens (kept with the run in prices.json
    for the report's cost; `estimate` prices its plan with them)"""
    until_ci: float | None = field(default=None, metadata={"minimum": None})
    """W: run the units in seeded batches (--looks planned looks) and stop once every model's
    headline interval is narrower than W, in the headline's units; the interval is a betting
    confidence sequence at level 0.95 over the units in their seeded order, valid at every look at
    once, so whatever look the run stops at (bounded headlines only: `core.runs.until_ci`)"""
    batch: bool = False
    """send every call (the subject's and every role's) to the provider's batch API, where
    Inspect has one (OpenAI, Anthropic, Google, xAI, Together): about half the price, each call
    waiting in the provider's queue (up to 24 h; `estimate --batch` shows the price and the
    turnaround, which multiplies by the calls that wait one on another)"""
    batch_tick: float | None = field(default=None, metadata={"minimum": 0})
    """Inspect: seconds between checks of the batches in flight, and the longest wait before a
    partly filled batch is sent (default: Inspect's 15)"""
    looks: int | None = field(default=None, metadata={"minimum": None})
    """K: planned looks (batches) of --until-ci, at least 1 (default: 5); more looks can stop
    sooner at no cost in width (the confidence sequence holds at every look)"""
    rpm: float | None = field(default=None, metadata={"minimum": 0.001})
    """requests per minute per model for the whole run (a provider's quota): each HTTP attempt
    of the subject and of every role (retries included, cached answers not) waits for a token
    of its model's bucket, shared by the roles the same model plays and split across
    --workers or shards (default: no limit)"""
    embedded_max_tokens: int | None = field(default=None, metadata={"minimum": 0})
    """cap on each reply of the subject or a role the embedded model plays, unless the probe's
    own cap option for it is given (default: 64; 0: the method's caps); other models keep the
    method's caps"""

    def eval_args(self) -> dict[str, Any]:
        """The Inspect options this run sets, for `run_eval` (display and lean included)."""
        args = {name: getattr(self, name) for name in INSPECT_OPTIONS}
        return {
            "display": progress_display(self.display),
            "lean": self.lean,
            "retry_wait": self.retry_wait,
            "batch": batch_config(self.batch, self.batch_tick),
            "embedded_caps": embedded_caps(self),
            "rate_limit": rate_limit(self.rpm, self.shard_count()),
        } | {k: v for k, v in args.items() if v is not None}

    def shard_count(self) -> int:
        """The processes the run's samples are split over: N of a shard `I/N`, else 1 (an
        `--until-ci` batch is one of batches run one after another in this process)."""
        shard = parse_shard(self.shard)
        return shard.count if shard and not str(shard).startswith(BATCH_PREFIX) else 1

    def shard_args(self) -> dict[str, Any]:
        """`run_eval`'s `shard` for the probe's main evals (preparatory evals run whole)."""
        return {"shard": parse_shard(self.shard)}

    def log_location(self) -> str:
        """Where this run's Inspect logs go: `--log-dir`, else OUT/logs."""
        return self.log_dir or str(self.out_dir / "logs")

    def shard_result(self) -> dict[str, Any]:
        """What a `--shard` run returns instead of a summary (a shard alone is not analysed)."""
        return {"shard": self.shard, "log_dir": self.log_location()}


def batch_config(batch: bool, tick: float | None = None) -> bool | BatchConfig | None:
    """Inspect's `batch` for `--batch` (None: off), with `--batch-tick` as its tick and send
    delay."""
    if not batch:
        return None
    return True if tick is None else BatchConfig(tick=tick, send_delay=tick)


def with_batch(models: list[Model], batch: bool | BatchConfig | None) -> list[Model]:
    """The models, those whose provider Inspect batches with `batch` in their own generate
    config: a role's model does not take it from the eval's config (Inspect merges only
    connections, retries, timeout and cache into models other than the subject), so each is
    given it; the others run as usual."""
    if batch is None:
        return models
    for model in models:
        if batches(str(model)):
            model.config = model.config.merge(GenerateConfig(batch=batch))
    return models


def progress_display(display: str | None) -> str | None:
    """The Inspect display for a run: the one asked for; else Inspect's own (INSPECT_DISPLAY);
    else progress in a terminal ("full": samples done, time, tokens) and a plain line per
    step otherwise."""
    if display or os.environ.get("INSPECT_DISPLAY"):
        return display
    return "full" if sys.stdout.isatty() else "plain"
