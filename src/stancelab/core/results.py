"""One probe run's results as written to its folder: summary.json and tables/*.csv."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

SUMMARY_FILE = "summary.json"
TABLES_DIR = "tables"


@dataclass
class RunResult:
    """One probe's results in one run folder: summary.json, tables/*.csv and (maybe) logs."""

    probe: str
    folder: Path
    summary: dict[str, Any]
    tables: dict[str, pd.DataFrame]

    @property
    def logs(self) -> Path:
        return self.folder / "logs"

    @property
    def models(self) -> list[str]:
        return list(self.summary.get("models", []))

    def table(self, name: str) -> pd.DataFrame:
        """A result table, or an empty frame when this run did not produce it."""
        return self.tables.get(name, pd.DataFrame())


def read_tables(folder: Path) -> dict[str, pd.DataFrame]:
    """Every tables/*.csv of a run folder, by name (an empty file as an empty frame)."""
    tables = {}
    for path in sorted((folder / TABLES_DIR).glob("*.csv")):
        try:
            tables[path.stem] = pd.read_csv(path)
        except pd.errors.EmptyDataError:
            tables[path.stem] = pd.DataFrame()
    return tables


def write_summary(folder: Path, summary: dict[str, Any]) -> Path:
    """Write summary.json as every probe writes it."""
    path = folder / SUMMARY_FILE
    path.write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    return path
