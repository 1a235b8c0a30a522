"""Single-source gene rankers.

Every ranker is registered in :data:`kofs.registry.RANKERS` by its module; :func:`run_ranker`
is the one shared runner: it checks the inputs, resolves parameters, calls the adapter and
wraps the native scores into a :class:`~kofs.types.Ranking` (zero-variance genes go last).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import numpy as np

from kofs._compute.blocks import is_sparse
from kofs._compute.canonical import canonical_inputs, canonicalize, restore_ranking
from kofs._compute.chunked import is_dask, to_memory
from kofs._compute.matrix import column_range, magnitude_problem
from kofs._compute.ranks import constant_range
from kofs._compute.run_cache import kernel_cache
from kofs.errors import InputError, KofsError, ParameterError, checked_keywords
from kofs.options import SEED_MAX
from kofs.rankers._inputs import KIND_HINT
from kofs.registry import RANKERS, RankerSpec, resolve_params
from kofs.types import Expression, RankerInputs, Ranking

# Each family module registers its rankers on import; the list of families (and so the
# order of `kofs methods`) is in kofs/rankers/_families.py.
from kofs.rankers import _families  # noqa: E402,F401  isort: skip

__all__ = ["run_ranker", "applicable", "estimate_ranker", "RANKERS"]

logger = logging.getLogger(__name__)


def applicable(spec: RankerSpec, inputs: RankerInputs) -> bool:
    """True when ``inputs`` holds every knowledge kind ``spec`` requires (and one of its
    alternatives, if it has any)."""
    have = inputs.available()
    return spec.requires <= have and (not spec.requires_one_of or bool(spec.requires_one_of & have))


def _check_alignment(expression: Expression, inputs: RankerInputs) -> None:
    for kind in ("categories", "similarity"):
        obj = getattr(inputs, kind)
        if obj is not None and tuple(obj.samples) != expression.samples:
            raise ParameterError(
                f"{kind} {getattr(obj, 'name', '')!r} is not aligned to the matrix's samples"
            )
    for kind in ("relation", "functions"):
        obj = getattr(inputs, kind)
        if obj is not None and tuple(obj.genes) != expression.genes:
            raise ParameterError(
                f"{kind} {getattr(obj, 'name', '')!r} is not aligned to the matrix's genes"
            )


@checked_keywords
@kernel_cache()  # a ranker called alone computes each chunked statistic once too
def run_ranker(
    name: str,
    expression: Expression,
    inputs: RankerInputs | None = None,
    *,
    seed: int = 0,
    list_name: str | None = None,
    params: Mapping[str, Any] | None = None,
) -> Ranking:
    """Rank the genes of ``expression`` with the registered ranker ``name``.

    Parameters
    ----------
    name : str
        A ranker name (``kofs methods`` lists them), e.g. ``"laplacian"``.
    expression : Expression
    inputs : RankerInputs, optional
        Knowledge aligned to ``expression`` (labels, similarity, gene graph, functions).
    seed : int
        Seed for any random choice of the method.
    list_name : str, optional
        Name of the resulting list (default: ``name``).
    params : mapping, optional
        Method parameters; unknown names raise :class:`~kofs.errors.ParameterError`.

    Returns
    -------
    Ranking
        Native scores and direction; genes with zero variance get NaN (ranked last).
    """
    spec = RANKERS.get(name)
    if not isinstance(expression, Expression):
        raise ParameterError(
            f"run_ranker ranks a kofs.Expression, got a {type(expression).__name__}: read a file "
            "with kofs.read_expression, or rank an array, DataFrame or AnnData with "
            f"kofs.rank(X, rankers={name!r})"
        )
    if (
        isinstance(seed, bool)
        or not isinstance(seed, (int, np.integer))
        or not 0 <= seed <= SEED_MAX
    ):
        raise ParameterError(f"seed must be an integer in [0, {SEED_MAX}], got {seed!r:.40}")
    if inputs is not None and not isinstance(inputs, RankerInputs):
        raise ParameterError(
            f"run_ranker's inputs must be a kofs RankerInputs (labels, similarity, gene graph, "
            f"functions), got a {type(inputs).__name__}"
        )
    inputs = inputs or RankerInputs()
    missing = spec.requires - inputs.available()
    if missing:
        need = "; ".join(KIND_HINT[k] for k in sorted(missing))
        raise ParameterError(f"ranker {name!r} needs {need}")
    if spec.requires_one_of and not spec.requires_one_of & inputs.available():
        need = " or ".join(KIND_HINT[k] for k in sorted(spec.requires_one_of))
        raise ParameterError(f"ranker {name!r} needs {need}")
    _check_alignment(expression, inputs)
    resolved = resolve_params(f"ranker {name!r}", spec.params, params or {})
    if expression.n_samples < 2:
        raise ParameterError(
            f"ranker {name!r} needs at least 2 samples, got {expression.n_samples}"
        )
    # kernels see genes and samples sorted by id: results do not depend on the input's order
    canon = canonicalize(expression)
    inputs = canonical_inputs(inputs, canon)
    X = canon.expression.values
    hi, lo = column_range(X)
    constant = constant_range(hi, lo)
    # values whose squares overflow or underflow: every method would crash, tie or return
    # inf/NaN (kofs.rank refuses them at the door, kofs.pipeline.checks.check_magnitude)
    problem = magnitude_problem(hi, lo, canon.expression.genes)
    if problem:
        raise InputError(f"ranker {name!r}: {problem}", path=expression.source)
    if is_dask(X) and not spec.sparse:
        logger.warning("ranker %r needs in-memory data: loading the %d x %d matrix", name, *X.shape)
        X = to_memory(X)
    if is_sparse(X) and not spec.sparse:
        logger.warning(
            "ranker %r needs dense data: densifying the %d x %d sparse matrix", name, *X.shape
        )
        X = X.toarray()
    extra = {"expression": canon.expression} if spec.expression else {}
    try:
        out = spec.func(X, inputs, seed=seed, **resolved, **extra)
    except KofsError as exc:
        if exc.path is not None or expression.source is None:
            raise
        exc.path = expression.source  # a method's complaint about the data names the matrix
        exc.args = (exc.format(),)
        raise
    scores, info = out if isinstance(out, tuple) else (out, {})
    scores = np.array(scores, dtype=np.float64)
    if scores.shape != (expression.n_genes,):
        raise RuntimeError(
            f"ranker {name!r} returned {scores.shape} scores for {expression.n_genes} genes"
        )
    scores[constant] = np.nan
    ranking = Ranking(
        name=list_name or name,
        genes=canon.expression.genes,
        scores=scores,
        higher_is_better=spec.higher_is_better,
        params={"ranker": name, **resolved},
        info=dict(info),
    )
    return restore_ranking(ranking, canon)


def estimate_ranker(
    name: str,
    n_samples: int,
    n_genes: int,
    *,
    params: Mapping[str, Any] | None = None,
    given_similarity: str | None = None,
) -> int:
    """Working set in bytes of one run of ranker ``name`` on an n x m matrix.

    Asks the ranker's registry entry (:meth:`~kofs.registry.RankerSpec.estimate_memory`).

    Parameters
    ----------
    name : str
    n_samples, n_genes : int
    params : mapping, optional
        The ranker's parameters (defaults fill the rest).
    given_similarity : {"dense", "sparse"}, optional
        Storage of the sample similarity handed to the ranker, if any.
    """
    return RANKERS.get(name).estimate_memory(n_samples, n_genes, params, given_similarity)
