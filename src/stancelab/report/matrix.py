"""The report's topic x lens heat map: the matrix (`stancelab.matrix`) as view objects the
template renders (HTML, so each cell can open its transcripts)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import pandas as pd

from stancelab.core.data.topics import get_topic
from stancelab.core.stats.intervals import no_ci_reason
from stancelab.matrix.analysis import Matrix
from stancelab.matrix.results import family_text, stance_text
from stancelab.probes import PROBES
from stancelab.report.transcripts import normalise

AGREE_RGB = (33, 102, 172)  # blue: agrees with the canonical claim
DISAGREE_RGB = (202, 82, 32)  # orange-red: disagrees


@dataclass(frozen=True)
class Cell:
    """One lens's stance on one topic for one model, as shown."""

    lens: str
    value: str
    interval: str
    style: str
    title: str
    query: str
    """JSON list of transcript search tokens; empty when no transcript belongs to the cell"""
    measured: bool
    direction: int
    why: str


@dataclass(frozen=True)
class TopicRow:
    topic: str
    label: str
    claim: str
    cells: list[Cell]
    status: str
    dissenting: str


@dataclass(frozen=True)
class ModelMatrix:
    model: str
    rows: list[TopicRow]
    share: str


@dataclass(frozen=True)
class LensHeader:
    name: str
    lens: str
    measure: str


@dataclass(frozen=True)
class ShareRow:
    name: str
    share: str
    title: str


@dataclass(frozen=True)
class MatrixView:
    lenses: list[LensHeader]
    models: list[ModelMatrix]
    by_model: list[ShareRow]
    by_topic: list[ShareRow]
    family: str = ""
    """how the directions were controlled, and the conflicts expected by chance"""


def cell_style(stance: float, has_interval: bool = True) -> str:
    """Background coloured by the signed stance: blue agrees, orange-red disagrees, deeper
    further from 0; a stance without an interval (one unit) only tinted, with a dashed edge."""
    red, green, blue = AGREE_RGB if stance >= 0 else DISAGREE_RGB
    alpha = 0.12 + 0.68 * min(1.0, abs(stance)) if has_interval else 0.12
    text = "#ffffff" if alpha > 0.55 else "#1d232b"
    edge = "" if has_interval else "; outline: 1px dashed #8c8c8c; outline-offset: -3px"
    return f"background: rgba({red}, {green}, {blue}, {alpha:.2f}); color: {text}{edge}"


def signed_text(value: float, direction: int | None = None) -> str:
    """A signed stance or bound as the CLI gives it (`matrix.results.stance_text`)."""
    return stance_text(value, direction)


def cell_query(transcripts: str, model: str) -> str:
    """The transcript search of a cell: its tokens plus `model=<model>` (JSON, for data-q)."""
    tokens = [token for token in str(transcripts or "").split() if "=" in token]
    if not tokens:
        return ""
    if not any(
        token.startswith("model=") for token in tokens
    ):  # a merged row's cell names its source
        tokens.append(f"model={model}")
    return json.dumps([normalise(token) for token in tokens])


def _number(value: object) -> float:
    return math.nan if value is None or pd.isna(value) else float(value)  # type: ignore[arg-type]


def _count(value: object) -> int:
    number = _number(value)
    return 0 if math.isnan(number) else int(number)


def _cell(row: pd.Series) -> Cell:
    stance, low, high = _number(row["stance"]), _number(row["ci_low"]), _number(row["ci_high"])
    query = cell_query(row["transcripts"], row["model"])
    evidence = f"n = {_count(row['n'])}, unusable {_count(row['unusable'])}"
    if not row["measured"]:
        why = str(row["direction_note"]).removeprefix("not measured: ")
        return Cell(row["lens"], "not measured", "", "", f"{row['lens']}: not measured: {why} ({evidence})",
                    query, False, 0, why)  # fmt: skip
    has_interval = not (math.isnan(low) or math.isnan(high))
    interval = (f"[{signed_text(low)}, {signed_text(high)}]" if has_interval
                else no_ci_reason(_count(row["n"]), stance))  # fmt: skip
    title = f"{row['lens']}: {row['measure']}; {row['direction_note']}; {evidence}"
    if row["detail"]:
        title += f"; {row['detail']}"
    return Cell(row["lens"], signed_text(stance, int(row["direction"])), interval,
                cell_style(stance, has_interval), title, query, True, int(row["direction"]), "")  # fmt: skip


def share_text(row: pd.Series) -> tuple[str, str]:
    """(the agreement share as shown, its explanation)."""
    if row["n"] == 0 or pd.isna(row["value"]):
        return str(row["not_measured"]), "no topic had two or more lenses measured"
    low, high = _number(row["ci_low"]), _number(row["ci_high"])
    interval = (
        f"[{low:.2f}, {high:.2f}]"
        if not math.isnan(low)
        else no_ci_reason(int(row["n"]), float(row["value"]))
    )
    return (f"{row['value']:.2f} {interval} · {int(row['agree'])} of {int(row['n'])}",
            "share with every measured lens pointing the same way, over those with two or more "
            "lenses measured; 95% Clopper-Pearson CI")  # fmt: skip


def _lens_headers(matrix: Matrix) -> list[LensHeader]:
    headers = []
    for lens in matrix.lenses:
        measures = matrix.cells.loc[
            (matrix.cells["lens"] == lens) & (matrix.cells["measure"] != ""), "measure"
        ]
        probe = PROBES.get(lens)
        headers.append(LensHeader(lens, probe.lens if probe else lens,
                                  str(measures.iloc[0]) if len(measures) else "not measured in these runs"))  # fmt: skip
    return headers


def _model_matrix(matrix: Matrix, model: str) -> ModelMatrix:
    cells = matrix.cells[matrix.cells["model"] == model]
    statuses = matrix.statuses[matrix.statuses["model"] == model].set_index("topic")
    rows = []
    for topic in matrix.topics:
        topic_cells = cells[cells["topic"] == topic]
        if topic_cells.empty:
            continue
        key = get_topic(topic)
        status = statuses.loc[topic]
        rows.append(TopicRow(topic, key.label, key.claim, [_cell(row) for _, row in topic_cells.iterrows()],
                             str(status["status"]), str(status["dissenting"])))  # fmt: skip
    share = matrix.by_model[matrix.by_model["model"] == model].iloc[0]
    return ModelMatrix(model, rows, share_text(share)[0])


def _share_rows(frame: pd.DataFrame, key: str) -> list[ShareRow]:
    rows = []
    for _, row in frame.iterrows():
        text, title = share_text(row)
        name = get_topic(row[key]).label if key == "topic" else str(row[key])
        rows.append(ShareRow(name, text, title))
    return rows


def matrix_view(matrix: Matrix) -> MatrixView | None:
    """The heat map's view of `matrix`; None when no run read a topic stance."""
    if matrix.empty:
        return None
    return MatrixView(
        lenses=_lens_headers(matrix),
        models=[_model_matrix(matrix, model) for model in sorted(matrix.models)],
        by_model=_share_rows(matrix.by_model.sort_values("model"), "model"),
        by_topic=_share_rows(matrix.by_topic, "topic"),
        family=family_text(matrix.family),
    )  # fmt: skip
