"""Top-k log-probs for the embedded model, recorded while it generates.

Inspect's `hf` provider asks transformers for the raw logits of every generated token
(`output_logits`), stacks them and takes a log-softmax over the whole vocabulary: three
copies of batch x tokens x 49,152 floats, several GB for a batch of 200-token answers. Here a
logits processor keeps, per step, only the log-prob of the token that was generated and the
top k alternatives; one step's full distribution is held at a time.

The records reach the provider through the per-sample `hidden_states` slot of Inspect's batch
thread (`_generate_batch` slices it by sample and turns it into lists), as one float64 matrix
per sample: a row per generated token, `[token id, log-prob, k alternative ids, k log-probs]`.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from types import SimpleNamespace
from typing import Any

import torch
from inspect_ai.model import Logprob, TopLogprob
from transformers import LogitsProcessor, LogitsProcessorList


class TopLogprobRecorder(LogitsProcessor):
    """Records each step's top-k log-probs and the generated token's log-prob.

    It must see the model's own distribution, so it is the only processor passed to
    `generate` (transformers applies temperature, top-k and top-p after custom processors).
    """

    def __init__(self, top_logprobs: int) -> None:
        self.top_logprobs = top_logprobs
        self.prompt_length: int | None = None
        self.top_values: list[torch.Tensor] = []
        self.top_ids: list[torch.Tensor] = []
        self.chosen: list[torch.Tensor] = []
        self._last_step: torch.Tensor | None = None

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        if self.prompt_length is None:
            self.prompt_length = int(input_ids.shape[1])
        elif self._last_step is not None:  # the token chosen at the previous step is known now
            self.chosen.append(self._last_step.gather(1, input_ids[:, -1:]).squeeze(1))
        logprobs = torch.log_softmax(scores.float(), dim=-1)
        values, ids = logprobs.topk(self.top_logprobs, dim=-1)
        self.top_values.append(values)
        self.top_ids.append(ids)
        self._last_step = logprobs
        return scores

    def rows(self, sequences: torch.Tensor) -> torch.Tensor:
        """batch x generated tokens x (2 + 2k): token id, its log-prob, top ids, top log-probs."""
        if self.prompt_length is None:  # nothing was generated
            return torch.zeros(
                (sequences.shape[0], 0, 2 + 2 * self.top_logprobs), dtype=torch.float64
            )
        generated = sequences[:, self.prompt_length :]
        steps = int(generated.shape[1])
        chosen = list(self.chosen[:steps])
        if len(chosen) < steps and self._last_step is not None:
            chosen.append(
                self._last_step.gather(1, generated[:, len(chosen) : len(chosen) + 1]).squeeze(1)
            )
        self._last_step = None
        columns = [
            generated.to(torch.float64).unsqueeze(-1),
            torch.stack(chosen, dim=1).to(torch.float64).unsqueeze(-1),
            torch.stack(self.top_ids[:steps], dim=1).to(torch.float64),
            torch.stack(self.top_values[:steps], dim=1).to(torch.float64),
        ]
        return torch.cat(columns, dim=-1)


def generate_with_top_logprobs(model: Any, top_logprobs: int, **kwargs: Any) -> SimpleNamespace:
    """`model.generate` with top-k log-probs recorded: the result Inspect's batch thread reads
    (`sequences`, no `logits`, the records as `hidden_states`)."""
    recorder = TopLogprobRecorder(top_logprobs)
    output = model.generate(logits_processor=LogitsProcessorList([recorder]), **kwargs)
    # one "step" of one "layer" whose first dimension is the batch: Inspect slices it per sample
    return SimpleNamespace(sequences=output.sequences, logits=None,
                           hidden_states=((recorder.rows(output.sequences),),))  # fmt: skip


def logprobs_from_rows(
    rows: Sequence[Sequence[float]], convert_ids_to_tokens: Any, stop_ids: Collection[int]
) -> list[Logprob]:
    """Inspect `Logprob`s of one sample's records, up to (not including) its first stop token:
    the rest of a batch row is padding. Token strings as Inspect's `hf` provider gives them."""
    logprobs: list[Logprob] = []
    for row in rows:
        token_id, logprob = int(row[0]), float(row[1])
        if token_id in stop_ids:
            break
        k = (len(row) - 2) // 2
        top = [_top_logprob(convert_ids_to_tokens(int(i)), float(v)) for i, v in zip(row[2 : 2 + k], row[2 + k :], strict=True)]  # fmt: skip
        token = convert_ids_to_tokens(token_id)
        logprobs.append(
            Logprob(token=token, logprob=logprob, bytes=list(map(ord, token)), top_logprobs=top)
        )
    return logprobs


def _top_logprob(token: str, logprob: float) -> TopLogprob:
    return TopLogprob(token=token, logprob=logprob, bytes=list(map(ord, token)))
