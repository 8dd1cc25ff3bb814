"""The six argument cases of MillStone, as the authors' released results name them.

Every analysis pools a case's draws, templates, wordings and trials: `neither`
(no arguments), `pro` and `con` (one-sided), `75pro` and `75con` (clear and
convincing, 3:1) and `all` (balanced). The weights are eq. (1)'s: 1 one-sided,
2 clear and convincing, 3 balanced; they sum to 9, the paper's divisor.
"""

from __future__ import annotations

from typing import Literal

Case = Literal["neither", "pro", "con", "75pro", "75con", "all"]
CASES: tuple[Case, ...] = ("neither", "pro", "con", "75pro", "75con", "all")
BASELINE: Case = "neither"
ARGUMENT_CASES: tuple[Case, ...] = CASES[1:]
CASE_WEIGHTS: dict[Case, int] = {"pro": 1, "con": 1, "75pro": 2, "75con": 2, "all": 3}
# (configuration kind, side favoured) of each case, as stancelab's metadata names them
CASE_KIND: dict[Case, tuple[str, str]] = {
    "neither": ("baseline", "none"),
    "pro": ("one_sided", "pro"),
    "con": ("one_sided", "con"),
    "75pro": ("clear_and_convincing", "pro"),
    "75con": ("clear_and_convincing", "con"),
    "all": ("balanced", "none"),
}
CASE_OF_CONFIG: dict[tuple[str, str], Case] = {kind: case for case, kind in CASE_KIND.items()}
CASE_LABELS: dict[Case, str] = {
    "neither": "no arguments (baseline)",
    "pro": "one-sided pro",
    "con": "one-sided con",
    "75pro": "clear and convincing pro (3:1)",
    "75con": "clear and convincing con (1:3)",
    "all": "balanced",
}
