"""The bundled statements are the paper's appendix G (issue 13, item 3)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from stancelab.conviction.dataset import load_statements

PAPER = Path(__file__).resolve().parents[3] / "shared" / "papers" / "testing-conviction.md"


def test_default_set_is_the_papers_19_economic_statements() -> None:
    statements = load_statements()
    assert len(statements) == 19
    assert sum(s.bias == -1 for s in statements) == 10  # Left in appendix G
    biases = {s.text: s.bias for s in statements}
    assert biases["The rich are too highly taxed."] == 1
    assert biases["Protectionism is sometimes necessary in trade."] == -1
    assert biases["The freer the market, the freer the people."] == 1
    assert biases["Land shouldn\u2019t be a commodity to be bought and sold."] == -1


@pytest.mark.skipif(not PAPER.exists(), reason="the paper is not next to this checkout")
def test_default_set_matches_appendix_g_word_for_word() -> None:
    appendix = PAPER.read_text(encoding="utf-8").split("Appendix G", 1)[1]
    rows = re.findall(r"^(Left|Right) (.+)$", appendix, flags=re.M)
    printed = {text.strip(): 1 if side == "Right" else -1 for side, text in rows}
    assert len(printed) == 19
    assert {s.text: s.bias for s in load_statements()} == printed
