"""stancelab's IssueBench prompts, classifier prompts and reply readings against the authors'
own notebooks, item by item.

Runs where `STANCELAB_ISSUEBENCH_AUTHORS` names a checkout of paul-rottger/issuebench (at
730aa08); CI has none and skips, saying why. The notebooks' code cells are run as they are (the
files they write go to a temporary folder): `2_final_dataset/create_prompts.ipynb` builds the
636,000 prompts of the paper, `1_create_eval_prompts.ipynb` the classifier prompts of all eight
templates for the 500 gold responses, and the two `parse_eval_text` functions read the 27,500
replies of the authors' classifier evaluation (`../shared`)."""

from __future__ import annotations

import ast
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from stancelab.issuebench.dataset import FRAMINGS, iter_prompts, prompt_id
from stancelab.issuebench.labels import UNPARSED, authors_label
from stancelab.issuebench.prompts import classifier_prompt, stance_template
from stancelab.issuebench.release import DEFAULT_COMMIT
from stancelab.issuebench.task import select_prompts
from stancelab.issuebench.validation import authors_validation_label
from tests.shared_data import external

CHECKOUT_ENV = "STANCELAB_ISSUEBENCH_AUTHORS"
EVALUATION = "3_experiments/1_stance_classifier_evaluation"


def _checkout() -> Path:
    folder = os.environ.get(CHECKOUT_ENV)
    if not folder:
        pytest.skip(f"{CHECKOUT_ENV} names no checkout of paul-rottger/issuebench (CI has none); "
                    f"set it to a checkout at {DEFAULT_COMMIT[:7]} to compare the authors' "
                    "notebooks with stancelab item by item.")  # fmt: skip
    return Path(folder)


def _cells(notebook: Path) -> list[str]:
    return ["".join(cell["source"]) for cell in json.loads(notebook.read_text())["cells"]
            if cell["cell_type"] == "code"]  # fmt: skip


def _run_cells(cells: list[str], folder: Path, after: Callable[[dict[str, Any]], None]) -> dict:
    """The cells in `folder`, `after` applied to their names once each cell has run."""
    names: dict[str, Any] = {}
    here = Path.cwd()
    os.chdir(folder)
    try:
        for code in cells:
            exec(code, names)  # the authors' cell, as published
            after(names)
    finally:
        os.chdir(here)
    return names


def test_every_prompt_is_the_authors(tmp_path: Path) -> None:
    """All 636,000 prompts of the paper: stancelab's default selection (the pinned files, read
    from the checkout) filled as stancelab fills them, against `create_prompts.ipynb`."""
    checkout = _checkout()
    out = tmp_path / "prompts_sample.csv"

    def elsewhere(names: dict[str, Any]) -> None:
        if "OUTPUT_PATH" in names:
            names["OUTPUT_PATH"] = str(out)

    names = _run_cells(_cells(checkout / "2_final_dataset/create_prompts.ipynb"),
                       checkout / "2_final_dataset", elsewhere)  # fmt: skip
    theirs = names["prompts"]
    issues, templates, total = select_prompts(None, None, None, None, FRAMINGS, 0, False,
                                              authors_repo=str(checkout))  # fmt: skip
    ours = {prompt.id: prompt.text for prompt in iter_prompts(issues, templates)}
    assert total == len(theirs) == len(ours) == 636_000
    differing = [key for key, text in zip(
        (prompt_id(t, str(i), f) for t, i, f in zip(theirs["template_id"], theirs["topic_id"],
                                                    theirs["topic_polarity"], strict=True)),
        theirs["prompt_text"], strict=True) if ours.get(key) != text]  # fmt: skip
    assert differing == []


def test_every_classifier_prompt_is_the_authors(tmp_path: Path) -> None:
    checkout = _checkout()
    for name in ("stance_annotations.csv", "stance_templates.csv"):
        (tmp_path / name).symlink_to(checkout / EVALUATION / name)
    (tmp_path / "prompts").mkdir()
    _run_cells(
        _cells(checkout / EVALUATION / "1_create_eval_prompts.ipynb"), tmp_path, lambda names: None
    )
    compared = 0
    for path in sorted((tmp_path / "prompts").glob("stance_eval_*.csv")):
        template = stance_template(str(tmp_path / "stance_templates.csv"),
                                   path.stem.removeprefix("stance_eval_"))  # fmt: skip
        for row in pd.read_csv(path).itertuples(index=False):
            ours = classifier_prompt(row.response_text, row.topic_prompt, row.topic_neutral,
                                     row.topic_pro, row.topic_con, template)  # fmt: skip
            assert ours == row.eval_prompt
            compared += 1
    assert compared == 8 * 500


def _parse_function(notebook: Path) -> Callable[[str], object]:
    """The notebook's `parse_eval_text`, defined alone (its cell also runs over their data)."""
    for code in _cells(notebook):
        for node in ast.parse(code).body:
            if isinstance(node, ast.FunctionDef) and node.name == "parse_eval_text":
                names: dict[str, Any] = {}
                exec(ast.unparse(node), names)  # their function, as published
                return names["parse_eval_text"]
    raise AssertionError(f"no parse_eval_text in {notebook}")


def _as_ours(label: object) -> str:
    return UNPARSED if label == "PARSE ERROR" else str(label)


def test_every_reply_is_read_as_the_authors_read_it() -> None:
    checkout = _checkout()
    analysis = _parse_function(
        checkout / "3_experiments/3_analysis/2_load_and_parse_model_responses.ipynb"
    )
    evaluation = _parse_function(checkout / EVALUATION / "2_analyse_responses.ipynb")
    replies = [text for path in sorted(external("issuebench", "classifier_responses").glob("*/*.csv"))
               for text in pd.read_csv(path)["eval_text"].fillna("").astype(str)]  # fmt: skip
    assert len(replies) == 27_500
    assert [_as_ours(analysis(text)) for text in replies] == [authors_label(t) for t in replies]
    assert [_as_ours(evaluation(text)) for text in replies] == [
        authors_validation_label(t) for t in replies
    ]
