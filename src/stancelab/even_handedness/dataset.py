"""The paired prompts: schema, loader (the bundled eval set or `--pairs-file`) and samples.

A pair's id is `<topic_name>.<s>.<t>`: its stance pair `s` (1, 2, 3 in order of appearance within
the topic name) and its template `t` within the stance pair. The mapping file lists stance pairs
(`<topic_name>.<s>`); a pairs file may carry its own `shared_topic` and `orientation` columns
(+1 when prompt a's side is the shared topic's canonical claim), which win over the mapping."""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

from inspect_ai.dataset import MemoryDataset, Sample
from pydantic import ConfigDict, Field, ValidationError, field_validator

from stancelab.core.data.files import invalid_record, read_csv_rows
from stancelab.core.data.topics import TopicTag, load_topic_map, select_and_limit
from stancelab.core.errors import DataFileError, StancelabError

COLUMNS = ("split", "main_category", "topic_name", "partisan", "template_category", "template",
           "stance_a", "stance_b", "prompt_a", "prompt_b", "prompt_a_group", "prompt_b_group")  # fmt: skip
SIDES = ("a", "b")


class Pair(TopicTag):
    """One row of the eval set: the same request for two opposite stances."""

    model_config = ConfigDict(extra="ignore")
    split: str = ""
    main_category: str = Field(min_length=1)
    topic_name: str = Field(min_length=1)
    partisan: bool
    template_category: str = Field(min_length=1)
    template: str = ""
    stance_a: str = Field(min_length=1)
    stance_b: str = Field(min_length=1)
    prompt_a: str = Field(min_length=1)
    prompt_b: str = Field(min_length=1)
    prompt_a_group: str = Field(min_length=1)
    prompt_b_group: str = Field(min_length=1)
    pair_id: str = ""
    stance_pair_id: str = ""
    row: int = 0
    """0-based position in its file (fixes which side a pair shows first)"""
    template_index: int = 1
    """1-based position of its template within its stance pair"""

    @field_validator("partisan", mode="before")
    @classmethod
    def _bool(cls, value: object) -> object:
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        return value

    @field_validator("shared_topic", "orientation", mode="before")
    @classmethod
    def _blank_is_none(cls, value: object) -> object:
        if value in ("", None):
            return None
        return (
            int(value) if isinstance(value, str) and value.strip().lstrip("+-").isdigit() else value
        )


def bundled_path(name: str) -> Path:
    return Path(str(files("stancelab.even_handedness") / "data" / name))


EVAL_SET = "eval_set.csv"
TOPIC_MAP = "topic_map_authors.csv"


def pairs_path(path: Path | str | None = None) -> Path:
    return Path(path) if path else bundled_path(EVAL_SET)


@cache
def _load(path: Path, topic_map: Path | None) -> tuple[Pair, ...]:
    mapping = load_topic_map(topic_map) if topic_map else {}
    pairs: list[Pair] = []
    stance_pairs: dict[tuple[str, str, str], str] = {}
    templates: dict[str, int] = {}
    seen: set[str] = set()
    for line, raw in read_csv_rows(path, COLUMNS):
        key = (raw["topic_name"], raw["stance_a"], raw["stance_b"])
        if key not in stance_pairs:
            count = sum(1 for other in stance_pairs if other[0] == key[0])
            stance_pairs[key] = f"{key[0]}.{count + 1}"
        stance_pair = stance_pairs[key]
        templates[stance_pair] = templates.get(stance_pair, 0) + 1
        pair_id = f"{stance_pair}.{templates[stance_pair]}"
        row = {k: v for k, v in raw.items() if k is not None}
        if not (row.get("shared_topic") or "").strip() and stance_pair in mapping:
            row |= mapping[stance_pair].model_dump()
        try:
            pair = Pair.model_validate(
                row
                | {
                    "pair_id": pair_id,
                    "stance_pair_id": stance_pair,
                    "row": len(pairs),
                    "template_index": templates[stance_pair],
                }
            )
        except ValidationError as error:
            raise invalid_record(path, line, error) from error
        if pair_id in seen:
            raise DataFileError(path, line, "topic_name", f"duplicate pair '{pair_id}'")
        seen.add(pair_id)
        pairs.append(pair)
    return tuple(pairs)


def load_pairs(
    path: Path | str | None = None, topic_map_file: Path | str | None = None
) -> list[Pair]:
    """Every pair of a file in the eval set's columns (default: the bundled 1,350), tagged with
    shared topics from `topic_map_file` (default: the bundled mapping, for the bundled set)."""
    source = pairs_path(path)
    mapping = (
        Path(topic_map_file) if topic_map_file else (bundled_path(TOPIC_MAP) if not path else None)
    )
    return list(_load(source.resolve(), mapping.resolve() if mapping else None))


def run_pairs(path: Path | str | None, shared_topics: str = "", limit: int | None = None,
              topic_map_file: Path | str | None = None) -> list[Pair]:  # fmt: skip
    """The pairs a run uses, spread over topics: each stance pair's first template, then each
    one's second, and so on (so `--limit 2` covers two topics); selected by shared topic
    (`--shared-topics`), then the first `limit` (of each selected topic)."""
    spread = sorted(
        load_pairs(path, topic_map_file), key=lambda pair: (pair.template_index, pair.row)
    )
    return select_and_limit(spread, shared_topics, limit, "pair")


def shown_first(pair: Pair, seed: int = 0) -> str:
    """Which side the grader sees as dialogue_a: a and b alternate down the file (shifted by
    the seed), so each is first for half the pairs."""
    return SIDES[(pair.row + seed) % 2]


def pair_samples(pairs: list[Pair], seed: int = 0) -> MemoryDataset:
    """One sample per pair; the prompts and groups travel in metadata."""
    return MemoryDataset(
        [
            Sample(
                id=pair.pair_id,
                input=pair.prompt_a,
                metadata={
                    **pair.model_dump(exclude={"shared_topic", "orientation"}),
                    "shown_first": shown_first(pair, seed),
                    **pair.tag(),
                },
            )
            for pair in pairs
        ],
        name="even_handedness",
    )


def uncovered_selection(run: Any) -> str:
    """Why a `--shared-topics` run (`run.EvenHandednessRun`) has no pairs ("" when it has some,
    or selects none)."""
    if not run.shared_topics.strip():
        return ""
    try:
        run_pairs(run.pairs_file, run.shared_topics, run.limit, run.topic_map_file)
    except StancelabError as error:
        return f"not measured: {error}"
    return ""
