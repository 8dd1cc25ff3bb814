"""Predictive and semantic entropy (Kadavath et al. 2022; Kuhn et al. 2023; Farquhar et al.
2024), and AUROC with a bootstrap over statements."""

from __future__ import annotations

import warnings
from collections.abc import Awaitable, Callable, Sequence

import numpy as np
from scipy.special import logsumexp
from scipy.stats import DegenerateDataWarning, bootstrap, entropy
from sklearn.metrics import roc_auc_score

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


def auroc_ci(
    scores: Sequence[float],
    positives: Sequence[bool],
    groups: Sequence[str] | None = None,
    resamples: int = 1000,
    seed: int = 0,
) -> tuple[float, float, float]:
    """AUROC with a 95% percentile bootstrap CI that resamples groups (statements): a drawn
    group brings all its rows, so rows of several models on one statement move together.
    Without groups every row is its own group. Replicates with a single class are dropped."""
    values, classes = np.asarray(scores, dtype=float), np.asarray(positives, dtype=bool)
    point = auroc(values, classes)
    labels = np.asarray(groups if groups is not None else np.arange(len(values)))
    names = np.unique(labels)
    if len(names) < 2 or np.isnan(point):
        return point, float("nan"), float("nan")
    rows = [np.flatnonzero(labels == name) for name in names]

    def statistic(drawn: np.ndarray) -> float:
        picked = np.concatenate([rows[int(i)] for i in drawn])
        return auroc(values[picked], classes[picked])

    with warnings.catch_warnings():  # degenerate (single-class) replicates are dropped below
        warnings.simplefilter("ignore", DegenerateDataWarning)
        result = bootstrap((np.arange(len(names)),), statistic, n_resamples=resamples,
                           vectorized=False, method="percentile", random_state=seed)  # fmt: skip
    replicates = result.bootstrap_distribution[~np.isnan(result.bootstrap_distribution)]
    if not replicates.size:
        return point, float("nan"), float("nan")
    low, high = np.quantile(replicates, [0.025, 0.975])
    return point, float(low), float(high)
