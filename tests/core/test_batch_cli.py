"""`--batch` for every probe and role, through the fake server's Files and Batches API (as
Inspect's OpenAI batcher calls it): no call goes to the chat endpoint, and the report prices
the run at the batch price."""

from __future__ import annotations

from pathlib import Path

import pytest

from stancelab.cli import main
from stancelab.report.cost import token_usage
from stancelab.testing.fake_openai import FakeOpenAIServer

TICK = "0.1"  # Inspect's batch tick and send delay: seconds, not its default 15


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> FakeOpenAIServer:
    """The fake server as OpenAI itself: `openai/...` models, whose provider batches."""
    with FakeOpenAIServer() as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "local")
        monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
        yield fake


def test_a_millstone_run_with_batch_makes_every_call_through_the_batch_api(
    server: FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    out = tmp_path / "run"
    code = main(["run", "millstone", "--model", "openai/fake-batch", "--limit", "1", "--trials", "1",
                 "--prompts", "stancelab", "--batch", "--batch-tick", TICK, "--display", "none",
                 "--out", str(out)])  # fmt: skip
    printed = capsys.readouterr().out
    assert code == 0 and (out / "summary.json").exists()
    # 1 issue x 66 prompts, one trial each: all answered in batches, none one by one
    assert server.stats.requests == 0 and server.stats.batched == 66 == server.stats.paid_calls
    assert server.stats.batches >= 1
    assert "millstone: 1 (subject 1)" in printed and "batch turnaround: up to 1 x 24 h" in printed
    (row,) = token_usage([("millstone", out)], {"openai/fake-batch": (1.0, 2.0)}).to_dict("records")
    # --price with OpenAI's documented batch discount: half of $1 in, $2 out per 1M tokens
    assert row["batch"] and "OpenAI's documented batch discount" in row["price"]
    assert row["usd"] == pytest.approx((row["input_tokens"] + 2 * row["output_tokens"]) / 2e6)


def test_batch_reaches_a_helper_role_bound_to_another_model(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    code = main(["run", "even-handedness", "--model", "openai/fake-subject", "--role",
                 "grader=openai/fake-grader", "--limit", "1", "--batch", "--batch-tick", TICK,
                 "--display", "none", "--out", str(tmp_path / "run")])  # fmt: skip
    assert code == 0 and server.stats.requests == 0
    # the two answers, then one pairwise and four answer grades
    assert server.batch_api.models == {"fake-subject": 2, "fake-grader": 5}
    # the report prices both roles at the batch price
    usage = token_usage([("even-handedness", tmp_path / "run")])
    assert set(usage["role"]) == {"subject", "grader"} and usage["batch"].all()
