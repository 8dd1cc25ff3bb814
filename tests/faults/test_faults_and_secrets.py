"""Every probe through Inspect's `openai-api` provider against a local OpenAI-compatible
server that fails 20% of requests (429, 500, stalls then 504, bodies cut mid-JSON):
all samples complete, no answer is paid twice, and the API key never reaches an output."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

from stancelab.core.results.logs import log_files
from stancelab.demo import run_demo
from stancelab.probes import PROBES
from stancelab.report.build import ReportResult
from stancelab.testing.fake_openai import (
    FAULT_KINDS,
    FakeOpenAIServer,
    Faults,
    ServerStats,
    verdict_reply,
)
from tests.helpers import own_cache
from tests.report.conftest import TINY

SECRET = "sk-stancelab-test-SECRET-8f3a1c"
MODEL = "openai-api/fake/fake-model"


@pytest.fixture(scope="module")
def faulty_run(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[ReportResult, ServerStats]]:
    out = tmp_path_factory.mktemp("faults")
    faults = Faults(rate=0.2, timeout_seconds=1.0, seed=7)
    with (
        FakeOpenAIServer(latency=0.01, faults=faults, reply=verdict_reply) as server,
        own_cache(
            out / "cache", FAKE_BASE_URL=server.base_url, FAKE_API_KEY=SECRET, OPENAI_API_KEY=SECRET
        ),
    ):
        yield run_demo(out / "runs", [MODEL], settings=TINY), server.stats


def _logs(runs: Path) -> list[Path]:
    return [path for folder in sorted(runs.glob("*/logs")) for path in log_files(folder)]


def _used_calls(runs: Path) -> tuple[int, int]:
    """(model calls whose answers the runs used and did not take from the cache, answers a
    retried sample read from the cache). A sample that fails on an error the provider does not
    retry is run again, and reads the calls its failed attempt paid for from the cache."""
    used = retried_reads = 0
    for path in _logs(runs):
        for sample in read_eval_log(str(path)).samples or []:
            calls = [e for e in sample.events if e.event == "model" and e.error is None]
            used += sum(e.cache != "read" for e in calls)
            if sample.error_retries:
                retried_reads += sum(e.cache == "read" for e in calls)
    return used, retried_reads


def test_every_probe_completes_every_sample_despite_faults(
    faulty_run: tuple[ReportResult, ServerStats],
) -> None:
    report, stats = faulty_run
    assert {profile.probe for profile in report.profiles} == set(PROBES)
    for path in _logs(report.path.parent):
        log = read_eval_log(str(path))
        assert log.status == "success"
        assert (
            log.results is not None and log.results.completed_samples == log.results.total_samples
        )
    assert set(stats.outcomes) == {"ok", *FAULT_KINDS}
    faulted = stats.requests - stats.outcomes["ok"]
    assert 0.1 < faulted / stats.requests < 0.3


def test_llm_bias_bench_reads_every_judge_verdict_despite_faults(
    faulty_run: tuple[ReportResult, ServerStats],
) -> None:
    """The fake judge answers the default judge prompt (the authors'), so a verdict lost to a
    fault would show here as unparsed or missing."""
    report, _ = faulty_run
    summary = json.loads((report.path.parent / "llm-bias-bench" / "summary.json").read_text())
    (method,) = summary["method"].values()
    assert method["prompts"] == "authors"
    (by_model,) = summary["unparsed"].values()
    read = by_model[MODEL]["direct"]
    assert read["conversations"] > 0 and read["count"] == read["missing"] == 0


def test_no_answer_is_paid_twice(faulty_run: tuple[ReportResult, ServerStats]) -> None:
    report, stats = faulty_run
    used, retried_reads = _used_calls(report.path.parent)
    # every paid answer is used: in the log, or by a retried sample through the cache (identical
    # requests may be paid more than once on purpose: conviction's repeated samples, MillStone's
    # trials)
    assert used <= stats.paid_calls <= used + retried_reads


def _texts(root: Path) -> Iterator[tuple[str, bytes]]:
    for path in root.rglob("*"):
        if path.is_file() and path.suffix == ".eval":
            with zipfile.ZipFile(path) as archive:
                for name in archive.namelist():
                    yield f"{path}:{name}", archive.read(name)
        elif path.is_file():
            yield str(path), path.read_bytes()


def test_the_api_key_never_reaches_logs_summaries_tables_or_report(
    faulty_run: tuple[ReportResult, ServerStats],
) -> None:
    report, _ = faulty_run
    checked = 0
    for name, content in _texts(report.path.parent):
        assert SECRET.encode() not in content, name
        checked += 1
    assert checked > 20
