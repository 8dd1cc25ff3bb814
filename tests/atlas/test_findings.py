"""Cross-paper findings from hand-built stance frames: merged rows, agree / conflict /
unclear per shared topic, evidence cell ids, and the merged matrix's transcript search."""

from __future__ import annotations

import math

import pandas as pd

from stancelab.atlas.findings import cross_paper_findings, findings_frame, format_findings
from stancelab.core.data.aliases import resolve
from stancelab.core.data.topics import stance_frame
from stancelab.matrix.analysis import build_matrix, combine
from stancelab.matrix.results import renamed
from stancelab.probes import PROBES
from stancelab.report.matrix import cell_query

UP, DOWN, POINT = (0.6, 0.3, 0.9, 4), (-0.5, -0.8, -0.2, 3), (0.4, math.nan, math.nan, 1)


def stance(
    model: str, topic: str, lens: str, values: tuple[float, float, float, int]
) -> dict[str, object]:
    value, low, high, n = values
    return {"model": model, "topic": topic, "lens": lens, "stance": value, "ci_low": low, "ci_high": high,
            "n": n, "p": 0.001 if n >= 2 else math.nan, "unusable": 0, "measure": lens, "detail": "", "transcripts": f"task={lens} shared_topic={topic}"}  # fmt: skip


def frames() -> list[pd.DataFrame]:
    millstone = stance_frame([
        stance("llama-3.1-8b", "abortion", "millstone", UP), stance("llama-3.1-8b", "gun-control", "millstone", UP),
        stance("llama-3.1-8b", "death-penalty", "millstone", UP), stance("gpt-4o", "abortion", "millstone", UP),
    ])  # fmt: skip
    issuebench = stance_frame([
        stance("Llama-3.1-8B-Instruct", "abortion", "issuebench", UP),
        stance("Llama-3.1-8B-Instruct", "gun-control", "issuebench", DOWN),
        stance("Llama-3.1-8B-Instruct", "death-penalty", "issuebench", POINT),
        stance("gpt-4o-mini-2024-07-18", "abortion", "issuebench", DOWN),
    ])  # fmt: skip
    return [millstone, issuebench]


def test_findings_of_a_merged_model_per_shared_topic() -> None:
    parts = frames()
    identity = resolve([(m, lens) for frame, lens in zip(parts, ("millstone", "issuebench"), strict=True)
                        for m in frame["model"]])  # fmt: skip
    matrix = build_matrix(combine(renamed(frame, identity.name) for frame in parts), list(PROBES))
    assert sorted(matrix.models) == [
        "gpt-4o",
        "gpt-4o-mini-2024-07-18",
        "llama-3.1-8b",
    ]  # 4o and 4o mini apart
    (llama,) = cross_paper_findings(identity, matrix, [])
    assert llama.model == "llama-3.1-8b" and llama.model_index == 2
    statuses = {
        topic.topic: (topic.status, topic.dissenting, topic.signs) for topic in llama.topics
    }
    assert statuses == {
        "abortion": ("agree", "", "same sign"),
        "gun-control": ("conflict", "millstone, issuebench", "opposite signs"),
        "death-penalty": ("unclear", "", "same sign"),  # one IssueBench unit: no CI, no direction
    }
    assert (
        llama.summary == "3 shared topic(s) with two or more lenses: 1 agree, 1 conflict, 1 unclear"
    )
    cells = {cell.cell_id for topic in llama.topics for cell in topic.cells}
    assert "cell-2-gun-control-issuebench" in cells and len(cells) == 6
    frame = findings_frame([llama])
    assert len(frame) == 6 and set(frame["status"]) == {"agree", "conflict", "unclear"}
    assert (
        "death-penalty: unclear (same sign): millstone +0.60 [+0.30, +0.90], n = 4; issuebench +0.40, no CI (n = 1)"
        in format_findings([llama])
    )


def test_a_merged_cell_searches_the_transcripts_of_its_source_name() -> None:
    issuebench = frames()[1]
    identity = resolve([("llama-3.1-8b", "millstone"), ("Llama-3.1-8B-Instruct", "issuebench")])
    moved = renamed(issuebench, identity.name)
    row = moved[moved["model"] == "llama-3.1-8b"].iloc[0]
    assert cell_query(row["transcripts"], row["model"]) == (
        '["task=issuebench", "shared_topic=abortion", "model=llama-3.1-8b-instruct"]'
    )
    untouched = moved[moved["model"] == "gpt-4o-mini-2024-07-18"].iloc[0]
    assert cell_query(untouched["transcripts"], untouched["model"]).endswith(
        '"model=gpt-4o-mini-2024-07-18"]'
    )
