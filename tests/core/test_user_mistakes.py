"""Every user mistake ends in one line on stderr naming it, exit status 2 and no traceback
(Ctrl-C: one line and status 130), run through the command line's `main` as `stancelab`
runs it; two through a real `python -m stancelab` process."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval

from stancelab.cli import main
from stancelab.millstone.task import millstone
from stancelab.testing.fake_openai import FakeOpenAIServer
from tests.fake_runs import fake_server_env, stancelab_command, stop_after_calls
from tests.helpers import scripted_model
from tests.millstone.test_run_mockllm import _issues_file

MOCK = ["--model", "mockllm/model", "--display", "none"]


def _one_line_error(capsys: pytest.CaptureFixture[str], argv: list[str], status: int = 2) -> str:
    """Run `stancelab argv`; its stderr when it is one line and the status is `status`."""
    try:
        code = main(argv)
    except SystemExit as exited:  # argparse's own errors exit
        code = exited.code
    err = capsys.readouterr().err.strip()
    assert code == status, err
    assert "Traceback" not in err
    assert len(err.splitlines()) == 1, err
    return err


def _unwritable(tmp_path: Path) -> Path:
    """A folder `--out` cannot be made in (root writes anywhere a mode allows; /proc refuses)."""
    if os.geteuid() == 0:
        return Path("/proc/stancelab-no-such-folder/out")
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    return locked / "out"


def _run(probe: str, *flags: str) -> Callable[[Path], list[str]]:
    """`run PROBE` on a scripted model into tmp/o, with `flags`."""
    return lambda tmp: ["run", probe, *MOCK, "--limit", "1", *flags, "--out", str(tmp / "o")]


# A bad value of a list option or a number out of its declared range: one line naming the
# value and what is allowed, before any call (nothing is written).
BAD_VALUES: dict[str, tuple[Callable[[Path], list[str]], str]] = {
    "categories foo": (_run("llm-bias-bench", "--categories", "foo"),
                       "--categories must be among direct, indirect; got 'foo'"),
    "framings sideways": (_run("issuebench", "--framings", "neutral,sideways"),
                          "--framings must be among neutral, pro, con; got 'sideways'"),
    "templates T9": (_run("prior-prejudice", "--templates", "T1,T9"),
                     "--templates must be among T1, T2, T3, T4; got 'T9'"),
    "hedging threshold 2": (_run("even-handedness", "--hedging-threshold", "2"),
                            "--hedging-threshold must be between 0 and 1, not 2"),
    "hedging threshold -0.5": (_run("even-handedness", "--hedging-threshold=-0.5"),
                               "--hedging-threshold must be between 0 and 1, not -0.5"),
    "rpm 0": (_run("conviction", "--rpm", "0"), "--rpm must be at least 0.001, not 0"),
    "rpm -60": (_run("conviction", "--rpm=-60"), "--rpm must be at least 0.001, not -60"),
    "rpm nan": (_run("conviction", "--rpm", "nan"), "--rpm must be a number"),
    "rpm abc": (_run("conviction", "--rpm", "abc"), "--rpm: invalid"),
}  # fmt: skip


MISTAKES: dict[str, tuple[Callable[[Path], list[str]], str]] = {
    "limit 0": (lambda tmp: ["estimate", "millstone", "--limit", "0"], "--limit must be at least 1, not 0"),
    "limit -1": (lambda tmp: ["estimate", "millstone", "--limit", "-1"], "--limit must be at least 1, not -1"),
    "trials 0": (lambda tmp: ["run", "millstone", *MOCK, "--limit", "1", "--trials", "0", "--out", str(tmp / "o")],
                 "--trials must be at least 1"),
    "estimate trials 0": (lambda tmp: ["estimate", "millstone", "--trials", "0"], "--trials must be at least 1"),
    "workers 0": (lambda tmp: ["run", "llm-bias-bench", *MOCK, "--workers", "0", "--out", str(tmp / "o")],
                  "--workers must be at least 1"),
    "max tokens 0": (lambda tmp: ["estimate", "issuebench", "--max-tokens", "0"], "--max-tokens must be at least 1"),
    "temperature nan": (lambda tmp: ["estimate", "millstone", "--temperature", "nan"], "--temperature must be a number"),
    "negative price": (lambda tmp: ["estimate", "conviction", "--price", "openai/x=1,-2"], "--price openai/x"),
    "unknown model": (lambda tmp: ["run", "millstone", "--model", "nosuch/model", "--limit", "1", "--out", str(tmp / "o")],
                      "Model 'nosuch/model': Inspect knows no provider 'nosuch'"),
    "unknown role model": (lambda tmp: ["estimate", "llm-bias-bench", "--role", "judge=nosuch/judge"],
                           "Model 'nosuch/judge'"),
    "out is a file": (lambda tmp: ["run", "millstone", *MOCK, "--limit", "1", "--trials", "1",
                                   "--out", str(tmp / "file.txt")], "is a file, not a folder"),
    "out unwritable": (lambda tmp: ["run", "millstone", *MOCK, "--limit", "1", "--trials", "1",
                                    "--out", str(_unwritable(tmp))], "cannot write there"),
    "report -o a folder": (lambda tmp: ["report", str(tmp), "-o", str(tmp)], "is a folder"),
    "display bogus": (lambda tmp: ["estimate", "millstone", "--display", "bogus"], "--display: invalid choice: 'bogus'"),
    "log level bogus": (lambda tmp: ["estimate", "millstone", "--log-level", "loud"], "--log-level: invalid choice"),
    "abbreviated flag": (lambda tmp: ["estimate", "issuebench", "--issues", "1"],
                         "unrecognized arguments: --issues 1 (--issues is now --issues-file)"),
    "unknown flag": (lambda tmp: ["run", "millstone", *MOCK, "--bogus", "--out", str(tmp / "o")],
                     "error: stancelab run millstone: unrecognized arguments: --bogus (see stancelab run millstone --help)"),
    "issuebench --templates": (lambda tmp: ["estimate", "issuebench", "--templates", "3"], "--n-templates"),
    "bad value in a config": (lambda tmp: ["run", "--config", str(_config(tmp, 'trials = "many"'))],
                              "option trials expects int, got 'many'"),
    "display in a config": (lambda tmp: ["estimate", "--config", str(_config(tmp, 'display = "bogus"'))],
                            "--display must be one of"),
    **BAD_VALUES,
}  # fmt: skip


def _config(folder: Path, line: str) -> Path:
    path = folder / "hand.toml"
    path.write_text(f'probe = "millstone"\n\n[options]\n{line}\n')
    return path


@pytest.mark.parametrize("mistake", MISTAKES)
def test_a_mistake_is_one_line_and_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mistake: str
) -> None:
    (tmp_path / "file.txt").write_text("not a folder")
    argv, expected = MISTAKES[mistake]
    err = _one_line_error(capsys, argv(tmp_path))
    assert err.startswith("error: ") and expected in err


def test_nothing_is_written_for_a_mistake(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _one_line_error(
        capsys, ["run", "millstone", "--model", "nosuch/model", "--out", str(tmp_path / "o")]
    )
    assert not (tmp_path / "o" / "run.toml").exists()


@pytest.mark.parametrize("mistake", BAD_VALUES)
def test_a_bad_value_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mistake: str
) -> None:
    _one_line_error(capsys, BAD_VALUES[mistake][0](tmp_path))
    assert not (tmp_path / "o").exists()


def test_analyze_of_logs_inspect_ran_with_a_limit_names_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model, _ = scripted_model(lambda prompt: "I choose position A.")
    issues = str(_issues_file(tmp_path / "issues.jsonl"))
    task = millstone(issues_file=issues, limit=1, trials=1, prompts="stancelab")
    inspect_eval(task, model=model, limit=2, log_dir=str(tmp_path / "run" / "logs"), display="none")
    err = _one_line_error(capsys, ["analyze", str(tmp_path / "run")])
    assert "ran only some of their task's samples (Inspect's --limit or --sample-id" in err


def test_ctrl_c_is_one_line_and_status_130(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(*args: object, **kwargs: object) -> str:
        raise KeyboardInterrupt

    monkeypatch.setattr("stancelab.cli.run_probe", interrupted)
    err = _one_line_error(
        capsys, ["run", "millstone", *MOCK, "--out", str(tmp_path / "o")], status=130
    )
    assert err.startswith("interrupted: logs written so far are kept in")
    assert "run the same command again to resume" in err
    monkeypatch.setattr("stancelab.cli.run_probe", interrupted)
    assert main(["run", "millstone", *MOCK, "--out", str(tmp_path / "o")]) == 130
    assert capsys.readouterr().err.startswith("interrupted: ")  # no blank line before it


def test_the_command_itself_prints_one_line(tmp_path: Path) -> None:
    argv = ["run", "millstone", "--model", "nosuch/model", "--limit", "1", "--display", "none"]
    done = subprocess.run([sys.executable, "-m", "stancelab", *argv, "--out", str(tmp_path / "o")],
                          capture_output=True, text=True, timeout=120, check=False,
                          env=os.environ | {"HF_HUB_OFFLINE": "1"})  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and done.stderr.startswith("error: ")


def test_ctrl_c_of_a_real_run_stops_it_with_one_line(tmp_path: Path) -> None:
    """SIGINT midway through a run: Inspect keeps what it wrote, the command stops (it once
    went on to analyse the partial run and exit 0) with one line and status 130. At 0.2 s a
    call the 70 calls left after the 10th take seconds, so the signal lands mid-run even when
    a loaded machine is slow to schedule this test's polling."""
    with FakeOpenAIServer(latency=0.2) as server:
        env = fake_server_env(server, tmp_path / "cache")
        command = ["run", "issuebench", "--model", "openai-api/fake/fake-model", "--limit", "2", "--n-templates", "20",
                   "--max-tokens", "16", "--display", "none", "--max-connections", "4", "--prompts", "stancelab",
                   "--out", str(tmp_path / "run")]  # fmt: skip
        process = subprocess.Popen(stancelab_command(*command), env=env,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)  # fmt: skip
        err = stop_after_calls(process, server, paid=10, poll=0.02)
    assert process.returncode == 130 and "Traceback" not in err
    assert err.strip().splitlines() == [err.strip()] and err.strip().startswith("interrupted: ")
    assert "kept in" in err and "run the same command again to resume" in err
    assert not (tmp_path / "run" / "summary.json").exists()
