r"""MSFS: combine several sample similarities into one global similarity (Alg. 9, eq. 6.2).

``S_global = sum_i a_i S_i``. The book leaves the weights ``a_i`` to experts or kernel learning
(ALGORITHMS.md §11 item 3); ours: each ``S_i`` is first scaled to a common size and the weights
default to equal (``a_i = 1/L``), given weights are normalised to sum to 1. Scaling:

* ``"max"`` (default): ``S_i / max_jk S_i(j, k)`` (unit largest entry, e.g. an RBF is unchanged);
* ``"trace"``: ``S_i * n / trace(S_i)`` (unit mean diagonal);
* ``"none"``: as given.

The combined similarity is then fed to SPEC (ranker ``spec-phi2`` etc.) to rank the genes.
A mix of dense and sparse inputs gives a dense result; all-sparse inputs stay sparse.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

from kofs.errors import ParameterError
from kofs.types import SampleSimilarity

__all__ = ["combine_similarities", "combine_matrices"]

NORMALISE = ("max", "trace", "none")


def _scale(S: Any, how: str, label: str) -> Any:
    if how == "none":
        return S
    if how == "max":
        top = S.max() if not sp.issparse(S) else (S.data.max() if S.nnz else 0.0)
        if not top > 0:
            raise ParameterError(
                f"MSFS: similarity {label} has no positive entry; it cannot be scaled"
            )
        return S / top
    tr = float(S.diagonal().sum())
    if not tr > 0:
        raise ParameterError(f"MSFS: similarity {label} has a zero trace; use normalise='max'")
    return S * (S.shape[0] / tr)


def combine_matrices(
    matrices: Sequence[Any], weights: np.ndarray, *, normalise: str = "max"
) -> Any:
    """``sum_i a_i scale(S_i)`` (eq. 6.2) on arrays.

    Parameters
    ----------
    matrices : sequence of L (n, n) ndarrays or sparse matrices
    weights : ndarray of shape (L,), non-negative, summing to 1
    normalise : {"max", "trace", "none"}

    Returns
    -------
    ndarray of shape (n, n), or csr_matrix when every input is sparse.
    """
    all_sparse = all(sp.issparse(S) for S in matrices)
    total: Any = sp.csr_matrix(matrices[0].shape) if all_sparse else np.zeros(matrices[0].shape)
    for i, (S, a) in enumerate(zip(matrices, weights, strict=True)):
        S = (
            sp.csr_matrix(S, dtype=np.float64)
            if sp.issparse(S)
            else np.asarray(S, dtype=np.float64)
        )
        S = _scale(S, normalise, f"#{i + 1}")
        if a == 0:
            continue
        if all_sparse:
            total = total + a * S
        else:
            total = total + a * (S.toarray() if sp.issparse(S) else S)
    return total.tocsr() if all_sparse else total


def combine_similarities(
    similarities: Sequence[SampleSimilarity],
    weights: Sequence[float] | None = None,
    *,
    normalise: str = "max",
    name: str = "msfs",
) -> SampleSimilarity:
    """Global sample similarity of MSFS, ``S = sum_i a_i S_i`` (Alg. 9 line 3, eq. 6.2).

    Parameters
    ----------
    similarities : sequence of SampleSimilarity
        At least one; all over the same samples in the same order.
    weights : sequence of float, optional
        ``a_i`` (non-negative, not all 0); normalised to sum to 1. Default equal weights.
    normalise : {"max", "trace", "none"}
        Scaling of each ``S_i`` before weighting (module docstring); default ``"max"``.
    name : str
        Name of the result.

    Returns
    -------
    SampleSimilarity
        Dense unless all inputs are sparse; provenance lists the parts and weights.
    """
    sims = list(similarities)
    if not sims:
        raise ParameterError("MSFS: no similarity to combine; give at least one")
    if normalise not in NORMALISE:
        raise ParameterError(
            f"MSFS: normalise must be one of {', '.join(NORMALISE)}, got {normalise!r}"
        )
    samples = sims[0].samples
    for s in sims[1:]:
        if tuple(s.samples) != tuple(samples):
            raise ParameterError(
                f"MSFS: similarity {s.name!r} is over other samples (or another order) than "
                f"{sims[0].name!r}; build every similarity on the same matrix"
            )
    if weights is None:
        a = np.full(len(sims), 1.0 / len(sims))
    else:
        a = np.asarray(list(weights), dtype=np.float64)
        if a.shape != (len(sims),):
            raise ParameterError(f"MSFS: {a.size} weights for {len(sims)} similarities")
        with np.errstate(over="ignore"):
            total = a.sum()
        if not np.all(np.isfinite(a)) or np.any(a < 0) or total <= 0:
            raise ParameterError("MSFS: weights must be finite, non-negative and not all zero")
        if not np.isfinite(total):
            # weights summing beyond the largest float (1e308, 1e308) were all divided to 0,
            # and the zero similarity failed as "fewer than 2 connected samples" naming the
            # matrix: scaled by the largest first (only then: other weights keep their bits)
            a = a / a.max()
        a = a / a.sum()
    S = combine_matrices([s.matrix for s in sims], a, normalise=normalise)
    prov = {
        "builder": "msfs",
        "parts": [s.name for s in sims],
        "weights": [float(x) for x in a],
        "normalise": normalise,
    }
    return SampleSimilarity(S, samples, name=name, provenance=prov)
