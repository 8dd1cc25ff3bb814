"""Table 5 (most similar issue pairs) and Figure 3 (most common formats and styles): the
computations on given embeddings / tags; the paper's models are optional (see the module)."""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest

from stancelab.core.errors import StancelabError
from stancelab.issuebench.dataset import Template, load_issues
from stancelab.issuebench.descriptives import (
    frequent_words,
    issue_similarity,
    most_similar_pairs,
    sentence_embedder,
    spacy_tagger,
)
from tests.shared_data import external

# Table 5 as printed (appendix E).
TABLE_5 = [("political corruption", "government corruption", 0.90), ("the French Revolution", "the American Revolution", 0.86),
           ("the ethics of the death penalty", "the ethics of killing someone", 0.84), ("the Soviet Union", "the Cold War", 0.78),
           ("environmental sustainability", "environmental protection", 0.76)]  # fmt: skip


def _pair_embeddings() -> tuple[list[str], np.ndarray]:
    """Ten unit vectors whose only non-zero cosines are Table 5's five, one per pair."""
    names, vectors = [], []
    for index, (first, second, similarity) in enumerate(TABLE_5):
        u, v = np.zeros(10), np.zeros(10)
        u[2 * index] = 1.0
        v[2 * index], v[2 * index + 1] = similarity, np.sqrt(1 - similarity**2)
        names += [first, second]
        vectors += [u, v]
    order = [9, 2, 5, 0, 7, 4, 1, 8, 3, 6]  # shuffled, so the ranking is the function's
    return [names[i] for i in order], np.array([vectors[i] for i in order])


def test_table_5_ranks_pairs_by_cosine_similarity() -> None:
    names, embeddings = _pair_embeddings()
    table = most_similar_pairs(names, embeddings, k=5)
    got = [({row.issue_1, row.issue_2}, round(row.similarity, 2)) for row in table.itertuples()]
    assert got == [({first, second}, similarity) for first, second, similarity in TABLE_5]
    assert len(most_similar_pairs(names, embeddings, k=45)) == 45  # every pair of ten


def test_figure_3_counts_nouns_and_adjectives_without_the_placeholder() -> None:
    templates = [Template(id="a", text="write a short essay about [ISSUE]"),
                 Template(id="b", text="Write a long Essay on [ISSUE], short please"),
                 Template(id="c", text="a clear story about [ISSUE]")]  # fmt: skip
    tags = {
        "essay": "NOUN",
        "story": "NOUN",
        "short": "ADJ",
        "long": "ADJ",
        "clear": "ADJ",
        "issue": "NOUN",
    }

    def tag(texts: list[str]) -> list[list[tuple[str, str]]]:
        return [
            [(word, tags.get(word.lower().strip(","), "X")) for word in text.split()]
            for text in texts
        ]

    table = frequent_words(templates, tag, k=2)
    nouns = table[table["pos"] == "noun"]
    assert nouns[["word", "count"]].values.tolist() == [["essay", 2], ["story", 1]]  # no "[ISSUE]"
    adjectives = table[table["pos"] == "adjective"]
    assert adjectives["word"].tolist() == ["short", "clear"]  # count 2, then ties by word


def test_without_the_papers_models_the_figures_say_they_are_not_measured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    monkeypatch.setitem(sys.modules, "spacy", None)
    with pytest.raises(StancelabError, match="not measured"):
        sentence_embedder()
    with pytest.raises(StancelabError, match="not measured"):
        spacy_tagger()


def test_table_5_on_the_authors_issues_with_the_papers_embeddings() -> None:
    issues = load_issues(external("issuebench", "issues.csv"))
    phrases = {issue.neutral for issue in issues}
    assert all(
        {first, second} <= phrases for first, second, _ in TABLE_5
    )  # Table 5 names authors' issues
    try:
        embed = sentence_embedder()
    except StancelabError as error:
        pytest.skip(str(error))
    table = issue_similarity(issues, embed)
    assert isinstance(table, pd.DataFrame)
    got = [({row.issue_1, row.issue_2}, round(row.similarity, 2)) for row in table.itertuples()]
    assert got == [({first, second}, similarity) for first, second, similarity in TABLE_5]
