"""A summary as the CLI and the report give it in words: the probe's own text, what its read
of the logs left out, the stopping record of an `--until-ci` run and the paired differences."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from stancelab.core.results.evidence import evidence_text
from stancelab.core.stats.compare import NOT_COMPARED, no_difference_ci


class Formats(Protocol):
    """What `summary_text` needs of a probe (`core.probe.Probe`)."""

    format_summary: Callable[[dict[str, Any]], str]


UNTIL_CI_KEY = "until_ci"
"""summary.json key of an `--until-ci` run's stopping record (`core.runs.until_ci`)"""


def interval_decimals(low: float, high: float, least: int = 2, most: int = 6) -> int:
    """The decimals (at least `least`, at most `most`) at which an interval's bounds print
    apart, so a narrow interval shows its width: [-4.600, -4.597], not [-4.60, -4.60]."""
    decimals = least
    while decimals < most and high > low and f"{low:.{decimals}f}" == f"{high:.{decimals}f}":
        decimals += 1
    return decimals


def with_results_path(text: str, out_dir: Path) -> str:
    return f"{text}\n\nResults: {out_dir}/summary.json, tables in {out_dir}/tables/"


def format_differences(summary: dict[str, Any]) -> str:
    """The paired differences of the headline, a line per pair of models ('' with one model):
    difference, CI, shared units, then the test with its p and adjusted p (or why none)."""
    lines = []
    for row in summary.get("headline_differences", []):
        if str(row.get("test_note") or "").startswith(NOT_COMPARED):
            lines.append(f"  {row['model_a']} - {row['model_b']}: {row['test_note']}")
            continue
        low, high = row.get("ci_low"), row.get("ci_high")
        interval = (
            f"[{low:.3g}, {high:.3g}]"
            if low is not None and high is not None
            else no_difference_ci(row["n"], row["difference"], row.get("test_note"))
        )
        value = "n/a" if row["difference"] is None else f"{row['difference']:+.3g}"
        lines.append(f"  {row['model_a']} - {row['model_b']}: {value} {interval} over {row['n']} shared units"
                     f"{_test_text(row)}")  # fmt: skip
    if not lines:
        return ""
    family = summary.get("p_family") or {}
    if family.get("tests"):
        sources = ", ".join(f"{name} {count}" for name, count in family["sources"].items() if count)
        lines.append(f"  p adjusted ({family['adjustment']}) over every test this summary shows, one family of "
                     f"{family['tests']}: {sources}")  # fmt: skip
    return "\n".join(["Headline, paired differences between models:", *lines])


def _test_text(row: dict[str, Any]) -> str:
    """'; exact McNemar p=0.03, holm-adjusted p=0.06', or the note saying why there is no test."""
    if row.get("p") is None:
        return f"; {row['test_note']}" if row.get("test_note") else ""
    adjusted = row.get("p_adjusted")
    text = f"; {row['test']} p={row['p']:.3g}"
    return text + (
        f", {row['adjustment']}-adjusted p={adjusted:.3g}" if adjusted is not None else ""
    )


def summary_text(probe: Formats, summary: dict[str, Any]) -> str:
    """A probe's CLI summary (`Probe.format_summary`), what its read of the logs left out ("2
    interrupted logs ignored", "shards 2-4 of 4 missing: partial"), the stopping record of an
    `--until-ci` run, then the models' paired differences."""
    parts = (probe.format_summary(summary), evidence_text(summary), until_ci_text(summary),
             format_differences(summary))  # fmt: skip
    return "\n\n".join(part for part in parts if part)


def level_text(level: float) -> str:
    """A confidence level as a percentage: 0.99 -> '99%', 0.9875 -> '98.8%'."""
    return f"{level:.1%}".replace(".0%", "%")


def adjusted_interval_texts(summary: dict[str, Any]) -> dict[str, str]:
    """model -> its headline at the stop with the interval valid despite the stopping, as the
    report shows it beside the 95% one ({} for a run without `--until-ci`)."""
    record = summary.get(UNTIL_CI_KEY)
    if not isinstance(record, dict):
        return {}
    texts = {}
    for model, row in record["headline"].items():
        low, high = row.get("ci_low"), row.get("ci_high")
        interval = f"[{low:.3g}, {high:.3g}]" if low is not None and high is not None else "none"
        value = "n/a" if row.get("value") is None else f"{row['value']:.3g}"
        texts[model] = (f"--until-ci: mean over {row.get('n', 0)} units {value}, "
                        f"{level_text(record['level'])} interval {interval}")  # fmt: skip
    return texts


def stopping_note(summary: dict[str, Any]) -> str:
    """One line for the report: the 95% intervals do not account for the stopping ('' for a
    run without `--until-ci`)."""
    record = summary.get(UNTIL_CI_KEY)
    if not isinstance(record, dict):
        return ""
    return (f"Run with --until-ci {record['width']:g}, stopped at look {record['stopped_at_look']} "
            f"of {record['looks_planned']} ({record['reason']}): the 95% intervals do not account "
            f"for the stopping; the {level_text(record['level'])} interval beside each headline "
            f"does ({record.get('interval', 'Bonferroni over the looks')}: valid at every look "
            "at once).")  # fmt: skip


def until_ci_text(summary: dict[str, Any]) -> str:
    """The stopping record as the CLI shows it ('' for a run without `--until-ci`)."""
    record = summary.get(UNTIL_CI_KEY)
    if not isinstance(record, dict):
        return ""
    level = level_text(record["level"])
    lines = [
        f"--until-ci {record['width']:g}: stopped at look {record['stopped_at_look']} of "
        f"{record['looks_planned']} ({record['reason']}); units per batch "
        f"{', '.join(map(str, record['batch_units']))}.",
        f"Headline valid despite the stopping, the mean over units with its {level} interval "
        f"({record['method']}); the 95% intervals above take no account of the stopping:",
    ]
    for model, row in record["headline"].items():
        low, high = row.get("ci_low"), row.get("ci_high")
        value = "n/a" if row.get("value") is None else f"{row['value']:.3g}"
        measured = low is not None and high is not None
        interval = f"[{low:.3g}, {high:.3g}], width {high - low:.3g}," if measured else "no CI"
        lines.append(f"  {model}: {value} {interval} over {row.get('n', 0)} units")
    return "\n".join(lines)
