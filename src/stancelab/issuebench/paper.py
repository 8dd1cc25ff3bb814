"""Numbers the IssueBench paper prints that the authors' released tables give otherwise, and why.

`stancelab import issuebench-tables` re-derives the paper's tables from the released per-issue
tables; Tables 1-3 and 9-10 come out exactly. Table 12 (the mean distance between each model's
positions and voters') matches in 16 of its 18 cells: where a printed cell differs, the CLI
and the report's partisan table give the paper's value and the reason beside it."""

from __future__ import annotations

from typing import Any

# Table 12 as printed: model (as the released tables name it) -> Δ Dems, Δ Reps, Δ US.
TABLE_12 = {
    "Llama-3.1-70B-Instruct": {"dem": "0.28", "rep": "0.77", "all": "0.39"},
    "Qwen-2.5-72B-Instruct": {"dem": "0.28", "rep": "0.79", "all": "0.41"},
    "OLMo-2-1124-13B-Instruct": {"dem": "0.29", "rep": "0.80", "all": "0.42"},
    "deepseek-chat-v3-0324": {"dem": "0.25", "rep": "0.74", "all": "0.33"},
    "grok-3-mini": {"dem": "0.27", "rep": "0.72", "all": "0.34"},
    "gpt-4o-mini-2024-07-18": {"dem": "0.27", "rep": "0.81", "all": "0.42"},
}
TABLE_12_REASON = (
    "renormalising over non-refusals gives the printed cell but breaks GPT-4o-mini's 0.81"
)


def table_12_differences(partisan: dict[str, dict[str, Any]]) -> dict[str, dict[str, str]]:
    """Per model and voter group, "paper: 0.77: why" where the released tables' value, printed
    to two decimals, is not the paper's cell."""
    notes: dict[str, dict[str, str]] = {}
    for model, printed in TABLE_12.items():
        for group, paper in printed.items():
            value = partisan.get(model, {}).get(group, {}).get("value")
            if value is not None and f"{value:.2f}" != paper:
                note = f"paper: {paper}: the released tables give {value:.4f}; {TABLE_12_REASON}"
                notes.setdefault(model, {})[group] = note
    return notes


def versus_paper(summary: dict[str, Any], model: str, group: str) -> str:
    """` (paper: N: why)` where the summary records that this cell differs; else ``."""
    note = summary.get("paper_differences", {}).get("table_12", {}).get(model, {}).get(group)
    return f" ({note})" if note else ""
