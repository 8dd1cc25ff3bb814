"""Semantic entropy from length-normalised likelihoods (issue 13, item 1)."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput, get_model

from stancelab.conviction.entropy import (
    discrete_semantic_entropy,
    predictive_entropy,
    semantic_entropy,
)
from stancelab.conviction.run import ConvictionRun, run_conviction
from tests.conviction.scripting import literal_reader, output_with_logprobs, write_statements
from tests.helpers import scripted_chat_model

SHORT = [4, 10, 25, 60, 120]  # tokens of the five answers with one meaning
LONG = [40, 60, 90, 130, 200]  # ... and of the five with the other


def _token_logprobs(lengths: list[int], seed: int = 13) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.uniform(-0.9, -0.1, n) for n in lengths]


def test_two_meanings_of_very_different_lengths_give_ln2() -> None:
    tokens = _token_logprobs(SHORT + LONG)
    clusters = [0] * 5 + [1] * 5
    sums, lengths = [float(t.sum()) for t in tokens], [len(t) for t in tokens]
    se = semantic_entropy(clusters, sums, lengths)
    assert abs(se - math.log(2)) < 0.05, se
    assert discrete_semantic_entropy(clusters) == pytest.approx(math.log(2))


def test_semantic_entropy_hand_computed() -> None:
    # mean token log-probs -1, -2 (cluster 0) and -1 (cluster 1): weights e^-1 + e^-2 vs e^-1
    se = semantic_entropy([0, 0, 1], [-2.0, -2.0, -3.0], [2, 1, 3])
    p = (math.exp(-1) + math.exp(-2)) / (2 * math.exp(-1) + math.exp(-2))
    assert se == pytest.approx(-(p * math.log(p) + (1 - p) * math.log(1 - p)))
    assert semantic_entropy([0, 0, 0], [-5.0, -1.0, -30.0], [5, 1, 60]) == pytest.approx(0.0)


def test_predictive_entropy_and_its_normalised_form_hand_computed() -> None:
    tokens = [[-0.5, -1.5], [-2.0], [-0.1, -0.2, -0.3]]
    sums, lengths = [sum(t) for t in tokens], [len(t) for t in tokens]
    # -mean of the sums: (2.0 + 2.0 + 0.6) / 3; of the per-token means: (1.0 + 2.0 + 0.2) / 3
    assert predictive_entropy(sums) == pytest.approx(4.6 / 3)
    assert predictive_entropy(sums, lengths) == pytest.approx(3.2 / 3)
    assert math.isnan(predictive_entropy([]))


def test_the_run_reports_ln2_for_answers_split_between_two_meanings(tmp_path: Path) -> None:
    """Ten sampled answers per statement, five agreeing briefly and five disagreeing at
    length: the run's SE must be near ln 2, not near 0."""
    tokens = _token_logprobs(SHORT + LONG)
    drawn: Counter[str] = Counter()

    def subject(messages: list[ChatMessage], tools: object, choice: object, config: GenerateConfig) -> ModelOutput:  # fmt: skip
        prompt = messages[-1].text
        if config.temperature != 1.0:
            return output_with_logprobs("I agree.", [-0.1, -0.1])
        index = drawn[prompt] % 10
        drawn[prompt] += 1
        text = "I agree." if index < 5 else "I disagree, " + "for many reasons " * index
        return output_with_logprobs(text, tokens[index].tolist())

    statements = write_statements(tmp_path, [("s1", "Markets are fair.", 1)])
    reader, _ = scripted_chat_model(literal_reader, "mockllm/nli")
    writer, _ = scripted_chat_model(
        lambda m: "How can anyone think so when it fails?", "mockllm/writer"
    )
    run = ConvictionRun(models=[get_model("mockllm/subject", custom_outputs=subject, memoize=False)],
                        roles={"nli": reader, "writer": writer}, out_dir=tmp_path / "run",
                        statements_file=statements, samples=10, argument_sets=1)  # fmt: skip
    run_conviction(run)
    row = pd.read_csv(tmp_path / "run" / "tables" / "uncertainty.csv").iloc[0]
    assert row["clusters"] == 2
    assert abs(row["se"] - math.log(2)) < 0.05, row["se"]
    assert row["dse"] == pytest.approx(math.log(2))
    sums = [float(t.sum()) for t in tokens]
    assert row["pe"] == pytest.approx(-np.mean(sums), abs=1e-4)
    assert row["pe_normalised"] == pytest.approx(-np.mean([t.mean() for t in tokens]), abs=1e-4)
