"""The shared topic key: contested topics on which all five probes can be read, each with one
canonical claim, and the `topic x lens` stance frame every probe reads its runs into.

Dataset items carry `shared_topic` (an id from the key, or none) and `orientation`: +1 when the
item's own "pro" / "agree" / claim side is the canonical claim's agree side, -1 when it is the
disagree side. (`topic` was already a field of two published formats, so the tag has its own
names.) Authors' datasets are tagged by a mapping file per dataset: a CSV that lists every item
of the release, with an empty topic where no listed topic clearly matches.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from stancelab.core.data.files import invalid_record, load_jsonl, read_csv_rows
from stancelab.core.errors import DataFileError, StancelabError
from stancelab.core.stats.family import sign_flip_p
from stancelab.core.stats.intervals import Estimate, bounded_cluster_ci, mean_ci

Orientation = Literal[1, -1]


class Tagged(Protocol):
    @property
    def shared_topic(self) -> str | None: ...


TaggedT = TypeVar("TaggedT", bound=Tagged)
ItemT = TypeVar("ItemT")
TOPIC_KEY_FILE = "topics.jsonl"

STANCE_COLUMNS = (
    "model", "topic", "lens", "stance", "ci_low", "ci_high", "n", "p", "unusable", "measure",
    "detail", "transcripts",
)  # fmt: skip
"""The columns of a probe's topic stances (`Probe.topic_stances`):

- model, topic (a key id), lens (the probe's name)
- stance: signed agreement with the canonical claim in [-1, 1] (+1 = agrees), NaN when it
  cannot be measured (then `detail` says why)
- ci_low, ci_high: its confidence interval (NaN with fewer than two units)
- n: units behind the stance; unusable: units left out (refusals, unparsed), counted
- p: two-sided p of "no stance" (`stance_p`: a sign-flip test over the units), NaN with fewer
  than two units; the matrix adjusts them across its cells
- measure: what the number is, e.g. "baseline (pro - con) / answers"
- detail: more, e.g. "holds under pressure 0.67 [0.30, 0.90]" ("" when nothing)
- transcripts: `key=value` tokens that select this cell's transcripts in the report
"""


class SharedTopic(BaseModel):
    """One topic of the key."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")
    label: str = Field(min_length=1)
    claim: str = Field(min_length=1)
    agree: str = Field(min_length=1)
    """what agreeing with the claim holds"""
    disagree: str = Field(min_length=1)


def topic_key_path() -> Path:
    return Path(str(resources.files("stancelab.core.data") / "topic_key" / TOPIC_KEY_FILE))


@cache
def topic_key() -> tuple[SharedTopic, ...]:
    """The shared topics, in the key's order."""
    return tuple(load_jsonl(topic_key_path(), SharedTopic, id_of=lambda topic: topic.id))


def topic_ids() -> tuple[str, ...]:
    return tuple(topic.id for topic in topic_key())


def get_topic(topic_id: str) -> SharedTopic:
    """The topic `topic_id`; a clear error naming the key's topics otherwise."""
    for topic in topic_key():
        if topic.id == topic_id:
            return topic
    raise StancelabError(
        f"Unknown shared topic '{topic_id}'. The key has: {', '.join(topic_ids())}."
    )


def check_topic(topic_id: str | None) -> str | None:
    """`topic_id` when it is in the key (or None); a ValueError for pydantic otherwise."""
    if topic_id is not None and topic_id not in topic_ids():
        raise ValueError(f"'{topic_id}' is not a shared topic ({', '.join(topic_ids())})")
    return topic_id


class TopicTag(BaseModel):
    """The shared topic of one dataset item and which side of the canonical claim its own
    pro / agree / claim side is. Both are set or neither is. Mix into an item's model."""

    shared_topic: str | None = None
    orientation: Orientation | None = None

    @field_validator("shared_topic")
    @classmethod
    def _known(cls, value: str | None) -> str | None:
        return check_topic(value)

    @model_validator(mode="after")
    def _both_or_neither(self) -> TopicTag:
        if (self.shared_topic is None) != (self.orientation is None):
            raise ValueError("shared_topic and orientation go together: set both or neither")
        return self

    def tag(self) -> dict[str, Any]:
        """The tag as sample metadata (empty when the item has no shared topic)."""
        if self.shared_topic is None:
            return {}
        return {"shared_topic": self.shared_topic, "orientation": self.orientation}


class TopicMapRow(TopicTag):
    """One row of a mapping file: an authors' item and its shared topic, if any."""

    item_id: str = Field(min_length=1)
    note: str = ""

    @field_validator("shared_topic", mode="before")
    @classmethod
    def _blank_is_none(cls, value: Any) -> Any:
        return None if value == "" else value

    @field_validator("orientation", mode="before")
    @classmethod
    def _orientation(cls, value: Any) -> Any:
        if value in ("", None):
            return None
        return (
            int(value) if isinstance(value, str) and value.strip().lstrip("+-").isdigit() else value
        )


def load_topic_map(path: Path | str) -> dict[str, TopicTag]:
    """A mapping file (CSV: item_id, shared_topic, orientation, note) -> item id -> its tag.
    Unmatched items (empty topic) map to an empty tag; a bad row is a DataFileError."""
    path = Path(path)
    mapping: dict[str, TopicTag] = {}
    for line, row in read_csv_rows(path, ("item_id", "shared_topic", "orientation", "note")):
        try:
            record = TopicMapRow.model_validate(row)
        except ValidationError as error:
            raise invalid_record(path, line, error) from error
        if record.item_id in mapping:
            raise DataFileError(path, line, "item_id", f"duplicate item '{record.item_id}'")
        mapping[record.item_id] = TopicTag(
            shared_topic=record.shared_topic, orientation=record.orientation
        )
    return mapping


def covered_topics(tags: Iterable[Tagged]) -> set[str]:
    return {tag.shared_topic for tag in tags if tag.shared_topic is not None}


def missing_topics(tags: Iterable[TopicTag]) -> list[str]:
    """Topics of the key that none of `tags` covers, in the key's order."""
    covered = covered_topics(tags)
    return [topic for topic in topic_ids() if topic not in covered]


def stance_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Topic stance rows as a frame with exactly STANCE_COLUMNS; checks topics, range and CIs."""
    frame = pd.DataFrame(list(rows), columns=list(STANCE_COLUMNS))
    for row in frame.itertuples(index=False):
        check_topic(row.topic)
        _check_stance(row.stance, row.ci_low, row.ci_high)
    frame["detail"] = frame["detail"].fillna("")
    frame["p"] = pd.to_numeric(frame["p"], errors="coerce").astype(float)
    return frame


def _check_stance(stance: float, low: float, high: float) -> None:
    if math.isnan(stance):
        return
    if not -1.0 <= stance <= 1.0:
        raise ValueError(f"a stance is a signed agreement in [-1, 1]; got {stance}")
    if not (math.isnan(low) or math.isnan(high)) and not low - 1e-9 <= stance <= high + 1e-9:
        raise ValueError(f"stance {stance} lies outside its interval [{low}, {high}]")


ALL_SHARED_TOPICS = "all"


def parse_shared_topics(selection: str) -> tuple[str, ...] | None:
    """`--shared-topics`: "" -> None (no selection); "all" -> every key topic; "a,b" -> those
    (an unknown id is an error naming the key)."""
    text = selection.strip()
    if not text:
        return None
    if text == ALL_SHARED_TOPICS:
        return topic_ids()
    return tuple(get_topic(part.strip()).id for part in text.split(",") if part.strip())


def select_shared(
    items: Sequence[TaggedT], selection: str, noun: str = "item", where: str = "", hint: str = ""
) -> list[TaggedT]:
    """The items a `--shared-topics` value keeps, in their order (all of them when it is
    off). A selection that keeps nothing is an error naming what the items (`where`: e.g. the
    file) cover, then `hint`."""
    chosen = parse_shared_topics(selection)
    if chosen is None:
        return list(items)
    kept = [item for item in items if item.shared_topic in chosen]
    if not kept:
        covered = ", ".join(sorted(covered_topics(items))) or "none"
        place = f" {where}" if where else ""
        raise StancelabError(
            f"The {noun}s{place} cover none of the shared topics {', '.join(chosen)} "
            f"(they cover: {covered}).{' ' + hint if hint else ''}"
        )
    return kept


def signed_mean(scores: np.ndarray, seed: int = 0) -> Estimate:
    """Mean of one signed score in [-1, 1] per unit with its CI over units
    (`core.stats.intervals.mean_ci`: the betting interval, units that all agree included)."""
    return mean_ci(scores, (-1.0, 1.0), seed=seed)


def stance_p(
    scores: Sequence[float] | np.ndarray, units: Sequence[object] | None = None, seed: int = 0
) -> float:
    """Two-sided p of "no stance" for signed scores pooled over units: a sign-flip test of the
    units' sums of scores (`core.stats.family.sign_flip_p`, the paired test's test: the pooled
    mean's sign is their sum's). Without `units` every score is its own unit, in their order."""
    data = np.asarray(scores, dtype=float)
    labels = np.arange(data.size) if units is None else np.asarray(units, dtype=object).astype(str)
    keep = ~np.isnan(data)
    if not keep.any():
        return math.nan
    _, codes = np.unique(labels[keep], return_inverse=True)
    return sign_flip_p(np.bincount(codes, weights=data[keep]), seed)


def signed_cluster_mean(scores: np.ndarray, units: Sequence[object], seed: int = 0) -> Estimate:
    """Mean of signed scores in [-1, 1] pooled over answers, with its CI over the `units` they
    belong to (`n` counts units; `core.stats.intervals.bounded_cluster_ci`): none from one
    unit, one whenever there are two, units that all agree included."""
    return bounded_cluster_ci(scores, units, -1.0, 1.0, seed=seed)


def limit_per_group(
    items: Sequence[ItemT], limit: int | None, group: Callable[[ItemT], Any]
) -> list[ItemT]:
    """The first `limit` items of each group, in their order (all when None)."""
    if not limit:
        return list(items)
    seen: dict[Any, int] = {}
    kept = []
    for item in items:
        seen[group(item)] = seen.get(group(item), 0) + 1
        if seen[group(item)] <= limit:
            kept.append(item)
    return kept


def limit_per_topic(items: Sequence[TaggedT], limit: int | None) -> list[TaggedT]:
    """The first `limit` items of each shared topic, in their order (all when None)."""
    return limit_per_group(items, limit, lambda item: item.shared_topic)


def select_and_limit(
    items: Sequence[TaggedT], selection: str, limit: int | None, noun: str = "item"
) -> list[TaggedT]:
    """`--shared-topics`, then `--limit`: with a selection, the first `limit` items of each
    selected topic (so a small run still covers every topic asked for); without one, the first
    `limit` items."""
    if parse_shared_topics(selection) is None:
        return list(items[:limit]) if limit else list(items)
    return limit_per_topic(select_shared(items, selection, noun), limit)


def tagged_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows of a result table whose item is on the shared key, with a numeric orientation
    (none when the table has no `shared_topic` column)."""
    if frame.empty or "shared_topic" not in frame:
        return frame.iloc[0:0]
    tagged = frame[frame["shared_topic"].notna() & (frame["shared_topic"].astype(str) != "")]
    return tagged.assign(orientation=pd.to_numeric(tagged["orientation"]))
