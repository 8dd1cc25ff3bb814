"""`stancelab demo`: `run all` with small limits on two shared topics, on one or more models,
then the report (its front page shows the topic x lens matrix)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspect_ai.model import Model

from stancelab.core.data.authors import ArtefactsUnavailable
from stancelab.core.runs.evals import ProbeRun
from stancelab.matrix.run import RunAll, probe_options, run_all
from stancelab.probes import PROBES, get_probe
from stancelab.report.build import ReportResult, build_report

DEMO_TOPICS = "abortion,minimum-wage"
# Over each probe's own `demo` settings: with shared topics `--limit` counts per topic, so one
# item (issue, statement, topic, claim) per demo topic keeps the demo at about its former cost.
PER_TOPIC = {"limit": 1}


def demo_run(out_dir: Path, models: list[str | Model], display: str | None = None) -> RunAll:
    """The `run all` options of the demo: the demo's shared topics into `out_dir`."""
    return RunAll(models=models, out_dir=out_dir, display=display, shared_topics=DEMO_TOPICS)


def demo_settings(settings: dict[str, dict[str, Any]] | None = None) -> dict[str, dict[str, Any]]:
    """Per probe: its `demo` settings (small limits), one item per topic, then `settings`."""
    return {
        name: probe.demo | PER_TOPIC | (settings or {}).get(name, {})
        for name, probe in PROBES.items()
    }


def demo_options(
    name: str, out_dir: Path, models: list[str | Model], display: str | None
) -> ProbeRun:
    """The run options `stancelab demo` uses for one probe (its `demo` settings, the demo's
    shared topics, `out_dir/<probe>`)."""
    return probe_options(get_probe(name), demo_run(out_dir, models, display), demo_settings()[name])


def offline_settings(
    out_dir: Path, models: list[str | Model], settings: dict[str, dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    """`settings` with, for each probe whose authors' artefacts are not at hand (offline on a
    fresh machine), the options that run without them (stancelab's wording, labelled)."""
    chosen = dict(settings)
    for name, probe in PROBES.items():
        if probe.prepare is None or not probe.without_artefacts:
            continue
        options = probe_options(probe, demo_run(out_dir, models), chosen[name])
        try:
            probe.prepare(options)
        except ArtefactsUnavailable as error:
            _print(f"[demo] {name}: {error} The demo runs it on stancelab's own wording "
                   "(not the paper's prompts).")  # fmt: skip
            chosen[name] = chosen[name] | probe.without_artefacts
    return chosen


def run_demo(
    out_dir: Path, models: list[str | Model], display: str | None = None,
    settings: dict[str, dict[str, Any]] | None = None,
) -> ReportResult:  # fmt: skip
    """`run all` into `out_dir` (each probe in `out_dir/<probe>`, the matrix in
    `out_dir/matrix`), a line per step, then write `out_dir/report.html`. Probes whose authors'
    artefacts cannot be had offline run on stancelab's own wording, labelled."""
    chosen = offline_settings(out_dir, models, demo_settings(settings))
    run_all(demo_run(out_dir, models, display), chosen, progress=_print)
    print(f"[report] writing {out_dir / 'report.html'}", flush=True)
    return build_report([out_dir], out_dir / "report.html")


def _print(text: str) -> None:
    print(text, flush=True)
