"""`stancelab demo` on the embedded model (tiny limits), its report opened in headless
Chromium offline: no console errors, every section and image present, under 20 MB."""

from __future__ import annotations

from pathlib import Path

import pytest

from stancelab.core.embedded import EMBEDDED_MODEL
from stancelab.demo import run_demo
from stancelab.probes import PROBES
from tests.report.browser import open_in_chromium

pytestmark = pytest.mark.slow

TINY = {
    "millstone": {"limit": 1, "trials": 1, "max_tokens": 4},
    "conviction": {"limit": 1, "samples": 2, "argument_sets": 1},
    "llm-bias-bench": {"limit": 1, "turns": 1, "categories": "direct", "max_tokens": 8, "judge_max_tokens": 8},
    "issuebench": {"limit": 1, "n_templates": 2, "framings": "neutral,con", "max_tokens": 16},
    "prior-prejudice": {"limit": 1, "templates": "T1", "generate_arguments": False, "probe": False,
                        "cross_task": False},
    "even-handedness": {"limit": 1, "max_tokens": 8},
}  # fmt: skip
MAX_REPORT_BYTES = 20 * 1024 * 1024


def test_demo_report_renders_in_chromium(tmp_path: Path) -> None:
    result = run_demo(tmp_path / "demo", [EMBEDDED_MODEL], settings=TINY)
    assert result.path == tmp_path / "demo" / "report.html"
    assert result.size_bytes < MAX_REPORT_BYTES
    with open_in_chromium(result.path) as visit:
        page = visit.page
        screenshot = page.screenshot(path=str(tmp_path / "report.png"), full_page=False)
        assert len(screenshot) > 10_000
        for section in ("profiles", *(f"probe-{probe}" for probe in PROBES), "cost", "transcripts"):
            assert page.locator(f"section#{section}").count() == 1, section
        assert page.locator("div.card").count() == len(PROBES)
        matrix = page.locator("section#matrix table.matrix").first  # the demo's report shows the matrix
        assert matrix.locator("tbody tr").count() == 2  # abortion, minimum-wage
        assert matrix.locator("td.mcell").count() == 2 * len(PROBES)
        images = page.locator("figure img")
        assert images.count() == result.figures >= len(PROBES)
        widths = page.eval_on_selector_all("figure img", "imgs => imgs.map(i => i.naturalWidth)")
        assert all(width > 100 for width in widths)
        assert page.locator("details.transcript").count() == result.transcripts > 0
        assert visit.errors == []
        assert [url for url in visit.requests if not url.startswith(("file:", "data:"))] == []
