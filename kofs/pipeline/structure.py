"""Does the matrix have anything for the data lists to find: sample structure (no labels), or
an association with the labels?

Without labels, every data list of a run (variance, Laplacian score, SPEC, ...) is a function of
the expression matrix alone, and the graph rankers rank genes by their alignment with the
leading directions of the samples' similarity. On a matrix without structure (every gene's
values independent noise) those directions are noise too, yet the lists agree with each other,
because they read the same noise: the fusion's agreement and relevant-class tests, which ask
whether the *lists* agree beyond chance and beyond their correlation, then pass, and genes are
called (`kofs rank` on 60 x 3,000 i.i.d. normal values: 24-112 genes at q <= 0.10).

The question is about the matrix, so it is asked of the matrix: parallel analysis (Horn 1965;
Buja & Eyuboglu 1992). The statistic is the largest eigenvalue of the samples' correlation over
the genes (each gene centred and scaled, ``Z Z' / m``); its null distribution comes from
matrices whose genes' values are permuted across the samples independently (every gene keeps
its values, the samples lose any shared pattern). Below the detection threshold of the leading
eigenvalue (Baik, Ben Arous & Peche 2005) the leading eigenvector carries no information about
the structure, so spectral rankers cannot find genes that a flat spectrum does not show. The
p-value is Student's t of the observed eigenvalue's log against the permutations' (B - 1
degrees of freedom, with the prediction factor ``sqrt(1 + 1/B)``; the log tames the right skew
of the largest eigenvalue's distribution): a permutation p-value of B draws could not go below
1/(B + 1), which real structure far exceeds (ALL: eigenvalue 24.1 against a null of 1.82 +-
0.02 over 1,000 genes, p ~ 1e-17). Its calibration on i.i.d. matrices (150 each, normal and
log-normal genes, 20-500 samples x 500-5,000 genes): P(p < 0.05) = 0.047-0.093 and
P(p < 0.008) = 0.007-0.033 (mildly anti-conservative in the tail).

With labels the lists (Fisher score, and the graph rankers on the labels' similarity) are
functions of the matrix and the labels, and with labels unrelated to the values they agree on
noise in the same way (60 x 3,000 i.i.d. normal values, random halves as labels: 29 and 72 genes
at q <= 0.10 in two of four matrices). :func:`label_association_test` is the global test of the
labels: the mean and the largest over the genes of the share of each gene's variance the classes
explain (the ANOVA R^2), each by the same Student's t on logs against B label permutations,
Bonferroni over the two (the mean sees many weakly associated genes, the largest a few strong
ones: an experiment that moves 30 of 20,000 genes must keep its calls).

The sample-structure test reads at most :data:`MAX_GENES` genes (a seeded random subset), the
label test every gene (a few strongly associated genes are what it must not miss); both run only
on dense matrices of at most :data:`MAX_SAMPLES` samples and return None where they do not run.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.sparse.linalg import eigsh
from scipy.special import gammaln, stdtr

from kofs.types import Expression, SampleCategories

__all__ = ["label_association_test", "sample_structure_test"]

#: Permuted matrices of the null distribution of the sample-structure test.
PERMUTATIONS = 10
#: Label permutations of the label test (each costs one pass of products over the genes, not an
#: eigendecomposition). Its p-value is Student's t on B - 1 degrees of freedom with the
#: prediction factor, so B sets how small a p a real association can reach: 30 changed genes of
#: 5,000 in 10 vs 10 samples (bench/bench_fusion.py --matrices) reach p ~ 0.004 with 10
#: permutations, 0.0003 with 100, and the no-signal probability that joins every gene's lfdr
#: falls with it (calls 7.8 -> 15.0 of the t-test's 18.8, power 0.25 -> 0.46).
LABEL_PERMUTATIONS = 100
#: Genes read (a random subset of larger matrices).
MAX_GENES = 1000
#: Largest number of samples tested (dense n x n Gram matrices).
MAX_SAMPLES = 1000
#: Fewest distinct relabellings of the samples for the label test (3 vs 3 samples have 10, 6 vs
#: 6 have 462, 7 vs 7 1,716): below, no permutation p-value can be small, and a small design
#: must not lose its calls to a test that cannot resolve it.
MIN_RELABELLINGS = 1000
#: Genes standardised at a time by the label test (it reads every gene).
GENE_BLOCK = 4096


def _largest_eigenvalue(W: np.ndarray) -> float:
    """The largest eigenvalue of ``W' W / m`` for W (genes m, samples n), C-contiguous."""
    G = W.T @ W / W.shape[0]
    n = G.shape[0]
    if n <= 300:
        return float(np.linalg.eigvalsh(G)[-1])
    # Lanczos from a fixed start: the same value on every run
    return float(eigsh(G, k=1, which="LA", v0=np.ones(n), return_eigenvectors=False)[0])


def sample_structure_test(expression: Expression, *, seed: int = 0) -> dict[str, Any] | None:
    """Parallel analysis of ``expression`` (module docstring): ``statistic`` (the largest
    eigenvalue), ``null_mean`` and ``null_sd`` (over :data:`PERMUTATIONS` permuted matrices),
    ``p_value``, ``genes`` read and ``permutations``; None for sparse, chunked or too large
    matrices, fewer than 4 samples or non-finite values."""
    X = _dense_values(expression)
    if X is None:
        return None
    rng = np.random.default_rng(seed)
    m = X.shape[1]
    cols = np.sort(rng.choice(m, MAX_GENES, replace=False)) if m > MAX_GENES else np.arange(m)
    Z = _standardised(X[:, cols])
    if Z is None or Z.shape[1] < 2:
        return None
    # genes as rows: permuting each gene's values across the samples keeps rows contiguous
    W = np.ascontiguousarray(Z.T)
    observed = _largest_eigenvalue(W)
    null = np.array([_largest_eigenvalue(rng.permuted(W, axis=1)) for _ in range(PERMUTATIONS)])
    return _result(observed, null, Z.shape[1])


def _dense_values(expression: Expression) -> np.ndarray | None:
    """The matrix as float64 where the tests run (dense, 4 to :data:`MAX_SAMPLES` samples)."""
    if expression.is_sparse or expression.is_chunked:
        return None
    if not 4 <= expression.n_samples <= MAX_SAMPLES:
        return None
    return np.asarray(expression.values, dtype=np.float64)


def _standardised(Z: np.ndarray) -> np.ndarray | None:
    """The genes (columns) of ``Z`` that vary, centred and scaled; None if a value is not
    finite."""
    if not np.all(np.isfinite(Z)):
        return None
    sd = Z.std(axis=0)
    keep = sd > 1e-12 * (1.0 + np.abs(Z).max(axis=0))
    return (Z[:, keep] - Z[:, keep].mean(axis=0)) / sd[keep]


def _result(observed: float, null: np.ndarray, genes: int, p: float | None = None) -> dict:
    """A test's record; ``p``: its p-value when not the log-t one of ``observed``."""
    return {
        "statistic": observed,
        "null_mean": float(null.mean()),
        "null_sd": float(null.std(ddof=1)),
        "p_value": _log_t_p_value(observed, null) if p is None else p,
        "genes": int(genes),
        "permutations": int(null.size),
    }


def _log_t_p_value(observed: float, null: np.ndarray) -> float:
    """Student's t (B - 1 df, prediction factor) of log(observed) against log(null)."""
    B = null.size
    log_null = np.log(null)
    spread = float(log_null.std(ddof=1))
    if spread <= 0:
        return 0.0 if observed > float(null.mean()) else 1.0
    t = (np.log(observed) - log_null.mean()) / (spread * np.sqrt(1.0 + 1.0 / B))
    return float(stdtr(B - 1, -t))


def label_association_test(
    expression: Expression, labels: SampleCategories, *, seed: int = 0
) -> dict[str, Any] | None:
    """The global test of ``labels`` (aligned to the samples) on ``expression`` (module
    docstring), over every gene: two statistics, the mean and the largest R^2 of the genes
    (the one sees many weakly associated genes, the other a few strongly associated ones),
    each against :data:`LABEL_PERMUTATIONS` label permutations; ``p_value`` is twice the smaller p
    (Bonferroni). Returns ``statistic`` / ``null_mean`` / ``null_sd`` of the mean R^2,
    ``max_statistic`` / ``max_null_mean`` / ``max_null_sd`` of the largest, ``p_mean``,
    ``p_max``, ``p_value``, ``genes``, ``permutations``; None where it does not run (sparse,
    chunked, more than :data:`MAX_SAMPLES` samples, fewer than 4, non-finite values), with
    fewer than two classes or fewer than :data:`MIN_RELABELLINGS` distinct relabellings."""
    codes = np.asarray(labels.codes)
    k = int(codes.max()) + 1 if codes.size else 0
    n = codes.size
    if k < 2 or n != expression.n_samples:
        return None
    # distinct relabellings (at least the multinomial over k!): with few (3 vs 3: 10) a
    # permutation repeats the observed partition often and no p-value below 1/that exists
    sizes = np.bincount(codes, minlength=k)
    if gammaln(n + 1) - gammaln(sizes + 1).sum() - gammaln(k + 1) < np.log(MIN_RELABELLINGS):
        return None
    X = _dense_values(expression)
    if X is None:
        return None
    rng = np.random.default_rng(seed)
    labellings = [codes] + [rng.permutation(codes) for _ in range(LABEL_PERMUTATIONS)]
    H = np.zeros((len(labellings), k, n))  # class indicators, scaled by 1 / sqrt(class size)
    for b, c in enumerate(labellings):
        H[b, c, np.arange(n)] = 1.0
    H /= np.sqrt(np.maximum(H.sum(axis=2, keepdims=True), 1.0))
    total = np.zeros(len(labellings))
    top = np.zeros(len(labellings))
    genes = 0
    for start in range(0, X.shape[1], GENE_BLOCK):
        Z = _standardised(X[:, start : start + GENE_BLOCK])
        if Z is None:
            return None
        genes += Z.shape[1]
        # R^2 of each gene and labelling: sum over classes of n_k mean_k^2, over n
        r2 = np.einsum("bkg->bg", np.einsum("bkn,ng->bkg", H, Z) ** 2) / n
        total += r2.sum(axis=1)
        top = np.maximum(top, r2.max(axis=1, initial=0.0))
    if genes < 2:
        return None
    mean_r2 = total / genes
    p_mean = _log_t_p_value(float(mean_r2[0]), mean_r2[1:])
    p_max = _log_t_p_value(float(top[0]), top[1:])
    out = _result(float(mean_r2[0]), mean_r2[1:], genes, p=min(1.0, 2.0 * min(p_mean, p_max)))
    out.update(
        max_statistic=float(top[0]),
        max_null_mean=float(top[1:].mean()),
        max_null_sd=float(top[1:].std(ddof=1)),
        p_mean=p_mean,
        p_max=p_max,
    )
    return out
