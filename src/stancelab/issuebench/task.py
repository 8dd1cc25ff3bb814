"""Inspect tasks `stancelab/issuebench` and `stancelab/issuebench_classifier_validation`."""

from __future__ import annotations

import csv
import itertools
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import CachePolicy, GenerateConfig
from inspect_ai.solver import Generate, Solver, TaskState, generate, solver

from stancelab.core.data.files import parse_subset
from stancelab.core.data.topics import select_and_limit
from stancelab.core.errors import DataFileError
from stancelab.core.runs.task_args import check_task_args, one_line_errors
from stancelab.issuebench.dataset import (
    AUTHORS_SAMPLE_SIZE,
    FRAMINGS,
    Framing,
    Issue,
    Prompt,
    authors_sample,
    deduplicate_templates,
    iter_prompts,
    load_issues,
    load_templates,
    sample_templates,
)
from stancelab.issuebench.labels import parse_gold_label
from stancelab.issuebench.prompts import DEFAULT_STANCE_TEMPLATE, stance_template
from stancelab.issuebench.release import DEFAULT_COMMIT, prompt_files
from stancelab.issuebench.scorers import CLASSIFIER_TEMPERATURE, gold_agreement, stance_classifier

DEFAULT_MAX_TOKENS = 1024  # appendix J, Table 11
DEFAULT_TEMPERATURE = 0.0  # the paper's recommendation for new runs (appendix H)


def parse_framings(framings: str | list[str] | tuple[str, ...] | None) -> tuple[Framing, ...]:
    return parse_subset(framings, FRAMINGS, "framings")  # type: ignore[return-value]


def prompt_sample(prompt: Prompt, issue: Issue) -> Sample:
    return Sample(
        id=prompt.id,
        input=prompt.text,
        metadata={
            "issue_id": prompt.issue_id,
            "framing": prompt.framing,
            "template_id": prompt.template_id,
            "issue_prompt": issue.phrase(prompt.framing),
            "issue_neutral": issue.neutral,
            "issue_pro": issue.pro,
            "issue_con": issue.con,
            **issue.tag(),
        },
    )


def select_prompts(
    issues_file: str | None,
    templates_file: str | None,
    limit_issues: int | None,
    n_templates: int | None,
    framings: tuple[Framing, ...],
    seed: int,
    dedupe: bool,
    authors_draw: bool = False,
    shared_topics: str = "",
    prompts: str = "authors",
    authors_commit: str = DEFAULT_COMMIT,
    authors_repo: str | None = None,
) -> tuple[list[Issue], list, int]:
    """(issues, templates, number of prompts) for a run, without building the prompts. The
    files given, else the authors' published ones (`prompts="authors"`, `release.py`) or
    stancelab's bundled set (`"stancelab"`). `authors_draw` samples templates as the authors did
    (default 1,000, their seed); the authors' published sample is already their de-duplicated
    draw, so neither step applies to it. `shared_topics` keeps the issues of those shared
    topics; `limit_issues` then counts per topic."""
    files = prompt_files(prompts, authors_commit, authors_repo, issues_file, templates_file)
    if prompts == "authors" and not templates_file:
        dedupe = authors_draw = False
    issues = select_and_limit(load_issues(files.issues), shared_topics, limit_issues, "issue")
    templates = load_templates(files.templates)
    if dedupe:
        templates = deduplicate_templates(templates)
    if authors_draw:
        templates = authors_sample(templates, n_templates or AUTHORS_SAMPLE_SIZE)
    else:
        templates = sample_templates(templates, n_templates, seed)
    return issues, templates, len(issues) * len(framings) * len(templates)


@task
@one_line_errors
def issuebench(
    issues_file: str | None = None,
    templates_file: str | None = None,
    limit: int | None = None,
    n_templates: int | None = None,
    framings: str | None = None,
    seed: int = 0,
    dedupe: bool = False,
    authors_sample: bool = False,
    shard: int = 0,
    shard_size: int | None = None,
    temperature: float = DEFAULT_TEMPERATURE,
    calls: int = 1,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    classifier_temperature: float = CLASSIFIER_TEMPERATURE,
    batch: bool = False,
    shared_topics: str = "",
    prompts: str = "authors",
    authors_commit: str = DEFAULT_COMMIT,
    authors_repo: str | None = None,
    **unknown: Any,
) -> Task:
    """IssueBench: the subject writes for each prompt; role `classifier` labels the stance.

    Args:
        issues_file: issues (our JSONL or the authors' issues.csv); default: per `prompts`.
        templates_file: templates (our JSONL or the authors' templates CSV); default: per
            `prompts`.
        limit: use the first N issues.
        n_templates: a seeded sample of N templates (all when unset).
        framings: comma-separated subset of neutral,pro,con.
        seed: template sampling seed.
        dedupe: de-duplicate templates first (appendix G), for the authors' full set.
        authors_sample: draw N templates (default 1,000) as the authors drew theirs.
        shard, shard_size: run only prompts [shard*size, (shard+1)*size) of the stream.
        temperature, max_tokens: the subject's generation settings.
        calls: responses per prompt (Inspect epochs), all pooled; the paper: 5 at temperature 1.
        classifier_temperature: the classifier's temperature (paper: 1.0).
        batch: use the provider's batch API where Inspect supports it.
        shared_topics: only issues tagged with these shared topics ("all", or "a,b"; "" = off),
            `limit` then counts per topic.
        prompts: `authors` (default: the authors' published issues.csv and the paper's 1,000
            templates, templates_sample.csv, read at run time from paul-rottger/issuebench at
            `authors_commit`) or `stancelab` (the bundled set, not the paper's prompts).
        authors_commit: a pinned commit of paul-rottger/issuebench (default: 730aa08).
        authors_repo: a checkout of it to read the files from (default: the cache, else
            fetched once).
    """
    check_task_args(issuebench, unknown, {
        "limit": (limit, 1), "n_templates": (n_templates, 1), "shard": (shard, 0), "shard_size": (shard_size, 1),
        "temperature": (temperature, 0), "calls": (calls, 1), "max_tokens": (max_tokens, 1),
        "classifier_temperature": (classifier_temperature, 0)})  # fmt: skip
    chosen = parse_framings(framings)
    issues, templates, _ = select_prompts(
        issues_file, templates_file, limit, n_templates, chosen, seed, dedupe, authors_sample,
        shared_topics, prompts, authors_commit, authors_repo,
    )  # fmt: skip
    files = prompt_files(prompts, authors_commit, authors_repo, issues_file, templates_file)
    by_id = {issue.id: issue for issue in issues}
    stream = iter_prompts(issues, templates, chosen)
    if shard_size:
        stream = itertools.islice(stream, shard * shard_size, (shard + 1) * shard_size)
    samples = [prompt_sample(prompt, by_id[prompt.issue_id]) for prompt in stream]
    return Task(
        dataset=MemoryDataset(samples, name="issuebench"),
        solver=generate(cache=CachePolicy(expiry=None)),
        scorer=stance_classifier(temperature=classifier_temperature),
        config=GenerateConfig(temperature=temperature, max_tokens=max_tokens, batch=batch or None),
        epochs=calls,
        metadata={
            "probe": "issuebench",
            "shard": shard,
            "shard_size": shard_size,
            "prompts": prompts,
            "prompts_label": files.label,
        },
        version=1,
    )


GOLD_LABEL_COLUMNS = ("final_label", "annot1_label")


def load_gold(path: Path | str) -> list[Sample]:
    """Gold-annotated responses from the authors' annotation CSVs (500 or 900 rows)."""
    path = Path(path)
    required = ("topic_polarity", "topic_neutral", "topic_pro", "topic_con", "response_text")
    if not path.exists():
        raise DataFileError(path, None, None, "file does not exist")
    samples = []
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        columns = set(reader.fieldnames or [])
        label_column = next((c for c in GOLD_LABEL_COLUMNS if c in columns), None)
        missing = set(required) - columns
        if missing or label_column is None:
            raise DataFileError(
                path, 1, sorted(missing)[0] if missing else "final_label", "missing column"
            )
        for index, row in enumerate(reader):
            gold = parse_gold_label(row[label_column])
            if gold is None:
                raise DataFileError(
                    path,
                    reader.line_num,
                    label_column,
                    f"not a stance label: {row[label_column]!r}",
                )
            framing = row["topic_polarity"]
            if framing not in FRAMINGS:
                raise DataFileError(
                    path, reader.line_num, "topic_polarity", f"unknown framing {framing!r}"
                )
            phrases = {
                "neutral": row["topic_neutral"],
                "pro": row["topic_pro"],
                "con": row["topic_con"],
            }
            samples.append(
                Sample(
                    id=row.get("common_id") or f"gold-{index + 1}",
                    input=row["response_text"][:200] or "(empty response)",
                    target=gold,
                    metadata={
                        "response_text": row["response_text"],
                        "framing": framing,
                        "issue_prompt": phrases[framing],
                        "issue_neutral": phrases["neutral"],
                        "issue_pro": phrases["pro"],
                        "issue_con": phrases["con"],
                    },
                )
            )
    return samples


@solver
def nothing() -> Solver:
    """No generation: the classifier is called by the scorer."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        return state

    return solve


@task
@one_line_errors
def issuebench_classifier_validation(
    gold_file: str,
    limit: int | None = None,
    classifier_temperature: float = CLASSIFIER_TEMPERATURE,
    stance_templates_file: str | None = None,
    stance_template_id: str = DEFAULT_STANCE_TEMPLATE,
    **unknown: Any,
) -> Task:
    """Score the `classifier` role (default: the eval model) against gold stance labels, prompted
    with one stance template: template 5 (built in), or any of `stance_templates_file` (the
    authors' `stance_templates.csv`: Table 15 compares its eight)."""
    check_task_args(
        issuebench_classifier_validation,
        unknown,
        {"limit": (limit, 1), "classifier_temperature": (classifier_temperature, 0)},
    )
    template = stance_template(stance_templates_file, stance_template_id)
    samples = load_gold(gold_file)[:limit] if limit else load_gold(gold_file)
    return Task(
        dataset=MemoryDataset(samples, name="issuebench_gold"),
        solver=nothing(),
        scorer=gold_agreement(temperature=classifier_temperature, template=template),
        metadata={"probe": "issuebench-validation", "stance_template": stance_template_id},
        version=1,
    )
