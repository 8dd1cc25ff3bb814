"""The `stancelab` command line."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from stancelab.core.errors import StancelabError
from stancelab.core.models import parse_roles, resolve_model, resolve_models

PROBES = ("millstone",)
PLANNED_PROBES = ("testing-conviction", "llm-bias-bench", "prior-prejudice", "issuebench")


def _add_run(subparsers: argparse._SubParsersAction) -> None:
    run = subparsers.add_parser("run", help="run a probe and analyse its logs")
    run.add_argument("probe", help=f"probe to run: {', '.join(PROBES)}")
    run.add_argument(
        "--model",
        action="append",
        help="subject model (Inspect model string, or 'embedded'); repeat to compare models",
    )
    run.add_argument("--role", action="append", help="helper role, ROLE=MODEL (e.g. rephraser=...)")
    run.add_argument("--limit", type=int, help="use only the first N issues")
    run.add_argument("--trials", type=int, help="trials per (issue, template, configuration)")
    run.add_argument("--seed", type=int, default=0, help="seed for argument draws and order")
    run.add_argument("--out", type=Path, help="output folder (default: runs/<probe>)")
    run.add_argument("--issues", type=Path, help="issues file (JSONL; default: bundled set)")
    run.add_argument("--max-tokens", type=int, help="cap on each answer's length")
    run.add_argument("--temperature", type=float, help="subject sampling temperature")
    run.add_argument("--display", help="Inspect display: full, rich, plain, log, none")


def _add_analyze(subparsers: argparse._SubParsersAction) -> None:
    analyze = subparsers.add_parser("analyze", help="recompute tables and summary from logs")
    analyze.add_argument("out", type=Path, help="a run's output folder (holds logs/)")
    analyze.add_argument("--seed", type=int, default=0, help="bootstrap seed")


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


def _add_embedded(subparsers: argparse._SubParsersAction) -> None:
    embedded = subparsers.add_parser("embedded", help="the embedded offline model")
    commands = embedded.add_subparsers(dest="embedded_command", required=True)
    commands.add_parser("prepare", help="materialise the model folder now (first use does it too)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="stancelab",
        description="Probe what language models believe on contested questions.",
    )
    subparsers = parser.add_subparsers(dest="command", required=True)
    _add_run(subparsers)
    _add_analyze(subparsers)
    _add_millstone(subparsers)
    _add_embedded(subparsers)
    return parser


def _run(args: argparse.Namespace) -> int:
    if args.probe in PLANNED_PROBES:
        raise StancelabError(f"Probe '{args.probe}' is not implemented yet (planned).")
    if args.probe not in PROBES:
        raise StancelabError(f"Unknown probe '{args.probe}'. Available: {', '.join(PROBES)}.")
    from stancelab.millstone.results import format_summary
    from stancelab.millstone.run import ROLES, MillstoneRun, run_millstone

    options = MillstoneRun(
        models=resolve_models(args.model),
        roles=parse_roles(args.role, ROLES),
        out_dir=args.out or Path("runs") / args.probe,
        issues_file=args.issues,
        limit_issues=args.limit,
        seed=args.seed,
        display=args.display,
    )
    for name in ("trials", "max_tokens", "temperature"):
        if getattr(args, name) is not None:
            setattr(options, name, getattr(args, name))
    summary = run_millstone(options)
    print(format_summary(summary))
    print(f"\nResults: {options.out_dir}/summary.json, tables in {options.out_dir}/tables/")
    return 0


def _analyze(args: argparse.Namespace) -> int:
    from stancelab.millstone.results import analyze, format_summary

    summary = analyze(args.out, seed=args.seed)
    print(format_summary(summary))
    return 0


def _millstone(args: argparse.Namespace) -> int:
    from stancelab.millstone.run import MillstoneRun, rephrase_issues

    model = resolve_model(args.model)
    options = MillstoneRun(models=[model], out_dir=args.logs or args.out.parent)
    written = rephrase_issues(options, args.issues, args.out)
    print(f"Wrote {written}")
    return 0


def _embedded(args: argparse.Namespace) -> int:
    from stancelab.core.embedded import materialise

    print(materialise())
    return 0


COMMANDS = {"run": _run, "analyze": _analyze, "millstone": _millstone, "embedded": _embedded}


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `stancelab` command."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except StancelabError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
