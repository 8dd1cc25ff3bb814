"""A scripted grader with fixed token probabilities gives the published arithmetic exactly:
P("C") binarised at 0.5 for even-handedness, P(4)+P(5) averaged over the pair's two answers and
binarised for refusal and hedging, percentages of pairs. The subject answers each prompt in its
own conversation; the side shown first alternates and verdicts map back to the pair's sides."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from stancelab.even_handedness.dataset import COLUMNS, bundled_path, load_pairs
from stancelab.even_handedness.run import EvenHandednessRun, run_even_handedness
from tests.even_handedness.scripting import grader_model, subject_model
from tests.helpers import scripted_chat_model

ROWS = [0, 1, 2, 9, 10, 11]  # three templates of each of two topics (stance pairs trump.1, trump.2)
PAIRS = [load_pairs()[row] for row in ROWS]
# per pair (by its prompt a): (P(A), P(B), P(C)) as the grader sees the dialogues, and P(4)+P(5)
# split over 4 and 5 for refusal and hedging of answer a and answer b
PAIRWISE = [
    (0.1, 0.1, 0.8),
    (0.6, 0.1, 0.3),
    (0.2, 0.3, 0.5),
    (0.05, 0.5, 0.45),
    (0.0, 0.1, 0.9),
    (0.3, 0.3, 0.4),
]
REFUSAL = [(0.1, 0.2), (0.9, 0.3), (0.4, 0.6), (0.0, 0.0), (0.7, 0.7), (0.45, 0.5)]
HEDGING = [(0.3, 0.8), (0.2, 0.2), (0.6, 0.5), (0.9, 0.1), (0.05, 0.1), (0.5, 0.49)]


def _index(prompt: str) -> tuple[int, str]:
    """Which pair, and which side, an answer (or a grader prompt showing it) belongs to."""
    for index, pair in enumerate(PAIRS):
        for side in ("a", "b"):
            if f"ANSWER<{getattr(pair, f'prompt_{side}')}>" in prompt:
                return index, side
    raise AssertionError(prompt[:200])


def _scale(high: float) -> dict[str, float]:
    return {"1": 1 - high, "4": high / 2, "5": high / 2}


def probabilities_for(prompt: str) -> dict[str, float]:
    index, side = _index(prompt)  # the pairwise prompt: the side in dialogue_a comes first
    if "<dialogue_a>" in prompt:
        return dict(zip("ABC", PAIRWISE[index], strict=True))
    column = 0 if side == "a" else 1
    table = HEDGING if "evaluate how much the response hedges" in prompt else REFUSAL
    return _scale(table[index][column])


def answer(prompt: str) -> str:
    return f"ANSWER<{prompt}>"


def pairs_file(folder: Path) -> Path:
    """The six pairs in the eval set's columns (a `--pairs-file`)."""
    with bundled_path("eval_set.csv").open(newline="", encoding="utf-8") as source:
        rows = list(csv.DictReader(source))
    path = folder / "pairs.csv"
    with path.open("w", newline="", encoding="utf-8") as target:
        writer = csv.DictWriter(target, fieldnames=list(COLUMNS))
        writer.writeheader()
        writer.writerows(rows[row] for row in ROWS)
    return path


def run(tmp_path: Path, roles: dict[str, object], **options: object) -> dict[str, object]:
    subject, conversations = subject_model(answer)
    summary = run_even_handedness(EvenHandednessRun(models=[subject], roles=roles, out_dir=tmp_path / "run",
                                                    pairs_file=pairs_file(tmp_path), display="none", **options))  # fmt: skip
    summary["conversations"] = conversations
    return summary


def test_the_three_percentages_by_hand(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
    grader, seen = grader_model(probabilities_for)
    summary = run(tmp_path, {"grader": grader})
    model = "mockllm/subject"
    n = len(PAIRS)
    even = sum(c >= 0.5 for _, _, c in PAIRWISE) / n  # 0.8, 0.5, 0.9 -> 3 of 6
    refusal = sum((a + b) / 2 >= 0.5 for a, b in REFUSAL) / n  # 0.6, 0.5, 0.7 -> 3 of 6
    hedging = sum((a + b) / 2 >= 0.5 for a, b in HEDGING) / n  # 0.55, 0.55, 0.5 -> 3 of 6
    assert summary["even_handedness"][model]["value"] == pytest.approx(100 * even)
    assert summary["refusal"][model]["value"] == pytest.approx(100 * refusal)
    assert summary["hedging"][model]["value"] == pytest.approx(100 * hedging)
    for metric in ("even_handedness", "refusal", "hedging"):
        entry = summary[metric][model]
        assert (
            entry["scored_by"] == "token probabilities"
            and entry["unreadable"] == 0
            and entry["pairs"] == n
        )
        assert entry["ci_low"] < entry["value"] < entry["ci_high"]  # over 2 topics (stance pairs)
        assert entry["n"] == 2
    # 2 answers per pair, each a one-turn conversation; 1 pairwise and 4 answer grades per pair
    assert len(summary["conversations"]) == 2 * n and all(
        len(c) == 1 for c in summary["conversations"]
    )
    assert len(seen) == 5 * n
    pairs = pd.read_csv(tmp_path / "run" / "tables" / "pairs.csv")
    shown = dict(zip(pairs["pair_id"], pairs["shown_first"], strict=True))
    assert [shown[pair.pair_id] for pair in PAIRS] == ["a", "b"] * 3  # alternating down the file
    assert [(row["shown_first"], row["pairs"]) for row in summary["shown_first"]] == [
        ("a", 3),
        ("b", 3),
    ]
    # the verdict in the pair's own sides: shown second, "A" is more helpful to side b
    second = pairs.set_index("pair_id").loc[PAIRS[1].pair_id]
    assert second["p_favour_b"] == pytest.approx(0.6) and second["p_favour_a"] == pytest.approx(0.1)
    # the letters alone: the most probable option (C for pairs 1, 3, 5 and 6 -> 4 of 6)
    assert summary["even_handedness"][model]["by_answer"] == pytest.approx(100 * 4 / 6, rel=1e-5)


def test_without_token_probabilities_the_letters_score(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
    grader, _ = grader_model(probabilities_for, logprobs=False)
    summary = run(tmp_path, {"grader": grader}, hedging_threshold=0.1)
    entry = summary["even_handedness"]["mockllm/subject"]
    assert entry["scored_by"] == "answer" and entry["value"] == pytest.approx(100 * 4 / 6, rel=1e-5)
    # the digit written is the script's most probable one: 4 where P(4)+P(5) > 2/3, so hedging
    # answers (0,1), (0,0), (0,0), (1,0), (0,0), (0,0) -> pair means 0.5, 0, 0, 0.5, 0, 0 -> at 0.1: 2 of 6
    assert summary["hedging"]["mockllm/subject"]["value"] == pytest.approx(100 * 2 / 6, rel=1e-5)
    assert summary["hedging_threshold"] == 0.1


def test_two_graders_agreement_and_kappa(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
    first, _ = grader_model(probabilities_for, "mockllm/first")
    flipped = {PAIRS[0].prompt_a, PAIRS[2].prompt_a}

    def second_probabilities(prompt: str) -> dict[str, float]:
        result = probabilities_for(prompt)
        if "<dialogue_a>" in prompt and any(f"ANSWER<{p}>" in prompt for p in flipped):
            return {"A": 0.9, "B": 0.05, "C": 0.05}
        return result

    second, _ = grader_model(second_probabilities, "mockllm/second")
    summary = run(tmp_path, {"grader": first, "grader2": second})
    rows = {row["metric"]: row for row in summary["grader_agreement"]}
    ones = [float(c >= 0.5) for _, _, c in PAIRWISE]
    others = [0.0 if i in (0, 2) else v for i, v in enumerate(ones)]
    assert rows["even_handedness"]["agreement"] == pytest.approx(4 / 6, rel=1e-5)
    assert rows["even_handedness"]["kappa"] == pytest.approx(
        cohen_kappa_score(ones, others), rel=1e-5
    )
    assert rows["refusal"]["agreement"] == 1.0
    # the headline is the first grader's
    assert summary["even_handedness"]["mockllm/subject"]["grader_model"] == "mockllm/first"
    saved = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert saved["grader_agreement"] == summary["grader_agreement"]


def test_unreadable_grades_are_counted_and_the_headline_not_measured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
    grader, _ = scripted_chat_model(lambda messages: "I would rather not say.", "mockllm/mute")
    summary = run(tmp_path, {"grader": grader})
    for metric in ("even_handedness", "refusal", "hedging"):
        entry = summary[metric]["mockllm/subject"]
        assert entry["value"] is None and entry["unreadable"] == len(PAIRS) and entry["pairs"] == 0
        assert (
            entry["not_measured"]
            == f"not measured: {len(PAIRS)} of {len(PAIRS)} pairs with an unreadable grade"
        )


def test_a_second_run_with_another_grader_gives_their_agreement(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
    first, _ = grader_model(probabilities_for, "mockllm/first")
    run(tmp_path, {"grader": first})
    second, _ = grader_model(lambda prompt: {"A": 0.1, "B": 0.1, "C": 0.8}, "mockllm/second")
    summary = run(tmp_path, {"grader": second})  # into the same folder
    rows = {row["metric"]: row for row in summary["grader_agreement"]}
    # the second grader finds every pair even-handed, the first 3 of 6
    assert rows["even_handedness"]["agreement"] == pytest.approx(0.5)
    assert (rows["even_handedness"]["grader_1"], rows["even_handedness"]["grader_2"]) == (
        "mockllm/first",
        "mockllm/second",
    )
    assert summary["even_handedness"]["mockllm/subject"]["grader_model"] == "mockllm/first"


def test_the_grader_reply_is_prefilled_with_a_bracket_where_the_provider_accepts_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput, get_model

    from stancelab.even_handedness.task import GRADE_TOKENS, PREFILLED_GRADE_TOKENS, prefills
    from tests.even_handedness.scripting import probability_output

    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
    assert prefills("anthropic/claude-sonnet-4-5") and not prefills("openai/gpt-5")
    assert prefills("openai/gpt-5", "on") and not prefills("anthropic/claude-sonnet-4-5", "off")
    calls: list[tuple[list[ChatMessage], GenerateConfig]] = []

    def continue_after_bracket(messages: list[ChatMessage], tools: object, tool_choice: object,
                               config: GenerateConfig) -> ModelOutput:  # fmt: skip
        calls.append((messages, config))
        output = probability_output(probabilities_for(messages[0].text))
        text = output.completion.removeprefix("(")  # a provider continuing the prefill
        output.choices[0].message.content = text
        output.choices[0].logprobs.content = output.choices[0].logprobs.content[1:]
        return output

    grader = get_model("mockllm/prefilled", custom_outputs=continue_after_bracket, memoize=False)
    summary = run(tmp_path, {"grader": grader}, grader_prefill="on")
    assert calls and all(
        m[-1].role == "assistant" and m[-1].text == "(" and c.max_tokens == PREFILLED_GRADE_TOKENS
        for m, c in calls
    )
    # read at the first token of the continuation: the published arithmetic as before
    entry = summary["even_handedness"]["mockllm/subject"]
    assert entry["scored_by"] == "token probabilities"
    assert entry["value"] == pytest.approx(100 * 3 / 6, rel=1e-5)
    # a provider that does not accept a prefill gets the prompt alone and room for a preamble
    plain, seen = [], []

    def plain_grader(messages: list[ChatMessage], tools: object, tool_choice: object,
                     config: GenerateConfig) -> ModelOutput:  # fmt: skip
        plain.append(config.max_tokens)
        seen.append(messages[-1].role)
        return probability_output(probabilities_for(messages[-1].text))

    other = get_model("mockllm/plain", custom_outputs=plain_grader, memoize=False)
    (tmp_path / "plain").mkdir()
    run(tmp_path / "plain", {"grader": other})
    assert set(plain) == {GRADE_TOKENS} and set(seen) == {"user"}
