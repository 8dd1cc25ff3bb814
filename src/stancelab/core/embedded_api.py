"""Inspect model provider `embedded/...`: Inspect's `hf` provider over the materialised model."""

from __future__ import annotations

import os
from contextvars import ContextVar
from typing import Any

from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput
from inspect_ai.model._providers.hf import HuggingFaceAPI
from inspect_ai.tool import ToolChoice, ToolInfo

from stancelab.core.embedded import EMBEDDED_MODEL_NAME, materialise

# Set for the duration of one greedy call; context variables are per asyncio task,
# so concurrent samples that sample at temperature > 0 are not affected.
_greedy_call: ContextVar[bool] = ContextVar("stancelab_greedy_call", default=False)


class EmbeddedAPI(HuggingFaceAPI):
    """SmolLM2-135M-Instruct served in-process by Inspect's Hugging Face provider.

    Batching, sampling and log-probs are Inspect's own; this class points the
    provider at the locally materialised weights, runs on the CPU unless a device
    is given, and decodes greedily when asked for temperature 0 (the `hf`
    provider always samples, and transformers rejects a zero temperature).
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
        if model_name != EMBEDDED_MODEL_NAME:
            raise ValueError(
                f"The embedded provider serves only '{EMBEDDED_MODEL_NAME}', not '{model_name}'."
            )
        model_args.setdefault("model_path", str(materialise()))
        model_args.setdefault("device", "cpu")
        super().__init__(
            model_name=model_name, base_url=base_url, api_key=api_key, config=config, **model_args
        )

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
        if config.temperature != 0:
            return await super().generate(input, tools, tool_choice, config)
        token = _greedy_call.set(True)
        try:
            greedy = config.model_copy(update={"temperature": None, "top_p": None, "top_k": None})
            return await super().generate(input, tools, tool_choice, greedy)
        finally:
            _greedy_call.reset(token)
