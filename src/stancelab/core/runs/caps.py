"""Caps on the replies of the roles the embedded model plays (and the subject, when it is one).

A method's caps (a judge's 2,048 tokens, a grader's 512) exist for models that answer in the
method's format; the 135M embedded model rarely does, and writes to the cap: one `--limit 1`
llm-bias-bench run took about 50 minutes. So each reply of a role served by the embedded
model is capped at `--embedded-max-tokens` (default EMBEDDED_MAX_TOKENS, the demo's caps), unless
the user set that role's cap with the probe's own option (a field whose metadata names the
roles it caps: `{"caps": ("subject", "user")}`). The method's own caps apply to every other
model. The caps in force are printed when the run starts and recorded in run.toml and in
summary.json (CAPS_KEY).
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from inspect_ai.model import Model
from pydantic import BaseModel, ConfigDict

from stancelab.core.embedded.model import EMBEDDED_MODEL
from stancelab.core.errors import StancelabError
from stancelab.core.values import field_default

EMBEDDED_MAX_TOKENS = 64
SUBJECT = "subject"
CAPS_KEY = "embedded_caps"
NOTE = "the method's own caps apply to every other model"
REASKS = (
    "an unreadable reply asked at temperature 0 is asked once on the embedded model (it "
    "decodes greedily: a re-ask repeats the reply); replies of a defined form stop where the "
    "form ends (a JSON object's closing brace, an option's closing parenthesis)"
)


@dataclass(frozen=True)
class EmbeddedCaps:
    """The cap on each embedded reply, and the roles whose cap the user set (role -> flag)."""

    cap: int | None = EMBEDDED_MAX_TOKENS
    set_by_user: dict[str, str] = field(default_factory=dict)

    def for_role(self, role: str) -> int | None:
        """The embedded cap on `role`'s replies (None: the run's own cap applies)."""
        return None if role in self.set_by_user else self.cap

    def model(self, role: str, model: str | Model) -> str | Model:
        """`model` as `role` plays it: the embedded model named by a string becomes a Model
        capped for the role; anything else is taken as it is."""
        if not (isinstance(model, str) and model == EMBEDDED_MODEL):
            return model
        from inspect_ai.model import get_model

        from stancelab.core.embedded.api import MAX_TOKENS_CAP_ARG

        return get_model(model, memoize=False, **{MAX_TOKENS_CAP_ARG: self.for_role(role)})


def embedded_caps(options: Any) -> EmbeddedCaps:
    """The run's embedded caps: `embedded_max_tokens` (None: EMBEDDED_MAX_TOKENS; 0: none),
    less the roles whose cap option (metadata `caps`) the user set to other than its default."""
    chosen = getattr(options, "embedded_max_tokens", None)
    cap = EMBEDDED_MAX_TOKENS if chosen is None else (chosen or None)
    set_by_user: dict[str, str] = {}
    for item in fields(options):
        value = getattr(options, item.name)
        if "caps" not in item.metadata or value is None or value == field_default(item):
            continue
        for role in item.metadata["caps"]:
            flag = item.metadata.get("flag", f"--{item.name.replace('_', '-')}")
            set_by_user.setdefault(role, f"{flag} {value}")
    return EmbeddedCaps(cap, set_by_user)


def is_embedded_name(model: str | Model) -> bool:
    """Whether a model string (or Model) is the embedded model."""
    if isinstance(model, str):
        return model == EMBEDDED_MODEL
    from stancelab.core.embedded.replies import is_embedded

    return is_embedded(model)


def embedded_players(models: Iterable[str | Model], roles: dict[str, str | Model],
                     role_names: Iterable[str]) -> list[str]:  # fmt: skip
    """The subject (SUBJECT) and the roles the embedded model plays in a run: a role bound
    to it, or unbound while a subject model is embedded."""
    subject_embedded = any(is_embedded_name(model) for model in models)
    players = [SUBJECT] if subject_embedded else []
    for role in role_names:
        bound = roles.get(role)
        if is_embedded_name(bound) if bound is not None else subject_embedded:
            players.append(role)
    return players


class CapsRecord(BaseModel):
    """The embedded caps of a run as run.toml and summary.json keep them."""

    model_config = ConfigDict(extra="forbid")

    model: str = EMBEDDED_MODEL
    caps: dict[str, int | str]
    """per role the embedded model plays: its cap in tokens, or the option the user set"""
    note: str = NOTE
    replies: str = REASKS


def caps_record(caps: EmbeddedCaps, players: list[str]) -> CapsRecord | None:
    """What the run records of its embedded caps (None when no role is embedded or uncapped)."""
    if not players or (caps.cap is None and not caps.set_by_user):
        return None
    in_force: dict[str, int | str] = {}
    for role in players:
        cap = caps.for_role(role)
        in_force[role] = cap if cap is not None else caps.set_by_user.get(role, "the method's")
    return CapsRecord(caps=in_force)


def caps_line(record: CapsRecord) -> str:
    """The run header's line on the embedded caps."""
    caps = ", ".join(
        f"{role} {cap} tokens" if isinstance(cap, int) else f"{role} as set ({cap})"
        for role, cap in record.caps.items()
    )
    return (f"[embedded] caps per reply: {caps} (--embedded-max-tokens; {NOTE}); "
            "judges' and graders' replies stop where their form ends, asked once at temperature 0")  # fmt: skip


def caps_toml(record: CapsRecord) -> str:
    """The record as run.toml's `[embedded_caps]` table."""
    import json

    lines = ["", f"[{CAPS_KEY}]", f"model = {json.dumps(record.model)}",
             f"note = {json.dumps(record.note)}", f"replies = {json.dumps(record.replies)}",
             f"[{CAPS_KEY}.caps]"]  # fmt: skip
    lines += [f"{role} = {json.dumps(cap)}" for role, cap in record.caps.items()]
    return "\n".join(lines) + "\n"


def read_caps(run_toml: Path) -> CapsRecord | None:
    """The `[embedded_caps]` table of a run.toml (None when absent or no run.toml); a clear
    error when it is malformed."""
    try:
        table = tomllib.loads(run_toml.read_text()).get(CAPS_KEY)
    except (OSError, tomllib.TOMLDecodeError):
        return None
    if table is None:
        return None
    try:
        return CapsRecord.model_validate(table)
    except ValueError as error:
        raise StancelabError(f"{run_toml}: [{CAPS_KEY}] is not readable ({error})") from None
