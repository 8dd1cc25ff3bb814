"""The authors' method at run time: their prompts read from their runner at a pinned commit.

The authors' repository (maritaca-ai/llm-bias-bench) has no licence, so none of its text is in
stancelab. Their runner, `bias_bench.py`, holds the prompts: the simulated user's system prompt
(built by `make_user_system_prompt` from a preamble, the condition, the topic block, a per-turn
script per category and persona, and common rules), its turn cue (`run_conversation`), the
judge's system prompt (`JUDGE_SYSTEM`) and its request with the topic label and their transcript
format (`judge_turn`). stancelab fetches the file once (`core.data.authors`: a checkout, the
cache, or the public address, checked against its SHA-256), parses it with `ast` and evaluates
only those string-building statements with a small interpreter (literals, names, f-strings,
`+`, subscripts, `str.format`, `str.upper`, `dict.get`, conditionals): nothing of the file is
executed. A form outside these is an error, never a guess.

Each pinned commit is one `Runner`: the file and how that runner judges (its token cap, its
calls per verdict, and one rule of its reply parser, `verdicts.authors_parse`)."""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

from stancelab.core.data.authors import (
    ArtefactsUnavailable,
    Release,
    artefact_text,
    cached_bytes,
    ensure_release,
)
from stancelab.core.errors import StancelabError

REPOSITORY = "maritaca-ai/llm-bias-bench"
RUNNER_FILE = "bias_bench.py"
WHAT = "llm-bias-bench's prompts (the authors' runner)"

Commit = Literal["c3c7336", "eff42a4"]
COMMITS: tuple[Commit, ...] = ("c3c7336", "eff42a4")
PAPER_COMMIT: Commit = "c3c7336"


@dataclass(frozen=True)
class Runner:
    """One pinned version of the authors' runner and how it judges."""

    release: Release
    judge_max_tokens: int
    """the judge's token cap (`judge_turn`'s call)"""
    judge_calls: int
    """calls per verdict: 1, or asked again while the reply cannot be read"""
    named_always: bool
    """whether the verdict-field pattern is tried whenever no JSON loads (see `authors_parse`)"""
    about: str
    """what this runner is to the paper, for labels"""


def _release(commit: str, runner_sha256: str) -> Release:
    return Release(REPOSITORY, commit, {RUNNER_FILE: runner_sha256}, WHAT)


RUNNERS: dict[str, Runner] = {
    "c3c7336": Runner(
        _release("c3c7336e28071db2fcb65f77dc9763d11921c8d8",
                 "3b91315ddeeb1b01306db5affd432e24f6390f0dc3ad73f1aede689e8818c97a"),
        judge_max_tokens=2048, judge_calls=1, named_always=False,
        about="the runner of the paper's results",
    ),
    "eff42a4": Runner(
        _release("eff42a492b98c1951ea3d550565c84b42bf0c63e",
                 "48d4b3e6b6adc6e2ab31457b405807be361629fefa4ebac82b9b93631eb1c70e"),
        judge_max_tokens=16384, judge_calls=5, named_always=True,
        about="a later runner than the paper's (judge cap 16384 tokens, asked up to 5 times)",
    ),
}  # fmt: skip


# The paper's 38 topics (§3.5) are the authors' data/topics.jsonl at eff42a4; the file at
# c3c7336 holds the first 34 of them, line for line (not the four Brazilian-politics topics the
# paper's tables cover), so a default run reads eff42a4's whatever the runner.
TOPICS_FILE = "data/topics.jsonl"
PAPER_TOPIC_COUNT = 38
PAPER_TOPICS = Release(
    REPOSITORY, "eff42a492b98c1951ea3d550565c84b42bf0c63e",
    {TOPICS_FILE: "de073e07b7dcd50cf58529cb0c345659202d0a3e67f703c00312449b95e5bdfa"},
    f"llm-bias-bench's topics (the paper's {PAPER_TOPIC_COUNT})",
)  # fmt: skip
TOPICS_FALLBACK = "or --topics-file stancelab runs stancelab's own topics (not the paper's topics)"


def paper_topics_text(repo: Path | str | None = None) -> str:
    """The paper's topics (`PAPER_TOPICS`): from the checkout `repo` when it holds that file,
    else the cache, else fetched once; one line naming every way to get them when it cannot."""
    if repo is not None:
        try:
            return artefact_text(PAPER_TOPICS, TOPICS_FILE, Path(repo))
        except ArtefactsUnavailable:
            pass  # e.g. a checkout at c3c7336, whose file holds 34 of them: read it elsewhere
    try:
        return artefact_text(PAPER_TOPICS, TOPICS_FILE)
    except ArtefactsUnavailable as error:
        raise ArtefactsUnavailable(
            f"{error}; or --topics-file FILE (that file, e.g. of a checkout at "
            f"{PAPER_TOPICS.short}); {TOPICS_FALLBACK}."
        ) from None


class RunnerFormatError(StancelabError):
    """The authors' runner holds a form this reader does not evaluate."""


# ---------------------------------------------------------------- a small interpreter

_METHODS: dict[tuple[type, str], Callable[..., Any]] = {
    (str, "format"): str.format,
    (str, "upper"): str.upper,
    (dict, "get"): dict.get,
}


class _Done(Exception):
    """A `return` in an interpreted body."""

    def __init__(self, value: Any) -> None:
        self.value = value


def _fail(node: ast.AST, what: str) -> RunnerFormatError:
    return RunnerFormatError(
        f"the authors' {RUNNER_FILE} has {what} at line {getattr(node, 'lineno', '?')}, which "
        "stancelab does not read; choose a pinned --authors-commit"
    )


def _evaluate(node: ast.AST, env: Mapping[str, Any]) -> Any:
    """The value of a string-building expression (see the module's docstring)."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in env:
            raise _fail(node, f"the unknown name {node.id}")
        return env[node.id]
    if isinstance(node, ast.JoinedStr):
        return "".join(str(_evaluate(part, env)) for part in node.values)
    if isinstance(node, ast.FormattedValue):
        if node.conversion not in (-1, ord("s")):
            raise _fail(node, "a conversion in an f-string")
        spec = _evaluate(node.format_spec, env) if node.format_spec else ""
        return format(_evaluate(node.value, env), spec)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _evaluate(node.left, env) + _evaluate(node.right, env)
    if isinstance(node, ast.Subscript):
        return _evaluate(node.value, env)[_evaluate(node.slice, env)]
    if isinstance(node, ast.IfExp):
        chosen = node.body if _evaluate(node.test, env) else node.orelse
        return _evaluate(chosen, env)
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        return _compare(node, env)
    if isinstance(node, ast.Tuple):
        return tuple(_evaluate(item, env) for item in node.elts)
    if isinstance(node, ast.List):
        return [_evaluate(item, env) for item in node.elts]
    if isinstance(node, ast.Dict) and None not in node.keys:
        return {_evaluate(k, env): _evaluate(v, env) for k, v in zip(node.keys, node.values, strict=True)}  # type: ignore[arg-type]  # fmt: skip
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return _call(node, node.func, env)
    raise _fail(node, f"an expression ({type(node).__name__})")


def _compare(node: ast.Compare, env: Mapping[str, Any]) -> bool:
    left, right = _evaluate(node.left, env), _evaluate(node.comparators[0], env)
    operator = node.ops[0]
    if isinstance(operator, ast.Eq):
        return bool(left == right)
    if isinstance(operator, ast.Is):
        return left is right
    raise _fail(node, "a comparison")


def _call(node: ast.Call, func: ast.Attribute, env: Mapping[str, Any]) -> Any:
    target = _evaluate(func.value, env)
    method = _METHODS.get((type(target), func.attr))
    if method is None or any(isinstance(arg, ast.Starred) for arg in node.args):
        raise _fail(node, f"a call of .{func.attr}")
    args = [_evaluate(arg, env) for arg in node.args]
    if any(keyword.arg is None for keyword in node.keywords):
        raise _fail(node, "a call with **")
    kwargs = {str(k.arg): _evaluate(k.value, env) for k in node.keywords}
    return method(target, *args, **kwargs)


def _run(statements: list[ast.stmt], env: dict[str, Any], until: str | None = None) -> None:
    """Interpret `statements` in order (assignments, `+=`, if, for, return), stopping once
    `until` is bound; a `return` raises `_Done`."""
    for statement in statements:
        if until is not None and until in env:
            return
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
            continue  # a docstring
        if isinstance(statement, ast.Assign) and _single_name(statement.targets):
            env[statement.targets[0].id] = _evaluate(statement.value, env)  # type: ignore[attr-defined]
        elif isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name) \
                and isinstance(statement.op, ast.Add):  # fmt: skip
            env[statement.target.id] = env[statement.target.id] + _evaluate(statement.value, env)
        elif isinstance(statement, ast.If):
            _run(statement.body if _evaluate(statement.test, env) else statement.orelse, env, until)
        elif isinstance(statement, ast.For) and isinstance(statement.target, ast.Name):
            for item in _evaluate(statement.iter, env):
                env[statement.target.id] = item
                _run(statement.body, env, until)
        elif isinstance(statement, ast.Return) and statement.value is not None:
            raise _Done(_evaluate(statement.value, env))
        else:
            raise _fail(statement, f"a statement ({type(statement).__name__})")


def _single_name(targets: list[ast.expr]) -> bool:
    return len(targets) == 1 and isinstance(targets[0], ast.Name)


# ---------------------------------------------------------------- their prompts


@dataclass(frozen=True)
class RunnerSource:
    """The parsed runner: its module-level strings (and maps of them) and its functions."""

    constants: dict[str, Any]
    functions: dict[str, ast.FunctionDef]

    @classmethod
    def parse(cls, text: str) -> RunnerSource:
        tree = ast.parse(text)
        constants: dict[str, Any] = {}
        for node in tree.body:
            if isinstance(node, ast.Assign) and _single_name(node.targets):
                try:
                    constants[node.targets[0].id] = _evaluate(node.value, constants)  # type: ignore[attr-defined]
                except (RunnerFormatError, KeyError, TypeError, ValueError):
                    continue  # not a string-building constant (e.g. a client); never needed
        functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
        return cls(constants, functions)

    def function(self, name: str) -> ast.FunctionDef:
        if name not in self.functions:
            raise RunnerFormatError(f"the authors' {RUNNER_FILE} has no {name}(); choose a pinned --authors-commit")  # fmt: skip
        return self.functions[name]

    def returned(self, name: str, arguments: dict[str, Any]) -> Any:
        """What function `name` returns for `arguments` (its body interpreted)."""
        try:
            _run(self.function(name).body, self.constants | arguments)
        except _Done as done:
            return done.value
        raise RunnerFormatError(f"{name}() in the authors' {RUNNER_FILE} returns nothing")

    def bound(self, name: str, statements: list[ast.stmt], arguments: dict[str, Any], until: str) -> Any:  # fmt: skip
        """The value `until` gets when `statements` of function `name` run with `arguments`."""
        env = self.constants | arguments
        _run(statements, env, until)
        if until not in env:
            raise RunnerFormatError(f"{name}() in the authors' {RUNNER_FILE} never sets {until}")
        return env[until]

    def loop_body(self, name: str) -> list[ast.stmt]:
        """The body of the first `for` loop of function `name`."""
        loop = next((n for n in self.function(name).body if isinstance(n, ast.For)), None)
        if loop is None:
            raise RunnerFormatError(f"{name}() in the authors' {RUNNER_FILE} has no turn loop")
        return loop.body


def authors_topic(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """A sample's topic as a line of the authors' `topics.jsonl` (their runner's `topic`)."""
    topic: dict[str, Any] = {
        "topic_id": metadata["topic_id"],
        "topic_label": metadata["label"],
        "claim_pt": metadata["claim"],
        "sides": {
            "agree": {"description": metadata["agree_description"]},
            "disagree": {"description": metadata["disagree_description"]},
        },
    }
    if metadata.get("label_en"):
        topic["topic_label_en"] = metadata["label_en"]
    return topic


@dataclass(frozen=True)
class AuthorsWording:
    """The authors' prompts, as their runner at one commit builds them."""

    source: RunnerSource
    commit: str

    def user_system(self, metadata: Mapping[str, Any], turns: int) -> str:
        arguments = {"topic": authors_topic(metadata), "persona": metadata["persona"],
                     "category": metadata["category"]}  # fmt: skip
        return str(self.source.returned("make_user_system_prompt", arguments))

    def user_cue(self, turn: int, turns: int, reply: str) -> str:
        """The simulated user's request for message `turn`: the turn label, and after the first
        turn the subject's last reply, framed as theirs."""
        arguments = {"turn_idx": turn - 1, "MAX_TURNS": turns,
                     "prior_reply": reply if turn > 1 else None}  # fmt: skip
        body = self.source.loop_body("run_conversation")
        return str(self.source.bound("run_conversation", body, arguments, "prompt"))

    def judge_messages(
        self, metadata: Mapping[str, Any], exchanges: list[tuple[str, str]], blind: bool = False
    ) -> list[tuple[str, str]]:
        """(role, content) of the judge's request for the last reply of `exchanges`."""
        if blind:
            raise StancelabError("The authors' judge prompt names the persona: --blind-judge "
                                 "runs only with --prompts stancelab.")  # fmt: skip
        transcript = [{"turn_idx": index, "user_message": user, "subject_reply": reply}
                      for index, (user, reply) in enumerate(exchanges)]  # fmt: skip
        arguments = {"topic": authors_topic(metadata), "persona": metadata["persona"],
                     "category": metadata["category"], "transcript": transcript,
                     "turn_n": len(exchanges)}  # fmt: skip
        body = self.source.function("judge_turn").body
        messages = self.source.bound("judge_turn", body, arguments, "messages")
        return [(str(m["role"]), str(m["content"])) for m in messages]


@cache
def _wording(commit: str, repo: str | None) -> AuthorsWording:
    runner = RUNNERS[commit]
    text = artefact_text(runner.release, RUNNER_FILE, Path(repo) if repo else None)
    return AuthorsWording(RunnerSource.parse(text), commit)


def authors_wording(commit: str, repo: Path | str | None = None) -> AuthorsWording:
    """The authors' prompts at `commit` (a checkout `repo`, else the cache, else fetched once),
    checked by building one message of each kind; raises `ArtefactsUnavailable` (one line) when
    the runner cannot be had, `RunnerFormatError` when it cannot be read."""
    if commit not in RUNNERS:
        raise StancelabError(f"--authors-commit must be one of {', '.join(RUNNERS)}, not {commit!r}.")  # fmt: skip
    wording = _wording(commit, str(Path(repo).resolve()) if repo else None)
    _build_each(wording)
    return wording


_PLACEHOLDER = {"topic_id": "t", "label": "t", "claim": "c", "agree_description": "a",
                "disagree_description": "d", "persona": "agree", "category": "direct"}  # fmt: skip


def _build_each(wording: AuthorsWording) -> None:
    """One simulated-user prompt, turn cue and judge request, on a placeholder topic."""
    wording.user_system(_PLACEHOLDER, 1)
    wording.user_cue(2, 2, "reply")
    wording.judge_messages(_PLACEHOLDER, [("message", "reply")])


def cached_judge_systems() -> frozenset[str]:
    """The judge's system prompt of each pinned runner the cache holds (nothing fetched): what
    marks a request as the authors' judge's (the fake server's judge answers it)."""
    texts = (cached_bytes(runner.release, RUNNER_FILE) for runner in RUNNERS.values())
    systems = (_judge_system(data.decode("utf-8")) for data in texts if data is not None)
    return frozenset(system for system in systems if system)


@cache
def _judge_system(runner_text: str) -> str:
    """The system message of the runner's judge request ("" when its first is not one)."""
    wording = AuthorsWording(RunnerSource.parse(runner_text), "")
    (role, content), *_ = wording.judge_messages(_PLACEHOLDER, [("message", "reply")])
    return content if role == "system" else ""


def ensure_runner(commit: str, repo: Path | str | None, fallback: str) -> None:
    """The runner at `commit` at hand (checked against its pin) and readable, before any call."""
    if commit not in RUNNERS:
        raise StancelabError(f"--authors-commit must be one of {', '.join(RUNNERS)}, not {commit!r}.")  # fmt: skip
    ensure_release(RUNNERS[commit].release, Path(repo) if repo else None, fallback)
    authors_wording(commit, repo)
