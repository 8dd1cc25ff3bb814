"""Running Inspect evals for the probes, and JSON-safe values for summaries."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.model import Model

from stancelab.core.errors import StancelabError

# A sample that fails on an error the provider layer does not retry (e.g. a response body cut
# mid-JSON) is run again; its calls that had completed come from the cache, unpaid.
SAMPLE_RETRIES = 3


def run_eval(
    task: Any,
    models: list[str | Model],
    roles: dict[str, str | Model] | None,
    log_dir: Path,
    display: str | None = None,
    role_names: tuple[str, ...] = (),
) -> list[EvalLog]:
    """Run one task for every model into `log_dir`; an eval that does not finish is an error.

    Helper roles in `role_names` that `roles` leaves unbound are played by each subject model
    itself, bound by name so that logs attribute every call (and its tokens) to its role."""
    bound = dict(roles or {})
    unbound = [name for name in role_names if name not in bound]
    if unbound:
        groups = [([model], {name: model for name in unbound} | bound) for model in models]
    else:
        groups = [(models, bound)]
    logs: list[EvalLog] = []
    for group_models, group_roles in groups:
        logs.extend(inspect_eval(task, model=group_models, model_roles=group_roles or None,
                                 log_dir=str(log_dir), display=display,
                                 retry_on_error=SAMPLE_RETRIES))  # type: ignore[arg-type]  # fmt: skip
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
