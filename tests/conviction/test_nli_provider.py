"""The `nli` provider: a local sequence-classification NLI model in the `nli` role (issue 13,
item 4). The models here are tiny random BERTs whose classifier is set to one answer."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import torch
from inspect_ai.model import get_model
from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

from stancelab.conviction.nli import label_names, nli_question
from stancelab.conviction.prompts import AGREEMENT, ENTAILMENT
from stancelab.conviction.run import ConvictionRun, run_conviction
from tests.conviction.scripting import write_statements
from tests.helpers import scripted_chat_model

WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "i", "agree", "disagree", "markets", "are", "fair", "."]  # fmt: skip
MNLI_ORDER = {0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"}  # roberta/bart-large-mnli
OTHER_ORDER = {0: "entailment", 1: "neutral", 2: "contradiction"}  # e.g. MoritzLaurer's DeBERTa


def tiny_nli(folder: Path, id2label: dict[int, str], winner: str) -> Path:
    """Save a tiny BERT NLI model whose classifier always prefers class `winner`."""
    folder.mkdir(parents=True)
    (folder / "vocab.txt").write_text("\n".join(WORDS) + "\n")
    config = BertConfig(vocab_size=len(WORDS), hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=16, max_position_embeddings=64, id2label=id2label,
                        label2id={name: index for index, name in id2label.items()})  # fmt: skip
    model = BertForSequenceClassification(config)
    winning = next(index for index, name in id2label.items() if name.lower() == winner)
    with torch.no_grad():
        model.classifier.weight.zero_()
        model.classifier.bias.copy_(torch.tensor([4.0 if i == winning else 0.0 for i in range(len(id2label))]))  # fmt: skip
    model.save_pretrained(folder)
    BertTokenizer(str(folder / "vocab.txt")).save_pretrained(folder)
    return folder


def test_questions_parse_back_into_premise_and_hypothesis() -> None:
    response = "I agree.\n\nMarkets are fair, mostly."
    assert nli_question(AGREEMENT.format(statement="Markets are fair.", response=response)) == (
        "agreement", response, "Markets are fair.",
    )  # fmt: skip
    assert nli_question(ENTAILMENT.format(premise="A\nB", hypothesis="C")) == ("entailment", "A\nB", "C")  # fmt: skip
    with pytest.raises(ValueError, match="agreement and entailment"):
        nli_question("Rate this argument from 1 to 7.")


def test_label_names_are_read_by_name() -> None:
    assert label_names(MNLI_ORDER) == {0: "contradiction", 1: "neutral", 2: "entailment"}
    assert label_names({0: "entailment", 1: "not_entailment", 2: "contradiction"})[1] == "neutral"
    with pytest.raises(ValueError, match="entailment and contradiction"):
        label_names({0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"})


@pytest.mark.parametrize("id2label", [MNLI_ORDER, OTHER_ORDER])
@pytest.mark.parametrize(
    ("winner", "agreement", "entailment"),
    [("entailment", "agree", "entailment"), ("contradiction", "disagree", "contradiction"),
     ("neutral", "unclear", "neutral")],
)  # fmt: skip
async def test_provider_answers_the_roles_questions(
    tmp_path: Path, id2label: dict[int, str], winner: str, agreement: str, entailment: str
) -> None:
    model = get_model(f"nli/{tiny_nli(tmp_path / 'nli', id2label, winner)}")
    read = await model.generate(AGREEMENT.format(statement="markets are fair .", response="i agree ."))  # fmt: skip
    assert read.completion == agreement
    assert read.usage is not None and read.usage.input_tokens == 10  # [CLS] 3 [SEP] 4 [SEP]
    probabilities = (read.metadata or {})["nli"]
    assert max(probabilities, key=probabilities.get) == winner
    assert sum(probabilities.values()) == pytest.approx(1.0)
    same = await model.generate(ENTAILMENT.format(premise="i agree .", hypothesis="i agree ."))
    assert same.completion == entailment


def test_provider_refuses_a_folder_that_is_not_there(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="local folder"):
        get_model(f"nli/{tmp_path / 'missing'}")


def test_conviction_runs_with_the_nli_provider_in_the_nli_role(tmp_path: Path) -> None:
    """An entailment-only reader: every answer agrees with what it responds to, so the subject
    agrees with the statements and then with every counter-argument (performative), and its
    sampled answers all mean the same (one cluster)."""
    nli = get_model(f"nli/{tiny_nli(tmp_path / 'nli', MNLI_ORDER, 'entailment')}")
    subject, _ = scripted_chat_model(lambda m: "i agree .", "mockllm/subject")
    writer, _ = scripted_chat_model(lambda m: "How can anyone think so?", "mockllm/writer")
    statements = write_statements(
        tmp_path, [("r", "markets are fair .", 1), ("l", "i agree .", -1)]
    )
    run = ConvictionRun(models=[subject], roles={"nli": nli, "writer": writer}, out_dir=tmp_path / "run",
                        statements_file=statements, samples=3, argument_sets=1)  # fmt: skip
    summary = run_conviction(run)
    original = summary["labels"]["mockllm/subject"]["original"]
    assert (original["PR"], original["PL"], original["unclear"]) == (0.5, 0.5, 0.0)
    uncertainty = pd.read_csv(tmp_path / "run" / "tables" / "uncertainty.csv")
    assert uncertainty["clusters"].tolist() == [1, 1]
