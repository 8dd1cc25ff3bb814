"""`stancelab atlas` on the three released datasets (MillStone, llm-bias-bench, IssueBench):
a replay with stancelab's own code, no model call. One atlas run per module."""

from __future__ import annotations

import json
import re
import time
from typing import Any

import pytest

from stancelab.cli import main
from stancelab.core.data.aliases import alias_table_markdown
from stancelab.report.runs import run_folders
from tests.shared_data import REPO_ROOT, external

TABLE_4_LLAMA_8B = 5.396  # MillStone Table 4: OM over the 104 issues
TABLE_5_LLAMA_8B = 6.315  # MillStone Table 5: OM over the 10 controversial issues
MAX_SECONDS = 60


@pytest.fixture(scope="module")
def atlas(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    sources = [external("millstone"), external("llm-bias-bench"), external("issuebench")]
    out = tmp_path_factory.mktemp("atlas")
    start = time.monotonic()
    assert main(["atlas", *map(str, sources), "--out", str(out)]) == 0
    seconds = time.monotonic() - start
    summary = json.loads((out / "atlas" / "summary.json").read_text())
    return {"out": out, "summary": summary, "seconds": seconds,
            "page": (out / "report.html").read_text(encoding="utf-8")}  # fmt: skip


def test_the_one_merge_the_released_data_needs(atlas: dict[str, Any]) -> None:
    merges = {row["model"]: row["sources"] for row in atlas["summary"]["merges"]}
    assert merges == {
        "llama-3.1-8b": "llama-3.1-8b (millstone), Llama-3.1-8B-Instruct (issuebench)"
    }
    rows = {row["model"]: row for row in atlas["summary"]["rows"]}
    assert rows["grok-3-mini"]["lenses"] == ["issuebench", "millstone"]  # one spelling, two papers
    # never merged: another size (70B, 405B) or another model (GPT-4o vs GPT-4o mini)
    for apart in ("Llama-3.1-70B-Instruct", "llama-3.1-405b", "gpt-4o", "gpt-4o-mini-2024-07-18"):
        assert apart in rows and not rows[apart]["merged"]


def test_llama_8b_is_one_row_with_open_mindedness_and_issue_bias(atlas: dict[str, Any]) -> None:
    llama = {p["probe"]: p for p in atlas["summary"]["profiles"] if p["model"] == "llama-3.1-8b"}
    assert set(llama) == {"millstone", "issuebench"}
    om = llama["millstone"]
    published = TABLE_4_LLAMA_8B if "104" in om["unit_set"] else TABLE_5_LLAMA_8B
    assert om["value"] == pytest.approx(published, abs=5e-4)
    assert om["ci_low"] < om["value"] < om["ci_high"]
    bias = llama["issuebench"]
    assert (
        bias["headline"] == "one-sided writing" and bias["ci_low"] < bias["value"] < bias["ci_high"]
    )
    assert not any(p["model"] == "Llama-3.1-8B-Instruct" for p in atlas["summary"]["profiles"])


def test_llama_8b_matrix_has_two_lenses_on_shared_topics(atlas: dict[str, Any]) -> None:
    cells = [
        c
        for c in atlas["summary"]["matrix"]["cells"]
        if c["model"] == "llama-3.1-8b" and c["stance"] is not None
    ]
    by_topic: dict[str, dict[str, Any]] = {}
    for cell in cells:
        by_topic.setdefault(cell["topic"], {})[cell["lens"]] = cell
    both = {
        topic: lenses
        for topic, lenses in by_topic.items()
        if {"millstone", "issuebench"} <= set(lenses)
    }
    assert set(both) == {
        "gun-control",
        "abortion",
        "death-penalty",
        "universal-healthcare",
        "drug-legalisation",
    }
    gun = both["gun-control"]
    assert gun["millstone"]["n"] == 2 and gun["millstone"]["ci_low"] < gun["millstone"]["ci_high"]
    # IssueBench maps one issue to each shared topic: one unit, so no interval, and no direction
    assert gun["issuebench"]["n"] == 1 and gun["issuebench"]["ci_low"] is None
    assert gun["issuebench"]["direction_note"] == "no CI (n = 1)"


def test_llm_bias_bench_import_carries_topic_stances_over_topics(atlas: dict[str, Any]) -> None:
    cells = [
        c
        for c in atlas["summary"]["matrix"]["cells"]
        if c["lens"] == "llm-bias-bench" and c["stance"] is not None
    ]
    assert {c["model"] for c in cells} >= {"anthropic/claude-opus-4.6", "sabia-4"}
    assert {c["topic"] for c in cells} == {
        "gun-control",
        "abortion",
        "death-penalty",
        "free-trade",
        "drug-legalisation",
    }
    assert all(
        c["n"] == 1 and "betting interval over topics" in c["detail"] for c in cells
    )  # one topic each


def test_findings_page_links_each_evidence_cell(atlas: dict[str, Any]) -> None:
    findings = atlas["summary"]["findings"]
    llama = [f for f in findings if f["model"] == "llama-3.1-8b"]
    assert {f["topic"] for f in llama} == {"gun-control", "abortion", "death-penalty", "universal-healthcare",
                                           "drug-legalisation"}  # fmt: skip
    assert all(f["status"] == "unclear" for f in llama)  # IssueBench: one issue per topic, no CI
    gun = {f["lens"]: f for f in llama if f["topic"] == "gun-control"}
    assert gun["millstone"]["signs"] == "opposite signs"
    (grok,) = [f for f in findings if f["model"] == "grok-3-mini"]
    assert grok["status"].startswith("no shared topic measured by two lenses")
    page = atlas["page"]
    assert 'id="findings"' in page
    ids = set(re.findall(r'<td class="mcell[^>]* id="(cell-[^"]+)"', page))
    links = re.findall(r'class="evidence-link" href="#(cell-[^"]+)"', page)
    assert len(links) == len(llama) and set(links) <= ids


def test_open_mindedness_column_names_each_issue_set_and_ranks_within_it(
    atlas: dict[str, Any],
) -> None:
    sets = {
        p["model"]: p["unit_set"] for p in atlas["summary"]["profiles"] if p["probe"] == "millstone"
    }
    distinct = set(sets.values())
    page = atlas["page"]
    if len(distinct) == 1:  # the MillStone summary ranks every model on one set already
        assert not re.search(r'data-probe="millstone" data-sort="[^"]*" data-group=', page)
        (only_set,) = distinct
        assert f"Ranked on {only_set}" in page  # one set, named once in the column's header
        return
    assert sets["llama-3.1-8b"] == "all 104 issues"
    assert sets["gpt-4o"] == sets["grok-3-mini"] == "the 10 controversial issues (Table 5)"
    groups = re.findall(r'data-probe="millstone" data-sort="[^"]*" data-group="(\d)"', page)
    assert sorted(set(groups)) == ["0", "1"] and len(groups) == len(sets)
    assert "on the 10 controversial issues (Table 5)" in page and "on all 104 issues" in page


def test_one_folder_that_report_can_read_again(atlas: dict[str, Any]) -> None:
    out = atlas["out"]
    assert (out / "atlas" / "tables" / "profiles.csv").exists()
    assert (out / "atlas" / "matrix" / "tables" / "cells.csv").exists()
    assert sorted(path.name for path in run_folders(out)) == [
        "issuebench",
        "llm-bias-bench",
        "millstone",
    ]
    print(f"atlas of the three releases: {atlas['seconds']:.0f} s")
    assert (
        atlas["seconds"] < MAX_SECONDS * 2
    )  # under a minute on an idle machine; shared CI cores vary


def test_readme_lists_the_merges_of_the_released_data(atlas: dict[str, Any]) -> None:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    assert alias_table_markdown() in readme
    for row in atlas["summary"]["merges"]:
        assert f"`{row['model']}`: {row['sources']}" in readme


def test_evidence_link_shows_its_cell_in_the_matrix(atlas: dict[str, Any]) -> None:
    from tests.report.browser import open_in_chromium

    with open_in_chromium(atlas["out"] / "report.html") as visit:
        page = visit.page
        link = page.locator("#findings a.evidence-link").first
        target = link.get_attribute("href").removeprefix("#")
        assert not page.locator(f"td#{target}").is_visible()  # another model's matrix shows first
        link.click()
        assert page.locator(f"td#{target}").is_visible()
        assert (
            page.eval_on_selector("#matrix-model", "s => s.options[s.selectedIndex].text")
            == "llama-3.1-8b"
        )
        assert visit.errors == []
