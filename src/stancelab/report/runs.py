"""Finding run folders and loading their results (re-analysing logs when they are newer)."""

from __future__ import annotations

import json
from pathlib import Path

from stancelab.core.errors import StancelabError
from stancelab.core.results.logs import log_files
from stancelab.core.results.summary import RunResult, read_tables
from stancelab.core.runs.pipeline import reanalyse
from stancelab.probes import get_probe, probes_in

SUMMARY_FILE = "summary.json"
SKIPPED_FOLDERS = {
    "logs",
    "tables",
    "matrix",
    "atlas",
}  # matrix: the topic x lens matrix of a `run all`; atlas: `stancelab atlas`


def _probe_of_logs(folder: Path) -> list[str]:
    return probes_in(folder / "logs") if (folder / "logs").is_dir() else []


def _summary_is_stale(folder: Path) -> bool:
    summary = folder / SUMMARY_FILE
    newest_log = max((path.stat().st_mtime for path in log_files(folder / "logs")), default=0.0)
    return not summary.exists() or newest_log > summary.stat().st_mtime


def _analyse(folder: Path, seed: int) -> None:
    for probe in _probe_of_logs(folder):
        reanalyse(get_probe(probe), folder, seed=seed)


def load_run(folder: Path, seed: int = 0) -> RunResult:
    """The results of the probe run in `folder` (its summary.json and tables)."""
    if (folder / "logs").is_dir() and _summary_is_stale(folder):
        _analyse(folder, seed)
    path = folder / SUMMARY_FILE
    try:
        summary = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as error:
        raise StancelabError(f"{path}: not a readable stancelab summary ({error})") from None
    probe = summary.get("probe")
    if not isinstance(probe, str):
        raise StancelabError(f"{path}: the summary names no probe (field 'probe')")
    return RunResult(get_probe(probe).name, folder, summary, read_tables(folder))


def _is_run(folder: Path) -> bool:
    return (folder / SUMMARY_FILE).exists() or bool(_probe_of_logs(folder))


def run_folders(folder: Path) -> list[Path]:
    """`folder` itself when it holds a run, else the run folders below it."""
    if _is_run(folder):
        return [folder]
    found: list[Path] = []
    for child in sorted(path for path in folder.iterdir() if path.is_dir()):
        if child.name not in SKIPPED_FOLDERS:
            found.extend(run_folders(child))
    return found


def load_runs(folders: list[Path], seed: int = 0) -> list[RunResult]:
    """Every probe run found in (or below) the given folders."""
    runs: list[RunResult] = []
    for folder in folders:
        if not folder.is_dir():
            raise StancelabError(f"{folder}: no such folder")
        found = run_folders(folder)
        if not found:
            raise StancelabError(f"{folder}: no stancelab run (summary.json or probe logs) inside")
        runs.extend(load_run(path, seed) for path in found)
    return runs
