"""The authors' published issues and templates, the prompts of a default run, read at run time.

IssueBench's prompts are the authors' 212 issues (`issues.csv`) in three framings, each filled
into the 1,000 templates of the paper (`templates_sample.csv`), as published in
paul-rottger/issuebench (CC BY 4.0). A default run reads both files at a pinned commit
(`core.data.authors`: a checkout given with `--authors-repo`, the cache, or fetched once),
each checked against its SHA-256, and builds the prompts exactly as the authors'
`2_final_dataset/create_prompts.ipynb` does. `--prompts stancelab` runs stancelab's bundled
set (30 issues, 42 templates written for stancelab), labelled "not the paper's prompts";
`--issues-file` / `--templates-file` replace either with a file of one's own."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from stancelab.core.data.authors import (
    ArtefactsUnavailable,
    Release,
    artefact_bytes,
    cached_path,
    ensure_release,
)
from stancelab.core.errors import StancelabError

PROMPT_SOURCES = ("authors", "stancelab")
NOT_THE_PAPERS = "not the paper's prompts"
AUTHORS_REPOSITORY = "paul-rottger/issuebench"
ISSUES = "2_final_dataset/prompt_ingredients/issues.csv"
TEMPLATES = "2_final_dataset/prompt_ingredients/templates_sample.csv"
FILES = {
    ISSUES: "4d758fed3db8f60aac4705a3a5824340f33dc8ee0bd78368667ba37d4a541dd6",
    TEMPLATES: "d5d8f7e568ee050e5554400ad1800f979a39d0ca965f351573c627c38ac84674",
}
# The snapshot of the paper's release, and the author's later commit (the same two files).
DEFAULT_COMMIT = "730aa088c90fe89d37f2f562ed2e3c3c9a7948a6"
PINNED_COMMITS = (DEFAULT_COMMIT, "64d01a71c711f324d5acde7553cc250fc4a0be39")
FALLBACK = (
    f"or run with --prompts stancelab (stancelab's bundled issues and templates: {NOT_THE_PAPERS})"
)


def pinned_release(commit: str) -> Release:
    """The two files at a pinned commit (full, or a prefix of 7 or more digits)."""
    matches = [c for c in PINNED_COMMITS if len(commit) >= 7 and c.startswith(commit.lower())]
    if len(matches) != 1:
        pinned = ", ".join(c[:7] for c in PINNED_COMMITS)
        raise StancelabError(f"--authors-commit {commit}: not a pinned commit of "
                             f"{AUTHORS_REPOSITORY} (pinned: {pinned}).")  # fmt: skip
    return Release(AUTHORS_REPOSITORY, matches[0], FILES, "IssueBench's issues and templates")


def check_source(prompts: str) -> None:
    if prompts not in PROMPT_SOURCES:
        raise StancelabError(f"--prompts must be one of {', '.join(PROMPT_SOURCES)}, not "
                             f"'{prompts}'.")  # fmt: skip


@dataclass(frozen=True)
class PromptFiles:
    """The issues and templates a run reads (None: stancelab's bundled file), and what they
    are, for the CLI, summary.json and the report."""

    issues: str | None
    templates: str | None
    label: str


def authors_file(release: Release, path: str, checkout: Path | None) -> str:
    """The local path of a pinned file, read (and checked) from the checkout or the cache,
    fetched once into the cache otherwise."""
    try:
        artefact_bytes(release, path, checkout)
    except ArtefactsUnavailable as error:
        raise ArtefactsUnavailable(f"{error}; {FALLBACK}.") from None
    return str(checkout / path if checkout else cached_path(release, path))


def prompt_files(
    prompts: str, commit: str, checkout: str | None, issues_file: str | None,
    templates_file: str | None,
) -> PromptFiles:  # fmt: skip
    """Where a run's issues and templates come from: a file given, else the authors' (default)
    or stancelab's bundled one."""
    check_source(prompts)
    if prompts == "stancelab" or (issues_file and templates_file):
        return PromptFiles(
            issues_file, templates_file, _label(prompts, issues_file, templates_file)
        )
    release = pinned_release(commit)
    local = Path(checkout) if checkout else None
    issues = issues_file or authors_file(release, ISSUES, local)
    templates = templates_file or authors_file(release, TEMPLATES, local)
    return PromptFiles(issues, templates, _label(prompts, issues_file, templates_file, release))


def _label(prompts: str, issues_file: str | None, templates_file: str | None,
           release: Release | None = None) -> str:  # fmt: skip
    parts = []
    for what, given, published in (("issues", issues_file, "issues.csv"),
                                    ("templates", templates_file, "templates_sample.csv")):  # fmt: skip
        if given:
            parts.append(f"{what} from {given}")
        elif release is not None:
            parts.append(f"the authors' {published} ({release.repository} at {release.short})")
        else:
            parts.append(f"stancelab's bundled {what} ({NOT_THE_PAPERS})")
    return "; ".join(parts)


def check_available(prompts: str, commit: str, checkout: Path | str | None,
                    issues_file: object, templates_file: object) -> None:  # fmt: skip
    """Before a run: the authors' files it reads at hand (read, cached or fetched); one line
    naming `--authors-repo`, the network and `--prompts stancelab` otherwise."""
    check_source(prompts)
    if prompts == "authors" and not (issues_file and templates_file):
        ensure_release(pinned_release(commit), Path(checkout) if checkout else None, FALLBACK)
