"""`stancelab atlas PATH ... --out DIR`: import each released folder it is pointed at (or take a
stancelab run folder as it is), then write one folder and one report: the profile table with
one row per model across papers, the topic x lens matrix per model, and the cross-paper
findings. Offline: no model call."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from stancelab.atlas.findings import (
    ModelFinding,
    cross_paper_findings,
    findings_frame,
    format_findings,
)
from stancelab.core.data.aliases import AliasTable, ModelIdentity, alias_table
from stancelab.core.errors import StancelabError
from stancelab.core.results.summary import SUMMARY_FILE, TABLES_DIR
from stancelab.core.values import json_safe
from stancelab.matrix.analysis import Matrix
from stancelab.matrix.results import MATRIX_DIR, write_matrix
from stancelab.report.build import ReportResult, build_report, format_profile_lines
from stancelab.report.model import Profile
from stancelab.report.runs import run_folders

ATLAS_DIR = "atlas"
REPORT_FILE = "report.html"
KIND = "released-data atlas"
DESCRIPTION = (
    "Import the authors' released data of several papers at once (MillStone results/<model>.csv, "
    "llm-bias-bench output/*.jsonl, IssueBench results/<model>/topic_table_long.csv; a stancelab "
    "run folder is taken as it is) and write one folder: OUT/<probe>/ per import, OUT/report.html "
    "with one row per model across papers (merged by the model alias table; --alias FILE adds "
    "yours), the topic x lens matrix per model and the cross-paper findings, and OUT/atlas/ "
    "(summary.json, tables/*.csv). No model call."
)


@dataclass(frozen=True)
class Layout:
    """One released-data layout: the probe it feeds, how to recognise it, how to import it."""

    probe: str
    description: str
    matches: Callable[[Path], bool]
    load: Callable[[Path, Path], Any]


def _millstone_counts(path: Path) -> bool:
    folder = path / "results" if (path / "results").is_dir() else path
    first = next(iter(sorted(folder.glob("*.csv"))), None) if folder.is_dir() else None
    return first is not None and "issue_stance" in first.open(encoding="utf-8").readline()


def _issuebench_tables(path: Path) -> bool:
    root = path / "results" if (path / "results").is_dir() else path
    return root.is_dir() and any(root.glob("*/topic_table_long.csv"))


def _llm_bias_bench_outputs(path: Path) -> bool:
    folder = path / "output" if (path / "output").is_dir() else path
    return folder.is_dir() and any(
        any(folder.glob(pattern)) for pattern in ("*_direct.jsonl", "*_indirect.jsonl")
    )


def _import_millstone(path: Path, out: Path) -> Any:
    from stancelab.millstone.released import import_released

    return import_released(path, out)


def _import_issuebench(path: Path, out: Path) -> Any:
    from stancelab.issuebench.run import import_released_tables

    return import_released_tables(path, out)


def _import_llm_bias_bench(path: Path, out: Path) -> Any:
    from stancelab.llm_bias_bench.run import import_authors_run

    return import_authors_run(path, out)


LAYOUTS = (
    Layout("millstone", "MillStone counts (results/<model>.csv)", _millstone_counts, _import_millstone),
    Layout("issuebench", "IssueBench tables (results/<model>/topic_table_long.csv)", _issuebench_tables,
           _import_issuebench),
    Layout("llm-bias-bench", "llm-bias-bench conversations (output/<model>_<category>.jsonl)",
           _llm_bias_bench_outputs, _import_llm_bias_bench),
)  # fmt: skip


def layout_of(path: Path) -> Layout | None:
    """The released layout of `path`; None when it is a stancelab run folder (taken as it is)."""
    if not path.is_dir():
        raise StancelabError(f"{path}: no such folder")
    if (path / SUMMARY_FILE).exists() or (path / "logs").is_dir():
        return None
    for layout in LAYOUTS:
        if layout.matches(path):
            return layout
    raise StancelabError(f"{path}: neither a stancelab run nor a released layout stancelab reads "
                         f"({'; '.join(layout.description for layout in LAYOUTS)})")  # fmt: skip


def import_sources(
    paths: list[Path], out_dir: Path, progress: Callable[[str], None] = print
) -> list[Path]:
    """Each path imported into OUT/<probe>/ (OUT/<probe>-2/, ... for a second source of one
    probe), or, when it is a run folder, taken as it is; returns the run folders."""
    folders: list[Path] = []
    used: dict[str, int] = {}
    for path in paths:
        layout = layout_of(path)
        if layout is None:
            folders.extend(run_folders(path))
            continue
        used[layout.probe] = used.get(layout.probe, 0) + 1
        target = out_dir / (
            layout.probe if used[layout.probe] == 1 else f"{layout.probe}-{used[layout.probe]}"
        )
        start = time.monotonic()
        layout.load(path, target)
        progress(
            f"imported {path} as {layout.description} into {target} ({time.monotonic() - start:.0f} s)"
        )
        folders.append(target)
    return folders


def _profile_record(profile: Profile, identity: ModelIdentity) -> dict[str, Any]:
    row = identity.rows.get(profile.model)
    return {
        "model": profile.model, "label": row.label if row else profile.model, "probe": profile.probe,
        "headline": profile.label, "value": profile.value if profile.measured() else None,
        "ci_low": profile.ci_low, "ci_high": profile.ci_high, "ci_note": profile.ci_note,
        "not_measured": profile.not_measured, "unit": profile.unit, "unit_set": profile.unit_set,
        "n": profile.n_short or profile.evidence.n, "sources": row.sources_text() if row else profile.model,
    }  # fmt: skip


def _row_records(identity: ModelIdentity) -> list[dict[str, Any]]:
    return [{"model": row.name, "label": row.label, "merged": row.merged, "sources": row.sources_text(),
             "lenses": sorted({lens for _, lens in row.sources}), "kept_apart": row.kept_apart}
            for row in identity.rows.values()]  # fmt: skip


def write_atlas(out_dir: Path, result: ReportResult, findings: list[ModelFinding], sources: list[Path],
                folders: list[Path]) -> dict[str, Any]:  # fmt: skip
    """OUT/atlas/summary.json and OUT/atlas/tables/*.csv (profiles, rows, findings)."""
    assert result.identity is not None
    identity = result.identity
    folder = out_dir / ATLAS_DIR
    (folder / TABLES_DIR).mkdir(parents=True, exist_ok=True)
    profiles = [
        _profile_record(p, identity)
        for p in sorted(result.profiles, key=lambda p: (p.model, p.probe))
    ]
    rows = _row_records(identity)
    frame = findings_frame(findings)
    pd.DataFrame(profiles).to_csv(folder / TABLES_DIR / "profiles.csv", index=False)
    pd.DataFrame(rows).to_csv(folder / TABLES_DIR / "models.csv", index=False)
    frame.to_csv(folder / TABLES_DIR / "findings.csv", index=False)
    summary = {
        "kind": KIND, "sources": [str(path) for path in sources], "runs": [str(f) for f in folders],
        "report": str(result.path), "rows": rows, "merges": [row for row in rows if row["merged"]],
        "profiles": [{key: json_safe(value) for key, value in record.items()} for record in profiles],
        "findings": [{key: json_safe(value) for key, value in record.items()} for record in frame.to_dict("records")],
        "matrix": result.matrix,
    }  # fmt: skip
    (folder / SUMMARY_FILE).write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def run_atlas(paths: list[Path], out_dir: Path, alias_files: list[Path] | None = None, seed: int = 0,
              progress: Callable[[str], None] = print) -> dict[str, Any]:  # fmt: skip
    """Import `paths` into `out_dir`, then write the report and the atlas; returns its summary."""
    start = time.monotonic()
    table: AliasTable = alias_table(*(alias_files or []))
    out_dir.mkdir(parents=True, exist_ok=True)
    folders = import_sources(paths, out_dir, progress)
    found: list[ModelFinding] = []
    matrices: list[Matrix] = []

    def findings(
        identity: ModelIdentity, matrix: Matrix, profiles: list[Profile]
    ) -> list[ModelFinding]:
        matrices.append(matrix)
        found.extend(cross_paper_findings(identity, matrix, profiles))
        return found

    result = build_report(folders, out_dir / REPORT_FILE, max_transcripts=0, seed=seed, aliases=table,
                          findings=findings)  # fmt: skip
    summary = write_atlas(out_dir, result, found, paths, folders)
    if matrices and not matrices[0].empty:
        write_matrix(out_dir / ATLAS_DIR / MATRIX_DIR, matrices[0], folders)
    progress(format_atlas(summary, found))
    progress(f"\nAtlas: {out_dir / ATLAS_DIR / SUMMARY_FILE}, tables in {out_dir / ATLAS_DIR / TABLES_DIR}/; "
             f"report: {result.path} ({time.monotonic() - start:.0f} s, no model call)")  # fmt: skip
    return summary


def format_atlas(summary: dict[str, Any], findings: list[ModelFinding]) -> str:
    """The atlas as CLI text: merges, the profile table, the findings."""
    lines = ["Models merged across sources (alias table):"]
    lines += [
        f"  {row['model']} ({row['label']}): {row['sources']}" for row in summary["merges"]
    ] or ["  none"]
    kept = [row for row in summary["rows"] if row["kept_apart"]]
    lines += [f"  kept apart: {row['model']}: {row['kept_apart']}" for row in kept]
    lines.append("")
    lines.append(format_profile_lines(_profiles_of(summary)))
    lines += ["", format_findings(findings)]
    return "\n".join(lines)


def _profiles_of(summary: dict[str, Any]) -> list[Profile]:
    """The summary's profiles back as Profile objects, for the shared text table."""
    from stancelab.report.model import Evidence

    profiles = []
    for record in summary["profiles"]:
        evidence = Evidence(n=str(record["n"] or "n/a"), ci="95% CI", refusals="-", unparsed="-")
        unit = record["unit"] + (f"; on {record['unit_set']}" if record["unit_set"] else "")
        profiles.append(Profile(record["probe"], record["model"], record["headline"], record["value"], record["ci_low"],
                                record["ci_high"], unit, "", evidence, ci_note=record["ci_note"],
                                not_measured=record["not_measured"]))  # fmt: skip
    return profiles
