"""Run options as command-line flags and as `run.toml`, generated from a probe's options
dataclass (types, defaults, and help from each field's docstring)."""

from __future__ import annotations

import argparse
import ast
import inspect
import json
import tomllib
import types
import typing
from dataclasses import MISSING, Field, fields
from pathlib import Path
from typing import Any, Literal

from stancelab.core.errors import StancelabError
from stancelab.core.evals import ProbeRun
from stancelab.core.models import parse_roles, resolve_model, resolve_models

RUN_CONFIG = "run.toml"
# ProbeRun fields whose flag is not the field name, and those given as repeated NAME=VALUE.
FLAGS = {"models": "--model", "roles": "--role", "out_dir": "--out", "prices": "--price"}
REPEATED = {"models": "MODEL", "roles": "ROLE=MODEL", "prices": "MODEL=IN,OUT"}
# ProbeRun fields that say how a run is carried out (processes, shard, log location), not what
# it is: left out of run.toml, so the same file serves every worker and a repeat.
HOW_TO_RUN = ("workers", "shard", "log_dir")


def field_docs(cls: type) -> dict[str, str]:
    """Each dataclass field's docstring (the string right after it), base classes first."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if klass is object or not hasattr(klass, "__dataclass_fields__"):
            continue
        body = ast.parse(inspect.getsource(klass)).body[0]
        assert isinstance(body, ast.ClassDef)
        for node, after in zip(body.body, body.body[1:], strict=False):
            if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
                    and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)):  # fmt: skip
                docs[node.target.id] = str(after.value.value).strip()
    return docs


def _base_type(hint: Any) -> tuple[Any, tuple[Any, ...]]:
    """(the type without `| None`, the Literal choices or ())."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        hint = next(arg for arg in typing.get_args(hint) if arg is not type(None))
    if typing.get_origin(hint) is Literal:
        return str, typing.get_args(hint)
    return hint, ()


def _default(item: Field) -> Any:
    if item.default is not MISSING:
        return item.default
    if item.default_factory is not MISSING:
        return item.default_factory()
    return None


def _flag(item: Field) -> str:
    """The field's flag: its metadata's `flag`, else `--field-name` (`--no-field-name` for an
    option that is on by default)."""
    if "flag" in item.metadata:
        return str(item.metadata["flag"])
    name = item.name.replace("_", "-")
    return FLAGS.get(item.name, f"--no-{name}" if item.default is True else f"--{name}")


def add_option_arguments(parser: argparse.ArgumentParser, options: type[ProbeRun],
                         roles: tuple[str, ...]) -> None:  # fmt: skip
    """One flag per field of `options`; shared fields first. Unset flags stay out of the
    parsed namespace (argparse.SUPPRESS), so a config file can fill them."""
    hints = typing.get_type_hints(options)
    docs = field_docs(options)
    shared = parser.add_argument_group("options every probe shares")
    own = parser.add_argument_group(f"{parser.prog} options")
    shared_names = {item.name for item in fields(ProbeRun)}
    for item in fields(options):
        group = shared if item.name in shared_names else own
        help_text = docs.get(item.name, "")
        if item.name == "roles":
            help_text += f" (roles: {', '.join(roles) or 'none'})"
        hint, choices = _base_type(hints[item.name])
        default = _default(item)
        kwargs: dict[str, Any] = {"dest": item.name, "default": argparse.SUPPRESS}
        if item.name in REPEATED:
            group.add_argument(_flag(item), action="append", metavar=REPEATED[item.name],
                               help=help_text, **kwargs)  # fmt: skip
        elif hint is bool and default is True:
            group.add_argument(_flag(item), action="store_false",
                               help=f"do not: {help_text}", **kwargs)  # fmt: skip
        elif hint is bool:
            group.add_argument(_flag(item), action="store_true", help=help_text, **kwargs)
        else:
            shown = "" if default in (None, "", [], {}) else f" (default: {default})"
            group.add_argument(_flag(item), type=hint, choices=choices or None,
                               metavar=hint.__name__.upper() if not choices else None,
                               help=help_text + shown, **kwargs)  # fmt: skip


def parse_prices(assignments: list[str] | None) -> dict[str, tuple[float, float]]:
    """`MODEL=IN,OUT` strings -> {model: (USD per 1M input, USD per 1M output tokens)}."""
    prices: dict[str, tuple[float, float]] = {}
    for assignment in assignments or []:
        model, _, values = assignment.rpartition("=")
        try:
            per_input, per_output = (float(part) for part in values.split(","))
        except ValueError:
            raise StancelabError(
                f"--price expects MODEL=IN,OUT in USD per 1M tokens, got '{assignment}'."
            ) from None
        if not model:
            raise StancelabError(f"--price expects MODEL=IN,OUT, got '{assignment}'.")
        prices[resolve_model(model)] = (per_input, per_output)
    return prices


def _from_text(name: str, value: Any, hint: Any, roles: tuple[str, ...]) -> Any:
    """A value given on the command line or in TOML, as the field's type."""
    if name == "models":
        return resolve_models(value)
    if name == "roles":
        pairs = [f"{k}={v}" for k, v in value.items()] if isinstance(value, dict) else value
        return parse_roles(pairs, roles)
    if name == "prices":
        if isinstance(value, dict):
            return {resolve_model(k): (float(v[0]), float(v[1])) for k, v in value.items()}
        return parse_prices(value)
    base, _ = _base_type(hint)
    if base is Path:
        return Path(value)
    if base in (int, float) and not isinstance(value, bool):
        return base(value)
    return value


def build_options(options: type[ProbeRun], roles: tuple[str, ...], default_out: Path,
                  given: dict[str, Any], config: dict[str, Any] | None = None) -> Any:  # fmt: skip
    """The run options: the dataclass's defaults, then `config` (run.toml), then `given`."""
    hints = typing.get_type_hints(options)
    known = {item.name for item in fields(options)}
    values: dict[str, Any] = {"models": resolve_models(None), "out_dir": default_out}
    for source in (config or {}, given):
        unknown = sorted(set(source) - known)
        if unknown:
            raise StancelabError(f"Unknown option(s) for this probe: {', '.join(unknown)}.")
        values |= {k: _from_text(k, v, hints[k], roles) for k, v in source.items()}
    return options(**values)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(str(k))} = {_toml_value(v)}"
                                for k, v in value.items()) + " }"  # fmt: skip
    return json.dumps(str(value))  # a TOML basic string


def options_toml(probe: str, options: ProbeRun) -> str:
    """`options` as TOML that `read_config` reads back to the same options (unset ones left
    out): the probe's name, then its options in the `[options]` table."""
    lines = [f"probe = {json.dumps(probe)}", "", "[options]"]
    for item in fields(options):
        value = getattr(options, item.name)
        if item.name in HOW_TO_RUN:
            continue
        if value is None or (item.name != "models" and value in ({}, [])):
            continue
        if item.name == "models":
            value = [str(model) for model in value]
        if item.name == "roles":
            value = {role: str(model) for role, model in value.items()}
        lines.append(f"{item.name} = {_toml_value(value)}")
    return "\n".join(lines) + "\n"


def write_config(probe: str, options: ProbeRun) -> Path:
    """Write `run.toml` (the options this run used) into the run's folder."""
    options.out_dir.mkdir(parents=True, exist_ok=True)
    path = options.out_dir / RUN_CONFIG
    path.write_text(options_toml(probe, options))
    return path


def read_config(path: Path) -> tuple[str | None, dict[str, Any]]:
    """A run.toml's probe name (None when it names none) and its `[options]` table; a clear
    error when it cannot be read."""
    try:
        config = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise StancelabError(f"--config {path}: not a readable TOML file ({error})") from None
    probe, options = config.get("probe"), config.get("options", {})
    if (probe is not None and not isinstance(probe, str)) or not isinstance(options, dict):
        raise StancelabError(f"--config {path}: expects probe = \"NAME\" and an [options] table")
    return probe, options
