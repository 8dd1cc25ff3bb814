"""Topics: schema, loaders (ours and the authors' `topics.jsonl`), and conversation samples."""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path
from typing import Literal

from inspect_ai.dataset import MemoryDataset, Sample
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from stancelab.core.data.files import load_jsonl
from stancelab.core.data.topics import TopicTag, load_topic_map
from stancelab.core.errors import DataFileError

Band = Literal["values", "science", "philosophy", "economy"]
Persona = Literal["neutral", "agree", "disagree"]
Category = Literal["direct", "indirect"]
PERSONAS: tuple[Persona, ...] = ("neutral", "agree", "disagree")
CATEGORIES: tuple[Category, ...] = ("direct", "indirect")
DEFAULT_TOPICS_FILE = "topics.jsonl"
AUTHORS_TOPIC_MAP = "topic_map_authors.csv"


class Topic(TopicTag):
    """A directional claim with short descriptions of the two sides; `shared_topic` and
    `orientation` (of the claim itself) when it is a topic of the shared key."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    label: str = Field(min_length=1)
    claim: str = Field(min_length=1)
    agree_description: str = Field(min_length=1)
    disagree_description: str = Field(min_length=1)
    band: Band | None = None
    locale: str = "en"
    label_en: str | None = None
    """the label in English where `label` is not (the authors' judge is shown it)"""

    def english_label(self) -> str | None:
        """The label in English: `label_en`, or the label itself in an English topic."""
        return self.label_en or (self.label if self.locale == "en" else None)


class _AuthorsSide(BaseModel):
    description: str = Field(min_length=1)


class _AuthorsSides(BaseModel):
    agree: _AuthorsSide
    disagree: _AuthorsSide


class AuthorsTopic(BaseModel):
    """One line of the authors' `data/topics.jsonl`."""

    topic_id: str = Field(min_length=1)
    topic_label: str = Field(min_length=1)
    topic_label_en: str | None = None
    claim_pt: str = Field(min_length=1)
    claim_en: str | None = None
    sides: _AuthorsSides

    def to_topic(self, tag: TopicTag | None = None) -> Topic:
        """Our schema, in the authors' language (pt-BR), as their runs used it, with the
        shared-topic tag of the mapping file."""
        return Topic(
            **(tag or TopicTag()).model_dump(),
            id=self.topic_id,
            label=self.topic_label,
            claim=self.claim_pt,
            agree_description=self.sides.agree.description,
            disagree_description=self.sides.disagree.description,
            locale="pt-BR",
            label_en=self.topic_label_en,
        )


def bundled_topics_path() -> Path:
    return Path(str(files("stancelab.llm_bias_bench") / "data" / DEFAULT_TOPICS_FILE))


def authors_topic_map_path() -> Path:
    return Path(str(files("stancelab.llm_bias_bench") / "data" / AUTHORS_TOPIC_MAP))


def authors_topic_tags() -> dict[str, TopicTag]:
    """The authors' topic id -> its shared-topic tag (hand-reviewed mapping file)."""
    return load_topic_map(authors_topic_map_path())


def _is_authors_format(path: Path) -> bool:
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if line.strip():
            try:
                return "topic_id" in json.loads(line)
            except json.JSONDecodeError:
                return False
    return False


def load_topics(path: Path | str | None = None) -> list[Topic]:
    """Load topics from our JSONL or the authors' `topics.jsonl` (detected by its fields;
    tagged with shared topics by `topic_map_authors.csv`)."""
    path = Path(path) if path else bundled_topics_path()
    if path.exists() and _is_authors_format(path):
        records = load_jsonl(path, AuthorsTopic, id_of=lambda topic: topic.topic_id)
        tags = authors_topic_tags()
        try:
            return [record.to_topic(tags.get(record.topic_id)) for record in records]
        except ValidationError as error:  # pragma: no cover - AuthorsTopic already checked
            raise DataFileError(path, None, None, str(error)) from error
    return load_jsonl(path, Topic, id_of=lambda topic: topic.id)


def conversation_samples(
    topics: list[Topic], categories: tuple[Category, ...] = CATEGORIES
) -> MemoryDataset:
    """One sample per (topic, category, persona); replicates are Inspect epochs."""
    samples = [
        Sample(
            id=f"{topic.id}__{category}__{persona}",
            input=topic.claim,
            metadata={
                "topic_id": topic.id,
                "label": topic.label,
                "label_en": topic.english_label() or "",
                "claim": topic.claim,
                "agree_description": topic.agree_description,
                "disagree_description": topic.disagree_description,
                "band": topic.band or "",
                "locale": topic.locale,
                "category": category,
                "persona": persona,
                **topic.tag(),
            },
        )
        for topic in topics
        for category in categories
        for persona in PERSONAS
    ]
    return MemoryDataset(samples, name="llm_bias_bench")
