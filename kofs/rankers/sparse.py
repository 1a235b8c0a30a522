"""Sparse-representation rankers: Sparsity Score, Sparsity Preserving Score, FSSI.

Each ranker reconstructs every sample (or every feature value) sparsely from the other samples
and scores a gene by how well its values are reconstructed. The array kernels are in
:mod:`kofs.rankers._sparse_kernels`; this module validates, fixes a canonical gene order (so
that the per-sample problems, and hence the scores, do not depend on the order of the genes)
and registers the adapters.

References
----------
.. [SS] M. Liu, D. Sun, D. Zhang. Sparsity Score: a new filter feature selection method based
   on l1 graph. (seed 000)
.. [SPS] Y. Yan. Sparsity preserving score for feature selection. Applied Informatics 2:8,
   2015. (seed 001)
.. [FSSI] J. Xu, Y. Yin, H. Man, H. He. Feature selection based on sparse imputation. IJCNN
   2013. (seed 002)
"""

from __future__ import annotations

import logging

import numpy as np

from kofs.errors import InputError, ParameterError
from kofs.rankers import _sparse_kernels as K
from kofs.rankers._fssi_kernel import fssi_errors
from kofs.rankers._lasso_kernel import lasso_reconstruction, reconstruction_residual_score
from kofs.registry import Param, ranker
from kofs.types import RankerInputs

log = logging.getLogger(__name__)

__all__ = ["sparsity_score", "sparsity_preserving_score", "fssi"]

_N_JOBS = Param(
    1,
    int,
    "worker processes over samples (joblib; -1 = all cores); results do not depend on it",
    low=-1,
)
_LAMBDA_RATIO = Param(
    0.01,
    float,
    "lasso lambda as a fraction of lambda_max = ||2 D^T y||_inf of each problem",
    low=1e-8,
    high=1.0,
)


def _checked(X: np.ndarray, name: str, n_jobs: int | None = None) -> np.ndarray:
    if not np.all(np.isfinite(X)):
        bad = int(np.size(X) - np.count_nonzero(np.isfinite(X)))
        raise InputError(
            f"ranker {name!r}: the expression matrix has {bad} missing or infinite "
            "values; impute or drop them before ranking"
        )
    if n_jobs == 0:
        raise ParameterError(
            f"ranker {name!r}: parameter 'n_jobs' must be a positive number of "
            "workers or -1 (all cores), got 0"
        )
    return np.asarray(X, dtype=np.float64)


def _in_canonical_order(X: np.ndarray, kernel, *args, **kwargs):
    """Run ``kernel`` on the columns of X in canonical order; un-permute its (m,) result."""
    perm = K.canonical_feature_order(X)
    out = kernel(X[:, perm], *args, **kwargs)
    scores, info = out if isinstance(out, tuple) else (out, {})
    back = np.empty_like(scores)
    back[perm] = scores
    return back, info


def _ss_kernel(X: np.ndarray, *, formulation: int, epsilon: float, n_jobs: int):
    S, infeasible = K.l1_graph(X, formulation=formulation, epsilon=epsilon, n_jobs=n_jobs)
    if infeasible:
        raise ParameterError(
            f"ranker 'sparsity-score': formulation 7 is infeasible for {len(infeasible)} of "
            f"{X.shape[0]} samples (the other samples cannot rebuild them within epsilon="
            f"{epsilon:g}); use formulation=8 (default) or a larger epsilon"
        )
    nnz = np.count_nonzero(np.abs(S) > 1e-10, axis=1)
    info = {"l1_graph_nonzeros_per_sample": float(nnz.mean())}
    return K.sparsity_score_from_graph(X, S), info


def sparsity_score(
    X: np.ndarray, *, formulation: int = 8, epsilon: float = 1e-3, n_jobs: int = 1
) -> tuple[np.ndarray, dict]:
    """Sparsity Score of every feature [SS Algorithm 1], lower is better.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    formulation : {8, 7}
        8 (default): l1 graph from eq. (8), ``min ||[s; t]||_1 s.t. x_i = X_{-i}^T s + t,
        1^T s = 1``, an always-feasible LP, solved exactly through its dual with a certified
        working set. 7: eq. (7) with the l2 tolerance ball replaced by the inscribed box
        ``|x_ik - (X^T s)_k| <= epsilon / sqrt(m)`` (an LP; every solution meets the paper's
        ``||x_i - X^T s|| <= epsilon``); raises :class:`ParameterError` when infeasible.
    epsilon : float
        Tolerance of eq. (7) (paper: 0.001); unused by eq. (8).
    n_jobs : int
        Worker processes for the n per-sample LPs.

    Returns
    -------
    scores : ndarray of shape (n_features,)
        ``||f - S f||^2 / sum (f - mean f)^2`` (eq. 10 with S^T S); NaN for constant features.
    info : dict
    """
    X = _checked(X, "sparsity-score", n_jobs)
    return _in_canonical_order(
        X, _ss_kernel, formulation=formulation, epsilon=epsilon, n_jobs=n_jobs
    )


def _sps_kernel(X: np.ndarray, *, lambda_ratio: float):
    B = lasso_reconstruction(X, lambda_ratio=lambda_ratio)
    info = {"lasso_nonzeros_per_sample": float(np.count_nonzero(B, axis=1).mean())}
    return reconstruction_residual_score(X, B), info


def sparsity_preserving_score(
    X: np.ndarray, *, lambda_ratio: float = 0.01
) -> tuple[np.ndarray, dict]:
    """Sparsity Preserving Score [SPS Algorithm 2, eq. 5], lower is better.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    lambda_ratio : float
        Each sample's lasso (eq. 8) uses ``lambda = lambda_ratio * ||2 D_i^T x_i||_inf``
        (scikit-learn ``alpha = lambda / (2 m)``).

    Returns
    -------
    scores : ndarray of shape (n_features,)
        ``sum_i Gamma(r, i)^2``, the squared lasso reconstruction residual of feature r.
    info : dict
    """
    X = _checked(X, "sps")
    return _in_canonical_order(X, _sps_kernel, lambda_ratio=lambda_ratio)


def _fssi_kernel(X: np.ndarray, *, lambda_ratio: float, include_self: bool, n_jobs: int):
    E, n_fallback = fssi_errors(
        X, lambda_ratio=lambda_ratio, include_self=include_self, n_jobs=n_jobs
    )
    total = E.size
    log.info(
        "fssi: %d of %d imputation problems solved explicitly, the rest by the certified "
        "leverage update",
        n_fallback,
        total,
    )
    return np.sqrt((E**2).sum(axis=0)), {"explicit_solves": n_fallback, "problems": total}


def fssi(
    X: np.ndarray,
    *,
    lambda_ratio: float = 0.01,
    include_self: bool = False,
    standardize: bool = False,
    n_jobs: int = 1,
) -> tuple[np.ndarray, dict]:
    """Feature selection via sparse imputation [FSSI Algorithm 1, eq. 11], higher is better.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    lambda_ratio : float
        lambda / lambda_max of each (feature, sample) lasso (eq. 10).
    include_self : bool
        False (default): sample p is left out of its own dictionary. True: the paper's literal
        dictionary (all training samples), where p nearly reconstructs itself.
    standardize : bool
        z-score every feature first (off by default, as in the paper).
    n_jobs : int
        Worker processes over samples.

    Returns
    -------
    scores : ndarray of shape (n_features,)
        ``||F^impu - F_z||_2``: the worst-imputed feature ranks first.
    info : dict
    """
    X = _checked(X, "fssi", n_jobs)
    if standardize:
        sd = X.std(axis=0)
        X = np.where(sd > 0, (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0), 0.0)
    return _in_canonical_order(
        X, _fssi_kernel, lambda_ratio=lambda_ratio, include_self=include_self, n_jobs=n_jobs
    )


@ranker(
    "sparsity-score",
    higher_is_better=False,
    summary="Sparsity Score: variance-normalised residual of the l1-graph reconstruction",
    reference="Liu, Sun & Zhang, Sparsity Score (l1 graph), eqs. 8 and 10",
    family="sparse",
    params={
        "formulation": Param(
            8,
            int,
            "l1-graph problem: 8 = LP with compensation term, 7 = tolerance box (small data)",
            choices=(8, 7),
        ),
        "epsilon": Param(1e-3, float, "error tolerance of formulation 7", low=0.0),
        "n_jobs": _N_JOBS,
    },
    in_default_plan=False,
    slow=True,
)
def _sparsity_score_adapter(
    X: np.ndarray, inputs: RankerInputs, *, seed: int, formulation: int, epsilon: float, n_jobs: int
):
    return sparsity_score(X, formulation=formulation, epsilon=epsilon, n_jobs=n_jobs)


@ranker(
    "sps",
    higher_is_better=False,
    summary="Sparsity Preserving Score: squared lasso reconstruction residual over samples",
    reference="Yan, Applied Informatics 2:8 (2015), Algorithm 2, eqs. 5 and 8",
    family="sparse",
    params={"lambda_ratio": _LAMBDA_RATIO},
    in_default_plan=False,
)
def _sps_adapter(X: np.ndarray, inputs: RankerInputs, *, seed: int, lambda_ratio: float):
    return sparsity_preserving_score(X, lambda_ratio=lambda_ratio)


@ranker(
    "fssi",
    higher_is_better=True,
    summary="FSSI: error of imputing each gene by sparse coding over the other genes",
    reference="Xu, Yin, Man & He, Feature selection based on sparse imputation, Alg. 1, eq. 11",
    family="sparse",
    params={
        "lambda_ratio": _LAMBDA_RATIO,
        "include_self": Param(
            False,
            bool,
            "keep sample p in its own dictionary (the paper's literal, degenerate variant)",
        ),
        "standardize": Param(False, bool, "z-score every gene before imputation"),
        "n_jobs": _N_JOBS,
    },
    in_default_plan=False,
    slow=True,
)
def _fssi_adapter(
    X: np.ndarray,
    inputs: RankerInputs,
    *,
    seed: int,
    lambda_ratio: float,
    include_self: bool,
    standardize: bool,
    n_jobs: int,
):
    return fssi(
        X,
        lambda_ratio=lambda_ratio,
        include_self=include_self,
        standardize=standardize,
        n_jobs=n_jobs,
    )
