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
from stancelab.testing.fake_openai import FakeOpenAIServer
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


INPUT_FILES = {
    "millstone": ["--issues-file"],
    "conviction": ["--statements-file"],
    "even-handedness": ["--pairs-file", "--topic-map-file"],
    "prior-prejudice": ["--claims-file", "--topic-map-file"],
    "issuebench": ["--issues-file", "--templates-file", "--voters-file"],
    "llm-bias-bench": ["--topics-file"],
}
OWN_PROMPTS = {"millstone": ["--prompts", "stancelab"], "issuebench": ["--prompts", "stancelab"]}
BAD_FILES = {"empty.jsonl": "", "cut.jsonl": '{"id": 1', "empty.csv": ""}


@pytest.mark.parametrize(
    ("probe", "flag"), [(probe, flag) for probe, flags in INPUT_FILES.items() for flag in flags]
)
def test_an_unreadable_input_file_stops_the_run_before_its_config_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], probe: str, flag: str
) -> None:
    """Every input file is read in validation (a topic map too, whether or not --shared-topics
    reads it): one line, status 2, and no run.toml in the folder."""
    folder = tmp_path / "run"
    for name, text in BAD_FILES.items():
        (tmp_path / name).write_text(text)
        argv = ["run", probe, "--model", "mockllm/model", "--display", "none", *OWN_PROMPTS.get(probe, []),
                flag, str(tmp_path / name), "--out", str(folder)]  # fmt: skip
        assert main(argv) == 2, (flag, name)
        err = capsys.readouterr().err.strip()
        assert err.startswith("error: ") and len(err.splitlines()) == 1, err
        assert not (folder / RUN_CONFIG).exists(), (flag, name)


def test_a_run_stopped_by_its_input_file_leaves_run_toml_and_the_summary_as_they_were(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, issues = tmp_path / "run", _issues_file(tmp_path / "issues.jsonl")
    common = ["run", "millstone", "--model", "openai-api/fake/m", "--display", "none",
              "--prompts", "stancelab", "--out", str(folder)]  # fmt: skip
    with FakeOpenAIServer() as server:
        monkeypatch.setenv("FAKE_BASE_URL", server.base_url)
        monkeypatch.setenv("FAKE_API_KEY", "local")
        assert main([*common, "--issues-file", str(issues), "--trials", "1"]) == 0
    assert main(["analyze", str(folder)]) == 0
    config, summary = (folder / RUN_CONFIG).read_text(), (folder / "summary.json").read_text()
    listing = sorted(path.name for path in folder.iterdir())
    for name, text in BAD_FILES.items():
        (tmp_path / name).write_text(text)
        assert main([*common, "--issues-file", str(tmp_path / name), "--trials", "2"]) == 2
        assert (folder / RUN_CONFIG).read_text() == config, name
        assert sorted(path.name for path in folder.iterdir()) == listing, name
    assert main(["analyze", str(folder)]) == 0
    assert (folder / "summary.json").read_text() == summary
    capsys.readouterr()
