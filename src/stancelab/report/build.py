"""Building the report: run folders in, one self-contained HTML file out."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

from stancelab.core.probes import PROBES, get_probe
from stancelab.report.cost import token_usage
from stancelab.report.model import Profile, RunResult, Section, Table
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


def _profiles(runs: list[RunResult], anchors: list[str]) -> dict[tuple[str, str], SimpleNamespace]:
    """(model, probe) -> headline and its section; a later run wins a tie."""
    profiles: dict[tuple[str, str], SimpleNamespace] = {}
    for run, anchor in zip(runs, anchors, strict=True):
        for profile in get_probe(run.probe).module("report").profiles(run):
            profiles[(profile.model, profile.probe)] = SimpleNamespace(profile=profile, anchor=anchor)
    return profiles


def _sections(runs: list[RunResult], anchors: list[str]) -> list[SimpleNamespace]:
    repeated = {run.probe for run in runs if sum(r.probe == run.probe for r in runs) > 1}
    sections = []
    for run, anchor in zip(runs, anchors, strict=True):
        section: Section = get_probe(run.probe).module("report").section(run)
        title = f"{section.title} ({run.folder})" if run.probe in repeated else section.title
        tables = [
            SimpleNamespace(title=t.title, caption=t.caption,
                            html=table_html(t, str(run.folder / "tables")))
            for t in section.tables
        ]  # fmt: skip
        sections.append(SimpleNamespace(probe=section.probe, anchor=anchor, title=title, intro=section.intro,
                                        figures=section.figures, tables=tables, notes=section.notes))  # fmt: skip
    return sections


def _run_prices(runs: list[RunResult]) -> dict[str, tuple[float, float]]:
    """Prices saved with a run (`--price` at run time, in prices.json)."""
    prices: dict[str, tuple[float, float]] = {}
    for run in runs:
        path = run.folder / "prices.json"
        if path.exists():
            prices |= {model: (float(p[0]), float(p[1])) for model, p in json.loads(path.read_text()).items()}
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
) -> ReportResult:
    """Write one HTML report for every probe run found in `folders`."""
    runs = sorted(load_runs(folders, seed), key=_order)
    anchors = _anchors(runs)
    sections = _sections(runs, anchors)
    transcripts, omitted = _transcripts(runs, max_transcripts)
    cost = token_usage([(run.probe, run.folder) for run in runs], _run_prices(runs) | (prices or {}))
    models = sorted({model for run in runs for model in run.models})
    profiles = _profiles(runs, anchors)
    page = render({
        "runs": runs, "models": models, "lenses": list(PROBES.values()),
        "profiles": profiles, "sections": sections,
        "cost_html": table_html(Table("Cost", cost)), "transcripts": transcripts, "omitted": omitted,
    })  # fmt: skip
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(page, encoding="utf-8")
    return ReportResult(
        path=out_path, size_bytes=out_path.stat().st_size, runs=len(runs),
        figures=sum(len(s.figures) for s in sections), transcripts=len(transcripts),
        profiles=tuple(entry.profile for entry in profiles.values()),
    )  # fmt: skip


def format_profiles(result: ReportResult) -> str:
    """The front page as text: one line per model and lens."""
    lines = [f"{'model':<36} {'lens':<18} {'headline':<26} {'value':>8}  95% CI"]
    order = list(PROBES)
    for profile in sorted(result.profiles, key=lambda p: (p.model, order.index(p.probe))):
        lens = PROBES[profile.probe].lens
        lines.append(f"{profile.model:<36} {lens:<18} {profile.label:<26} "
                     f"{profile.value_text():>8}  {profile.ci_text().removeprefix('95% CI ')}  ({profile.unit})")  # fmt: skip
    return "\n".join(lines)
