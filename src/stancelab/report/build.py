"""Building the report: run folders in, one self-contained HTML file out."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pandas as pd

from stancelab.core.data.aliases import AliasTable, ModelIdentity, resolve
from stancelab.core.probe import Probe
from stancelab.core.results.evidence import evidence_record, evidence_text
from stancelab.core.results.family import Part, adjust_parts
from stancelab.core.results.summary import RunResult, unmeasured_headlines
from stancelab.core.results.text import adjusted_interval_texts, stopping_note
from stancelab.core.stats.compare import DEFAULT_ADJUSTMENT
from stancelab.matrix.analysis import Matrix, build_matrix, combine
from stancelab.matrix.results import matrix_summary, renamed, run_stances
from stancelab.probes import PROBES, get_probe
from stancelab.report import plots
from stancelab.report.compare import (
    SIGNIFICANCE,
    LensDifferences,
    difference_matrix,
    pair_view,
    paired_differences,
)
from stancelab.report.cost import token_usage
from stancelab.report.matrix import matrix_view
from stancelab.report.model import Evidence, Figure, Profile, Section, Table
from stancelab.report.render import render, table_html
from stancelab.report.runs import load_runs
from stancelab.report.transcripts import DEFAULT_MAX_SAMPLES, Transcript, read_transcripts


@dataclass(frozen=True)
class ReportResult:
    """Where the report went and what it holds."""

    path: Path
    size_bytes: int
    runs: int
    figures: int
    transcripts: int
    profiles: tuple[Profile, ...] = ()
    matrix: dict[str, Any] | None = None
    """the topic x lens matrix's summary (None when no run read a topic stance)"""
    identity: ModelIdentity | None = None
    """which source names each row holds (`core.data.aliases`)"""


def _order(run: RunResult) -> int:
    return list(PROBES).index(run.probe)


def _anchors(runs: list[RunResult]) -> list[str]:
    """A unique section id per run: probe-<name>, then probe-<name>-2, ... for repeats."""
    seen: dict[str, int] = {}
    anchors = []
    for run in runs:
        seen[run.probe] = seen.get(run.probe, 0) + 1
        suffix = "" if seen[run.probe] == 1 else f"-{seen[run.probe]}"
        anchors.append(f"probe-{run.probe}{suffix}")
    return anchors


def _run_profiles(run: RunResult) -> list[Profile]:
    return list(get_probe(run.probe).profiles(run))


def _profiles(
    runs: list[RunResult], anchors: list[str], identity: ModelIdentity | None = None
) -> dict[tuple[str, str], SimpleNamespace]:
    """(row name, probe) -> headline and its section; a later run wins a tie. With `identity`,
    each profile is under its row name (`core.data.aliases`); each names its unit set where its
    probe tells one (`Probe.unit_sets`)."""
    profiles: dict[tuple[str, str], SimpleNamespace] = {}
    for run, anchor in zip(runs, anchors, strict=True):
        unit_sets = get_probe(run.probe).unit_sets
        sets = unit_sets(run) if unit_sets else {}
        adjusted = adjusted_interval_texts(run.summary)
        for profile in _run_profiles(run):
            row = identity.name(profile.model) if identity else profile.model
            shown = replace(profile, model=row, unit_set=sets.get(profile.model, profile.unit_set))
            profiles[(row, profile.probe)] = SimpleNamespace(profile=shown, anchor=anchor, source=profile.model,
                                                             adjusted=adjusted.get(profile.model))  # fmt: skip
    return profiles


def unit_set_groups(profiles: dict[tuple[str, str], SimpleNamespace]) -> dict[str, list[str]]:
    """probe -> the unit sets its column holds, for the columns that hold more than one: there
    each value shows its set, and sorting ranks within a set."""
    sets: dict[str, list[str]] = {}
    for (_, probe), entry in profiles.items():
        found = sets.setdefault(probe, [])
        if entry.profile.unit_set and entry.profile.unit_set not in found:
            found.append(entry.profile.unit_set)
    return {probe: sorted(found) for probe, found in sets.items() if len(found) > 1}


def merged_matrix(
    runs: list[RunResult], aliases: AliasTable | None = None, adjust: str = DEFAULT_ADJUSTMENT
) -> tuple[ModelIdentity, Matrix]:
    """The rows of every model the runs hold (their headlines and topic stances), merged by the
    alias table (`core.data.aliases`; the bundled one by default), and the topic x lens matrix over
    those rows (a later run wins a repeated row, topic and lens)."""
    stances = [run_stances(run) for run in runs]
    sources = [(model, run.probe) for run in runs for model in run.models]
    sources += [(model, run.probe) for run, frame in zip(runs, stances, strict=True)
                for model in frame.get("model", [])]  # fmt: skip
    identity = resolve(sources, aliases)
    return identity, build_matrix(
        combine(renamed(frame, identity.name) for frame in stances), list(PROBES), adjust
    )


def _lens_headers(profiles: dict[tuple[str, str], SimpleNamespace]) -> list[SimpleNamespace]:
    """Each lens once: its name, the headline's label and unit, and what it means."""
    headers = []
    for lens in PROBES.values():
        first = next((e.profile for (_, probe), e in profiles.items() if probe == lens.name), None)
        headers.append(SimpleNamespace(
            lens=lens, label=first.label if first else "not run", unit=first.unit if first else "",
            meaning=first.meaning if first else f"No {lens.title} run in this report.",
        ))  # fmt: skip
    return headers


def _forest(run: RunResult, profiles: list[Profile], probe: Probe) -> Figure | None:
    """Models of one run ranked by the lens's headline, with their CIs."""
    if len(profiles) < 2:
        return None
    frame = pd.DataFrame([{"model": p.model, "value": p.value if p.measured() else None, "ci_low": p.ci_low,
                           "ci_high": p.ci_high} for p in profiles]).astype(
        {"value": float, "ci_low": float, "ci_high": float})  # fmt: skip
    first = profiles[0]
    return Figure(
        f"Models ranked by {first.label}",
        plots.forest(frame, f"{first.label} ({first.unit})"),
        f"{probe.lens}: each model's headline with its 95% CI; overlapping intervals are not "
        "distinguishable at this sample size. Per-model detail in the cards below.",
        Evidence(n=f"{len(profiles)} models of this run; each model's n on its card",
                 ci="95% CI per model, as on the front page",
                 refusals="per model, on its card", unparsed="per model, on its card"),
    )  # fmt: skip


def _run_differences(run: RunResult, seed: int) -> pd.DataFrame | None:
    """Each pair of models' paired difference of the headline over the units both share, with
    the test that fits the probe's measure (None with fewer than two models)."""
    probe = get_probe(run.probe)
    units = probe.unit_values(run) if probe.unit_values else None
    if units is None or units.empty or units["model"].nunique() < 2:
        return None
    unmeasured = unmeasured_headlines(_run_profiles(run))
    differences = paired_differences(units, seed, probe.measure, unmeasured=unmeasured)
    return None if differences["n"].max() < 1 else differences


def report_family(
    runs: list[RunResult], seed: int, adjust: str
) -> tuple[list[RunResult], list[pd.DataFrame | None]]:
    """Every p-value the report shows as one family (`core.results.family`): each run's paired
    differences and its probe's tested tables (`Probe.tested`), adjusted together by `adjust`;
    the runs with their tested tables so adjusted, and each run's paired differences."""
    parts = [
        Part(_run_differences(run, seed), run.tables, get_probe(run.probe).tested) for run in runs
    ]
    adjusted = adjust_parts(parts, adjust)
    runs = [
        replace(run, tables={**run.tables, **done.tables})
        for run, done in zip(runs, adjusted, strict=True)
    ]
    return runs, [done.headline for done in adjusted]


def _adjustment_name(differences: pd.DataFrame) -> str:
    """The adjustment the pairs' p went through, as the table names it."""
    methods = differences["adjustment"].dropna().unique() if "adjustment" in differences else []
    return ", ".join(str(m) for m in methods) or "no pair tested"


def _differences_figure(profiles: list[Profile], differences: pd.DataFrame) -> Figure:
    """The heatmap of the pairs' differences."""
    values, marked = difference_matrix(differences)
    first = profiles[0]
    return Figure(
        f"Pairwise differences in {first.label}",
        plots.difference_heatmap(values, marked, first.unit),
        "Row model minus column model: the difference of their headlines over the units (issues, "
        f"statements, topics) both were measured on; * marks a pair whose p, adjusted ({_adjustment_name(differences)}) "
        f"across every comparison in this report, is below {SIGNIFICANCE} (shown up to 12 "
        "models; a 95% CI may exclude 0 where the adjusted p does not). Every pair with its CI, n, test, p and "
        "adjusted p is in the table 'Pairwise differences' and in 'Compare two models'.",
        Evidence(n=f"{len(differences)} pairs; units shared per pair {differences['n'].min()}"
                 f"-{differences['n'].max()}",
                 ci="95% sign-flip interval over shared units (the inverted test); none from n < 6",
                 refusals="units without a value (refused or unparsed throughout) are left out",
                 unparsed="as for refusals"),
    )  # fmt: skip


def _sections(
    runs: list[RunResult], anchors: list[str], differences: list[pd.DataFrame | None]
) -> list[SimpleNamespace]:
    repeated = {run.probe for run in runs if sum(r.probe == run.probe for r in runs) > 1}
    sections = []
    for run, anchor, compared in zip(runs, anchors, differences, strict=True):
        section: Section = get_probe(run.probe).section(run)
        title = f"{section.title} ({run.folder})" if run.probe in repeated else section.title
        tables = [
            SimpleNamespace(title=t.title, caption=t.caption,
                            html=table_html(t, str(run.folder / "tables")))
            for t in section.tables
        ]  # fmt: skip
        cards = sorted(_run_profiles(run), key=lambda p: p.model)
        forest = _forest(run, cards, get_probe(run.probe))
        heatmap = (
            _differences_figure(cards, compared)
            if compared is not None and len(cards) >= 2
            else None
        )
        figures = [figure for figure in (forest, heatmap) if figure]
        figures += list(section.figures)
        if compared is not None:
            tables.insert(0, SimpleNamespace(
                title="Pairwise differences", caption="model_a minus model_b over shared units, with the "
                "test that fits the lens, its p and p adjusted across every comparison in this report",
                html=table_html(Table("Pairwise differences", compared))))  # fmt: skip
        notes = [note for note in (evidence_text(run.summary), stopping_note(run.summary)) if note]
        sections.append(SimpleNamespace(probe=section.probe, anchor=anchor, title=title, intro=section.intro,
                                        figures=figures, tables=tables, notes=[*notes, *section.notes],
                                        cards=cards, adjusted=adjusted_interval_texts(run.summary)))  # fmt: skip
    return sections


def _lens_differences(
    runs: list[RunResult], sections: list[SimpleNamespace], differences: list[pd.DataFrame | None]
) -> list[LensDifferences]:
    """Each run's paired differences with its lens and section, for the pair view."""
    return [LensDifferences(get_probe(run.probe).lens, section.title, section.anchor, frame)
            for run, section, frame in zip(runs, sections, differences, strict=True)
            if frame is not None]  # fmt: skip


def _left_out(runs: list[RunResult], anchors: list[str]) -> list[SimpleNamespace]:
    """Per run whose read of the logs left something out: what, and whether it is partial."""
    notes = []
    for run, anchor in zip(runs, anchors, strict=True):
        text = evidence_text(run.summary)
        if text:
            partial = bool(evidence_record(run.summary).get("partial"))
            notes.append(SimpleNamespace(folder=run.folder, probe=run.probe, anchor=anchor, text=text,
                                         partial=partial))  # fmt: skip
    return notes


def _run_prices(runs: list[RunResult]) -> dict[str, tuple[float, float]]:
    """Prices saved with a run (`--price` at run time, in prices.json)."""
    prices: dict[str, tuple[float, float]] = {}
    for run in runs:
        path = run.folder / "prices.json"
        if path.exists():
            prices |= {
                model: (float(p[0]), float(p[1]))
                for model, p in json.loads(path.read_text()).items()
            }
    return prices


def _transcripts(runs: list[RunResult], max_samples: int) -> tuple[list[Transcript], int]:
    transcripts: list[Transcript] = []
    omitted = 0
    for run in runs:
        if run.logs.is_dir():
            found = read_transcripts(run.probe, run.folder, max_samples)
            transcripts.extend(found.transcripts)
            omitted += found.omitted
    return transcripts, omitted


def build_report(
    folders: list[Path],
    out_path: Path,
    prices: dict[str, tuple[float, float]] | None = None,
    max_transcripts: int = DEFAULT_MAX_SAMPLES,
    seed: int = 0,
    aliases: AliasTable | None = None,
    findings: Callable[[ModelIdentity, Matrix, list[Profile]], Any] | None = None,
    adjust: str = DEFAULT_ADJUSTMENT,
) -> ReportResult:
    """Write one HTML report for every probe run found in `folders`. Models are merged into
    one row per model by the alias table (`core.data.aliases`, bundled by default); `findings`
    gives the cross-paper findings' view from the rows, the matrix and the headlines (the
    atlas). The paired tests' p-values are adjusted by `adjust` (holm or fdr_bh) across every
    comparison the report shows."""
    runs, differences = report_family(sorted(load_runs(folders, seed), key=_order), seed, adjust)
    anchors = _anchors(runs)
    sections = _sections(runs, anchors, differences)
    transcripts, omitted = _transcripts(runs, max_transcripts)
    cost = token_usage(
        [(run.probe, run.folder) for run in runs], _run_prices(runs) | (prices or {})
    )
    identity, matrix = merged_matrix(runs, aliases, adjust)
    models = sorted({identity.name(model) for run in runs for model in run.models})
    profiles = _profiles(runs, anchors, identity)
    headlines = [entry.profile for entry in profiles.values()]
    page = render({
        "runs": runs, "models": models, "lenses": list(PROBES.values()),
        "headers": _lens_headers(profiles), "profiles": profiles, "sections": sections,
        "cost_html": table_html(Table("Cost", cost)), "transcripts": transcripts, "omitted": omitted,
        "matrix": matrix_view(matrix), "left_out": _left_out(runs, anchors), "rows": identity.rows,
        "unit_sets": unit_set_groups(profiles), "adjust": adjust,
        "pairs": pair_view(_lens_differences(runs, sections, differences), identity.name),
        "findings": findings(identity, matrix, headlines) if findings else None,
    })  # fmt: skip
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(page, encoding="utf-8")
    return ReportResult(
        path=out_path, size_bytes=out_path.stat().st_size, runs=len(runs),
        figures=sum(len(s.figures) for s in sections), transcripts=len(transcripts),
        profiles=tuple(entry.profile for entry in profiles.values()),
        matrix=None if matrix.empty else matrix_summary(matrix, [run.folder for run in runs]),
        identity=identity,
    )  # fmt: skip


def format_profiles(result: ReportResult) -> str:
    """The front page as text: one line per model and lens."""
    return format_profile_lines(result.profiles)


def format_profile_lines(profiles: Iterable[Profile]) -> str:
    """Headlines as text, 'not measured' where the report says so: one line per model and lens."""
    lines = [f"{'model':<36} {'lens':<18} {'headline':<26} {'value':>8}  95% CI"]
    order = list(PROBES)
    for profile in sorted(profiles, key=lambda p: (p.model, order.index(p.probe))):
        lens = PROBES[profile.probe].lens
        partial = "  PARTIAL" if profile.partial else ""
        lines.append(f"{profile.model:<36} {lens:<18} {profile.label:<26} "
                     f"{profile.value_text():>8}  {profile.ci_text().removeprefix('95% CI ')}  ({profile.unit}){partial}")  # fmt: skip
    return "\n".join(lines)
