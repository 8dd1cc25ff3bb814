"""What stancelab takes from Inspect's private modules (`core.inspect_private`) is still there,
with the signatures and attributes stancelab relies on: a change in Inspect fails here, naming
the symbol, instead of breaking a run. No other stancelab module imports a private Inspect
module. The `hf` provider is read as source (importing it imports torch)."""

from __future__ import annotations

import ast
import importlib.util
import inspect
import re
import typing
from pathlib import Path

import pytest
from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample

from stancelab.core import inspect_private
from stancelab.core.errors import TaskArgumentError
from stancelab.core.inspect_private import (
    PrerequisiteError,
    model_provider_names,
    resolve_task_args,
    set_generate_config_override,
)

SRC = Path(inspect_private.__file__).parents[1]
REPO = SRC.parents[1]
PRIVATE_IMPORT = re.compile(r"^\s*(from|import)\s+inspect_ai\.(\w+\.)*_\w+", re.MULTILINE)


def _parameters(function: typing.Callable[..., object]) -> list[str]:
    return list(inspect.signature(function).parameters)


def test_only_the_adapter_imports_private_inspect_modules() -> None:
    """The package, its tests and its benchmarks; this file names private modules only in
    strings and comments (imports inside functions are found too)."""
    files = [
        path for folder in ("src", "tests", "benchmarks") for path in (REPO / folder).rglob("*.py")
    ]
    importing = sorted(str(path.relative_to(REPO)) for path in files
                       if PRIVATE_IMPORT.search(path.read_text()))  # fmt: skip
    assert importing == [
        "src/stancelab/core/inspect_private.py",
        "tests/core/test_inspect_private.py",
    ]


def test_prerequisite_error_is_an_exception_with_a_message() -> None:
    assert issubclass(TaskArgumentError, PrerequisiteError) and issubclass(
        PrerequisiteError, Exception
    )
    assert PrerequisiteError("[bold]no key[/bold]").message == "[bold]no key[/bold]"


def test_the_live_attempt_timeout_override_is_read_by_every_attempt() -> None:
    from inspect_ai.model import GenerateConfig, _model
    from inspect_ai.model._generate_overrides import (
        GenerateConfigOverrideField,
        generate_config_override_for_attempt,
    )

    assert _parameters(set_generate_config_override) == ["field", "value"]
    assert "attempt_timeout" in typing.get_args(GenerateConfigOverrideField)
    assert _model.generate_config_override_for_attempt is generate_config_override_for_attempt
    set_generate_config_override("attempt_timeout", 7)
    try:
        assert (
            generate_config_override_for_attempt(
                "attempt_timeout", GenerateConfig(attempt_timeout=60)
            )
            == 7
        )
    finally:
        set_generate_config_override("attempt_timeout", None)
    assert (
        generate_config_override_for_attempt("attempt_timeout", GenerateConfig(attempt_timeout=60))
        == 60
    )


def test_model_providers_come_from_the_registry() -> None:
    import stancelab._registry  # noqa: F401  (registers the embedded provider)

    assert {
        "openai",
        "anthropic",
        "openai-api",
        "mockllm",
        "hf",
        "embedded",
    } <= model_provider_names()


@task
def _two_args(count: int = 1, label: str = "a") -> Task:
    return Task(dataset=MemoryDataset([Sample(input="x")]))


def test_resolve_task_args_gives_the_arguments_a_task_was_made_with() -> None:
    assert _parameters(resolve_task_args) == ["task"]
    assert resolve_task_args(_two_args(count=3)) == {"count": 3}  # as passed, as the log keeps them
    assert resolve_task_args(Task(dataset=MemoryDataset([Sample(input="x")]))) == {}


def _hf_source_text() -> str:
    spec = importlib.util.find_spec(inspect_private.HF_PROVIDER)
    assert spec is not None and spec.origin is not None
    return Path(spec.origin).read_text()


def _hf_source() -> dict[str, ast.AST]:
    tree = ast.parse(_hf_source_text())
    named: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            named[node.name] = node
        elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            named[node.targets[0].id] = node
    return named


def _arguments(node: ast.AST) -> list[str]:
    assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    names = [arg.arg for arg in node.args.args]
    return names + ([f"**{node.args.kwarg.arg}"] if node.args.kwarg else [])


def _members(node: ast.AST) -> dict[str, ast.AST]:
    assert isinstance(node, ast.ClassDef)
    return {
        item.name: item
        for item in node.body
        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
    }


def _fields(node: ast.AST) -> set[str]:
    assert isinstance(node, ast.ClassDef)
    return {item.target.id for item in node.body
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)}  # fmt: skip


def _self_attributes(function: ast.AST) -> set[str]:
    return {node.attr for node in ast.walk(function) if isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name) and node.value.id == "self"
            and isinstance(node.ctx, ast.Store)}  # fmt: skip


def test_the_hf_provider_has_what_the_embedded_provider_builds_on() -> None:
    hf = _hf_source()
    assert set(hf) >= inspect_private.HF_PROVIDER_NAMES
    token = hf["HF_TOKEN"]
    assert isinstance(token, ast.Assign) and ast.literal_eval(token.value) == "HF_TOKEN"
    assert _arguments(hf["hub_token"]) == ["api_key"]
    assert _arguments(hf["set_random_seeds"]) == ["seed"]
    assert isinstance(hf["batched_generate"], ast.AsyncFunctionDef)
    assert _arguments(hf["batched_generate"]) == ["input"]
    assert {"input", "device", "tokenizer", "generator", "decoder", "batch_size"} <= _fields(
        hf["GenerateInput"]
    )
    output = {"output", "input_tokens", "output_tokens", "total_tokens", "hidden_states", "time"}
    assert output <= _fields(hf["GenerateOutput"])
    assert {"input", "future"} <= _fields(hf["_QueueItem"])  # what `_generate_batch` reads
    assert _arguments(hf["_batch_key"]) == ["input"]
    assert _arguments(hf["_generate_batch"]) == ["batch"]
    provider = hf["HuggingFaceAPI"]
    assert isinstance(provider, ast.ClassDef) and [
        ast.unparse(base) for base in provider.bases
    ] == ["ModelAPI"]
    methods = _members(provider)
    assert _arguments(methods["__init__"]) == [
        "self",
        "model_name",
        "base_url",
        "api_key",
        "config",
        "**model_args",
    ]
    assert _arguments(methods["generate"]) == ["self", "input", "tools", "tool_choice", "config"]
    assert _arguments(methods["hf_chat"]) == ["self", "messages", "tools"]
    assert "max_connections" in methods
    used = {"do_sample", "model", "tokenizer", "tokenizer_call_args", "hidden_states"}
    assert used <= _self_attributes(methods["__init__"])


def test_task_create_makes_a_registered_task_from_its_name_and_arguments() -> None:
    import stancelab._registry  # noqa: F401  (registers the tasks as Inspect's entry point does)

    assert _parameters(inspect_private.task_create)[:1] == ["name"]
    made = inspect_private.task_create("stancelab/millstone", trials=2, prompts="stancelab")
    assert isinstance(made, Task) and made.name == "stancelab/millstone"
    assert resolve_task_args(made)["trials"] == 2


def test_the_model_info_lookup_key_is_a_string_the_hf_provider_reads() -> None:
    key = inspect_private.MODEL_INFO_LOOKUP_API_KEY
    assert isinstance(key, str) and key
    assert "MODEL_INFO_LOOKUP_API_KEY" in _hf_source_text()


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        inspect_private.no_such_name  # noqa: B018


def test_inspects_zip_writer_takes_its_zstd_thread_count_from_a_module_integer() -> None:
    from inspect_ai._util import zipfile as inspect_zipfile

    default = inspect_zipfile._ZSTD_THREADS
    with inspect_private.single_threaded_zstd():
        assert inspect_zipfile._ZSTD_THREADS == 0
    assert isinstance(default, int) and default == inspect_zipfile._ZSTD_THREADS


def test_the_async_zip_reader_parses_a_directory_by_filesystem_and_file_name() -> None:
    parse = inspect_private.async_zip()._parse_central_directory
    assert inspect.iscoroutinefunction(parse)
    assert _parameters(parse)[:2] == ["filesystem", "filename"]


def test_samples_df_reads_full_samples_through_the_table_modules_reader() -> None:
    reader = inspect_private.samples_table().read_eval_log_async
    assert inspect.iscoroutinefunction(reader)
    assert next(iter(inspect.signature(reader).parameters)) == "log_file"


def test_the_shard_layout_paths_map_a_merged_log_and_its_shards() -> None:
    from stancelab.core.inspect_private import (
        eval_log_for_shards_dir,
        eval_shards_dir,
        merged_log_candidates_for_shard,
    )

    assert eval_shards_dir("s3://b/p/run_x.eval") == "s3://b/p/run_x.shards"
    assert eval_log_for_shards_dir("/logs/run_x.shards") == "/logs/run_x.eval"
    assert merged_log_candidates_for_shard("/logs/run_x.shards/2/a.eval") == [
        "/logs/run_x.eval",
        "/logs/run_x-recovered.eval",
    ]
    assert merged_log_candidates_for_shard("/logs/a.eval") is None


def test_attempts_sort_by_their_timestamped_names_then_mtime() -> None:
    from inspect_ai._util.file import FileInfo

    from stancelab.core.inspect_private import attempt_sort_key

    def info(name: str, mtime: float) -> FileInfo:
        return FileInfo(name=f"/l/x.shards/1/{name}", type="file", size=1, mtime=mtime)

    older = info("2026-11-28T14-50-00-00-00_t_a.eval", 9.0)
    newer = info("2026-11-28T14-50-01-00-00_t_b.eval", 1.0)
    same_second = info("2026-11-28T14-50-01-00-00_t_c.eval", 2.0)
    assert max([same_second, older, newer], key=attempt_sort_key) is same_second
    assert _parameters(attempt_sort_key) == ["info"]


def test_without_merged_shards_and_the_clean_up_take_what_stancelab_passes() -> None:
    from stancelab.core.inspect_private import cleanup_older_eval_logs, without_merged_shards

    assert _parameters(without_merged_shards)[:1] == ["logs"]
    assert without_merged_shards([]) == []
    assert _parameters(cleanup_older_eval_logs)[:2] == ["log_dir", "task_ids"]


def test_the_view_listing_takes_a_folder_and_whether_to_recurse() -> None:
    from stancelab.core.inspect_private import get_logs

    assert _parameters(get_logs)[:4] == [
        "request_log_dir",
        "recursive",
        "fs_options",
        "show_shards",
    ]


def test_the_eval_writer_takes_samples_already_serialised(tmp_path: Path) -> None:
    """The streamed merge's writer: `EvalRecorder(log_dir)`, then `log_init(eval, location,
    clean=)`, `log_start(eval, plan)`, the shards' members and summaries written into its
    temporary zip (`data[_log_file_key(eval)]`: its `_zip`, `_lock`, `_summary_counter`,
    `_summaries`, `_zip_writestr` and the journal's names), `log_finish(eval, status, stats,
    results, reductions, error)` and, on failure, `log_discard(eval, keep_destination=)`."""
    from inspect_ai.log._recorders.eval import (
        ZipLogFile,
        _journal_summary_file,
        _journal_summary_path,
    )

    from stancelab.core.inspect_private import EvalRecorder, sample_member, write_sample_members

    assert _parameters(EvalRecorder)[:1] == ["log_dir"]
    assert _parameters(EvalRecorder.log_init)[:4] == ["self", "eval", "location", "clean"]
    assert _parameters(EvalRecorder.log_start)[:3] == ["self", "eval", "plan"]
    assert _parameters(EvalRecorder._log_file_key) == ["self", "eval"]
    assert EvalRecorder("/tmp").data == {}
    log = ZipLogFile(str(tmp_path / "x.eval"))
    log._open()
    assert (log._summary_counter, log._summaries) == (0, [])
    assert log._zip is not None and hasattr(log._lock, "acquire")
    assert _parameters(ZipLogFile._zip_writestr) == ["self", "filename", "data"]
    assert _journal_summary_path(_journal_summary_file(3)) == "_journal/summaries/3.json"
    assert sample_member("a-1", 2) == "samples/a-1_epoch_2.json"
    assert inspect.iscoroutinefunction(write_sample_members)
    assert _parameters(write_sample_members) == ["recorder", "eval", "copy", "summaries"]
    assert _parameters(EvalRecorder.log_finish)[:7] == [
        "self", "eval", "status", "stats", "results", "reductions", "error"]  # fmt: skip
    assert "keep_destination" in _parameters(EvalRecorder.log_discard)


def test_the_log_filesystem_lists_as_list_eval_logs_and_moves_files(tmp_path: Path) -> None:
    from stancelab.core.inspect_private import log_filesystem, run_coroutine

    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.eval").write_bytes(b"x")
    filesystem = log_filesystem(str(tmp_path))
    (info,) = filesystem.ls(str(tmp_path), recursive=True, on_error="raise")
    assert (info.name, info.type, info.size) == ((tmp_path / "a" / "x.eval").as_uri(), "file", 1)
    assert info.mtime is not None
    filesystem.fs.mv(info.name, info.name + ".merged")
    assert [path.name for path in (tmp_path / "a").iterdir()] == ["x.eval.merged"]

    async def answer() -> int:
        return 42

    assert run_coroutine(answer()) == 42


def test_inspects_sample_id_matcher_is_where_the_shard_selection_replaces_it() -> None:
    """`core.runs.sample_ids` replaces `sample_id_filter` in each module that binds it."""
    modules = inspect_private.sample_id_filter_modules()
    assert all(callable(module.sample_id_filter) for module in modules)
    assert modules[0].SampleIdMatcher._fields == ("matches", "patterns")
    assert inspect_private.normalise_sample_id("issue-1__3") == "issue-1__3"


def test_inspects_slice_dataset_is_where_the_shard_selection_replaces_it() -> None:
    """`core.runs.sample_ids` replaces `slice_dataset` in each module that binds it; its
    `dynamic` skips the check of each selected id against the dataset's."""
    modules = inspect_private.slice_dataset_modules()
    assert all(callable(module.slice_dataset) for module in modules)
    parameters = _parameters(getattr(modules[0].slice_dataset, "__wrapped__",
                                     modules[0].slice_dataset))  # fmt: skip
    assert parameters == ["dataset", "limit", "sample_id", "dynamic"]


def test_the_sample_epoch_is_none_outside_a_sample_and_inspects_cache_keys_on_it() -> None:
    """`core.runs.single_flight` keys a per-epoch policy's request on the running sample's
    epoch, as Inspect's cache key does (its `epoch` context variable, set from `sample_state`)."""
    from inspect_ai.model import _cache

    assert inspect_private.sample_epoch() is None
    assert _cache.epoch.get(None) is None


def test_thin_text_without_rewrap_gives_what_inspects_thin_text_gives() -> None:
    """Texts around the width and the scan, with every kind of whitespace, hyphens and long
    words: the same result as `textwrap.shorten`, Inspect's own `thin_text`."""
    import random
    import textwrap

    from inspect_ai.log import _log, _util

    def shortened(text: str) -> str:
        return textwrap.shorten(text[: _util.THIN_TEXT_SCAN], width=_util.THIN_TEXT_WIDTH,
                                placeholder="...")  # fmt: skip

    inspect_private.thin_text_without_rewrap()
    assert _util.thin_text is _log.thin_text
    draw = random.Random(37)
    pieces = ["a", "word", "well-known", "x" * 1100, " ", "  ", "\t", "\n", "\r\n", "\xa0", "-"]
    texts = ["", " ", "\n\t", "ok", "  padded  ", "a" * 1024, "a" * 1025, "b " * 600]
    for _ in range(400):
        target = draw.choice([5, 900, 1020, 1024, 1030, 2000, 9000])
        text = ""
        while len(text) < target:
            text += draw.choice(pieces)
        texts.append(text)
    for text in texts:
        assert _util.thin_text(text) == shortened(text), repr(text[:60])
