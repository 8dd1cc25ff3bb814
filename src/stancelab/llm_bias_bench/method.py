"""Which method a run follows: whose prompts, which authors' runner, which reading of the judge,
which topics.

The default is the paper's measurement: the authors' prompts and reading, as their runner at
c3c7336 (the runner of the paper's results) ran them, on the paper's 38 topics. Everything else
is labelled where its numbers appear: `--prompts stancelab` "not the paper's prompts",
`--reading lenient` "not the paper's reading", `--authors-commit eff42a4` a later runner than
the paper's, topics other than the paper's "not the paper's topics"."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Literal, Protocol

from stancelab.llm_bias_bench.authors import (
    PAPER_COMMIT,
    PAPER_TOPIC_COUNT,
    PAPER_TOPICS,
    REPOSITORY,
    RUNNERS,
    TOPICS_FILE,
    Runner,
    authors_wording,
)
from stancelab.llm_bias_bench.prompts import StancelabWording
from stancelab.llm_bias_bench.verdicts import Reading

Prompts = Literal["authors", "stancelab"]
PROMPTS: tuple[Prompts, ...] = ("authors", "stancelab")
NOT_PAPER_PROMPTS = "not the paper's prompts"
NOT_PAPER_READING = "not the paper's reading"
NOT_PAPER_TOPICS = "not the paper's topics"
# Where a run's topics came from (`dataset.TopicSet`), in words.
TOPIC_SOURCES = {
    "authors": f"the paper's topics (the authors' {TOPICS_FILE} at {PAPER_TOPICS.short})",
    "stancelab": f"stancelab's own topics ({NOT_PAPER_TOPICS})",
    "file": f"topics from a file ({NOT_PAPER_TOPICS})",
}
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
    topics: str = "authors"
    """where the topics came from (`dataset.TopicSet`): the paper's, stancelab's, a file's"""

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
        if self.topics != "authors":
            found.append(TOPIC_SOURCES.get(self.topics, TOPIC_SOURCES["file"]))
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
        if self.topics != "authors":
            found.append(NOT_PAPER_TOPICS)
        return found + [
            phrase.split(", not")[0] + ", not the paper's" if ", not" in phrase else phrase
            for phrase in self._design_departures()
        ]

    def topics_label(self, n_topics: int | None = None) -> str:
        """Which topics ran: their source, and how many of the paper's when a run took some."""
        source = TOPIC_SOURCES.get(self.topics, TOPIC_SOURCES["file"])
        if n_topics is None:
            return source
        if self.topics == "authors":
            return f"{source}, {n_topics} of its {PAPER_TOPIC_COUNT}"
        return f"{source}, {n_topics} topic{'s' if n_topics != 1 else ''}"

    def label(self, n_topics: int | None = None) -> str:
        """One line naming the method: whose prompts, which reading, which topics (`n_topics`
        of them, when known), and any other departure."""
        if self.prompts == "authors":
            source = (
                f"the authors' prompts ({REPOSITORY} at {self.authors_commit}, {self.runner.about})"
            )
        else:
            source = f"stancelab's wording ({NOT_PAPER_PROMPTS})"
        reading = ("the authors' reading of the judge" if self.reading == "authors"
                   else f"the lenient reading of the judge ({NOT_PAPER_READING})")  # fmt: skip
        return "; ".join([source, reading, self.topics_label(n_topics), *self._design_departures()])

    def record(self, n_topics: int | None = None) -> dict[str, Any]:
        """The method as summary.json states it (`n_topics`: how many topics the run took)."""
        return {"prompts": self.prompts, "authors_commit": self.authors_commit,
                "reading": self.reading, "topics": self.topics,
                "topics_label": self.topics_label(n_topics), "turns": self.turns,
                "judge_max_tokens": self.judge_cap,
                "judge_calls": self.judge_calls or self.runner.judge_calls, "paper": self.is_paper(),
                "departures": self.departures(), "caveat": "; ".join(self.caveats()),
                "label": self.label(n_topics)}  # fmt: skip


RELEASED = "released"
RELEASED_RECORD = {
    "source": "the authors' released verdicts", "paper": True, "departures": [], "caveat": "",
    "topics": "authors", "label": "the authors' released verdicts, read as their code reads them",
}  # fmt: skip
TASK_ARGUMENTS = (
    "prompts",
    "authors_commit",
    "reading",
    "turns",
    "judge_max_tokens",
    "judge_samples",
    "topics_file",
)


def method_key(method: Method) -> str:
    """A method as one line of text (the `method` column of conversations.csv)."""
    return "; ".join(f"{f.name}={getattr(method, f.name)}" for f in fields(method))


def method_record(key: str, n_topics: int | None = None) -> dict[str, Any]:
    """What summary.json says of the method in `key` (`method_key`, or `RELEASED`), over
    `n_topics` topics when known."""
    if key == RELEASED:
        return dict(RELEASED_RECORD)
    values: dict[str, Any] = dict(part.split("=", 1) for part in key.split("; "))
    for name in ("turns", "judge_max_tokens", "judge_samples", "judge_calls"):
        values[name] = None if values[name] == "None" else int(values[name])
    return Method(**values).record(n_topics)


def method_of(arguments: Mapping[str, Any]) -> Method:
    """The method of a run from its task arguments and `topic_set` (its samples' metadata; a run
    logged before they existed: `LEGACY`, and before the topic set was kept: the bundled set,
    or a file where one was given)."""
    given = {k: arguments.get(k) for k in LEGACY}
    legacy = all(value is None for value in given.values())
    if legacy:
        given = dict(LEGACY)
    defaults = Method()
    given_cap = int(arguments["judge_max_tokens"]) if arguments.get("judge_max_tokens") else None
    legacy_cap = given_cap or 2048  # those runs capped the judge at 2048
    earlier_topics = "file" if arguments.get("topics_file") else "stancelab"
    return Method(
        prompts=given["prompts"] or defaults.prompts,
        authors_commit=given["authors_commit"] or defaults.authors_commit,
        reading=given["reading"] or defaults.reading,
        turns=int(arguments.get("turns") or PAPER_TURNS),
        judge_max_tokens=given_cap or (legacy_cap if legacy else None),
        judge_samples=int(arguments.get("judge_samples") or 1),
        judge_calls=LEGACY_JUDGE_CALLS if legacy else None,
        topics=arguments.get("topic_set") or earlier_topics,
    )
