"""Model identity: the fixed rules, the bundled alias table, user alias files, and the rule
that models of different size, version or tier are never merged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stancelab.core.data.aliases import (
    alias_table,
    alias_table_markdown,
    bundled_alias_table,
    normalise,
    resolve,
    same_model_check,
    signature,
)
from stancelab.core.errors import DataFileError, StancelabError
from tests.shared_data import REPO_ROOT

NEVER_ONE_MODEL = [
    ("llama-3.1-8b", "llama-3.1-70b"),
    ("Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-70B-Instruct"),
    ("gpt-4o", "gpt-4o-mini"),
    ("openai/gpt-4o-2024-08-06", "openai/gpt-4o-mini-2024-07-18"),
    ("claude-3.5-sonnet", "claude-3.7-sonnet"),
    ("claude-3-5-sonnet-20241022", "claude-3-7-sonnet-20250219"),
    ("claude-opus-4", "anthropic/claude-opus-4.6"),
    ("google/gemini-3.1-flash-lite-preview", "gemini-3.1-flash"),
    ("gemini-3.1-pro-preview", "gemini-3.1-pro"),
    ("kimi-k2", "moonshotai/kimi-k2-thinking"),
    ("deepseek-chat-v3-0324", "deepseek-chat-v3"),
    ("qwen3.5-397b-a17b", "qwen3.5-122b-a10b"),
]


@pytest.mark.parametrize(("source", "key", "snapshot"), [
    ("Llama-3.1-8B-Instruct", "llama-3.1-8b", ""),
    ("vllm/meta-llama/Meta-Llama-3.1-8B-Instruct", "meta-llama-3.1-8b", ""),
    ("openai/gpt-4o-mini-2024-07-18", "gpt-4o-mini", "2024-07-18"),
    ("claude-3-5-haiku-20241022", "claude-3-5-haiku", "2024-10-22"),
    ("Sabiá-4", "sabia-4", ""),
    ("Kimi K2 (Thinking)", "kimi-k2-thinking", ""),
    ("llama3.1:8b", "llama3.1-8b", ""),
    ("gemma-2-9b-it", "gemma-2-9b", ""),
    ("deepseek-chat-v3-0324", "deepseek-chat-v3-0324", ""),  # a version, not a dated snapshot
])  # fmt: skip
def test_fixed_rules(source: str, key: str, snapshot: str) -> None:
    assert (normalise(source).key, normalise(source).snapshot) == (key, snapshot)


@pytest.mark.parametrize(("source", "canonical"), [
    ("Llama-3.1-8B-Instruct", "llama-3.1-8b"),
    ("meta-llama/Meta-Llama-3.1-8B-Instruct", "llama-3.1-8b"),
    ("llama3.1:8b", "llama-3.1-8b"),
    ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
    ("claude-3-5-sonnet-20241022", "claude-3.5-sonnet"),
    ("anthropic/claude-opus-4.6", "claude-opus-4.6"),
    ("Qwen2.5-72B-Instruct", "qwen-2.5-72b"),
    ("Qwen-2.5-72B-Instruct", "qwen-2.5-72b"),
])  # fmt: skip
def test_bundled_table_canonical_names(source: str, canonical: str) -> None:
    assert bundled_alias_table().canonical(source) == canonical


@pytest.mark.parametrize(("first", "second"), NEVER_ONE_MODEL)
def test_models_of_another_size_version_or_tier_are_never_merged(first: str, second: str) -> None:
    table = bundled_alias_table()
    assert table.canonical(first) != table.canonical(second)
    identity = resolve([(first, "millstone"), (second, "issuebench")])
    assert identity.name(first) != identity.name(second)
    assert not identity.merges()
    with pytest.raises(StancelabError, match="never merged"):
        same_model_check(first, second)


def test_every_bundled_alias_is_the_same_model_as_its_canonical_name() -> None:
    table = bundled_alias_table()
    assert table.entries  # loaded and validated
    for entry in table.entries.values():
        assert normalise(entry.canonical).key == entry.canonical
        for alias in entry.aliases:
            assert signature(alias).differences(signature(entry.canonical)) == []


def test_a_configuration_label_keeps_its_configuration() -> None:
    label = (
        "anthropic/claude-haiku-4.5 · user=anthropic/claude-opus-4.6, judge=qwen/qwen3.5-397b-a17b"
    )
    assert (
        normalise(label).key
        == "claude-haiku-4.5 · user=anthropic/claude-opus-4.6, judge=qwen/qwen3.5-397b-a17b"
    )
    identity = resolve([(label, "llm-bias-bench"), ("qwen/qwen3.5-397b-a17b", "issuebench")])
    assert not identity.merges()


def test_merged_row_names_its_sources() -> None:
    identity = resolve([("llama-3.1-8b", "millstone"), ("Llama-3.1-8B-Instruct", "issuebench"),
                        ("Llama-3.1-70B-Instruct", "issuebench"), ("grok-3-mini", "millstone"),
                        ("grok-3-mini", "issuebench")])  # fmt: skip
    assert identity.name("Llama-3.1-8B-Instruct") == identity.name("llama-3.1-8b") == "llama-3.1-8b"
    assert (
        identity.name("Llama-3.1-70B-Instruct") == "Llama-3.1-70B-Instruct"
    )  # alone: keeps its name
    (merged,) = identity.merges()
    assert merged.label == "Llama 3.1 8B"
    assert merged.sources_text() == "llama-3.1-8b (millstone), Llama-3.1-8B-Instruct (issuebench)"
    grok = identity.rows["grok-3-mini"]
    assert not grok.merged and {lens for _, lens in grok.sources} == {"millstone", "issuebench"}


def test_two_dated_snapshots_and_two_names_of_one_lens_stay_apart() -> None:
    snapshots = resolve([("gpt-4o-2024-05-13", "issuebench"), ("gpt-4o-2024-08-06", "millstone")])
    assert snapshots.name("gpt-4o-2024-05-13") == "gpt-4o-2024-05-13"
    assert "different dated snapshots" in snapshots.rows["gpt-4o-2024-08-06"].kept_apart
    one_lens = resolve(
        [("gpt-4o-mini", "millstone"), ("openai/gpt-4o-mini-2024-07-18", "millstone")]
    )
    assert not one_lens.merges()
    assert "millstone measured" in one_lens.rows["gpt-4o-mini"].kept_apart
    one_snapshot = resolve(
        [("gpt-4o-mini", "millstone"), ("openai/gpt-4o-mini-2024-07-18", "issuebench")]
    )
    assert one_snapshot.name("openai/gpt-4o-mini-2024-07-18") == "gpt-4o-mini"


def _alias_file(tmp_path: Path, *entries: dict[str, object]) -> Path:
    path = tmp_path / "aliases.jsonl"
    path.write_text("".join(json.dumps(entry) + "\n" for entry in entries))
    return path


def test_user_alias_file_adds_a_merge(tmp_path: Path) -> None:
    path = _alias_file(tmp_path, {"canonical": "llama-3.1-8b", "label": "Llama 3.1 8B (ours)",
                                  "aliases": ["our-llama-8b"]})  # fmt: skip
    table = alias_table(path)
    identity = resolve(
        [("our-llama-8b", "conviction"), ("Llama-3.1-8B-Instruct", "issuebench")], table
    )
    (merged,) = identity.merges()
    assert (merged.name, merged.label) == ("llama-3.1-8b", "Llama 3.1 8B (ours)")


def test_user_alias_file_that_merges_two_sizes_fails_naming_the_line(tmp_path: Path) -> None:
    path = _alias_file(tmp_path, {"canonical": "gpt-4o", "label": "GPT-4o"},
                       {"canonical": "llama-3.1-8b", "label": "x", "aliases": ["llama-3.1-70b"]})  # fmt: skip
    with pytest.raises(DataFileError, match=r"line 2, field 'aliases'.*sizes 70b vs 8b"):
        alias_table(path)


def test_readme_lists_every_merge_of_the_bundled_table() -> None:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    assert alias_table_markdown() in readme
