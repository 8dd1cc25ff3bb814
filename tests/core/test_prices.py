"""Prices from the maintained table (genai-prices), offline; `--price` the override; unknown
models unknown; batch prices from the table, else the provider's documented discount."""

from __future__ import annotations

import re
import socket
from typing import Any

import genai_prices
import pytest
from genai_prices import Usage, calc_price
from genai_prices.data import providers

from stancelab.cli import main
from stancelab.core.runs.prices import BATCH_CONTEXT, price_of, table_source

SOURCE = rf"genai-prices {re.escape(genai_prices.__version__)} \(data of \d{{4}}-\d\d-\d\d\)"


def _table_usd(model: str, input_tokens: int, output_tokens: int, batch: bool = False) -> float:
    """What the library itself charges for these tokens of an OpenAI model."""
    found = calc_price(Usage(input_tokens=input_tokens, output_tokens=output_tokens), model,
                       provider_id="openai", price_context=BATCH_CONTEXT if batch else None)  # fmt: skip
    return float(found.total_price)


def _openai_model(with_batch_price: bool) -> str:
    """A chat model of the table's OpenAI prices with (or without) a batch price of its own."""
    (openai,) = [provider for provider in providers if provider.id == "openai"]
    for model in openai.models:
        variants = [v for v in model.price_variants or () if v.when == BATCH_CONTEXT]
        if bool(variants) == with_batch_price and price_of(f"openai/{model.id}") is not None:
            return model.id
    raise AssertionError("no such model in the table")


def test_a_known_model_is_priced_from_the_table_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_network(*args: Any) -> None:
        raise AssertionError("prices must not be fetched")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    table_source.cache_clear()
    price = price_of("openai/gpt-4o-mini")
    assert price is not None and re.fullmatch(SOURCE, price.source)
    assert price.usd(2_000, 300) == pytest.approx(_table_usd("gpt-4o-mini", 2_000, 300))
    assert price.cached_input is not None and price.cached_input < price.input


def test_price_overrides_the_table_and_unknown_models_stay_unknown() -> None:
    override = price_of("openai/gpt-4o-mini", {"openai/gpt-4o-mini": (1.0, 2.0)})
    assert override is not None and override.source == "--price"
    assert override.usd(1e6, 1e6) == pytest.approx(3.0)
    for model in ("vllm/meta-llama/Llama-3.1-8B-Instruct", "openai/no-such-model-xyz",
                  "openai-api/nobody/x", "ollama/llama3"):  # fmt: skip
        assert price_of(model) is None, model
    assert price_of("embedded/smollm2").usd(1e6, 1e6) == 0  # type: ignore[union-attr]


def test_batch_price_from_the_table_else_the_documented_discount() -> None:
    with_table = _openai_model(with_batch_price=True)
    batched = price_of(f"openai/{with_table}", batch=True)
    assert batched is not None and batched.batch == "the genai-prices batch price"
    assert batched.usd(2_000, 300) == pytest.approx(_table_usd(with_table, 2_000, 300, batch=True))
    without = _openai_model(with_batch_price=False)
    standard, discounted = price_of(f"openai/{without}"), price_of(f"openai/{without}", batch=True)
    assert standard is not None and discounted is not None
    assert discounted.usd(2_000, 300) == pytest.approx(standard.usd(2_000, 300) / 2)
    assert "OpenAI's documented batch discount (50% off)" in str(discounted.batch)
    # OpenRouter: Inspect has no batch API for it, so a batch run pays the standard price
    routed = price_of("openrouter/openai/gpt-4o-mini", batch=True)
    assert routed is not None and "no batch API for OpenRouter" in str(routed.batch)
    assert routed.usd(1e6, 0) == price_of("openrouter/openai/gpt-4o-mini").usd(1e6, 0)  # type: ignore[union-attr]


def test_estimate_prints_dollars_with_the_price_source(capsys: pytest.CaptureFixture) -> None:
    code = main(["estimate", "millstone", "--model", "openai/gpt-4o-mini", "--model", "vllm/local",
                 "--limit", "1", "--prompts", "stancelab"])  # fmt: skip
    printed = capsys.readouterr().out
    assert code == 0
    assert re.search(rf"prices: openai/gpt-4o-mini: \$0?\.\d+ input, .* from {SOURCE}", printed)
    assert "prices: vllm/local: cost unknown" in printed and "cost unknown (give --price" in printed
    code = main(["estimate", "millstone", "--model", "openai/gpt-4o-mini", "--limit", "1",
                 "--prompts", "stancelab"])  # fmt: skip
    assert code == 0 and re.search(r"cost at most \$\d", capsys.readouterr().out)


def test_estimate_batch_shows_the_batch_price_and_the_rounds(capsys: pytest.CaptureFixture) -> None:
    code = main(["estimate", "even-handedness", "--model", "openai/gpt-4o-mini", "--limit", "1",
                 "--batch"])  # fmt: skip
    printed = capsys.readouterr().out
    assert code == 0
    batch, standard = re.search(r"cost at most \$([\d.]+) with --batch \(\$([\d.]+) without\)",
                                printed).groups()  # type: ignore[union-attr]  # fmt: skip
    assert float(batch) < float(standard)
    # the two answers one after another, then the grader's five grades
    assert "even_handedness: 7 (subject 2, grader 5)" in printed
    assert "batch turnaround: up to 7 x 24 h = 168 h" in printed
