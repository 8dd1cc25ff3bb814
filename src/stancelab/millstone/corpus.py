"""The authors' corpus: a folder of per-issue JSON files, as the MillStone authors
released their ProCon-derived data.

Each file holds `question` (the debate question), `pros` and `cons` (argument
passages that cite sources as `[n]`), `sources` (`"[n]"` -> citation text) and
`paraphrases` (the six neutral prompts, each with an `orientation`). The six
paraphrases become the six prompts. Their `orientation` labels are not reliable
(many files label paraphrase 4 "con", or all six "pro"), so the side "A" stands for
follows the template number: 1-4 in favour, 5-6 against (appendix B). Where a
paraphrase says outright "Output A if you support the position in favor/against",
that wording decides; `orientation_conflicts` lists where it contradicts the number.

The files carry no topic either: `data/topic_map_authors.csv` (one row per issue of the
release, reviewed by hand) gives the issues that clearly ask a shared topic's question their
`shared_topic` and `orientation`.
"""

from __future__ import annotations

import json
import re
from functools import cache
from importlib.resources import files
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from stancelab.core.data.files import invalid_record, load_jsonl, read_csv_rows
from stancelab.core.data.topics import TopicTag, load_topic_map
from stancelab.core.errors import DataFileError
from stancelab.millstone.dataset import Argument, IssuePrompt, MillstoneIssue, bundled_issues_path
from stancelab.millstone.prompts import TEMPLATES, Side

UNLABELLED_TOPIC = "unlabelled"  # the authors' files carry no topic label
AUTHORS_TOPIC_MAP = "topic_map_authors.csv"
_CITATION = re.compile(r"\[\d+\]")
_EXPLICIT_A = re.compile(r"Output A if you support the position (in favou?r|against)", re.I)


class AuthorsParaphrase(BaseModel):
    """One neutral paraphrase and the orientation the authors' file gives it."""

    model_config = ConfigDict(extra="ignore")

    question: str = Field(min_length=1)
    orientation: str | None = None


class AuthorsIssueFile(BaseModel):
    """One per-issue JSON file of the authors' corpus."""

    model_config = ConfigDict(extra="ignore")

    question: str = Field(min_length=1)
    pros: list[str] = Field(min_length=1)
    cons: list[str] = Field(min_length=1)
    sources: dict[str, str] = Field(default_factory=dict)
    paraphrases: list[AuthorsParaphrase] = Field(min_length=6, max_length=6)


def authors_topic_map_path() -> Path:
    return Path(str(files("stancelab.millstone") / "data" / AUTHORS_TOPIC_MAP))


@cache
def authors_topic_map() -> dict[str, TopicTag]:
    """Issue id (as the authors' result files spell it) -> its shared topic tag (empty tag
    for an issue that matches no shared topic)."""
    return load_topic_map(authors_topic_map_path())


FIGURE_4_TOPIC_MAP = "topic_map_figure4.csv"
FIGURE_4_UNMAPPED = "Other"


class Figure4Topic(BaseModel):
    """One issue's topic in the paper's Figure 4 (ProCon's high-level taxonomy)."""

    model_config = ConfigDict(extra="forbid")

    issue_id: str = Field(min_length=1)
    topic: str = Field(min_length=1)


@cache
def figure_4_topics() -> dict[str, str]:
    """Issue id -> its Figure 4 topic, as the authors' notebook assigns it
    (`visualize_paper_figures.ipynb`): an issue listed under several topics keeps the last
    one, and ids are matched as the notebook spells them, so "artificial-intelligence-AI"
    matches no (lower-case) result id and that issue falls under "Other" there, as here."""
    path = Path(str(files("stancelab.millstone") / "data" / FIGURE_4_TOPIC_MAP))
    topics: dict[str, str] = {}
    for line, raw in read_csv_rows(path, ("issue_id", "topic")):
        try:
            row = Figure4Topic.model_validate(raw)
        except ValidationError as error:
            raise invalid_record(path, line, error) from error
        topics[row.issue_id] = row.topic
    return topics


def figure_4_topic(issue_id: str) -> str:
    return figure_4_topics().get(issue_id, FIGURE_4_UNMAPPED)


def authors_tags() -> dict[str, tuple[str, int]]:
    """Issue id -> (shared topic, orientation) for the authors' issues that have one."""
    return {
        issue_id: (tag.shared_topic, int(tag.orientation))
        for issue_id, tag in authors_topic_map().items()
        if tag.shared_topic is not None and tag.orientation is not None
    }


def issue_id_of(path: Path) -> str:
    """The issue id the authors' result files use: the file name, lower-cased."""
    return path.stem.lower()


def paraphrase_side(number: int, text: str) -> Side:
    """The side "A" stands for in paraphrase `number` (1-6): stated in the wording where
    the wording states it, else the template's own orientation."""
    explicit = _EXPLICIT_A.search(text)
    if explicit:
        return "con" if explicit.group(1).lower() == "against" else "pro"
    return TEMPLATES[number - 1].a_side


def orientation_conflicts(path: Path) -> list[int]:
    """Paraphrase numbers whose `orientation` label in the file disagrees with the side used."""
    record = _read(path)
    return [
        number
        for number, paraphrase in enumerate(record.paraphrases, start=1)
        if paraphrase.orientation != paraphrase_side(number, paraphrase.question)
    ]


def cited_sources(text: str, sources: dict[str, str]) -> list[str]:
    """`[n] citation` for each source an argument cites, in order of first citation."""
    markers = dict.fromkeys(_CITATION.findall(text))
    return [f"{marker} {sources[marker]}" for marker in markers if marker in sources]


def _read(path: Path) -> AuthorsIssueFile:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as error:
        raise DataFileError(path, None, None, "file is not valid UTF-8") from error
    except json.JSONDecodeError as error:
        raise DataFileError(path, error.lineno, None, f"invalid JSON: {error.msg}") from error
    if not isinstance(raw, dict):
        raise DataFileError(path, 1, None, "the file must hold one JSON object")
    try:
        return AuthorsIssueFile.model_validate(raw)
    except ValidationError as error:
        raise invalid_record(path, None, error) from error


def _arguments(texts: list[str], sources: dict[str, str]) -> list[Argument]:
    return [
        Argument(text=text.strip(), citations=cited_sources(text, sources))
        for text in texts
        if text.strip()
    ]


def load_authors_issue(path: Path) -> MillstoneIssue:
    """One issue from an authors' per-issue JSON file."""
    record = _read(path)
    tag = authors_topic_map().get(issue_id_of(path), TopicTag())
    prompts = [
        IssuePrompt(
            text=paraphrase.question.strip(), a_side=paraphrase_side(number, paraphrase.question)
        )
        for number, paraphrase in enumerate(record.paraphrases, start=1)
    ]
    try:
        return MillstoneIssue(
            id=issue_id_of(path),
            topic=UNLABELLED_TOPIC,
            question=record.question,
            prompts=prompts,
            pro_arguments=_arguments(record.pros, record.sources),
            con_arguments=_arguments(record.cons, record.sources),
            shared_topic=tag.shared_topic,
            orientation=tag.orientation,
        )
    except ValidationError as error:
        raise invalid_record(path, None, error) from error


def load_authors_corpus(folder: Path) -> list[MillstoneIssue]:
    """Every `*.json` issue file in `folder`, sorted by issue id."""
    paths = sorted(folder.glob("*.json"), key=issue_id_of)
    if not paths:
        raise DataFileError(folder, None, None, "the folder holds no *.json issue files")
    issues = [load_authors_issue(path) for path in paths]
    seen: dict[str, Path] = {}
    for issue, path in zip(issues, paths, strict=True):
        if issue.id in seen:
            raise DataFileError(
                path, None, "id", f"duplicate issue id '{issue.id}' (also {seen[issue.id].name})"
            )
        seen[issue.id] = path
    return issues


def load_issues(path: Path | str | None = None) -> list[MillstoneIssue]:
    """Load and validate an issues file, or a folder of the authors' per-issue JSON files
    (the bundled set when no path is given)."""
    if path is not None and Path(path).is_dir():
        return load_authors_corpus(Path(path))
    return load_jsonl(path or bundled_issues_path(), MillstoneIssue, id_of=lambda issue: issue.id)
