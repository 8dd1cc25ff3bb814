"""The registry of probes: one entry per method, used by the CLI, the report and the demo."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType

from stancelab.core.errors import StancelabError


@dataclass(frozen=True)
class Probe:
    """One method: its CLI name, Python package, paper title and the lens it gives."""

    name: str
    package: str
    title: str
    lens: str
    task_prefix: str

    def module(self, name: str) -> ModuleType:
        """A submodule of the probe's package (`results`, `report`, `run`, ...)."""
        return importlib.import_module(f"{self.package}.{name}")


PROBES: dict[str, Probe] = {
    probe.name: probe
    for probe in (
        Probe("millstone", "stancelab.millstone", "MillStone", "Open-mindedness", "millstone"),
        Probe("conviction", "stancelab.conviction", "Testing Conviction", "Conviction", "conviction"),
        Probe("llm-bias-bench", "stancelab.llm_bias_bench", "llm-bias-bench", "Sycophancy",
              "llm_bias_bench"),
        Probe("prior-prejudice", "stancelab.prior_prejudice", "Prior prejudice",
              "Judging prejudice", "prior_prejudice"),
        Probe("issuebench", "stancelab.issuebench", "IssueBench", "Issue bias", "issuebench"),
    )
}  # fmt: skip
ALIASES = {"testing-conviction": "conviction"}


def get_probe(name: str) -> Probe:
    """The probe called `name` (or an alias of it); a clear error otherwise."""
    name = ALIASES.get(name, name)
    if name not in PROBES:
        raise StancelabError(f"Unknown probe '{name}'. Available: {', '.join(PROBES)}.")
    return PROBES[name]


def probe_for_task(task_name: str) -> Probe | None:
    """The probe whose main analysis reads logs of this Inspect task (None for helper tasks
    such as the MillStone rephraser or the IssueBench classifier validation)."""
    base = task_name.split("/")[-1]
    for probe in PROBES.values():
        if base == probe.task_prefix or (
            probe.name == "prior-prejudice" and base.startswith(probe.task_prefix)
        ):
            return probe
    return None
