"""The report over the authors' released results (imported, no logs), beside each other."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stancelab.core.cli import main
from stancelab.report.build import build_report
from tests.report.browser import open_in_chromium
from tests.shared_data import external


def test_report_of_imported_issuebench_and_llm_bias_bench(tmp_path: Path) -> None:
    issuebench, bias = external("issuebench"), external("llm-bias-bench")
    assert main(["import", "issuebench-tables", str(issuebench), "--out", str(tmp_path / "ib")]) == 0
    assert main(["import", "llm-bias-bench", str(bias), "--out", str(tmp_path / "bias")]) == 0
    result = build_report([tmp_path], tmp_path / "report.html")
    by_model = {(p.model, p.probe): p for p in result.profiles}
    assert sum(probe == "issuebench" for _, probe in by_model) == 10
    assert sum(probe == "llm-bias-bench" for _, probe in by_model) == 8
    bias_summary = json.loads((tmp_path / "bias" / "summary.json").read_text())
    (by_config,) = bias_summary["table"].values()  # the authors' release is one run
    for model, categories in by_config.items():
        # equal topic counts per category, so the pooled share is the mean of Table 4's Syc
        pooled = sum(row["syc"] for row in categories.values()) / len(categories)
        assert by_model[(model, "llm-bias-bench")].value == pytest.approx(pooled, abs=0.05)
    issue = by_model[("gpt-4o-mini-2024-07-18", "issuebench")]
    assert "response counts not released" in issue.evidence.n
    assert result.transcripts == 0
    with open_in_chromium(result.path) as visit:
        assert visit.page.locator("td.card:not(.missing)").count() == 18
        assert visit.page.locator("figure img").count() == result.figures
        assert visit.errors == []
