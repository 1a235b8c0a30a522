"""A scikit-learn feature selector over any kofs ranker that runs on a matrix (and labels).

:class:`GeneSelector` ranks the columns of ``X`` with :func:`kofs.run_ranker` and keeps the
``n_features`` best, so that a kofs ranker can sit in a :class:`sklearn.pipeline.Pipeline`
and be cross-validated (the ranking is then learnt on each training fold only).
"""

from __future__ import annotations

import sys
from numbers import Integral
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, _fit_context
from sklearn.feature_selection import SelectorMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from kofs._compute.matrix import MAX_ABS_VALUE
from kofs.context import Context
from kofs.errors import KofsError, ParameterError
from kofs.pipeline.build import build_lists
from kofs.pipeline.plans import expression_plan
from kofs.rankers import RANKERS
from kofs.resources import resolve_limit
from kofs.types import Expression, SampleCategories

__all__ = ["GeneSelector"]


def _first_missing(y: Any) -> tuple[int, Any] | None:
    """(position, value) of the first missing label of ``y`` (None, NaN, pandas' ``<NA>``),
    or None: sklearn's checks fail on them with "Unknown label type" or a TypeError."""
    values = np.asarray(y, dtype=object).ravel()
    pandas = sys.modules.get("pandas")  # <NA> exists only once pandas was imported
    if pandas is not None:
        missing = np.asarray(pandas.isna(values), dtype=bool)
    else:
        missing = np.fromiter((v is None or v != v for v in values), dtype=bool, count=len(values))
    if not missing.any():
        return None
    k = int(np.argmax(missing))
    return k, values[k]


def _needs_labels(name: str) -> bool:
    """True when ranker ``name`` cannot run on ``X`` alone but can on ``X`` and labels."""
    spec = RANKERS.get(name)
    return spec.supervised or "categories" in spec.requires_one_of


class GeneSelector(SelectorMixin, BaseEstimator):
    """Keep the ``n_features`` genes (columns) ranked best by a kofs ranker.

    Parameters
    ----------
    ranker : str, default="laplacian"
        A ranker of :data:`kofs.RANKERS` (``kofs methods`` lists them). Rankers that need
        labels (``"fisher"``, ``"relieff"``, ``"trace-ratio"``, ``"hsic"``) take them from
        ``y``; rankers that need gene knowledge (``"relevance-vote"``, ...) cannot run on a
        bare matrix and raise ``ValueError`` in :meth:`fit`.
    n_features : int, default=50
        Number of genes to keep; clipped to ``n_features_in_``.
    params : dict, optional
        Parameters of the ranker (e.g. ``{"k": 10}`` for ``"laplacian"``), checked by kofs.
    seed : int, default=0
        Seed for any random choice of the ranker.

    Attributes
    ----------
    scores_ : ndarray of shape (n_features_in_,)
        Native scores of the ranker (its direction: ``kofs.RANKERS[ranker].higher_is_better``);
        NaN for constant genes.
    ranks_ : ndarray of shape (n_features_in_,)
        Ranks, 1 = best, ties averaged, constant genes last.
    ranking_ : ndarray of shape (n_features_in_,)
        Column indices from best to worst (ties broken by column position).
    n_features_in_ : int
        Number of columns seen in :meth:`fit`.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Column names, defined only when ``X`` has string column names (they become gene ids).

    Examples
    --------
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.svm import SVC
    >>> model = make_pipeline(GeneSelector("fisher", n_features=10), SVC())
    """

    _parameter_constraints: dict = {
        "ranker": [StrOptions(set(RANKERS.names()))],
        "n_features": [Interval(Integral, 1, None, closed="left")],
        "params": [dict, None],
        "seed": [Interval(Integral, 0, None, closed="left")],
    }

    def __init__(
        self,
        ranker: str = "laplacian",
        n_features: int = 50,
        params: dict[str, Any] | None = None,
        seed: int = 0,
    ) -> None:
        self.ranker = ranker
        self.n_features = n_features
        self.params = params
        self.seed = seed

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any = None) -> GeneSelector:
        """Rank the columns of ``X``.

        Parameters
        ----------
        X : array-like or scipy.sparse matrix of shape (n_samples, n_genes)
            Expression matrix, samples as rows; at least 2 samples, finite values. A sparse
            matrix stays sparse (CSR) for the rankers that work on it (``variance``,
            ``fisher``, ``laplacian``, ``spec-phi1/2/3``); the others densify it.
        y : array-like of shape (n_samples,), optional
            Class labels; required by supervised rankers, passed to rankers that can use
            labels (e.g. ``"laplacian"`` with ``params={"graph": "label"}``) when they are
            class labels, ignored otherwise.

        Returns
        -------
        self : GeneSelector

        Raises
        ------
        ValueError
            For a bad parameter, bad data, or a ranker that cannot run on ``X`` and ``y``
            (the kofs message says what it needs).
        """
        needs_y = _needs_labels(self.ranker)
        given_y = y is not None
        unlabelled = None if y is None else _first_missing(y)
        if unlabelled is not None and needs_y:
            raise ParameterError(
                f"y holds a missing label ({unlabelled[1]!r}, sample {unlabelled[0] + 1}); "
                f"{self.ranker} needs a class label for every sample: drop the unlabelled "
                "samples from X and y"
            )
        # (a missing label with needs_y was refused above: here y is then ignored)
        if (
            y is None
            or not needs_y
            and (unlabelled is not None or type_of_target(y) not in ("binary", "multiclass"))
        ):
            y = None  # no labels, or not class labels for a ranker that only can use them
            X = validate_data(self, X, ensure_min_samples=2, dtype=np.float64, accept_sparse="csr")
        else:
            X, y = validate_data(
                self, X, y, ensure_min_samples=2, dtype=np.float64, accept_sparse="csr"
            )
            check_classification_targets(y)
        genes = getattr(self, "feature_names_in_", None)
        if genes is None:
            genes = [f"x{j}" for j in range(X.shape[1])]
        samples = [f"s{i}" for i in range(X.shape[0])]
        # Expression freezes the array it is given: hand it a copy, never the caller's X.
        values = X.copy() if sp.issparse(X) else np.array(X, dtype=np.float64, copy=True)
        top = float(np.abs(values.data if sp.issparse(values) else values).max(initial=0.0))
        if top > MAX_ABS_VALUE:  # the scores would overflow to inf and tie (kofs.rank's check)
            raise ParameterError(
                f"X holds values as large as {top:.3g}: beyond {MAX_ABS_VALUE:g} their squares "
                "overflow the rankers' statistics; log-transform or rescale X"
            )
        expression = Expression(values, genes, samples)
        categories = None
        spec = RANKERS.get(self.ranker)
        can_use_y = "categories" in spec.requires | spec.requires_one_of | spec.uses
        if y is not None and can_use_y:
            categories = SampleCategories([str(v) for v in y], samples)
        try:
            # the plan runner every run uses: parameters checked, memory estimated first
            context = Context(
                expression, categories=categories, seed=self.seed, max_memory=resolve_limit(None)
            )
            plans = expression_plan(context, [self.ranker])
            (ranking,) = build_lists(context, plans, params={self.ranker: dict(self.params or {})})
        except KofsError as exc:
            msg = str(exc)
            if needs_y and not given_y:
                msg += f"; {self!r} requires y to be passed, but the target y is None"
            elif given_y and can_use_y and categories is None:
                msg += "; the y given is not class labels"
            raise ValueError(msg) from exc
        self.scores_ = np.array(ranking.scores)
        if np.isinf(self.scores_).any():  # infinite scores tie: the choice would be arbitrary
            raise ParameterError(
                f"the {self.ranker} scores of {int(np.isinf(self.scores_).sum())} columns of X "
                "overflow to infinity, so their order is arbitrary; rescale X"
            )
        if X.shape[1] and np.isnan(self.scores_).all():  # kofs.rank refuses such a matrix too
            raise ValueError(
                f"every one of the {X.shape[1]} columns of X is constant (or the ranker found "
                "nothing to score): there is nothing to select"
            )
        self.ranks_ = np.array(ranking.ranks)
        # ties by column position (the ranking's own order breaks them by gene id, which for
        # the names x0, x1, ..., x10 put x10 before x2)
        self.ranking_ = np.argsort(self.ranks_, kind="stable")
        return self

    def _get_support_mask(self) -> np.ndarray:
        """Boolean mask of the ``min(n_features, n_features_in_)`` best columns."""
        check_is_fitted(self)
        mask = np.zeros(self.n_features_in_, dtype=bool)
        mask[self.ranking_[: min(self.n_features, self.n_features_in_)]] = True
        return mask

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        try:
            tags.target_tags.required = _needs_labels(self.ranker)
        except KofsError:  # an unknown ranker: fit reports it
            tags.target_tags.required = False
        tags.input_tags.sparse = True
        return tags
