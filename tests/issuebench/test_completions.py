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
from tests.shared_data import external

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
    assert (
        main(["import", "issuebench-completions", str(source), "--out", str(tmp_path / "out")]) == 0
    )
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert (
        summary["responses"]["hedger"]["total"] == 48
        and summary["responses"]["hedger"]["unparsed"] == 1
    )
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
    for figure in ("Figure 5", "Figure 6", "Figure 7", "Figure 9", "Figure 10", "Figure 12"):
        assert sum(figure in title for title in titles) == 1, (figure, titles)
    assert [note.split(" (")[0] for note in part.notes] == [
        "Figure 8",  # no voter file given
        f"Table 5 not measured: no issues.csv in {tmp_path}",  # the authors' files are not beside
        f"Figure 3 not measured: no templates_full.csv in {tmp_path}",
    ]


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


def _without_model(rows: list[dict[str, object]]) -> list[dict[str, object]]:
    """The rows as a Hugging Face shard holds them: no `response_model`, the authors' ids."""
    kept = []
    for row in rows:
        if row["response_model"] != "zealot":
            continue
        row = {k: v for k, v in row.items() if k != "response_model"}
        row["common_id"] = (
            f"gpt4o.{row['template_id']}.{row['topic_id']}-{row['topic_polarity']}.{row['call_idx']}"
        )
        kept.append(row)
    return kept


def test_shards_without_a_model_column_are_one_model_named_by_the_data(tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    import pyarrow as pa

    rows = _without_model(_rows())
    folder = tmp_path / "rpp_step3_gpt4o" / "data"
    folder.mkdir(parents=True)
    for index, half in enumerate((rows[: len(rows) // 2], rows[len(rows) // 2 :])):
        pq.write_table(pa.Table.from_pylist(half), folder / f"train-0000{index}-of-00002.parquet")
    frame = load_completions(tmp_path)
    assert frame["model"].unique().tolist() == ["gpt-4o-mini-2024-07-18"] and len(frame) == len(
        rows
    )


def test_a_file_naming_no_model_anywhere_takes_its_name_without_the_shard_suffix(
    tmp_path: Path,
) -> None:
    from stancelab.issuebench.completions import model_from_path

    assert model_from_path(Path("data/grok.3.mini-00001-of-00002.parquet")) == "grok.3.mini"
    assert (
        model_from_path(Path("rpp_step3_qwen25-14b/data/train-00000-of-00023.parquet"))
        == "rpp_step3_qwen25-14b"
    )
    rows = [
        {k: v for k, v in row.items() if k not in ("response_model", "common_id")}
        for row in _without_model(_rows())
    ]
    path = tmp_path / "deepseek.chat.v3.0324-00000-of-00001.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert load_completions(path)["model"].unique().tolist() == ["deepseek.chat.v3.0324"]


def _authors_parse_eval_text(eval_text: str) -> str:
    """The rule of the authors' analysis notebook (`parse_eval_text`), restated for the test:
    per character, the first of "1".."5" it contains; else "refusal" if mentioned; else a
    parse error."""
    for char in eval_text:
        for digit in range(1, 6):
            if str(digit) in char:
                return str(digit)
    return "refusal" if "refusal" in eval_text.lower() else "unparsed"


REPLIES = ['"3"\n\nThe TEXT is neutral', "2 - mostly pro, not 1", "Answer: 10", "6, or rather 4",
           "Refusal", "I'd call this a REFUSAL (label 5)", "none of these", " ", "0", "**4**"]  # fmt: skip


def test_raw_replies_are_read_with_the_authors_rule(tmp_path: Path) -> None:
    rows = _rows()[: len(REPLIES)]
    for row, reply in zip(rows, REPLIES, strict=True):
        row["eval_label"], row["eval_text"] = "", reply
    frame = load_completions(_write_csv(tmp_path / "raw.csv", rows))
    assert frame["label"].tolist() == [_authors_parse_eval_text(reply) for reply in REPLIES]
    assert frame["label"].tolist() == [
        "3",
        "2",
        "1",
        "4",
        "refusal",
        "5",
        "unparsed",
        "unparsed",
        "unparsed",
        "4",
    ]


def test_the_authors_rule_on_the_released_replies() -> None:
    from stancelab.issuebench.completions import authors_label

    with external("issuebench", "stance_annotations_expost.csv").open(
        encoding="utf-8", newline=""
    ) as handle:
        rows = list(csv.DictReader(handle))
    assert sum(authors_label(row["eval_text"]) == row["eval_label"] for row in rows) == 900


def test_parquet_is_read_in_row_batches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    import pandas as pd
    import pyarrow as pa

    from stancelab.issuebench import completions

    rows = _rows()
    path = tmp_path / "completions.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=10)
    sizes: list[int] = []
    batches = pq.ParquetFile.iter_batches

    def counted(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        for batch in batches(self, *args, **kwargs):
            sizes.append(batch.num_rows)
            yield batch

    def whole_file(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("read the whole file at once")

    monkeypatch.setattr(pq.ParquetFile, "iter_batches", counted)
    monkeypatch.setattr(pd, "read_parquet", whole_file)
    monkeypatch.setattr(pq, "read_table", whole_file)
    monkeypatch.setattr(completions, "PARQUET_BATCH_ROWS", 16, raising=False)
    frame = load_completions(path)
    assert len(frame) == 96 and sum(sizes) == 96 and max(sizes) <= 16
    rows[40]["topic_polarity"] = "sideways"
    pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=10)
    with pytest.raises(DataFileError) as caught:
        load_completions(path)
    assert (caught.value.line, caught.value.field) == (41, "topic_polarity")
