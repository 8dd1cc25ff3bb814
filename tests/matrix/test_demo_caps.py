"""The demo (the README's first command) stays small: every message any role generates in it is
capped at a few dozen tokens, so the embedded model's demo finishes in minutes."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from stancelab.demo import demo_options
from stancelab.probes import PROBES

DEMO_TOKEN_CAP = 64


@pytest.mark.parametrize("probe", sorted(PROBES))
def test_every_token_cap_of_the_demo_is_small(probe: str, tmp_path: Path) -> None:
    options = demo_options(probe, tmp_path, ["mockllm/model"], None)
    caps = {
        field.name: getattr(options, field.name)
        for field in dataclasses.fields(options)
        if field.name.endswith("max_tokens") and getattr(options, field.name) is not None
    }
    too_large = {name: cap for name, cap in caps.items() if cap > DEMO_TOKEN_CAP}
    assert not too_large, f"{probe}'s demo lets a role write up to {too_large} tokens"
