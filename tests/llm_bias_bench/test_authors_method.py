"""A live run is the authors' measurement, item by item (issue 35): the authors' runner (from
../shared, run in a temporary copy pointed at a local scripted server) and `stancelab run
llm-bias-bench` on the same server send the same messages in every role, and read every judge
item, class and Table 4 cell alike. Nothing of the authors' text is in this file: their files
are read from ../shared at run time."""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pandas as pd
import pytest

from stancelab.cli import main
from stancelab.llm_bias_bench.method import method_key, method_of, method_record
from stancelab.llm_bias_bench.records import read_log_conversations
from stancelab.llm_bias_bench.verdicts import MISSING, UNPARSED, VERDICTS
from tests.llm_bias_bench.scripted_server import (
    JUDGE_FORMS,
    ScriptedServer,
    judge_form,
    scripted_server,
)
from tests.shared_data import authors_checkout

TOPICS = 6  # x 2 categories x 3 personas: 36 conversations, 36 judge items
FAKE = "openai-api/fake"
SUBJECT, USER, JUDGE = f"{FAKE}/subject", f"{FAKE}/user", f"{FAKE}/judge"
CONFIG = f"user={USER}, judge={JUDGE}"
# The paper's Table 4 groups of the nine classes (its caption).
TABLE_4 = {
    "pos": ("agree", "leaning_agree", "disagree", "leaning_disagree"),
    "syc": ("sycophant",), "inc": ("inconsistent",), "oth": ("neutral", "contrarian"), "ref": ("refusal",),
}  # fmt: skip
Item = tuple[str, str, str]  # topic, category, persona


def _copy_runner(short: str, folder: Path, base_url: str) -> Path:
    """The authors' runner and topics at `short`, copied into `folder` with their API base URL
    (a module constant) pointed at `base_url`; nothing else of the file changes."""
    source = authors_checkout(short)
    for name in ("bias_bench.py", "data/topics.jsonl"):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / name, folder / name)
    runner = folder / "bias_bench.py"
    lines = runner.read_text(encoding="utf-8").splitlines(keepends=True)
    (constant,) = [node for node in ast.parse("".join(lines)).body if isinstance(node, ast.Assign)
                   and getattr(node.targets[0], "id", "") == "OPENROUTER_BASE_URL"]  # fmt: skip
    lines[constant.lineno - 1] = f"OPENROUTER_BASE_URL = {base_url!r}\n"
    runner.write_text("".join(lines), encoding="utf-8")
    return runner


def _topic_ids(folder: Path) -> list[str]:
    lines = (folder / "data" / "topics.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["topic_id"] for line in lines if line.strip()][:TOPICS]


def _authors_run(short: str, folder: Path) -> tuple[list[dict[str, Any]], ScriptedServer]:
    """The authors' runner at `short` on a scripted server: its output rows and the server."""
    with scripted_server() as server:
        runner = _copy_runner(short, folder, server.base_url)
        command = [sys.executable, str(runner), "--subject-model", "subject", "--user-model", "user",
                   "--judge-model", "judge", "--topic", ",".join(_topic_ids(folder)),
                   "--output", str(folder / "out.jsonl")]  # fmt: skip
        env = os.environ | {"OPENROUTER_API_KEY": "scripted"}
        subprocess.run(command, cwd=folder, env=env, check=True, capture_output=True, timeout=600)
    lines = (folder / "out.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()], server


def _stancelab_run(out: Path, monkeypatch: pytest.MonkeyPatch, options: list[str]) -> ScriptedServer:  # fmt: skip
    """`stancelab run llm-bias-bench` with `options` on a scripted server, on its default topics
    (the paper's, whose first `TOPICS` are the first of the authors' file at either commit)."""
    with scripted_server() as server:
        monkeypatch.setenv("FAKE_BASE_URL", server.base_url)
        monkeypatch.setenv("FAKE_API_KEY", "scripted")
        argv = ["run", "llm-bias-bench", "--model", SUBJECT, "--role", f"user={USER}",
                "--role", f"judge={JUDGE}", "--limit", str(TOPICS),
                "--out", str(out), "--display", "none", *options]  # fmt: skip
        assert main(argv) == 0
    return server


def _authors_classify(short: str) -> ModuleType:
    """The authors' nine-way classification (`classify_bias.py`, from ../shared)."""
    spec = importlib.util.spec_from_file_location(f"authors_classify_{short}", authors_checkout(short) / "classify_bias.py")  # fmt: skip
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _sent(server: ScriptedServer, role: str) -> list[str]:
    return sorted(request.key() for request in server.of(role))


def _authors_items(rows: list[dict[str, Any]]) -> dict[Item, Any]:
    """Each conversation's final verdict as the authors' tables take it (their viewer:
    `(parsed or {}).get("verdict")`)."""
    return {(r["topic_id"], r["category"], r["persona"]): (r["verdicts"][-1]["parsed"] or {}).get("verdict")
            for r in rows}  # fmt: skip


def _label(written: Any) -> str:
    """The label stancelab must give a verdict written so."""
    if written is None:
        return MISSING
    return written if written in VERDICTS else UNPARSED


def _table_4(classes: dict[tuple[str, str], str]) -> dict[str, dict[str, float]]:
    """Table 4 cells (% of topics per group) per category, from classes per (topic, category)."""
    table: dict[str, dict[str, float]] = {}
    for category in ("direct", "indirect"):
        mine = [c for (_, cat), c in classes.items() if cat == category]
        table[category] = {g: round(100 * sum(c in members for c in mine) / len(mine), 1)
                           for g, members in TABLE_4.items()}  # fmt: skip
    return table


@pytest.mark.parametrize(("short", "options"), [("c3c7336", []), ("eff42a4", ["--authors-commit", "eff42a4"])])  # fmt: skip
def test_a_run_sends_and_reads_what_the_authors_runner_does_item_by_item(
    short: str, options: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """c3c7336 with stancelab's default options (the paper's runner); eff42a4 when chosen."""
    authors_folder = tmp_path / "authors"
    rows, theirs = _authors_run(short, authors_folder)
    ours = _stancelab_run(tmp_path / "run", monkeypatch, options)

    # the scripted judge wrote every form, so every rule of the reading was exercised
    assert {judge_form(r.messages)[0] for r in theirs.of("judge")} == set(JUDGE_FORMS)
    # the exact messages each role sends (with its temperature and token cap)
    assert len(theirs.of("user")) == len(theirs.of("subject")) == TOPICS * 6 * 5
    for role in ("user", "subject", "judge"):
        assert _sent(ours, role) == _sent(theirs, role), role

    # each judge item read alike: the verdict as written, and the label stancelab gives it
    expected = _authors_items(rows)
    conversations = read_log_conversations(tmp_path / "run" / "logs").conversations
    read = {(r.topic_id, r.category, r.persona): (None if pd.isna(r.verdict_as_written) else r.verdict_as_written, r.verdict)
            for r in conversations.itertuples()}  # fmt: skip
    assert set(read) == set(expected) and len(expected) == TOPICS * 6
    for item, written in expected.items():
        assert read[item] == (written, _label(written)), item

    # each class as the authors' classification gives it, and each Table 4 cell
    classify = _authors_classify(short).classify
    personas = {(t, c): {} for t, c, _ in expected}
    for (topic, category, persona), written in expected.items():
        personas[(topic, category)][persona] = written
    theirs_classes = {cell: classify(verdicts) for cell, verdicts in personas.items()}
    classes = pd.read_csv(tmp_path / "run" / "tables" / "classes.csv")
    ours_classes = dict(zip(zip(classes["topic_id"], classes["category"], strict=True),
                            classes["class"], strict=True))  # fmt: skip
    assert ours_classes == theirs_classes
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    for category, cells in _table_4(theirs_classes).items():
        row = summary["table"][CONFIG][SUBJECT][category]
        values = row.get("values_if_measured") or row  # stancelab's "not measured" keeps them
        assert {g: values[g] for g in TABLE_4} == cells, category
    assert summary["method"][CONFIG]["prompts"] == "authors"
    assert summary["method"][CONFIG]["authors_commit"] == short
    assert summary["method"][CONFIG]["topics"] == "authors"


@pytest.fixture
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No authors' file at hand: an empty cache, and a public address that cannot answer."""
    monkeypatch.setenv("STANCELAB_CACHE_DIR", str(tmp_path / "empty-cache"))
    monkeypatch.setenv("STANCELAB_AUTHORS_URL", (tmp_path / "nowhere" / "{path}").as_uri())
    return tmp_path


def _short_run(out: Path, options: list[str]) -> list[str]:
    return ["run", "llm-bias-bench", "--model", SUBJECT, "--role", f"user={USER}",
            "--role", f"judge={JUDGE}", "--limit", "1", "--turns", "1", "--categories", "direct",
            "--out", str(out), "--display", "none", *options]  # fmt: skip


def test_offline_without_the_authors_runner_one_line_exit_2_and_no_model_call(
    offline: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with scripted_server() as server:
        monkeypatch.setenv("FAKE_BASE_URL", server.base_url)
        monkeypatch.setenv("FAKE_API_KEY", "scripted")
        assert main(_short_run(offline / "run", [])) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1
    assert "--authors-repo DIR" in error and "run once with network access" in error
    assert "--prompts stancelab" in error
    assert server.requests == [] and not any((offline / "run").iterdir())  # nothing written


def test_a_checkout_at_another_commit_is_refused_before_any_call(
    offline: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    later = authors_checkout("eff42a4")  # its runner is not the paper's (c3c7336, the default)
    assert main(_short_run(offline / "run", ["--authors-repo", str(later)])) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "SHA-256 differs" in error
    assert not any((offline / "run").iterdir())


def test_stancelabs_wording_runs_offline_and_every_output_says_not_the_papers_prompts(
    offline: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = offline / "run"
    with scripted_server() as server:
        monkeypatch.setenv("FAKE_BASE_URL", server.base_url)
        monkeypatch.setenv("FAKE_API_KEY", "scripted")
        assert main(_short_run(out, ["--prompts", "stancelab"])) == 0
    assert server.requests  # the run went on
    printed = capsys.readouterr().out
    headline = next(
        line for line in printed.splitlines() if line.startswith("sycophancy (% of topics)")
    )
    assert "not the paper's prompts" in headline
    summary = json.loads((out / "summary.json").read_text())
    method = summary["method"][CONFIG]
    assert method["prompts"] == "stancelab" and not method["paper"]
    assert method["topics"] == "stancelab"  # stancelab's topics go with stancelab's wording
    assert (
        "not the paper's prompts" in method["caveat"]
        and "not the paper's prompts" in method["label"]
    )
    assert main(["report", str(out), "--output", str(offline / "report.html")]) == 0
    html = (offline / "report.html").read_text()
    assert html.count("not the paper&#39;s prompts") + html.count("not the paper's prompts") >= 2


def test_a_default_run_takes_the_papers_topics_and_says_so_everywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The paper's 38 topics (read at run time) by default, named in summary.json, the CLI and
    the report; stancelab's by name, labelled as not the paper's topics."""
    from stancelab.core.results.summary import RunResult, read_tables
    from stancelab.llm_bias_bench.probe import PROBE

    authors_checkout("eff42a4")
    paper = "the paper's topics (the authors' data/topics.jsonl at eff42a4), 1 of its 38"
    with scripted_server() as server:
        monkeypatch.setenv("FAKE_BASE_URL", server.base_url)
        monkeypatch.setenv("FAKE_API_KEY", "scripted")
        assert main(_short_run(tmp_path / "run", [])) == 0
        assert main(_short_run(tmp_path / "ours", ["--topics-file", "stancelab"])) == 0
    printed = capsys.readouterr().out
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    method = summary["method"][CONFIG]
    assert method["topics"] == "authors" and "topics" not in method["caveat"]  # (1 turn is)
    assert paper in method["label"] and f"method: {method['label']}" in printed
    run = RunResult(PROBE.name, tmp_path / "run", summary, read_tables(tmp_path / "run"))
    assert any(paper in note for note in PROBE.section(run).notes)
    (topic,) = pd.read_csv(tmp_path / "run" / "tables" / "conversations.csv")["topic_id"].unique()
    assert topic == "gun_access_liberalization"  # the paper's first topic
    ours = json.loads((tmp_path / "ours" / "summary.json").read_text())["method"][CONFIG]
    assert ours["topics"] == "stancelab" and not ours["paper"]
    assert "not the paper's topics" in ours["caveat"] and "stancelab's own topics" in ours["label"]
    headlines = [
        line for line in printed.splitlines() if line.startswith("sycophancy (% of topics)")
    ]
    assert "not the paper's topics" not in headlines[0] and "not the paper's topics" in headlines[1]


def test_the_demo_offline_falls_back_to_stancelabs_wording_labelled(
    offline: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from stancelab.demo import demo_options, demo_settings, offline_settings
    from stancelab.llm_bias_bench.dataset import chosen_topics, run_topics

    chosen = offline_settings(offline / "demo", ["mockllm/model"], demo_settings())
    assert chosen["llm-bias-bench"]["prompts"] == "stancelab"
    printed = capsys.readouterr().out
    assert "llm-bias-bench" in printed and "not the paper's prompts" in printed
    # ... and on stancelab's topics, which cover both demo topics and need nothing fetched
    options = demo_options("llm-bias-bench", offline / "demo", ["mockllm/model"], None)
    options.prompts = chosen["llm-bias-bench"]["prompts"]
    topics = run_topics(options.topics_file, options.prompts, options.authors_repo)
    assert topics.source == "stancelab"
    assert {t.shared_topic for t in chosen_topics(topics, options.shared_topics, 1)} == {
        "abortion",
        "minimum-wage",
    }


def test_a_blind_judge_needs_stancelabs_wording(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The authors' judge prompt names the persona: no blind judge with it, before any call."""
    assert main(_short_run(tmp_path / "run", ["--blind-judge"])) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "--prompts stancelab" in error


def test_runs_logged_before_the_method_was_chosen_read_as_stancelabs_wording() -> None:
    """Their logs carry no `prompts`, `authors_commit` or `reading`: stancelab's wording, the
    lenient reading and five judge calls, labelled as not the paper's."""
    legacy = method_record(method_key(method_of({"turns": 5, "judge_max_tokens": 2048})))
    assert (legacy["prompts"], legacy["reading"], legacy["judge_calls"]) == (
        "stancelab",
        "lenient",
        5,
    )
    assert not legacy["paper"] and "not the paper's prompts" in legacy["caveat"]
    paper = {"prompts": "authors", "turns": 5, "topic_set": "authors"}
    assert method_record(method_key(method_of(paper)))["paper"]


def test_runs_logged_before_the_topic_set_was_kept_ran_stancelabs_topics_or_a_file() -> None:
    """Their samples carry no `topic_set`: the bundled set unless a file was given, each
    labelled as not the paper's topics; the paper's topics are named with how many ran."""
    earlier = method_record(method_key(method_of({"prompts": "authors", "turns": 5})), 27)
    assert earlier["topics"] == "stancelab" and not earlier["paper"]
    assert "not the paper's topics" in earlier["caveat"]
    assert "stancelab's own topics (not the paper's topics), 27 topics" in earlier["label"]
    given = method_of({"prompts": "authors", "turns": 5, "topics_file": "mine.jsonl"})
    assert given.topics == "file" and "not the paper's topics" in given.label()
    paper = method_record(method_key(method_of({"prompts": "authors", "topic_set": "authors"})), 2)
    assert paper["caveat"] == "" and "data/topics.jsonl at eff42a4), 2 of its 38" in paper["label"]


def test_an_imports_figures_that_are_not_the_papers_say_so_where_they_are_printed(
    tmp_path: Path,
) -> None:
    """Item 6: Table 6's list over five of the paper's nine models, and the pooled headline."""
    from stancelab.core.results.summary import RunResult, read_tables
    from stancelab.llm_bias_bench.probe import PROBE
    from stancelab.llm_bias_bench.run import import_authors_run
    from tests.shared_data import external

    summary = import_authors_run(external("llm-bias-bench"), tmp_path / "import")
    section = PROBE.section(
        RunResult(PROBE.name, tmp_path / "import", summary, read_tables(tmp_path / "import"))
    )
    (table_6,) = [t for t in section.tables if t.title.startswith("Topics divergent")]
    assert (
        "over 5 of the paper's 9 large-scale models, so the list is not the paper's"
        in table_6.caption
    )
    printed = PROBE.format_summary(summary)
    pooled = printed.index("both categories pooled")
    assert "not a figure the paper prints" in printed[pooled : pooled + 120]
    assert pooled < printed.index("sycophancy (% of topics)")
    assert "method: the authors' released verdicts" in printed
