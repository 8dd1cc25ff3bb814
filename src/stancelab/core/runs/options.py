"""Run options as command-line flags and as `run.toml`, generated from a probe's options
dataclass (types, defaults, and help from each field's docstring)."""

from __future__ import annotations

import argparse
import ast
import functools
import hashlib
import inspect
import json
import math
import os
import tomllib
import types
import typing
from dataclasses import Field, fields
from pathlib import Path
from typing import Any, Literal

from stancelab.core.data.files import parse_subset
from stancelab.core.errors import StancelabError
from stancelab.core.runs.caps import embedded_design
from stancelab.core.runs.evals import ProbeRun
from stancelab.core.runs.models import check_providers, parse_roles, resolve_model, resolve_models
from stancelab.core.values import field_default

RUN_CONFIG = "run.toml"
# An earlier configuration of a run folder, kept when another one replaces run.toml.
EARLIER_CONFIG = "run-{digest}.toml"
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
        if klass is not object and hasattr(klass, "__dataclass_fields__"):
            docs.update(_own_field_docs(klass))
    return docs


@functools.cache
def _own_field_docs(klass: type) -> dict[str, str]:
    """The docstrings of the fields `klass` itself declares (each class's source parsed once
    per process: every probe's options share ProbeRun's, in three commands' parsers)."""
    docs: dict[str, str] = {}
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


def _flag(item: Field) -> str:
    """The field's flag: its metadata's `flag`, else `--field-name` (`--no-field-name` for an
    option that is on by default)."""
    if "flag" in item.metadata:
        return str(item.metadata["flag"])
    name = item.name.replace("_", "-")
    return FLAGS.get(item.name, f"--no-{name}" if item.default is True else f"--{name}")


def positive_int(text: str) -> int:
    """argparse type: an integer of at least 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def non_negative_int(text: str) -> int:
    """argparse type: an integer of at least 0."""
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be at least 0, not {value}")
    return value


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
        default = field_default(item)
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
                               metavar=None if choices else item.metadata.get("metavar", hint.__name__.upper()),
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


def _from_text(
    name: str, value: Any, hint: Any, roles: tuple[str, ...], base_dir: Path | None = None
) -> Any:
    """A value given on the command line or in TOML, as the field's type; a clear error when it
    is not one. A relative path read from a config file (`base_dir`, its folder) is taken from
    that folder when it is there (`out_dir` always)."""
    try:
        return _typed(name, value, hint, roles, base_dir)
    except (TypeError, ValueError):
        kind = getattr(_base_type(hint)[0], "__name__", str(hint))
        raise StancelabError(f"option {name} expects {kind}, got {value!r}.") from None


def _typed(name: str, value: Any, hint: Any, roles: tuple[str, ...], base_dir: Path | None) -> Any:
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
        return _config_path(name, Path(value), base_dir)
    if base is int and isinstance(value, float) and not value.is_integer():
        raise ValueError(value)
    if base in (int, float) and not isinstance(value, bool):
        return base(value)
    return value


def _config_path(name: str, path: Path, base_dir: Path | None) -> Path:
    """`path` as read from a config file in `base_dir`: relative to that folder."""
    if base_dir is None or path.is_absolute():
        return path
    beside = base_dir / path
    return beside if name == "out_dir" or beside.exists() else path


def minimum_of(item: Field, base: Any) -> float | None:
    """The least value a numeric option takes: its metadata's `minimum` (None: any), else 1
    for a count and 0 for any other number."""
    if "minimum" in item.metadata:
        return item.metadata["minimum"]
    return 1 if base is int else 0


def _check_range(item: Field, base: Any, value: Any) -> None:
    """A number's range: finite, at least its minimum, at most its metadata's `maximum`."""
    minimum, maximum = minimum_of(item, base), item.metadata.get("maximum")
    if not isinstance(value, int | float) or not math.isfinite(value):
        raise StancelabError(f"{_flag(item)} must be a number, not {value!r}.")
    if minimum is not None and maximum is not None and not minimum <= value <= maximum:
        raise StancelabError(
            f"{_flag(item)} must be between {minimum:g} and {maximum:g}, not {value:g}."
        )
    if minimum is not None and value < minimum:
        raise StancelabError(f"{_flag(item)} must be at least {minimum:g}, not {value:g}.")
    if maximum is not None and value > maximum:
        raise StancelabError(f"{_flag(item)} must be at most {maximum:g}, not {value:g}.")


def check_options(options: ProbeRun) -> ProbeRun:
    """`options` when every value is in range (counts at least 1, numbers finite and not
    negative or in their declared range, choices and comma lists among theirs (metadata
    `among`), prices not negative); else an error naming the flag."""
    hints = typing.get_type_hints(type(options))
    for item in fields(options):
        value = getattr(options, item.name)
        base, choices = _base_type(hints[item.name])
        if value is None or isinstance(value, bool):
            continue
        if choices and value not in choices:
            raise StancelabError(
                f"{_flag(item)} must be one of {', '.join(map(str, choices))}, not {value!r}."
            )
        if "among" in item.metadata:
            parse_subset(value, item.metadata["among"], _flag(item))
        if base in (int, float):
            _check_range(item, base, value)
    for model, price in options.prices.items():
        if not all(math.isfinite(part) and part >= 0 for part in price):
            raise StancelabError(
                f"--price {model}: prices must be numbers of at least 0, not {price}."
            )
    return options


def build_options(options: type[ProbeRun], roles: tuple[str, ...], default_out: Path,
                  given: dict[str, Any], config: dict[str, Any] | None = None,
                  config_dir: Path | None = None) -> Any:  # fmt: skip
    """The run options, checked: the dataclass's defaults, then `config` (run.toml, whose
    relative paths are taken from `config_dir`, its folder), then `given`."""
    hints = typing.get_type_hints(options)
    known = {item.name for item in fields(options)}
    values: dict[str, Any] = {"models": resolve_models(None), "out_dir": default_out}
    for source, base_dir in ((config or {}, config_dir), (given, None)):
        unknown = sorted(set(source) - known)
        if unknown:
            raise StancelabError(f"Unknown option(s) for this probe: {', '.join(unknown)}.")
        values |= {k: _from_text(k, v, hints[k], roles, base_dir) for k, v in source.items()}
    values |= embedded_design(options, values["models"], [*(config or {}), *given])
    built = check_options(options(**values))
    check_providers([*built.models, *built.roles.values()])
    return built


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


def check_out_dir(out: Path) -> None:
    """The output folder exists or can be made, and a file can be written in it."""
    if out.exists() and not out.is_dir():
        raise StancelabError(f"--out {out}: is a file, not a folder.")
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / f".stancelab-write-check-{os.getpid()}"
        probe.write_text("")
        probe.unlink()
    except OSError as error:
        raise StancelabError(
            f"--out {out}: cannot write there ({error.strerror or error})."
        ) from None


def check_input_files(options: ProbeRun) -> None:
    """Every input file given exists (a bare name such as "contested", with no folder and no
    suffix, may name a bundled set instead)."""
    for item in fields(options):
        path = getattr(options, item.name)
        if item.name == "out_dir" or not isinstance(path, Path) or path.exists():
            continue
        if path.suffix or len(path.parts) > 1:
            raise StancelabError(f"{_flag(item)} {path}: no such file or folder.")


def check_run(options: ProbeRun) -> None:
    """Everything that can be checked before a call: the values, that Inspect knows every
    model's provider, that the input files exist and that the output folder is writable."""
    check_options(options)
    check_providers([*options.models, *options.roles.values()])
    check_input_files(options)
    check_out_dir(options.out_dir)


def _portable_path(name: str, path: Path, folder: Path) -> str:
    """A path as run.toml holds it: the run folder itself as ".", a file inside the run folder
    relative to it, any other existing file absolute; a name that is no file (a bundled set
    such as "contested") as given."""
    if name == "out_dir":
        return "."
    if not path.exists():
        return str(path)
    absolute, root = path.resolve(), folder.resolve()
    return str(absolute.relative_to(root)) if absolute.is_relative_to(root) else str(absolute)


def options_toml(probe: str, options: ProbeRun) -> str:
    """`options` as TOML that `read_config` reads back to the same options (unset ones left
    out): the probe's name, then its options in the `[options]` table. Paths are relative to
    the run folder (the file's own) or absolute, so the file repeats the run from anywhere."""
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
        if isinstance(value, Path):
            value = _portable_path(item.name, value, options.out_dir)
        lines.append(f"{item.name} = {_toml_value(value)}")
    return "\n".join(lines) + "\n"


def config_digest(text: str) -> str:
    """A configuration's short name: the first 8 hex digits of its SHA-256."""
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def write_config(probe: str, options: ProbeRun, tables: str = "") -> Path:
    """Write `run.toml` (the options this run used, then `tables`: TOML tables recording more
    of the run) into the run's folder. A different configuration already there is kept as
    `run-<digest>.toml`, so a folder that holds several runs keeps each one's options (the
    latest in run.toml)."""
    options.out_dir.mkdir(parents=True, exist_ok=True)
    path = options.out_dir / RUN_CONFIG
    text = options_toml(probe, options) + tables
    if path.exists() and (earlier := path.read_text()) != text:
        kept = options.out_dir / EARLIER_CONFIG.format(digest=config_digest(earlier))
        if not kept.exists():
            kept.write_text(earlier)
    path.write_text(text)
    (options.out_dir / EARLIER_CONFIG.format(digest=config_digest(text))).unlink(missing_ok=True)
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
        raise StancelabError(f'--config {path}: expects probe = "NAME" and an [options] table')
    return probe, options
