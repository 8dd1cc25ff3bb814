"""Inspect model provider `embedded/...`: Inspect's `hf` provider over the materialised model."""

from __future__ import annotations

import os
from typing import Any

from inspect_ai.model import GenerateConfig
from inspect_ai.model._providers.hf import HuggingFaceAPI

from stancelab.core.embedded import EMBEDDED_MODEL_NAME, materialise


class EmbeddedAPI(HuggingFaceAPI):
    """SmolLM2-135M-Instruct served in-process by Inspect's Hugging Face provider.

    Batching, sampling and log-probs are Inspect's own; this class only points
    the provider at the locally materialised weights and forces the CPU unless
    a device is given.
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
