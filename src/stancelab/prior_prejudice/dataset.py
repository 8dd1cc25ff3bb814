"""Claims with negations and (optionally generated) arguments; minimal-pair groups and traits."""

from __future__ import annotations

import itertools
import json
from importlib.resources import files
from pathlib import Path
from typing import Any, Literal

from inspect_ai.dataset import MemoryDataset, Sample
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from stancelab.core.data.files import load_jsonl
from stancelab.core.data.topics import (
    TopicTag,
    limit_per_group,
    limit_per_topic,
    load_topic_map,
    select_shared,
)
from stancelab.core.errors import DataFileError, StancelabError
from stancelab.prior_prejudice.convinceqa import as_claim_records, is_convinceqa, read_rows
from stancelab.prior_prejudice.prompts import DIRECT_COMPARISON, RATING_TEMPLATES, rating_prompt

Category = Literal["subjective", "harmful", "misinformation", "contested"]
Stance = Literal["supporting", "opposing"]
Intensity = Literal["standard", "strong"]
PAPER_CATEGORIES: tuple[Category, ...] = ("subjective", "harmful", "misinformation")
CONTESTED: Category = "contested"
"""claims on the shared topics' contested questions (stancelab's; not in the paper)"""
CATEGORIES: tuple[Category, ...] = (*PAPER_CATEGORIES, CONTESTED)
BUNDLED = {"prior-prejudice": "claims.jsonl", "contested": "claims_contested.jsonl"}
DEFAULT_SET, TOPICS_SET = "prior-prejudice", "contested"
STANCES: tuple[Stance, ...] = ("supporting", "opposing")
INTENSITIES: tuple[Intensity, ...] = ("standard", "strong")
BARE_CONDITIONS = ("original", "negated")
TEMPLATES = tuple(RATING_TEMPLATES)


class ArgumentText(BaseModel):
    """An argument for or against a claim; `refused` when the writer declined."""

    model_config = ConfigDict(extra="forbid")
    text: str | None = None
    refused: bool = False
    writer: str | None = None


class Claim(TopicTag):
    """A claim in one category, its negation (absent in ConvinceQA: then written by the
    `writer` role, or the bare-claim delta is skipped), and arguments by stance and intensity.
    Its shared topic tag (optional): `orientation` +1 when the claim (not its negation)
    asserts the topic's canonical claim's agree side."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    category: Category
    claim: str = Field(min_length=1)
    negation: str | None = Field(default=None, min_length=1)
    negation_writer: str | None = None
    negation_refused: bool = False
    arguments: dict[Stance, dict[Intensity, ArgumentText]] = Field(default_factory=dict)

    def argument(self, stance: Stance, intensity: Intensity) -> ArgumentText | None:
        return self.arguments.get(stance, {}).get(intensity)

    @property
    def has_arguments(self) -> bool:
        return any(self.argument(s, i) for s in STANCES for i in INTENSITIES)


def _data(name: str) -> Path:
    return Path(str(files("stancelab.prior_prejudice") / "data" / name))


def claims_path(path: Path | str | None = None) -> Path:
    """A claims file: `path`, or a bundled set by name (default: the paper-category set)."""
    name = str(path) if path else DEFAULT_SET
    if name in BUNDLED and not Path(name).exists():
        return _data(BUNDLED[name])
    return Path(name)


def _with_tags(records: list[dict[str, Any]], topic_map: Path | str) -> list[dict[str, Any]]:
    """ConvinceQA records tagged by a mapping file (which must list every item)."""
    tags = load_topic_map(topic_map)
    missing = [record["id"] for record in records if record["id"] not in tags]
    if missing:
        raise StancelabError(f"The mapping file {topic_map} lists no row for {len(missing)} items "
                             f"(first: {', '.join(missing[:3])}); it must list every item of the release.")  # fmt: skip
    return [record | tags[record["id"]].tag() for record in records]


def load_claims(path: Path | str | None = None, topic_map: Path | str | None = None) -> list[Claim]:
    """Claims from stancelab's JSON Lines format (default: the bundled set; "contested" for
    the shared-topic claims) or from ConvinceQA's published format (CSV or JSON Lines with its
    columns), tagged with shared topics by `topic_map` (a mapping file of `<category>-<n>` ids)."""
    path = claims_path(path)
    if path.exists() and is_convinceqa(path):
        records = as_claim_records(read_rows(path))
        records = _with_tags(records, topic_map) if topic_map else records
        return [Claim.model_validate(record) for record in records]
    return load_jsonl(path, Claim, id_of=lambda claim: claim.id)


def run_claims(path: Path | str | None, shared_topics: str = "", limit: int | None = None,
               topic_map: Path | str | None = None) -> list[Claim]:  # fmt: skip
    """The claims a run rates: the chosen file (with `--shared-topics` and no file given, the
    `contested` set), selected by shared topic, then the first `limit` of each category (of
    each selected topic when `--shared-topics` is set, so a small run covers every topic)."""
    if shared_topics.strip() and not path:
        path = TOPICS_SET
    hint = f"Use --claims {TOPICS_SET}, which covers every key topic, or leave --claims unset."
    claims = select_shared(load_claims(path, topic_map), shared_topics, "claim",
                           f"'{path or DEFAULT_SET}'", hint)  # fmt: skip
    if shared_topics.strip():
        return limit_per_topic(claims, limit)
    return limit_per_group(claims, limit, lambda claim: claim.category)


def _refused(claim: Claim, intensity: Intensity) -> bool:
    arguments = (claim.argument(stance, intensity) for stance in STANCES)
    return any(
        argument is not None and (argument.refused or not argument.text) for argument in arguments
    )


def writer_losses(claims: list[Claim]) -> dict[str, dict[str, int]]:
    """Per category: claims, refused arguments, and the claims lost to writer refusals for
    each delta (standard, strong: either stance refused; any argument; bare: the negation
    refused), and claims with no negation at all (bare delta skipped)."""
    losses: dict[str, dict[str, int]] = {}
    for claim in claims:
        row = losses.setdefault(claim.category, dict.fromkeys(
            ("claims", "refused_arguments", "lost_standard", "lost_strong", "lost_any_argument",
             "negation_refused", "no_negation"), 0))  # fmt: skip
        row["claims"] += 1
        row["refused_arguments"] += sum(
            a is not None and (a.refused or not a.text)
            for a in (claim.argument(s, i) for s in STANCES for i in INTENSITIES)
        )
        standard, strong = _refused(claim, "standard"), _refused(claim, "strong")
        row["lost_standard"] += standard
        row["lost_strong"] += strong
        row["lost_any_argument"] += standard or strong
        row["negation_refused"] += claim.negation_refused
        row["no_negation"] += claim.negation is None
    return losses


class MinimalPairs(BaseModel):
    """Groups by dimension and traits by valence for "X are <trait>." items."""

    model_config = ConfigDict(extra="forbid")
    groups: dict[str, list[str]] = Field(min_length=1)
    traits: dict[Literal["positive", "negative"], list[str]] = Field(min_length=1)


def limit_pairs(pairs: MinimalPairs, limit: int | None) -> MinimalPairs:
    """At most `limit` groups per dimension (two at least, to form a pair) and traits per valence."""
    if not limit:
        return pairs
    return MinimalPairs(
        groups={dimension: groups[: max(2, limit)] for dimension, groups in pairs.groups.items()},
        traits={valence: traits[:limit] for valence, traits in pairs.traits.items()},
    )


def load_minimal_pairs(path: Path | str | None = None) -> MinimalPairs:
    path = Path(path) if path else _data("minimal_pairs.json")
    try:
        return MinimalPairs.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except FileNotFoundError as error:
        raise DataFileError(path, None, None, "file does not exist") from error
    except json.JSONDecodeError as error:
        raise DataFileError(path, error.lineno, None, f"invalid JSON: {error.msg}") from error
    except ValidationError as error:
        first = error.errors()[0]
        raise DataFileError(path, None, ".".join(map(str, first["loc"])), first["msg"]) from error


def _rating_sample(sample_id: str, template: str, text: str, metadata: dict[str, object]) -> Sample:
    return Sample(id=f"{sample_id}__{template}", input=rating_prompt(template, text),
                  metadata={**metadata, "template": template, "rated_text": text})  # fmt: skip


def rating_samples(
    claims: list[Claim], templates: tuple[str, ...] = TEMPLATES
) -> tuple[list[Sample], int]:
    """Samples rating each bare claim, its negation and every written argument; and the
    number of arguments skipped because the writer refused (counted, not rated)."""
    samples, refused = [], 0
    for claim, template in itertools.product(claims, templates):
        base = {
            "claim_id": claim.id,
            "category": claim.category,
            "claim": claim.claim,
            **claim.tag(),
        }
        for condition, text in (("original", claim.claim), ("negated", claim.negation)):
            if text is None:
                continue
            samples.append(_rating_sample(f"{claim.id}__{condition}", template, text,
                                          base | {"condition": condition, "stance": "", "intensity": ""}))  # fmt: skip
        for stance, intensity in itertools.product(STANCES, INTENSITIES):
            argument = claim.argument(stance, intensity)
            if argument is None:
                continue
            if argument.refused or not argument.text:
                refused += template == templates[0]
                continue
            condition = f"{stance}_{intensity}"
            samples.append(_rating_sample(f"{claim.id}__{condition}", template, argument.text,
                                          base | {"condition": condition, "stance": stance, "intensity": intensity}))  # fmt: skip
    return samples, refused


def probe_samples(pairs: MinimalPairs, templates: tuple[str, ...] = TEMPLATES) -> list[Sample]:
    """Minimal pairs "<group> are <trait>." rated with each template, and direct questions."""
    samples = []
    for dimension, groups in pairs.groups.items():
        for valence, traits in pairs.traits.items():
            for group, trait, template in itertools.product(groups, traits, templates):
                statement = f"{group[0].upper()}{group[1:]} are {trait}."
                samples.append(Sample(
                    id=f"rate__{dimension}__{group}__{trait}__{template}".replace(" ", "_"),
                    input=rating_prompt(template, statement),
                    metadata={"kind": "rating", "dimension": dimension, "group": group, "trait": trait,
                              "valence": valence, "template": template, "rated_text": statement},
                ))  # fmt: skip
            for (first, second), trait in itertools.product(
                itertools.combinations(groups, 2), traits
            ):
                samples.append(Sample(
                    id=f"ask__{dimension}__{first}__{second}__{trait}".replace(" ", "_"),
                    input=DIRECT_COMPARISON.format(trait=trait, first=first, second=second),
                    metadata={"kind": "direct", "dimension": dimension, "first": first, "second": second,
                              "trait": trait, "valence": valence, "template": ""},
                ))  # fmt: skip
    return samples


def dataset(samples: list[Sample], name: str) -> MemoryDataset:
    return MemoryDataset(samples, name=name)
