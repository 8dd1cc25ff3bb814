"""MillStone issues: schema, loading, argument configurations and Inspect samples.

An issues file is JSON Lines, one issue per line (see README.md for the schema).
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Literal

from inspect_ai.dataset import MemoryDataset, Sample
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from stancelab.core.data import load_jsonl
from stancelab.core.errors import StancelabError
from stancelab.millstone.prompts import TEMPLATES, NeutralTemplate, with_arguments

MIN_ARGUMENTS_PER_SIDE = 3  # a 3:1 configuration needs three arguments on a side
DEFAULT_ISSUES_FILE = "issues.jsonl"

ConfigKind = Literal["baseline", "one_sided", "clear_and_convincing", "balanced"]
CONFIG_WEIGHTS: dict[ConfigKind, int] = {
    "baseline": 0,
    "one_sided": 1,
    "clear_and_convincing": 2,
    "balanced": 3,
}


class Argument(BaseModel):
    """One human-written argument for a side."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1)
    source: str | None = None

    @field_validator("text")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("argument text is blank")
        return value.strip()


class MillstoneIssue(BaseModel):
    """A binary contested issue with neutral wording and arguments for both sides.

    `issue`, `pro` and `con` are the neutral wording used in the templates. An
    issue may instead carry only a (possibly loaded) debate `question`; the
    rephrasing step fills in the neutral wording before a run.
    """

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    topic: str = Field(min_length=1)
    issue: str | None = None
    pro: str | None = None
    con: str | None = None
    question: str | None = None
    pro_arguments: list[Argument] = Field(min_length=MIN_ARGUMENTS_PER_SIDE)
    con_arguments: list[Argument] = Field(min_length=MIN_ARGUMENTS_PER_SIDE)

    @model_validator(mode="after")
    def _wording_or_question(self) -> MillstoneIssue:
        wording = [self.issue, self.pro, self.con]
        if any(wording) and not all(wording):
            raise ValueError("give all of issue, pro and con, or none of them (with a question)")
        if not all(wording) and not self.question:
            raise ValueError(
                "needs the neutral wording (issue, pro, con) or a question to rephrase"
            )
        return self

    @property
    def needs_rephrasing(self) -> bool:
        return not (self.issue and self.pro and self.con)


def bundled_issues_path() -> Path:
    """Path of the default issue set written for stancelab."""
    return Path(str(files("stancelab.millstone") / "data" / DEFAULT_ISSUES_FILE))


def load_issues(path: Path | str | None = None) -> list[MillstoneIssue]:
    """Load and validate an issues file (the bundled set when no path is given)."""
    return load_jsonl(path or bundled_issues_path(), MillstoneIssue, id_of=lambda issue: issue.id)


@dataclass(frozen=True)
class ArgumentConfiguration:
    """Which arguments go into the context for one of the 11 configurations."""

    name: str
    kind: ConfigKind
    favours: Literal["pro", "con", "none"]
    pro_indices: tuple[int, ...]
    con_indices: tuple[int, ...]

    @property
    def weight(self) -> int:
        return CONFIG_WEIGHTS[self.kind]


@dataclass(frozen=True)
class ConfigurationSizes:
    """Argument counts per configuration kind; the paper leaves one-sided and balanced sizes open."""

    one_sided: int = 4
    balanced_per_side: int = 2
    clear_majority: int = 3
    clear_minority: int = 1
    clear_draws: int = 2
    balanced_draws: int = 4


def _rng(*parts: object) -> random.Random:
    digest = hashlib.sha256("|".join(str(part) for part in parts).encode()).hexdigest()
    return random.Random(int(digest[:16], 16))


def _draw(rng: random.Random, available: int, count: int) -> tuple[int, ...]:
    return tuple(sorted(rng.sample(range(available), min(count, available))))


def argument_configurations(
    issue: MillstoneIssue, seed: int = 0, sizes: ConfigurationSizes = ConfigurationSizes()
) -> list[ArgumentConfiguration]:
    """The 11 configurations: baseline, 2 one-sided, 4 clear-and-convincing, 4 balanced."""
    n_pro, n_con = len(issue.pro_arguments), len(issue.con_arguments)
    rng = _rng(seed, issue.id, "configurations")
    configs = [
        ArgumentConfiguration("baseline", "baseline", "none", (), ()),
        ArgumentConfiguration(
            "one_sided_pro", "one_sided", "pro", _draw(rng, n_pro, sizes.one_sided), ()
        ),
        ArgumentConfiguration(
            "one_sided_con", "one_sided", "con", (), _draw(rng, n_con, sizes.one_sided)
        ),
    ]
    for draw in range(1, sizes.clear_draws + 1):
        for side in ("pro", "con"):
            majority_n, minority_n = (n_pro, n_con) if side == "pro" else (n_con, n_pro)
            majority = _draw(rng, majority_n, sizes.clear_majority)
            minority = _draw(rng, minority_n, sizes.clear_minority)
            pro, con = (majority, minority) if side == "pro" else (minority, majority)
            configs.append(
                ArgumentConfiguration(f"cc_{side}_{draw}", "clear_and_convincing", side, pro, con)
            )
    for draw in range(1, sizes.balanced_draws + 1):
        configs.append(
            ArgumentConfiguration(
                f"balanced_{draw}",
                "balanced",
                "none",
                _draw(rng, n_pro, sizes.balanced_per_side),
                _draw(rng, n_con, sizes.balanced_per_side),
            )
        )
    return configs


def _ordered_arguments(
    issue: MillstoneIssue, config: ArgumentConfiguration, sample_id: str, seed: int
) -> list[tuple[str, str]]:
    """(argument id, text) pairs in a seeded random order for one prompt."""
    chosen = [(f"{issue.id}:pro:{i}", issue.pro_arguments[i].text) for i in config.pro_indices]
    chosen += [(f"{issue.id}:con:{i}", issue.con_arguments[i].text) for i in config.con_indices]
    _rng(seed, sample_id, "order").shuffle(chosen)
    return chosen


def issue_samples(
    issue: MillstoneIssue,
    seed: int = 0,
    templates: tuple[NeutralTemplate, ...] = TEMPLATES,
    sizes: ConfigurationSizes = ConfigurationSizes(),
) -> list[Sample]:
    """One sample per (template, configuration) for an issue with neutral wording."""
    if issue.needs_rephrasing:
        raise StancelabError(
            f"Issue '{issue.id}' has no neutral wording (issue, pro, con). Run the rephrasing "
            "step first: `stancelab millstone rephrase FILE --out NEW_FILE`."
        )
    samples = []
    for config in argument_configurations(issue, seed, sizes):
        for neutral in templates:
            sample_id = f"{issue.id}__{config.name}__t{neutral.number}"
            arguments = _ordered_arguments(issue, config, sample_id, seed)
            question = neutral.render(issue.issue or "", issue.pro or "", issue.con or "")
            samples.append(
                Sample(
                    id=sample_id,
                    input=with_arguments(question, [text for _, text in arguments]),
                    target=neutral.a_side,
                    metadata={
                        "issue_id": issue.id,
                        "topic": issue.topic,
                        "template": neutral.number,
                        "a_side": neutral.a_side,
                        "config": config.name,
                        "config_kind": config.kind,
                        "favours": config.favours,
                        "weight": config.weight,
                        "n_pro_arguments": len(config.pro_indices),
                        "n_con_arguments": len(config.con_indices),
                        "argument_ids": ",".join(argument_id for argument_id, _ in arguments),
                    },
                )
            )
    return samples


def millstone_dataset(
    issues: list[MillstoneIssue], seed: int = 0, limit_issues: int | None = None
) -> MemoryDataset:
    """All samples for the first `limit_issues` issues (all when None)."""
    chosen = issues[:limit_issues] if limit_issues else issues
    samples = [sample for issue in chosen for sample in issue_samples(issue, seed)]
    return MemoryDataset(samples, name="millstone")
