"""Importing the authors' raw completions format (a small file written here)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from stancelab.cli import main
from stancelab.core.errors import DataFileError
from stancelab.issuebench.completions import load_completions
from stancelab.issuebench.report import section
from stancelab.report.runs import load_run

COLUMNS = ["common_id", "template_id", "topic_id", "topic_polarity", "call_idx", "prompt_text",
           "response_text", "eval_text", "eval_label", "response_model", "topic_neutral"]  # fmt: skip
ISSUES = {"7": "nuclear energy", "9": "school uniforms"}


def _label(model: str, issue: str, framing: str, template: int, call: int) -> str:
    if framing == "pro":
        return "2" if model == "hedger" else "1"
    if framing == "con":
        return "4" if template % 2 else "5"
    return "3" if issue == "7" else ("1" if call == 1 or template < 3 else "2")


def _rows() -> list[dict[str, object]]:
    rows = []
    for model in ("hedger", "zealot"):
        for issue, phrase in ISSUES.items():
            for framing in ("neutral", "pro", "con"):
                for template in range(4):
                    for call in (1, 2):
                        label = _label(model, issue, framing, template, call)
                        rows.append({"common_id": f"{model}.t{template}.{issue}-{framing}.{call}",
                                     "template_id": f"t{template}", "topic_id": issue, "topic_polarity": framing,
                                     "call_idx": call, "prompt_text": f"Write about {phrase}",
                                     "response_text": f"A text about {phrase}.", "eval_text": label,
                                     "eval_label": label, "response_model": model, "topic_neutral": phrase})  # fmt: skip
    rows[0]["eval_label"] = "PARSE ERROR"  # the authors' unreadable reply
    rows[1]["eval_label"], rows[1]["eval_text"] = "", 'Based on the text, my answer is "4".'
    return rows


def _write_csv(path: Path, rows: list[dict[str, object]]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    return path


def test_completions_import_recomputes_every_figure(tmp_path: Path) -> None:
    source = _write_csv(tmp_path / "completions.csv", _rows())
    assert main(["import", "issuebench-completions", str(source), "--out", str(tmp_path / "out")]) == 0
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["responses"]["hedger"]["total"] == 48 and summary["responses"]["hedger"]["unparsed"] == 1
    assert summary["responses"]["hedger"]["3"] == 8 - 2  # issue 7 neutral, but the two edited rows
    assert summary["responses"]["hedger"]["4"] == 8 + 1  # con framing, plus the raw reply read as 4
    assert summary["majority_counts"]["zealot"]["neutral"]["3"] == 1  # issue 7
    assert summary["majority_counts"]["zealot"]["neutral"]["1"] == 1  # issue 9: 6 of 8 are "1"
    assert summary["distortion"]["hedger"]["pro"]["hedged"] == 2
    # half "4", half "5": no single label holds a majority, so not counted as following the
    # framing (as Table 3 counts it)
    assert summary["distortion"]["zealot"]["con"]["complied"] == 0
    part = section(load_run(tmp_path / "out"))
    titles = [figure.title for figure in part.figures]
    for figure in ("Figure 6", "Figure 9", "Figure 10", "Figure 12"):
        assert sum(figure in title for title in titles) == 1, (figure, titles)
    assert part.notes == []


def test_jsonl_and_csv_read_alike(tmp_path: Path) -> None:
    rows = _rows()
    jsonl = tmp_path / "completions.jsonl"
    jsonl.write_text("".join(json.dumps(row) + "\n" for row in rows))
    from_csv = load_completions(_write_csv(tmp_path / "completions.csv", rows))
    assert load_completions(jsonl).equals(from_csv) and len(from_csv) == 96


def test_a_bad_row_names_file_line_and_field(tmp_path: Path) -> None:
    rows = _rows()
    rows[4]["topic_polarity"] = "sideways"
    with pytest.raises(DataFileError) as caught:
        load_completions(_write_csv(tmp_path / "bad.csv", rows))
    assert (caught.value.line, caught.value.field) == (6, "topic_polarity")
    rows = _rows()
    rows[2]["eval_label"], rows[2]["eval_text"] = "", None
    with pytest.raises(DataFileError, match="eval_label or eval_text"):
        load_completions(_write_csv(tmp_path / "unlabelled.csv", rows))
