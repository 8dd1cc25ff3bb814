"""Caps and stops on the embedded model (issue 40): a role the embedded model plays is capped
unless the user set its cap, the caps are printed and recorded (run.toml, summary.json), a reply
of a defined form stops where the form ends; every other model keeps the method's settings."""

from __future__ import annotations

import json
import os
import re
import tomllib
from pathlib import Path

import pytest
import torch
from inspect_ai.model import GenerateConfig, get_model
from tokenizers import Tokenizer
from tokenizers.models import WordLevel
from tokenizers.pre_tokenizers import Whitespace
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

from stancelab.cli import main
from stancelab.core.embedded import api as embedded_api
from stancelab.core.embedded.model import EMBEDDED_MODEL
from stancelab.core.embedded.replies import (
    JSON_OBJECT_END,
    MARKED_LETTER_END,
    asks,
    ends_at,
    stop_args,
)
from stancelab.core.runs.caps import (
    CAPS_KEY,
    EMBEDDED_MAX_TOKENS,
    NOTE,
    caps_record,
    embedded_caps,
    embedded_players,
)
from stancelab.core.runs.options import RUN_CONFIG
from stancelab.core.runs.pipeline import plan, reanalyse, run_probe
from stancelab.llm_bias_bench.run import BiasBenchRun
from stancelab.millstone.run import MillstoneRun
from stancelab.probes import get_probe
from tests.core.test_embedded_logprobs import CHAT_TEMPLATE, WORDS, model_dir  # noqa: F401 (a fixture)
from tests.helpers import scripted_model


def test_caps_are_printed_and_recorded_for_the_embedded_model_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "run"
    model, _ = scripted_model(lambda prompt: "position <<A>>")
    run_probe(get_probe("millstone"), MillstoneRun(models=[model], out_dir=folder, limit=1,
                                                   trials=1, prompts="stancelab", display="none"))  # fmt: skip
    assert "[embedded]" not in capsys.readouterr().out
    assert CAPS_KEY not in tomllib.loads((folder / RUN_CONFIG).read_text())
    assert CAPS_KEY not in json.loads((folder / "summary.json").read_text())

    embedded = MillstoneRun(models=[EMBEDDED_MODEL], out_dir=folder, limit=1, trials=1,
                            prompts="stancelab")  # fmt: skip
    plan(get_probe("millstone"), embedded)
    header = capsys.readouterr().out
    assert f"subject {EMBEDDED_MAX_TOKENS} tokens" in header and NOTE in header
    recorded = tomllib.loads((folder / RUN_CONFIG).read_text())[CAPS_KEY]
    expected = {"subject": EMBEDDED_MAX_TOKENS, "rephraser": EMBEDDED_MAX_TOKENS}
    assert recorded["caps"] == expected and recorded["note"] == NOTE
    reanalyse(get_probe("millstone"), folder)
    summary = json.loads((folder / "summary.json").read_text())
    assert summary[CAPS_KEY]["caps"] == expected and summary[CAPS_KEY]["note"] == NOTE


def test_a_cap_the_user_sets_is_kept_for_the_roles_it_caps(tmp_path: Path) -> None:
    run = BiasBenchRun(models=[EMBEDDED_MODEL], out_dir=tmp_path, roles={"user": "mockllm/u"},
                       judge_max_tokens=300)  # fmt: skip
    caps = embedded_caps(run)
    assert caps.for_role("judge") is None and caps.for_role("subject") == EMBEDDED_MAX_TOKENS
    players = embedded_players(run.models, run.roles, get_probe("llm-bias-bench").roles)
    assert players == ["subject", "judge"]  # the user is played by mockllm
    record = caps_record(caps, players)
    assert record is not None
    assert record.caps == {"subject": EMBEDDED_MAX_TOKENS, "judge": "--judge-max-tokens 300"}
    run.embedded_max_tokens, run.judge_max_tokens = 0, None
    assert caps_record(embedded_caps(run), players) is None
    run.embedded_max_tokens = 20
    assert embedded_caps(run).for_role("user") == 20


async def test_the_embedded_provider_caps_every_reply(model_dir: Path) -> None:  # noqa: F811
    embedded_api._loaded.clear()
    model = get_model(EMBEDDED_MODEL, model_path=str(model_dir), memoize=False, max_tokens_cap=3)
    uncapped = get_model(EMBEDDED_MODEL, model_path=str(model_dir), memoize=False)
    assert embedded_api.loaded_copies() == 1
    config = GenerateConfig(max_tokens=12, temperature=0.0)
    capped_output = await model.generate("w1 w2 w3", config=config)
    assert capped_output.usage is not None and capped_output.usage.output_tokens <= 3
    longer = await uncapped.generate("w1 w2 w3", config=config)
    assert longer.usage is not None and longer.usage.output_tokens > 3


@pytest.fixture(scope="module")
def stops_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny model whose vocabulary holds transformers' probe word for stop strings."""
    words = [*WORDS, "abcdef"]
    folder = tmp_path_factory.mktemp("tiny-stops")
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(words), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=1, eos_token_id=1, pad_token_id=1,
                         bos_token_id=None)  # fmt: skip
    LlamaForCausalLM(config).eval().save_pretrained(folder)
    backend = Tokenizer(WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    backend.pre_tokenizer = Whitespace()
    PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="<unk>", eos_token="<eos>",
                            pad_token="<eos>", chat_template=CHAT_TEMPLATE).save_pretrained(folder)  # fmt: skip
    return folder


async def test_a_reply_of_a_defined_form_stops_where_it_ends(stops_dir: Path) -> None:
    embedded_api._loaded.clear()
    model = get_model(EMBEDDED_MODEL, model_path=str(stops_dir), memoize=False)
    greedy = GenerateConfig(max_tokens=8, temperature=0.0)
    words = (await model.generate("w1 w2 w3", config=greedy)).completion.split()
    assert len(words) > 2
    stop = words[1]  # the second word the model writes ends the reply
    config = ends_at(model, greedy, (stop,))
    assert config.stop_seqs == [stop]
    stopped = (await model.generate("w1 w2 w3", config=config)).completion.split()
    assert stopped == words[: words.index(stop) + 1]
    assert asks(model, greedy, 5) == 1 and asks(model, GenerateConfig(temperature=1.0), 5) == 5


def test_every_other_model_keeps_the_methods_settings() -> None:
    other = get_model("mockllm/model", memoize=False)
    config = GenerateConfig(max_tokens=2048, temperature=0.0)
    assert ends_at(other, config, JSON_OBJECT_END) is config
    assert asks(other, config, 5) == 5
    assert stop_args(other, MARKED_LETTER_END) == {}


def test_a_millstone_answer_stops_after_its_letter_on_the_embedded_model(
    model_dir: Path,  # noqa: F811
) -> None:
    embedded = get_model(EMBEDDED_MODEL, model_path=str(model_dir), memoize=False)
    assert stop_args(embedded, MARKED_LETTER_END) == {"stop_seqs": [">>"]}
    own = get_model(EMBEDDED_MODEL, model_path=str(model_dir), memoize=False,
                    config=GenerateConfig(stop_seqs=["\n"]))  # fmt: skip
    assert stop_args(own, MARKED_LETTER_END) == {}


async def test_each_generation_hands_its_freed_heap_back(
    model_dir: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 37: freed activations go back to the system after every generation (greedy or
    sampled), while a decoding step's key-value blocks (about 1 MB) stay below the mmap
    threshold (at 128 KiB each step's blocks were fresh mappings: 80 M page faults a demo)."""
    trims: list[bool] = []
    monkeypatch.setattr(embedded_api, "trim_heap", lambda: trims.append(True) or True)
    embedded_api._loaded.clear()
    model = get_model(EMBEDDED_MODEL, model_path=str(model_dir), memoize=False)
    await model.generate("w1 w2", config=GenerateConfig(max_tokens=2, temperature=0.0))
    await model.generate("w1 w3", config=GenerateConfig(max_tokens=2, temperature=1.0))
    assert len(trims) == 2
    assert embedded_api.MMAP_THRESHOLD_BYTES >= 2 * 1024 * 1024


def test_estimate_plans_the_embedded_models_replies_at_its_caps(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`estimate` on the embedded model counted each reply at the method's cap (512 tokens a
    turn), not at the embedded cap its runs apply (64)."""
    code = main(["estimate", "llm-bias-bench", "--model", EMBEDDED_MODEL, "--prompts", "stancelab",
                 "--limit", "2"])  # fmt: skip
    printed = capsys.readouterr().out
    assert code == 0
    rows = re.findall(r" (user|subject|judge)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s", printed)
    assert {row[0] for row in rows} == {"user", "subject", "judge"}
    for _, _, calls_max, _, output_tokens in rows:
        assert int(output_tokens) == int(calls_max) * EMBEDDED_MAX_TOKENS
    assert "output tokens are its caps per reply" in printed


@pytest.mark.parametrize(("set_by_user", "expected"), [(None, "8"), ("64", "64")])
def test_the_embedded_model_bounds_onednns_primitive_cache_unless_the_user_set_it(
    model_dir: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    set_by_user: str | None,
    expected: str,
) -> None:
    """Issue 37: oneDNN keeps up to 1,024 primitives (one per batch shape met), each with its
    own memory: over the demo's six steps 130 MB more in use than with a cache of 8."""
    monkeypatch.delenv(embedded_api.ONEDNN_CACHE_ENV, raising=False)
    if set_by_user is not None:
        monkeypatch.setenv(embedded_api.ONEDNN_CACHE_ENV, set_by_user)
    embedded_api._loaded.clear()
    get_model(EMBEDDED_MODEL, model_path=str(model_dir), memoize=False)
    assert os.environ[embedded_api.ONEDNN_CACHE_ENV] == expected
