"""run.toml: written only for valid options, with paths that repeat the run from any working
directory, and every configuration that ran in a folder kept."""

from __future__ import annotations

import tomllib
from dataclasses import asdict
from pathlib import Path

import pytest

from stancelab.cli import _config_probe, build_parser, main, options_from_args
from stancelab.core.runs.options import RUN_CONFIG, config_digest, write_config
from stancelab.millstone.run import MillstoneRun
from tests.millstone.test_run_mockllm import _issues_file


def _options_of(argv: list[str]) -> MillstoneRun:
    return options_from_args(build_parser().parse_args(_config_probe(argv)))[1]


def test_a_failed_run_leaves_the_complete_runs_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "run"
    complete = write_config(
        "millstone", MillstoneRun(models=["mockllm/model"], out_dir=folder, limit=2, trials=3)
    )
    before = complete.read_text()
    missing = ["--issues-file", str(tmp_path / "no-such-issues.jsonl")]
    for mistake in (["--model", "nosuch/model"], ["--trials", "0"], ["--limit", "0"], missing):
        assert main(["run", "millstone", *mistake, "--out", str(folder), "--display", "none"]) == 2
        assert complete.read_text() == before, mistake
    assert sorted(path.name for path in folder.iterdir()) == [RUN_CONFIG]
    capsys.readouterr()


def test_config_repeats_the_run_from_any_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    elsewhere.mkdir()
    (project / "data").mkdir(parents=True)
    _issues_file(project / "data" / "issues.jsonl")
    monkeypatch.chdir(project)
    options = _options_of(["run", "millstone", "--model", "mockllm/model", "--issues-file", "data/issues.jsonl",
                           "--limit", "1", "--out", "runs/x"])  # fmt: skip
    config = write_config("millstone", options)
    written = tomllib.loads(config.read_text())["options"]
    assert written["out_dir"] == "." and Path(written["issues_file"]).is_absolute()
    monkeypatch.chdir(elsewhere)
    again = _options_of(["run", "--config", str(project / "runs" / "x" / RUN_CONFIG)])
    assert again.out_dir.resolve() == (project / "runs" / "x").resolve()
    assert (
        again.issues_file is not None
        and again.issues_file.resolve() == (project / "data" / "issues.jsonl").resolve()
    )
    relative = _options_of(
        ["run", "--config", str(Path("..") / "project" / "runs" / "x" / RUN_CONFIG)]
    )
    assert relative.out_dir.resolve() == (project / "runs" / "x").resolve()


def test_a_file_inside_the_run_folder_is_kept_relative_to_it(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    issues = _issues_file(folder / "issues.jsonl")
    config = write_config(
        "millstone", MillstoneRun(models=["mockllm/model"], out_dir=folder, issues_file=issues)
    )
    assert tomllib.loads(config.read_text())["options"]["issues_file"] == "issues.jsonl"
    moved = tmp_path / "moved"
    folder.rename(moved)
    again = _options_of(["run", "--config", str(moved / RUN_CONFIG)])
    assert (again.out_dir, again.issues_file) == (moved, moved / "issues.jsonl")


def test_every_configuration_in_a_folder_is_kept(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    first = MillstoneRun(models=["mockllm/a"], out_dir=folder, limit=1, trials=2)
    second = MillstoneRun(models=["mockllm/a"], out_dir=folder, limit=1, trials=5)
    first_text = write_config("millstone", first).read_text()
    write_config("millstone", first)  # the same configuration again: nothing new
    assert sorted(path.name for path in folder.iterdir()) == [RUN_CONFIG]
    write_config("millstone", second)
    kept = folder / f"run-{config_digest(first_text)}.toml"
    assert kept.read_text() == first_text
    assert _options_of(["run", "--config", str(kept)]).trials == 2
    assert _options_of(["run", "--config", str(folder / RUN_CONFIG)]).trials == 5
    write_config("millstone", first)  # back to the first: run.toml holds it, the second is kept
    names = sorted(path.name for path in folder.iterdir())
    assert len(names) == 2 and RUN_CONFIG in names and kept.name not in names
    assert asdict(_options_of(["run", "--config", str(folder / RUN_CONFIG)])) == asdict(first)
