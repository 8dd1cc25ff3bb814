"""Replies of a form a method defines, on the embedded model: where generation stops, and
whether an unreadable reply is asked again.

A method's own settings apply to every other model unchanged: a stop sequence is not sent to
a hosted model (providers cut the stop sequence from the reply, which would cut a JSON
object's closing brace), and its re-asks are the method's.
"""

from __future__ import annotations

import sys

from inspect_ai.model import GenerateConfig, Model

EMBEDDED_API_MODULE = "stancelab.core.embedded.api"
"""the provider's module (torch, transformers): imported by the provider's factory when an
embedded model is made, never to ask whether a model is one"""

# Where a reply of each form ends. The embedded provider stops after the stop string and
# keeps it in the reply (transformers' StopStringCriteria), so a JSON object stays whole.
JSON_OBJECT_END = ("}",)
OPTION_END = (")",)  # an option written "(X)"
MARKED_LETTER_END = (">>",)  # a letter written "<<X>>"


def is_embedded(model: Model) -> bool:
    """Whether `model` is served by the embedded provider (none is before its module loads)."""
    api = sys.modules.get(EMBEDDED_API_MODULE)
    return api is not None and isinstance(model.api, api.EmbeddedAPI)


def ends_at(model: Model, config: GenerateConfig, stops: tuple[str, ...]) -> GenerateConfig:
    """`config` with generation stopping at the first of `stops` on the embedded model (stop
    sequences the caller set are kept); `config` itself for every other model."""
    if not is_embedded(model) or config.stop_seqs is not None:
        return config
    return config.model_copy(update={"stop_seqs": list(stops)})


def stop_args(model: Model, stops: tuple[str, ...]) -> dict[str, list[str]]:
    """Generate arguments that stop the embedded model's reply at the first of `stops` (none for
    every other model, or where the model's config sets its own stop sequences)."""
    if not is_embedded(model) or model.config.stop_seqs is not None:
        return {}
    return {"stop_seqs": list(stops)}


def asks(model: Model, config: GenerateConfig, calls: int) -> int:
    """Calls per reply when an unreadable one is asked again: one on the embedded model at
    temperature 0 (it decodes greedily, so a re-ask repeats the same reply), else `calls`."""
    temperature = config.temperature if config.temperature is not None else model.config.temperature
    if is_embedded(model) and temperature == 0:
        return min(calls, 1)
    return calls
