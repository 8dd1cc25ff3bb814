"""A shard's `sample_id` selection (`core.runs.sample_ids`): the same samples as Inspect's
matcher, without an `fnmatch` per sample and selected id."""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from inspect_ai.dataset import MemoryDataset, Sample

from stancelab.core.inspect_private import sample_id_filter_modules, slice_dataset_modules
from stancelab.core.runs.sample_ids import (
    MARK,
    install_plain_id_filter,
    plain_id_filter,
    plain_id_slice,
)

UTIL = "inspect_ai._eval.task.util"


def _dataset(count: int) -> MemoryDataset:
    return MemoryDataset([Sample(input="x", id=f"issue-{i // 66}__{i % 66}") for i in range(count)]
                         + [Sample(input="y", id=7)])  # fmt: skip


@pytest.mark.parametrize(
    "selected",
    [["issue-1__3", "issue-2__65", 7], ["issue-1__*", "issue-3__1"], ["7"], ["ISSUE-1__3"], []],
    ids=["plain", "a pattern", "an int as text", "case", "none"],
)
def test_the_selection_is_inspects_own(selected: list[Any]) -> None:
    util = importlib.import_module(UTIL)
    inspects = util.sample_id_filter
    inspects = getattr(inspects, "__wrapped__", inspects)
    ours = plain_id_filter(inspects)
    ids = [sample.id for sample in _dataset(400)]
    assert [ours(selected).matches(i) for i in ids] == [inspects(selected).matches(i) for i in ids]
    assert ours(selected).patterns == inspects(selected).patterns


def test_a_shard_of_thousands_selects_without_an_fnmatch_per_sample_and_id(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Inspect's matcher tried every selected id on every sample: a MillStone worker (17,325
    of 34,650 ids) spent about 4 minutes a pass before its first call."""
    util = importlib.import_module(UTIL)
    calls = 0
    inspects_fnmatch = util.fnmatch

    def counted(name: str, pattern: str) -> bool:
        nonlocal calls
        calls += 1
        return inspects_fnmatch(name, pattern)

    monkeypatch.setattr(util, "fnmatch", counted)
    for module in sample_id_filter_modules():  # restored after the test
        monkeypatch.setattr(module, "sample_id_filter", module.sample_id_filter)
    install_plain_id_filter()
    assert all(
        getattr(module.sample_id_filter, MARK, False) for module in sample_id_filter_modules()
    )
    dataset = _dataset(3_000)
    half = [sample.id for sample in dataset][::2]
    selected = util.slice_dataset(dataset, None, half)
    assert [sample.id for sample in selected] == half
    assert calls == 0  # Inspect's own: about 3,000 x 1,500 / 2


@pytest.mark.parametrize(
    "selected",
    [["issue-1__3", "issue-2__65", 7], ["issue-1__*"], ["issue-1__3", "no-such-id"], ["7"]],
    ids=["plain", "a pattern", "an id not in the dataset", "an int as text"],
)
def test_the_slice_is_inspects_own(selected: list[Any], caplog: pytest.LogCaptureFixture) -> None:
    util = importlib.import_module(UTIL)
    inspects = getattr(util.slice_dataset, "__wrapped__", util.slice_dataset)
    dataset = _dataset(400)
    theirs = [sample.id for sample in inspects(dataset, None, selected)]
    ours = [sample.id for sample in plain_id_slice(inspects)(dataset, None, selected)]
    assert ours == theirs


def test_a_shard_of_thousands_is_sliced_without_a_list_scan_per_selected_id(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Inspect's `slice_dataset` looked each selected id up in a list of the dataset's ids (to
    warn of ids it lacks): about 5 s a pass on a MillStone worker, two passes before its
    first call. Every selected id is in the dataset, so that check is skipped."""
    util = importlib.import_module(UTIL)
    for module in sample_id_filter_modules():  # restored after the test
        monkeypatch.setattr(module, "sample_id_filter", module.sample_id_filter)
    for module in slice_dataset_modules():
        monkeypatch.setattr(module, "slice_dataset", module.slice_dataset)
    scans = 0
    real_normalise = util.normalise_sample_id

    def counted(sample_id: Any) -> str:
        nonlocal scans
        scans += 1
        return real_normalise(sample_id)

    monkeypatch.setattr(util, "normalise_sample_id", counted)
    install_plain_id_filter()
    assert all(getattr(module.slice_dataset, MARK, False) for module in slice_dataset_modules())
    dataset = _dataset(3_000)
    half = [sample.id for sample in dataset][::2]
    selected = util.slice_dataset(dataset, None, half)
    assert [sample.id for sample in selected] == half
    # the selected ids normalised once by the matcher; Inspect's own check also normalised
    # the dataset's 3,001 ids into a list, then scanned it for each of the 1,501 selected
    assert scans == len(half)
