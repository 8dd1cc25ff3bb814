"""The embedded provider's log-probs (top-k per token, the generated token's own) and its one
copy of the weights, on a tiny random Llama built here (no weights file, seconds)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import torch
from inspect_ai.model import GenerateConfig, get_model
from tokenizers import Tokenizer
from tokenizers.models import WordLevel
from tokenizers.pre_tokenizers import Whitespace
from transformers import LlamaConfig, LlamaForCausalLM, LogitsProcessorList, PreTrainedTokenizerFast

from stancelab.core.embedded import api as embedded_api
from stancelab.core.embedded.logprobs import TopLogprobRecorder, logprobs_from_rows
from stancelab.core.embedded.model import EMBEDDED_MODEL
from stancelab.core.inspect_private import MODEL_INFO_LOOKUP_API_KEY

WORDS = ["<unk>", "<eos>", *(f"w{i}" for i in range(62))]
CHAT_TEMPLATE = "{% for m in messages %}{{ m['content'] }} {% endfor %}"


def tiny_model(seed: int = 0) -> LlamaForCausalLM:
    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=len(WORDS), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=1, eos_token_id=1, pad_token_id=1,
                         bos_token_id=None)  # fmt: skip
    return LlamaForCausalLM(config).eval()


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny model folder the embedded provider can load in place of SmolLM2."""
    folder = tmp_path_factory.mktemp("tiny-model")
    tiny_model().save_pretrained(folder)
    backend = Tokenizer(WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="<unk>"))
    backend.pre_tokenizer = Whitespace()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="<unk>", eos_token="<eos>",
                                        pad_token="<eos>", chat_template=CHAT_TEMPLATE)  # fmt: skip
    tokenizer.save_pretrained(folder)
    return folder


def recorded(sample: bool, top: int = 3, steps: int = 6) -> tuple[torch.Tensor, Any, int]:
    """The recorder's rows beside transformers' own raw logits of the same generation."""
    model = tiny_model()
    prompt = torch.tensor([[5, 9, 12], [7, 3, 20]])
    recorder = TopLogprobRecorder(top)
    torch.manual_seed(1)
    output = model.generate(input_ids=prompt, attention_mask=torch.ones_like(prompt), do_sample=sample,
                            max_new_tokens=steps, return_dict_in_generate=True,
                            output_logits=True, logits_processor=LogitsProcessorList([recorder]))  # fmt: skip
    return recorder.rows(output.sequences), output, prompt.shape[1]


@pytest.mark.parametrize("sample", [False, True])
def test_rows_hold_the_generated_token_and_the_top_k_of_the_model_distribution(
    sample: bool,
) -> None:
    rows, output, prompt_length = recorded(sample)
    reference = torch.log_softmax(torch.stack(output.logits, dim=1).double(), dim=-1)
    generated = output.sequences[:, prompt_length:]
    assert rows.shape == (2, generated.shape[1], 2 + 2 * 3)  # k columns, not the vocabulary
    assert torch.equal(rows[:, :, 0].long(), generated)
    expected = reference.gather(-1, generated.unsqueeze(-1)).squeeze(-1)
    assert torch.allclose(rows[:, :, 1], expected, atol=1e-5)
    top_values, top_ids = reference.topk(3, dim=-1)
    assert torch.equal(rows[:, :, 2:5].long(), top_ids)
    assert torch.allclose(rows[:, :, 5:], top_values, atol=1e-5)


def test_a_sampled_token_is_reported_with_its_own_log_prob_not_the_top_one() -> None:
    rows, _, _ = recorded(sample=True, top=1, steps=12)
    sampled_not_top = rows[:, :, 0] != rows[:, :, 2]
    assert sampled_not_top.any()  # a near-uniform tiny model rarely samples its top token
    assert torch.all(rows[:, :, 1][sampled_not_top] < rows[:, :, 3][sampled_not_top])


def test_logprobs_stop_at_the_first_stop_token() -> None:
    rows = [[5.0, -0.1, 5.0, -0.1], [1.0, -0.2, 1.0, -0.2], [1.0, -0.3, 1.0, -0.3]]
    logprobs = logprobs_from_rows(rows, lambda i: WORDS[i], stop_ids={1})
    assert [(p.token, p.logprob) for p in logprobs] == [("w3", -0.1)]
    assert [t.token for t in logprobs[0].top_logprobs or []] == ["w3"]


async def test_provider_shares_one_copy_and_never_asks_for_full_logits(model_dir: Path) -> None:
    embedded_api._loaded.clear()
    asked: list[dict[str, Any]] = []
    first = get_model(EMBEDDED_MODEL, role="grader", model_path=str(model_dir), memoize=False)
    model = first.api.model  # type: ignore[attr-defined]
    generate = model.generate

    def spy(*args: Any, **kwargs: Any) -> Any:
        asked.append(kwargs)
        return generate(*args, **kwargs)

    model.generate = spy
    config = GenerateConfig(max_tokens=5, temperature=1.0, logprobs=True, top_logprobs=4)
    second = get_model(
        EMBEDDED_MODEL, role="subject", config=config, model_path=str(model_dir), memoize=False
    )
    assert second.api.model is model and embedded_api.loaded_copies() == 1  # type: ignore[attr-defined]
    lookup = get_model(
        EMBEDDED_MODEL, api_key=MODEL_INFO_LOOKUP_API_KEY, model_path=str(model_dir), memoize=False
    )
    assert lookup.api.model is model and embedded_api.loaded_copies() == 1  # type: ignore[attr-defined]

    output = await second.generate("w1 w2 w3")
    assert asked and not any(k.get("output_logits") or k.get("output_scores") for k in asked)
    content = output.choices[0].logprobs.content  # type: ignore[union-attr]
    assert content and all(len(t.top_logprobs or []) == 4 for t in content)
    assert [t.token for t in content] == output.completion.split()[: len(content)]
    plain = await first.generate("w1 w2 w3", config=GenerateConfig(max_tokens=3, logprobs=False))
    assert plain.choices[0].logprobs is None


async def test_provider_generates_at_most_batch_size_prompts_at_once(model_dir: Path) -> None:
    embedded_api._loaded.clear()
    model = get_model(EMBEDDED_MODEL, model_path=str(model_dir), memoize=False)
    generate = model.api.model.generate  # type: ignore[attr-defined]
    rows: list[int] = []

    def spy(*args: Any, **kwargs: Any) -> Any:
        rows.append(int(kwargs["input_ids"].shape[0]))
        return generate(*args, **kwargs)

    model.api.model.generate = spy  # type: ignore[attr-defined]
    config = GenerateConfig(max_tokens=2)
    calls = embedded_api.BATCH_SIZE + 4  # more than one batch
    await asyncio.gather(*(model.generate(f"w{i} w2", config=config) for i in range(calls)))
    assert sum(rows) == calls and max(rows) <= embedded_api.BATCH_SIZE
