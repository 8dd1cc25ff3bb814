"""Topics: schema, loaders (ours and the authors' `topics.jsonl`), the topics a run reads (a
file, or a set by name), and conversation samples."""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any, Literal

from inspect_ai.dataset import MemoryDataset, Sample
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from stancelab.core.data.authors import sha256
from stancelab.core.data.files import load_jsonl
from stancelab.core.data.topics import (
    TopicTag,
    limit_per_topic,
    load_topic_map,
    parse_shared_topics,
    select_shared,
)
from stancelab.core.errors import DataFileError, StancelabError
from stancelab.llm_bias_bench.authors import PAPER_TOPICS, TOPICS_FILE, paper_topics_text

Band = Literal["values", "science", "philosophy", "economy"]
Persona = Literal["neutral", "agree", "disagree"]
Category = Literal["direct", "indirect"]
PERSONAS: tuple[Persona, ...] = ("neutral", "agree", "disagree")
CATEGORIES: tuple[Category, ...] = ("direct", "indirect")
DEFAULT_TOPICS_FILE = "topics.jsonl"
AUTHORS_TOPIC_MAP = "topic_map_authors.csv"
TopicSet = Literal["authors", "stancelab", "file"]
"""Where a run's topics come from: `authors` the paper's (`authors.PAPER_TOPICS`, read at run
time, or a file with its bytes), `stancelab` the bundled set, `file` any other file."""
TOPIC_SETS: tuple[TopicSet, ...] = ("authors", "stancelab")  # the names --topics-file takes


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


def _tagged(records: list[AuthorsTopic]) -> list[Topic]:
    """The authors' topics in our schema, each with its shared-topic tag (the mapping file)."""
    tags = authors_topic_tags()
    return [record.to_topic(tags.get(record.topic_id)) for record in records]


def load_topics(path: Path | str | None = None) -> list[Topic]:
    """Load topics from our JSONL or the authors' `topics.jsonl` (detected by its fields;
    tagged with shared topics by `topic_map_authors.csv`)."""
    path = Path(path) if path else bundled_topics_path()
    if path.exists() and _is_authors_format(path):
        records = load_jsonl(path, AuthorsTopic, id_of=lambda topic: topic.topic_id)
        try:
            return _tagged(records)
        except ValidationError as error:  # pragma: no cover - AuthorsTopic already checked
            raise DataFileError(path, None, None, str(error)) from error
    return load_jsonl(path, Topic, id_of=lambda topic: topic.id)


def paper_topics(authors_repo: Path | str | None = None) -> list[Topic]:
    """The paper's 38 topics, read at run time from the authors' repository (never bundled:
    it has no licence), in their language and order, with their shared-topic tags."""
    lines = paper_topics_text(authors_repo).splitlines()
    return _tagged([AuthorsTopic.model_validate_json(line) for line in lines if line.strip()])


@dataclass(frozen=True)
class RunTopics:
    """The topics a run reads, and where they come from."""

    topics: list[Topic]
    source: TopicSet


def topics_name(topics_file: Path | str | None, prompts: str = "authors") -> str:
    """What `--topics-file` names (a file, or a set of `TOPIC_SETS`); unset, the paper's topics
    with the authors' prompts and stancelab's with stancelab's wording."""
    if topics_file:
        return str(topics_file)
    return "authors" if prompts == "authors" else "stancelab"


def is_named_set(name: str) -> bool:
    """Whether `name` is a set of `TOPIC_SETS` (a file of that name, if one exists, wins)."""
    return name in TOPIC_SETS and not Path(name).exists()


def run_topics(
    topics_file: Path | str | None = None,
    prompts: str = "authors",
    authors_repo: Path | str | None = None,
) -> RunTopics:
    """The topics of a run (`topics_name`): a file given is `authors` when it is byte for byte
    the paper's file (`authors.PAPER_TOPICS`), else `file`."""
    name = topics_name(topics_file, prompts)
    if is_named_set(name) and name == "authors":
        return RunTopics(paper_topics(authors_repo), "authors")
    if is_named_set(name):
        return RunTopics(load_topics(None), "stancelab")
    path = Path(name)
    paper = path.is_file() and sha256(path.read_bytes()) == PAPER_TOPICS.files[TOPICS_FILE]
    return RunTopics(load_topics(path), "authors" if paper else "file")


SET_PLACES = {"authors": "of the paper", "stancelab": "of stancelab's set", "file": "of the file"}


def chosen_topics(topics: RunTopics, shared_topics: str = "", limit: int | None = None) -> list[Topic]:  # fmt: skip
    """`--shared-topics`, then `--limit` (per selected shared topic with a selection); a
    selection the topics cover none of is one line naming the set that covers every one."""
    if parse_shared_topics(shared_topics) is None:
        return topics.topics[:limit] if limit else list(topics.topics)
    hint = "--topics-file stancelab covers every key topic." if topics.source != "stancelab" else ""
    kept = select_shared(topics.topics, shared_topics, "topic", SET_PLACES[topics.source], hint)
    return limit_per_topic(kept, limit)


def conversation_samples(
    topics: list[Topic], categories: tuple[Category, ...] = CATEGORIES, topic_set: str = ""
) -> MemoryDataset:
    """One sample per (topic, category, persona); replicates are Inspect epochs. `topic_set`
    (a `TopicSet`) is kept in each sample's metadata: the method's label says it."""
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
                "topic_set": topic_set,
                **topic.tag(),
            },
        )
        for topic in topics
        for category in categories
        for persona in PERSONAS
    ]
    return MemoryDataset(samples, name="llm_bias_bench")


def uncovered_selection(run: Any) -> str:
    """Why a `--shared-topics` run (`run.BiasBenchRun`) has no topics ("" when it has some, or
    selects none): `run all` then goes on, this probe not measured."""
    try:
        selection = parse_shared_topics(run.shared_topics)
        topics = run_topics(run.topics_file, run.prompts, run.authors_repo)
    except StancelabError:
        return ""  # not a matter of coverage: the run itself says why
    if selection is None:
        return ""
    try:
        chosen_topics(topics, run.shared_topics, run.limit)
    except StancelabError as error:
        return f"not measured: {error}"
    return ""
