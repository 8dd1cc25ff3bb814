"""Table 15 replayed from the authors' released classifier replies: `stancelab import
issuebench-classifier` must give every released cell exactly as the paper prints it."""

from __future__ import annotations

import contextlib
import csv
import io
import json
from pathlib import Path

import pandas as pd
import pytest

from stancelab.cli import main
from tests.shared_data import external

# Table 15 (appendix I) as printed, the templates whose files the release holds: T-1 to T-4, T-6.
RELEASED_TEMPLATES = ("templ-1", "templ-2", "templ-3", "templ-4", "templ-6")
TABLE_15 = {
    "gpt-4o-2024-05-13": (0.73, 0.72, 0.62, 0.62, 0.71),
    "gpt-4o-mini-2024-07-18": (0.66, 0.71, 0.69, 0.65, 0.69),
    "gpt-4o-2024-08-06": (0.70, 0.69, 0.60, 0.64, 0.71),
    "Mistral-7B-Instruct-v0.3": (0.60, 0.62, 0.60, 0.44, 0.64),
    "gemma-2-27b-it": (0.59, 0.68, 0.57, 0.50, 0.69),
    "Mistral-Nemo-Instruct-2407": (0.61, 0.61, 0.48, 0.55, 0.64),
    "gemma-2-9b-it": (0.57, 0.66, 0.52, 0.61, 0.58),
    "Ministral-8B-Instruct-2410": (0.57, 0.56, 0.40, 0.32, 0.65),
    "Llama-3.1-8B-Instruct": (0.39, 0.48, 0.30, 0.49, 0.55),
    "gpt-3.5-turbo": (0.41, 0.46, 0.28, 0.29, 0.41),
    "Llama-3.2-3B-Instruct": (0.36, 0.22, 0.44, 0.24, 0.41),
}


def _import(source: Path, out: Path) -> tuple[int, str]:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = main(["import", "issuebench-classifier", str(source), "--out", str(out)])
    return code, printed.getvalue()


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("table_15")
    code, printed = _import(external("issuebench"), out)
    assert code == 0
    return out, printed


def test_the_55_released_cells_equal_the_papers(imported: tuple[Path, str]) -> None:
    out, _ = imported
    cells = pd.read_csv(out / "tables" / "table_15_cells.csv")
    assert len(cells) == 55 and (cells["n"] == 500).all()
    replayed = {(r.classifier, r.template): round(r.macro_f1, 2) for r in cells.itertuples()}
    expected = {(classifier, template): value for classifier, row in TABLE_15.items()
                for template, value in zip(RELEASED_TEMPLATES, row, strict=True)}  # fmt: skip
    assert replayed == expected
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["reproduced_cells"], summary["compared_cells"]) == (55, 55)


def test_the_import_prints_table_15_with_the_missing_cells_named(
    imported: tuple[Path, str],
) -> None:
    _, printed = imported
    rows = {line.split()[0]: line.split()[1:] for line in printed.splitlines()
            if line.split() and line.split()[0] in TABLE_15}  # fmt: skip
    # T-1 .. T-8 and the average: T-5, T-7, T-8 are not in the release, so no average
    assert rows["Llama-3.1-8B-Instruct"] == [
        "0.39",
        "0.48",
        "0.30",
        "0.49",
        "-",
        "0.55",
        "-",
        "-",
        "n/a",
    ]
    assert "'-': not in the release" in printed
    assert "55 of 55 released cells equal the paper's (of its 136)" in printed
    assert "(paper" not in printed  # no cell differs


def _release(folder: Path, replies: list[str], gold: list[str]) -> Path:
    responses = folder / "classifier_responses" / "gpt-3.5-turbo"
    responses.mkdir(parents=True)
    with (responses / "templ-1.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["prompt_id", "final_label", "eval_text", "eval_model"])
        writer.writerows(
            [f"p{i}", g, r, "m"] for i, (g, r) in enumerate(zip(gold, replies, strict=True))
        )
    return folder


def test_a_cell_that_differs_from_the_paper_says_so_where_it_is_printed(tmp_path: Path) -> None:
    # a perfect classifier: macro F1 1.00 where the paper prints 0.41
    gold = ["1 - only pro", "3 - neutral/ambivalent", "5 - only con", "refusal"]
    code, printed = _import(
        _release(tmp_path / "r", ["1", "3", "5", "refusal"], gold), tmp_path / "o"
    )
    assert code == 0
    assert "1.00 (paper 0.41)†" in printed
    assert "† differs from the paper: the released replies are not those behind its cell" in printed
    assert "0 of 1 released cells equal the paper's" in printed


def test_an_unreadable_gold_label_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release = _release(tmp_path / "r", ["1"], ["pro-ish"])
    assert (
        main(["import", "issuebench-classifier", str(release), "--out", str(tmp_path / "o")]) == 2
    )
    error = capsys.readouterr().err.strip()
    assert "templ-1.csv, line 2, field 'final_label': not a gold label: 'pro-ish'" in error
    assert len(error.splitlines()) == 1


def test_the_report_of_the_replay_shows_table_15(imported: tuple[Path, str]) -> None:
    from stancelab.issuebench.report import section
    from stancelab.report.runs import load_run

    (table,) = section(load_run(imported[0])).tables
    assert table.title == "Table 15: macro F1 per classifier and stance template"
    assert table.frame["reproduces"].all() and len(table.frame) == 55
    assert table.caption.startswith("55 of 55 released cells equal the paper's")
