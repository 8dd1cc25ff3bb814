"""`stancelab demo`: every probe with small limits on one or more models, then the report."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspect_ai.model import Model

from stancelab.core.probes import PROBES
from stancelab.report.build import ReportResult, build_report

# Small enough for 2 CPU cores with the embedded 135M model (a few minutes in all).
DEMO_SETTINGS: dict[str, dict[str, Any]] = {
    "millstone": {"limit_issues": 2, "trials": 1, "max_tokens": 16},
    "conviction": {"limit": 2, "samples": 3, "argument_sets": 1},
    "llm-bias-bench": {"limit_topics": 1, "turns": 2, "max_tokens": 48},
    "issuebench": {"limit_issues": 2, "n_templates": 3, "max_tokens": 48},
    "prior-prejudice": {"limit": 1, "templates": "T1,T2", "argument_tokens": 64},
}
OPTION_CLASSES = {
    "millstone": ("stancelab.millstone.run", "MillstoneRun"),
    "conviction": ("stancelab.conviction.run", "ConvictionRun"),
    "llm-bias-bench": ("stancelab.llm_bias_bench.run", "BiasBenchRun"),
    "issuebench": ("stancelab.issuebench.run", "IssueBenchRun"),
    "prior-prejudice": ("stancelab.prior_prejudice.run", "PriorPrejudiceRun"),
}


def demo_options(name: str, out_dir: Path, models: list[str | Model], display: str | None) -> Any:
    """The run options `stancelab demo` uses for one probe."""
    import importlib

    module, class_name = OPTION_CLASSES[name]
    options_class = getattr(importlib.import_module(module), class_name)
    return options_class(models=models, out_dir=out_dir / name, display=display, **DEMO_SETTINGS[name])


def run_demo(
    out_dir: Path, models: list[str | Model], display: str | None = "none",
    settings: dict[str, dict[str, Any]] | None = None,
) -> ReportResult:  # fmt: skip
    """Run each probe into `out_dir/<probe>`, then write `out_dir/report.html`."""
    from stancelab.core.cli import run_probe

    for name in PROBES:
        options = demo_options(name, out_dir, models, display)
        for key, value in (settings or {}).get(name, {}).items():
            setattr(options, key, value)
        print(run_probe(name, options), flush=True)
    return build_report([out_dir], out_dir / "report.html")
