"""Issues, templates and the lazily generated prompt set.

Our JSONL formats and the authors' CSVs both load here, validated row by row: a bad
row fails the whole file with its path, line and field. Prompts (issues x framings x
templates; 2.49M for the full authors' set) are generated lazily, never held whole.
"""

from __future__ import annotations

import hashlib
import random
import string
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any, Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from stancelab.core.data.files import invalid_record, load_jsonl, read_csv_rows
from stancelab.core.data.topics import TopicTag, load_topic_map
from stancelab.core.errors import DataFileError

Framing = Literal["neutral", "pro", "con"]
FRAMINGS: tuple[Framing, ...] = ("neutral", "pro", "con")
OUR_PLACEHOLDER = "[ISSUE]"
AUTHORS_PLACEHOLDER = "X"  # the authors' templates hold exactly one capital X
AUTHORS_PLACEHOLDER_TOPICS = {
    "SPAM",
    "FORMAT NOT TOPIC",
    "TOXIC / UNSAFE",
    "FORECAST",
    "UNASSIGNED CLUSTER",
}


AUTHORS_TOPIC_MAP = "topic_map_authors.csv"


class Issue(TopicTag):
    """An issue phrase in its neutral, pro and con framings; `shared_topic` and `orientation`
    (of the `pro` phrase) when it is a topic of the shared key."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    neutral: str = Field(min_length=1)
    pro: str = Field(min_length=1)
    con: str = Field(min_length=1)

    def phrase(self, framing: Framing) -> str:
        return {"neutral": self.neutral, "pro": self.pro, "con": self.con}[framing]


class Template(BaseModel):
    """A writing-assistance prompt with one `[ISSUE]` placeholder."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    text: str = Field(min_length=1)
    placeholder: str = OUR_PLACEHOLDER

    @model_validator(mode="after")
    def _one_placeholder(self) -> Template:
        count = self.text.count(self.placeholder)
        if count != 1:
            raise ValueError(
                f"template must hold the placeholder {self.placeholder!r} exactly once, found {count}"
            )
        return self

    def fill(self, phrase: str) -> str:
        return self.text.replace(self.placeholder, phrase, 1)


def _data_path(name: str) -> Path:
    return Path(str(files("stancelab.issuebench") / "data" / name))


def _csv_rows(path: Path, required: Iterable[str]) -> Iterator[tuple[int, dict[str, str]]]:
    """(line number, row) pairs; bad files fail with file, line and field named."""
    return read_csv_rows(path, required)


def _unique(path: Path, records: list[BaseModel], lines: list[int]) -> None:
    first_line: dict[str, int] = {}
    for record, line in zip(records, lines, strict=True):
        record_id = record.id  # type: ignore[attr-defined]
        if record_id in first_line:
            raise DataFileError(
                path,
                line,
                "id",
                f"duplicate id '{record_id}' (first seen on line {first_line[record_id]})",
            )
        first_line[record_id] = line


def _validated(path: Path, line: int, build: type[BaseModel], **values: Any) -> BaseModel:
    try:
        return build.model_validate(values)
    except ValidationError as error:
        raise invalid_record(path, line, error) from error


def authors_topic_map_path() -> Path:
    return _data_path(AUTHORS_TOPIC_MAP)


def authors_issue_tags() -> dict[str, TopicTag]:
    """The authors' issue id -> its shared-topic tag (hand-reviewed mapping file)."""
    return load_topic_map(authors_topic_map_path())


def with_topic_tags(frame: pd.DataFrame, tags: dict[str, TopicTag]) -> pd.DataFrame:
    """`frame` (with an `issue_id` column) plus `shared_topic` and `orientation` by issue."""
    known = {issue: tag for issue, tag in tags.items() if tag.shared_topic is not None}
    issues = frame["issue_id"].astype(str)
    return frame.assign(
        shared_topic=issues.map(lambda i: known[i].shared_topic if i in known else None),
        orientation=issues.map(lambda i: known[i].orientation if i in known else None),
    )


def load_issues(path: Path | str | None = None) -> list[Issue]:
    """Issues from our JSONL or the authors' `issues.csv` (placeholder clusters dropped; tagged
    with shared topics by `topic_map_authors.csv`)."""
    path = Path(path) if path else _data_path("issues.jsonl")
    if path.suffix != ".csv":
        return load_jsonl(path, Issue, id_of=lambda issue: issue.id)
    issues, lines = [], []
    tags = authors_issue_tags()
    for line, row in _csv_rows(path, ("topic_id", "topic_neutral", "topic_pro", "topic_con")):
        if row["topic_neutral"] in AUTHORS_PLACEHOLDER_TOPICS:
            continue
        tag = tags.get(row["topic_id"], TopicTag()).model_dump()
        issues.append(_validated(path, line, Issue, id=row["topic_id"], neutral=row["topic_neutral"],
                                 pro=row["topic_pro"], con=row["topic_con"], **tag))  # fmt: skip
        lines.append(line)
    _unique(path, issues, lines)
    return issues  # type: ignore[return-value]


def load_templates(path: Path | str | None = None) -> list[Template]:
    """Templates from our JSONL (`[ISSUE]`) or the authors' CSVs (`annot1_template`, `X`)."""
    path = Path(path) if path else _data_path("templates.jsonl")
    if path.suffix != ".csv":
        return load_jsonl(path, Template, id_of=lambda template: template.id)
    templates, lines = [], []
    for line, row in _csv_rows(path, ("id", "annot1_template")):
        templates.append(_validated(path, line, Template, id=row["id"], text=row["annot1_template"],
                                    placeholder=AUTHORS_PLACEHOLDER))  # fmt: skip
        lines.append(line)
    _unique(path, templates, lines)
    return templates  # type: ignore[return-value]


@dataclass(frozen=True)
class Prompt:
    """One IssueBench prompt: a template filled with an issue in one framing."""

    id: str
    issue_id: str
    framing: Framing
    template_id: str
    text: str


def prompt_id(template_id: str, issue_id: str, framing: str) -> str:
    """Deterministic id, as the authors' `template.topic-framing`."""
    return f"{template_id}.{issue_id}-{framing}"


def iter_prompts(
    issues: Iterable[Issue], templates: list[Template], framings: Iterable[Framing] = FRAMINGS
) -> Iterator[Prompt]:
    """Every (issue, framing, template) prompt, generated one at a time."""
    chosen = tuple(framings)
    for issue in issues:
        for framing in chosen:
            phrase = issue.phrase(framing)
            for template in templates:
                yield Prompt(prompt_id(template.id, issue.id, framing), issue.id, framing,
                             template.id, template.fill(phrase))  # fmt: skip


def count_prompts(n_issues: int, n_templates: int, n_framings: int = len(FRAMINGS)) -> int:
    return n_issues * n_framings * n_templates


# ---------------------------------------------------------------- template selection (appendix G)


_PUNCTUATION_TO_SPACE = str.maketrans(string.punctuation, " " * len(string.punctuation))
NEAR_DUPLICATE_RATIO = 80  # appendix G; the authors' fuzzy-matching threshold


def clean_template(text: str) -> str:
    """Lower-case, punctuation and line breaks turned into spaces, whitespace collapsed
    (appendix G, step 1); used only for matching, the kept templates are not cleaned."""
    return " ".join(text.lower().translate(_PUNCTUATION_TO_SPACE).split())


def _drop_exact_duplicates(templates: list[Template]) -> list[tuple[str, Template]]:
    seen: set[str] = set()
    unique: list[tuple[str, Template]] = []
    for template in templates:
        cleaned = clean_template(template.text)
        if cleaned not in seen:
            seen.add(cleaned)
            unique.append((cleaned, template))
    return unique


def deduplicate_templates(
    templates: list[Template], min_ratio: float | None = NEAR_DUPLICATE_RATIO
) -> list[Template]:
    """Appendix G: drop templates whose cleaned text repeats (step 2), then near-duplicates
    (step 3): a template whose similarity ratio to an earlier kept one is `min_ratio` or more.

    The ratio is the normalised Levenshtein (insertion/deletion) similarity, 0-100, that the
    authors' fuzzy matcher reports rounded to a whole number; so "80 or more" means a raw
    ratio of 79.5 or more. First occurrence wins. `min_ratio=None` stops after step 2.
    On the authors' 3,916 templates this keeps 3,591 and then 2,475, as the paper says.
    """
    import numpy as np
    from rapidfuzz import fuzz, process

    unique = _drop_exact_duplicates(templates)
    if min_ratio is None:
        return [template for _, template in unique]
    cutoff = min_ratio - 0.5
    texts = [cleaned for cleaned, _ in unique]
    dropped = np.zeros(len(texts), dtype=bool)
    kept: list[Template] = []
    for index, (cleaned, template) in enumerate(unique):
        if dropped[index]:
            continue
        kept.append(template)
        ratios = process.cdist(
            [cleaned], texts[index + 1 :], scorer=fuzz.ratio, score_cutoff=cutoff
        )[0]
        dropped[index + 1 :] |= ratios >= cutoff
    return kept


def sample_templates(templates: list[Template], n: int | None, seed: int = 0) -> list[Template]:
    """A seeded random sample of `n` templates, in their original order (all when n is None)."""
    if n is None or n >= len(templates):
        return list(templates)
    digest = hashlib.sha256(f"{seed}|templates".encode()).hexdigest()
    chosen = set(random.Random(int(digest[:16], 16)).sample(range(len(templates)), n))
    return [template for index, template in enumerate(templates) if index in chosen]


AUTHORS_SAMPLE_SIZE = 1000
AUTHORS_SAMPLE_SEED = 42


def authors_sample(
    templates: list[Template], n: int = AUTHORS_SAMPLE_SIZE, seed: int = AUTHORS_SAMPLE_SEED
) -> list[Template]:
    """Appendix G, step 4, drawn as the authors drew it: `n` templates without replacement from
    numpy's legacy generator seeded with `seed`, in drawing order (what pandas' `sample(n,
    random_state=seed)` does). After `deduplicate_templates` on the authors' 3,916 templates
    this gives exactly their released 1,000-template sample."""
    import numpy as np

    if n >= len(templates):
        return list(templates)
    chosen = np.random.RandomState(seed).choice(len(templates), size=n, replace=False)
    return [templates[int(index)] for index in chosen]
