"""The bundled eval set and prompts (CC BY 4.0, byte for byte), the mapping to the shared topics,
the grader-reply reader and the plan `stancelab estimate` prints."""

from __future__ import annotations

import importlib.util
import math
from collections import Counter
from pathlib import Path

import pytest
from inspect_ai.model import Logprob, TopLogprob

from stancelab.core.data.topics import load_topic_map
from stancelab.core.errors import DataFileError
from stancelab.even_handedness.dataset import TOPIC_MAP, bundled_path, load_pairs, run_pairs
from stancelab.even_handedness.estimate import plan
from stancelab.even_handedness.grading import (
    EVEN,
    HIGH,
    PAIRWISE_OPTIONS,
    SCALE_OPTIONS,
    read_grade,
)
from stancelab.even_handedness.prompts import grader_prompt, pairwise_prompt
from stancelab.even_handedness.run import EvenHandednessRun
from tests.shared_data import external


def test_the_bundled_set_is_the_release() -> None:
    release = external("even-handedness")
    assert bundled_path("eval_set.csv").read_bytes() == (release / "eval_set.csv").read_bytes()
    assert bundled_path("LICENSE").read_bytes() == (release / "LICENSE").read_bytes()
    spec = importlib.util.spec_from_file_location("release_prompts", release / "prompts.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert grader_prompt("even_handedness") == module.EVEN_HANDEDNESS_PROMPT
    assert grader_prompt("refusal") == module.REFUSAL_PROMPT
    assert grader_prompt("hedging") == module.HEDGING_PROMPT
    assert "CC BY 4.0" in bundled_path("NOTICE.md").read_text()


def test_pairs_topics_and_categories() -> None:
    pairs = load_pairs()
    assert len(pairs) == 1350 and len({p.pair_id for p in pairs}) == 1350
    assert (
        len({p.stance_pair_id for p in pairs}) == 150 and len({p.topic_name for p in pairs}) == 60
    )
    assert len({p.main_category for p in pairs}) == 7
    categories = Counter(p.template_category for p in pairs)
    assert categories["reasoning"] == 450 and all(
        count == 150 for name, count in categories.items() if name != "reasoning"
    )
    mapping = load_topic_map(bundled_path(TOPIC_MAP))
    assert set(mapping) == {p.stance_pair_id for p in pairs}  # every stance pair listed once
    tagged = {p.shared_topic for p in pairs if p.shared_topic}
    assert {"abortion", "immigration", "gun-control", "universal-healthcare"} <= tagged
    abortion = run_pairs(None, "abortion", 2)
    assert [p.pair_id for p in abortion] == ["abortion.1.1", "abortion.2.1"]  # spread over topics
    assert [p.pair_id for p in run_pairs(None, "", 2)] == ["trump.1.1", "trump.2.1"]
    assert all(p.orientation == 1 for p in abortion)


def test_a_bad_pairs_file_names_its_line(tmp_path: Path) -> None:
    text = bundled_path("eval_set.csv").read_text(encoding="utf-8").splitlines()
    bad = tmp_path / "pairs.csv"
    bad.write_text("\n".join([text[0], text[1], text[2].replace(",True,", ",maybe,", 1)]) + "\n")
    with pytest.raises(DataFileError, match=r"line 3.*partisan"):
        load_pairs(bad)


def _positions(tokens: list[tuple[str, dict[str, float]]]) -> list[Logprob]:
    return [Logprob(token=token, logprob=math.log(max(top.values())),
                    top_logprobs=[TopLogprob(token=t, logprob=math.log(p)) for t, p in top.items()])
            for token, top in tokens]  # fmt: skip


def test_reading_a_grade() -> None:
    # token probabilities at the option's token; BPE tokens carry a space marker
    positions = _positions(
        [("Ġ(", {"Ġ(": 1.0}), ("C", {"C": 0.6, "A": 0.3, "ĠC": 0.05}), (")", {")": 1.0})]
    )
    grade = read_grade(" (C)", positions, PAIRWISE_OPTIONS)
    assert grade.source == "logprobs" and grade.answer == "C"
    assert grade.probability(EVEN) == pytest.approx(0.65) and grade.option_mass == pytest.approx(
        0.95
    )
    # no log-probs: the letter or digit written
    assert read_grade("The answer is (B)", None, PAIRWISE_OPTIONS).probability(EVEN) == 0.0
    digit = read_grade("(4) Helpful Non-Compliance", None, SCALE_OPTIONS)
    assert (
        digit.source == "answer" and digit.probability(HIGH) == 1.0 and digit.answered(HIGH) == 1.0
    )
    # nothing readable is counted as such
    assert read_grade("I cannot judge this.", None, PAIRWISE_OPTIONS).source == "none"


def test_dialogues_are_written_with_the_prompts_tags() -> None:
    prompt = pairwise_prompt(("Argue X", "X!", "pro_x"), ("Argue not X", "Not X!", "anti_x"))
    assert "<dialogue_a>\n[H] Argue X\n[A] X!\n</dialogue_a>" in prompt
    assert "another interest group (anti_x)" in prompt


def test_estimate_plans_the_whole_set() -> None:
    planned = {
        (p.task, p.role): p for p in plan(EvenHandednessRun(models=["embedded"], out_dir=Path("x")))
    }
    assert planned[("even_handedness", "subject")].calls_max == 2700
    assert (
        planned[("even_handedness", "grader")].calls_max == 1350 + 5400
    )  # pairwise, refusal and hedging
    two = plan(
        EvenHandednessRun(
            models=["embedded"], out_dir=Path("x"), roles={"grader2": "mockllm/g"}, limit=2
        )
    )
    assert sum(p.calls_max for p in two if p.role == "grader2") == 10


def test_an_option_after_a_preamble_is_read_by_its_letter_not_its_token_probability() -> None:
    # the grader reasons first, then writes "(C)": the token probability there is conditional
    # on its own preamble, not its distribution over the options; its letter counts instead
    positions = _positions(
        [("The", {"The": 1.0}), ("Ġanswer", {"Ġanswer": 1.0}), ("Ġis", {"Ġis": 1.0}),
         ("Ġ(", {"Ġ(": 1.0}), ("C", {"C": 0.4, "A": 0.6}), (")", {")": 1.0})]
    )  # fmt: skip
    grade = read_grade("The answer is (C)", positions, PAIRWISE_OPTIONS)
    assert (grade.source, grade.answer, grade.preamble) == ("answer", "C", True)
    assert grade.probability(EVEN) == 1.0
    # after the "(" prefill the option is the reply's first token: its probabilities count
    prefilled = read_grade("C) same", _positions([("C", {"C": 0.4, "A": 0.6}), (")", {")": 1.0}),
                                                   ("Ġsame", {"Ġsame": 1.0})]), PAIRWISE_OPTIONS)  # fmt: skip
    assert (prefilled.source, prefilled.preamble) == ("logprobs", False)
    assert prefilled.probability(EVEN) == pytest.approx(0.4)
    assert read_grade("**(4)** Helpful", None, SCALE_OPTIONS).preamble is False
