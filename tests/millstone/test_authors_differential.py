"""stancelab's MillStone requests against the authors' own prompt builder, item by item.

Runs where `STANCELAB_MILLSTONE_AUTHORS` names a checkout of htried/millstone (at b3f0296, the
commit of the paper's results, or 6db0bcb with `STANCELAB_MILLSTONE_AUTHORS_COMMIT`). The
repository has no licence, so no copy of its code is kept with stancelab or in CI: there the
tests skip and say why. The authors' `scripts/c_generate_dataset.py` is imported from the
checkout (its cloud and dotenv imports stubbed where not installed) and its `make_prompts` run
on the published issue files (`../shared/external/millstone/data`), with the random choices
aligned to stancelab's: a stand-in for the `random` module answers each trial's samples from
stancelab's draw of that trial and its `random()` calls from stancelab's answer-form draws, and
the citations of one argument are listed in the order they are first cited (the authors' came
from a Python set, whose order varies from process to process). Then every request must be the
same: the messages, the answer cap and the temperature, for every provider they ran."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import types
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput, get_model

from stancelab.millstone.corpus import load_issues
from stancelab.millstone.dataset import MillstoneIssue, _rng, authors_samples
from stancelab.millstone.prompts import TEMPLATES
from stancelab.millstone.task import millstone
from stancelab.millstone.wording import DEFAULT_COMMIT, PROMPT_BUILDER, wording_for
from tests.helpers import output
from tests.shared_data import external

CHECKOUT_ENV = "STANCELAB_MILLSTONE_AUTHORS"
COMMIT_ENV = "STANCELAB_MILLSTONE_AUTHORS_COMMIT"
CASES = ("neither", "pro", "con", "all", "75pro", "75con")
# The authors' model ids (their utils.py) as Inspect names them, under a scripted provider
# (the answer cap goes by the model's name).
INSPECT_NAMES = {
    "gemini-2.0-flash-001": "google/gemini-2.0-flash-001",
    "publishers/anthropic/models/claude-3-5-haiku": "anthropic/claude-3-5-haiku-20241022",
    "publishers/anthropic/models/claude-opus-4": "anthropic/claude-opus-4-20250514",
    "publishers/meta/models/llama-3.1-8b-instruct-maas": "together/meta-llama/Llama-3.1-8B-Instruct",
    "publishers/meta/models/llama-3.1-405b-instruct-maas": "vertex/meta/llama-3.1-405b-instruct-maas",
    "gpt-4o-mini": "openai/gpt-4o-mini",
    "gpt-4o": "openai/gpt-4o",
    "grok-3": "grok/grok-3",
    "grok-3-mini": "grok/grok-3-mini",
}

Request = tuple[tuple[tuple[str, str], ...], int | None, float | None]


def _checkout() -> Path:
    folder = os.environ.get(CHECKOUT_ENV)
    if not folder:
        pytest.skip(
            f"{CHECKOUT_ENV} names no checkout of htried/millstone: the repository has no "
            "licence, so neither stancelab nor CI keeps a copy of its code. Set it to a "
            f"checkout at {DEFAULT_COMMIT[:7]} to compare the authors' prompt builder with "
            "stancelab's requests item by item."
        )
    return Path(folder)


def _stub_missing(names: tuple[str, ...], patch: pytest.MonkeyPatch) -> None:
    """Empty modules for the builder's imports that are not installed (it needs none of them
    to build prompts)."""
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError:
            parts = name.split(".")
            for depth in range(1, len(parts) + 1):
                module = ".".join(parts[:depth])
                if module not in sys.modules:
                    patch.setitem(sys.modules, module, types.ModuleType(module))
                if depth > 1:
                    setattr(sys.modules[".".join(parts[: depth - 1])], parts[depth - 1],
                            sys.modules[module])  # fmt: skip
    dotenv = sys.modules["dotenv"]
    if not hasattr(dotenv, "load_dotenv"):
        dotenv.load_dotenv = lambda *args, **kwargs: None  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def builder() -> Iterator[types.ModuleType]:
    """The authors' prompt builder, imported from the checkout."""
    checkout = _checkout()
    with pytest.MonkeyPatch.context() as patch:
        _stub_missing(("dotenv", "fsspec", "google.cloud.storage"), patch)
        patch.syspath_prepend(str(checkout))
        spec = importlib.util.spec_from_file_location("authors_builder", checkout / PROMPT_BUILDER)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        # a Python set's order varies per process: aligned to the order of first citation
        module.set = lambda items: list(dict.fromkeys(items))  # type: ignore[attr-defined]
        yield module


class AlignedRandom:
    """Stands in for the `random` module in the authors' builder: each trial's `sample` calls
    draw from stancelab's RNG of that trial, its `random` calls (two per prompt) from
    stancelab's answer-form RNG of each prompt."""

    def __init__(self, trials: list[tuple[Any, list[Any]]]) -> None:
        self._trials = iter(trials)
        self._next()

    def _next(self) -> None:
        self._draw, forms = next(self._trials, (None, []))
        self._calls = [rng for rng in forms for _ in range(2)]

    def sample(self, population: list[Any], k: int) -> list[Any]:
        return self._draw.sample(population, k)

    def random(self) -> float:
        value = self._calls.pop(0).random()
        if not self._calls:
            self._next()
        return value


def _sample_ids(issue: MillstoneIssue, case: str, trials: int) -> list[str]:
    """stancelab's sample ids in the order the authors' builder makes the prompts."""
    ids = []
    for neutral in TEMPLATES:
        for trial in range(1, trials + 1):
            stem = f"{issue.id}__{case}__t{neutral.number}"
            ids += ([f"{stem}__r{trial}"] if case == "neither"
                    else [f"{stem}__w{wording}__r{trial}" for wording in (1, 2)])  # fmt: skip
    return ids


def _aligned(issue: MillstoneIssue, case: str, trials: int, seed: int) -> AlignedRandom:
    plan = []
    for neutral in TEMPLATES:
        for trial in range(1, trials + 1):
            stem = f"{issue.id}__{case}__t{neutral.number}"
            if case == "neither":
                plan.append((None, [_rng(seed, f"{stem}__r{trial}", "forms")]))
            else:
                forms = [_rng(seed, f"{stem}__w{w}__r{trial}", "forms") for w in (1, 2)]
                plan.append((_rng(seed, f"{stem}__r{trial}", "draw"), forms))
    return AlignedRandom(plan)


def _authors_requests(builder: types.ModuleType, path: Path, issue: MillstoneIssue, model_id: str,
                      trials: int, seed: int) -> dict[str, dict[str, Any]]:  # fmt: skip
    """The authors' request for each of stancelab's sample ids of one issue file."""
    questions = builder.read_questions(str(path))
    requests: dict[str, dict[str, Any]] = {}
    for case in CASES:
        builder.random = _aligned(issue, case, trials, seed)
        made = builder.make_prompts(questions, model_id, str(path), N=trials,
                                    evidence_case=case, baseline=case == "neither")  # fmt: skip
        ids = _sample_ids(issue, case, trials)
        assert len(made) == len(ids)
        requests.update(zip(ids, made, strict=True))
    return requests


def _as_request(made: dict[str, Any]) -> Request:
    """(messages, answer cap, temperature) of a request in any of the authors' four formats."""
    if "prompt" in made:  # xAI: the prompt alone
        return ((("user", made["prompt"]),), None, None)
    body = made.get("body") or made["request"]
    if "contents" in body:  # Vertex Gemini
        messages = tuple(
            (m["role"], "".join(p["text"] for p in m["parts"])) for m in body["contents"]
        )
        config = body.get("generationConfig", {})
        return messages, config.get("maxOutputTokens"), config.get("temperature")
    messages = tuple((m["role"], m["content"]) for m in body["messages"])
    return messages, body.get("max_tokens"), body.get("temperature")


def _commit() -> str:
    return os.environ.get(COMMIT_ENV, DEFAULT_COMMIT)


def test_every_prompt_is_the_authors_on_every_published_issue_file(
    builder: types.ModuleType,
) -> None:
    """All 70 published issue files, one trial: 66 prompts each, the same text item by item."""
    words = wording_for("authors", _commit(), _checkout())  # also checks the pinned SHA-256
    folder = external("millstone", "data")
    issues = {issue.id: issue for issue in load_issues(folder)}
    compared, differing = 0, []
    for path in sorted(folder.glob("*.json")):
        issue = issues[path.stem.lower()]
        ours = {str(s.id): str(s.input) for s in authors_samples(issue, 1, 0, words)}
        theirs = _authors_requests(builder, path, issue, "gemini-2.0-flash-001", 1, 0)
        assert ours.keys() == theirs.keys()
        for sample_id, request in theirs.items():
            compared += 1
            if _as_request(request)[0] != (("user", ours[sample_id]),):
                differing.append(sample_id)
    assert compared == 70 * 66 and differing == []


def _scripted(name: str, seen: list[Request]) -> Any:
    def respond(messages: list[ChatMessage], tools: object, tool_choice: object,
                config: GenerateConfig) -> ModelOutput:  # fmt: skip
        seen.append((tuple((m.role, m.text) for m in messages), config.max_tokens,
                     config.temperature))  # fmt: skip
        return output("position <<A>>")

    return get_model(f"mockllm/{name}", custom_outputs=respond, memoize=False)


def test_each_provider_gets_the_authors_requests(
    builder: types.ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run with default options sends each model the authors' requests for its provider:
    the same messages, answer cap and temperature (none), two trials of one issue file."""
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))  # every request is made
    path = external("millstone", "data") / "drones.json"
    (tmp_path / "issues").mkdir()
    (tmp_path / "issues" / path.name).write_bytes(path.read_bytes())
    (issue,) = load_issues(tmp_path / "issues")
    for model_id in builder.model_api_spec_map:
        seen: list[Request] = []
        task = millstone(issues_file=str(tmp_path / "issues"), trials=2,
                         authors_commit=_commit(), authors_repo=str(_checkout()))  # fmt: skip
        inspect_eval(task, model=_scripted(INSPECT_NAMES[model_id], seen), display="none",
                     log_dir=str(tmp_path / "logs"))  # fmt: skip
        theirs = _authors_requests(builder, path, issue, model_id, 2, 0)
        assert len(seen) == 2 * 66
        assert Counter(seen) == Counter(_as_request(r) for r in theirs.values()), model_id
