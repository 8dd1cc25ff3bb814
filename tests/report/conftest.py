"""A report built once from real Inspect runs of all five probes with a scripted model whose
every answer is hostile HTML."""

from __future__ import annotations

import pytest
from inspect_ai.model import ChatMessage

from stancelab.demo import run_demo
from stancelab.report.build import ReportResult
from tests.helpers import own_cache, scripted_chat_model

HOSTILE = (
    '<script>window.__xss = 1</script><img src="x" onerror="window.__xss = 2">'
    '<a href="javascript:window.__xss = 3" onclick="window.__xss = 4">click</a>'
    '" onmouseover="window.__xss = 5" data-x=" I choose position A.'
)
TINY = {
    # stancelab's own prompts: CI has no copy of the authors' MillStone prompt builder, nor
    # IssueBench's files in the cache
    "millstone": {"limit": 1, "trials": 1, "prompts": "stancelab"},
    "conviction": {"limit": 1, "samples": 2, "argument_sets": 1},
    "llm-bias-bench": {"limit": 1, "turns": 1, "categories": "direct"},
    "issuebench": {"limit": 1, "n_templates": 2, "framings": "neutral,pro", "prompts": "stancelab"},
    "prior-prejudice": {"limit": 1, "templates": "T1", "probe": False, "cross_task": False},
    "even-handedness": {"limit": 1, "max_tokens": 16},
}


def hostile(messages: list[ChatMessage]) -> str:
    return HOSTILE


@pytest.fixture(scope="session")
def report(tmp_path_factory: pytest.TempPathFactory) -> ReportResult:
    out = tmp_path_factory.mktemp("hostile")
    model, _ = scripted_chat_model(hostile, "mockllm/hostile")
    with own_cache(out / "cache"):
        return run_demo(out / "runs", [model], settings=TINY)
