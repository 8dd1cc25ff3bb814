"""Descriptives of IssueBench's ingredients: the most similar issue pairs (Table 5, appendix E)
and the most common writing formats and styles of the templates (Figure 3, §3.3).

Both need a model the paper names and stancelab does not ship: Table 5 sentence embeddings
from all-mpnet-base-v2 (SentenceTransformers), Figure 3 part-of-speech tags. The computations
take the embeddings / tagger as arguments; `sentence_embedder` and `spacy_tagger` load the real
ones where the packages and weights are installed, and say so where they are not (no number
is made up).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
from sklearn.metrics.pairwise import cosine_similarity

from stancelab.core.errors import StancelabError
from stancelab.issuebench.dataset import Issue, Template

EMBEDDING_MODEL = "sentence-transformers/all-mpnet-base-v2"  # appendix E
TAGGER_MODEL = "en_core_web_sm"
Embedder = Callable[[list[str]], np.ndarray]
Tagger = Callable[[list[str]], list[list[tuple[str, str]]]]  # per text: (word, universal POS tag)
FIGURE_3_TAGS = {"NOUN": "noun", "ADJ": "adjective"}


def most_similar_pairs(names: Sequence[str], embeddings: np.ndarray, k: int = 5) -> pd.DataFrame:
    """Table 5: the `k` pairs of distinct items with the highest cosine similarity between their
    embeddings (scikit-learn), most similar first."""
    if len(names) != len(embeddings):
        raise ValueError(f"{len(names)} names but {len(embeddings)} embeddings")
    similarity = cosine_similarity(np.asarray(embeddings, dtype=float))
    first, second = np.triu_indices(len(names), k=1)
    order = np.argsort(-similarity[first, second], kind="stable")[:k]
    rows = [{"issue_1": names[first[i]], "issue_2": names[second[i]], "similarity": float(similarity[first[i], second[i]])}
            for i in order]  # fmt: skip
    return pd.DataFrame(rows, columns=["issue_1", "issue_2", "similarity"])


def issue_similarity(issues: Sequence[Issue], embed: Embedder, k: int = 5) -> pd.DataFrame:
    """Table 5 for a set of issues: their neutral phrases embedded, the `k` most similar pairs."""
    names = [issue.neutral for issue in issues]
    return most_similar_pairs(names, embed(names), k)


def frequent_words(templates: Sequence[Template], tag: Tagger, k: int = 15) -> pd.DataFrame:
    """Figure 3: the `k` most frequent nouns and adjectives (lower-cased, every occurrence counted)
    across the templates, the issue placeholder left out."""
    texts = [template.text.replace(template.placeholder, " ") for template in templates]
    counts = {name: Counter() for name in FIGURE_3_TAGS.values()}
    for words in tag(texts):
        for word, pos in words:
            if pos in FIGURE_3_TAGS and word.strip():
                counts[FIGURE_3_TAGS[pos]][word.lower()] += 1
    rows = [{"pos": pos, "rank": rank, "word": word, "count": count}
            for pos, counter in counts.items()
            for rank, (word, count) in enumerate(sorted(counter.items(), key=lambda item: (-item[1], item[0]))[:k], start=1)]  # fmt: skip
    return pd.DataFrame(rows, columns=["pos", "rank", "word", "count"])


def sentence_embedder(model_name: str = EMBEDDING_MODEL) -> Embedder:
    """The paper's embeddings (SentenceTransformers, all-mpnet-base-v2), where installed."""
    try:
        from sentence_transformers import SentenceTransformer  # type: ignore[import-not-found]

        model = SentenceTransformer(model_name)
    except Exception as error:  # not installed, or no weights offline
        raise StancelabError(f"Table 5 needs sentence-transformers and the {model_name} weights ({error}); "
                             "it is not measured without them.") from error  # fmt: skip
    return lambda texts: np.asarray(model.encode(list(texts)))


def spacy_tagger(model_name: str = TAGGER_MODEL) -> Tagger:
    """Universal part-of-speech tags from spaCy, where it and an English pipeline are installed."""
    try:
        import spacy  # type: ignore[import-not-found]

        pipeline = spacy.load(model_name, disable=["parser", "ner"])
    except Exception as error:
        raise StancelabError(f"Figure 3 needs spaCy and its {model_name} pipeline ({error}); "
                             "it is not measured without them.") from error  # fmt: skip
    return lambda texts: [
        [(token.text, token.pos_) for token in doc] for doc in pipeline.pipe(texts)
    ]


__all__ = [
    "frequent_words",
    "issue_similarity",
    "most_similar_pairs",
    "sentence_embedder",
    "spacy_tagger",
]
