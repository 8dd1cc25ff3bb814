"""The authors' published artefacts (prompts, rubrics, turn scripts, templates), read at run time
from their public repository at a pinned commit, never copied into stancelab.

The repositories of the papers' code carry no licence, so their text is not in this project. A
probe that runs the authors' method names the files it reads as a `Release`: the repository, the
commit and each file's SHA-256. A file is read from a local checkout (`--authors-repo DIR`), else
from the user's cache, else fetched once from the repository's public address
(`raw.githubusercontent.com`) into the cache; whichever way, its bytes must hash to the pin, so a
run reads exactly the published file. Without the file and without the network, the run stops
before any model call with one line that names both ways to get it.

The cache is `$STANCELAB_CACHE_DIR/authors`, else `$XDG_CACHE_HOME/stancelab/authors`, else
`~/.cache/stancelab/authors`. `STANCELAB_AUTHORS_URL` replaces the public address (a template
with `{repository}`, `{commit}`, `{short}` (the commit's first 7 digits) and `{path}`; tests serve
files locally with it, or read a folder with a `file://` template)."""

from __future__ import annotations

import hashlib
import os
import tempfile
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from stancelab.core.errors import StancelabError

PUBLIC_URL = "https://raw.githubusercontent.com/{repository}/{commit}/{path}"
URL_ENV = "STANCELAB_AUTHORS_URL"
CACHE_ENV = "STANCELAB_CACHE_DIR"
FETCH_TIMEOUT_S = 20.0


class ArtefactsUnavailable(StancelabError):
    """An authors' file is neither in a checkout nor in the cache, and cannot be fetched."""


@dataclass(frozen=True)
class Release:
    """Files of an authors' repository at one commit, each pinned by its SHA-256."""

    repository: str
    """owner/name on GitHub, e.g. `maritaca-ai/llm-bias-bench`"""
    commit: str
    """the full 40-hex commit"""
    files: Mapping[str, str]
    """path in the repository -> SHA-256 (hex) of its bytes at that commit"""
    what: str
    """what these files are to the method, for messages ("llm-bias-bench's prompts")"""

    @property
    def short(self) -> str:
        return self.commit[:7]

    def url(self, path: str) -> str:
        template = os.environ.get(URL_ENV) or PUBLIC_URL
        return template.format(
            repository=self.repository, commit=self.commit, short=self.short, path=path
        )

    def describe(self) -> str:
        """`maritaca-ai/llm-bias-bench at c3c7336`"""
        return f"{self.repository} at {self.short}"


def cache_root() -> Path:
    """Where fetched authors' files are kept (see the module's docstring)."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]) / "authors"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "stancelab" / "authors"


def cached_path(release: Release, path: str) -> Path:
    """A file's place in the cache: <root>/<owner>__<name>/<commit>/<path>."""
    return cache_root() / release.repository.replace("/", "__") / release.commit / path


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def artefact_bytes(release: Release, path: str, local: Path | None = None) -> bytes:
    """The bytes of `path` at the release's commit, checked against its pin: from the checkout
    `local` when given, else from the cache, else fetched once into the cache."""
    if path not in release.files:
        raise KeyError(f"{path} is not a pinned file of {release.describe()}")
    if local is not None:
        return _from_checkout(release, path, Path(local))
    cached = cached_bytes(release, path)
    if cached is not None:
        return cached
    data = _fetch(release, path)
    _store(cached_path(release, path), data)
    return data


def cached_bytes(release: Release, path: str) -> bytes | None:
    """The bytes of `path` when the cache holds the pinned file, else None (never fetched)."""
    cached = cached_path(release, path)
    if not cached.is_file():
        return None
    data = cached.read_bytes()
    return data if sha256(data) == release.files[path] else None


def artefact_text(release: Release, path: str, local: Path | None = None) -> str:
    """`artefact_bytes` as UTF-8 text."""
    return artefact_bytes(release, path, local).decode("utf-8")


def ensure_release(release: Release, local: Path | None = None, fallback: str = "") -> None:
    """Every file of the release at hand (read, fetched or checked), before a run calls a model;
    `fallback` names the option that runs without them (added to the error)."""
    for path in release.files:
        try:
            artefact_bytes(release, path, local)
        except ArtefactsUnavailable as error:
            raise ArtefactsUnavailable(f"{error}{f'; {fallback}' if fallback else ''}.") from None


def is_available(release: Release, local: Path | None = None) -> bool:
    """Whether every file of the release can be had now (a checkout, the cache or the network)."""
    try:
        ensure_release(release, local)
    except StancelabError:
        return False
    return True


def _from_checkout(release: Release, path: str, local: Path) -> bytes:
    file = local / path
    if not file.is_file():
        raise ArtefactsUnavailable(
            f"--authors-repo {local}: no {path} there (give a checkout of {release.repository} "
            f"at {release.short})"
        )
    data = file.read_bytes()
    if sha256(data) != release.files[path]:
        raise ArtefactsUnavailable(
            f"--authors-repo {local}: {path} is not the file of {release.describe()} (its SHA-256 "
            f"differs); check out {release.short} there, or choose that checkout's commit"
        )
    return data


def _fetch(release: Release, path: str) -> bytes:
    url = release.url(path)
    try:
        with urllib.request.urlopen(url, timeout=FETCH_TIMEOUT_S) as response:
            data = response.read()
    except (urllib.error.URLError, OSError, ValueError) as error:
        reason = getattr(error, "reason", None) or error
        raise ArtefactsUnavailable(
            f"{release.what} are read from {release.describe()} at run time: {path} is not in the "
            f"cache ({cached_path(release, path)}) and fetching {url} failed ({reason}). Give "
            f"--authors-repo DIR (a checkout of {release.repository} at {release.short}), or run "
            f"once with network access"
        ) from None
    if sha256(data) != release.files[path]:
        raise ArtefactsUnavailable(
            f"{url} is not the pinned file of {release.describe()} (its SHA-256 differs); nothing "
            f"was stored"
        )
    return data


def _store(target: Path, data: bytes) -> None:
    """Write `data` to `target` atomically (a reader never sees half a file)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=target.parent, delete=False) as handle:
        handle.write(data)
    Path(handle.name).replace(target)
