"""The numbers the MillStone paper prints that the released counts give differently, and why.

`stancelab import millstone` re-derives every published number from the authors' released
counts. Where one comes out otherwise, the printed line says so in place, with the paper's
number and the reason in a phrase (`differences`); the README gives the detail."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from stancelab.millstone.om import PUBLISHED


@dataclass(frozen=True)
class PaperNumber:
    """One number of the paper's text, how to read it from a summary, and why the release
    may give another."""

    printed: str
    """as the paper prints it ("222 of 575")"""
    value: object
    """what the summary's number would be if it were the paper's"""
    read: Callable[[dict[str, Any]], object]
    reason: str


PAPER_NUMBERS: dict[str, PaperNumber] = {
    "strong_priors": PaperNumber(
        "222 of 575", (222, 575),
        lambda s: (s["strong_priors"]["pairs"], s["strong_priors"]["of"]),
        "575 counts the three issues dropped from every analysis, and two of the nine models "
        "are held back from this release",
    ),
    "issues_all_full_run_models": PaperNumber(
        "21", 21, lambda s: len(s["strong_priors"]["issues_all_full_run_models"]),
        "the paper's 21 are appendix D's unanimous and consistent issues (mean share above 90%)",
    ),
    "controversial_by_rule": PaperNumber(
        "10", 10, lambda s: len(s["controversial_subset"]["by_rule"]),
        "Table 5's subset adds drones and ronald-reagan, the next two by MPD",
    ),
    "single_argument_models": PaperNumber(
        "8 of 9", (8, 9),
        lambda s: (s["models_with_single_argument_shift_above_50pct"]["models"],
                   s["models_with_single_argument_shift_above_50pct"]["of"]),
        "two of the nine models are held back from this release",
    ),
    "top_of_ranking": PaperNumber(
        "Grok 3, +17.7% / +44.8% in section 6.2, +39.2% over the median in the introduction",
        "grok-3", lambda s: _top_of_ranking(s),
        "Grok 3 and GPT-4o mini are held back from this release (the next line adds their "
        "published OM)",
    ),
    "ratios_with_held_back": PaperNumber(
        "+39.2% over the median in the introduction; +17.7% / +44.8% in section 6.2",
        (17.7, 44.8), lambda s: _held_back_ratios(s),
        "section 6.2's ratios follow from no reading of the counts (issue 25)",
    ),
}  # fmt: skip


def _top_of_ranking(summary: dict[str, Any]) -> str | None:
    ranked = [r for r in summary.get("om_ranking", []) if r["variant"] == PUBLISHED.name]
    return ranked[0]["model"] if ranked else None


def _held_back_ratios(summary: dict[str, Any]) -> tuple[float, float] | None:
    held = summary.get("om_ranking_with_held_back")
    if not held:
        return None
    top = held["ranking"][0]
    return round(top["pct_above_next"], 1), round(top["pct_above_median"], 1)


def differences(summary: dict[str, Any]) -> dict[str, str]:
    """For each number of the paper the summary gives otherwise: "paper: N: why"."""
    notes = {}
    for key, number in PAPER_NUMBERS.items():
        if number.read(summary) != number.value:
            notes[key] = f"paper: {number.printed}: {number.reason}"
    return notes


def shown(summary: dict[str, Any], key: str) -> str:
    """The summary's number for a paper number, as the CLI prints it ("218 of 540")."""
    value = PAPER_NUMBERS[key].read(summary)
    if isinstance(value, tuple) and all(isinstance(part, float) for part in value):
        return " / ".join(f"{part:+.1f}%" for part in value)
    if isinstance(value, tuple):
        return " of ".join(str(part) for part in value)
    return str(value)


def versus_paper(summary: dict[str, Any], key: str) -> str:
    """` (paper: N: why)` where the summary records that its number differs; else ``."""
    note = summary.get("paper_differences", {}).get(key)
    return f" ({note})" if note else ""
