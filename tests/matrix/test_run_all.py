"""`stancelab run all` on mockllm: every probe on two shared topics into one folder, the
matrix written and re-read by `stancelab analyze`, options passed to each probe."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from stancelab.cli import _config_probe, build_parser, main, run_all_options
from stancelab.core.errors import StancelabError
from stancelab.core.runs.options import write_config
from stancelab.matrix.run import (
    RunAll,
    check_shared_topics,
    probe_options,
    run_all,
    selected_probes,
)
from stancelab.probes import PROBES, get_probe
from tests.helpers import own_cache, scripted_chat_model
from tests.issuebench.authors_files import serve_authors_files
from tests.report.conftest import TINY

TOPICS = "abortion,minimum-wage"


def test_each_probe_gets_the_shared_options_its_own_roles_and_its_folder(tmp_path: Path) -> None:
    options = RunAll(models=["mockllm/a", "mockllm/b"], out_dir=tmp_path, shared_topics=TOPICS, limit=3,
                     seed=5, roles={"judge": "mockllm/j", "nli": "mockllm/n"}, max_connections=2)  # fmt: skip
    for probe in PROBES.values():
        run = probe_options(probe, options, {"limit": 1} if probe.name == "millstone" else None)
        assert run.out_dir == tmp_path / probe.name and run.models == ["mockllm/a", "mockllm/b"]
        assert run.shared_topics == TOPICS, probe.name
        assert (run.seed, run.max_connections) == (5, 2)
        assert run.limit == (1 if probe.name == "millstone" else 3)
        assert set(run.roles) == {"judge", "nli"} & set(probe.roles)
    with pytest.raises(StancelabError, match="has no option"):
        probe_options(get_probe("millstone"), options, {"samples": 3})


def test_shared_topics_and_probes_are_checked() -> None:
    assert check_shared_topics(" all ") == "all"
    assert check_shared_topics(TOPICS) == TOPICS
    with pytest.raises(StancelabError, match=r"Unknown shared topic 'astrology'.*immigration"):
        check_shared_topics("abortion,astrology")
    with pytest.raises(StancelabError, match="needs shared topics"):
        check_shared_topics("")
    assert [probe.name for probe in selected_probes("issuebench, millstone")] == [
        "millstone",
        "issuebench",
    ]
    assert len(selected_probes("")) == len(PROBES)


def test_run_all_flags_and_config(tmp_path: Path) -> None:
    args = build_parser().parse_args(["run", "all", "--model", "mockllm/a", "--role", "judge=mockllm/j",
                                      "--shared-topics", TOPICS, "--limit", "2", "--out", str(tmp_path)])  # fmt: skip
    options = run_all_options(args)
    assert (options.shared_topics, options.limit, options.roles) == (
        TOPICS,
        2,
        {"judge": "mockllm/j"},
    )
    assert run_all_options(build_parser().parse_args(["run", "all"])).shared_topics == "all"
    assert main(["run", "all", "--role", "oracle=mockllm/x"]) == 2  # no probe has that role
    written = write_config("all", RunAll(models=["mockllm/a"], out_dir=tmp_path / "x", shared_topics=TOPICS,
                                         limit=2, roles={"user": "mockllm/u"}))  # fmt: skip
    argv = _config_probe(["run", "--config", str(written), "--limit", "3"])
    repeated = run_all_options(build_parser().parse_args(argv))
    assert (
        argv[:2] == ["run", "all"]
        and repeated.limit == 3
        and repeated.roles == {"user": "mockllm/u"}
    )
    assert (repeated.shared_topics, repeated.out_dir) == (TOPICS, tmp_path / "x")


def hostile_free_reply(messages: list) -> str:
    return "I choose position A. 1"


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("run-all")
    model, _ = scripted_chat_model(hostile_free_reply, "mockllm/plain")
    printed: list[str] = []
    with own_cache(out / "cache"):
        run_all(RunAll(models=[model], out_dir=out / "all", shared_topics=TOPICS, display="none"), TINY,
                progress=printed.append)  # fmt: skip
    (out / "printed.txt").write_text("\n".join(printed))
    return out / "all"


def test_run_all_writes_every_probe_and_the_matrix(run_folder: Path) -> None:
    for probe in PROBES:
        summary = json.loads((run_folder / probe / "summary.json").read_text())
        assert summary["probe"] == probe
        assert (
            tomllib.loads((run_folder / probe / "run.toml").read_text())["options"]["shared_topics"]
            == TOPICS
        )
    config = tomllib.loads((run_folder / "run.toml").read_text())
    assert config["probe"] == "all" and config["options"]["shared_topics"] == TOPICS
    matrix = json.loads((run_folder / "matrix" / "summary.json").read_text())
    assert matrix["kind"] == "topic x lens matrix" and matrix["models"] == ["mockllm/plain"]
    assert set(matrix["topics"]) == set(TOPICS.split(","))  # only the chosen topics
    assert matrix["lenses"] == list(PROBES)
    assert len(matrix["cells"]) == 2 * len(PROBES)
    assert {path.name for path in (run_folder / "matrix" / "tables").iterdir()} >= {
        "cells.csv",
        "topics.csv",
    }
    printed = (run_folder.parent / "printed.txt").read_text()
    assert f"[{len(PROBES)}/{len(PROBES)}]" in printed and "Topic x lens matrix" in printed


def test_analyze_of_a_run_all_folder_rewrites_the_matrix(
    run_folder: Path, capsys: pytest.CaptureFixture
) -> None:
    path = run_folder / "matrix" / "summary.json"
    before = json.loads(path.read_text())
    path.unlink()
    assert main(["analyze", str(run_folder)]) == 0
    assert json.loads(path.read_text())["cells"] == before["cells"]
    assert "Topic x lens matrix" in capsys.readouterr().out
    report = run_folder / "report.html"
    assert main(["report", str(run_folder), "-o", str(report)]) == 0  # the matrix folder is no run
    assert '<section id="matrix">' in report.read_text()


def test_estimate_all_plans_each_probe_as_run_all_would(
    capsys: pytest.CaptureFixture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    serve_authors_files(tmp_path, monkeypatch)  # IssueBench's published files, from ../shared
    assert main(["estimate", "all", "--model", "mockllm/a", "--shared-topics", "abortion", "--limit", "1",
                 "--probes", "millstone,issuebench"]) == 0  # fmt: skip
    printed = capsys.readouterr().out
    assert printed.count("planned calls per subject model and role") == 2
    assert "MillStone" in printed and "IssueBench" in printed and "llm-bias-bench" not in printed
    assert main(["estimate", "all", "--shared-topics", "tarot"]) == 2


def test_a_shard_of_run_all_logs_per_probe_and_leaves_the_matrix_to_analyze(tmp_path: Path) -> None:
    options = RunAll(models=["mockllm/a"], out_dir=tmp_path, shared_topics=TOPICS, shard="1/2",
                     log_dir="s3://bucket/runs/")  # fmt: skip
    assert probe_options(get_probe("conviction"), options).log_dir == "s3://bucket/runs/conviction"
    model, _ = scripted_chat_model(hostile_free_reply, "mockllm/plain")
    printed: list[str] = []
    with own_cache(tmp_path / "cache"):
        summary = run_all(RunAll(models=[model], out_dir=tmp_path / "all", shared_topics=TOPICS, shard="1/2",
                                 probes="issuebench", display="none"), TINY, progress=printed.append)  # fmt: skip
    assert summary == {} and not (tmp_path / "all" / "matrix").exists()
    assert list((tmp_path / "all" / "issuebench" / "logs").iterdir())
    assert f"stancelab analyze {tmp_path / 'all'}" in printed[-1]
    with pytest.raises(StancelabError, match="--log-dir is for --shard runs"):
        run_all(RunAll(models=[model], out_dir=tmp_path / "x", log_dir=str(tmp_path / "l")))
