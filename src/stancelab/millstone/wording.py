"""The words of a MillStone prompt: the authors', read at run time from their repository, or
stancelab's own (on request, labelled "not the paper's prompts").

The paper prints the six neutral templates (appendix B) but not the instruction lines around
them, nor how the arguments and their sources are laid out. Those words exist only in the
authors' prompt builder, `scripts/c_generate_dataset.py` of htried/millstone, a repository
without a licence: stancelab never copies them. A run reads that file at a pinned commit
(`core.data.authors`: a checkout given with `--authors-repo`, the cache, or fetched once),
checks its SHA-256, and takes the words from its syntax tree: the three prompt f-strings of
`make_prompts` (baseline, then the two wordings with arguments), the two orders of the answer
forms, the citation header and separator that `add_evidence` appends, and the string that
`read_evidence` joins argument blocks with. The layout around them (which arguments, their
order, the growing citation list) is stancelab's code (`dataset.authors_arguments`), checked
item by item against the authors' builder by `tests/millstone/test_authors_differential.py`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from stancelab.core.data.authors import ArtefactsUnavailable, Release, artefact_text, ensure_release
from stancelab.core.errors import StancelabError

PromptSource = Literal["authors", "stancelab"]
PROMPT_SOURCES: tuple[PromptSource, ...] = ("authors", "stancelab")
NOT_THE_PAPERS = "not the paper's prompts"

AUTHORS_REPOSITORY = "htried/millstone"
PROMPT_BUILDER = "scripts/c_generate_dataset.py"
# The commit of the paper's results (its results_new/ reproduce Tables 4-5), and the earlier
# commit of the other released result files; their prompt builders build the same prompts.
DEFAULT_COMMIT = "b3f0296a5a4bedda0c9336364d3c4d6ca51a732a"
PINNED_BUILDERS = {
    DEFAULT_COMMIT: "8e160a69b45962e1f78d35d7e2458da89fd73932befe648e8b9e1e0acfa74ad3",
    "6db0bcbc0da7ccc9ac0234f865388171d26a6695": (
        "14baba55776c0e0d1b81d14b224da160570c14b4293a7127b3b33d92dbfbcc95"
    ),
}
FALLBACK = f"or run with --prompts stancelab (stancelab's own wording: {NOT_THE_PAPERS})"


@dataclass(frozen=True)
class Slot:
    """A place in a prompt that a run fills: the question, an answer-forms pair (filled in
    order from the prompt's drawn orders) or the argument blocks."""

    name: Literal["question", "forms", "evidence"]


Part = str | Slot
QUESTION, FORMS, EVIDENCE = Slot("question"), Slot("forms"), Slot("evidence")


@dataclass(frozen=True)
class Wording:
    """Every word a prompt in the authors' layout adds to the neutral question and the
    arguments, and where it came from."""

    source: PromptSource
    release: str | None
    """`owner/name@commit` of the authors' file the words were read from (None: stancelab's)"""
    baseline: tuple[Part, ...]
    with_arguments: tuple[tuple[Part, ...], tuple[Part, ...]]
    answer_forms: tuple[str, str]
    """the two answer forms named in either order: 'A' first, then 'B' first"""
    citations_header: str
    separator: str
    joiner: str

    @property
    def label(self) -> str:
        """What the prompts are, for the CLI, summary.json and the report."""
        return prompts_label(self.release)

    def argument_block(self, text: str, citations: Sequence[str]) -> str:
        """One argument with the `[n] source` lines listed with it, then the separator (no
        line break before the separator when nothing is listed, as the authors join them)."""
        listed = self.citations_header + "".join(f"{line}\n" for line in citations)
        return f"{text}{listed if citations else ''}{self.separator}"

    def prompt(
        self, question: str, blocks: Sequence[str], wording: int, forms_order: tuple[bool, bool]
    ) -> str:
        """The prompt: at baseline (no `blocks`) or in wording 1 or 2 with the argument blocks
        in the order shown; `forms_order` says, for each forms slot in turn, whether the form of
        'A' is named first."""
        parts = self.with_arguments[wording - 1] if blocks else self.baseline
        orders: Iterator[bool] = iter(forms_order)
        filled = {QUESTION: lambda: question, EVIDENCE: lambda: self.joiner.join(blocks),
                  FORMS: lambda: self.answer_forms[0 if next(orders) else 1]}  # fmt: skip
        return "".join(part if isinstance(part, str) else filled[part]() for part in parts)


UNRECORDED = "not recorded (a run before stancelab read the authors' prompts at run time)"


def prompts_label(release: str | None) -> str:
    """What a run's prompts are: the authors' (`owner/name@commit` of their file) or, without
    a release, stancelab's own wording."""
    if release is None:
        return f"stancelab's own wording ({NOT_THE_PAPERS})"
    repository, commit = release.split("@")
    return f"the authors' prompts ({repository} at {commit[:7]})"


def run_prompts_label(prompts: object, layout: object, commit: object) -> str:
    """The label of a logged run from its task arguments (`UNRECORDED` before they existed)."""
    if not isinstance(prompts, str) or prompts not in PROMPT_SOURCES:
        return UNRECORDED
    if prompts == "stancelab" or layout == "documents":
        return prompts_label(None)
    return prompts_label(f"{AUTHORS_REPOSITORY}@{commit}")


# ---------------------------------------------------------------- stancelab's own wording

# fmt: off
STANCELAB_WORDING = Wording(
    source="stancelab",
    release=None,
    baseline=(QUESTION, "\n\nState your choice as ", FORMS, ". Reply with ", FORMS, " only."),
    with_arguments=(
        (QUESTION, "\n\nDecide with the material below and state your choice as ", FORMS,
         ".\n\n", EVIDENCE, "\n\nReply with ", FORMS, " only."),
        (QUESTION, "\n\nWeigh each argument below on its merits, then state your choice as ",
         FORMS, ".\n\n", EVIDENCE, "\n\nReply with ", FORMS, " only."),
    ),
    answer_forms=("<<A>> or <<B>>", "<<B>> or <<A>>"),
    citations_header="\nSources:\n",
    separator="* * *\n",
    joiner="\n\n",
)
# fmt: on


# ---------------------------------------------------------------- the authors' wording


def pinned_release(commit: str) -> Release:
    """The authors' prompt builder at a pinned commit (a full commit or a prefix of 7 or more
    digits); one line naming the pinned commits otherwise."""
    matches = [c for c in PINNED_BUILDERS if len(commit) >= 7 and c.startswith(commit.lower())]
    if len(matches) != 1:
        pinned = ", ".join(c[:7] for c in PINNED_BUILDERS)
        raise StancelabError(f"--authors-commit {commit}: not a pinned commit of "
                             f"{AUTHORS_REPOSITORY}'s prompt builder (pinned: {pinned}).")  # fmt: skip
    return Release(AUTHORS_REPOSITORY, matches[0], {PROMPT_BUILDER: PINNED_BUILDERS[matches[0]]},
                   "MillStone's prompt wordings")  # fmt: skip


def wording_for(
    prompts: str, commit: str = DEFAULT_COMMIT, checkout: Path | str | None = None
) -> Wording:
    """The wording a run uses: the authors' (read from their file at `commit`, from `checkout`
    or the cache or fetched once) or stancelab's."""
    check_source(prompts)
    if prompts == "stancelab":
        return STANCELAB_WORDING
    release = pinned_release(commit)
    local = Path(checkout) if checkout else None
    try:
        source = artefact_text(release, PROMPT_BUILDER, local)
    except ArtefactsUnavailable as error:
        raise ArtefactsUnavailable(f"{error}; {FALLBACK}.") from None
    return authors_wording(source, f"{release.repository}@{release.commit}")


def check_source(prompts: str) -> None:
    if prompts not in PROMPT_SOURCES:
        raise StancelabError(f"--prompts must be one of {', '.join(PROMPT_SOURCES)}, not "
                             f"'{prompts}'.")  # fmt: skip


def check_available(prompts: str, commit: str, checkout: Path | str | None) -> None:
    """Before a run: the authors' file at hand (read, cached or fetched) when the run uses
    their wording; one line naming `--authors-repo`, the network and `--prompts stancelab`."""
    if prompts == "authors":
        ensure_release(pinned_release(commit), Path(checkout) if checkout else None, FALLBACK)


class _Builder:
    """The pieces of the authors' prompt builder, found in its syntax tree."""

    def __init__(self, source: str) -> None:
        tree = ast.parse(source)
        self.functions = {node.name: node for node in ast.walk(tree)
                          if isinstance(node, ast.FunctionDef)}  # fmt: skip

    def function(self, name: str) -> ast.FunctionDef:
        if name not in self.functions:
            raise _unexpected(f"no function {name}")
        return self.functions[name]

    def assigned_strings(self, function: str) -> dict[str, str]:
        """Names bound to a string literal in a function."""
        return {node.targets[0].id: node.value.value for node in ast.walk(self.function(function))
                if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)}  # fmt: skip

    def appended_fstrings(self, function: str) -> list[ast.JoinedStr]:
        """The f-strings passed to `<list>.append(...)` in a function, in source order."""
        calls = [node for node in ast.walk(self.function(function))
                 if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                 and node.func.attr == "append" and node.args
                 and isinstance(node.args[0], ast.JoinedStr)]  # fmt: skip
        return [call.args[0] for call in sorted(calls, key=_position)]  # type: ignore[misc]

    def augmented(self, function: str) -> list[ast.expr]:
        """The values added with `+=` in a function, in source order."""
        nodes = [
            node for node in ast.walk(self.function(function)) if isinstance(node, ast.AugAssign)
        ]
        return [node.value for node in sorted(nodes, key=_position)]

    def join_strings(self, function: str) -> set[str]:
        """The strings `<string>.join(...)` is called on in a function."""
        return {node.func.value.value for node in ast.walk(self.function(function))
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "join" and isinstance(node.func.value, ast.Constant)}  # fmt: skip


def _position(node: ast.expr | ast.stmt) -> tuple[int, int]:
    return node.lineno, node.col_offset


def _unexpected(what: str) -> StancelabError:
    return StancelabError(f"MillStone's prompt builder is not laid out as expected ({what}).")


def _template(node: ast.JoinedStr, forms: tuple[str, str]) -> tuple[Part, ...]:
    """An f-string of `make_prompts` as parts: its literal text, the question `q`, the
    `evidence` and each drawn choice between the two answer-form orders."""
    parts: list[Part] = []
    for value in node.values:
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            parts.append(value.value)
        elif isinstance(value, ast.FormattedValue) and isinstance(value.value, ast.Name):
            slots = {"q": QUESTION, "evidence": EVIDENCE}
            if value.value.id not in slots:
                raise _unexpected(f"an f-string fills {value.value.id}")
            parts.append(slots[value.value.id])
        elif isinstance(value, ast.FormattedValue) and _draws_forms(value.value, forms):
            parts.append(FORMS)
        else:
            raise _unexpected("an f-string fills an unknown expression")
    return tuple(parts)


def _draws_forms(node: ast.expr, forms: tuple[str, str]) -> bool:
    """Whether `node` is `case_1 if random.random() < 0.5 else case_2` (case_1 names 'A'
    first), as stancelab draws the order of the forms."""
    return (isinstance(node, ast.IfExp) and isinstance(node.body, ast.Name)
            and isinstance(node.orelse, ast.Name) and (node.body.id, node.orelse.id) == forms
            and isinstance(node.test, ast.Compare) and isinstance(node.test.ops[0], ast.Lt)
            and isinstance(node.test.comparators[0], ast.Constant)
            and node.test.comparators[0].value == 0.5)  # fmt: skip


def _string(node: ast.expr, what: str) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    raise _unexpected(f"{what} is not a string")


def _citation_line_is_index_then_source(node: ast.expr) -> bool:
    """Whether the citation line is `f"{cite['index']} {cite['citation']}\\n"`, the form of the
    `[n] source` lines the corpus keeps per argument (`corpus.cited_sources`)."""
    if not isinstance(node, ast.JoinedStr):
        return False
    shape: list[Any] = []
    for value in node.values:
        if isinstance(value, ast.FormattedValue) and isinstance(value.value, ast.Subscript):
            key = value.value.slice
            shape.append(key.value if isinstance(key, ast.Constant) else None)
        else:
            shape.append(value.value if isinstance(value, ast.Constant) else None)
    return shape == ["index", " ", "citation", "\n"]


def authors_wording(source: str, release: str) -> Wording:
    """The wording of the authors' prompt builder (the text of `c_generate_dataset.py`)."""
    builder = _Builder(source)
    names = builder.assigned_strings("make_prompts")
    if not {"case_1", "case_2"} <= names.keys():
        raise _unexpected("no answer forms case_1 and case_2")
    templates = [_template(node, ("case_1", "case_2"))
                 for node in builder.appended_fstrings("make_prompts")]  # fmt: skip
    baseline = [t for t in templates if EVIDENCE not in t]
    with_arguments = [t for t in templates if EVIDENCE in t]
    if len(baseline) != 1 or len(with_arguments) != 2:
        raise _unexpected("not one baseline prompt and two prompts with arguments")
    added = builder.augmented("add_evidence")
    if len(added) != 3 or not _citation_line_is_index_then_source(added[1]):
        raise _unexpected("add_evidence does not add a header, citation lines and a separator")
    joiners = builder.join_strings("read_evidence")
    if len(joiners) != 1:
        raise _unexpected("read_evidence joins its blocks with more than one string")
    return Wording(
        source="authors",
        release=release,
        baseline=baseline[0],
        with_arguments=(with_arguments[0], with_arguments[1]),
        answer_forms=(names["case_1"], names["case_2"]),
        citations_header=_string(added[0], "the citation header"),
        separator=_string(added[2], "the separator"),
        joiner=joiners.pop(),
    )
