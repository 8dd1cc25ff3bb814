"""Which method a run follows: whose prompts, which authors' runner, which reading of the judge.

The default is the paper's measurement: the authors' prompts and reading, as their runner at
c3c7336 (the runner of the paper's results) ran them. Everything else is labelled where its
numbers appear: `--prompts stancelab` "not the paper's prompts", `--reading lenient` "not the
paper's reading", `--authors-commit eff42a4` a later runner than the paper's."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Literal, Protocol

from stancelab.llm_bias_bench.authors import (
    PAPER_COMMIT,
    REPOSITORY,
    RUNNERS,
    Runner,
    authors_wording,
)
from stancelab.llm_bias_bench.prompts import StancelabWording
from stancelab.llm_bias_bench.verdicts import Reading

Prompts = Literal["authors", "stancelab"]
PROMPTS: tuple[Prompts, ...] = ("authors", "stancelab")
NOT_PAPER_PROMPTS = "not the paper's prompts"
NOT_PAPER_READING = "not the paper's reading"
FALLBACK = f"or --prompts stancelab runs on stancelab's own wording ({NOT_PAPER_PROMPTS})"
PAPER_TURNS = 5
LEGACY_JUDGE_CALLS = 5
# Runs logged before the prompts were chosen ran stancelab's wording with the lenient reading.
LEGACY = {"prompts": "stancelab", "authors_commit": PAPER_COMMIT, "reading": "lenient"}


class Wording(Protocol):
    """The prompts of a run: the simulated user's system prompt and turn cue, and the judge's
    request."""

    def user_system(self, metadata: dict[str, Any], turns: int) -> str: ...

    def user_cue(self, turn: int, turns: int, reply: str) -> str: ...

    def judge_messages(
        self, metadata: dict[str, Any], exchanges: list[tuple[str, str]], blind: bool = False
    ) -> list[tuple[str, str]]: ...


@dataclass(frozen=True)
class Method:
    """A run's method (its task arguments `prompts`, `authors_commit`, `reading`)."""

    prompts: Prompts = "authors"
    authors_commit: str = PAPER_COMMIT
    reading: Reading = "authors"
    turns: int = PAPER_TURNS
    judge_max_tokens: int | None = None
    """the judge's cap when not the runner's"""
    judge_samples: int = 1
    judge_calls: int | None = None
    """calls per verdict when not the runner's (runs logged before the runner was chosen: 5)"""

    @property
    def runner(self) -> Runner:
        """The authors' runner whose judge protocol (cap, calls, parse) the run follows."""
        return RUNNERS[self.authors_commit]

    @property
    def strips_replies(self) -> bool:
        """Whether the subject's replies are stripped of surrounding whitespace before anyone
        reads them (the authors' runner does so)."""
        return self.prompts == "authors"

    def wording(self, authors_repo: Path | str | None = None) -> Wording:
        if self.prompts == "stancelab":
            return StancelabWording()
        return authors_wording(self.authors_commit, authors_repo)

    @property
    def judge_cap(self) -> int:
        return self.judge_max_tokens or self.runner.judge_max_tokens

    def is_paper(self) -> bool:
        return not self.departures()

    def departures(self) -> list[str]:
        """How this method departs from the paper's, each in a phrase (empty for the paper's)."""
        found = []
        if self.prompts == "stancelab":
            found.append(f"stancelab's wording: {NOT_PAPER_PROMPTS}")
        if self.authors_commit != PAPER_COMMIT:
            found.append(f"judged as the runner at {self.authors_commit}: {self.runner.about}")
        if self.reading == "lenient":
            found.append(f"lenient reading of the judge's replies: {NOT_PAPER_READING}")
        return found + self._design_departures()

    def _design_departures(self) -> list[str]:
        found = []
        if self.turns != PAPER_TURNS:
            turns = f"{self.turns} turn{'s' if self.turns != 1 else ''}"
            found.append(f"{turns} per conversation, not the paper's {PAPER_TURNS}")
        if self.judge_cap != self.runner.judge_max_tokens:
            found.append(f"judge capped at {self.judge_cap} tokens, not the runner's "
                         f"{self.runner.judge_max_tokens}")  # fmt: skip
        calls = self.judge_calls or self.runner.judge_calls
        if calls != self.runner.judge_calls:
            found.append(f"judge asked up to {calls} times per verdict, not the runner's "
                         f"{self.runner.judge_calls}")  # fmt: skip
        if self.judge_samples > 1:
            found.append(f"majority of {self.judge_samples} judge verdicts at temperature 1, "
                         "not the paper's one at 0")  # fmt: skip
        return found

    def caveats(self) -> list[str]:
        """The departures in a few words each, for a figure's label ("not the paper's prompts")."""
        found = []
        if self.prompts == "stancelab":
            found.append(NOT_PAPER_PROMPTS)
        if self.authors_commit != PAPER_COMMIT:
            found.append(f"judged as the later runner {self.authors_commit}, not the paper's")
        if self.reading == "lenient":
            found.append(f"lenient reading, {NOT_PAPER_READING}")
        return found + [
            phrase.split(", not")[0] + ", not the paper's" if ", not" in phrase else phrase
            for phrase in self._design_departures()
        ]

    def label(self) -> str:
        """One line naming the method: whose prompts, which reading, and any other departure."""
        if self.prompts == "authors":
            source = (
                f"the authors' prompts ({REPOSITORY} at {self.authors_commit}, {self.runner.about})"
            )
        else:
            source = f"stancelab's wording ({NOT_PAPER_PROMPTS})"
        reading = ("the authors' reading of the judge" if self.reading == "authors"
                   else f"the lenient reading of the judge ({NOT_PAPER_READING})")  # fmt: skip
        return "; ".join([source, reading, *self._design_departures()])

    def record(self) -> dict[str, Any]:
        """The method as summary.json states it."""
        return {"prompts": self.prompts, "authors_commit": self.authors_commit,
                "reading": self.reading, "turns": self.turns, "judge_max_tokens": self.judge_cap,
                "judge_calls": self.judge_calls or self.runner.judge_calls, "paper": self.is_paper(),
                "departures": self.departures(), "caveat": "; ".join(self.caveats()),
                "label": self.label()}  # fmt: skip


RELEASED = "released"
RELEASED_RECORD = {
    "source": "the authors' released verdicts", "paper": True, "departures": [], "caveat": "",
    "label": "the authors' released verdicts, read as their code reads them",
}  # fmt: skip
TASK_ARGUMENTS = (
    "prompts",
    "authors_commit",
    "reading",
    "turns",
    "judge_max_tokens",
    "judge_samples",
)


def method_key(method: Method) -> str:
    """A method as one line of text (the `method` column of conversations.csv)."""
    return "; ".join(f"{f.name}={getattr(method, f.name)}" for f in fields(method))


def method_record(key: str) -> dict[str, Any]:
    """What summary.json says of the method in `key` (`method_key`, or `RELEASED`)."""
    if key == RELEASED:
        return dict(RELEASED_RECORD)
    values: dict[str, Any] = dict(part.split("=", 1) for part in key.split("; "))
    for name in ("turns", "judge_max_tokens", "judge_samples", "judge_calls"):
        values[name] = None if values[name] == "None" else int(values[name])
    return Method(**values).record()


def method_of(arguments: Mapping[str, Any]) -> Method:
    """The method of a run from its task arguments (a run logged before they existed: `LEGACY`)."""
    given = {k: arguments.get(k) for k in LEGACY}
    legacy = all(value is None for value in given.values())
    if legacy:
        given = dict(LEGACY)
    defaults = Method()
    given_cap = int(arguments["judge_max_tokens"]) if arguments.get("judge_max_tokens") else None
    legacy_cap = given_cap or 2048  # those runs capped the judge at 2048
    return Method(
        prompts=given["prompts"] or defaults.prompts,
        authors_commit=given["authors_commit"] or defaults.authors_commit,
        reading=given["reading"] or defaults.reading,
        turns=int(arguments.get("turns") or PAPER_TURNS),
        judge_max_tokens=given_cap or (legacy_cap if legacy else None),
        judge_samples=int(arguments.get("judge_samples") or 1),
        judge_calls=LEGACY_JUDGE_CALLS if legacy else None,
    )
