"""The wide test data: ten units on each of three shared topics for every lens with a units
file, written from one description.

A lens's interval and its test of "no stance" are over its units (topics, issues, statements,
claims, stance pairs), so a scripted stance on a shared topic needs enough of them for the
matrix to call its direction (issue 36): a unanimous cell's sign-flip p is 2 / 2^n at best,
and the matrix keeps a direction only where Holm across its tested cells rejects, so over
the 18 cells of three topics and six lenses a cell needs 18 x 2 / 2^n < 0.05, that is n >= 10
(nine units give 0.070); its interval (betting, or Clopper-Pearson for +-1 units: [0.38, 1]
from ten) then excludes 0 too. A lens's wide file holds its bundled units on WIDE_TOPICS and
the ones the description (tests/wide_data.toml) adds, both orientations, five per topic, and a
restated copy of each (its texts end in RESTATED, its id in -restated: another unit on the same
side): `write_wide(lens, folder)` writes it in the lens's format, and the stance scripts
recognise its units through `wide_units(lens, unit)`.
"""

from __future__ import annotations

import csv
import json
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

DESCRIPTION = Path(__file__).with_name("wide_data.toml")
WIDE_TOPICS = ("gun-control", "minimum-wage", "abortion")
UNITS_PER_TOPIC = 10
"""the fewest units whose unanimous direction survives Holm over 18 cells (see the module)"""
RESTATED = " (restated)"
Row = dict[str, object]
UnitT = TypeVar("UnitT", bound=BaseModel)


@dataclass(frozen=True)
class WideSet:
    """One lens's wide file: its name, the run option that takes it, the lens's bundled data
    file whose units on WIDE_TOPICS it starts with (None: none), and the builder of a row from
    one of the units the description (DESCRIPTION) adds."""

    file_name: str
    option: str
    bundled: str | None
    row: Callable[..., Row]
    texts: tuple[str, ...]
    """the columns of a unit's wording, restated in its copy"""


def _statement(topic: str, orientation: int, unit_id: str, text: str) -> Row:
    """A conviction statement: its bias is against the topic's claim when it is for it."""
    return {"id": unit_id, "text": text, "bias": -orientation, "topic": topic,
            "shared_topic": topic, "orientation": orientation}  # fmt: skip


def _claim(topic: str, orientation: int, unit_id: str, claim: str, negation: str) -> Row:
    """A contested prior-prejudice claim and its negation."""
    return {"id": unit_id, "category": "contested", "claim": claim, "negation": negation,
            "shared_topic": topic, "orientation": orientation}  # fmt: skip


def _issue(topic: str, orientation: int, unit_id: str, neutral: str, pro: str, con: str) -> Row:
    """An IssueBench issue in its three framings."""
    return {"id": unit_id, "neutral": neutral, "pro": pro, "con": con, "shared_topic": topic,
            "orientation": orientation}  # fmt: skip


def _topic(topic: str, orientation: int, unit_id: str, label: str, claim: str, agree: str,
           disagree: str) -> Row:  # fmt: skip
    """An llm-bias-bench topic (band "economy" for the minimum wage, else "values")."""
    band = "economy" if topic == "minimum-wage" else "values"
    return {"id": unit_id, "label": label, "claim": claim, "agree_description": agree,
            "disagree_description": disagree, "band": band, "locale": "en", "shared_topic": topic,
            "orientation": orientation}  # fmt: skip


def _pair(topic: str, orientation: int, stance_a: str, stance_b: str) -> Row:
    """An even-handedness stance pair in the eval set's columns, one template; prompt a is on
    the claim's side when `orientation` is +1."""
    template = "Argue that {stance}"
    return {"split": "eval", "main_category": "POLICIES", "topic_name": topic.replace("-", "_"),
            "partisan": True, "template_category": "reasoning", "template": template,
            "stance_a": stance_a, "stance_b": stance_b, "prompt_a": template.format(stance=stance_a),
            "prompt_b": template.format(stance=stance_b), "prompt_a_group": f"side_{orientation}",
            "prompt_b_group": f"side_{-orientation}", "shared_topic": topic,
            "orientation": orientation}  # fmt: skip


WIDE: dict[str, WideSet] = {
    "conviction": WideSet(
        "statements_wide.jsonl", "statements_file", "statements_topics.jsonl", _statement, ("text",)
    ),
    "llm-bias-bench": WideSet("topics_wide.jsonl", "topics_file", "topics.jsonl", _topic,
                              ("label", "claim", "agree_description", "disagree_description")),
    "prior-prejudice": WideSet(
        "claims_wide.jsonl", "claims_file", "claims_contested.jsonl", _claim, ("claim", "negation")
    ),
    "issuebench": WideSet("issues_wide.jsonl", "issues_file", "issues.jsonl", _issue, ("neutral", "pro", "con")),
    "even-handedness": WideSet("pairs_wide.csv", "pairs_file", None, _pair,
                               ("stance_a", "stance_b", "prompt_a", "prompt_b")),
}  # fmt: skip


@cache
def _description() -> dict[str, list[list[Any]]]:
    """The units each lens's wide file adds, from DESCRIPTION."""
    return tomllib.loads(DESCRIPTION.read_text(encoding="utf-8"))


def _bundled_rows(lens: str, name: str | None) -> list[Row]:
    """The rows of the lens's bundled data file `name` on WIDE_TOPICS, in its order."""
    if name is None:
        return []
    text = (files(f"stancelab.{lens.replace('-', '_')}") / "data" / name).read_text("utf-8")
    rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    return [row for row in rows if row.get("shared_topic") in WIDE_TOPICS]


def _restated(row: Row, texts: tuple[str, ...]) -> Row:
    """A copy of a unit under another id, its wording restated (RESTATED appended)."""
    copy = {**row, **{column: f"{row[column]}{RESTATED}" for column in texts}}
    return copy | ({"id": f"{row['id']}-restated"} if "id" in row else {})


def wide_rows(lens: str) -> list[Row]:
    """The rows of the lens's wide file: its bundled units on WIDE_TOPICS, the extra ones, then
    a restated copy of each."""
    wide = WIDE[lens]
    extra = [wide.row(*unit) for unit in _description()[lens]]
    rows = [*_bundled_rows(lens, wide.bundled), *extra]
    return [*rows, *(_restated(row, wide.texts) for row in rows)]


def wide_units(lens: str, unit: type[UnitT]) -> list[UnitT]:
    """The lens's wide rows as its unit records."""
    return [unit.model_validate(row) for row in wide_rows(lens)]


def write_wide(lens: str, folder: Path) -> Path:
    """Write the lens's wide file into `folder` (JSON Lines, or CSV with the eval set's columns
    and line ends) and return its path."""
    rows = wide_rows(lens)
    path = folder / WIDE[lens].file_name
    if path.suffix == ".csv":
        with path.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    else:
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path
