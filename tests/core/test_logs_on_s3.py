"""Logs on object storage, against moto's S3 server over HTTP (started once per session): a run
to s3:// and `analyze s3://` give the summary of the same run to a folder, listing the
location once; a cut-short or interrupted log on S3 is flagged, not counted, as in a folder; a
re-run to the same URL pays no call twice; a bad URL, a missing bucket or no credentials is
one line and exit status 2; `report` and `atlas` of the URL are those of the same run in
a folder; results written to a URL land there, never among the logs."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from stancelab.cli import main
from stancelab.core.results.store import read_source
from stancelab.testing.fake_openai import FakeOpenAIServer, verdict_reply
from stancelab.testing.s3_server import S3Server
from tests.helpers import fresh_bucket, summary_figures

MODEL = "openai-api/fake/subject"
RUN = ["run", "llm-bias-bench", "--model", MODEL, "--limit", "2", "--turns", "1",
       "--prompts", "stancelab", "--display", "none"]  # fmt: skip


class Runs(NamedTuple):
    """One design run twice, each with a cache of its own: to S3 and to a folder."""

    url: str
    to_s3: Path
    folder: Path
    s3_cache: Path
    run_list_calls: int
    paid: int


@pytest.fixture(scope="module")
def fake_model() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(reply=verdict_reply) as server:
        yield server


@pytest.fixture(scope="module")
def runs(
    s3_server: S3Server, fake_model: FakeOpenAIServer, tmp_path_factory: pytest.TempPathFactory
) -> Runs:
    root = tmp_path_factory.mktemp("runs")
    url = f"s3://{fresh_bucket(s3_server)}/run"
    with pytest.MonkeyPatch.context() as patch:
        for name, value in {**s3_server.env(), **_model_env(fake_model)}.items():
            patch.setenv(name, value)
        patch.setenv("INSPECT_CACHE_DIR", str(root / "s3-cache"))
        before = len(s3_server.requests())
        assert main([*RUN, "--out", str(root / "to-s3"), "--log-dir", url]) == 0
        run_list_calls, paid = s3_server.list_calls(before), fake_model.stats.requests
        patch.setenv("INSPECT_CACHE_DIR", str(root / "folder-cache"))
        assert main([*RUN, "--out", str(root / "folder")]) == 0
    return Runs(url, root / "to-s3", root / "folder", root / "s3-cache", run_list_calls, paid)


def _model_env(server: FakeOpenAIServer) -> dict[str, str]:
    return {"FAKE_BASE_URL": server.base_url, "FAKE_API_KEY": "local"}


def _evidence(summary_file: Path) -> dict[str, Any]:
    return json.loads(summary_file.read_text()).get("evidence") or {}


def test_a_run_to_s3_and_its_analysis_give_the_summary_of_a_run_to_a_folder(
    runs: Runs, bucket: str, tmp_path: Path, s3_server: S3Server, capsys: pytest.CaptureFixture
) -> None:
    assert runs.paid > 0 and runs.run_list_calls > 0
    assert read_source(runs.to_s3).url == runs.url  # its logs went to S3, copied for the analysis
    before = len(s3_server.requests())
    assert main(["analyze", runs.url, "--out", str(tmp_path / "analysed")]) == 0
    assert s3_server.list_calls(before) == 1  # the location listed once for the analysis
    assert f"Logs read from {runs.url}: 1 file(s) listed in 1 list call" in capsys.readouterr().out
    expected = summary_figures(runs.folder / "summary.json")
    assert summary_figures(runs.to_s3 / "summary.json") == expected
    assert summary_figures(tmp_path / "analysed" / "summary.json") == expected


def test_a_rerun_to_the_same_url_pays_no_call_twice_and_copies_only_its_new_log(
    runs: Runs, bucket: str, fake_model: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path, capsys: pytest.CaptureFixture,
) -> None:  # fmt: skip
    for name, value in _model_env(fake_model).items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(runs.s3_cache))
    shutil.copytree(runs.to_s3, tmp_path / "again")
    fake_model.reset()
    assert main([*RUN, "--out", str(tmp_path / "again"), "--log-dir", runs.url]) == 0
    assert fake_model.stats.requests == 0  # every answer from Inspect's cache
    assert "2 file(s) listed in 1 list call, 1 copied" in capsys.readouterr().out


def _cut_and_interrupted(log: Path, folder: Path) -> None:
    """Into `folder`: the complete log, a copy cut short, and an interrupted copy of it."""
    from inspect_ai.log import read_eval_log, write_eval_log

    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(log, folder / log.name)
    data = log.read_bytes()
    (folder / f"2026-01-01T00-00-00+00-00_cut_{log.stem[-8:]}.eval").write_bytes(
        data[: len(data) // 2]
    )
    interrupted = read_eval_log(str(log))
    interrupted.status = "error"
    interrupted.eval.eval_id = f"stopped-{interrupted.eval.eval_id}"  # an eval of its own
    interrupted.samples = (interrupted.samples or [])[:1]
    write_eval_log(
        interrupted, str(folder / f"2026-01-01T00-00-01+00-00_stopped_{log.stem[-8:]}.eval")
    )


def test_a_cut_short_or_interrupted_log_on_s3_is_flagged_not_counted_as_in_a_folder(
    runs: Runs, tmp_path: Path, bucket: str, capsys: pytest.CaptureFixture
) -> None:
    import fsspec.core

    (log,) = (runs.folder / "logs").glob("*.eval")
    _cut_and_interrupted(log, tmp_path / "folder" / "logs")
    fs, _ = fsspec.core.url_to_fs(f"s3://{bucket}")
    for path in (tmp_path / "folder" / "logs").iterdir():
        fs.put_file(str(path), f"{bucket}/damaged/{path.name}")
    capsys.readouterr()

    assert main(["analyze", str(tmp_path / "folder")]) == 0
    in_folder = capsys.readouterr().out
    assert main(["analyze", f"s3://{bucket}/damaged", "--out", str(tmp_path / "copy")]) == 0
    on_s3 = capsys.readouterr().out
    evidence = _evidence(tmp_path / "copy" / "summary.json")
    assert evidence["partial"] and len(evidence["unreadable_logs"]) == 1
    assert len(evidence["interrupted_logs_ignored"]) == 1  # flagged, its samples not counted
    assert _evidence(tmp_path / "folder" / "summary.json") == evidence  # the folder's rules
    assert summary_figures(tmp_path / "copy" / "summary.json") == summary_figures(
        tmp_path / "folder" / "summary.json"
    )
    folder_text = in_folder.replace(str(tmp_path / "folder"), "RUN")
    assert on_s3.split("\n", 1)[1].replace(str(tmp_path / "copy"), "RUN") == folder_text


@pytest.mark.parametrize(
    ("where", "message"),
    [("nothing://bucket/p", "not a log location"),
     ("s3://no-such-bucket/p", "the bucket does not exist")],
)  # fmt: skip
def test_a_bad_location_is_one_line_and_exit_2(
    where: str, message: str, tmp_path: Path, bucket: str, capsys: pytest.CaptureFixture
) -> None:
    for command in (["analyze", where, "--out", str(tmp_path / "a")],
                    [*RUN, "--out", str(tmp_path / "r"), "--log-dir", where]):  # fmt: skip
        assert main(command) == 2
        error = capsys.readouterr().err.strip()
        assert error.startswith("error: ") and message in error and "\n" not in error
    assert not (tmp_path / "r").exists()  # refused before anything was written


def test_an_empty_location_is_one_line_and_exit_2(
    tmp_path: Path, bucket: str, capsys: pytest.CaptureFixture
) -> None:
    assert main(["analyze", f"s3://{bucket}/empty", "--out", str(tmp_path / "a")]) == 2
    error = capsys.readouterr().err.strip()
    assert error == f"error: No files at s3://{bucket}/empty: nothing to read there."


def test_no_credentials_is_one_line_and_exit_2(
    tmp_path: Path, bucket: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    import s3fs

    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    s3fs.S3FileSystem.clear_instance_cache()
    try:
        assert main(["analyze", f"s3://{bucket}/p", "--out", str(tmp_path / "a")]) == 2
    finally:
        s3fs.S3FileSystem.clear_instance_cache()
    error = capsys.readouterr().err.strip()
    assert error.startswith("error: ") and "no credentials" in error and "\n" not in error


def test_a_folder_that_holds_other_logs_is_never_overwritten_by_a_copy(
    runs: Runs, tmp_path: Path, bucket: str, capsys: pytest.CaptureFixture
) -> None:
    own = tmp_path / "own"
    shutil.copytree(runs.folder, own)
    logs = {path: path.read_bytes() for path in (own / "logs").iterdir()}
    assert main(["analyze", runs.url, "--out", str(own)]) == 2
    assert "not a copy of" in capsys.readouterr().err
    assert {path: path.read_bytes() for path in (own / "logs").iterdir()} == logs


def test_results_within_the_log_location_are_refused_in_one_line(
    runs: Runs, tmp_path: Path, bucket: str, capsys: pytest.CaptureFixture
) -> None:
    from stancelab.core.results.store import list_location

    before = list_location(runs.url)
    assert main(["analyze", runs.url, "--out", f"{runs.url}/analysis"]) == 2
    error = capsys.readouterr().err.strip()
    assert "within the log location" in error and "\n" not in error
    assert list_location(runs.url) == before  # nothing written among the logs


LOG_NAME = re.compile(r"\d{4}-\d\d-\d\dT[\d-]+_llm-bias-bench_\w+\.eval")
GENERATED = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC")  # when a page was written


def _page(path: Path, folder: str) -> str:
    """A report page with where its logs lay (the run folder, each log's name) and when it
    was written left out (two pages written a second apart can fall in two minutes)."""
    page = LOG_NAME.sub("LOG", path.read_text().replace(folder, "RUN"))
    return GENERATED.sub("WHEN", page)


def test_report_and_atlas_of_a_url_are_those_of_the_same_run_in_a_folder(
    runs: Runs, tmp_path: Path, bucket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import fsspec.core

    url = f"s3://{bucket}/run"  # the run's logs as Inspect wrote them to S3, before other tests'
    fs, _ = fsspec.core.url_to_fs(url)
    for log in (runs.to_s3 / "logs").glob("*.eval"):
        fs.put_file(str(log), f"{bucket}/run/{log.name}")
    monkeypatch.chdir(tmp_path)  # the URL's local run folder: runs/store/s3/BUCKET/run
    copy = str(Path("runs", "store", "s3", bucket, "run"))
    outputs = {"url": (url, copy), "folder": (str(runs.folder), str(runs.folder))}
    for name, (location, _) in outputs.items():
        assert main(["report", location, "-o", f"{name}.html"]) == 0
        assert main(["atlas", location, "--out", f"atlas-{name}"]) == 0
    pages = {
        name: _page(tmp_path / f"{name}.html", folder) for name, (_, folder) in outputs.items()
    }
    assert pages["url"] == pages["folder"] and pages["url"].count("data:image/png;base64,") > 0
    atlases = {name: _page(tmp_path / f"atlas-{name}" / "report.html", folder)
               for name, (_, folder) in outputs.items()}  # fmt: skip
    assert atlases["url"] == atlases["folder"]
    for table in (tmp_path / "atlas-folder" / "atlas" / "tables").glob("*.csv"):
        assert (
            tmp_path / "atlas-url" / "atlas" / "tables" / table.name
        ).read_text() == table.read_text()
    summaries = [json.loads(_page(tmp_path / f"atlas-{name}" / "atlas" / "summary.json", folder))
                 for name, (_, folder) in outputs.items()]  # fmt: skip
    assert [summary.pop("report") for summary in summaries] == [
        "atlas-url/report.html", "atlas-folder/report.html"]  # fmt: skip
    assert summaries[0] == summaries[1]
