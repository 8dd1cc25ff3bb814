"""The report's topic x lens heat map from hand-built stance frames: values, CIs, colours,
not-measured cells with their reason, statuses, shares, and (in Chromium) a cell click
filters the transcripts to that cell and the model selector switches models."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from markupsafe import Markup

from stancelab.core.data.topics import stance_frame
from stancelab.core.stats.intervals import clopper_pearson_ci
from stancelab.matrix.analysis import build_matrix
from stancelab.matrix.results import _cell_text
from stancelab.probes import PROBES
from stancelab.report.matrix import cell_query, cell_style, matrix_view, signed_text
from stancelab.report.render import render
from stancelab.report.transcripts import Transcript
from tests.report.browser import open_in_chromium

UP, DOWN, ZERO, NONE = (0.6, 0.3, 0.9), (-0.5, -0.8, -0.2), (0.1, -0.2, 0.4), (float("nan"),) * 3


def stance(
    model: str, topic: str, lens: str, values: tuple[float, float, float]
) -> dict[str, object]:
    value, low, high = values
    measured = value == value
    return {"model": model, "topic": topic, "lens": lens, "stance": value, "ci_low": low, "ci_high": high,
            "n": 6 if measured else 0, "p": 0.4 if values == ZERO else 0.001 if measured else value,
            "unusable": 0 if measured else 6, "measure": f"{lens} share",
            "detail": "" if measured else "6 of 6 answers refused",
            "transcripts": f"task={lens} shared_topic={topic}"}  # fmt: skip


def transcript(model: str, lens: str, topic: str, index: int) -> Transcript:
    return Transcript(probe=lens, task=lens, model=model, sample_id=f"{topic}-{index}", epoch=1, log="x.eval",
                      answer="A", metadata={"shared_topic": topic, "orientation": "1"},
                      messages=[("user", f"question {index} on {topic}")])  # fmt: skip


MODELS = ("mockllm/alpha", "mockllm/beta")


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rows = [
        stance("mockllm/alpha", "abortion", "millstone", UP), stance("mockllm/alpha", "abortion", "issuebench", UP),
        stance("mockllm/alpha", "immigration", "millstone", UP),
        stance("mockllm/alpha", "immigration", "conviction", DOWN),
        stance("mockllm/alpha", "immigration", "issuebench", UP),
        stance("mockllm/alpha", "minimum-wage", "millstone", ZERO),
        stance("mockllm/alpha", "minimum-wage", "issuebench", NONE),
        stance("mockllm/beta", "abortion", "millstone", DOWN), stance("mockllm/beta", "abortion", "issuebench", DOWN),
    ]  # fmt: skip
    matrix = build_matrix(stance_frame(rows), list(PROBES))
    transcripts = [transcript(model, lens, topic, index) for model in MODELS
                   for lens in ("millstone", "issuebench") for topic in ("abortion", "immigration")
                   for index in range(2)]  # fmt: skip
    html = render({
        "runs": [], "models": list(MODELS), "lenses": [], "headers": [], "profiles": {}, "sections": [],
        "cost_html": Markup(""), "transcripts": transcripts, "omitted": 0, "matrix": matrix_view(matrix),
    })  # fmt: skip
    path = tmp_path_factory.mktemp("matrix") / "report.html"
    path.write_text(html, encoding="utf-8")
    return path


def model_block(html: str, model: str) -> str:
    start = html.index(f'data-model="{model}"', html.index('<section id="matrix">'))
    return html[start : html.index("</table>", start)]


def cell_html(block: str, topic: str, lens: str) -> str:
    row = block[block.index(f'data-topic="{topic}"') :].split("</tr>")[0]
    found = re.search(rf'<td class="mcell[^"]*" data-lens="{lens}".*?</td>', row, re.S)
    assert found, (topic, lens)
    return found.group(0)


def test_each_cell_shows_its_value_ci_and_colour(page: Path) -> None:
    alpha = model_block(page.read_text(), "mockllm/alpha")
    abortion = alpha[alpha.index('data-topic="abortion"') :].split("</tr>")[0]
    millstone = re.search(
        r'<td class="mcell" data-lens="millstone" data-direction="1" style="([^"]+)"', abortion
    )
    assert millstone and millstone.group(1) == cell_style(0.6)
    assert '<b>+0.60</b> <span class="ci">[+0.30, +0.90]</span>' in abortion
    assert "rgba(33, 102, 172" in cell_style(0.6) and "rgba(202, 82, 32" in cell_style(-0.5)
    assert abs(float(re.search(r"rgba\([^)]*, ([\d.]+)\)", cell_style(-1.0)).group(1)) - 0.8) < 1e-9
    assert "Abortion should be legal in early pregnancy." in abortion  # the canonical claim


def test_not_measured_cells_are_grey_and_say_why(page: Path) -> None:
    alpha = model_block(page.read_text(), "mockllm/alpha")
    issuebench = cell_html(alpha, "minimum-wage", "issuebench")
    assert 'class="mcell not-measured"' in issuebench and "6 of 6 answers refused" in issuebench
    assert "show-transcripts" in issuebench  # the refusals can be read
    assert not re.search(
        r"\d\.\d", issuebench.split(">", 1)[1].replace("6 of 6", "")
    )  # no number shown
    never_run = cell_html(alpha, "minimum-wage", "llm-bias-bench")
    assert "not-measured" in never_run and "lens not run for this model" in never_run
    assert "show-transcripts" not in never_run  # nothing to show for a lens that never ran
    assert "no items of this topic in its run" in cell_html(alpha, "minimum-wage", "conviction")


def test_statuses_and_shares_are_shown(page: Path) -> None:
    html = page.read_text()
    alpha = model_block(html, "mockllm/alpha")
    immigration = alpha[alpha.index('data-topic="immigration"') :].split("</tr>")[0]
    assert "status-conflict" in immigration and "dissenting: conviction" in immigration
    # minimum-wage: one lens measured (its CI includes 0), the other refused throughout
    assert "status-one-lens" in alpha[alpha.index('data-topic="minimum-wage"') :].split("</tr>")[0]
    low, high = clopper_pearson_ci(1, 2)
    assert (
        f"0.50 [{low:.2f}, {high:.2f}] · 1 of 2" in html
    )  # alpha: agree on 1 of 2 comparable topics
    assert "status-agree" in model_block(html, "mockllm/beta")


def test_a_cell_query_is_its_tokens_and_the_model() -> None:
    assert cell_query("task=millstone shared_topic=abortion", "Mock/Alpha") == (
        '["task=millstone", "shared_topic=abortion", "model=mock/alpha"]'
    )
    assert cell_query("", "m") == ""


def test_a_cell_click_filters_the_transcripts_to_that_cell(page: Path) -> None:
    with open_in_chromium(page) as visit:
        browser_page = visit.page
        assert browser_page.locator("div.matrix-model[data-model='mockllm/beta']").is_hidden()
        cell = browser_page.locator("div.matrix-model[data-model='mockllm/alpha'] tr[data-topic='immigration'] "
                                    "td[data-lens='issuebench'] button.show-transcripts")  # fmt: skip
        cell.click()
        assert browser_page.locator("#transcript-search").input_value() == (
            "task=issuebench shared_topic=immigration model=mockllm/alpha"
        )
        shown = browser_page.locator("details.transcript:visible")
        assert shown.count() == 2
        for index in range(2):
            summary = shown.nth(index).inner_text()
            assert "issuebench · mockllm/alpha · immigration-" in summary
        assert browser_page.locator("#transcript-count").inner_text() == "2 of 16 transcripts shown"
        browser_page.select_option("#matrix-model", label="mockllm/beta")
        assert browser_page.locator("div.matrix-model[data-model='mockllm/alpha']").is_hidden()
        beta = browser_page.locator("div.matrix-model[data-model='mockllm/beta'] tr[data-topic='abortion'] "
                                    "td[data-lens='millstone'] button.show-transcripts")  # fmt: skip
        beta.click()
        assert browser_page.locator("details.transcript:visible").count() == 2
        assert visit.errors == []


def test_many_models_show_one_table_at_a_time_with_a_selector() -> None:
    models = [f"mockllm/model-{index:02d}" for index in range(30)]
    rows = [
        stance(model, "abortion", lens, UP)
        for model in models
        for lens in ("millstone", "issuebench")
    ]
    html = render({
        "runs": [], "models": models, "lenses": [], "headers": [], "profiles": {}, "sections": [],
        "cost_html": Markup(""), "transcripts": [], "omitted": 0,
        "matrix": matrix_view(build_matrix(stance_frame(rows), list(PROBES))),
    })  # fmt: skip
    assert html.count('<div class="matrix-model"') == 30
    assert (
        html.count('<div class="matrix-model"') - html.count('" hidden>') == 1
    )  # the first model only
    selector = html[html.index('<select id="matrix-model"') : html.index("</select>")]
    assert selector.count("<option") == 30
    shares = html[html.index('class="matrix-shares"') :]
    assert all(model in shares for model in models)  # every model's share in one table


def test_a_tiny_stance_is_not_shown_as_zero() -> None:
    assert (
        signed_text(-9.1e-05) == "-9.1e-05"
        and signed_text(0.0) == "0.00"
        and signed_text(-0.0) == "0.00"
    )
    assert signed_text(0.456) == "+0.46" and signed_text(-1.0) == "-1.00"


@pytest.mark.parametrize(
    ("stance", "direction", "shown"),
    [
        (-9.3e-05, 0, "0.00?"),
        (-9.3e-05, -1, "-9.3e-05v"),
        (0.004, 1, "+4.0e-03^"),
        (0.42, 0, "+0.42?"),
    ],
)
def test_a_stance_that_is_0_at_the_precision_shown_prints_as_0(
    stance: float, direction: int, shown: str
) -> None:
    """The CLI's matrix cell and the report's: a tiny stance whose CI includes 0 is 0.00; one
    with a direction keeps two significant digits."""
    assert _cell_text({"stance": stance, "direction": direction, "detail": ""}) == shown
    assert signed_text(stance, direction) == shown[:-1]


def test_a_cell_on_one_unit_is_only_tinted() -> None:
    """A stance with no CI (n = 1) is not coloured as deeply as a measured one."""
    alpha = re.compile(r"rgba\([^)]*, ([\d.]+)\)")
    alone = cell_style(-1.0, has_interval=False)
    assert float(alpha.search(alone).group(1)) == pytest.approx(0.12) and "dashed" in alone
    assert float(alpha.search(cell_style(-1.0)).group(1)) == pytest.approx(0.8)
