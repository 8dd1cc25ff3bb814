"""Cross-paper findings: for each model that two or more lenses (papers) measured, where its
lenses agree and where they conflict on a shared topic, with the evidence cells.

The rule is the matrix's (`matrix.analysis`): a lens points one way only when its 95% CI lies
on one side of 0 and rests on two or more of its independent units. A topic where a lens has
no interval (one issue, one topic) is `unclear`, whatever the signs of the point estimates;
those signs are given as a description (`signs`), never counted as agreement."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from stancelab.core.data.aliases import ModelIdentity
from stancelab.core.data.topics import get_topic
from stancelab.matrix.analysis import AGREE, CONFLICT, Matrix
from stancelab.report.matrix import signed_text
from stancelab.report.model import Profile

FINDING_COLUMNS = (
    "model", "label", "sources", "topic", "status", "dissenting", "signs", "lens", "stance",
    "ci_low", "ci_high", "n", "direction_note", "cell_id",
)  # fmt: skip


@dataclass(frozen=True)
class EvidenceCell:
    """One lens's measured stance on a topic, and the id of its cell in the report's matrix."""

    lens: str
    stance: float
    ci_low: float
    ci_high: float
    n: int
    direction: int
    direction_note: str
    cell_id: str

    def text(self) -> str:
        """e.g. "+0.60 [+0.30, +0.90], n = 4", or "+0.40, no CI (n = 1)"."""
        if math.isnan(self.ci_low) or math.isnan(self.ci_high):
            return f"{signed_text(self.stance)}, {self.direction_note}"
        return f"{signed_text(self.stance)} [{signed_text(self.ci_low)}, {signed_text(self.ci_high)}], n = {self.n}"


@dataclass(frozen=True)
class TopicFinding:
    topic: str
    label: str
    claim: str
    status: str
    dissenting: str
    signs: str
    """the point estimates' signs, described ("same sign", "opposite signs"): not a direction"""
    cells: tuple[EvidenceCell, ...]


@dataclass(frozen=True)
class ModelFinding:
    """A model measured by two or more lenses: its headlines and its shared topics."""

    model: str
    label: str
    sources: str
    model_index: int
    """its place in the report's matrix selector"""
    headlines: tuple[Profile, ...]
    topics: tuple[TopicFinding, ...]
    summary: str


def cell_id(model_index: int, topic: str, lens: str) -> str:
    """The id of a matrix cell in the report (`report.html`)."""
    return f"cell-{model_index}-{topic}-{lens}"


def _signs(cells: list[EvidenceCell]) -> str:
    signs = {int(math.copysign(1, cell.stance)) for cell in cells if cell.stance != 0}
    if len(signs) > 1:
        return "opposite signs"
    if len(signs) == 1 and all(cell.stance != 0 for cell in cells):
        return "same sign"
    return "a stance of 0"


def _topic(model_index: int, status: pd.Series, cells: pd.DataFrame) -> TopicFinding:
    measured = cells[cells["measured"]]
    evidence = [
        EvidenceCell(str(row.lens), float(row.stance), float(row.ci_low), float(row.ci_high), int(row.n),
                     int(row.direction), str(row.direction_note), cell_id(model_index, str(row.topic), str(row.lens)))
        for row in measured.itertuples(index=False)
    ]  # fmt: skip
    key = get_topic(str(status["topic"]))
    return TopicFinding(key.id, key.label, key.claim, str(status["status"]), str(status["dissenting"]),
                        _signs(evidence), tuple(evidence))  # fmt: skip


def _measured_topics(cells: pd.DataFrame, lenses: list[str]) -> str:
    """e.g. "issuebench: 8 shared topics; millstone: no shared topics"."""
    measured = cells[cells["measured"]] if not cells.empty else cells
    counts = {
        lens: int((measured["lens"] == lens).sum()) if not measured.empty else 0 for lens in lenses
    }
    return "; ".join(f"{lens}: {count or 'no'} shared topic{'' if count == 1 else 's'}"
                     for lens, count in counts.items())  # fmt: skip


def _summary(topics: list[TopicFinding], lenses: list[str], cells: pd.DataFrame) -> str:
    if not topics:
        return f"no shared topic measured by two lenses ({_measured_topics(cells, lenses)})"
    counts = pd.Series([topic.status for topic in topics]).value_counts()
    parts = [
        f"{counts.get(status, 0)} {status}"
        for status in (AGREE, CONFLICT, "unclear")
        if counts.get(status, 0)
    ]
    return f"{len(topics)} shared topic(s) with two or more lenses: " + ", ".join(parts)


def cross_paper_findings(
    identity: ModelIdentity, matrix: Matrix, profiles: list[Profile]
) -> list[ModelFinding]:
    """Per row whose sources span two or more lenses: headlines, and each shared topic with two
    or more lenses measured (agree / conflict / unclear, with the evidence cells)."""
    order = sorted(matrix.models) if not matrix.empty else []
    findings = []
    for row in identity.rows.values():
        lenses = sorted({lens for _, lens in row.sources})
        if len(lenses) < 2:
            continue
        index = order.index(row.name) if row.name in order else -1
        topics = []
        cells = matrix.cells[matrix.cells["model"] == row.name] if index >= 0 else pd.DataFrame()
        if index >= 0:
            statuses = matrix.statuses[
                (matrix.statuses["model"] == row.name) & (matrix.statuses["measured_lenses"] >= 2)
            ]
            topics = [
                _topic(index, status, cells[cells["topic"] == status["topic"]])
                for _, status in statuses.iterrows()
            ]
        headlines = tuple(
            sorted((p for p in profiles if p.model == row.name), key=lambda p: p.probe)
        )
        findings.append(ModelFinding(row.name, row.label, row.sources_text(), index, headlines, tuple(topics),
                                     _summary(topics, lenses, cells)))  # fmt: skip
    return sorted(findings, key=lambda finding: finding.model)


def findings_frame(findings: list[ModelFinding]) -> pd.DataFrame:
    """One row per evidence cell of every finding (`FINDING_COLUMNS`); a model without a shared
    topic has one row saying so."""
    rows = []
    for finding in findings:
        base = {"model": finding.model, "label": finding.label, "sources": finding.sources}
        if not finding.topics:
            rows.append(base | {"status": finding.summary})
        for topic in finding.topics:
            for cell in topic.cells:
                rows.append(base | {"topic": topic.topic, "status": topic.status, "dissenting": topic.dissenting,
                                    "signs": topic.signs, "lens": cell.lens, "stance": cell.stance,
                                    "ci_low": cell.ci_low, "ci_high": cell.ci_high, "n": cell.n,
                                    "direction_note": cell.direction_note, "cell_id": cell.cell_id})  # fmt: skip
    return pd.DataFrame(rows, columns=list(FINDING_COLUMNS))


def format_findings(findings: list[ModelFinding]) -> str:
    """The findings as CLI text."""
    if not findings:
        return "Cross-paper findings: no model is in two or more releases."
    lines = ["Cross-paper findings (models in two or more releases; a lens points one way only when its "
             "95% CI excludes 0 and rests on 2+ units):"]  # fmt: skip
    for finding in findings:
        lines.append(
            f"  {finding.model} ({finding.label}; from {finding.sources}): {finding.summary}"
        )
        for headline in finding.headlines:
            where = f" on {headline.unit_set}" if headline.unit_set else ""
            lines.append(
                f"    {headline.probe}: {headline.label} {headline.value_text()} {headline.ci_text()}{where}"
            )
        for topic in finding.topics:
            cells = "; ".join(f"{cell.lens} {cell.text()}" for cell in topic.cells)
            dissent = f", {topic.dissenting} dissenting" if topic.dissenting else ""
            lines.append(f"    {topic.topic}: {topic.status}{dissent} ({topic.signs}): {cells}")
    return "\n".join(lines)
