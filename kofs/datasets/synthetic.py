"""Seeded single-cell-like counts: negative binomial, clusters, planted markers, mostly zeros.

Model (per cluster ``c``, gene ``g``): a base mean ``mu_g`` (log-normal) times a cluster
programme ``exp(N(0, programme_sd^2))`` for every gene, times ``marker_fold`` on the planted
marker genes of the cluster (markers get at least the upper-quartile base mean); counts are negative binomial with
mean ``mu_cg`` and dispersion ``r`` (``var = mu + mu^2 / r``, the usual scRNA-seq model). The
sparse matrix is drawn directly, without the dense n x m array: for every (cluster, gene) the
number of non-zero cells is binomial with the NB's non-zero probability ``1 - (r/(r+mu))^r``,
those cells are chosen uniformly (with replacement; repeats are summed) and their values drawn
from the NB with a zero draw set to 1 (approximately the zero-truncated NB; exact as mu -> 0). The base
means are scaled so that the expected fraction of zeros is ``1 - density``. Counts are then
library-size normalised to ``target_sum`` per cell and ``log1p``-transformed (scanpy's
``normalize_total`` + ``log1p``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import brentq

__all__ = ["SyntheticCells", "synthetic_counts"]


@dataclass(frozen=True)
class SyntheticCells:
    """A generated data set.

    Attributes
    ----------
    X : scipy.sparse.csr_matrix of shape (n_cells, n_genes), float64
        log1p of the library-size-normalised counts (or the raw counts with ``normalize=False``).
    clusters : ndarray of shape (n_cells,), int
        Cluster of every cell.
    markers : ndarray of shape (n_clusters, n_markers), int
        Column indices of the planted marker genes of every cluster.
    genes : tuple of str
    cells : tuple of str
    """

    X: sp.csr_matrix
    clusters: np.ndarray
    markers: np.ndarray
    genes: tuple[str, ...]
    cells: tuple[str, ...]

    @property
    def marker_genes(self) -> list[str]:
        """Ids of every planted marker gene."""
        return [self.genes[j] for j in np.unique(self.markers)]

    def labels(self) -> list[str]:
        """Cluster name of every cell (``"cluster0"``, ...)."""
        return [f"cluster{c}" for c in self.clusters]


def _nonzero_prob(mu: np.ndarray, r: float) -> np.ndarray:
    return 1.0 - (r / (r + mu)) ** r


def synthetic_counts(
    n_cells: int = 2000,
    n_genes: int = 1000,
    *,
    n_clusters: int = 5,
    n_markers: int = 10,
    density: float = 0.07,
    marker_fold: float = 10.0,
    dispersion: float = 2.0,
    programme_sd: float = 0.5,
    target_sum: float = 1e4,
    normalize: bool = True,
    seed: int = 0,
) -> SyntheticCells:
    """Draw a seeded single-cell count matrix (see the module docstring for the model).

    Parameters
    ----------
    n_cells, n_genes : int
    n_clusters : int
        Clusters of (about) equal size; cell ``i`` belongs to cluster ``i * n_clusters // n``.
    n_markers : int
        Planted marker genes per cluster (disjoint sets, the first genes of a shuffled order).
    density : float
        Target fraction of non-zero entries (0.05-0.10 = 90-95 % zeros).
    marker_fold : float
        Mean fold change of a marker gene in its cluster.
    dispersion : float
        NB dispersion ``r`` (smaller = more overdispersed).
    programme_sd : float
        Standard deviation of the log fold change of every gene between clusters (the
        cluster's expression programme; 0 = only the markers differ).
    target_sum : float
        Counts per cell after normalisation.
    normalize : bool
        False returns the raw counts.
    seed : int

    Returns
    -------
    SyntheticCells
    """
    if n_clusters * n_markers > n_genes:
        raise ValueError("n_clusters * n_markers must not exceed n_genes")
    if not 0 < density < 1:
        raise ValueError("density must lie in (0, 1)")
    rng = np.random.default_rng(seed)
    clusters = np.arange(n_cells) * n_clusters // n_cells
    order = rng.permutation(n_genes)
    markers = order[: n_clusters * n_markers].reshape(n_clusters, n_markers)
    base = rng.lognormal(mean=0.0, sigma=1.0, size=n_genes)
    # markers are well-expressed genes (as real ones are): at least the upper quartile mean
    base[markers.ravel()] = np.maximum(base[markers.ravel()], np.quantile(base, 0.75))
    # a cluster-wide expression programme (every gene shifts a little), then the markers
    fold = rng.lognormal(mean=0.0, sigma=programme_sd, size=(n_clusters, n_genes))
    for c in range(n_clusters):
        fold[c, markers[c]] = marker_fold
    sizes = np.bincount(clusters, minlength=n_clusters)
    r = float(dispersion)

    def mean_density(scale: float) -> float:
        p = _nonzero_prob(scale * base[None, :] * fold, r)
        return float((sizes[:, None] * p).sum() / (n_cells * n_genes))

    scale = brentq(lambda s: mean_density(s) - density, 1e-8, 1e8)
    mu = scale * base[None, :] * fold
    rows, cols, vals = [], [], []
    start = 0
    for c in range(n_clusters):
        p = _nonzero_prob(mu[c], r)
        counts = rng.binomial(sizes[c], p)
        g = np.repeat(np.arange(n_genes, dtype=np.int32), counts)
        # cells drawn with replacement: the rare repeats are merged (summed) by the CSR below
        cells = (start + rng.integers(0, sizes[c], size=g.size)).astype(np.int32)
        m_c = mu[c, g]
        v = rng.negative_binomial(r, r / (r + m_c)).astype(np.float64)
        # zero-truncated NB: a zero draw becomes 1, the truncated law's mode (for the small means
        # where zeros are frequent, P(k = 1 | k >= 1) ~ 1 - mu)
        v[v == 0] = 1.0
        rows.append(cells)
        cols.append(g)
        vals.append(v)
        start += sizes[c]
    X = sp.csr_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
        shape=(n_cells, n_genes),
    )
    X.sum_duplicates()
    X.sort_indices()
    if normalize:
        totals = np.asarray(X.sum(axis=1)).ravel()
        per_row = np.repeat(np.where(totals > 0, target_sum / np.maximum(totals, 1e-300), 0.0),
                            np.diff(X.indptr))  # fmt: skip
        X.data = np.log1p(X.data * per_row)
    width = len(str(max(n_genes, n_cells)))
    return SyntheticCells(
        X=X,
        clusters=clusters,
        markers=markers,
        genes=tuple(f"gene{j:0{width}d}" for j in range(n_genes)),
        cells=tuple(f"cell{i:0{width}d}" for i in range(n_cells)),
    )
