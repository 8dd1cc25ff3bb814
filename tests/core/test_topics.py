"""The shared topic key, item tags, mapping files and the stance frame."""

from __future__ import annotations

import math

import pytest

from stancelab.core.data.topics import (
    TopicTag,
    get_topic,
    load_topic_map,
    missing_topics,
    stance_frame,
    topic_ids,
)
from stancelab.core.errors import DataFileError


def test_the_key_has_at_least_twelve_topics_each_with_one_claim() -> None:
    assert len(topic_ids()) >= 12
    assert get_topic("immigration").claim.endswith(".")


def test_a_tag_needs_a_known_topic_and_an_orientation() -> None:
    assert TopicTag(shared_topic="gun-control", orientation=-1).tag() == {
        "shared_topic": "gun-control",
        "orientation": -1,
    }
    assert TopicTag().tag() == {}
    with pytest.raises(ValueError, match="not a shared topic"):
        TopicTag(shared_topic="astrology", orientation=1)
    with pytest.raises(ValueError, match="set both or neither"):
        TopicTag(shared_topic="gun-control")
    with pytest.raises(ValueError):
        TopicTag(shared_topic="gun-control", orientation=0)


def test_missing_topics_lists_the_uncovered_in_key_order() -> None:
    tags = [TopicTag(shared_topic=topic, orientation=1) for topic in topic_ids()[1:]]
    assert missing_topics(tags) == [topic_ids()[0]]


def test_a_mapping_file_keeps_unmatched_items_and_rejects_bad_rows(tmp_path) -> None:
    path = tmp_path / "map.csv"
    path.write_text(
        "item_id,shared_topic,orientation,note\na,abortion,-1,pro-life framing\nb,,,no match\n"
    )
    mapping = load_topic_map(path)
    assert mapping["a"].orientation == -1 and mapping["b"].shared_topic is None
    path.write_text("item_id,shared_topic,orientation,note\na,abortion,1,\nb,tarot,1,\n")
    with pytest.raises(DataFileError, match="line 3"):
        load_topic_map(path)


def test_a_stance_outside_its_interval_or_range_is_refused() -> None:
    row = {
        "model": "m",
        "topic": "abortion",
        "lens": "millstone",
        "stance": 0.5,
        "ci_low": 0.2,
        "ci_high": 0.7,
        "n": 10,
        "unusable": 0,
        "measure": "x",
        "detail": None,
        "transcripts": "",
    }
    assert stance_frame([row])["detail"].tolist() == [""]
    assert math.isnan(stance_frame([{**row, "stance": math.nan}])["stance"][0])
    with pytest.raises(ValueError, match="outside its interval"):
        stance_frame([{**row, "stance": 0.9}])
    with pytest.raises(ValueError, match=r"\[-1, 1\]"):
        stance_frame([{**row, "stance": 1.5, "ci_high": 2}])


def test_selection_keeps_order_applies_all_and_names_what_is_covered() -> None:
    from stancelab.core.data.topics import parse_shared_topics, select_shared
    from stancelab.core.errors import StancelabError

    items = [TopicTag(shared_topic="abortion", orientation=1), TopicTag(),
             TopicTag(shared_topic="free-trade", orientation=-1)]  # fmt: skip
    assert parse_shared_topics("") is None and parse_shared_topics("all") == topic_ids()
    assert select_shared(items, "") == items
    assert select_shared(items, "all") == [items[0], items[2]]
    assert select_shared(items, "free-trade, abortion") == [items[0], items[2]]
    with pytest.raises(StancelabError, match="cover: abortion, free-trade"):
        select_shared(items, "gun-control", "issue")


def test_a_unanimous_signed_mean_gets_an_interval_that_narrows_with_n() -> None:
    import numpy as np

    from stancelab.core.data.topics import signed_mean

    two, ten = signed_mean(np.array([-1.0, -1.0])), signed_mean(np.array([-1.0] * 10))
    assert two.value == ten.value == -1.0
    assert two.ci_low == -1.0 and 0 < two.ci_high < 1
    assert ten.ci_high < 0 < two.ci_high
    mixed = signed_mean(np.array([1.0, 0.0, 1.0, 0.5]))
    assert mixed.ci_low < mixed.value < mixed.ci_high


def test_with_a_selection_the_limit_counts_per_topic_so_every_topic_asked_for_runs() -> None:
    from stancelab.core.data.topics import select_and_limit

    items = [TopicTag(shared_topic="abortion", orientation=1), TopicTag(shared_topic="abortion", orientation=-1),
             TopicTag(), TopicTag(shared_topic="free-trade", orientation=1)]  # fmt: skip
    assert select_and_limit(items, "abortion,free-trade", 1) == [items[0], items[3]]
    assert select_and_limit(items, "", 1) == [items[0]]
    assert select_and_limit(items, "all", None) == [items[0], items[1], items[3]]
