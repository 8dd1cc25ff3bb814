"""Predictive and semantic entropy (Kadavath et al. 2022; Kuhn et al. 2023; Farquhar et al.
2024), and AUROC with a stratified bootstrap over statements."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

import anyio
import numpy as np
from inspect_ai.util import collect
from scipy.special import logsumexp
from scipy.stats import entropy, rankdata
from sklearn.metrics import roc_auc_score

from stancelab.core.stats.intervals import DEFAULT_RESAMPLES, Estimate, stratified_bootstrap_ci

Entails = Callable[[int, int], Awaitable[bool]]


def normalised_logprobs(sequence_logprobs: Sequence[float], lengths: Sequence[int]) -> np.ndarray:
    """Length-normalised log-likelihood of each answer: its mean token log-probability."""
    return np.asarray(sequence_logprobs, dtype=float) / np.asarray(lengths, dtype=float)


def predictive_entropy(
    sequence_logprobs: Sequence[float], lengths: Sequence[int] | None = None
) -> float:
    """Monte Carlo estimate −mean log P(y|x) over samples; length-normalised when lengths are given."""
    if not len(sequence_logprobs):
        return float("nan")
    values = (
        normalised_logprobs(sequence_logprobs, lengths)
        if lengths is not None
        else np.asarray(sequence_logprobs, dtype=float)
    )
    return -float(np.mean(values))


Relation = Callable[[int, int], Awaitable[str]]
Same = Callable[[int, int], Awaitable[bool]]
STRICT, NON_STRICT = "strict", "non-strict"
CLUSTERING = (STRICT, NON_STRICT)
"""How two answers are judged to mean the same, each as Farquhar et al. (2024)'s code
(`get_semantic_ids`) judges it, the question put before each answer in both: `strict`,
entailment both ways, their code's default (`--strict_entailment`, and Kuhn et al. 2023's
rule) and stancelab's; `non-strict`, their named variant: neither way a contradiction and not
neutral both ways."""


def equivalent(forward: str, backward: str, rule: str = STRICT) -> bool:
    """Whether two answers share a meaning, from the NLI labels of (a, b) and (b, a)."""
    if rule == STRICT:
        return forward == backward == "entailment"
    if rule == NON_STRICT:
        return "contradiction" not in (forward, backward) and (forward, backward) != (
            "neutral",
            "neutral",
        )
    raise ValueError(f"clustering must be one of {', '.join(CLUSTERING)}, got '{rule}'")


async def _cluster(n: int, same: Same) -> list[int]:
    """Cluster ids as Farquhar et al.'s `get_semantic_ids` assigns them: in order, an answer
    not yet in a cluster opens one and pulls in every later answer `same` pairs it with, an
    answer already placed included, so an answer that means the same as two openers ends in
    the later one's cluster (no chaining: only openers pull answers in). The same calls, each
    asked as soon as its opener is known: an answer opens a cluster once every earlier
    opener's comparison with it came back apart, so its own comparisons start then, not once
    every comparison of the earlier openers is back (the run waits on one comparison per
    opener on the way to an answer, not on the slowest of each opener's)."""
    decided = [anyio.Event() for _ in range(n)]
    opens = [False] * n
    pulled: dict[tuple[int, int], bool] = {}

    async def compare(opener: int, index: int) -> None:
        await decided[opener].wait()
        if opens[opener]:
            pulled[opener, index] = await same(opener, index)

    async def place(index: int) -> None:
        await collect(*(compare(opener, index) for opener in range(index)))
        opens[index] = not any(pulled.get((opener, index)) for opener in range(index))
        decided[index].set()

    await collect(*(place(index) for index in range(n)))
    return _ids(opens, pulled)


def _ids(opens: list[bool], pulled: dict[tuple[int, int], bool]) -> list[int]:
    """Each opener's cluster numbered in order; every other answer in the cluster of the last
    opener that pulled it."""
    ids: list[int] = []
    for index, opener in enumerate(opens):
        if opener:
            ids.append(max(ids, default=-1) + 1)
        else:
            last = max(o for o in range(index) if pulled.get((o, index)))
            ids.append(ids[last])
    return ids


async def cluster_by_entailment(n: int, entails: Entails) -> list[int]:
    """Cluster ids for n answers by bidirectional entailment (`_cluster`); `entails(a, b)` is
    awaited only where the answer is not yet decided."""

    async def same(first: int, index: int) -> bool:
        return await entails(first, index) and await entails(index, first)

    return await _cluster(n, same)


async def cluster_by_relation(n: int, relation: Relation, rule: str = STRICT) -> list[int]:
    """Cluster ids for n answers under `rule` (`CLUSTERING`), from `relation(a, b)`, the NLI
    label (entailment / neutral / contradiction) of premise a and hypothesis b; the backward
    label is asked only when the forward one leaves the pair undecided."""
    if rule not in CLUSTERING:
        raise ValueError(f"clustering must be one of {', '.join(CLUSTERING)}, got '{rule}'")

    async def same(first: int, index: int) -> bool:
        forward = await relation(first, index)
        if forward == "contradiction" or (rule == STRICT and forward != "entailment"):
            return False
        return equivalent(forward, await relation(index, first), rule)

    return await _cluster(n, same)


def semantic_entropy(
    clusters: Sequence[int], sequence_logprobs: Sequence[float], lengths: Sequence[int]
) -> float:
    """−Σ P(C) ln P(C) over meaning clusters. As in Kuhn et al. (2023) and Farquhar et al.
    (2024), each answer weighs its length-normalised likelihood (geometric-mean token
    probability), a cluster the sum of its answers' weights, normalised over the samples;
    summed log-probabilities would hand all the mass to the shortest answer."""
    ids = np.asarray(clusters)
    weights = normalised_logprobs(sequence_logprobs, lengths)
    cluster_logs = np.array([logsumexp(weights[ids == c]) for c in np.unique(ids)])
    return float(entropy(np.exp(cluster_logs - logsumexp(cluster_logs))))


def discrete_semantic_entropy(clusters: Sequence[int]) -> float:
    """Entropy of the cluster shares (black-box semantic entropy)."""
    return float(entropy(np.bincount(np.asarray(clusters))))


def auroc(scores: Sequence[float] | np.ndarray, positives: Sequence[bool] | np.ndarray) -> float:
    """AUROC of `scores` for `positives` (sklearn; ties count half); NaN scores are dropped,
    and the AUROC is NaN unless both classes remain."""
    values = np.asarray(scores, dtype=float)
    classes = np.asarray(positives, dtype=bool)
    keep = ~np.isnan(values)
    if len(set(classes[keep].tolist())) < 2:
        return float("nan")
    return float(roc_auc_score(classes[keep], values[keep]))


def _auroc_by_ranks(values: np.ndarray, classes: np.ndarray) -> float:
    """AUROC as the Mann-Whitney statistic over ranks (ties count half): sklearn's value,
    cheap enough for every bootstrap replicate."""
    positives = int(classes.sum())
    negatives = classes.size - positives
    if not positives or not negatives:
        return float("nan")
    ranks = rankdata(values)
    return float((ranks[classes].sum() - positives * (positives + 1) / 2) / (positives * negatives))


STRATUM_NAMES = {
    "performative": "performative statement",
    "true": "true-stance statement",
    "mixed": "statement performative for some models only",
}


def _strata(classes: np.ndarray, labels: np.ndarray) -> dict[str, list[str]]:
    """Statements by the classes of their rows: performative only, true only, both."""
    strata: dict[str, list[str]] = {"performative": [], "true": [], "mixed": []}
    for name in np.unique(labels):
        mine = classes[labels == name]
        strata[
            "mixed" if mine.any() and not mine.all() else "performative" if mine.all() else "true"
        ].append(name)
    return {kind: names for kind, names in strata.items() if names}


def auroc_ci(
    scores: Sequence[float],
    positives: Sequence[bool],
    groups: Sequence[str] | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> tuple[Estimate, str]:
    """AUROC with a 95% BCa bootstrap CI over groups (statements), stratified (scipy, through
    `core.stats.intervals.stratified_bootstrap_ci`): performative statements, true ones and those whose
    rows hold both (pooled over models) are resampled apart, so no replicate lacks a class; a
    drawn statement brings all its rows. Without groups every row is its own group. Returns the
    estimate (`n`: statements) and, when it has no CI, why; NaN scores are dropped."""
    values, classes = np.asarray(scores, dtype=float), np.asarray(positives, dtype=bool)
    labels = np.asarray(groups if groups is not None else np.arange(len(values))).astype(str)
    keep = ~np.isnan(values)
    values, classes, labels = values[keep], classes[keep], labels[keep]
    point = auroc(values, classes)
    statements = len(np.unique(labels))
    if np.isnan(point):
        return Estimate(
            point, float("nan"), float("nan"), statements
        ), "no CI (no AUROC: one class only)"
    strata = _strata(classes, labels)
    rows = {name: np.flatnonzero(labels == name) for name in np.unique(labels)}
    lone = [kind for kind, names in strata.items() if len(names) < 2]
    if lone:
        return Estimate(
            point, float("nan"), float("nan"), statements
        ), f"no CI (1 {STRATUM_NAMES[lone[0]]})"

    def statistic(*drawn: np.ndarray) -> float:
        picked = np.concatenate([rows[name] for names in drawn for name in names])
        return _auroc_by_ranks(values[picked], classes[picked])

    estimate = stratified_bootstrap_ci(statistic, list(strata.values()), resamples, seed=seed)
    return estimate, "" if not np.isnan(
        estimate.ci_low
    ) else "no CI (every resample gives the same AUROC)"
