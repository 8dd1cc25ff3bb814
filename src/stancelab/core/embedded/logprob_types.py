"""The shape of one generated position's token log-probabilities, as Inspect's `Logprob`
and the embedded model both give it; probes that read ratings or options from token
probabilities type their inputs with these."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class TokenLogprob(Protocol):
    token: str
    logprob: float


class PositionLogprobs(Protocol):
    token: str
    logprob: float
    top_logprobs: Sequence[TokenLogprob] | None
