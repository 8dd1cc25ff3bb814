"""The subjective gap's "not measured" reason is the true one, through `stancelab run` on a
scripted OpenAI-compatible server: every rating unreadable says so, and "a --shared-topics run"
is named only when the run rated contested claims alone; and the CLI's delta table prints
enough digits to show a narrow interval's width."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stancelab.cli import main
from stancelab.prior_prejudice.results import format_summary
from stancelab.testing.fake_openai import FakeOpenAIServer
from tests.prior_prejudice.scripted import MIXED_CLAIMS, claims_file

MODEL = "openai-api/fake/rater"
ONE_RUN = ["--templates", "T1", "--no-arguments", "--no-negations", "--no-probe", "--no-cross-task"]
# (claims, the server's reply, the reason expected)
CASES = {
    "every rating unreadable": (MIXED_CLAIMS[1:], "I would rather not rate that.",
                                "not measured: 4 of 4 ratings unreadable"),
    "no subjective claim in the file": (MIXED_CLAIMS[:1], "4",
                                        "not measured: no subjective claim rated"),
}  # fmt: skip


@pytest.mark.parametrize("case", CASES)
def test_the_reason_a_gap_is_not_measured_is_true(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    case: str,
) -> None:
    claims, reply, reason = CASES[case]
    path = claims_file(tmp_path / "claims.jsonl", claims)
    out = tmp_path / "run"
    with FakeOpenAIServer(reply=lambda messages: reply) as server:
        monkeypatch.setenv("FAKE_BASE_URL", server.base_url)
        monkeypatch.setenv("FAKE_API_KEY", "local")
        argv = ["run", "prior-prejudice", "--model", MODEL, "--display", "none",
                "--claims-file", str(path), *ONE_RUN, "--out", str(out)]  # fmt: skip
        assert main(argv) == 0
    printed = capsys.readouterr().out
    headline = json.loads((out / "summary.json").read_text())["subjective_prejudice"][MODEL]
    assert headline["not_measured"] == reason
    assert reason in printed and "--shared-topics" not in printed


@pytest.mark.parametrize(
    ("interval", "printed"),
    [((-4.6001, -4.5971), "-4.599 [-4.600,-4.597]"), ((-4.9, -4.3), "-4.60 [-4.90,-4.30]")],
)
def test_a_narrow_interval_prints_enough_digits_to_show_its_width(
    interval: tuple[float, float], printed: str
) -> None:
    """The CLI's delta table: an interval 0.003 wide is not [-4.60,-4.60]."""
    low, high = interval
    estimate = {"value": -4.5986, "ci_low": low, "ci_high": high, "n": 12}
    summary = {"deltas": {MODEL: {"subjective": {"T1": {"bare": estimate}}}},
               "rating_sources": {}}  # fmt: skip
    assert printed in format_summary(summary)
