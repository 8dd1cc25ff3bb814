"""`stancelab run all`: the six probes on the shared topics for the same models, each into
`OUT/<probe>/`, then the topic x lens matrix into `OUT/matrix/`."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from stancelab.core.data.topics import parse_shared_topics
from stancelab.core.errors import StancelabError
from stancelab.core.probe import Probe
from stancelab.core.runs.evals import ProbeRun
from stancelab.core.runs.options import check_options, check_run, write_config
from stancelab.core.runs.pipeline import check_parallel_options, run_probe
from stancelab.matrix.results import format_matrix, write_folder_matrix
from stancelab.probes import PROBES, get_probe

ALL = "all"
DESCRIPTION = (
    "Run the six probes on the shared topics (the topic key in core/data/topic_key) for the same "
    "models, each into OUT/<probe>/, then read each probe's stance per model and topic into the "
    "topic x lens matrix (OUT/matrix/summary.json, OUT/matrix/tables/*.csv): the signed "
    "agreement with each topic's canonical claim per lens, its 95% CI, and whether the lenses "
    "point the same way. Options are passed to every probe; --role goes to the probes that "
    "have that role. Lenses measure different behaviours on different scales: the matrix "
    "compares directions, not magnitudes."
)


@dataclass
class RunAll(ProbeRun):
    """Options of `stancelab run all` (every probe's shared options, passed to each)."""

    out_dir: Path
    """output folder: OUT/<probe>/ per probe, the matrix in OUT/matrix/ (default: runs/all)"""
    shared_topics: str = ALL
    """the shared topics: all, or a comma list of topic ids (e.g. abortion,minimum-wage)"""
    probes: str = ""
    """only these probes, a comma list (default: all six)"""
    prices: dict[str, tuple[float, float]] = field(default_factory=dict)
    """MODEL=IN,OUT: USD per million input and output tokens (kept with the runs)"""


def all_roles() -> tuple[str, ...]:
    """Every helper role of any probe."""
    return tuple(dict.fromkeys(role for probe in PROBES.values() for role in probe.roles))


def selected_probes(names: str) -> list[Probe]:
    """The probes `--probes` names (all six when empty), in the registry's order."""
    if not names.strip():
        return list(PROBES.values())
    chosen = {get_probe(name.strip()).name for name in names.split(",") if name.strip()}
    return [probe for probe in PROBES.values() if probe.name in chosen]


def check_shared_topics(value: str) -> str:
    """`all` or a comma list of known topic ids (an unknown id is a clear error)."""
    if parse_shared_topics(value) is None:
        raise StancelabError(
            "run all needs shared topics: --shared-topics all, or a comma list of topic ids"
        )
    return value.strip()


def probe_options(
    probe: Probe, options: RunAll, settings: Mapping[str, Any] | None = None
) -> ProbeRun:
    """One probe's run options: the shared ones of `options`, its own roles only, the shared
    topics, `OUT/<probe>` and any probe-specific `settings` (e.g. the demo's limits)."""
    own = {item.name for item in fields(probe.options)}
    if "shared_topics" not in own:
        raise StancelabError(
            f"{probe.name} has no --shared-topics option: run all cannot select its items"
        )
    shared = {item.name: getattr(options, item.name) for item in fields(ProbeRun)}
    shared |= {"out_dir": options.out_dir / probe.name, "shared_topics": options.shared_topics,
               "roles": {role: model for role, model in options.roles.items() if role in probe.roles}}  # fmt: skip
    if options.log_dir:  # a shard's logs: one folder per probe under the location given
        shared["log_dir"] = f"{options.log_dir.rstrip('/')}/{probe.name}"
    if "prices" in own and options.prices:
        shared["prices"] = dict(options.prices)
    values = shared | dict(settings or {})
    unknown = sorted(set(values) - own)
    if unknown:
        raise StancelabError(f"{probe.name} has no option(s) {', '.join(unknown)}")
    return probe.options(**values)


def run_all(
    options: RunAll, settings: Mapping[str, Mapping[str, Any]] | None = None,
    progress: Callable[[str], None] = print,
) -> dict[str, Any]:  # fmt: skip
    """Run the chosen probes into `OUT/<probe>/` (printing each summary), then write the
    matrix to `OUT/matrix/` and return its summary (with `--shard`, no matrix: an empty dict;
    `stancelab analyze OUT` writes it once every shard is done)."""
    from stancelab.report.runs import load_run

    start = time.monotonic()
    options.shared_topics = check_shared_topics(options.shared_topics)
    check_parallel_options(options)
    probes = selected_probes(options.probes)
    planned = [
        (probe, probe_options(probe, options, (settings or {}).get(probe.name))) for probe in probes
    ]
    check_run(options)
    for _, probe_run in planned:
        check_options(probe_run)
    write_config(ALL, options)
    for step, (probe, probe_run) in enumerate(planned, 1):
        progress(f"[{step}/{len(planned)}] {probe.title}: running on shared topics {options.shared_topics} "
                 f"({time.monotonic() - start:.0f} s so far)")  # fmt: skip
        progress(run_probe(probe, probe_run))
    if options.shard:
        progress(f"Shard {options.shard} of every probe done. Once every shard is, analyse the folder and "
                 f"write the matrix: stancelab analyze {options.out_dir}")  # fmt: skip
        return {}
    runs = [load_run(probe_run.out_dir, options.seed) for _, probe_run in planned]
    summary = write_folder_matrix(options.out_dir, runs)
    progress(format_matrix(summary))
    progress(
        f"Matrix: {options.out_dir / 'matrix' / 'summary.json'}, tables in {options.out_dir / 'matrix' / 'tables'}/"
    )
    return summary


def default_out() -> Path:
    return Path("runs") / ALL
