"""MillStone issues: schema, loading, argument cases and Inspect samples.

Issues come from a JSON Lines file, one issue per line (see README.md for the
schema), or from a folder of the authors' per-issue JSON files (`corpus.py`).
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Literal

from inspect_ai.dataset import MemoryDataset, Sample
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from stancelab.core.data.topics import TopicTag
from stancelab.core.errors import StancelabError
from stancelab.millstone.cases import ARGUMENT_CASES, CASE_KIND, CASE_OF_CONFIG, CASE_WEIGHTS, Case
from stancelab.millstone.prompts import (
    TEMPLATES,
    Layout,
    NeutralTemplate,
    Side,
    accumulated_citations,
    with_arguments,
)
from stancelab.millstone.wording import Wording

MIN_ARGUMENTS_PER_SIDE = 1  # a side with fewer than 3 arguments gives what it has to 3:1 cases
DEFAULT_ISSUES_FILE = "issues.jsonl"

ConfigKind = Literal["baseline", "one_sided", "clear_and_convincing", "balanced"]
CONFIG_WEIGHTS: dict[ConfigKind, int] = {
    "baseline": 0,
    "one_sided": 1,
    "clear_and_convincing": 2,
    "balanced": 3,
}


class Argument(BaseModel):
    """One argument for a side, with the sources it cites (`[n] citation` lines)."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1)
    source: str | None = None
    citations: list[str] = Field(default_factory=list)

    @field_validator("text")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("argument text is blank")
        return value.strip()


class IssuePrompt(BaseModel):
    """A finished neutral question for one template, and the side answering "A" takes."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1)
    a_side: Side


class MillstoneIssue(TopicTag):
    """A binary contested issue with neutral wording and arguments for both sides.

    `issue`, `pro` and `con` are the neutral wording used in the templates. An
    issue may instead carry its six finished neutral questions (`prompts`, as the
    authors' corpus does), or only a (possibly loaded) debate `question`, which the
    rephrasing step turns into neutral wording before a run. `shared_topic` and
    `orientation` (`TopicTag`) place the issue on the shared topic key: orientation +1 when
    its `pro` side is the canonical claim's agree side, -1 when it is the disagree side.
    """

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    topic: str = Field(min_length=1)
    issue: str | None = None
    pro: str | None = None
    con: str | None = None
    question: str | None = None
    prompts: list[IssuePrompt] | None = Field(default=None, min_length=6, max_length=6)
    pro_arguments: list[Argument] = Field(min_length=MIN_ARGUMENTS_PER_SIDE)
    con_arguments: list[Argument] = Field(min_length=MIN_ARGUMENTS_PER_SIDE)

    @model_validator(mode="after")
    def _wording_or_question(self) -> MillstoneIssue:
        wording = [self.issue, self.pro, self.con]
        if any(wording) and not all(wording):
            raise ValueError("give all of issue, pro and con, or none of them (with a question)")
        if not all(wording) and not self.question and not self.prompts:
            raise ValueError(
                "needs the neutral wording (issue, pro, con), six prompts, or a question to "
                "rephrase"
            )
        return self

    @property
    def needs_rephrasing(self) -> bool:
        return not self.prompts and not (self.issue and self.pro and self.con)

    def neutral_question(self, neutral: NeutralTemplate) -> tuple[str, Side]:
        """The neutral question for a template, and the side "A" stands for in it."""
        if self.prompts:
            prompt = self.prompts[neutral.number - 1]
            return prompt.text, prompt.a_side
        return neutral.render(self.issue or "", self.pro or "", self.con or ""), neutral.a_side


def bundled_issues_path() -> Path:
    """Path of the default issue set written for stancelab."""
    return Path(str(files("stancelab.millstone") / "data" / DEFAULT_ISSUES_FILE))


@dataclass(frozen=True)
class ArgumentConfiguration:
    """Which arguments go into the context for one of the 11 configurations."""

    name: str
    kind: ConfigKind
    favours: Literal["pro", "con", "none"]
    pro_indices: tuple[int, ...]
    con_indices: tuple[int, ...]

    @property
    def weight(self) -> int:
        return CONFIG_WEIGHTS[self.kind]


@dataclass(frozen=True)
class ConfigurationSizes:
    """Argument counts per configuration kind; the paper leaves one-sided and balanced sizes open."""

    one_sided: int = 4
    balanced_per_side: int = 2
    clear_majority: int = 3
    clear_minority: int = 1
    clear_draws: int = 2
    balanced_draws: int = 4


def _rng(*parts: object) -> random.Random:
    digest = hashlib.sha256("|".join(str(part) for part in parts).encode()).hexdigest()
    return random.Random(int(digest[:16], 16))


def _draw(rng: random.Random, available: int, count: int) -> tuple[int, ...]:
    return tuple(sorted(rng.sample(range(available), min(count, available))))


def argument_configurations(
    issue: MillstoneIssue, seed: int = 0, sizes: ConfigurationSizes = ConfigurationSizes()
) -> list[ArgumentConfiguration]:
    """The 11 configurations: baseline, 2 one-sided, 4 clear-and-convincing, 4 balanced."""
    n_pro, n_con = len(issue.pro_arguments), len(issue.con_arguments)
    rng = _rng(seed, issue.id, "configurations")
    configs = [
        ArgumentConfiguration("baseline", "baseline", "none", (), ()),
        ArgumentConfiguration(
            "one_sided_pro", "one_sided", "pro", _draw(rng, n_pro, sizes.one_sided), ()
        ),
        ArgumentConfiguration(
            "one_sided_con", "one_sided", "con", (), _draw(rng, n_con, sizes.one_sided)
        ),
    ]
    for draw in range(1, sizes.clear_draws + 1):
        for side in ("pro", "con"):
            majority_n, minority_n = (n_pro, n_con) if side == "pro" else (n_con, n_pro)
            majority = _draw(rng, majority_n, sizes.clear_majority)
            minority = _draw(rng, minority_n, sizes.clear_minority)
            pro, con = (majority, minority) if side == "pro" else (minority, majority)
            configs.append(
                ArgumentConfiguration(f"cc_{side}_{draw}", "clear_and_convincing", side, pro, con)
            )
    for draw in range(1, sizes.balanced_draws + 1):
        configs.append(
            ArgumentConfiguration(
                f"balanced_{draw}",
                "balanced",
                "none",
                _draw(rng, n_pro, sizes.balanced_per_side),
                _draw(rng, n_con, sizes.balanced_per_side),
            )
        )
    return configs


def _ordered_arguments(
    issue: MillstoneIssue, config: ArgumentConfiguration, sample_id: str, seed: int
) -> list[tuple[str, str]]:
    """(argument id, text) pairs in a seeded random order for one prompt."""
    chosen = [(f"{issue.id}:pro:{i}", issue.pro_arguments[i].text) for i in config.pro_indices]
    chosen += [(f"{issue.id}:con:{i}", issue.con_arguments[i].text) for i in config.con_indices]
    _rng(seed, sample_id, "order").shuffle(chosen)
    return chosen


def _check_wording(issue: MillstoneIssue) -> None:
    if issue.needs_rephrasing:
        raise StancelabError(
            f"Issue '{issue.id}' has no neutral wording (issue, pro, con). Run the rephrasing "
            "step first: `stancelab millstone rephrase FILE --out NEW_FILE`."
        )


ARGUMENT_WORDINGS = (1, 2)
CLEAR_MAJORITY = 3


def case_selection(issue: MillstoneIssue, case: Case, rng: random.Random) -> list[tuple[str, int]]:
    """(side, index) of the arguments a case puts in context, in the authors' listing order
    (before shuffling): one-sided cases take all of a side; 3:1 cases three of the majority
    side (all if it has fewer), then one of the other; balanced cases keep the smaller side
    whole, then a sample of the larger of the same size (both whole when they are equal)."""
    pro = [("pro", i) for i in range(len(issue.pro_arguments))]
    con = [("con", i) for i in range(len(issue.con_arguments))]
    if case == "pro":
        return pro
    if case == "con":
        return con
    if case in ("75pro", "75con"):
        majority, minority = (pro, con) if case == "75pro" else (con, pro)
        kept = rng.sample(majority, CLEAR_MAJORITY) if len(majority) > CLEAR_MAJORITY else majority
        return kept + rng.sample(minority, 1)
    if len(pro) == len(con):
        return pro + con
    smaller, larger = (pro, con) if len(pro) < len(con) else (con, pro)
    return smaller + rng.sample(larger, len(smaller))


def case_arguments(issue: MillstoneIssue, case: Case, rng: random.Random) -> list[tuple[str, int]]:
    """The arguments of `case_selection` in the random order shown."""
    chosen = case_selection(issue, case, rng)
    return rng.sample(chosen, len(chosen))


def _argument(issue: MillstoneIssue, side: str, index: int) -> Argument:
    return (issue.pro_arguments if side == "pro" else issue.con_arguments)[index]


def authors_arguments(
    issue: MillstoneIssue, case: Case, rng: random.Random, wording: Wording
) -> tuple[list[tuple[str, int]], list[str]]:
    """One trial's draw: the arguments in the order shown and their blocks, each with the
    citations the authors' layout lists with it (its own and the earlier-listed ones')."""
    selection = case_selection(issue, case, rng)
    cited = accumulated_citations([_argument(issue, *chosen).citations for chosen in selection])
    blocks = [wording.argument_block(_argument(issue, *chosen).text, citations)
              for chosen, citations in zip(selection, cited, strict=True)]  # fmt: skip
    order = rng.sample(range(len(selection)), len(selection))
    return [selection[i] for i in order], [blocks[i] for i in order]


def _authors_sample(
    issue: MillstoneIssue, neutral: NeutralTemplate, case: Case, wording: int, trial: int,
    seed: int, words: Wording,
) -> Sample:  # fmt: skip
    """One prompt. Both wordings of a trial share its argument draw and order (the authors
    drew once per trial and sent it in both wordings); each prompt draws its answer-form
    orders."""
    baseline = case == "neither"
    trial_id = f"{issue.id}__{case}__t{neutral.number}"
    sample_id = trial_id + ("" if baseline else f"__w{wording}") + f"__r{trial}"
    arguments, blocks = ([], []) if baseline else authors_arguments(
        issue, case, _rng(seed, f"{trial_id}__r{trial}", "draw"), words)  # fmt: skip
    forms = _rng(seed, sample_id, "forms")
    forms_order = (forms.random() < 0.5, forms.random() < 0.5)
    question, a_side = issue.neutral_question(neutral)
    kind, favours = CASE_KIND[case]
    return Sample(
        id=sample_id,
        input=words.prompt(question, blocks, wording, forms_order),
        target=a_side,
        metadata={
            "issue_id": issue.id, "topic": issue.topic, "template": neutral.number,
            "a_side": a_side, "layout": "authors", "case": case,
            "config": case if baseline else f"{case}_w{wording}", "config_kind": kind,
            "favours": favours, "weight": CASE_WEIGHTS.get(case, 0), "wording": wording,
            "trial": trial,
            "n_pro_arguments": sum(side == "pro" for side, _ in arguments),
            "n_con_arguments": sum(side == "con" for side, _ in arguments),
            "argument_ids": ",".join(f"{issue.id}:{side}:{index}" for side, index in arguments),
            **issue.tag(),
        },
    )  # fmt: skip


def authors_samples(
    issue: MillstoneIssue,
    trials: int,
    seed: int,
    words: Wording,
    templates: tuple[NeutralTemplate, ...] = TEMPLATES,
) -> list[Sample]:
    """The `authors` layout in `words` (the authors' or stancelab's): per template, `trials`
    baseline prompts and, for each of the five argument cases, `trials` draws each sent in the
    two wordings; every trial draws and orders its arguments afresh from a seed (66 x
    `trials` samples per issue)."""
    _check_wording(issue)
    samples = []
    for neutral in templates:
        for trial in range(1, trials + 1):
            samples.append(_authors_sample(issue, neutral, "neither", 1, trial, seed, words))
            for case in ARGUMENT_CASES:
                for wording in ARGUMENT_WORDINGS:
                    samples.append(
                        _authors_sample(issue, neutral, case, wording, trial, seed, words)
                    )
    return samples


def documents_samples(
    issue: MillstoneIssue,
    seed: int = 0,
    templates: tuple[NeutralTemplate, ...] = TEMPLATES,
    sizes: ConfigurationSizes = ConfigurationSizes(),
) -> list[Sample]:
    """The `documents` layout: one sample per (template, configuration); the trials of a
    sample are Inspect epochs and share its draw and order."""
    _check_wording(issue)
    samples = []
    for config in argument_configurations(issue, seed, sizes):
        for neutral in templates:
            sample_id = f"{issue.id}__{config.name}__t{neutral.number}"
            arguments = _ordered_arguments(issue, config, sample_id, seed)
            question, a_side = issue.neutral_question(neutral)
            samples.append(
                Sample(
                    id=sample_id,
                    input=with_arguments(question, [text for _, text in arguments]),
                    target=a_side,
                    metadata={
                        "issue_id": issue.id,
                        "topic": issue.topic,
                        "template": neutral.number,
                        "a_side": a_side,
                        "layout": "documents",
                        "case": CASE_OF_CONFIG[(config.kind, config.favours)],
                        "config": config.name,
                        "config_kind": config.kind,
                        "favours": config.favours,
                        "weight": config.weight,
                        "n_pro_arguments": len(config.pro_indices),
                        "n_con_arguments": len(config.con_indices),
                        "argument_ids": ",".join(argument_id for argument_id, _ in arguments),
                        **issue.tag(),
                    },
                )
            )
    return samples


def millstone_dataset(
    issues: list[MillstoneIssue],
    seed: int = 0,
    limit_issues: int | None = None,
    layout: Layout = "authors",
    trials: int = 1,
    words: Wording | None = None,
) -> MemoryDataset:
    """All samples for the first `limit_issues` issues (all when None). In the `authors`
    layout (which needs its `words`) each trial is its own sample (its own draw); in
    `documents` trials are epochs."""
    chosen = issues[:limit_issues] if limit_issues else issues
    if layout == "authors":
        if words is None:
            raise ValueError("the authors' layout needs its wording")
        samples = [s for issue in chosen for s in authors_samples(issue, trials, seed, words)]
    else:
        samples = [s for issue in chosen for s in documents_samples(issue, seed)]
    return MemoryDataset(samples, name="millstone")
