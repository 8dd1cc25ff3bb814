"""Loading the authors' released per-issue tables and iSideWith voter data."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pandas as pd
from pydantic import BaseModel, Field, ValidationError

from stancelab.core.data.files import invalid_record
from stancelab.core.errors import DataFileError, StancelabError
from stancelab.issuebench.dataset import authors_issue_tags, with_topic_tags
from stancelab.issuebench.labels import LABELS

TABLE_FILE = "topic_table_long.csv"


def read_topic_table(path: Path, model: str) -> pd.DataFrame:
    """One model's `topic_table_long.csv` (percentages) as a distribution frame (shares)."""
    rows = []
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        missing = {"topic_combined", *LABELS} - set(reader.fieldnames or [])
        if missing:
            raise DataFileError(path, 1, sorted(missing)[0], "missing column")
        for row in reader:
            issue_id, _, framing = row["topic_combined"].rpartition("-")
            if framing not in ("neutral", "pro", "con") or not issue_id:
                raise DataFileError(
                    path,
                    reader.line_num,
                    "topic_combined",
                    f"expected <issue>-<framing>, got {row['topic_combined']!r}",
                )
            try:
                shares = {label: float(row[label]) / 100 for label in LABELS}
            except ValueError as error:
                raise DataFileError(
                    path, reader.line_num, None, f"not a number: {error}"
                ) from error
            rows.append({"model": model, "issue_id": issue_id, "framing": framing,
                         "phrase": row.get("topic_text", ""), **shares,
                         "n": np.nan, "n_unparsed": np.nan})  # fmt: skip
    return _with_issue_names(pd.DataFrame(rows))


def _with_issue_names(frame: pd.DataFrame) -> pd.DataFrame:
    """An `issue` column: each issue's phrase under neutral framing (its id where unknown)."""
    neutral = (
        frame[frame["framing"] == "neutral"]
        .drop_duplicates("issue_id")
        .set_index("issue_id")["phrase"]
    )
    names = frame["issue_id"].map(neutral).fillna(frame["issue_id"])
    frame = frame.drop(columns="phrase")
    frame.insert(2, "issue", names.replace("", np.nan).fillna(frame["issue_id"]))
    return frame


def read_released_tables(folder: Path | str) -> pd.DataFrame:
    """All `results/<model>/topic_table_long.csv` under a folder (or its `results/`), each issue
    tagged with its shared topic by `topic_map_authors.csv`."""
    folder = Path(folder)
    root = folder / "results" if (folder / "results").is_dir() else folder
    files = sorted(root.glob(f"*/{TABLE_FILE}"))
    if not files:
        raise StancelabError(f"No results/<model>/{TABLE_FILE} files under {folder}")
    tables = pd.concat(
        [read_topic_table(file, file.parent.name) for file in files], ignore_index=True
    )
    return with_topic_tags(tables, authors_issue_tags())


class _VoterShares(BaseModel):
    topic_id: str = Field(min_length=1)
    total_pro: float = Field(ge=0, le=1)
    total_con: float = Field(ge=0, le=1)
    dem_pro: float = Field(ge=0, le=1)
    dem_con: float = Field(ge=0, le=1)
    rep_pro: float = Field(ge=0, le=1)
    rep_con: float = Field(ge=0, le=1)


def load_voters(path: Path | str) -> pd.DataFrame:
    """iSideWith-format voter shares -> issue_id, dem, rep, all (support minus opposition)."""
    path = Path(path)
    if not path.exists():
        raise DataFileError(path, None, None, "file does not exist")
    rows = []
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        for row in reader:
            try:
                shares = _VoterShares.model_validate(
                    {k: v for k, v in row.items() if k in _VoterShares.model_fields}
                )
            except ValidationError as error:
                raise invalid_record(path, reader.line_num, error) from error
            rows.append({
                "issue_id": shares.topic_id,
                "dem": shares.dem_pro - shares.dem_con,
                "rep": shares.rep_pro - shares.rep_con,
                "all": shares.total_pro - shares.total_con,
            })  # fmt: skip
    if not rows:
        raise DataFileError(path, None, None, "file holds no rows")
    return pd.DataFrame(rows)
