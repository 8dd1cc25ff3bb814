"""The authors' published IssueBench files served the way `core.data.authors` reads them, built
from the byte-identical copies in ../shared: a `file://` source laid out as
`<repository>/<commit>/<path>`, with an empty cache, so a default run reads exactly the pinned
files without the network."""

from __future__ import annotations

from pathlib import Path

import pytest

from stancelab.issuebench.release import AUTHORS_REPOSITORY, FILES, PINNED_COMMITS
from tests.shared_data import external

URL_ENV, CACHE_ENV = "STANCELAB_AUTHORS_URL", "STANCELAB_CACHE_DIR"


def serve_authors_files(folder: Path, patch: pytest.MonkeyPatch) -> Path:
    """Serve the pinned files from `folder` (links to ../shared) and use an empty cache there;
    returns the served root."""
    root = folder / "served"
    for commit in PINNED_COMMITS:
        for path in FILES:
            target = root / AUTHORS_REPOSITORY / commit / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(external("issuebench", Path(path).name))
    patch.setenv(URL_ENV, f"file://{root}/{{repository}}/{{commit}}/{{path}}")
    patch.setenv(CACHE_ENV, str(folder / "cache"))
    return root
