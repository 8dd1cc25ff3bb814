"""The report over the authors' released results (imported, no logs), beside each other."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stancelab.cli import main
from stancelab.probes import PROBES
from stancelab.report.build import build_report
from tests.report.browser import open_in_chromium
from tests.shared_data import REPO_ROOT, external

SCREENSHOTS = REPO_ROOT / "test-output"
MAX_FRONT_HEIGHT = 2000


def test_report_of_imported_issuebench_and_llm_bias_bench(tmp_path: Path) -> None:
    issuebench, bias = external("issuebench"), external("llm-bias-bench")
    assert (
        main(["import", "issuebench-tables", str(issuebench), "--out", str(tmp_path / "ib")]) == 0
    )
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
        assert visit.page.locator("div.card").count() == 18
        assert visit.page.locator("figure img").count() == result.figures
        assert visit.errors == []


def test_front_table_of_the_three_released_probes(tmp_path: Path) -> None:
    for source, folder in (("millstone", "millstone"), ("issuebench-tables", "issuebench"),
                           ("llm-bias-bench", "llm-bias-bench")):  # fmt: skip
        assert main(["import", source, str(external(folder)), "--out", str(tmp_path / folder)]) == 0
    result = build_report([tmp_path], tmp_path / "report.html")
    models = sorted({p.model for p in result.profiles})
    assert len(models) >= 15
    with open_in_chromium(result.path) as visit:
        page = visit.page
        page.set_viewport_size({"width": 1400, "height": 900})
        rows = page.locator("#front-table tbody tr")
        assert rows.count() == len(models)
        assert page.locator("#front-table thead th").count() == 1 + len(
            PROBES
        )  # model + one per lens
        assert page.locator("#front-table td.lens:not(.empty)").count() == len(result.profiles)
        height = page.eval_on_selector("section#profiles", "s => s.getBoundingClientRect().height")
        SCREENSHOTS.mkdir(exist_ok=True)
        page.locator("section#profiles").screenshot(path=str(SCREENSHOTS / "front-table.png"))
        print(f"front page screenshot: {SCREENSHOTS / 'front-table.png'} ({height:.0f} px high)")
        assert height < MAX_FRONT_HEIGHT

        def first_models() -> list[str]:
            return page.eval_on_selector_all(
                "#front-table tbody tr:not([hidden]) th.model",
                "cells => cells.map(c => c.getAttribute('data-sort'))",
            )

        assert first_models() == models
        page.click("#front-table thead th[data-probe='millstone']")
        ranked = first_models()
        om = {p.model: p.value for p in result.profiles if p.probe == "millstone"}
        sets = sorted({p.unit_set for p in result.profiles if p.probe == "millstone"})
        group = {p.model: sets.index(p.unit_set) for p in result.profiles if p.probe == "millstone"}
        # highest OM first, ranked only within an issue set (104 issues vs the 10 controversial)
        assert ranked[: len(om)] == sorted(om, key=lambda m: (group[m], -om[m]))
        assert ranked != models
        page.click("#front-table thead th[data-probe='millstone']")
        assert first_models()[: len(om)] == sorted(
            om, key=lambda m: (group[m], om[m])
        )  # empty cells stay last
        page.fill("#model-filter", "llama")
        assert all("llama" in m.lower() for m in first_models()) and first_models()
        assert visit.errors == []
