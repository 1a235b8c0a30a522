"""The cell graph single-cell users build: PCA of informative genes, kNN, kernel weights.

:func:`cell_graph` turns chosen gene columns of the counts into a symmetric weighted kNN graph
over the cells, as scanpy users do (``normalize_total`` + ``log1p``, PCA, ``neighbors``):

1. the chosen columns of ``log(1 + x_ij * target / s_i)`` (``s_i`` the cell's total over all
   genes, ``target`` their median; :func:`kofs._compute.counts.log_normalised`), kept sparse;
2. the top ``n_pcs`` principal components (randomized SVD with implicit centring,
   :func:`~kofs.knowledge.neighbours.principal_scores`; a dask matrix is read once per
   product);
3. the ``k`` nearest cells in that space (:func:`~kofs.knowledge.neighbours.pc_neighbours`:
   exact below ``ANN_MIN_SAMPLES`` cells, an inverted-file index above, no compilation);
4. Hotspot's weights (DeTomaso & Yosef 2021): a Gaussian kernel ``exp(-d^2 / sigma_i^2)`` with
   ``sigma_i`` the distance to the ``ceil(k / 3)``-th neighbour of cell i, each row
   normalised to sum 1, then symmetrised ``(W + W^T) / 2``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from kofs._compute.counts import Counts, log_normalised
from kofs.knowledge.neighbours import pc_neighbours, principal_scores

__all__ = ["cell_graph", "graph_values", "kernel_weights"]


def kernel_weights(idx: np.ndarray, d2: np.ndarray) -> sp.csr_matrix:
    """Hotspot's Gaussian kNN weights, row-normalised and symmetrised (module docstring).

    Parameters
    ----------
    idx, d2 : ndarray of shape (n, k)
        Neighbours of every cell and their squared distances, nearest first.

    Returns
    -------
    csr_matrix of shape (n, n), symmetric, no self-loops, rows of ``W`` summing to 1 before the
    symmetrisation.
    """
    n, k = idx.shape
    if idx.size and (idx.min() < 0 or idx.max() >= n):  # scipy would write out of bounds
        raise ValueError(f"kernel_weights: neighbour indices outside [0, {n})")
    ref = int(np.ceil(k / 3)) - 1
    sigma2 = d2[:, ref].copy()
    sigma2[sigma2 <= 0] = 1.0
    w = np.exp(-d2 / sigma2[:, None])
    total = w.sum(axis=1, keepdims=True)
    total[total == 0] = 1.0
    w /= total
    W = sp.csr_matrix((w.ravel(), idx.ravel(), np.arange(0, n * k + 1, k)), shape=(n, n))
    W = ((W + W.T) * 0.5).tocsr()
    W.sort_indices()
    return W


def graph_values(counts: Counts | None, genes: np.ndarray, values=None, *, totals=None):
    """The matrix the cell graph is built on: the log-normalised ``genes`` columns of the
    counts (step 1 of the module docstring; ``totals``: the cells' totals to normalise by,
    default over all genes), or those columns of ``values`` as given (data that are not
    counts)."""
    genes = np.sort(np.asarray(genes, dtype=np.int64))
    if counts is not None:
        return log_normalised(counts, genes, totals=totals)
    return values[:, genes]


def cell_graph(
    L,
    *,
    n_pcs: int = 50,
    k: int = 15,
    seed: int = 0,
    exact: bool | None = None,
) -> sp.csr_matrix:
    """The weighted kNN graph of the cells on the principal components of ``L``.

    Parameters
    ----------
    L : ndarray, CSR or dask array of shape (n_cells, n_graph_genes)
        The graph genes' values (:func:`graph_values`).
    n_pcs : int
        Principal components (at most ``len(genes) - 1``).
    k : int
        Neighbours per cell before the symmetrisation.
    seed : int
    exact : bool, optional
        Exact or approximate search (default: by the number of cells).

    Returns
    -------
    csr_matrix of shape (n_cells, n_cells)
    """
    n, g = L.shape
    comps = max(1, min(n_pcs, g - 1, n - 1))
    P = principal_scores(L, n_components=comps, seed=seed)
    idx, d2 = pc_neighbours(P, min(k, n - 1), seed=seed, exact=exact)
    return kernel_weights(idx, d2)
