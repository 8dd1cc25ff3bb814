"""Checks every stancelab Inspect task runs on its arguments first: an argument it does not
take (`inspect eval ... -T limit_issues=1`) or a count below its minimum is an error, not a
silent full run."""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable, Mapping
from typing import Any, ParamSpec, TypeVar

from stancelab.core.errors import StancelabError, TaskArgumentError
from stancelab.core.inspect_private import PrerequisiteError

P = ParamSpec("P")
R = TypeVar("R")


def accepted_arguments(task: Callable[..., Any]) -> list[str]:
    """The named parameters of a task function (its `**unknown` catch-all left out)."""
    parameters = inspect.signature(task).parameters.values()
    return [p.name for p in parameters if p.kind is not inspect.Parameter.VAR_KEYWORD]


def check_task_args(task: Callable[..., Any], unknown: Mapping[str, Any],
                    minimums: Mapping[str, tuple[Any, float]] | None = None) -> None:  # fmt: skip
    """Raise when `unknown` holds any argument (the task's `**unknown`), or when a value of
    `minimums` ({name: (value, minimum)}, None values skipped) is below its minimum."""
    name = getattr(task, "__name__", "task")
    if unknown:
        raise TaskArgumentError(
            f"task {name} takes no argument(s) {', '.join(sorted(unknown))} "
            f"(it takes: {', '.join(accepted_arguments(task))})."
        )
    for argument, (value, minimum) in (minimums or {}).items():
        if value is None:
            continue
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            raise TaskArgumentError(f"task {name}: {argument} must be a number, not {value!r}.")
        if value < minimum:
            raise TaskArgumentError(
                f"task {name}: {argument} must be at least {minimum:g}, not {value!r}."
            )


@functools.cache
def _printable_kind(kind: type[StancelabError]) -> type[StancelabError]:
    """`kind` that Inspect also prints as one line (a `PrerequisiteError` too)."""
    return type(kind.__name__, (kind, PrerequisiteError), {"__module__": kind.__module__})


def one_line_errors(task: Callable[P, R]) -> Callable[P, R]:
    """A task function (under `@task`) whose user errors (a missing or malformed file, an
    unknown value) `inspect eval` prints as one line, not a traceback: each StancelabError
    is raised again as the same error and a `PrerequisiteError`."""

    @functools.wraps(task)
    def made(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return task(*args, **kwargs)
        except StancelabError as error:
            if isinstance(error, PrerequisiteError):
                raise
            printable = _printable_kind(type(error)).__new__(_printable_kind(type(error)))
            printable.__dict__.update(vars(error))
            printable.args, printable.message = error.args, str(error)
            raise printable from None

    return made
