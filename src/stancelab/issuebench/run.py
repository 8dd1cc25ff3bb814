"""Running IssueBench in resumable shards, importing released tables, validating a classifier."""

from __future__ import annotations

import inspect
import math
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from inspect_ai.model import Model

from stancelab.core.errors import StancelabError
from stancelab.core.results.logs import log_headers, shard_of_log
from stancelab.core.runs.evals import ProbeRun, run_eval
from stancelab.core.runs.shards import parse_shard
from stancelab.issuebench.dataset import FRAMINGS, load_issues, load_templates
from stancelab.issuebench.descriptives import (
    FIGURE_3,
    TABLE_5,
    EmbedderLoader,
    TaggerLoader,
    describe_released,
)
from stancelab.issuebench.prompts import DEFAULT_STANCE_TEMPLATE, load_stance_templates
from stancelab.issuebench.release import DEFAULT_COMMIT, check_available
from stancelab.issuebench.results import (
    TABLES_DIR,
    TASK_NAME,
    VOTERS_FILE,
    analyze,
    build_summary,
    compute_tables,
    log_run_key,
    results_from_responses,
    run_key,
    write_results,
)
from stancelab.issuebench.scorers import CLASSIFIER_ROLE
from stancelab.issuebench.stances import TOPIC_RESPONSES, neutral_tagged
from stancelab.issuebench.tables import load_voters, read_released_tables
from stancelab.issuebench.task import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_TEMPERATURE,
    issuebench,
    issuebench_classifier_validation,
    parse_framings,
    select_prompts,
)
from stancelab.issuebench.validation import (
    template_scores,
    template_table,
    validation_labels,
    validation_report,
)

ROLES = (CLASSIFIER_ROLE,)


# The paper's main protocol (§4.2, appendices G and J): de-duplicated templates, the authors'
# 1,000-template draw, temperature 1 and 5 calls per prompt, all calls pooled. The default is
# appendix H's recommendation for new runs: temperature 0 and one call per prompt.
PROTOCOLS: dict[str, dict[str, Any]] = {
    "recommended": {"temperature": DEFAULT_TEMPERATURE, "calls": 1, "dedupe": False, "authors_sample": False},
    "paper": {"temperature": 1.0, "calls": 5, "dedupe": True, "authors_sample": True},
}  # fmt: skip


@dataclass
class IssueBenchRun(ProbeRun):
    """Options of one `stancelab run issuebench`; unset options take the protocol's values."""

    issues_file: Path | None = None
    """issues (JSONL, or the authors' CSV; default: per --prompts)"""
    templates_file: Path | None = None
    """templates (JSONL, or the authors' CSV; default: per --prompts)"""
    n_templates: int | None = field(default=None, metadata={"embedded": 3, "method": "all"})
    """sample N templates (default all)"""
    framings: str | None = field(default=None, metadata={"among": FRAMINGS})
    """comma-separated: neutral,pro,con (default all)"""
    dedupe: bool = False
    """de-duplicate templates first"""
    authors_sample: bool = False
    """the authors' sample of templates"""
    shard_size: int | None = None
    """prompts per resumable shard"""
    protocol: Literal["recommended", "paper"] = "recommended"
    """recommended, or paper: T=1, 5 calls"""
    temperature: float | None = None
    """subject sampling temperature (default: the protocol's)"""
    calls: int | None = None
    """responses per prompt, pooled (default: the protocol's)"""
    max_tokens: int = field(default=DEFAULT_MAX_TOKENS, metadata={"caps": ("subject",)})
    """cap on each generated message"""
    voters_file: Path | None = None
    """iSideWith-format voter shares"""
    shared_topics: str = ""
    """only issues of these shared topics: all, or a,b (default: off)"""
    prompts: Literal["authors", "stancelab"] = "authors"
    """authors: the authors' issues.csv and the paper's 1,000 templates, read from
    paul-rottger/issuebench at run time; stancelab: the bundled set (not the paper's prompts)"""
    authors_commit: str = DEFAULT_COMMIT
    """pinned commit of paul-rottger/issuebench (default: 730aa08)"""
    authors_repo: str | None = field(default=None, metadata={"metavar": "DIR"})
    """a checkout of paul-rottger/issuebench to read the files from (default: the cache, else
    fetched once)"""

    def setting(self, name: str) -> Any:
        """An option's value, or the protocol's when the option is unset (or off)."""
        if self.protocol not in PROTOCOLS:
            raise StancelabError(
                f"Unknown IssueBench protocol '{self.protocol}' (use {', '.join(PROTOCOLS)})."
            )
        value = getattr(self, name)
        return PROTOCOLS[self.protocol][name] if value is None or value is False else value

    def task_args(self, shard: int) -> dict[str, Any]:
        return {
            "issues_file": str(self.issues_file) if self.issues_file else None,
            "templates_file": str(self.templates_file) if self.templates_file else None,
            "limit": self.limit,
            "n_templates": self.n_templates,
            "framings": self.framings,
            "seed": self.seed,
            "dedupe": self.setting("dedupe"),
            "authors_sample": self.setting("authors_sample"),
            "shard": shard,
            "shard_size": self.shard_size,
            "temperature": self.setting("temperature"),
            "calls": self.setting("calls"),
            "max_tokens": self.max_tokens,
            "batch": self.batch,
            "shared_topics": self.shared_topics,
            "prompts": self.prompts,
            "authors_commit": self.authors_commit,
            "authors_repo": self.authors_repo,
        }

    def selection(self) -> tuple[list, list, int]:
        """(issues, templates, prompts) this run asks about."""
        return select_prompts(
            str(self.issues_file) if self.issues_file else None,
            str(self.templates_file) if self.templates_file else None,
            self.limit, self.n_templates, parse_framings(self.framings), self.seed,
            self.setting("dedupe"), self.setting("authors_sample"), self.shared_topics,
            self.prompts, self.authors_commit, self.authors_repo,
        )  # fmt: skip

    def roles_of(self, model: str | Model) -> dict[str, str]:
        """The model in every helper role for one subject model (unbound roles: itself)."""
        return {role: _model_name(self.roles.get(role, model)) for role in ROLES}

    def run_keys(self) -> dict[str, str]:
        """Per subject model, the key its logs carry when they belong to this run (the task's
        defaults included, as Inspect records them)."""
        args = _task_defaults() | self.task_args(0)
        return {_model_name(m): run_key(args, self.roles_of(m)) for m in self.models}


def prepare(run: IssueBenchRun) -> None:
    """Before a run: the authors' files it reads at hand (checked, from the checkout or the
    cache, or fetched once); one line and no call otherwise."""
    check_available(run.prompts, run.authors_commit, run.authors_repo, run.issues_file,
                    run.templates_file)  # fmt: skip


def read_inputs(run: IssueBenchRun) -> None:
    """Before a run: its issues, templates and voters files read and validated (one line when
    one cannot be read)."""
    if run.issues_file is not None:
        load_issues(run.issues_file)
    if run.templates_file is not None:
        load_templates(run.templates_file)
    if run.voters_file is not None:
        load_voters(run.voters_file)


def _task_defaults() -> dict[str, Any]:
    parameters = inspect.signature(issuebench).parameters.values()
    return {p.name: p.default for p in parameters if p.default is not inspect.Parameter.empty}


def _model_name(model: str | Model) -> str:
    return model if isinstance(model, str) else str(model)


def _finished_shards(location: str, run: IssueBenchRun) -> set[tuple[str, int]]:
    """(model, shard) pairs with a successful log at the log location (a folder or a URL) for
    these exact task arguments and the same model in every role: another classifier, or
    another selection, is not finished."""
    done = set()
    keys = run.run_keys()
    for header in log_headers(location):
        if header.eval.task.split("/")[-1] != TASK_NAME or header.status != "success":
            continue
        if shard_of_log(header.eval.metadata) != str(parse_shard(run.shard) or ""):
            continue  # a worker's shard of the samples is not the whole piece
        args = header.eval.task_args or {}
        shard = int(args.get("shard", 0))
        same_args = {k: v for k, v in args.items() if k in run.task_args(shard)} == run.task_args(
            shard
        )
        if same_args and log_run_key(header) == keys.get(header.eval.model):
            done.add((header.eval.model, shard))
    return done


def run_issuebench(run: IssueBenchRun) -> dict[str, Any]:
    """Generate and classify every prompt shard by shard (skipping finished shards), then
    analyse; for a shard of the samples (`--shard`), where its logs went. (`stancelab run` adds
    the run's record and the models' paired differences: `core.runs.pipeline`.)"""
    run_evals(run)
    if run.shard:
        return run.shard_result()
    return analyze(run.out_dir, seed=run.seed, keys=run.run_keys())


def run_evals(run: IssueBenchRun) -> None:
    """Generate and classify every prompt, piece by piece (`--shard-size`), skipping the pieces
    a finished log of this run already holds."""
    run.out_dir.mkdir(parents=True, exist_ok=True)
    if run.voters_file:
        load_voters(run.voters_file)  # fail before spending anything
        shutil.copyfile(run.voters_file, run.out_dir / VOTERS_FILE)
    _, _, total = run.selection()
    if total == 0:
        raise StancelabError(
            "The selection holds no prompts (check --issues-file, --n-templates, --framings)."
        )
    shards = math.ceil(total / run.shard_size) if run.shard_size else 1
    logs_dir = run.log_location()
    for shard in range(shards):
        done = _finished_shards(logs_dir, run)
        pending = [m for m in run.models if (_model_name(m), shard) not in done]
        if not pending:
            continue
        run_eval(
            issuebench(**run.task_args(shard)),
            pending,
            run.roles,
            logs_dir,
            role_names=ROLES,
            **run.eval_args(),
            **run.shard_args(),
        )


def import_released_tables(
    source: Path,
    out_dir: Path,
    voters_file: Path | None = None,
    load_embedder: EmbedderLoader | None = None,
    load_tagger: TaggerLoader | None = None,
) -> dict[str, Any]:
    """Re-analyse the authors' released per-issue tables (and voter data) with stancelab's code;
    Table 5 and Figure 3 from the issues and templates beside them, where their models load."""
    dists = read_released_tables(source)
    voters_path = voters_file or (
        source / "isidewith.csv" if (source / "isidewith.csv").exists() else None
    )
    voters = load_voters(voters_path) if voters_path else None
    tables = compute_tables(dists, voters)
    summary = build_summary(tables) | {"source": "released tables"}
    out_dir.mkdir(parents=True, exist_ok=True)
    _add_descriptives(source, out_dir, tables, summary, load_embedder, load_tagger)
    write_results(out_dir, tables, summary)
    return summary


def import_completions(
    source: Path,
    out_dir: Path,
    voters_file: Path | None = None,
    seed: int = 0,
    load_embedder: EmbedderLoader | None = None,
    load_tagger: TaggerLoader | None = None,
) -> dict[str, Any]:
    """Re-analyse the authors' raw completions release (one row per response and call, with
    the classifier's label), so that every figure, Figures 9 and 10 included, is recomputed;
    Table 5 and Figure 3 as for the released tables (the issues and templates beside them)."""
    from stancelab.issuebench.completions import load_completions

    responses = load_completions(source)
    voters = load_voters(voters_file) if voters_file else None
    tables, summary = results_from_responses(responses, voters, seed)
    summary["source"] = "released completions"
    tables[TOPIC_RESPONSES] = neutral_tagged(responses)  # the shared topics' units, kept small
    out_dir.mkdir(parents=True, exist_ok=True)
    _add_descriptives(source, out_dir, tables, summary, load_embedder, load_tagger)
    write_results(out_dir, tables, summary)
    return summary


def _add_descriptives(
    source: Path,
    out_dir: Path,
    tables: dict[str, Any],
    summary: dict[str, Any],
    load_embedder: EmbedderLoader | None,
    load_tagger: TaggerLoader | None,
) -> None:
    """Table 5 and Figure 3 into the tables (where measured; an earlier import's table of one
    not measured now is removed) and the summary (either way)."""
    measured, entries = describe_released(source, load_embedder, load_tagger)
    tables.update(measured)
    for name in {TABLE_5, FIGURE_3} - set(measured):
        (out_dir / TABLES_DIR / f"{name}.csv").unlink(missing_ok=True)
    summary["descriptives"] = entries


def validate_classifier(
    gold_file: Path,
    classifier: str | Model,
    out_dir: Path,
    limit: int | None = None,
    display: str | None = None,
    stance_templates_file: Path | None = None,
    template_ids: list[str] | None = None,
) -> dict[str, Any]:
    """Label gold-annotated responses with `classifier` and score it (macro F1, confusion), with
    template 5, or with each of `template_ids` from `stance_templates_file` ("all": every one).
    Every template's labels are logged under `out_dir/logs`, and Table 15 (macro F1 per
    classifier and template) is recomputed from all logs there (`classifier_templates.csv`), so
    runs of several classifiers into one folder build the whole table. Returns the report of the
    first template."""
    import json

    chosen = _template_ids(stance_templates_file, template_ids)
    first: tuple[list[str], list[str]] = ([], [])
    for template_id in chosen:
        task = issuebench_classifier_validation(
            gold_file=str(gold_file), limit=limit,
            stance_templates_file=str(stance_templates_file) if stance_templates_file else None,
            stance_template_id=template_id,
        )  # fmt: skip
        (log,) = run_eval(task, [classifier], None, out_dir / "logs", display)
        samples = log.samples or []
        gold = [str(sample.target) for sample in samples]
        predicted = [sample.scores["gold_agreement"].answer or "unparsed" for sample in samples]
        first = first if first[0] else (gold, predicted)
    report = validation_report(*first)
    out_dir.mkdir(parents=True, exist_ok=True)
    report["per_class"].to_csv(out_dir / "classifier_per_class.csv", index=False)
    report["confusion"].to_csv(out_dir / "classifier_confusion.csv")
    summary = {k: v for k, v in report.items() if k not in ("per_class", "confusion")}
    summary["classifier"] = _model_name(classifier)
    summary["template"] = chosen[0]
    scores = template_scores(validation_labels(out_dir / "logs"))
    scores.to_csv(out_dir / "classifier_templates.csv", index=False)
    summary["templates"] = json.loads(scores.to_json(orient="records"))
    (out_dir / "classifier_validation.json").write_text(
        json.dumps(summary, indent=2, sort_keys=True) + "\n"
    )
    report["templates"] = template_table(scores)
    return report


def _template_ids(stance_templates_file: Path | None, template_ids: list[str] | None) -> list[str]:
    """The stance templates to score: template 5 by default; "all" is every template in the file."""
    if not template_ids:
        return [DEFAULT_STANCE_TEMPLATE]
    if "all" in template_ids:
        if stance_templates_file is None:
            raise StancelabError("--stance-template all needs --stance-templates-file.")
        return list(load_stance_templates(stance_templates_file))
    return list(dict.fromkeys(template_ids))


__all__ = [
    "IssueBenchRun",
    "import_completions",
    "import_released_tables",
    "run_issuebench",
    "validate_classifier",
]
