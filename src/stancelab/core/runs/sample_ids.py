"""Inspect's `sample_id` selection at the size of a shard.

Inspect matches each sample's id against every selected id with `fnmatch` (a selected id may
be a glob pattern): a worker of a MillStone run (17,325 of 34,650 samples) spent about 4
minutes in each pass over the dataset before its first call, so a run's workers started
minutes late and a dead endpoint was never reached to be reported. Ids without glob
characters match only themselves, so for them a set gives the same selection; any pattern
keeps Inspect's own matcher. Installed by `run_eval` in each module that holds Inspect's
`sample_id_filter` (`core.inspect_private.sample_id_filter_modules`).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any

from stancelab.core.inspect_private import normalise_sample_id, sample_id_filter_modules

GLOB_CHARACTERS = frozenset("*?[")
MARK = "stancelab_plain_ids"


def plain_id_filter(inspects: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """Inspect's `sample_id_filter`, matching ids without glob characters through a set."""

    @functools.wraps(inspects)
    def sample_id_filter(sample_id: Any) -> Any:
        matcher = inspects(sample_id)
        if any(GLOB_CHARACTERS.intersection(pattern) for pattern in matcher.patterns):
            return matcher
        wanted = {os.path.normcase(pattern) for pattern in matcher.patterns}  # as fnmatch does

        def matches(id: str | int | None) -> bool:
            return os.path.normcase(normalise_sample_id(id)) in wanted

        return type(matcher)(matches, matcher.patterns)

    setattr(sample_id_filter, MARK, True)
    return sample_id_filter


def install_plain_id_filter() -> None:
    """Put `plain_id_filter` in place of Inspect's matcher wherever Inspect calls it (once)."""
    for module in sample_id_filter_modules():
        if not getattr(module.sample_id_filter, MARK, False):
            module.sample_id_filter = plain_id_filter(module.sample_id_filter)
