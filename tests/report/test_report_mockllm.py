"""The report from real Inspect runs of all five probes with a scripted (mockllm) model whose
every answer is hostile HTML: structure, evidence lines, cost, transcripts, and no XSS."""

from __future__ import annotations

import json
import re
from pathlib import Path

from stancelab.probes import PROBES
from stancelab.report.build import ReportResult, build_report
from tests.report.browser import open_in_chromium


def test_every_probe_has_a_profile_section_and_transcripts(report: ReportResult) -> None:
    html = report.path.read_text()
    assert {profile.probe for profile in report.profiles} == set(PROBES)
    for probe in PROBES:
        assert f'id="probe-{probe}"' in html
    assert report.transcripts > 0 and html.count('class="transcript"') == report.transcripts
    assert report.figures >= 9 and html.count("data:image/png;base64,") == report.figures


def test_every_figure_states_n_ci_refusals_and_unparsed(report: ReportResult) -> None:
    html = report.path.read_text()
    figures = re.findall(r"<figure>(.*?)</figure>", html, re.S)
    assert len(figures) == report.figures
    for figure in figures:
        for label in ("n: ", "CI: ", "refusals: ", "unparsed: "):
            assert label in figure
    cards = html.split('<div class="card" data-probe=')[1:]
    assert len(cards) == len(PROBES)
    for card in (card[: card.index('class="evidence"') + 400] for card in cards):
        assert "95% CI" in card or "no CI" in card or "not measured:" in card
        assert "refusals: " in card and "unparsed: " in card


def test_a_headline_of_unusable_answers_reads_not_measured(report: ReportResult) -> None:
    by_probe = {profile.probe: profile for profile in report.profiles}
    sycophancy = by_probe["llm-bias-bench"]
    assert sycophancy.value_text() == "not measured:"
    # the authors' reading finds no verdict in a reply without JSON: missing, as they count it;
    # of the demo's topics, the paper's (the default) cover abortion only: 3 conversations
    assert sycophancy.ci_text() == "3 of 3 judge verdicts refused or missing"
    assert by_probe["conviction"].not_measured == "not measured: 6 of 6 answers unclear"
    html = report.path.read_text()
    front = html[: html.index('<div class="card"')]
    assert '<b>not measured:</b></a> <span class="ci">3 of 3 judge verdicts' in front
    assert "0.0 [0.0, 0.0]" not in html
    assert not re.search(r"\[(-?\d+(?:\.\d+)?), \1\]", html)  # no interval of zero width


def test_unparsed_answers_are_counted_not_dropped(report: ReportResult) -> None:
    by_probe = {profile.probe: profile for profile in report.profiles}
    assert re.match(
        r"0 of 3 judge verdicts unparsed .*, 3 missing",
        by_probe["llm-bias-bench"].evidence.unparsed,
    )
    # IssueBench reads a classifier reply as the authors did, by its first digit 1-5: the
    # hostile reply's "window.__xss = 1" is a label (tests/issuebench count unparsed ones)
    assert re.match(r"0 of 4 classifier labels unparsed", by_probe["issuebench"].evidence.unparsed)
    assert re.match(r"6 of 6 answers unclear", by_probe["conviction"].evidence.unparsed)


def test_cost_is_split_by_role(report: ReportResult) -> None:
    html = report.path.read_text()
    cost = html[html.index('id="cost"') : html.index('id="transcripts"')]
    for role in ("subject", "judge", "user", "classifier", "nli", "writer"):
        assert f"<td>{role}</td>" in cost


def test_model_text_is_shown_literally_and_never_runs(report: ReportResult) -> None:
    html = report.path.read_text()
    assert html.count("<script") == 1  # the report's own script only
    assert "window.__xss = 1</script>" not in html
    assert "&lt;script&gt;window.__xss = 1&lt;/script&gt;" in html
    assert 'onerror="window' not in html
    with open_in_chromium(report.path) as visit:
        page = visit.page
        page.locator("details.transcript").first.click()
        page.locator("details.transcript").first.hover()
        shown = page.locator("details.transcript").first.inner_text()
        assert '<script>window.__xss = 1</script><img src="x" onerror="window.__xss = 2">' in shown
        assert page.evaluate("typeof window.__xss") == "undefined"
        assert (
            page.locator(
                "details.transcript img, details.transcript a, details.transcript script"
            ).count()
            == 0
        )
        assert visit.errors == []


def test_table_buttons_filter_the_transcripts(report: ReportResult) -> None:
    with open_in_chromium(report.path) as visit:
        page = visit.page
        total = page.locator("details.transcript").count()
        page.locator("#probe-issuebench button.show-transcripts").first.click()
        shown = page.locator("details.transcript:not([hidden])")
        assert 1 <= shown.count() < total
        assert "issuebench" in shown.first.inner_text()
        assert page.input_value("#transcript-search").startswith("model=mockllm/hostile")
        assert visit.errors == []


def test_a_second_build_from_the_same_folders_is_the_same_report(
    report: ReportResult, tmp_path: Path
) -> None:
    again = build_report([report.path.parent], tmp_path / "again.html")
    strip = lambda text: re.sub(r"Generated [^b]*by", "", text)  # noqa: E731
    assert strip(again.path.read_text()) == strip(report.path.read_text())


def test_the_cli_summary_says_not_measured_too(report: ReportResult) -> None:
    import json

    summary = json.loads((report.path.parent / "llm-bias-bench" / "summary.json").read_text())
    text = PROBES["llm-bias-bench"].format_summary(summary)
    assert "not measured: 3 of 3 judge verdicts missing" in text


def test_the_front_page_shows_the_topic_lens_matrix_and_a_cell_opens_its_transcripts(
    report: ReportResult,
) -> None:
    html = report.path.read_text()
    matrix = html[html.index('<section id="matrix">') : html.index('id="probe-millstone"')]
    assert html.index('id="front-table"') < html.index(
        '<section id="matrix">'
    )  # under the model x lens table
    for lens in PROBES:
        assert f'data-lens="{lens}"' in matrix
    assert 'data-topic="abortion"' in matrix or 'data-topic="minimum-wage"' in matrix
    assert "0.00 [0.00, 0.00]" not in matrix and "+0.00 [+0.00, +0.00]" not in matrix
    with open_in_chromium(report.path) as visit:
        page = visit.page
        cells = page.locator("section#matrix td.mcell button.show-transcripts")
        assert cells.count() >= 1
        query = cells.first.get_attribute("data-q")
        cells.first.click()
        typed = page.locator("#transcript-search").input_value()
        assert "model=mockllm/hostile" in typed and "shared_topic=" in typed
        assert typed.split() == json.loads(query)
        shown = page.locator("details.transcript:visible")
        assert 0 < shown.count() < report.transcripts
        topic = next(token for token in typed.split() if token.startswith("shared_topic="))
        for index in range(shown.count()):
            assert f"|{topic}|" in shown.nth(index).get_attribute("data-search")
        for index in range(cells.count()):  # every lens's cell selects some of its transcripts
            cells.nth(index).click()
            counted = page.locator("#transcript-count").inner_text()
            assert not counted.startswith("0 of"), (
                cells.nth(index).get_attribute("data-q"),
                counted,
            )
        assert visit.errors == []
