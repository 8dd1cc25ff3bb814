"""Logs on object storage: a log location given as an fsspec URL (`s3://bucket/prefix`, or any
protocol Inspect writes through fsspec: `gs://`, `az://`, ...).

Inspect writes a run's logs to the URL itself. stancelab reads them as it reads a folder: the
location is listed once per command (one recursive listing), each log that is new or changed
since the last read (size, ETag or modification time) is copied into a local run folder's
`logs/` with the store's modification time, logs gone from the store are removed from the
copy, and the folder is then analysed as any other (`mirror_logs`): the same rules of which
logs count, the same flags for partial runs and damaged files. stancelab's own files (run.toml,
summary.json, tables, the report) are written in that local folder.

The copy records its source in the folder (`SOURCE_FILE`, beside `logs/`): a folder whose logs
came from elsewhere is never overwritten by a copy.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from stancelab.core.errors import StancelabError

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog

SOURCE_FILE = ".logs-source.json"
"""in a run folder whose `logs/` is a copy of a log location: the location and its files"""
STORE_RUNS = Path("runs") / "store"
"""where a URL's local run folder goes by default: runs/store/<scheme>/<bucket>/<prefix>"""


def is_url(location: str | Path) -> bool:
    """Whether a log location is an fsspec URL other than a local file."""
    text = str(location)
    return "://" in text and not text.startswith("file://")


def default_folder(url: str) -> Path:
    """The local run folder of a log location URL when none is given."""
    scheme, _, rest = url.partition("://")
    return (
        STORE_RUNS
        / scheme
        / Path(*[part for part in rest.split("/") if part not in ("", ".", "..")])
    )


class StoredFile(BaseModel):
    """One file of a log location as its listing gave it."""

    size: int
    version: str
    """ETag where the store gives one, else the modification time"""
    modified: float
    """seconds since the epoch (0 where the store gives none)"""


class Source(BaseModel):
    """What a run folder's `logs/` is a copy of (`SOURCE_FILE`)."""

    url: str
    files: dict[str, StoredFile]


@dataclass(frozen=True)
class Mirror:
    """One read of a log location: its files listed, copied, removed, and the list calls made."""

    url: str
    folder: Path
    listed: int
    fetched: int
    removed: int
    list_calls: int = 1

    def line(self) -> str:
        return (f"Logs read from {self.url}: {self.listed} file(s) listed in {self.list_calls} "
                f"list call, {self.fetched} copied ({self.removed} removed) to {self.folder / 'logs'}; "
                f"summary and tables written in {self.folder}")  # fmt: skip


def store_filesystem(url: str) -> tuple[Any, str]:
    """The fsspec filesystem of a URL and the path within it; a protocol that fsspec does not
    know, or whose package is missing, is one clear error."""
    import fsspec.core

    try:
        return fsspec.core.url_to_fs(url)
    except ValueError as error:
        raise StancelabError(f"{url}: not a log location ({error}).") from None
    except ImportError as error:
        raise StancelabError(f"{url}: {error} (stancelab's `cluster` extra has s3fs).") from None


def store_error(url: str, error: BaseException) -> StancelabError:
    """A store's refusal as one line: the bucket missing, no credentials, access denied."""
    name = type(error).__name__
    if isinstance(error, FileNotFoundError):
        return StancelabError(f"{url}: the bucket does not exist ({error}).")
    if "Credentials" in name:
        return StancelabError(f"{url}: no credentials for the store ({error}); set "
                              "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or a profile.")  # fmt: skip
    if isinstance(error, PermissionError):
        return StancelabError(f"{url}: access denied ({error}).")
    return StancelabError(f"{url}: cannot reach the store ({name}: {error}).")


def check_location(url: str) -> None:
    """A log location URL that can be written: its protocol known and its bucket reachable with
    the credentials at hand (one request, no listing); raises one clear error otherwise."""
    fs, root = store_filesystem(url)
    bucket = root.strip("/").split("/")[0]
    if not bucket:
        return
    try:
        fs.info(bucket)
    except Exception as error:
        raise store_error(url, error) from None


def list_location(url: str) -> dict[str, StoredFile]:
    """Every file under a log location (one recursive listing), by its path below the URL."""
    fs, root = store_filesystem(url)
    root = root.rstrip("/")
    try:
        fs.invalidate_cache(root)  # an earlier listing in this process is no answer now
        found = fs.find(root, detail=True)
    except Exception as error:
        raise store_error(url, error) from None
    return {name[len(root):].lstrip("/"): _stored(info) for name, info in found.items()
            if info.get("type", "file") == "file" and name.startswith(root)}  # fmt: skip


LOG_SUFFIXES = (".eval", ".json")
"""the files of a log location named as Inspect logs"""
_HEADERS: dict[tuple[str, str], EvalLog | None] = {}
"""log headers read from a store, by URL and version (None: no readable log)"""


def location_log_headers(url: str) -> list[EvalLog]:
    """The headers of the readable Inspect logs at a log location, less the shard logs that a
    complete merged log covers (as `results.logs.log_files` for a folder): one listing, and each
    log's header read once per process while its version is unchanged."""
    from inspect_ai.log import EvalLogInfo

    from stancelab.core.inspect_private import without_merged_shards

    base = url.rstrip("/")
    listed = {f"{base}/{name}": stored for name, stored in list_location(url).items()
              if name.endswith(LOG_SUFFIXES)}  # fmt: skip
    infos = [EvalLogInfo(name=name, type="file", size=stored.size, mtime=stored.modified,
                         task="", task_id="", suffix=None) for name, stored in listed.items()]  # fmt: skip
    try:
        kept = [info.name for info in without_merged_shards(infos)]
    except Exception:  # a merged log that cannot be read hides nothing
        kept = list(listed)
    headers = (_header(name, listed[name].version) for name in sorted(kept))
    return [header for header in headers if header is not None]


def _header(log_url: str, version: str) -> EvalLog | None:
    from inspect_ai.log import read_eval_log

    key = (log_url, version)
    if key not in _HEADERS:
        try:
            _HEADERS[key] = read_eval_log(log_url, header_only=True)
        except Exception:  # cut short, empty, or a JSON file that is not a log
            _HEADERS[key] = None
    return _HEADERS[key]


def _stored(info: dict[str, Any]) -> StoredFile:
    modified = next((info[key] for key in ("LastModified", "mtime", "updated", "last_modified")
                     if info.get(key) is not None), None)  # fmt: skip
    if isinstance(modified, datetime):
        seconds = modified.timestamp()
    elif isinstance(modified, int | float):
        seconds = float(modified)
    elif isinstance(modified, str):
        seconds = datetime.fromisoformat(modified.replace("Z", "+00:00")).timestamp()
    else:
        seconds = 0.0
    version = str(info.get("ETag") or info.get("etag") or info.get("md5Hash") or seconds)
    return StoredFile(size=int(info.get("size") or 0), version=version, modified=seconds)


def read_source(folder: Path) -> Source | None:
    path = folder / SOURCE_FILE
    if not path.exists():
        return None
    return Source.model_validate_json(path.read_text())


def check_copy(url: str, folder: Path) -> Source | None:
    """The source of `folder`'s copy of `url`'s logs (None before the first copy); a folder whose
    `logs/` holds other logs (its own, or a copy of another location) is refused."""
    previous = read_source(folder)
    if previous is not None and previous.url != url:
        raise StancelabError(f"{folder}: its logs are a copy of {previous.url}, not {url}; "
                             "give another --out.")  # fmt: skip
    logs = folder / "logs"
    if previous is None and logs.is_dir() and any(path.is_file() for path in logs.rglob("*")):
        raise StancelabError(f"{logs} holds logs that are not a copy of {url}; give another --out.")
    return previous


def mirror_logs(url: str, folder: Path) -> Mirror:
    """Copy the logs of `url` into `folder/logs` after one listing: new and changed files
    copied (each written whole, then renamed, with the store's modification time), files gone
    from the store removed from the copy. A folder whose `logs/` holds other logs is refused."""
    logs = folder / "logs"
    previous = check_copy(url, folder)
    listed = list_location(url)
    known = previous.files if previous is not None else {}
    fs, root = store_filesystem(url)
    fetched = 0
    for name, stored in sorted(listed.items()):
        target = logs / name
        if known.get(name) == stored and target.exists():
            continue
        _fetch(fs, f"{root.rstrip('/')}/{name}", target, stored, url)
        fetched += 1
    removed = 0
    for name in sorted(set(known) - set(listed)):
        (logs / name).unlink(missing_ok=True)
        removed += 1
    logs.mkdir(parents=True, exist_ok=True)
    (folder / SOURCE_FILE).write_text(Source(url=url, files=listed).model_dump_json(indent=1))
    return Mirror(url, folder, len(listed), fetched, removed)


ANALYSIS_SUFFIX = "-analysis"
"""a launched run's analysis of a log location URL writes its results beside it: URL + this"""


def analysis_url(location: str) -> str:
    """Where a launched run's analysis of a log location URL writes its summary and tables:
    beside the logs (`s3://bucket/run` -> `s3://bucket/run-analysis`), never under them, where
    the next listing would read them as logs."""
    scheme, _, rest = location.rstrip("/").partition("://")
    if "/" not in rest:
        raise StancelabError(f"--log-dir {location}: give the logs a prefix (e.g. {location.rstrip('/')}"
                             f"/run), so that the analysis can write beside them ({location.rstrip('/')}"
                             f"/run{ANALYSIS_SUFFIX}).")  # fmt: skip
    return f"{scheme}://{rest}{ANALYSIS_SUFFIX}"


def check_results_url(url: str, location: str | Path) -> None:
    """A URL that an analysis of `location` may write its results to: reachable, and not the
    log location or within it."""
    if is_url(location):
        logs = str(location).rstrip("/")
        if url.rstrip("/") == logs or url.startswith(f"{logs}/"):
            raise StancelabError(f"--out {url}: within the log location {location}, where the next "
                                 f"read would take the results for logs; give another (e.g. "
                                 f"{logs}{ANALYSIS_SUFFIX}).")  # fmt: skip
    check_location(url)


def upload_results(folder: Path, url: str) -> int:
    """Copy a run folder's results (every file but its logs, their copy's record and files being
    written) to `url`, each under its path in the folder; the number of files copied."""
    fs, root = store_filesystem(url)
    files = [path for path in sorted(folder.rglob("*")) if path.is_file()
             and not _log_or_record(path.relative_to(folder))]  # fmt: skip
    for path in files:
        try:
            fs.put_file(str(path), f"{root.rstrip('/')}/{path.relative_to(folder).as_posix()}")
        except Exception as error:
            raise store_error(url, error) from None
    return len(files)


def _log_or_record(relative: Path) -> bool:
    return ("logs" in relative.parts[:-1] or relative.name == SOURCE_FILE
            or relative.name.endswith(".part"))  # fmt: skip


def _fetch(fs: Any, remote: str, target: Path, stored: StoredFile, url: str) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.part")
    try:
        fs.get_file(remote, str(partial))
    except Exception as error:
        partial.unlink(missing_ok=True)
        raise store_error(url, error) from None
    if stored.modified:
        os.utime(partial, (stored.modified, stored.modified))
    partial.replace(target)
