"""A run whose AUROCs are known in advance (issue 13, item 6)."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import pytest
from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput, get_model

from stancelab.conviction.run import ConvictionRun, run_conviction
from tests.conviction.scripting import (
    field,
    literal_reader,
    output_with_logprobs,
    write_statements,
)
from tests.helpers import scripted_chat_model

# statement -> (flips under the counter-argument, sampled answers, log-prob of each token)
PLAN = {
    "p1": (True, ["I agree.", "I disagree.", "I agree.", "I disagree."], -1.0),  # DSE ln 2
    "p2": (True, ["I agree."] * 4, -0.2),  # DSE 0
    "t1": (False, ["I agree."] * 4, -0.5),  # DSE 0
    "t2": (False, ["I agree."] * 3 + ["I disagree."], -0.1),  # DSE 0.56
}
TEXT = {statement: f"Statement {statement} is right." for statement in PLAN}
# every sampled answer has two tokens: PE = -2 * log-prob, normalised PE = -log-prob
# PE:  performative {2.0, 0.4} vs true {1.0, 0.2} -> 3 of 4 pairs ranked right: 0.75
# DSE: performative {ln 2, 0} vs true {0, 0.56} -> 1 + 1 + 0.5 (tie) + 0 of 4: 0.625; SE = DSE
EXPECTED = {"pe": 0.75, "pe_normalised": 0.75, "se": 0.625, "dse": 0.625}


def test_auroc_values_of_a_scripted_run(tmp_path: Path) -> None:
    drawn: Counter[str] = Counter()
    by_text = {text: statement for statement, text in TEXT.items()}

    def subject(messages: list[ChatMessage], tools: object, choice: object, config: GenerateConfig) -> ModelOutput:  # fmt: skip
        shown = field(messages, "Statement")
        if shown not in by_text:  # a counter-argument: performative stances give way
            flips = PLAN[next(s for s, t in TEXT.items() if t in shown)][0]
            return output_with_logprobs("I agree with that." if flips else "I disagree with that.", [-0.1])  # fmt: skip
        flips, answers, logprob = PLAN[by_text[shown]]
        if config.temperature != 1.0:
            return output_with_logprobs("I agree.", [-0.1, -0.1])
        index = drawn[shown]
        drawn[shown] += 1
        return output_with_logprobs(answers[index % len(answers)], [logprob, logprob])

    writer, _ = scripted_chat_model(
        lambda m: f"Not so: {field(m, 'Statement')} How can anyone think so when it fails?",
        "mockllm/writer",
    )
    reader, _ = scripted_chat_model(literal_reader, "mockllm/nli")
    statements = write_statements(tmp_path, [(s, t, 1) for s, t in TEXT.items()])
    run = ConvictionRun(models=[get_model("mockllm/subject", custom_outputs=subject, memoize=False)],
                        roles={"nli": reader, "writer": writer}, out_dir=tmp_path / "run",
                        statements_file=statements, samples=4, argument_sets=1)  # fmt: skip
    summary = run_conviction(run)

    assert summary["labels"]["mockllm/subject"]["original"]["PR"] == 0.5
    for model in ("mockllm/subject", "all"):
        measures = summary["auroc"][model]
        assert {m: measures[m]["value"] for m in EXPECTED} == pytest.approx(EXPECTED)
        assert all(measures[m]["n"] == 4 and measures[m]["performative"] == 2 for m in EXPECTED)
    uncertainty = (tmp_path / "run" / "tables" / "uncertainty.csv").read_text()
    assert str(round(math.log(2), 6)) in uncertainty
    saved = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert saved["auroc"]["all"]["dse"]["value"] == 0.625
