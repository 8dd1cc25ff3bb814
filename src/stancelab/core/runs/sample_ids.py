"""Inspect's `sample_id` selection at the size of a shard.

Inspect matches each sample's id against every selected id with `fnmatch` (a selected id may
be a glob pattern): a worker of a MillStone run (17,325 of 34,650 samples) spent about 4
minutes in each pass over the dataset before its first call, so a run's workers started
minutes late and a dead endpoint was never reached to be reported. Ids without glob
characters match only themselves, so for them a set gives the same selection; any pattern
keeps Inspect's own matcher. Installed by `run_eval` in each module that holds Inspect's
`sample_id_filter` (`core.inspect_private.sample_id_filter_modules`).

Inspect's `slice_dataset` also checks each selected id against a list of the dataset's ids
(to warn of ids it lacks): 17,325 x 34,650 comparisons, about 5 s on a MillStone worker, twice
(the task's logger and its run) before the first call. Where every selected id is plain and in
the dataset (a set tells), the check has nothing to say and is skipped (Inspect's `dynamic`
slice: the same selection); otherwise Inspect's own slice warns and fails as it would.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any

from stancelab.core.inspect_private import (
    normalise_sample_id,
    sample_id_filter_modules,
    slice_dataset_modules,
)

GLOB_CHARACTERS = frozenset("*?[")
MARK = "stancelab_plain_ids"


def plain_id_filter(inspects: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """Inspect's `sample_id_filter`, matching ids without glob characters through a set."""

    @functools.wraps(inspects)
    def sample_id_filter(sample_id: Any) -> Any:
        matcher = inspects(sample_id)
        if _any_pattern(matcher.patterns):
            return matcher
        wanted = {os.path.normcase(pattern) for pattern in matcher.patterns}  # as fnmatch does

        def matches(id: str | int | None) -> bool:
            return os.path.normcase(normalise_sample_id(id)) in wanted

        return type(matcher)(matches, matcher.patterns)

    setattr(sample_id_filter, MARK, True)
    return sample_id_filter


def plain_id_slice(inspects: Callable[..., Any]) -> Callable[..., Any]:
    """Inspect's `slice_dataset`, without its list scan for each selected id where every
    selected id is plain and in the dataset."""

    @functools.wraps(inspects)
    def slice_dataset(dataset: Any, limit: Any, sample_id: Any, dynamic: bool = False) -> Any:
        if dynamic or not _all_plain_and_present(dataset, sample_id):
            return inspects(dataset, limit, sample_id, dynamic)
        return inspects(dataset, limit, sample_id, True)

    setattr(slice_dataset, MARK, True)
    return slice_dataset


def _all_plain_and_present(dataset: Any, sample_id: Any) -> bool:
    """Whether `sample_id` is a non-empty list of ids without glob characters, each one in
    `dataset` (as Inspect's check compares them)."""
    if not isinstance(sample_id, list) or not sample_id:
        return False
    wanted = [normalise_sample_id(one) for one in sample_id]
    if _any_pattern(wanted):
        return False
    present = {normalise_sample_id(sample.id) for sample in dataset}
    return all(one in present for one in wanted)


def _any_pattern(ids: Any) -> bool:
    """Whether any of `ids` holds a glob character (a pattern, not a plain id)."""
    return any(GLOB_CHARACTERS.intersection(one) for one in ids)


def install_plain_id_filter() -> None:
    """Put `plain_id_filter` in place of Inspect's matcher, and `plain_id_slice` in place of
    its `slice_dataset`, wherever Inspect calls them (once)."""
    for module in sample_id_filter_modules():
        if not getattr(module.sample_id_filter, MARK, False):
            module.sample_id_filter = plain_id_filter(module.sample_id_filter)
    for module in slice_dataset_modules():
        if not getattr(module.slice_dataset, MARK, False):
            module.slice_dataset = plain_id_slice(module.slice_dataset)
