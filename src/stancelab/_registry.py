"""Inspect entry point: registers stancelab's tasks and the `embedded` and `nli` model providers.

With stancelab installed, `inspect eval stancelab/millstone --model embedded/smollm2-135m-instruct`
works like any other Inspect task.
"""

from inspect_ai.model import ModelAPI, modelapi

from stancelab.conviction.task import conviction
from stancelab.even_handedness.task import even_handedness
from stancelab.issuebench.task import issuebench, issuebench_classifier_validation
from stancelab.llm_bias_bench.task import llm_bias_bench
from stancelab.millstone.task import millstone, millstone_rephrase
from stancelab.prior_prejudice.tasks import (
    prior_prejudice,
    prior_prejudice_arguments,
    prior_prejudice_cross_task,
    prior_prejudice_negations,
    prior_prejudice_probe,
)


@modelapi(name="embedded")
def embedded() -> type[ModelAPI]:
    from stancelab.core.embedded.api import EmbeddedAPI

    return EmbeddedAPI


@modelapi(name="nli")
def nli() -> type[ModelAPI]:
    from stancelab.conviction.nli import NLIClassifierAPI

    return NLIClassifierAPI


__all__ = [
    "conviction",
    "embedded",
    "even_handedness",
    "issuebench",
    "issuebench_classifier_validation",
    "llm_bias_bench",
    "millstone",
    "millstone_rephrase",
    "nli",
    "prior_prejudice",
    "prior_prejudice_arguments",
    "prior_prejudice_cross_task",
    "prior_prejudice_negations",
    "prior_prejudice_probe",
]
