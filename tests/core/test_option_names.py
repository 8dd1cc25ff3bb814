"""One name per idea: the Inspect task arguments of all five probes, and the command line's
flags; an unknown task argument or a count below 1 stops before any call."""

from __future__ import annotations

import re
import typing
from dataclasses import fields
from pathlib import Path

import pytest

import stancelab._registry  # registers the tasks as Inspect's entry point does
from stancelab.cli import build_parser, options_from_args
from stancelab.core.inspect_private import PrerequisiteError, task_create
from stancelab.core.runs.options import _base_type, _flag
from stancelab.core.runs.task_args import accepted_arguments
from stancelab.probes import PROBES

MAIN_TASKS = (
    "millstone",
    "conviction",
    "llm_bias_bench",
    "prior_prejudice",
    "issuebench",
    "even_handedness",
)
HELPER_TASKS = ("millstone_rephrase", "prior_prejudice_arguments", "prior_prejudice_negations",
                "prior_prejudice_probe", "prior_prejudice_cross_task")  # fmt: skip


def _task(name: str) -> typing.Any:
    return getattr(stancelab._registry, name)


@pytest.mark.parametrize("name", MAIN_TASKS)
def test_every_probe_task_takes_limit_and_shared_topics(name: str) -> None:
    assert {"limit", "shared_topics"} <= set(accepted_arguments(_task(name)))


def test_the_same_setting_has_the_same_argument_name() -> None:
    for name in ("millstone", "llm_bias_bench", "issuebench", "even_handedness"):
        assert {"temperature", "max_tokens"} <= set(accepted_arguments(_task(name))), name
    for name in ("millstone", "issuebench", "even_handedness"):
        assert "seed" in accepted_arguments(_task(name))
    every = {
        argument
        for name in MAIN_TASKS + HELPER_TASKS
        for argument in accepted_arguments(_task(name))
    }
    assert not {"limit_issues", "limit_topics", "subject_temperature"} & every


@pytest.mark.parametrize("name", MAIN_TASKS + HELPER_TASKS)
@pytest.mark.parametrize("arguments", [{"limit_issues": 1}, {"limit": 0}, {"limit": -1}])
def test_inspect_eval_with_an_unknown_or_bad_argument_stops(
    name: str, arguments: dict[str, int]
) -> None:
    """As `inspect eval stancelab/NAME -T ...` creates the task: an error, not a full run."""
    with pytest.raises(PrerequisiteError, match=rf"task {name}"):
        task_create(f"stancelab/{name}", **arguments)


def test_a_count_of_zero_is_refused_by_the_task() -> None:
    with pytest.raises(PrerequisiteError, match="trials must be at least 1"):
        task_create("stancelab/millstone", limit=1, trials=0)
    with pytest.raises(PrerequisiteError, match="turns must be at least 1"):
        task_create("stancelab/llm_bias_bench", limit=1, turns=0)


def test_file_flags_end_in_file_and_templates_has_one_meaning() -> None:
    for probe in PROBES.values():
        hints = typing.get_type_hints(probe.options)
        for item in fields(probe.options):
            if _base_type(hints[item.name])[0] is Path and item.name != "out_dir":
                # a file, or a checkout of the authors' repository (`--authors-repo DIR`)
                assert _flag(item).endswith(("-file", "--authors-repo")), (probe.name, _flag(item))
        flags = {_flag(item) for item in fields(probe.options)}
        assert "--price" in flags, probe.name
        if "--templates" in flags:  # a list of rating templates, wherever it exists
            assert probe.name == "prior-prejudice"
    for name in ("millstone", "llm-bias-bench", "issuebench", "even-handedness"):
        assert {"--max-tokens", "--temperature"} <= {
            _flag(item) for item in fields(PROBES[name].options)
        }
    assert "--max-tokens" in {_flag(item) for item in fields(PROBES["prior-prejudice"].options)}


def test_flags_are_never_abbreviated_and_documented_flags_parse() -> None:
    parser = build_parser()
    with pytest.raises(SystemExit):
        parser.parse_args(["estimate", "issuebench", "--issues", "1"])  # not --issues-file
    with pytest.raises(SystemExit):
        parser.parse_args(["run", "millstone", "--tri", "2"])  # not --trials
    args = parser.parse_args(
        ["estimate", "all", "--calibration", "runs/all", "--price", "openai/x=1,2"]
    )
    assert args.estimate_calibration == Path("runs/all") and args.prices == ["openai/x=1,2"]


def test_a_count_that_may_be_zero_says_so() -> None:
    parser = build_parser()
    assert (
        options_from_args(parser.parse_args(["estimate", "conviction", "--samples", "0"]))[
            1
        ].samples
        == 0
    )
    assert (
        options_from_args(
            parser.parse_args(["estimate", "millstone", "--seed", "-5", "--max-retries", "0"])
        )[1].seed
        == -5
    )


def _documented_commands() -> list[tuple[list[str], set[str]]]:
    """(command words, flags) of every `stancelab ...` line of the README's command list,
    continuation lines included; PROBE stands for any probe."""
    text = (Path(__file__).parents[2] / "README.md").read_text()
    block = text.split("## Running", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    commands: list[tuple[list[str], set[str]]] = []
    for line in block.splitlines():
        code = line.split("#", 1)[0]
        if code.startswith("stancelab "):
            words = [
                word
                for word in code.split()[1:3]
                if word[0].isalpha() and (word.islower() or word.startswith("PROBE"))
            ]
            commands.append((words, set()))
        if commands:
            commands[-1][1].update(re.findall(r"(?<![\w-])--[a-z][a-z-]*", code))
    return commands


def test_every_flag_of_the_readme_command_list_exists(capsys: pytest.CaptureFixture[str]) -> None:
    commands = _documented_commands()
    assert len(commands) > 15
    for words, flags in commands:
        if words == ["run"]:  # `run --config F`
            words = ["run", "millstone"]
        names = [*PROBES, "all"] if words[-1].startswith("PROBE") else [words[-1]]
        for name in names:
            with pytest.raises(SystemExit):
                build_parser().parse_args([*words[:-1], name, "--help"])
            shown = capsys.readouterr().out
            assert not {flag for flag in flags if flag not in shown}, (words, name, flags)
