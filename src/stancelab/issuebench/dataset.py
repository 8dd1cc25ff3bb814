"""Issues, templates and the lazily generated prompt set.

Our JSONL formats and the authors' CSVs both load here, validated row by row: a bad
row fails the whole file with its path, line and field. Prompts (issues x framings x
templates; 2.49M for the full authors' set) are generated lazily, never held whole.
"""

from __future__ import annotations

import hashlib
import random
import re
import string
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from stancelab.core.data import load_jsonl, read_csv_rows
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


class Issue(BaseModel):
    """An issue phrase in its neutral, pro and con framings."""

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
            raise DataFileError(path, line, "id", f"duplicate id '{record_id}' (first seen on line {first_line[record_id]})")
        first_line[record_id] = line


def _validated(path: Path, line: int, build: type[BaseModel], **values: str) -> BaseModel:
    try:
        return build.model_validate(values)
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(str(p) for p in first.get("loc", ())) or None
        raise DataFileError(path, line, field, first.get("msg", "invalid")) from error


def load_issues(path: Path | str | None = None) -> list[Issue]:
    """Issues from our JSONL or the authors' `issues.csv` (placeholder clusters dropped)."""
    path = Path(path) if path else _data_path("issues.jsonl")
    if path.suffix != ".csv":
        return load_jsonl(path, Issue, id_of=lambda issue: issue.id)
    issues, lines = [], []
    for line, row in _csv_rows(path, ("topic_id", "topic_neutral", "topic_pro", "topic_con")):
        if row["topic_neutral"] in AUTHORS_PLACEHOLDER_TOPICS:
            continue
        issues.append(_validated(path, line, Issue, id=row["topic_id"], neutral=row["topic_neutral"],
                                 pro=row["topic_pro"], con=row["topic_con"]))  # fmt: skip
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


def clean_template(text: str) -> str:
    """Lower-case, no punctuation or line breaks, single spaces (used only for matching)."""
    text = text.lower().translate(str.maketrans("", "", string.punctuation))
    return re.sub(r"\s+", " ", text).strip()


def deduplicate_templates(templates: list[Template], max_edit_distance: int = 9) -> list[Template]:
    """Drop templates whose cleaned text repeats, then near-duplicates within
    `max_edit_distance` Levenshtein edits of an earlier kept one (first occurrence wins)."""
    import numpy as np
    from rapidfuzz import process
    from rapidfuzz.distance import Levenshtein

    seen: set[str] = set()
    unique: list[tuple[str, Template]] = []
    for template in templates:
        cleaned = clean_template(template.text)
        if cleaned not in seen:
            seen.add(cleaned)
            unique.append((cleaned, template))
    if max_edit_distance <= 0:
        return [template for _, template in unique]
    texts = [cleaned for cleaned, _ in unique]
    dropped = np.zeros(len(texts), dtype=bool)
    kept: list[Template] = []
    for index, (cleaned, template) in enumerate(unique):
        if dropped[index]:
            continue
        kept.append(template)
        distances = process.cdist([cleaned], texts[index + 1 :], scorer=Levenshtein.distance,
                                  score_cutoff=max_edit_distance)[0]  # fmt: skip
        dropped[index + 1 :] |= distances <= max_edit_distance
    return kept


def sample_templates(templates: list[Template], n: int | None, seed: int = 0) -> list[Template]:
    """A seeded random sample of `n` templates, in their original order (all when n is None)."""
    if n is None or n >= len(templates):
        return list(templates)
    digest = hashlib.sha256(f"{seed}|templates".encode()).hexdigest()
    chosen = set(random.Random(int(digest[:16], 16)).sample(range(len(templates)), n))
    return [template for index, template in enumerate(templates) if index in chosen]
