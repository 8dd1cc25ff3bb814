"""Errors that stancelab raises for bad input."""

from __future__ import annotations

from pathlib import Path

from stancelab.core.inspect_private import PrerequisiteError


class StancelabError(Exception):
    """Base class for errors a user can act on."""


class DataFileError(StancelabError):
    """A data file failed validation; names the file, line and field."""

    def __init__(self, path: Path | str, line: int | None, field: str | None, reason: str):
        self.path = Path(path)
        self.line = line
        self.field = field
        self.reason = reason
        where = f"{self.path}"
        if line is not None:
            where += f", line {line}"
        if field:
            where += f", field '{field}'"
        super().__init__(f"{where}: {reason}")


class NotImplementedInStancelab(StancelabError, NotImplementedError):
    """A documented feature that this version does not implement."""


class Interrupted(StancelabError):
    """The user stopped the command (Ctrl-C): what ran is in its logs, and running the same
    command again resumes (answers already stored come from the cache). Exit status 130."""


class TaskArgumentError(StancelabError, PrerequisiteError):
    """A task argument (`-T NAME=VALUE` of `inspect eval`) the task does not take, or out of
    range; Inspect prints it as one line, without a traceback."""
