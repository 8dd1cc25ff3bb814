"""One probe interface (issue 16): each package's `PROBE`, per-probe `--help`, shared options,
`run.toml` and `--config`, Inspect's options reaching the eval, and an acyclic import graph."""

from __future__ import annotations

import ast
import tomllib
from dataclasses import asdict
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

import stancelab
from stancelab.cli import build_parser, main, options_from_args
from stancelab.core.probe import Probe
from stancelab.core.results.logs import log_files
from stancelab.core.runs.pipeline import run_pipeline
from stancelab.millstone.run import MillstoneRun
from stancelab.probes import PROBES
from tests.helpers import scripted_model
from tests.millstone.test_run_mockllm import _issues_file, follower

SRC = Path(stancelab.__file__).parent
PROBE_PACKAGES = {
    "millstone",
    "conviction",
    "llm_bias_bench",
    "prior_prejudice",
    "issuebench",
    "even_handedness",
}
ISSUEBENCH_ONLY = ("--n-templates", "--framings", "--voters-file", "--templates-file", "--protocol")


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every stancelab module `path` imports, at any depth of the file (lazy imports too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("stancelab"):
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("stancelab"))
    return found


def _graph() -> dict[str, set[str]]:
    modules = {_module_name(path): path for path in SRC.rglob("*.py")}
    return {name: {m for m in _imports(path) if m in modules and m != name}
            for name, path in modules.items()}  # fmt: skip


def test_the_import_graph_has_no_cycle() -> None:
    graph = _graph()
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for child in sorted(graph[node]):
            if state.get(child) == 1:
                pytest.fail("import cycle: " + " -> ".join([*path, node, child]))
            if child not in state:
                visit(child, [*path, node])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [])


def test_core_imports_no_probe_and_nothing_above_it() -> None:
    for name, imported in _graph().items():
        if name.startswith("stancelab.core"):
            above = {m for m in imported if not m.startswith("stancelab.core")}
            assert not above, f"{name} imports {sorted(above)}"


def test_each_probe_package_exports_one_typed_probe() -> None:
    assert {probe.options.__module__.split(".")[1] for probe in PROBES.values()} == PROBE_PACKAGES
    for probe in PROBES.values():
        assert isinstance(probe, Probe)
        package = probe.options.__module__.rsplit(".", 1)[0]
        assert probe.run.__module__.startswith(package) and probe.tasks
        assert probe.section.__module__ == f"{package}.report"
    # No module or function names as strings: nothing imports by name.
    for path in SRC.rglob("*.py"):
        assert "import_module" not in path.read_text(), path


def test_millstone_help_lists_its_options_only(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["run", "millstone", "--help"])
    text = capsys.readouterr().out
    assert "--trials" in text and "--issues-file PATH" in text and "--max-connections" in text
    for option in ISSUEBENCH_ONLY:
        assert f"{option} " not in text and f"{option}\n" not in text, option
    with pytest.raises(SystemExit):
        main(["run", "issuebench", "--help"])
    text = capsys.readouterr().out
    assert "--n-templates INT" in text and "--trials" not in text


def test_a_flag_of_another_probe_is_an_error() -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["run", "millstone", "--framings", "neutral"])


def test_config_round_trips(tmp_path: Path) -> None:
    argv = ["run", "millstone", "--model", "openai/gpt-4o-mini", "--model", "embedded",
            "--role", "rephraser=openai/gpt-4o", "--limit", "3", "--seed", "7", "--trials", "2",
            "--max-connections", "4", "--max-samples", "2", "--max-retries", "1", "--timeout", "30",
            "--log-level", "warning", "--layout", "documents", "--out", str(tmp_path / "x")]  # fmt: skip
    probe, options = options_from_args(build_parser().parse_args(argv))
    assert options.max_connections == 4 and options.roles == {"rephraser": "openai/gpt-4o"}
    from stancelab.core.runs.options import write_config

    config = write_config(probe.name, options)
    assert tomllib.loads(config.read_text())["probe"] == "millstone"
    again = options_from_args(
        build_parser().parse_args(["run", "millstone", "--config", str(config)])
    )
    assert asdict(again[1]) == asdict(options)
    from stancelab.cli import _config_probe

    bare = build_parser().parse_args(_config_probe(["run", "--config", str(config)]))
    assert asdict(options_from_args(bare)[1]) == asdict(options)
    flagged = ["run", "millstone", "--config", str(config), "--trials", "5"]
    assert options_from_args(build_parser().parse_args(flagged))[1].trials == 5  # flags win


def test_a_run_writes_run_toml_and_inspect_gets_its_options(tmp_path: Path) -> None:
    model, _ = scripted_model(follower)
    options = MillstoneRun(models=[model], out_dir=tmp_path / "run", trials=1, limit=1,
                           issues_file=_issues_file(tmp_path / "issues.jsonl"),
                           max_connections=3, max_samples=2, display="none",
                           prompts="stancelab")  # fmt: skip
    run_pipeline(PROBES["millstone"], options)
    written = tomllib.loads((tmp_path / "run" / "run.toml").read_text())["options"]
    assert (written["trials"], written["limit"], written["max_samples"]) == (1, 1, 2)
    (log_path,) = log_files(tmp_path / "run" / "logs")
    log = read_eval_log(str(log_path), header_only=True)
    assert log.eval.config.max_samples == 2
    assert log.plan.config.max_connections == 3


def test_two_models_get_paired_differences_in_summary_json(tmp_path: Path) -> None:
    import json

    from stancelab.core.runs.pipeline import run_probe

    follows, _ = scripted_model(follower, "mockllm/follows")
    stubborn, _ = scripted_model(lambda prompt: "I pick position A.", "mockllm/stubborn")
    options = MillstoneRun(models=[follows, stubborn], out_dir=tmp_path / "run", trials=1,
                           issues_file=_issues_file(tmp_path / "issues.jsonl"), display="none",
                           prompts="stancelab")  # fmt: skip
    text = run_probe(PROBES["millstone"], options)
    written = json.loads((tmp_path / "run" / "summary.json").read_text())
    (pair,) = written["headline_differences"]
    assert (pair["model_a"], pair["model_b"], pair["n"]) == (
        "mockllm/follows",
        "mockllm/stubborn",
        2,
    )
    units = PROBES["millstone"].unit_values
    assert units is not None and pair["difference"] is not None
    assert "paired differences between models" in text and "over 2 shared units" in text


def test_progress_shows_in_a_terminal_and_as_plain_lines_otherwise(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("INSPECT_DISPLAY", raising=False)
    options = MillstoneRun(models=["mockllm/model"], out_dir=tmp_path)
    monkeypatch.setattr("sys.stdout.isatty", lambda: False)
    assert options.eval_args()["display"] == "plain"
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    assert options.eval_args()["display"] == "full"
    options.display = "none"
    assert options.eval_args()["display"] == "none"


@pytest.mark.parametrize("argv", [
    ["llm-bias-bench", "--price", "openai/gpt-4o=2.5,10", "--categories", "direct",
     "--judge-every-turn", "--role", "judge=openai/gpt-4o"],
    ["issuebench", "--n-templates", "3", "--protocol", "paper", "--voters-file", "v.csv"],
    ["prior-prejudice", "--no-negations", "--no-probe", "--max-tokens", "64", "--templates", "T1"],
    ["conviction", "--samples", "3", "--statements-file", "s.jsonl"],
    ["even-handedness", "--pairs-file", "p.csv", "--hedging-threshold", "0.1", "--role", "grader2=openai/gpt-4o"],
])  # fmt: skip
def test_every_probe_config_round_trips(tmp_path: Path, argv: list[str]) -> None:
    from stancelab.cli import _config_probe
    from stancelab.core.runs.options import write_config

    parsed = build_parser().parse_args(["run", *argv, "--out", str(tmp_path)])
    probe, options = options_from_args(parsed)
    config = write_config(probe.name, options)
    again = build_parser().parse_args(_config_probe(["run", "--config", str(config)]))
    assert asdict(options_from_args(again)[1]) == asdict(options)
