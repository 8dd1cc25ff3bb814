"""`stancelab demo` on the embedded model (tiny limits), run once for this file: its report in
headless Chromium offline (no console errors, every section and image present, under 20 MB),
and each probe's run with the embedded model in every role (two shared topics, one item each,
as `stancelab run PROBE` would write it)."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from inspect_ai.log import list_eval_logs, read_eval_log

from stancelab.core.embedded.model import EMBEDDED_MODEL
from stancelab.demo import run_demo
from stancelab.probes import PROBES
from stancelab.report.build import ReportResult
from tests.report.browser import open_in_chromium

pytestmark = pytest.mark.slow

TINY = {
    "millstone": {"limit": 1, "trials": 1, "max_tokens": 4},
    "conviction": {"limit": 1, "samples": 2, "argument_sets": 1},
    "llm-bias-bench": {"limit": 1, "turns": 1, "categories": "direct", "max_tokens": 8, "judge_max_tokens": 8},
    "issuebench": {"limit": 1, "n_templates": 2, "framings": "neutral,con", "max_tokens": 16},
    "prior-prejudice": {"limit": 1, "templates": "T1", "generate_arguments": False, "probe": False,
                        "cross_task": False},
    # abortion's first two stance pairs (minimum-wage has none): one shown a-first, one b-first
    "even-handedness": {"limit": 2, "max_tokens": 8},
}  # fmt: skip
TOPICS = 2  # the demo's shared topics, one item each (even-handedness: two pairs of one topic)
MAX_REPORT_BYTES = 20 * 1024 * 1024


@dataclass
class Demo:
    """The demo's report, its folder (a run per probe) and what it printed."""

    report: ReportResult
    out: Path
    printed: str

    def summary(self, probe: str) -> dict[str, Any]:
        """One probe's summary.json, as `stancelab run PROBE` writes it."""
        return json.loads((self.out / probe / "summary.json").read_text())


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    """One demo run (each probe into OUT/<probe>, then the report) for every test here."""
    out = tmp_path_factory.mktemp("demo")
    printed = io.StringIO()
    with pytest.MonkeyPatch.context() as patch, redirect_stdout(printed):
        patch.setenv("INSPECT_CACHE_DIR", str(out / "inspect-cache"))
        report = run_demo(out / "demo", [EMBEDDED_MODEL], settings=TINY)
    return Demo(report, out / "demo", printed.getvalue())


def test_demo_report_renders_in_chromium(demo: Demo, tmp_path: Path) -> None:
    result = demo.report
    assert result.path == demo.out / "report.html"
    assert result.size_bytes < MAX_REPORT_BYTES
    with open_in_chromium(result.path) as visit:
        page = visit.page
        screenshot = page.screenshot(path=str(tmp_path / "report.png"), full_page=False)
        assert len(screenshot) > 10_000
        for section in ("profiles", *(f"probe-{probe}" for probe in PROBES), "cost", "transcripts"):
            assert page.locator(f"section#{section}").count() == 1, section
        assert page.locator("div.card").count() == len(PROBES)
        matrix = page.locator(
            "section#matrix table.matrix"
        ).first  # the demo's report shows the matrix
        assert matrix.locator("tbody tr").count() == 2  # abortion, minimum-wage
        assert matrix.locator("td.mcell").count() == 2 * len(PROBES)
        images = page.locator("figure img")
        assert images.count() == result.figures >= len(PROBES)
        widths = page.eval_on_selector_all("figure img", "imgs => imgs.map(i => i.naturalWidth)")
        assert all(width > 100 for width in widths)
        assert page.locator("details.transcript").count() == result.transcripts > 0
        assert visit.errors == []
        assert [url for url in visit.requests if not url.startswith(("file:", "data:"))] == []


def test_llm_bias_bench_runs_with_the_embedded_model_in_every_role(demo: Demo) -> None:
    summary = demo.summary("llm-bias-bench")
    (config,) = summary["table"]  # one run: the embedded model in every role
    row = summary["table"][config][EMBEDDED_MODEL]["direct"]
    # the paper's topics (the default where ../shared seeds the cache) cover abortion only
    topics = 1 if summary["method"][config]["topics"] == "authors" else TOPICS
    assert row["n_topics"] == topics
    figures = (
        row["values_if_measured"] if row["not_measured"] else row
    )  # the tiny judge is often unparsed
    assert sum(figures[g] for g in ("pos", "syc", "inc", "oth", "ref")) == pytest.approx(100.0)
    assert summary["unparsed"][config][EMBEDDED_MODEL]["direct"]["conversations"] == 3 * topics
    assert {c["role"] for c in summary["cost"]} == {"subject", "user", "judge"}
    log = read_eval_log(list_eval_logs(str(demo.out / "llm-bias-bench" / "logs"))[0])
    assert [m.role for m in (log.samples or [])[0].messages] == ["user", "assistant"]


def test_issuebench_runs_with_the_embedded_model_as_writer_and_classifier(demo: Demo) -> None:
    summary = demo.summary("issuebench")
    counts = summary["responses"][EMBEDDED_MODEL]
    responses = TOPICS * 2 * 2  # issues x templates x framings
    assert counts["total"] == responses
    assert (
        sum(counts[label] for label in ("1", "2", "3", "4", "5", "refusal", "unparsed"))
        == responses
    )
    assert set(summary["majority_counts"][EMBEDDED_MODEL]) == {"neutral", "con"}


def test_prior_prejudice_rates_from_logprobs_with_the_embedded_model(demo: Demo) -> None:
    summary = demo.summary("prior-prejudice")
    sources = summary["rating_sources"][EMBEDDED_MODEL]["T1"]
    # a claim per topic x (claim, negation); the 135M model writes "1" with under half its
    # probability on the digits, so its ratings are read as parsed with the reason and the mass recorded
    ratings_expected = TOPICS * 2
    assert sources["logprobs"] + sources["parsed"] == ratings_expected and sources["none"] == 0
    assert sources["parsed"] == sum(sources["fallback_reasons"].values())
    assert 0 < sources["mean_digit_mass"] <= 1
    ratings = pd.read_csv(demo.out / "prior-prejudice" / "tables" / "ratings.csv")
    assert len(ratings) == ratings_expected and ratings["digit_mass"].between(0, 1).all()
    assert ratings["cwa"].between(1, 7).all()
    assert ((ratings["source"] == "logprobs") == (ratings["digit_mass"] >= 0.5)).all()
    assert set(summary["deltas"][EMBEDDED_MODEL]) == set(ratings["category"]) == {"contested"}


def test_conviction_runs_with_the_embedded_model_in_every_role(demo: Demo) -> None:
    summary = demo.summary("conviction")
    shares = summary["labels"][EMBEDDED_MODEL]
    assert set(shares) == {"original", "left", "right"}
    for scenario in shares.values():
        assert sum(scenario[k] for k in ("TL", "PL", "TR", "PR", "unclear")) == pytest.approx(1.0)
    assert "unclear" in summary["consistency"][EMBEDDED_MODEL]


def test_even_handedness_scores_every_pair_with_the_embedded_model_as_grader(demo: Demo) -> None:
    """Two pairs, every headline present with its interval and how it was scored."""
    assert "even-handedness:" in demo.printed and "scored by" in demo.printed
    summary = demo.summary("even-handedness")
    for metric in ("even_handedness", "refusal", "hedging"):
        entry = summary[metric][EMBEDDED_MODEL]
        assert entry["pairs"] + entry["unreadable"] == 2
        assert (  # one reading for every pair (a pair's grades may mix them), or the counts
            entry["scored_by"] in ("token probabilities", "answer", "mixed", "none")
            or "pairs" in entry["scored_by"]
        )
        assert {
            "value",
            "ci_low",
            "ci_high",
            "value_if_measured",
            "ci_if_measured",
            "not_measured",
        } <= set(entry)
    pairs = pd.read_csv(demo.out / "even-handedness" / "tables" / "pairs.csv")
    assert sorted(pairs["pair_id"]) == ["abortion.1.1", "abortion.2.1"] and set(
        pairs["shown_first"]
    ) == {"a", "b"}
