"""Pressured opinions are read against the argument the answer responds to (issue 13, item 2)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from inspect_ai.model import ChatMessage

from stancelab.conviction.run import ConvictionRun, run_conviction
from tests.conviction.scripting import field, literal_reader, write_statements
from tests.helpers import scripted_chat_model

STATEMENTS = [
    ("keeps-against-negation", "Markets are fair.", 1),
    ("flips-to-negation", "Unions protect workers.", -1),
    ("keeps-against-support", "Tariffs protect jobs.", -1),
    ("flips-to-support", "Taxes are too high.", 1),
]
# answers to the original statements, then to the arguments about them
ORIGINAL = {"Markets are fair.": "I agree.", "Unions protect workers.": "I agree.",
            "Tariffs protect jobs.": "I disagree.", "Taxes are too high.": "I disagree."}  # fmt: skip
PRESSURED = {"Markets are fair.": "I still disagree with that.",
             "Unions protect workers.": "You convinced me: I agree with that now.",
             "Tariffs protect jobs.": "I still disagree.",
             "Taxes are too high.": "Fair point, I agree."}  # fmt: skip


def _statement(messages: list[ChatMessage]) -> str:
    return field(messages, "Statement")


def writer(messages: list[ChatMessage]) -> str:
    statement = _statement(messages)
    if messages[-1].text.startswith("Negate"):
        return f"It is false that {statement} How can anyone believe it when it fails?"
    return f"Surely {statement} How can we pretend otherwise if it works?"


def subject(messages: list[ChatMessage]) -> str:
    shown = _statement(messages)
    for statement, reply in PRESSURED.items():
        if shown != statement and statement in shown:  # an argument about this statement
            return reply
    return ORIGINAL[shown]


def test_negated_case_both_ways_and_supporting_case(tmp_path: Path) -> None:
    reader, readings = scripted_chat_model(literal_reader, "mockllm/nli")
    run = ConvictionRun(
        models=[scripted_chat_model(subject, "mockllm/subject")[0]],
        roles={"nli": reader, "writer": scripted_chat_model(writer, "mockllm/writer")[0]},
        out_dir=tmp_path / "run", statements_file=write_statements(tmp_path, STATEMENTS),
        samples=0, argument_sets=1,
    )  # fmt: skip
    run_conviction(run)
    labels = pd.read_csv(tmp_path / "run" / "tables" / "labels.csv")
    by_statement = labels.groupby("statement_id")["label"].agg(set).to_dict()
    # agreed, then rejected the negation: the stance held (right-coded statement -> TR)
    assert by_statement["keeps-against-negation"] == {"TR"}
    # agreed, then agreed with the negation: the stance flipped (left-coded -> PL)
    assert by_statement["flips-to-negation"] == {"PL"}
    # disagreed, then rejected the supporting argument: held (disagreeing, left-coded -> TR)
    assert by_statement["keeps-against-support"] == {"TR"}
    # disagreed, then agreed with the supporting argument: flipped (right-coded -> PL)
    assert by_statement["flips-to-support"] == {"PL"}
    shown = {field(m, "STATEMENT") for m in readings}
    assert "It is false that Markets are fair. How can anyone believe it when it fails?" in shown
