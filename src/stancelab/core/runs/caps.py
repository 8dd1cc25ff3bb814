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
from stancelab.core.embedded.precision import dtype_note, embedded_dtype
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
        if value == item.metadata.get("embedded"):  # the embedded design's, not the user's
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
    weights: str | None = None
    """the number format of the weights (None: not recorded; float32 before it was)"""
    design: dict[str, int | str] = {}
    """the embedded design settings the run used in place of the method's (option -> value)"""


def caps_record(caps: EmbeddedCaps, players: list[str],
                design: dict[str, int | str] | None = None) -> CapsRecord | None:  # fmt: skip
    """What the run records of its embedded caps and design settings (None when no role is
    embedded, or none is capped and the design is the method's)."""
    if not players or (caps.cap is None and not caps.set_by_user and not design):
        return None
    in_force: dict[str, int | str] = {}
    for role in players:
        cap = caps.for_role(role)
        in_force[role] = cap if cap is not None else caps.set_by_user.get(role, "the method's")
    return CapsRecord(caps=in_force, weights=embedded_dtype(), design=design or {})


def embedded_design(options_type: type, models: Iterable[str | Model],
                    set_by_user: Iterable[str]) -> dict[str, Any]:  # fmt: skip
    """The design settings a run whose every subject model is the embedded model uses in place
    of the method's: each option with metadata `embedded` (its value there) that the user did
    not set. Repetitions that give a real model's figures their power (MillStone's 15 trials,
    Conviction's samples, every template) only cost the 135M model time; the settings are the
    demo's. Empty for any other model."""
    models = list(models)
    if not models or not all(is_embedded_name(model) for model in models):
        return {}
    given = set(set_by_user)
    return {item.name: item.metadata["embedded"] for item in fields(options_type)
            if "embedded" in item.metadata and item.name not in given}  # fmt: skip


def design_in_force(options: Any) -> dict[str, int | str]:
    """The options of a run (subject embedded) at their embedded design setting."""
    if not embedded_design(type(options), options.models, ()):
        return {}
    return {item.name: getattr(options, item.name) for item in fields(options)
            if "embedded" in item.metadata
            and getattr(options, item.name) == item.metadata["embedded"]}  # fmt: skip


def design_line(options: Any, design: dict[str, int | str]) -> str:
    """The run header's line on the embedded design settings."""
    by_name = {item.name: item for item in fields(options)}
    parts = []
    for name, value in design.items():
        item = by_name[name]
        flag = item.metadata.get("flag", f"--{name.replace('_', '-')}")
        method = item.metadata.get("method", field_default(item))
        parts.append(f"{flag} {value} (the method's: {method})")
    return (f"[embedded] design: {', '.join(parts)}: repetitions that give a real model's "
            "figures their power only cost the embedded model time; set an option to choose "
            "it (the method's design applies to every other model)")  # fmt: skip


def caps_line(record: CapsRecord) -> str:
    """The run header's line on the embedded caps."""
    caps = ", ".join(
        f"{role} {cap} tokens" if isinstance(cap, int) else f"{role} as set ({cap})"
        for role, cap in record.caps.items()
    )
    return (f"[embedded] caps per reply: {caps} (--embedded-max-tokens; {NOTE}); "
            "judges' and graders' replies stop where their form ends, asked once at temperature 0"
            + (f"; {dtype_note(record.weights)}" if record.weights else ""))  # fmt: skip


def caps_toml(record: CapsRecord) -> str:
    """The record as run.toml's `[embedded_caps]` table."""
    import json

    lines = ["", f"[{CAPS_KEY}]", f"model = {json.dumps(record.model)}",
             f"note = {json.dumps(record.note)}", f"replies = {json.dumps(record.replies)}",
             *([f"weights = {json.dumps(record.weights)}"] if record.weights else []),
             f"[{CAPS_KEY}.caps]"]  # fmt: skip
    lines += [f"{role} = {json.dumps(cap)}" for role, cap in record.caps.items()]
    if record.design:
        lines += [f"[{CAPS_KEY}.design]"]
        lines += [f"{name} = {json.dumps(value)}" for name, value in record.design.items()]
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
