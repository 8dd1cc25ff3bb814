"""`stancelab demo`: every probe with small limits on one or more models, then the report."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from inspect_ai.model import Model

from stancelab.core.probes import run_probe
from stancelab.probes import PROBES, get_probe
from stancelab.report.build import ReportResult, build_report


def demo_options(name: str, out_dir: Path, models: list[str | Model], display: str | None) -> Any:
    """The run options `stancelab demo` uses for one probe (its `demo` settings)."""
    probe = get_probe(name)
    return probe.options(models=models, out_dir=out_dir / name, display=display, **probe.demo)


def run_demo(
    out_dir: Path, models: list[str | Model], display: str | None = None,
    settings: dict[str, dict[str, Any]] | None = None,
) -> ReportResult:  # fmt: skip
    """Run each probe into `out_dir/<probe>`, a line per step, then write `out_dir/report.html`."""
    start = time.monotonic()
    for step, name in enumerate(PROBES, 1):
        options = replace(demo_options(name, out_dir, models, display), **(settings or {}).get(name, {}))
        print(f"[{step}/{len(PROBES)}] {PROBES[name].title}: running "
              f"({time.monotonic() - start:.0f} s so far)", flush=True)  # fmt: skip
        print(run_probe(PROBES[name], options), flush=True)
    print(f"[report] writing {out_dir / 'report.html'}", flush=True)
    return build_report([out_dir], out_dir / "report.html")
