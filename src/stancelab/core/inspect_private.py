"""Every name stancelab takes from Inspect's private modules, in one place.

Inspect has no public API for these (inspect-ai 0.3.285); each may change in any release.
Everything else in stancelab imports them from here, and `tests/core/test_inspect_private.py`
checks each one's signature and attributes, so a change in Inspect fails one test that names
the symbol instead of breaking a run.

- `PrerequisiteError`: the error Inspect prints as one line, without a traceback, when an eval
  cannot start (`core.errors.TaskArgumentError` subclasses it; `core.runs.startup` catches it).
- `set_generate_config_override`: the live `attempt_timeout` override behind
  `inspect ctl config` (`core.runs.attempts`).
- `model_provider_names`: the model providers in Inspect's registry (`core.runs.models`).
- `resolve_task_args`: the arguments a task object was made with (`core.runs.shards`).
- `task_create`: a registered task made by name, as `inspect eval` makes it (the tests of
  `-T` options).
- `MODEL_INFO_LOOKUP_API_KEY`: the placeholder key Inspect gives a model it builds only to
  look up its info (the embedded provider's tests).
- `samples_table()`: the module whose `read_eval_log_async` `samples_df` reads full samples
  with (the tests that check an analysis reads summaries only spy on it).
- Inspect's shard layout (`<name>.shards/<k>/` beside the merged log `<name>.eval`), which
  has no public API in 0.3.285: `eval_shards_dir`, `eval_log_for_shards_dir`,
  `merged_log_candidates_for_shard` (the paths), `attempt_sort_key` (a shard's attempts in
  order) and `without_merged_shards` (a listing less the shards a finished merged log covers,
  as `inspect view` lists them) (`core.runs.shard_sets`, `core.results.logs`), and
  `cleanup_older_eval_logs`, `eval_set`'s deletion of a task id's older logs (the test that it
  deletes no shard), and `get_logs`, the listing `inspect view` serves (the test that a merged
  sharded run is one eval there).
- The streamed merge of a shard set (`core.runs.shard_sets`): `EvalRecorder`, the `.eval`
  writer behind `write_eval_log` (`log_init`, `log_start`, `log_finish`), into whose temporary
  zip (`ZipLogFile._zip`) `write_sample_members` lets a merge write samples already serialised
  (a shard's members, copied as bytes, as Inspect's `seed_from_prior_log` copies a prior
  log's) and journals their summaries as `write_buffered_samples` journals a batch of buffered
  samples; `sample_member`, the name of a sample's member in an `.eval` zip;
  `log_filesystem`, the filesystem Inspect lists a log location with (names, sizes and
  modification times as `list_eval_logs` gives them, and the files it takes for no log); and
  `run_coroutine`, how Inspect's synchronous readers run their coroutines.
- `thin_text_without_rewrap()`: Inspect's `thin_text` (a sample summary's texts: every
  metadata string, score answer and explanation, at every summary written or read) returning a
  text that fits once its whitespace is collapsed without `textwrap.shorten`'s wrapping, which
  gives the same text (about a sixth of reading 34,650 summaries).
- `sample_epoch()`: the epoch of the sample whose solver or scorer is running (Inspect's
  `sample_state`), a part of the cache key of a per-epoch policy (`core.runs.single_flight`).
- The `hf` provider's internals that the embedded provider builds on (`core.embedded.api`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import TYPE_CHECKING, Any
from zipfile import ZipFile

from inspect_ai._util.error import PrerequisiteError
from inspect_ai._util.log_layout import (
    eval_log_for_shards_dir,
    eval_shards_dir,
    merged_log_candidates_for_shard,
)
from inspect_ai.dataset._util import normalise_sample_id
from inspect_ai.model._generate_overrides import set_generate_config_override

if TYPE_CHECKING:
    from inspect_ai._eval.evalset import cleanup_older_eval_logs
    from inspect_ai._eval.loader import resolve_task_args
    from inspect_ai._eval.registry import task_create
    from inspect_ai._util._async import run_coroutine
    from inspect_ai._util.file import filesystem as log_filesystem
    from inspect_ai._view.common import get_logs
    from inspect_ai.log._file import without_merged_shards
    from inspect_ai.log._recorders.eval import EvalRecorder
    from inspect_ai.log._shards._walk import attempt_sort_key
    from inspect_ai.model._model_info import MODEL_INFO_LOOKUP_API_KEY
    from inspect_ai.model._providers.hf import (
        HF_TOKEN,
        GenerateInput,
        GenerateOutput,
        HuggingFaceAPI,
        _batch_key,
        _generate_batch,
        batched_generate,
        hub_token,
        set_random_seeds,
    )

# Names imported on first use: the `hf` provider imports torch and transformers, Inspect's
# task loader most of Inspect's eval machinery.
HF_PROVIDER = "inspect_ai.model._providers.hf"
HF_PROVIDER_NAMES = frozenset(
    {
        "HF_TOKEN",
        "GenerateInput",
        "GenerateOutput",
        "HuggingFaceAPI",
        "_batch_key",
        "_generate_batch",
        "batched_generate",
        "hub_token",
        "set_random_seeds",
    }
)

__all__ = [
    "HF_TOKEN",
    "MODEL_INFO_LOOKUP_API_KEY",
    "EvalRecorder",
    "GenerateInput",
    "GenerateOutput",
    "HuggingFaceAPI",
    "PrerequisiteError",
    "_batch_key",
    "_generate_batch",
    "async_zip",
    "attempt_sort_key",
    "batched_generate",
    "cleanup_older_eval_logs",
    "eval_log_for_shards_dir",
    "eval_shards_dir",
    "get_logs",
    "hub_token",
    "log_filesystem",
    "merged_log_candidates_for_shard",
    "model_provider_names",
    "normalise_sample_id",
    "resolve_task_args",
    "run_coroutine",
    "sample_epoch",
    "sample_id_filter_modules",
    "sample_member",
    "samples_table",
    "set_generate_config_override",
    "set_random_seeds",
    "single_threaded_zstd",
    "slice_dataset_modules",
    "task_create",
    "thin_text_without_rewrap",
    "without_merged_shards",
    "write_sample_members",
]


def sample_id_filter_modules() -> tuple[ModuleType, ...]:
    """The modules that bind Inspect's `sample_id_filter` (each patched by
    `core.runs.sample_ids`): where it is defined, the task runner, the eval-set manifest."""
    from inspect_ai._eval import eval_set_manifest
    from inspect_ai._eval.task import run, util

    return (util, run, eval_set_manifest)


@contextmanager
def single_threaded_zstd() -> Iterator[None]:
    """Inspect's zip writers compressing each member in the writing thread, the same bytes:
    by default (`inspect_ai._util.zipfile._ZSTD_THREADS`, 12) every member written, each
    sample's few kilobytes of JSON included, starts a pool of 12 zstd threads (about nine times
    the compression itself)."""
    from inspect_ai._util import zipfile as inspect_zipfile

    threads = inspect_zipfile._ZSTD_THREADS
    inspect_zipfile._ZSTD_THREADS = 0
    try:
        yield
    finally:
        inspect_zipfile._ZSTD_THREADS = threads


def async_zip() -> ModuleType:
    """The module of Inspect's async zip reader (`_parse_central_directory`: a log's directory
    read, for every reader made)."""
    from inspect_ai._util import async_zip

    return async_zip


def slice_dataset_modules() -> tuple[ModuleType, ...]:
    """The modules that bind Inspect's `slice_dataset` (each patched by `core.runs.sample_ids`):
    where it is defined, the task's logger, the task runner."""
    from inspect_ai._eval.task import log, run, util

    return (util, log, run)


def thin_text_without_rewrap() -> None:
    """Replace Inspect's `thin_text` (where it is defined and where `EvalSampleSummary` binds
    it) by one that returns a text fitting its width once its whitespace is collapsed as it
    stands, and leaves any other to `textwrap.shorten`: the same result, since `shorten`
    returns a collapsed text that fits unchanged (once per process)."""
    from inspect_ai.log import _log, _util

    original = _util.thin_text
    if getattr(original, "stancelab_fast", False):
        return

    def thin_text(text: str) -> str:
        collapsed = " ".join(text[: _util.THIN_TEXT_SCAN].split())
        return collapsed if len(collapsed) <= _util.THIN_TEXT_WIDTH else original(text)

    thin_text.stancelab_fast = True  # type: ignore[attr-defined]
    _util.thin_text = thin_text
    _log.thin_text = thin_text


def sample_epoch() -> int | None:
    """The epoch of the sample running in this context (None outside a sample), the epoch
    Inspect's cache key takes for a per-epoch policy."""
    from inspect_ai.solver._task_state import sample_state

    state = sample_state()
    return None if state is None else state.epoch


def samples_table() -> ModuleType:
    """The module of `samples_df` that reads a log's full samples (`read_eval_log_async`)."""
    from inspect_ai.analysis._dataframe.samples import table

    return table


def sample_member(sample_id: str | int, epoch: int) -> str:
    """The name of a sample's member in an `.eval` zip (`samples/<id>_epoch_<n>.json`)."""
    from inspect_ai.log._recorders.eval import _sample_filename

    return _sample_filename(sample_id, epoch)


async def write_sample_members(recorder: Any, eval: Any, copy: Callable[[ZipFile], None],
                               summaries: list[Any]) -> None:  # fmt: skip
    """Write samples already serialised into an `EvalRecorder`'s temporary zip (`copy`, given
    that zip, writes their members) and journal their `summaries` as one entry, as
    `write_buffered_samples` writes and journals a batch of buffered samples."""
    from inspect_ai.log._recorders.eval import _journal_summary_file, _journal_summary_path

    log = recorder.data[recorder._log_file_key(eval)]
    async with log._lock:
        copy(log._zip)
        if summaries:
            log._summary_counter += 1
            journal = _journal_summary_path(_journal_summary_file(log._summary_counter))
            log._zip_writestr(journal, summaries)
            log._summaries.extend(summaries)


def model_provider_names() -> set[str]:
    """The model providers registered with Inspect: its own, and those of installed packages
    (entry points) and of stancelab (`embedded`) once imported."""
    import inspect_ai.model  # noqa: F401  (registers Inspect's providers)
    from inspect_ai._util.entrypoints import ensure_entry_points
    from inspect_ai._util.registry import registry_find, registry_unqualified_name

    ensure_entry_points()
    return {
        registry_unqualified_name(info)
        for info in registry_find(lambda info: info.type == "modelapi")
    }


def __getattr__(name: str) -> Any:
    """`resolve_task_args`, `task_create`, `attempt_sort_key`, `without_merged_shards`,
    `cleanup_older_eval_logs`, `get_logs`, `EvalRecorder`, `log_filesystem`, `run_coroutine`,
    `MODEL_INFO_LOOKUP_API_KEY` and the `hf` provider's names,
    imported when first asked for (PEP 562)."""
    if name == "resolve_task_args":
        from inspect_ai._eval.loader import resolve_task_args

        return resolve_task_args
    if name == "task_create":
        from inspect_ai._eval.registry import task_create

        return task_create
    if name == "attempt_sort_key":
        from inspect_ai.log._shards._walk import attempt_sort_key

        return attempt_sort_key
    if name == "cleanup_older_eval_logs":
        from inspect_ai._eval.evalset import cleanup_older_eval_logs

        return cleanup_older_eval_logs
    if name == "get_logs":
        from inspect_ai._view.common import get_logs

        return get_logs
    if name == "without_merged_shards":
        from inspect_ai.log._file import without_merged_shards

        return without_merged_shards
    if name == "EvalRecorder":
        from inspect_ai.log._recorders.eval import EvalRecorder

        return EvalRecorder
    if name == "log_filesystem":
        from inspect_ai._util.file import filesystem

        return filesystem
    if name == "run_coroutine":
        from inspect_ai._util._async import run_coroutine

        return run_coroutine
    if name == "MODEL_INFO_LOOKUP_API_KEY":
        from inspect_ai.model._model_info import MODEL_INFO_LOOKUP_API_KEY

        return MODEL_INFO_LOOKUP_API_KEY
    if name in HF_PROVIDER_NAMES:
        from inspect_ai.model._providers import hf

        return getattr(hf, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
