"""Running Inspect evals for the probes, and JSON-safe values for summaries."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.model import Model

from stancelab.core.attempts import adaptive_attempt_timeout
from stancelab.core.errors import StancelabError
from stancelab.core.singleflight import single_flight

# A sample that fails on an error the provider layer does not retry (e.g. a response body cut
# mid-JSON) is run again; its calls that had completed come from the cache, unpaid. At 5%
# cut bodies, 3 retries lost conversations of 11 calls; 10 lose none in practice.
SAMPLE_RETRIES = 10
# Above this many samples a run is lean: no realtime sample buffer and no live score display
# (the finished log is the same; `inspect view` reads it once the eval ends).
LEAN_ABOVE_SAMPLES = 300
# Samples in flight per connection: a sample waiting out a retry's back-off leaves its
# connection to another, so faults do not starve the run of requests.
SAMPLES_PER_CONNECTION = 2


def sample_count(task: Any) -> int:
    """Samples x epochs of an Inspect task (0 if it cannot tell)."""
    try:
        return len(task.dataset) * int(task.epochs or 1)
    except (AttributeError, TypeError):
        return 0


def eval_settings(task: Any, lean: bool | None, options: dict[str, Any]) -> dict[str, Any]:
    """Keyword arguments for `inspect_ai.eval`: the run options that are set, and the lean
    settings when `lean` is true (or None and the task has many samples)."""
    settings = {name: value for name, value in options.items() if value is not None}
    if settings.get("max_connections"):
        settings["max_samples"] = SAMPLES_PER_CONNECTION * settings["max_connections"]
    if lean or (lean is None and sample_count(task) > LEAN_ABOVE_SAMPLES):
        settings |= {"log_realtime": False, "score_display": False}
    return settings


def run_eval(
    task: Any,
    models: list[str | Model],
    roles: dict[str, str | Model] | None,
    log_dir: Path,
    display: str | None = None,
    role_names: tuple[str, ...] = (),
    *,
    max_retries: int | None = None,
    timeout: int | None = None,
    attempt_timeout: int | None = None,
    max_connections: int | None = None,
    lean: bool | None = None,
) -> list[EvalLog]:
    """Run one task for every model into `log_dir`; an eval that does not finish is an error.

    Helper roles in `role_names` that `roles` leaves unbound are played by each subject model
    itself, bound by name so that logs attribute every call (and its tokens) to its role.
    `max_retries`, `timeout`, `attempt_timeout` and `max_connections` are Inspect's; `lean`
    (default: above LEAN_ABOVE_SAMPLES samples) drops the realtime buffer and score display.
    Without `attempt_timeout`, it is set from the observed latency (`core.attempts`);
    identical cached calls in flight at once are sent once (`core.singleflight`)."""
    settings = eval_settings(task, lean, {
        "max_retries": max_retries, "timeout": timeout, "attempt_timeout": attempt_timeout,
        "max_connections": max_connections})  # fmt: skip
    bound = dict(roles or {})
    unbound = [name for name in role_names if name not in bound]
    if unbound:
        groups = [([model], {name: model for name in unbound} | bound) for model in models]
    else:
        groups = [(models, bound)]
    logs: list[EvalLog] = []
    for group_models, group_roles in groups:
        with adaptive_attempt_timeout(attempt_timeout is None), single_flight():
            logs.extend(inspect_eval(task, model=group_models, model_roles=group_roles or None,
                                     log_dir=str(log_dir), display=display,
                                     retry_on_error=SAMPLE_RETRIES, **settings))  # type: ignore[arg-type]  # fmt: skip
    for log in logs:
        if log.status != "success":
            reason = log.error.message if log.error else log.status
            raise StancelabError(f"Inspect eval of {log.eval.model} did not finish: {reason}")
    return logs


def json_safe(value: Any) -> Any:
    """A value fit for summary.json: numpy scalars unwrapped, NaN as null, floats rounded."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float):
        return None if math.isnan(value) else round(value, 6)
    return value


@dataclass
class ProbeRun:
    """Options every probe run shares; each probe's run options extend it."""

    models: list[str | Model]
    out_dir: Path
    roles: dict[str, str | Model] = field(default_factory=dict)
    display: str | None = None
    max_retries: int | None = None
    timeout: int | None = None
    attempt_timeout: int | None = None
    max_connections: int | None = None
    lean: bool | None = None

    def eval_options(self) -> dict[str, Any]:
        """The keyword options of `run_eval` that this run sets."""
        return {"max_retries": self.max_retries, "timeout": self.timeout,
                "attempt_timeout": self.attempt_timeout, "max_connections": self.max_connections,
                "lean": self.lean}  # fmt: skip
