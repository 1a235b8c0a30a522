"""Sample-similarity builders: expression (or any sample x feature data) -> n x n affinity.

The dispatcher :func:`sample_similarity`, which wraps the result into a
:class:`~kofs.types.SampleSimilarity` aligned to the matrix's samples, and the array-level
:func:`similarity_from_array`; the array kernels are in :mod:`kofs.knowledge.similarity_kernels`.

Kernels (book = Zhao & Liu, *Spectral Feature Selection for Data Mining*; LS = He, Cai & Niyogi,
*Laplacian Score for Feature Selection*, NIPS 2005):

* RBF (2.25) ``s_ij = exp(-||x_i - x_j||^2 / (2 delta^2))``, dense, diagonal 1;
* linear (2.23) ``x_i^T x_j + c``, polynomial (2.24) ``(a x_i^T x_j + c)^d``, cosine
  ``x_i^T x_j / (||x_i|| ||x_j||)`` (the book prints ``||x_i|| ||x_i||``: typo);
* symmetric "OR" kNN graphs (LS step 1; book ch. 5): heat kernel ``exp(-||x_i - x_j||^2 / t)``
  or RBF weights on the edges, no self-loops, symmetrised with ``max``, scipy.sparse CSR;
* label graphs: S^FIS (2.27) ``1/n_l`` within class l (diagonal included, so D = I) and the
  binary graph (2.26).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from kofs._compute.chunked import is_dask, to_memory
from kofs.errors import ParameterError, whole_number
from kofs.knowledge.neighbours import knn_graph_distances, uses_exact_search
from kofs.knowledge.similarity_kernels import (
    binary_label_similarity,
    cosine_similarity,
    default_heat_t,
    fisher_label_similarity,
    heat_kernel_graph,
    label_codes,
    linear_similarity,
    median_bandwidth,
    polynomial_similarity,
    rbf_with_bandwidth,
    unit_rows,
)
from kofs.types import Expression, SampleCategories, SampleSimilarity

__all__ = ["AUTO_DENSE_MAX", "BUILDERS", "similarity_from_array", "sample_similarity"]

logger = logging.getLogger(__name__)

#: ``kind="auto"`` builds a dense RBF up to this many samples, a sparse kNN RBF graph above.
AUTO_DENSE_MAX = 3000


# --------------------------------------------------------------------------- dispatcher


@dataclass(frozen=True)
class _Builder:
    func: Callable[..., tuple[Any, dict[str, Any]]]
    params: Mapping[str, Any]
    needs_labels: bool = False
    summary: str = ""


def _whole(name: str, value: Any, low: int) -> int:
    """``value`` checked as a whole number >= ``low`` (not a bool, a text or 2.5, which int()
    would cut to 2)."""
    if not whole_number(value) or value < low:
        raise ParameterError(
            f"similarity: {name} must be a whole number >= {low}, got {value!r:.40}"
        )
    return int(value)


def _real(name: str, value: Any) -> float:
    """``value`` checked as a finite real number."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float, np.integer, np.floating))
        or not np.isfinite(value)
    ):
        raise ParameterError(f"similarity: {name} must be a finite number, got {value!r:.40}")
    return float(value)


def _clamp_k(k: int, n: int) -> int:
    k = _whole("k", k, 1)
    if k > n - 1:
        logger.warning("kNN graph: k=%d reduced to %d (only %d samples)", k, n - 1, n)
    return min(k, n - 1)


def _positive(name: str, value: float | None) -> float | None:
    if value is not None and not _real(name, value) > 0:
        raise ParameterError(f"similarity: {name} must be > 0, got {value!r}")
    return None if value is None else float(value)


def _polynomial(X, codes, *, a=1.0, c=1.0, degree=2):
    # a degree below 1 is no polynomial kernel: (.)^-1 gives negative and infinite values
    a, c, degree = _real("a", a), _real("c", c), _whole("degree", degree, 1)
    return polynomial_similarity(X, a=a, c=c, degree=degree), {"a": a, "c": c, "degree": degree}


def _build_rbf(X, codes, *, delta2=None):
    S, delta2 = rbf_with_bandwidth(X, delta2=_positive("delta2", delta2))
    return S, {"delta2": delta2}


def _build_knn(X, codes, *, k=5, t=None, metric="euclidean", weight="heat", search="auto", seed=0):
    if metric not in ("euclidean", "cosine"):
        raise ParameterError(
            f"similarity 'knn': metric must be euclidean or cosine, got {metric!r}"
        )
    if weight not in ("heat", "binary"):
        raise ParameterError(f"similarity 'knn': weight must be heat or binary, got {weight!r}")
    k = _clamp_k(k, X.shape[0])
    Xs = unit_rows(X) if metric == "cosine" else X
    d2 = _knn_distances(Xs, k=k, search=search, seed=seed)
    used: dict[str, Any] = {"k": k, "metric": metric, "weight": weight, **_search_used(X, search)}
    if weight == "binary":
        W = d2.copy()
        W.data = np.ones_like(W.data)
        W = W.maximum(W.T).tocsr()
        W.sort_indices()
        return W, used
    t = _positive("t", t) or default_heat_t(d2)
    return heat_kernel_graph(d2, t=t), {**used, "t": t}


#: the kNN search orders squared distances at float32 precision (and the approximate search
#: computes in float32): a matrix whose largest |value| lies outside [2^-40, 2^40] is searched
#: scaled by a power of two (exact in floating point), so every magnitude the expression check
#: accepts (1e-100 to 1e100) gives the neighbours and weights of the unscaled data
_KNN_SCALE_RANGE = (2.0**-40, 2.0**40)


def _knn_distances(X, *, k: int, search: str, seed: int) -> sp.csr_matrix:
    """:func:`knn_graph_distances` of ``X``, scale-safe (see :data:`_KNN_SCALE_RANGE`)."""
    seed = _whole("seed", seed, 0)
    top = 0.0
    if sp.issparse(X):
        top = float(np.abs(X.data).max()) if X.nnz else 0.0
    elif isinstance(X, np.ndarray):
        top = float(np.abs(X).max()) if X.size else 0.0
    lo, hi = _KNN_SCALE_RANGE
    if top == 0.0 or lo <= top <= hi or not np.isfinite(top):
        return knn_graph_distances(X, k=k, search=search, seed=seed)
    scale = 2.0 ** int(np.floor(np.log2(top)))
    d2 = knn_graph_distances(X * (1.0 / scale), k=k, search=search, seed=seed)
    d2 = d2.astype(np.float64)
    d2.data *= scale * scale
    return d2


def _search_used(X, search: str) -> dict[str, str]:
    return {"search": "exact" if uses_exact_search(X, search) else "approximate"}


def _build_knn_rbf(X, codes, *, k=10, delta2=None, search="auto", seed=0):
    k = _clamp_k(k, X.shape[0])
    delta2 = _positive("delta2", delta2) or median_bandwidth(X)
    d2 = _knn_distances(X, k=k, search=search, seed=seed)
    used = {"k": k, "delta2": delta2, **_search_used(X, search)}
    return heat_kernel_graph(d2, t=2.0 * delta2), used


def _build_auto(X, codes, *, k=10, delta2=None, search="auto", seed=0):
    kind = "rbf" if X.shape[0] <= AUTO_DENSE_MAX else "knn-rbf"
    S, used = (
        _build_rbf(X, codes, delta2=delta2)
        if kind == "rbf"
        else _build_knn_rbf(X, codes, k=k, delta2=delta2, search=search, seed=seed)
    )
    return S, {"resolved": kind, **used}


BUILDERS: dict[str, _Builder] = {
    "auto": _Builder(
        _build_auto,
        {"k": 10, "delta2": None, "search": "auto", "seed": 0},
        summary=f"dense RBF up to {AUTO_DENSE_MAX} samples, sparse kNN RBF above",
    ),
    "rbf": _Builder(_build_rbf, {"delta2": None}, summary="dense RBF (2.25)"),
    "knn": _Builder(
        _build_knn,
        {"k": 5, "t": None, "metric": "euclidean", "weight": "heat", "search": "auto", "seed": 0},
        summary="symmetric kNN graph, heat kernel exp(-d^2/t) or 0-1 (Laplacian Score)",
    ),
    "knn-rbf": _Builder(
        _build_knn_rbf,
        {"k": 10, "delta2": None, "search": "auto", "seed": 0},
        summary="symmetric kNN graph with RBF weights (sparse 2.25)",
    ),
    "linear": _Builder(
        lambda X, codes, *, c=0.0: (linear_similarity(X, c=_real("c", c)), {"c": c}),
        {"c": 0.0},
        summary="x_i'x_j + c (2.23)",
    ),
    "polynomial": _Builder(
        _polynomial,
        {"a": 1.0, "c": 1.0, "degree": 2},
        summary="(a x_i'x_j + c)^d (2.24)",
    ),
    "cosine": _Builder(lambda X, codes: (cosine_similarity(X), {}), {}, summary="cosine"),
    "label": _Builder(
        lambda X, codes: (fisher_label_similarity(codes), {}),
        {},
        needs_labels=True,
        summary="S^FIS: 1/n_l within class (2.27)",
    ),
    "label-binary": _Builder(
        lambda X, codes: (binary_label_similarity(codes), {}),
        {},
        needs_labels=True,
        summary="1 within class (2.26)",
    ),
}


def similarity_from_array(
    X: np.ndarray, kind: str = "auto", *, codes: np.ndarray | None = None, **params: Any
) -> tuple[np.ndarray | sp.csr_matrix, dict[str, Any]]:
    """Array-level dispatcher behind :func:`sample_similarity`.

    Returns ``(S, used)``: the matrix (dense ndarray or CSR) and the parameters actually used
    (bandwidths resolved). ``codes`` (class code per sample) is needed by the label kinds.
    Features (columns) holding a NaN or infinite value are left out of the distances (logged and
    counted in ``used["features_dropped"]``).
    """
    builder = BUILDERS.get(kind)
    if builder is None:
        raise ParameterError(f"unknown similarity kind {kind!r}; known: {', '.join(BUILDERS)}")
    unknown = set(params) - set(builder.params)
    if unknown:
        allowed = ", ".join(builder.params) or "none"
        raise ParameterError(
            f"similarity {kind!r}: unknown parameter(s) {', '.join(sorted(unknown))}; allowed: {allowed}"
        )
    if builder.needs_labels and codes is None:
        raise ParameterError(f"similarity {kind!r} needs sample labels (--labels)")
    given = {key: value for key, value in params.items() if value is not None}
    lazy_ok = kind in ("knn", "knn-rbf") or (kind == "auto" and X.shape[0] > AUTO_DENSE_MAX)
    if is_dask(X) and (not lazy_ok or given.get("metric") == "cosine"):
        X = to_memory(X)  # dense kernels (n <= DENSE_LIMIT) and cosine rows: in memory
    if is_dask(X):
        return builder.func(X, codes, **given)
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        bad = np.unique(X.indices[~np.isfinite(X.data)])
        finite = np.ones(X.shape[1], dtype=bool)
        finite[bad] = False
    else:
        X = np.asarray(X, dtype=np.float64)
        finite = np.isfinite(X).all(axis=0)
    if not finite.all() and not builder.needs_labels:
        if not finite.any():
            raise ParameterError(
                f"similarity {kind!r}: every feature has a missing (NaN) or infinite value; "
                "impute or drop them first"
            )
        logger.warning(
            "similarity %s: %d features with missing or infinite values left out of the distances",
            kind,
            int((~finite).sum()),
        )
        S, used = builder.func(X[:, finite], codes, **given)
        return S, {**used, "features_dropped": int((~finite).sum())}
    return builder.func(X, codes, **given)


def sample_similarity(
    expression: Expression,
    kind: str = "auto",
    *,
    categories: SampleCategories | None = None,
    **params: Any,
) -> SampleSimilarity:
    """Build a sample similarity from an expression matrix (or any samples x features data).

    Parameters
    ----------
    expression : Expression
        Rows = samples; the result is aligned to ``expression.samples``.
    kind : str
        One of :data:`BUILDERS`: ``"auto"`` (default: dense RBF when n <= 3000 samples, sparse
        kNN RBF graph above), ``"rbf"`` (2.25), ``"knn"`` (kNN graph, k = 5, heat kernel with
        t = mean squared kNN distance or ``weight="binary"``; ``metric`` euclidean or cosine), ``"knn-rbf"`` (k = 10), ``"linear"``, ``"polynomial"``,
        ``"cosine"``, ``"label"`` (S^FIS, 2.27), ``"label-binary"`` (2.26).
    categories : SampleCategories, optional
        Needed by the label kinds; must be aligned to the expression's samples.
    **params
        Kind-specific: ``delta2`` (RBF ``delta^2``; default median pairwise squared distance / 2),
        ``k``, ``t``, ``metric``, ``weight``, ``c``, ``a``, ``degree``.

    Returns
    -------
    SampleSimilarity
        Its provenance records the builder and the parameters used.
    """
    if not isinstance(expression, Expression):
        raise ParameterError(
            f"sample_similarity takes a kofs.Expression, not a {type(expression).__name__} "
            "(kofs.read_expression reads a file)"
        )
    if categories is not None and not isinstance(categories, SampleCategories):
        raise ParameterError(
            f"categories: give kofs.SampleCategories, not a {type(categories).__name__}"
        )
    codes = None
    if categories is not None:
        if tuple(categories.samples) != expression.samples:
            raise ParameterError(
                f"labels {categories.name!r} are not aligned to the matrix's samples"
            )
        codes, _ = label_codes(categories.labels)
    S, used = similarity_from_array(expression.values, kind, codes=codes, **params)
    logger.debug("sample similarity %s on %d samples: %s", kind, expression.n_samples, used)
    return SampleSimilarity(S, expression.samples, name=kind, provenance={"builder": kind, **used})
