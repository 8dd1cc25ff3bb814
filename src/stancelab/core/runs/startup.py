"""Inspect's start-up errors (a missing API key, a missing package) as stancelab errors.

Inspect raises `PrerequisiteError` when it cannot start an eval and leaves the message to its
exception hook, which prints through rich: nothing at all under `--display none` (rich is
quiet then), and on stdout otherwise. Here the error becomes a `StancelabError` that names the
model, so the command line prints it on stderr in every display mode.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager

from rich.text import Text

from stancelab.core.errors import StancelabError
from stancelab.core.inspect_private import PrerequisiteError

__all__ = ["PrerequisiteError", "inspect_startup", "startup_message"]


def plain_message(error: PrerequisiteError) -> str:
    """The error's message as one paragraph of plain text (rich markup and line breaks gone)."""
    message = error.message
    text = Text.from_markup(message).plain if isinstance(message, str) else str(message)
    text = re.sub(r"^ERROR:\s*", "", text.strip())
    paragraphs = [" ".join(part.split()) for part in re.split(r"\n\s*\n", text)]
    return " ".join(_sentence(part) for part in paragraphs if part)


def _sentence(text: str) -> str:
    """`text` ending with a full stop unless it already ends with punctuation."""
    return text if text.endswith((".", ":", "?", "!")) else text + "."


def failing_models(
    message: str, models: Iterable[object], roles: Mapping[str, object]
) -> list[str]:
    """The run's models (subjects, then ROLE=MODEL) the message points at; all when none match.

    A model matches when a provider part of its name (`openai`, or `nokey` of
    `openai-api/nokey/m`) appears in the message as a word."""
    named = [str(model) for model in models] + [f"{role}={model}" for role, model in roles.items()]
    named = list(dict.fromkeys(named))
    lower = message.lower()

    def matches(name: str) -> bool:
        providers = name.rpartition("=")[2].split("/")[:-1]
        return any(
            re.search(rf"\b{re.escape(part.lower())}\b", lower) for part in providers if part
        )

    return [name for name in named if matches(name)] or named


def startup_message(error: PrerequisiteError, models: Iterable[object] = (),
                    roles: Mapping[str, object] | None = None) -> str:  # fmt: skip
    """One paragraph: Inspect could not start the eval, for which model(s), and why."""
    reason = plain_message(error)
    names = failing_models(reason, models, roles or {})
    where = f" for model {', '.join(names)}" if names else ""
    return f"Inspect could not start the eval{where}: {reason}"


@contextmanager
def inspect_startup(
    models: Iterable[object], roles: Mapping[str, object] | None = None
) -> Iterator[None]:
    """Turn Inspect's start-up error inside the block into a StancelabError naming the model."""
    try:
        yield
    except PrerequisiteError as error:
        if isinstance(error, StancelabError):  # stancelab's own, e.g. a task argument out of range
            raise
        raise StancelabError(startup_message(error, list(models), roles)) from error
