"""The wide test data (tests/wide_data.py): every lens's file, as its run reads it, holds ten
distinct units on each wide topic, on both sides of the topic's claim."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from stancelab.conviction.dataset import load_statements
from stancelab.core.data.topics import TopicTag
from stancelab.even_handedness.dataset import load_pairs
from stancelab.issuebench.dataset import load_issues
from stancelab.llm_bias_bench.dataset import load_topics
from stancelab.prior_prejudice.dataset import load_claims
from tests.wide_data import UNITS_PER_TOPIC, WIDE, WIDE_TOPICS, write_wide

LOADERS: dict[str, Callable[[Path], Sequence[TopicTag]]] = {
    "conviction": load_statements,
    "llm-bias-bench": load_topics,
    "prior-prejudice": load_claims,
    "issuebench": load_issues,
    "even-handedness": load_pairs,
}


@pytest.mark.parametrize("lens", sorted(WIDE))
def test_a_wide_file_holds_ten_units_a_topic_on_both_sides(lens: str, tmp_path: Path) -> None:
    units = LOADERS[lens](write_wide(lens, tmp_path))
    per_topic = Counter(unit.shared_topic for unit in units)
    assert UNITS_PER_TOPIC == 10 and per_topic == dict.fromkeys(WIDE_TOPICS, UNITS_PER_TOPIC)
    unit_ids = {
        getattr(unit, "id", None) or getattr(unit, "stance_pair_id", None) for unit in units
    }
    assert len(unit_ids) == len(units)  # the restated copies are units of their own
    sides = {(unit.shared_topic, unit.orientation) for unit in units}
    assert sides == {(topic, side) for topic in WIDE_TOPICS for side in (1, -1)}
