"""Checks before any work: the magnitude of the matrix (overflow, underflow, constant genes, raw
counts) and the memory of each list against the limit of the run."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

from kofs._compute.chunked import GRAPH_MEMORY
from kofs._compute.matrix import (
    MAX_ABS_VALUE,
    column_range,
    magnitude_problem,
)
from kofs._compute.ranks import constant_range
from kofs.context import Context, ListPlan
from kofs.errors import InputError, KofsError
from kofs.rankers import estimate_ranker
from kofs.registry import RANKERS, resolve_params
from kofs.resources import check_memory, estimate_knn_graph
from kofs.types import Expression, RankerInputs

log = logging.getLogger(__name__)


#: A matrix whose values (the first COUNTS_SAMPLE stored ones) are non-negative integers with a
#: maximum of at least COUNTS_MIN_MAX looks like raw counts: one warning line (log-scale
#: expression rarely exceeds 30).
COUNTS_MIN_MAX = 100


COUNTS_SAMPLE = 1_000_000


def check_magnitude(expression: Expression) -> float | None:
    """Refuse a matrix the rankers cannot rank (InputError naming the file).

    * values beyond :data:`kofs._compute.matrix.MAX_ABS_VALUE` (their squares overflow);
    * every gene constant across the samples (:func:`kofs._compute.ranks.constant_range`, a relative
      test): all genes would tie;
    * a varying gene whose values all lie below :data:`kofs._compute.matrix.MIN_ABS_VALUE` in magnitude (e.g. data
      multiplied by 1e-200): variances and distances underflow to 0;
    * a chunked (Dask) matrix holding NaN or infinite values, or a malformed sparse chunk (an
      in-memory matrix is checked when it is read).

    A chunked matrix is checked from its per-gene moments (one pass over the chunks, shared
    with the rankers that need them); the raw-counts test looks at its first chunk.

    Returns
    -------
    float or None
        The largest value when the matrix looks like raw counts (non-negative integers, the
        first :data:`COUNTS_SAMPLE` stored values, reaching :data:`COUNTS_MIN_MAX`), for
        :func:`warn_raw_counts`; else None.
    """
    X = expression.values
    if expression.is_chunked:
        from kofs._compute import chunked

        try:  # the first pass over the file: a damaged one fails here
            mom = chunked.moments(X)
        except KofsError:
            raise
        except (OSError, ValueError, KeyError, IndexError, TypeError) as exc:
            raise InputError(
                f"cannot read the matrix chunk by chunk ({type(exc).__name__}: {exc})",
                path=expression.source,
            ) from None
        if mom.malformed:
            raise InputError(f"malformed sparse matrix ({mom.malformed})", path=expression.source)
        if mom.nonfinite:
            raise InputError(
                f"holds {mom.nonfinite} NaN or infinite value(s); fix or impute them",
                path=expression.source,
            )
        hi, lo = mom.hi[0], mom.lo[0]
        top = float(max(hi.max(), -lo.min()))  # max |x|
        first = chunked.row_chunks(X)[0][0].compute()
        sample = np.ravel(first.data if sp.issparse(first) else first)[:COUNTS_SAMPLE]
    elif sp.issparse(X):
        if X.shape[0] == 0 or X.shape[1] == 0:
            return None
        hi, lo = column_range(X)  # implicit zeros included
        top = float(max(hi.max(), -lo.min()))
        sample = X.data[:COUNTS_SAMPLE]
    else:
        X = np.asarray(X)
        if X.size == 0 or np.isnan(X).all():
            return None
        hi, lo = X.max(axis=0), X.min(axis=0)  # NaN in a column: not constant, not tiny
        top = float(max(np.nanmax(X), -np.nanmin(X)))  # over every value, NaN aside
        sample = np.ravel(X)[:COUNTS_SAMPLE]
    problem = magnitude_problem(hi, lo, expression.genes, top=top)
    if problem and top > MAX_ABS_VALUE:  # before the constant genes: a matrix of 1e200 is
        raise InputError(problem, path=expression.source)  # said so
    constant = constant_range(hi, lo)
    if constant.all():
        n, m = expression.values.shape
        raise InputError(
            f"all {m} genes are constant across the {n} samples"
            f"{' (all values 0)' if top == 0 else ''}: nothing to rank; check the file "
            "(wrong column? all-zero export?)",
            path=expression.source,
        )
    if problem:  # a varying gene too small to rank
        raise InputError(problem, path=expression.source)
    n_const = int(constant.sum())
    if n_const:
        log.info("%d constant genes are ranked last", n_const)
    if (
        top >= COUNTS_MIN_MAX
        and sample.size
        and sample.min() >= 0
        and np.array_equal(sample, np.round(sample))
    ):
        return top
    return None


def warn_raw_counts(expression: Expression, top: float | None, rankers: Sequence[str]) -> None:
    """One warning line when a matrix that looks like raw counts (``top``: its largest value,
    from :func:`check_magnitude`) goes to rankers that rank values as given (the rankers
    registered with ``counts=True`` model or normalise counts themselves)."""
    given = [r for r in dict.fromkeys(rankers) if r in RANKERS and not RANKERS.get(r).counts]
    if top is None or not given:
        return
    where = f"{expression.source}: " if expression.source else ""
    log.warning(
        "%svalues are non-negative integers up to %.0f (raw counts?): %s rank them as given; "
        "normalise and log-transform them first for the usual analysis (e.g. scanpy's "
        "normalize_total + log1p, or log2(x + 1) of normalised counts), or use rankers that "
        "model counts (%s)",
        where,
        top,
        ", ".join(given),
        ", ".join(s.name for s in RANKERS if s.counts),
    )


def check_ranker_memory(
    context: Context, plan: ListPlan, inputs: RankerInputs, params: Mapping[str, Any]
) -> None:
    """Fail early when a list's ranker would exceed ``context.max_memory``."""
    if context.max_memory is None:
        return
    spec = RANKERS.get(plan.ranker)
    sim = inputs.similarity
    n, m = context.expression.values.shape
    given = None if sim is None else ("dense" if isinstance(sim.matrix, np.ndarray) else "sparse")
    full = resolve_params(f"ranker {plan.ranker!r}", spec.params, params)
    need = estimate_ranker(plan.ranker, n, m, params=full, given_similarity=given)
    # the registry's estimates count two dense float64 copies of X: a sparse-capable ranker on
    # sparse X holds two CSR copies instead, on chunked X only per-gene vectors; any other
    # ranker densifies, and the sparse original stays alive
    nnz = context.expression.values.nnz if context.expression.is_sparse else None
    if context.expression.is_chunked and spec.sparse:
        # X stays on disk: per-gene vectors, and for a graph ranker the graph and the chunks
        # held at once by the graph term (kofs._compute.chunked.GRAPH_MEMORY)
        need = 4 * 8 * m
        if "graph" in spec.params or "similarity" in spec.params:
            if given == "sparse" and sim is not None:
                graph = 2 * 12 * sim.matrix.nnz
            elif given == "dense":
                graph = 3 * 8 * n * n
            else:
                graph = estimate_knn_graph(n, 0, k=int(full.get("k") or 10))
            need += graph + GRAPH_MEMORY
    elif nnz is not None and spec.sparse:
        # every n x m term of the estimate (the copies of X, a kNN graph's centred copy) is a
        # CSR matrix here: estimate with the number of genes whose dense size is the CSR's
        m_csr = max(1, min(m, -(-(12 * nnz + 8 * (n + 1)) // (8 * n))))
        need = estimate_ranker(plan.ranker, n, m_csr, params=full, given_similarity=given)
    elif nnz is not None:
        need += 12 * nnz + 8 * (n + 1)
    hint = (
        f"a sparser similarity (--param {plan.ranker}.similarity=knn), "
        if "similarity" in spec.params
        else ""
    )
    if nnz is not None and not spec.sparse:
        capable = ", ".join(s.name for s in RANKERS if s.sparse)
        hint = f"a ranker that works on sparse data ({capable}), " + hint
    check_memory(
        need,
        limit=context.max_memory,
        what=f"list {plan.name} ({plan.ranker})",
        suggestion=f"use {hint}fewer genes (filter the matrix) or leave the list out",
    )
