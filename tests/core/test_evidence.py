"""Only complete evidence counts: a killed re-run, killed runs of another selection and missing
shards change no figure silently; the summary, the CLI and the report say what was left out."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log, write_eval_log

from stancelab.cli import main
from stancelab.core.runs.pipeline import run_pipeline
from stancelab.issuebench.run import IssueBenchRun, run_issuebench
from stancelab.millstone.run import MillstoneRun, run_millstone
from stancelab.probes import get_probe
from stancelab.report.build import build_report
from stancelab.testing.fake_openai import FakeOpenAIServer, random_ab_reply
from tests.helpers import scripted_chat_model, scripted_model
from tests.millstone.test_run_mockllm import _issues_file, follower

MODEL = "mockllm/model"


def interrupted_copy(
    log: Path, keep: Callable[[str], bool], created: str, status: str = "started"
) -> Path:
    """A copy of a complete log as a run killed midway leaves it: its status, only the samples
    `keep` accepts (by id), no results, its own ids, created at `created`."""
    copy = read_eval_log(str(log))
    copy.status, copy.results = status, None
    copy.samples = [sample for sample in copy.samples or [] if keep(str(sample.id))]
    for sample in copy.samples:
        sample.uuid = uuid.uuid4().hex
    copy.eval.eval_id, copy.eval.run_id, copy.eval.created = (
        uuid.uuid4().hex,
        uuid.uuid4().hex,
        created,
    )
    task = copy.eval.task.split("/")[-1]
    path = log.parent / f"{created[:19].replace(':', '-')}_{task}_{uuid.uuid4().hex[:8]}.eval"
    write_eval_log(copy, str(path))
    return path


# stancelab's own prompts: CI has no copy of the authors' MillStone prompt builder, nor
# IssueBench's files in the cache
OWN = {"prompts": "stancelab"}


def _run(out: Path, issues: Path, **options: object) -> dict:
    model, _ = scripted_model(follower)
    return run_millstone(
        MillstoneRun(models=[model], out_dir=out, trials=1, issues_file=issues, **OWN, **options)
    )


def _figures(summary: dict) -> dict:
    """A summary's figures: everything but the record of what was left out (and the paired
    differences between models, which `analyze` adds)."""
    return {
        key: value
        for key, value in summary.items()
        if key not in ("evidence", "headline_differences")
    }


def _analyze(out: Path, capsys: pytest.CaptureFixture) -> tuple[dict, str]:
    capsys.readouterr()
    assert main(["analyze", str(out)]) == 0
    return json.loads((out / "summary.json").read_text()), capsys.readouterr().out


def test_a_killed_rerun_leaves_the_figures_as_before(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    out, issues = tmp_path / "run", _issues_file(tmp_path / "issues.jsonl")
    before = _run(out, issues)
    [complete] = list((out / "logs").glob("*.eval"))
    # the re-run was killed after issue-1's samples: newer, same settings, half the samples
    interrupted_copy(
        complete, lambda sample: sample.startswith("issue-1"), "2099-01-01T00:00:00+00:00"
    )
    after, printed = _analyze(out, capsys)
    assert _figures(after) == _figures(before)
    assert after["om"][MODEL]["n"] == 2 and after["om"][MODEL]["partial"] is False
    assert after["evidence"]["notes"] == [
        "1 interrupted log ignored (a complete run of the same settings is in the folder)"
    ]
    assert "1 interrupted log ignored" in printed and "Partial" not in printed


def test_killed_runs_add_no_partial_issue_to_a_later_complete_run(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    out, issues = tmp_path / "run", _issues_file(tmp_path / "issues.jsonl")
    _run(out, issues, limit=2)
    [both] = list((out / "logs").glob("*.eval"))
    for created in ("2000-01-01T00:00:00+00:00", "2000-01-02T00:00:00+00:00"):  # 62 of issue-2's 66
        interrupted_copy(both, lambda sample: sample.startswith("issue-2") and not sample.endswith(
            ("t1__w1__r1", "t2__w1__r1")), created)  # fmt: skip
    both.unlink()
    later = _run(out, issues, limit=1)
    assert later["om"][MODEL]["n"] == 1
    summary, printed = _analyze(out, capsys)
    assert summary["issues"] == 1 and summary["om"][MODEL]["n"] == 1
    assert _figures(summary) == _figures(later)
    assert "2 interrupted logs ignored" in printed
    assert summary["evidence"]["interrupted_logs_ignored"] and not summary["evidence"]["partial"]


def test_an_interrupted_run_alone_is_read_and_marked_partial(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    out, issues = tmp_path / "run", _issues_file(tmp_path / "issues.jsonl")
    _run(out, issues)
    [complete] = list((out / "logs").glob("*.eval"))
    interrupted_copy(complete, lambda sample: sample.startswith("issue-1"), "2099-01-01T00:00:00+00:00",
                     status="error")  # fmt: skip
    complete.unlink()
    summary, printed = _analyze(out, capsys)
    assert summary["issues"] == 1 and summary["om"][MODEL]["partial"] is True
    assert summary["evidence"]["notes"] == ["66 samples read from 1 interrupted log: partial"]
    assert "Partial results: 66 samples read from 1 interrupted log: partial." in printed
    assert "PARTIAL" in printed.split("Headlines:")[1]


def test_one_shard_of_four_is_partial_in_summary_cli_and_report(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    out, issues = tmp_path / "run", _issues_file(tmp_path / "issues.jsonl")
    model, _ = scripted_model(follower)
    probe = get_probe("millstone")
    run_pipeline(
        probe,
        MillstoneRun(models=[model], out_dir=out, trials=1, issues_file=issues, shard="1/4", **OWN),
    )
    summary, printed = _analyze(out, capsys)
    assert summary["evidence"]["partial"] is True
    assert summary["evidence"]["missing_shards"] == [{"model": MODEL, "shards": [2, 3, 4], "of": 4}]
    assert summary["om"][MODEL]["partial"] is True
    assert "shards 2-4 of 4 missing: partial" in printed
    page = build_report([out], tmp_path / "report.html").path.read_text()
    assert "shards 2-4 of 4 missing: partial" in page and '<span class="partial"' in page


def test_issuebench_reads_an_interrupted_run_alone_as_partial(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    writer, _ = scripted_chat_model(
        lambda messages: "Nuclear power is clearly good.", "mockllm/writer"
    )
    classifier, _ = scripted_chat_model(lambda messages: "1", "mockllm/classifier")
    out = tmp_path / "run"
    complete = run_issuebench(IssueBenchRun(models=[writer], roles={"classifier": classifier}, out_dir=out,
                                            limit=2, n_templates=2, **OWN))  # fmt: skip
    assert complete["responses"]["mockllm/writer"]["total"] == 12
    [log] = list((out / "logs").glob("*.eval"))
    first = {str(sample.id) for sample in (read_eval_log(str(log)).samples or [])[:5]}
    interrupted_copy(log, first.__contains__, "2099-01-01T00:00:00+00:00")
    log.unlink()
    summary, printed = _analyze(out, capsys)
    assert summary["responses"]["mockllm/writer"]["total"] == 5
    assert summary["one_sided_share"]["mockllm/writer"]["partial"] is True
    assert summary["evidence"]["notes"] == ["5 samples read from 1 interrupted log: partial"]
    assert "Partial results: 5 samples read from 1 interrupted log" in printed


def _unmarked(value: object) -> object:
    """A summary's figures less every `partial` mark."""
    if isinstance(value, dict):
        return {key: _unmarked(item) for key, item in value.items() if key != "partial"}
    return [_unmarked(item) for item in value] if isinstance(value, list) else value


def damage_logs(logs: Path) -> set[str]:
    """What a partial copy of a shard's logs leaves beside the complete log: a `.eval` cut
    short, an empty one, a stray `notes.json`; their names."""
    [log] = list(logs.glob("*.eval"))
    cut = logs / "2026-01-01T00-00-00+00-00_millstone_cut.eval"
    cut.write_bytes(log.read_bytes()[:3000])
    (logs / "2026-01-01T00-00-01+00-00_millstone_empty.eval").write_bytes(b"")
    (logs / "notes.json").write_text('{"note": "copied by a sync"}\n')
    return {cut.name, "2026-01-01T00-00-01+00-00_millstone_empty.eval", "notes.json"}


def test_damaged_logs_are_named_and_skipped_by_analyze_report_and_a_rerun(
    tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, issues = tmp_path / "run", _issues_file(tmp_path / "issues.jsonl")
    command = ["run", "millstone", "--model", "openai-api/fake/m", "--issues-file", str(issues),
               "--trials", "1", "--display", "none", "--out", str(out), "--prompts", OWN["prompts"]]  # fmt: skip
    with FakeOpenAIServer() as server:
        monkeypatch.setenv("FAKE_BASE_URL", server.base_url)
        monkeypatch.setenv("FAKE_API_KEY", "local")
        assert main(command) == 0
        before = json.loads((out / "summary.json").read_text())
        damaged = damage_logs(out / "logs")
        summary, printed = _analyze(out, capsys)
        assert _unmarked(_figures(summary)) == _unmarked(_figures(before))
        assert summary["evidence"]["partial"] is True
        assert set(summary["evidence"]["unreadable_logs"]) == damaged
        assert summary["om"]["openai-api/fake/m"]["partial"] is True
        [line] = [line for line in printed.splitlines() if "unreadable" in line]
        assert line.startswith("Partial results: 3 unreadable files among the logs skipped")
        assert all(name in line for name in damaged)
        assert main(["report", str(out), "-o", str(tmp_path / "report.html")]) == 0
        assert "notes.json" in (tmp_path / "report.html").read_text()
        assert main(command) == 0
    rerun = json.loads((out / "summary.json").read_text())
    assert _unmarked(_figures(rerun)) == _unmarked(_figures(before))
    assert rerun["evidence"]["partial"] is True
    assert "Traceback" not in capsys.readouterr().err


def test_issuebench_skips_a_damaged_log(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    writer, _ = scripted_chat_model(lambda messages: "Nuclear power is good.", "mockllm/writer")
    classifier, _ = scripted_chat_model(lambda messages: "1", "mockllm/classifier")
    out = tmp_path / "run"
    complete = run_issuebench(IssueBenchRun(models=[writer], roles={"classifier": classifier}, out_dir=out,
                                            limit=2, n_templates=2, **OWN))  # fmt: skip
    damaged = damage_logs(out / "logs")
    summary, printed = _analyze(out, capsys)
    assert summary["responses"] == complete["responses"]
    assert set(summary["evidence"]["unreadable_logs"]) == damaged
    assert summary["one_sided_share"]["mockllm/writer"]["partial"] is True
    assert "3 unreadable files among the logs skipped" in printed


def test_runs_of_another_setting_are_kept_apart_from_a_complete_run(
    tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """MillStone `--limit 2`, then the same with `--temperature 0.5` killed midway, then that run
    complete: the first run's figures never change; each configuration is its own row."""
    out, issues = tmp_path / "run", _issues_file(tmp_path / "issues.jsonl")
    model = "openai-api/fake/ab"
    command = ["run", "millstone", "--model", model, "--issues-file", str(issues), "--limit", "2",
               "--trials", "1", "--display", "none", "--out", str(out), "--prompts", OWN["prompts"]]  # fmt: skip
    with FakeOpenAIServer(reply=random_ab_reply(0)) as server:
        monkeypatch.setenv("FAKE_BASE_URL", server.base_url)
        monkeypatch.setenv("FAKE_API_KEY", "local")
        assert main(command) == 0
        before = json.loads((out / "summary.json").read_text())
        [first] = list((out / "logs").glob("*.eval"))
        assert main([*command, "--temperature", "0.5"]) == 0
        [hotter] = set((out / "logs").glob("*.eval")) - {first}
        interrupted_copy(
            hotter, lambda sample: sample.startswith("issue-1"), "2099-01-01T00:00:00+00:00"
        )
        hotter.unlink()
        killed, printed = _analyze(out, capsys)
        assert main([*command, "--temperature", "0.5"]) == 0
    complete = json.loads((out / "summary.json").read_text())
    default, hot = f"{model} · temperature=default", f"{model} · temperature=0.5"
    for summary in (killed, complete):
        assert set(summary["om"]) == {default, hot}
        assert summary["om"][default] == before["om"][model]
        assert summary["trials"][default] == before["trials"][model]
        assert summary["evidence"]["configurations"] == {
            model: ["temperature=0.5", "temperature=default"]
        }
    assert killed["om"][hot]["partial"] is True and killed["trials"][hot]["total"] == 66
    assert complete["trials"][hot]["total"] == 132 and not complete["om"][hot]["partial"]
    assert f"{model} ran under 2 configurations in this folder" in printed
