"""The `stancelab` command line."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from stancelab.core.errors import StancelabError
from stancelab.core.models import parse_roles, resolve_model, resolve_models
from stancelab.core.probes import PROBES as REGISTRY
from stancelab.core.probes import get_probe, probe_for_task

PROBES = tuple(REGISTRY)


def _add_run(subparsers: argparse._SubParsersAction) -> None:
    _add_probe_arguments(subparsers.add_parser("run", help="run a probe and analyse its logs"))
    estimate = subparsers.add_parser(
        "estimate", help="predict a run's calls, tokens and cost (same options as run)"
    )
    _add_probe_arguments(estimate)


def _add_report(subparsers: argparse._SubParsersAction) -> None:
    report = subparsers.add_parser("report", help="one HTML report from run folders")
    report.add_argument("folders", nargs="+", type=Path, help="run folders (or folders of runs)")
    report.add_argument("-o", "--output", type=Path, default=Path("report.html"))
    report.add_argument("--price", action="append", help="MODEL=IN,OUT (USD per 1M tokens)")
    report.add_argument("--max-transcripts", type=int, default=300,
                        help="samples per task and model embedded in the report (default 300)")  # fmt: skip
    report.add_argument("--seed", type=int, default=0, help="bootstrap seed if logs are re-analysed")
    demo = subparsers.add_parser(
        "demo", help="run every probe with small limits on the embedded model, then the report"
    )
    demo.add_argument("--out", type=Path, default=Path("runs/demo"), help="folder for runs and report")
    demo.add_argument("--model", action="append", help="subject model(s) (default: embedded)")
    demo.add_argument("--display", default="none", help="Inspect display (default none)")
    demo.add_argument("--open", action="store_true", help="open the report in a browser")


def _add_probe_arguments(run: argparse.ArgumentParser) -> None:
    run.add_argument("probe", help=f"probe to run: {', '.join(PROBES)}")
    run.add_argument(
        "--model",
        action="append",
        help="subject model (Inspect model string, or 'embedded'); repeat to compare models",
    )
    run.add_argument(
        "--role",
        action="append",
        help="helper role ROLE=MODEL (rephraser; nli, writer; user, judge; classifier; writer, judge)",
    )
    run.add_argument("--limit", type=int, help="use only the first N issues / topics")
    run.add_argument("--out", type=Path, help="output folder (default: runs/<probe>)")
    run.add_argument("--max-tokens", type=int, help="cap on each generated message")
    run.add_argument("--display", help="Inspect display: full, rich, plain, log, none")
    run.add_argument("--seed", type=int, default=0, help="seed (MillStone draws and order)")
    run.add_argument("--max-retries", type=int, help="retries per model call (default: until --timeout)")
    run.add_argument("--timeout", type=int, help="seconds per model call, retries included")
    run.add_argument("--attempt-timeout", type=int,
                     help="seconds per attempt (default: 10x the observed 95th percentile, >= 2)")  # fmt: skip
    run.add_argument("--max-connections", type=int, help="concurrent requests per model")
    millstone = run.add_argument_group("millstone")
    millstone.add_argument("--trials", type=int, help="trials per (issue, template, config)")
    millstone.add_argument(
        "--issues",
        help="MillStone: issues file (JSONL) or a folder of the authors' per-issue JSON files; "
        "IssueBench: number of issues to use",
    )
    millstone.add_argument(
        "--layout", choices=("authors", "documents"),
        help="MillStone prompt layout: authors (default, as the authors ran it) or documents",
    )
    millstone.add_argument("--temperature", type=float, help="subject sampling temperature")
    millstone.add_argument(
        "--choices-per-request", action="store_true",
        help="MillStone: all trials of a prompt in one request (num_choices; OpenAI-compatible)",
    )  # fmt: skip
    bias = run.add_argument_group("llm-bias-bench")
    bias.add_argument("--topics", type=Path, help="topics file (ours or the authors' format)")
    bias.add_argument("--categories", help="comma-separated: direct,indirect (default both)")
    bias.add_argument("--turns", type=int, help="user messages per conversation (default 5)")
    bias.add_argument("--replicates", type=int, help="conversations per cell, majority verdict")
    bias.add_argument("--judge-samples", type=int, help="judge calls per verdict, majority")
    bias.add_argument("--judge-every-turn", action="store_true", help="verdict trajectories")
    bias.add_argument("--blind-judge", action="store_true", help="also judge without persona")
    issue = run.add_argument_group("issuebench")
    run.add_argument(
        "--templates", help="IssueBench: sample N templates; prior-prejudice: T1,T2,T3,T4"
    )
    issue.add_argument("--framings", help="comma-separated: neutral,pro,con (default all)")
    issue.add_argument("--issues-file", type=Path, help="issues (JSONL, or the authors' CSV)")
    issue.add_argument("--templates-file", type=Path, help="templates (JSONL, or authors' CSV)")
    issue.add_argument("--dedupe", action="store_true", help="de-duplicate templates first")
    issue.add_argument("--shard-size", type=int, help="prompts per resumable shard")
    issue.add_argument("--batch", action="store_true", help="use the provider's batch API")
    issue.add_argument("--voters", type=Path, help="iSideWith-format voter shares")
    issue.add_argument("--protocol", choices=["recommended", "paper"], help="paper: T=1, 5 calls")
    issue.add_argument("--calls", type=int, help="responses per prompt, pooled (default 1)")
    conviction = run.add_argument_group("conviction")
    conviction.add_argument("--statements", type=Path, help="statements (JSONL or CSV)")
    conviction.add_argument("--samples", type=int, help="sampled answers per statement (10)")
    conviction.add_argument("--argument-sets", type=int, help="argument sets per statement (3)")
    prior = run.add_argument_group("prior-prejudice")
    prior.add_argument(
        "--claims", type=Path, help="claims file (JSONL, or ConvinceQA CSV/JSONL; default: bundled)"
    )
    prior.add_argument("--no-arguments", action="store_true", help="rate bare claims only")
    prior.add_argument(
        "--no-negations", action="store_true",
        help="do not have the writer negate claims that lack one (their bare delta is skipped)",
    )
    prior.add_argument(
        "--writer-conversation", action="store_true",
        help="supporting harmful/misinformation arguments via the appendix A.3 conversation",
    )  # fmt: skip
    prior.add_argument("--no-probe", action="store_true", help="skip persuasion-as-probe")
    prior.add_argument("--no-cross-task", action="store_true", help="skip essay/debate checks")
    bias.add_argument(
        "--price",
        action="append",
        help="MODEL=IN,OUT: USD per million input and output tokens, for the cost summary",
    )


def _add_analyze(subparsers: argparse._SubParsersAction) -> None:
    analyze = subparsers.add_parser("analyze", help="recompute tables and summary from logs")
    analyze.add_argument("out", type=Path, help="a run's output folder (holds logs/)")
    analyze.add_argument("--seed", type=int, default=0, help="bootstrap seed")


def _add_import(subparsers: argparse._SubParsersAction) -> None:
    imported = subparsers.add_parser("import", help="re-analyse a published run")
    imported.add_argument(
        "source",
        choices=["millstone", "llm-bias-bench", "issuebench-tables", "issuebench-completions"],
        help="what to import",
    )
    imported.add_argument("path", type=Path, help="the authors' released folder or file")
    imported.add_argument("--out", type=Path, help="output folder (default runs/import-SOURCE)")
    imported.add_argument("--price", action="append", help="MODEL=IN,OUT (USD per 1M tokens)")
    imported.add_argument("--voters", type=Path, help="issuebench: iSideWith voter file")


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
    validate.add_argument("--gold", type=Path, required=True, help="gold annotations (CSV)")
    validate.add_argument("--role", action="append", help="classifier=MODEL (default: embedded)")
    validate.add_argument("--limit", type=int, help="use the first N gold responses")
    validate.add_argument("--out", type=Path, default=Path("runs/issuebench-classifier"))
    validate.add_argument("--display", help="Inspect display")


def _add_embedded(subparsers: argparse._SubParsersAction) -> None:
    embedded = subparsers.add_parser("embedded", help="the embedded offline model")
    commands = embedded.add_subparsers(dest="embedded_command", required=True)
    commands.add_parser("prepare", help="materialise the model folder now (first use does it too)")
    serve = subparsers.add_parser(
        "serve-embedded", help="serve the embedded model on 127.0.0.1 (OpenAI-compatible)"
    )
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--host", default="127.0.0.1", help="listen address (default loopback)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="stancelab",
        description="Probe what language models believe on contested questions.",
    )
    subparsers = parser.add_subparsers(dest="command", required=True)
    _add_run(subparsers)
    _add_report(subparsers)
    _add_analyze(subparsers)
    _add_import(subparsers)
    _add_millstone(subparsers)
    _add_issuebench(subparsers)
    _add_embedded(subparsers)
    return parser


def parse_prices(assignments: list[str] | None) -> dict[str, tuple[float, float]]:
    """`MODEL=IN,OUT` strings -> {model: (USD per 1M input, USD per 1M output tokens)}."""
    prices: dict[str, tuple[float, float]] = {}
    for assignment in assignments or []:
        model, _, values = assignment.rpartition("=")
        try:
            per_input, per_output = (float(part) for part in values.split(","))
        except ValueError:
            raise StancelabError(
                f"--price expects MODEL=IN,OUT in USD per 1M tokens, got '{assignment}'."
            ) from None
        if not model:
            raise StancelabError(f"--price expects MODEL=IN,OUT, got '{assignment}'.")
        prices[resolve_model(model)] = (per_input, per_output)
    return prices


def probe_options(args: argparse.Namespace, roles: tuple[str, ...]) -> dict[str, object]:
    """The options every probe run takes from the command line."""
    return {
        "models": list(resolve_models(args.model)),
        "roles": dict(parse_roles(args.role, roles)),
        "out_dir": args.out or Path("runs") / args.probe,
        "display": args.display,
        **{name: getattr(args, name, None)
           for name in ("max_retries", "timeout", "attempt_timeout", "max_connections")},
    }


def with_results_path(text: str, out_dir: Path) -> str:
    return f"{text}\n\nResults: {out_dir}/summary.json, tables in {out_dir}/tables/"


def _copy_set(options: object, args: argparse.Namespace, names: tuple[str, ...]) -> None:
    for name in names:
        value = getattr(args, name)
        if value is not None and value is not False:
            setattr(options, name, value)


def _millstone_options(args: argparse.Namespace) -> Any:
    from stancelab.millstone.run import ROLES, MillstoneRun

    options = MillstoneRun(
        **probe_options(args, ROLES),
        issues_file=Path(args.issues) if args.issues else None,
        limit_issues=args.limit,
        seed=args.seed,
    )
    _copy_set(options, args,
              ("trials", "max_tokens", "temperature", "choices_per_request", "layout"))  # fmt: skip
    return options


def _bias_bench_options(args: argparse.Namespace) -> Any:
    from stancelab.llm_bias_bench.run import ROLES, BiasBenchRun

    options = BiasBenchRun(
        **probe_options(args, ROLES),
        topics_file=args.topics,
        limit_topics=args.limit,
        categories=args.categories,
        prices=parse_prices(args.price),
    )
    _copy_set(
        options,
        args,
        ("turns", "replicates", "judge_samples", "judge_every_turn", "blind_judge", "max_tokens"),
    )
    return options


def _count(value: str | None, option: str) -> int | None:
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        raise StancelabError(f"{option} expects a number for this probe, got '{value}'.") from None


def _issuebench_options(args: argparse.Namespace) -> Any:
    from stancelab.issuebench.run import ROLES, IssueBenchRun

    options = IssueBenchRun(
        **probe_options(args, ROLES),
        issues_file=args.issues_file,
        templates_file=args.templates_file,
        limit_issues=_count(args.issues, "--issues") or args.limit,
        n_templates=_count(args.templates, "--templates"),
        framings=args.framings,
        seed=args.seed,
        dedupe=args.dedupe,
        shard_size=args.shard_size,
        batch=args.batch,
        voters_file=args.voters,
    )
    _copy_set(options, args, ("max_tokens", "temperature", "protocol", "calls"))
    return options


def _prior_prejudice_options(args: argparse.Namespace) -> Any:
    from stancelab.prior_prejudice.run import ROLES, PriorPrejudiceRun

    options = PriorPrejudiceRun(
        **probe_options(args, ROLES),
        claims_file=args.claims,
        limit=args.limit,
        templates=args.templates,
        generate_arguments=not args.no_arguments,
        write_negations=not args.no_negations,
        writer_conversation=args.writer_conversation,
        probe=not args.no_probe,
        cross_task=not args.no_cross_task,
    )
    if args.max_tokens is not None:
        options.argument_tokens = args.max_tokens
    return options


def _conviction_options(args: argparse.Namespace) -> Any:
    from stancelab.conviction.run import ROLES, ConvictionRun

    options = ConvictionRun(
        **probe_options(args, ROLES),
        statements_file=args.statements,
        limit=args.limit,
    )
    _copy_set(options, args, ("samples", "argument_sets"))
    return options


OPTIONS = {
    "millstone": _millstone_options,
    "llm-bias-bench": _bias_bench_options,
    "issuebench": _issuebench_options,
    "prior-prejudice": _prior_prejudice_options,
    "conviction": _conviction_options,
}
RUN_FUNCTIONS = {
    "millstone": "run_millstone",
    "llm-bias-bench": "run_bias_bench",
    "issuebench": "run_issuebench",
    "prior-prejudice": "run_prior_prejudice",
    "conviction": "run_conviction",
}


def run_probe(name: str, options: Any) -> str:
    """Run a probe with its options; returns the printed summary and where results went."""
    probe = get_probe(name)
    summary = getattr(probe.module("run"), RUN_FUNCTIONS[probe.name])(options)
    return with_results_path(probe.module("results").format_summary(summary), options.out_dir)


def _run(args: argparse.Namespace) -> int:
    args.probe = get_probe(args.probe).name
    print(run_probe(args.probe, OPTIONS[args.probe](args)))
    return 0


def _estimate(args: argparse.Namespace) -> int:
    from stancelab.core.estimate import format_plan, plan_frame

    probe = get_probe(args.probe)
    options = OPTIONS[probe.name](args)
    plans = probe.module("estimate").plan(options)
    models = [str(model) for model in options.models]
    roles = {role: str(model) for role, model in options.roles.items()}
    print(f"{probe.title}: planned calls per subject model and role")
    print(format_plan(plan_frame(plans, models, parse_prices(args.price), roles)))
    return 0


def _report(args: argparse.Namespace) -> int:
    from stancelab.report.build import build_report, format_profiles

    result = build_report(args.folders, args.output, parse_prices(args.price),
                          args.max_transcripts, args.seed)  # fmt: skip
    print(format_profiles(result))
    print(f"\nReport: {result.path} ({result.size_bytes / 1e6:.1f} MB, {result.runs} runs, "
          f"{result.figures} figures, {result.transcripts} transcripts)")  # fmt: skip
    return 0


def _demo(args: argparse.Namespace) -> int:
    from stancelab.core.demo import run_demo
    from stancelab.report.build import format_profiles

    result = run_demo(args.out, list(resolve_models(args.model)), args.display)
    print(format_profiles(result))
    print(f"\nReport: {result.path.resolve()} ({result.size_bytes / 1e6:.1f} MB)")
    if args.open:
        import webbrowser

        webbrowser.open(result.path.resolve().as_uri())
    return 0


def probes_in(logs_dir: Path) -> list[str]:
    """Which probes have logs in a folder (read from the log headers)."""
    from inspect_ai.log import read_eval_log

    from stancelab.core.logs import log_files

    found = set()
    for path in log_files(logs_dir):
        probe = probe_for_task(read_eval_log(str(path), header_only=True).eval.task)
        if probe is not None:
            found.add(probe.name)
    return [probe for probe in PROBES if probe in found]


def _analyze(args: argparse.Namespace) -> int:
    probes = probes_in(args.out / "logs")
    if not probes:
        raise StancelabError(f"No stancelab probe logs under {args.out / 'logs'}")
    for probe in probes:
        results = get_probe(probe).module("results")
        print(results.format_summary(results.analyze(args.out, seed=args.seed)))
    return 0


def _import(args: argparse.Namespace) -> int:
    args.out = args.out or Path("runs") / f"import-{args.source}"
    if args.source == "millstone":
        from stancelab.millstone.released import import_released
        from stancelab.millstone.results import format_summary as format_millstone

        print(with_results_path(format_millstone(import_released(args.path, args.out)), args.out))
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
    report = validate_classifier(args.gold, classifier, args.out, args.limit, args.display)
    print(
        f"classifier {classifier} on {report['n']} gold responses: macro F1 {report['macro_f1']:.3f}, "
        f"collapsed 4-label F1 {report['collapsed_macro_f1']:.3f}, unparsed {report['unparsed']}"
    )
    print(report["per_class"].round(3).to_string(index=False))
    print(report["confusion"].to_string())
    return 0


def _embedded(args: argparse.Namespace) -> int:
    from stancelab.core.embedded import materialise

    print(materialise())
    return 0


def _serve_embedded(args: argparse.Namespace) -> int:
    from stancelab.core.serve import serve_embedded

    return serve_embedded(args.port, args.host)


COMMANDS = {
    "serve-embedded": _serve_embedded,
    "run": _run,
    "estimate": _estimate,
    "report": _report,
    "demo": _demo,
    "analyze": _analyze,
    "import": _import,
    "millstone": _millstone,
    "issuebench": _issuebench,
    "embedded": _embedded,
}


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
