"""Inspect model provider `embedded/...`: Inspect's `hf` provider over the materialised model."""

from __future__ import annotations

import ctypes
import functools
import os
from contextvars import ContextVar
from typing import Any

from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    GenerateConfig,
    Logprobs,
    ModelAPI,
    ModelOutput,
    ModelUsage,
)
from inspect_ai.tool import ToolChoice, ToolInfo

from stancelab.core.embedded.batches import generate_in_batches
from stancelab.core.embedded.logprobs import generate_with_top_logprobs, logprobs_from_rows
from stancelab.core.embedded.model import EMBEDDED_MODEL_NAME, materialise
from stancelab.core.embedded.precision import embedded_dtype
from stancelab.core.inspect_private import (
    HF_TOKEN,
    GenerateInput,
    HuggingFaceAPI,
    hub_token,
    set_random_seeds,
)

# Set for the duration of one greedy call; context variables are per asyncio task,
# so concurrent samples that sample at temperature > 0 are not affected.
_greedy_call: ContextVar[bool] = ContextVar("stancelab_greedy_call", default=False)

# Calls in flight, and the most generated in one batch, unless max_connections says otherwise;
# a batch also stays within the queue's token budget (`core.embedded.batches.TOKEN_BUDGET`), so
# long prompts go two at a time (at 8 long prompts a batch the demo peaked at 1.54 GiB) while
# short ones share a decoding step, which costs about the same for 4 rows as for 16.
BATCH_SIZE = 16

# The provider's state after loading (weights, tokenizer, settings), by model arguments:
# Inspect makes one provider per role and generation config, and they share one copy.
_loaded: dict[str, dict[str, Any]] = {}


# The model argument that caps every reply of one Model (a role or the subject), set by the
# run (`core.runs.caps`); None or 0: the caller's cap as it is.
MAX_TOKENS_CAP_ARG = "max_tokens_cap"

# glibc's mallopt parameter, and the size above which an allocation gets its own mapping:
# a prefill's activations (several MB each) go back to the system when freed, while a decoding
# step's key-value blocks (about 1 MB) are reused from the heap. At glibc's default of 128 KiB,
# every step's blocks were fresh mappings: 80 M page faults and 258 s of system time in one demo,
# and generation about 1.6x slower (benchmarks/README.md, issue 37).
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD_BYTES = 4 * 1024 * 1024
# glibc's mallopt parameter, and the heaps (arenas) threads may allocate from: by default up to
# 8 per core, each keeping its own freed blocks; with 2 the demo's process peaked 30 MB lower
# (1,429,064 against 1,458,736 KiB, benchmarks/README.md, issue 37).
M_ARENA_MAX = -8
ARENAS = 2
# oneDNN, which runs the CPU's matrix products, keeps the primitives it built for each shape it
# met (up to 1,024 by default), each with its own memory: a batch of each size and length is a
# new shape, and over the demo's six steps the process's memory in use grew by 130 MB more than
# with a cache of 8, for the same time (a demo peak of 1,294 against 1,388 MiB; benchmarks/
# README.md, issue 37 seventh pass). oneDNN reads it once per process.
ONEDNN_CACHE_ENV = "ONEDNN_PRIMITIVE_CACHE_CAPACITY"
ONEDNN_CACHE_CAPACITY = "8"


def release_freed_tensors() -> bool:
    """Have glibc hand large freed blocks (a prefill's activations) back to the system.

    By default glibc raises its mmap threshold each time a large block is freed (up to 32 MiB),
    after which blocks of that size come from its heaps and stay resident once freed: about
    400 MB on a batch of 8 prompts of 400 tokens. A fixed threshold turns that adjustment off.
    Returns whether it was set (False off glibc)."""
    libc = _libc()
    return libc is not None and bool(libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES))


def limit_arenas() -> bool:
    """Have threads that start from now on share ARENAS heaps (glibc's `M_ARENA_MAX`), so the
    generation thread's and Inspect's freed blocks serve each other. Returns whether it was
    set (False off glibc)."""
    libc = _libc()
    return libc is not None and bool(libc.mallopt(M_ARENA_MAX, ARENAS))


def trim_heap() -> bool:
    """Hand the heaps' free pages back to the system (glibc's `malloc_trim`): what a finished
    generation freed below the mmap threshold. Returns whether any memory was released."""
    libc = _libc()
    return libc is not None and bool(libc.malloc_trim(0))


@functools.cache
def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL("libc.so.6")
    except OSError:
        return None


def loaded_copies() -> int:
    """How many copies of the weights this process has loaded."""
    return len(_loaded)


class EmbeddedAPI(HuggingFaceAPI):
    """SmolLM2-135M-Instruct served in-process by Inspect's Hugging Face provider.

    Sampling and the batch step are Inspect's own; this class points the provider at the
    locally materialised weights, runs on the CPU unless a device is given, loads the weights
    once per process (and hands freed activations back to the system), queues generations
    itself (`core.embedded.batches`: at most BATCH_SIZE a batch, within a token budget),
    decodes greedily when asked for temperature 0 (the `hf` provider always samples, and
    transformers rejects a zero temperature), and records log-probs as top-k per generated
    token instead of the full vocabulary (`core.embedded.logprobs`).
    """

    def __init__(
        self,
        model_name: str = EMBEDDED_MODEL_NAME,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),  # noqa: B008 (Inspect's own signature)
        **model_args: Any,
    ) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault(ONEDNN_CACHE_ENV, ONEDNN_CACHE_CAPACITY)
        cap = model_args.pop(MAX_TOKENS_CAP_ARG, None)
        if model_name != EMBEDDED_MODEL_NAME:
            raise ValueError(
                f"The embedded provider serves only '{EMBEDDED_MODEL_NAME}', not '{model_name}'."
            )
        if "torch_dtype" not in model_args:
            model_args.setdefault("dtype", embedded_dtype())
        if "model_path" not in model_args:
            model_args["model_path"] = str(
                materialise(dtype=str(model_args.get("dtype") or "float32"))
            )
        model_args.setdefault("device", "cpu")
        # the token is all the api key changes (Inspect's model-info lookup passes a placeholder)
        key = repr(sorted(model_args.items())) + repr(hub_token(api_key))
        if key in _loaded:
            self._share(_loaded[key], model_name, base_url, api_key, config)
        else:
            release_freed_tensors()
            limit_arenas()
            super().__init__(model_name=model_name, base_url=base_url, api_key=api_key,
                             config=config, **model_args)  # fmt: skip
            _loaded[key] = dict(vars(self))
        self.max_tokens_cap: int | None = int(cap) if cap else None

    def _share(
        self, loaded: dict[str, Any], model_name: str, base_url: str | None, api_key: str | None,
        config: GenerateConfig,
    ) -> None:  # fmt: skip
        """Set up as `HuggingFaceAPI.__init__` would, reusing a loaded provider's state (the
        same model arguments) for everything that is not the base `ModelAPI`'s own."""
        ModelAPI.__init__(self, model_name=model_name, base_url=base_url, api_key=api_key,
                          api_key_vars=[HF_TOKEN], config=config)  # fmt: skip
        if config.seed is not None:
            set_random_seeds(config.seed)
        for name, value in loaded.items():
            if name not in vars(self):
                setattr(self, name, value)

    def max_connections(self) -> int:
        """Calls in flight, which is also the largest batch generated at once."""
        return BATCH_SIZE

    @property  # type: ignore[override]
    def do_sample(self) -> bool:
        return self._sample_by_default and not _greedy_call.get()

    @do_sample.setter
    def do_sample(self, value: bool) -> None:
        self._sample_by_default = value

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        config = capped(config, self.max_tokens_cap)
        try:
            if config.temperature != 0:
                return await self._generate(input, tools, tool_choice, config)
            token = _greedy_call.set(True)
            try:
                update = {"temperature": None, "top_p": None, "top_k": None}
                return await self._generate(
                    input, tools, tool_choice, config.model_copy(update=update)
                )
            finally:
                _greedy_call.reset(token)
        finally:
            trim_heap()

    async def _generate(
        self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:  # fmt: skip
        if tools or self.hidden_states:  # paths this provider leaves to Inspect's as they are
            if (
                not config.logprobs
            ):  # no logits at all (Inspect's provider asks for them on False too)
                config = config.model_copy(update={"logprobs": None, "top_logprobs": None})
            return await super().generate(input, tools, tool_choice, config)
        return await self._generate_in_batches(input, config)

    async def _generate_in_batches(
        self, input: list[ChatMessage], config: GenerateConfig
    ) -> ModelOutput:
        """Inspect's `hf` generation step through stancelab's queue (`core.embedded.batches`),
        with top-k log-probs, where asked for, recorded per token (`core.embedded.logprobs`)
        instead of every token's full-vocabulary logits."""
        assert isinstance(self.tokenizer_call_args, dict)
        tokenizer = functools.partial(self.tokenizer, return_tensors="pt", padding=True,
                                      **self.tokenizer_call_args)  # fmt: skip
        settings = generation_kwargs(config, self.do_sample, self.tokenizer)
        generator = (
            functools.partial(
                generate_with_top_logprobs, self.model, config.top_logprobs or 1, **settings
            )
            if config.logprobs
            else functools.partial(self.model.generate, **settings)
        )
        decoder = functools.partial(self.tokenizer.batch_decode, skip_special_tokens=True,
                                    clean_up_tokenization_spaces=False)  # fmt: skip
        response = await generate_in_batches(GenerateInput(
            input=self.hf_chat(input, []), device=self.model.device, tokenizer=tokenizer,
            generator=generator, decoder=decoder,
            batch_size=config.max_connections or self.max_connections(),
        ))  # fmt: skip
        message = ChatMessageAssistant(
            content=response.output, model=self.model_name, source="generate"
        )
        usage = ModelUsage(input_tokens=response.input_tokens, output_tokens=response.output_tokens,
                           total_tokens=response.total_tokens)  # fmt: skip
        logprobs = self._logprobs(response) if config.logprobs else None
        return ModelOutput(model=self.model_name, usage=usage, time=response.time,
                           choices=[ChatCompletionChoice(message=message, logprobs=logprobs)])  # fmt: skip

    def _logprobs(self, response: Any) -> Logprobs:
        """The top-k log-probs the generation recorded (`core.embedded.logprobs`)."""
        rows = response.hidden_states[0][0] if response.hidden_states else []
        return Logprobs(
            content=logprobs_from_rows(rows, self.tokenizer.convert_ids_to_tokens, self._stop_ids())
        )

    def _stop_ids(self) -> set[int]:
        """Token ids that end a generated row (what follows them is padding)."""
        configured = self.model.generation_config.eos_token_id
        ids = set(configured if isinstance(configured, list) else [configured])
        return {
            i
            for i in ids | {self.tokenizer.eos_token_id, self.tokenizer.pad_token_id}
            if i is not None
        }


def capped(config: GenerateConfig, cap: int | None) -> GenerateConfig:
    """`config` with its `max_tokens` at most `cap` (unchanged when `cap` is None)."""
    if cap is None or (config.max_tokens is not None and config.max_tokens <= cap):
        return config
    return config.model_copy(update={"max_tokens": cap})


def generation_kwargs(config: GenerateConfig, do_sample: bool, tokenizer: Any) -> dict[str, Any]:
    """`model.generate` settings from a generate config, as Inspect's `hf` provider sets them,
    without `output_logits` (log-probs are recorded as top-k, `core.embedded.logprobs`)."""
    settings: dict[str, Any] = {"do_sample": do_sample, "return_dict_in_generate": True}
    for name, value in (("max_new_tokens", config.max_tokens), ("temperature", config.temperature),
                        ("top_p", config.top_p), ("top_k", config.top_k)):  # fmt: skip
        if value is not None:
            settings[name] = value
    if config.stop_seqs is not None:
        from transformers.generation import StopStringCriteria

        settings["stopping_criteria"] = [StopStringCriteria(tokenizer, config.stop_seqs)]
    return settings
