"""Model identity across sources: one name per model, whichever paper, provider or user
spelled it.

A source name (`Llama-3.1-8B-Instruct`, `openai/gpt-4o-mini-2024-07-18`, `llama-3.1-8b`) is
first normalised by fixed rules:

1. provider prefix: only the text after the last `/` counts (`vllm/meta-llama/X` -> `X`);
2. spelling: lower case, accents dropped (`Sabiá-4` -> `sabia-4`), spaces, `_`, `:` and
   brackets become `-`;
3. the instruction-tuned suffix: the word `instruct` (and a final `-it`) is dropped, since the
   probes ask chat models and the papers' short names ("Llama 3.1 8B") mean the chat model;
4. a dated snapshot, a final `-YYYY-MM-DD` or `-YYYYMMDD`, is dropped and kept aside.

Then the alias table (bundled: `core/data/model_key/aliases.jsonl`; a user's: `--alias FILE`, same
format, read first) turns a normalised alias into its canonical name (provider API spellings
such as `claude-3-5-haiku`, Hugging Face names such as `meta-llama-3.1-8b`).

Never merged: two names whose size (`8b`, `70b`, `a17b`), version numbers (`3.5` vs `3.7`, `4o`,
`0324`) or tier words (`mini`, `pro`, `flash`, `lite`, `thinking`, `preview`, ...) differ (an
alias table entry that would merge them is an error on load); two different dated snapshots of
one model; two source names that one lens measured (both are in one probe's results, so they
are two runs, and each keeps its own row).
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from stancelab.core.data.files import load_jsonl
from stancelab.core.errors import DataFileError, StancelabError

ALIAS_FILE = "aliases.jsonl"
TIER_WORDS = frozenset({
    "mini", "nano", "micro", "tiny", "small", "medium", "large", "xl", "pro", "plus", "max",
    "ultra", "turbo", "flash", "lite", "haiku", "sonnet", "opus", "thinking", "reasoning",
    "preview", "exp", "experimental", "base", "vision", "coder", "distill",
})  # fmt: skip
"""words that name a different model of one family (a size tier, a variant or a pre-release)"""
_DATE = re.compile(r"-(20\d\d)-?(\d\d)-?(\d\d)$")
_SIZE = re.compile(r"^(?:a?\d+(?:\.\d+)?[bmt]|\d+x\d+(?:\.\d+)?b)$")
_VERSION = re.compile(r"\d+(?:[a-z](?![a-z]))?")


@dataclass(frozen=True)
class Normalised:
    """A source name after the fixed rules: its key, and the dated snapshot dropped ("" when none)."""

    key: str
    snapshot: str = ""


CONFIG_SEPARATOR = " · "
"""between a model and its configuration in a row label (`model · user=..., judge=...`)"""


def normalise(source: str) -> Normalised:
    """The fixed rules (module docstring) applied to one source name; a configuration after
    the model (`model · configuration`) is kept as it is."""
    model, separator, configuration = source.partition(CONFIG_SEPARATOR)
    found = _normalise_model(model)
    return Normalised(found.key + separator + configuration, found.snapshot) if separator else found


def _normalise_model(source: str) -> Normalised:
    name = source.strip().split("/")[-1]
    name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii").lower()
    name = re.sub(r"[\s_:()\[\]]+", "-", name)
    words = [word for word in name.split("-") if word and word != "instruct"]
    name = "-".join(words).removesuffix("-it")
    date = _DATE.search(name)
    if date and len(name) > date.end() - date.start():
        return Normalised(name[: date.start()], "-".join(date.groups()))
    return Normalised(name)


@dataclass(frozen=True)
class Signature:
    """What must be equal for two names to be one model: sizes, version numbers, tier words."""

    sizes: tuple[str, ...]
    versions: tuple[str, ...]
    tiers: tuple[str, ...]

    def differences(self, other: Signature) -> list[str]:
        """What differs, e.g. ["sizes 8b vs 70b"]. Sizes and versions are compared where both
        names state them (a user's nickname may leave them out); tier words always."""
        found = []
        for what in ("sizes", "versions", "tiers"):
            mine, theirs = getattr(self, what), getattr(other, what)
            stated = what == "tiers" or (mine and theirs)
            if stated and mine != theirs:
                found.append(f"{what} {'/'.join(mine) or 'none'} vs {'/'.join(theirs) or 'none'}")
        return found


def signature(name: str) -> Signature:
    """The size, version and tier tokens of a (normalised) name."""
    words = normalise(name).key.split("-")
    sizes = sorted(word for word in words if _SIZE.match(word))
    rest = [word for word in words if not _SIZE.match(word)]
    versions = tuple(token.lstrip("0") or "0" for word in rest for token in _VERSION.findall(word))
    tiers = sorted({word for word in rest if word in TIER_WORDS})
    return Signature(tuple(sizes), versions, tuple(tiers))


def same_model_check(alias: str, canonical: str) -> None:
    """Raise when `alias` and `canonical` differ in size, version or tier (never one model)."""
    differences = signature(alias).differences(signature(canonical))
    if differences:
        raise StancelabError(
            f"'{alias}' cannot be an alias of '{canonical}': {'; '.join(differences)} "
            "(models that differ in size, version or tier are never merged)"
        )


class AliasEntry(BaseModel):
    """One model of the alias table: its canonical name, how to show it, and its aliases."""

    model_config = ConfigDict(extra="forbid")

    canonical: str = Field(pattern=r"^[a-z0-9]+([.\-][a-z0-9]+)*$")
    """the row name: lower case, as the fixed rules leave a name"""
    label: str = Field(min_length=1)
    """the papers' short name, e.g. "Llama 3.1 8B" """
    aliases: list[str] = []
    """other spellings (normalised by the fixed rules before they are compared)"""
    note: str = ""

    @field_validator("canonical")
    @classmethod
    def _normal(cls, value: str) -> str:
        if normalise(value) != Normalised(value):
            raise ValueError(
                f"'{value}' is not normalised (the fixed rules give '{normalise(value).key}')"
            )
        return value

    @field_validator("aliases")
    @classmethod
    def _same_model(cls, aliases: list[str], info: ValidationInfo) -> list[str]:
        canonical = info.data.get("canonical")
        for alias in aliases:
            if canonical is not None:
                try:
                    same_model_check(alias, canonical)
                except StancelabError as error:
                    raise ValueError(str(error)) from None
        return aliases


@dataclass(frozen=True)
class AliasTable:
    """Normalised alias -> canonical name, and each canonical name's entry."""

    canonical_of: Mapping[str, str]
    entries: Mapping[str, AliasEntry]
    sources: tuple[Path, ...] = ()

    def canonical(self, source: str) -> str:
        key = normalise(source).key
        return self.canonical_of.get(key, key)

    def label(self, canonical: str) -> str:
        entry = self.entries.get(canonical)
        return entry.label if entry else canonical


def bundled_alias_path() -> Path:
    return Path(str(resources.files("stancelab.core.data") / "model_key" / ALIAS_FILE))


def read_alias_file(path: Path) -> list[AliasEntry]:
    """A validated alias file (JSONL of AliasEntry); a duplicate canonical name is an error."""
    return load_jsonl(path, AliasEntry, id_of=lambda entry: entry.canonical)


def alias_table(*user_files: Path) -> AliasTable:
    """The bundled table, with each user file's entries over it (a user's alias wins)."""
    files = [bundled_alias_path(), *user_files]
    canonical_of: dict[str, str] = {}
    entries: dict[str, AliasEntry] = {}
    for path in files:
        for entry in read_alias_file(path):
            entries[entry.canonical] = entry
            for alias in entry.aliases:
                key = normalise(alias).key
                if key in entries and key != entry.canonical:
                    raise DataFileError(
                        path, None, "aliases", f"'{alias}' is itself a canonical name"
                    )
                canonical_of[key] = entry.canonical
    return AliasTable(canonical_of, entries, tuple(files))


@cache
def bundled_alias_table() -> AliasTable:
    return alias_table()


@dataclass(frozen=True)
class Row:
    """One model's row: its name, the source names (with the lens of each) it holds, and why
    names that the table would merge were kept apart ("" when none were)."""

    name: str
    label: str
    sources: tuple[tuple[str, str], ...]
    """(source name, lens) pairs, in order"""
    kept_apart: str = ""

    @property
    def merged(self) -> bool:
        return len({source for source, _ in self.sources}) > 1

    def sources_text(self) -> str:
        """e.g. "llama-3.1-8b (millstone), Llama-3.1-8B-Instruct (issuebench)"."""
        lenses: dict[str, list[str]] = defaultdict(list)
        for source, lens in self.sources:
            lenses[source].append(lens)
        return ", ".join(f"{source} ({', '.join(found)})" for source, found in lenses.items())


@dataclass
class ModelIdentity:
    """Source name -> row name, and each row's sources. A row keeps its source name unless
    two or more source names merge into it; then it takes the canonical name."""

    row_of: dict[str, str] = field(default_factory=dict)
    rows: dict[str, Row] = field(default_factory=dict)

    def name(self, source: str) -> str:
        return self.row_of.get(source, source)

    def merges(self) -> list[Row]:
        return [row for row in self.rows.values() if row.merged]

    def kept_apart(self) -> list[Row]:
        return [row for row in self.rows.values() if row.kept_apart]


def _kept_apart_reason(names: list[str], lenses: Mapping[str, list[str]]) -> str:
    """Why names of one canonical model stay apart: different snapshots, or one lens holds two."""
    snapshots = sorted({normalise(name).snapshot for name in names} - {""})
    if len(snapshots) > 1:
        return f"different dated snapshots ({', '.join(snapshots)})"
    by_lens: dict[str, list[str]] = defaultdict(list)
    for name in names:
        for lens in lenses[name]:
            by_lens[lens].append(name)
    crowded = {lens: found for lens, found in by_lens.items() if len(found) > 1}
    if crowded:
        lens, found = next(iter(crowded.items()))
        return f"{lens} measured {' and '.join(found)} separately"
    return ""


def resolve(sources: Iterable[tuple[str, str]], table: AliasTable | None = None) -> ModelIdentity:
    """The rows of (source name, lens) pairs under `table` (the bundled one by default)."""
    table = table or bundled_alias_table()
    lenses: dict[str, list[str]] = defaultdict(list)
    for source, lens in sources:
        if lens not in lenses[source]:
            lenses[source].append(lens)
    groups: dict[str, list[str]] = defaultdict(list)
    for source in lenses:
        groups[table.canonical(source)].append(source)
    identity = ModelIdentity()
    for canonical, names in groups.items():
        reason = _kept_apart_reason(names, lenses) if len(names) > 1 else ""
        if len(names) > 1 and not reason:
            pairs = tuple((name, lens) for name in names for lens in lenses[name])
            identity.rows[canonical] = Row(canonical, table.label(canonical), pairs)
            identity.row_of |= dict.fromkeys(names, canonical)
            continue
        for name in names:
            note = (
                f"not merged with {', '.join(n for n in names if n != name)}: {reason}"
                if reason
                else ""
            )
            identity.rows[name] = Row(
                name, table.label(canonical), tuple((name, lens) for lens in lenses[name]), note
            )
            identity.row_of[name] = name
    return identity


def alias_table_markdown(table: AliasTable | None = None) -> str:
    """The bundled table as the README lists it: every canonical name and what merges into it."""
    table = table or bundled_alias_table()
    lines = [
        "| row name | paper name | also merged (after the fixed rules) | note |",
        "| --- | --- | --- | --- |",
    ]
    for entry in sorted(table.entries.values(), key=lambda e: e.canonical):
        aliases = ", ".join(f"`{alias}`" for alias in entry.aliases) or "(fixed rules only)"
        lines.append(f"| `{entry.canonical}` | {entry.label} | {aliases} | {entry.note} |")
    return "\n".join(lines)
