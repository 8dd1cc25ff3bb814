"""Paired differences between models over shared units, with honest intervals."""

from __future__ import annotations

import pandas as pd
import pytest

from stancelab.report.compare import difference_matrix, paired_differences


def _units(values: dict[str, list[float | None]]) -> pd.DataFrame:
    return pd.DataFrame([{"model": model, "unit": f"u{index}", "value": value}
                         for model, series in values.items()
                         for index, value in enumerate(series)])  # fmt: skip


def test_differences_use_only_shared_units() -> None:
    units = _units({"a": [10, 20, 30, 40], "b": [0, 10, 20, None], "c": [10, 20, 30, 40]})
    table = paired_differences(units).set_index(["model_a", "model_b"])
    a_b = table.loc[("a", "b")]
    assert (a_b["difference"], a_b["n"]) == (10.0, 3)  # u3 has no value for b
    # identical differences everywhere: no interval rather than a zero-width one
    assert pd.isna(a_b["ci_low"]) and pd.isna(a_b["ci_high"])
    assert table.loc[("a", "c"), "difference"] == 0.0


def test_a_clear_difference_has_a_ci_excluding_zero() -> None:
    units = _units({"a": [10, 12, 11, 13, 12, 14, 10, 11], "b": [1, 2, 0, 3, 1, 2, 0, 1]})
    row = paired_differences(units).iloc[0]
    assert row["difference"] == pytest.approx(93 / 8 - 10 / 8)
    assert 0 < row["ci_low"] < row["difference"] < row["ci_high"]
    values, clear = difference_matrix(paired_differences(units))
    assert values.loc["b", "a"] == pytest.approx(-(93 - 10) / 8) and bool(clear.loc["a", "b"])


def test_one_shared_unit_gives_no_interval() -> None:
    row = paired_differences(_units({"a": [5, None], "b": [1, 2]})).iloc[0]
    assert row["n"] == 1 and row["difference"] == 4.0 and pd.isna(row["ci_low"])


def _pair(a: str, b: str, ci: tuple[float, float], p_adjusted: float | None) -> dict[str, object]:
    return {"model_a": a, "model_b": b, "difference": 1.0, "ci_low": ci[0], "ci_high": ci[1],
            "p": p_adjusted, "p_adjusted": p_adjusted, "adjustment": "holm" if p_adjusted else None}  # fmt: skip


def test_the_heatmap_mark_follows_the_adjusted_p_not_the_ci() -> None:
    """'*' where the adjusted p < 0.05: a CI clear of 0 with adjusted p 0.2 is not marked,
    a CI across 0 with adjusted p 0.01 is, a pair without a test is not; the caption says so."""
    from types import SimpleNamespace

    from stancelab.report.build import _differences_figure

    differences = pd.DataFrame([_pair("a", "b", (0.2, 1.8), 0.2), _pair("a", "c", (-0.1, 2.1), 0.01),
                                _pair("b", "c", (0.5, 1.5), None)])  # fmt: skip
    _, marked = difference_matrix(differences)
    assert not marked.loc["a", "b"] and marked.loc["a", "c"] and marked.loc["c", "a"]
    assert not marked.loc["b", "c"]
    profiles = [SimpleNamespace(label="OM", unit="points")]
    caption = _differences_figure(profiles, differences.assign(n=5)).caption  # type: ignore[arg-type]
    assert "* marks a pair whose p, adjusted (holm)" in caption and "below 0.05" in caption
