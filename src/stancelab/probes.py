"""The registry: the probe packages, in the report's order. Above `core` and the probes."""

from __future__ import annotations

from pathlib import Path

from stancelab.conviction.probe import PROBE as CONVICTION
from stancelab.core.errors import StancelabError
from stancelab.core.probe import Probe
from stancelab.core.results.logs import log_files, log_header
from stancelab.even_handedness.probe import PROBE as EVEN_HANDEDNESS
from stancelab.issuebench.probe import PROBE as ISSUEBENCH
from stancelab.llm_bias_bench.probe import PROBE as LLM_BIAS_BENCH
from stancelab.millstone.probe import PROBE as MILLSTONE
from stancelab.prior_prejudice.probe import PROBE as PRIOR_PREJUDICE

PROBES: dict[str, Probe] = {
    probe.name: probe
    for probe in (
        MILLSTONE,
        CONVICTION,
        LLM_BIAS_BENCH,
        PRIOR_PREJUDICE,
        ISSUEBENCH,
        EVEN_HANDEDNESS,
    )
}
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
    return next((probe for probe in PROBES.values() if probe.reads_task(task_name)), None)


def probes_in(logs_dir: Path) -> list[str]:
    """Which probes have logs in a folder (read from the log headers)."""
    found = set()
    for path in log_files(logs_dir):
        probe = probe_for_task(log_header(path).eval.task)
        if probe is not None:
            found.add(probe.name)
    return [probe for probe in PROBES if probe in found]
