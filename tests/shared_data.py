"""Locating ../shared (the authors' released data). Where it is absent the replay tests skip
with the reason, except under CI (`CI=true`), where a missing ../shared is a failure: a green
CI must mean the published numbers were re-derived."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("STANCELAB_SHARED_DIR", REPO_ROOT.parent / "shared"))


def external(*parts: str) -> Path:
    """A path under shared/external; when it is not there, skip the test (fail it under CI)."""
    path = SHARED.joinpath("external", *parts)
    if not path.exists():
        reason = f"{path} is absent (the authors' released data lives in ../shared)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{reason}; CI=true requires it for the replay tests", pytrace=False)
        pytest.skip(reason)
    return path


# The authors' published files kept in ../shared, as (repository, full commit) -> the folder of
# byte-identical copies. Tests read them at run time; nothing of them is in this repository.
AUTHORS_COPIES = {
    ("maritaca-ai/llm-bias-bench", "c3c7336e28071db2fcb65f77dc9763d11921c8d8"):
        ("llm-bias-bench", "authors", "c3c7336"),
    ("maritaca-ai/llm-bias-bench", "eff42a492b98c1951ea3d550565c84b42bf0c63e"):
        ("llm-bias-bench", "authors", "eff42a4"),
}  # fmt: skip


def authors_checkout(short: str, probe: str = "llm-bias-bench") -> Path:
    """The folder of the authors' files at a commit (a checkout for `--authors-repo`); when it
    is not there, skip the test (fail it under CI)."""
    return external(probe, "authors", short)


def seed_authors_cache(cache_dir: Path) -> int:
    """Copy every authors' file of `AUTHORS_COPIES` found in ../shared into the cache layout of
    `core.data.authors` under `cache_dir` (what `STANCELAB_CACHE_DIR` names); the files copied."""
    copied = 0
    for (repository, commit), parts in AUTHORS_COPIES.items():
        folder = SHARED.joinpath("external", *parts)
        if not folder.is_dir():
            continue
        target = cache_dir / "authors" / repository.replace("/", "__") / commit
        for file in folder.rglob("*"):
            if file.is_file():
                destination = target / file.relative_to(folder)
                destination.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(file, destination)
                copied += 1
    return copied
