"""Predictive and semantic entropy (Kadavath et al. 2022; Farquhar et al. 2024), and AUROC."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Sequence

import numpy as np

Entails = Callable[[int, int], Awaitable[bool]]


def predictive_entropy(
    sequence_logprobs: Sequence[float], lengths: Sequence[int] | None = None
) -> float:
    """Monte Carlo estimate −mean log P(y|x) over samples; length-normalised when lengths are given."""
    values = [
        lp / n if lengths else lp
        for lp, n in zip(sequence_logprobs, lengths or [1] * len(sequence_logprobs), strict=True)
    ]
    return -float(np.mean(values)) if values else float("nan")


async def cluster_by_entailment(n: int, entails: Entails) -> list[int]:
    """Cluster ids for n answers: an answer joins the first cluster whose first member it
    bidirectionally entails, else opens a new one (so a non-transitive relation cannot chain).
    `entails(a, b)` is awaited only for the pairs the algorithm needs."""
    representatives: list[int] = []
    assignment: list[int] = []
    for index in range(n):
        for cluster, first in enumerate(representatives):
            if await entails(first, index) and await entails(index, first):
                assignment.append(cluster)
                break
        else:
            representatives.append(index)
            assignment.append(len(representatives) - 1)
    return assignment


def semantic_entropy(clusters: Sequence[int], sequence_logprobs: Sequence[float]) -> float:
    """−Σ P(C) ln P(C), P(C) from summed sequence probabilities, normalised over the samples."""
    log_mass: dict[int, list[float]] = {}
    for cluster, logprob in zip(clusters, sequence_logprobs, strict=True):
        log_mass.setdefault(cluster, []).append(logprob)
    cluster_logs = np.array([np.logaddexp.reduce(values) for values in log_mass.values()])
    cluster_logs -= np.logaddexp.reduce(cluster_logs)
    return float(-np.sum(np.exp(cluster_logs) * cluster_logs))


def discrete_semantic_entropy(clusters: Sequence[int]) -> float:
    """Entropy of the cluster shares (black-box semantic entropy)."""
    counts = np.bincount(np.asarray(clusters))
    shares = counts[counts > 0] / len(clusters)
    return float(-np.sum(shares * np.log(shares)))


def auroc(scores: Sequence[float], positives: Sequence[bool]) -> float:
    """Probability a positive outranks a negative (ties count half); NaN without both classes."""
    pos = [s for s, p in zip(scores, positives, strict=True) if p and not math.isnan(s)]
    neg = [s for s, p in zip(scores, positives, strict=True) if not p and not math.isnan(s)]
    if not pos or not neg:
        return float("nan")
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def auroc_ci(
    scores: Sequence[float], positives: Sequence[bool], resamples: int = 1000, seed: int = 0
) -> tuple[float, float, float]:
    """AUROC with a percentile bootstrap CI over items."""
    point = auroc(scores, positives)
    rng = np.random.default_rng(seed)
    n = len(scores)
    replicates = []
    for _ in range(resamples if n > 1 else 0):
        pick = rng.integers(0, n, n)
        value = auroc([scores[i] for i in pick], [positives[i] for i in pick])
        if not math.isnan(value):
            replicates.append(value)
    if not replicates:
        return point, float("nan"), float("nan")
    low, high = np.quantile(replicates, [0.025, 0.975])
    return point, float(low), float(high)
