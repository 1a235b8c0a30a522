"""Rank aggregation: fuse several :class:`~kofs.types.Ranking` lists into one.

Every aggregator is registered in :data:`kofs.registry.AGGREGATORS`; :func:`aggregate` is the
shared runner (alignment of gene sets, partial rank matrix, gene universe, relevant-gene mask,
wrapping). Lists may rank different genes: :mod:`kofs.aggregate.partial` describes how a gene
that a list does not contain is treated.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from kofs.aggregate.partial import complete_ranks, partial_rank_matrix
from kofs.canonical import canonical_rows
from kofs.errors import ParameterError
from kofs.registry import AGGREGATORS, resolve_params
from kofs.types import AggregateRanking, Ranking

from kofs.aggregate import _methods  # noqa: E402,F401  isort: skip  (registers every aggregator)

__all__ = ["aggregate", "AGGREGATORS"]


def aggregate(
    rankings: Sequence[Ranking],
    method: str = "em",
    *,
    relevant_genes: Iterable[str] | None = None,
    params: Mapping[str, Any] | None = None,
    universe: int | Iterable[str] | None = None,
) -> AggregateRanking:
    """Fuse ranked lists with the registered aggregator ``method``.

    Parameters
    ----------
    rankings : sequence of Ranking
        The L lists; their names must be distinct. They may rank different genes (partial
        lists, top-k lists); see :mod:`kofs.aggregate.partial` for the treatment of a gene a
        list does not contain.
    method : str
        ``"em"`` (KOFS probabilistic model, eqs 6.16-6.19), ``"borda"``, ``"rra"``,
        ``"stuart"``, ... (``kofs methods``).
    relevant_genes : iterable of str, optional
        Known-relevant genes G for supervised EM. Genes absent from the lists are dropped with
        a warning by the caller; none left raises :class:`~kofs.errors.ParameterError`.
    params : mapping, optional
        Aggregator parameters.
    universe : int or iterable of str, optional
        The gene universe: its size N (at least the number of distinct genes in the lists),
        or its gene ids (every ranked gene must be one of them; the others are added to the
        result as genes no list contains). Default: the genes of the lists (N = their number,
        as RobustRankAggreg).

    Returns
    -------
    AggregateRanking
        ``list_ranks`` holds NaN where a list does not contain a gene; ``statistics`` the
        per-gene values the method defines (p- and q-values of RRA, Q of Stuart).
    """
    spec = AGGREGATORS.get(method)
    names = [r.name for r in rankings]
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise ParameterError(f"ranked lists must have distinct names; repeated: {', '.join(dup)}")
    resolved = resolve_params(f"aggregator {method!r}", spec.params, params or {})
    genes, R = partial_rank_matrix(rankings)
    genes, R, N = _apply_universe(genes, R, universe)
    m = len(genes)
    relevant = None
    if relevant_genes is not None:
        if not spec.supports_relevant:
            raise ParameterError(f"aggregator {method!r} does not use relevant genes; use 'em'")
        wanted = set(relevant_genes)
        relevant = np.fromiter((g in wanted for g in genes), dtype=bool, count=m)
        if not relevant.any():
            raise ParameterError("none of the relevant genes is among the ranked genes")
    # the kernels see the genes sorted by id: the result does not depend on the lists' order
    rows = canonical_rows(genes)
    Rc = R[rows]
    relc = None if relevant is None else relevant[rows]
    partial = bool(np.isnan(R).any()) or N > m
    if spec.partial_lists:
        scores_c, weights, info = spec.func(Rc, relevant=relc, universe=N, **resolved)
    else:
        full = complete_ranks(Rc, universe=N) if partial else Rc
        mask = relc
        if relc is not None and N > m:
            mask = np.concatenate([relc, np.zeros(N - m, dtype=bool)])
        scores_c, weights, info = spec.func(full, relevant=mask, **resolved)
    scores = _uncanonical(scores_c, rows, m)
    info = dict(info)
    statistics = {
        k: _uncanonical(v, rows, m) for k, v in (info.pop("statistics", None) or {}).items()
    }
    if partial:
        info["universe"] = N
        info["list_lengths"] = dict(zip(names, map(int, (~np.isnan(R)).sum(axis=0)), strict=True))
    return AggregateRanking(
        method=method,
        genes=genes,
        scores=scores,
        list_names=tuple(names),
        list_ranks=R,
        weights=weights,
        info={"method": method, **resolved, **info},
        statistics=statistics,
    )


def _uncanonical(values, rows: np.ndarray, m: int) -> np.ndarray:
    """Per-gene values computed in canonical row order, back in the lists' gene order."""
    out = np.empty(m, dtype=np.float64)
    out[rows] = np.asarray(values, dtype=np.float64)[:m]
    return out


def _apply_universe(
    genes: tuple[str, ...], R: np.ndarray, universe: int | Iterable[str] | None
) -> tuple[tuple[str, ...], np.ndarray, int]:
    """(genes, rank matrix, N) after adding the universe's genes that no list contains."""
    m = len(genes)
    if universe is None:
        return genes, R, m
    if isinstance(universe, (int, np.integer)) and not isinstance(universe, bool):
        if universe < m:
            raise ParameterError(
                f"universe size {int(universe)} is smaller than the {m} distinct genes of the "
                "lists; give at least that many"
            )
        return genes, R, int(universe)
    if isinstance(universe, (str, bytes)) or not isinstance(universe, Iterable):
        raise ParameterError(
            f"universe must be a number of genes or a collection of gene ids, got {universe!r}"
        )
    ids = list(dict.fromkeys(str(g) for g in universe))
    known = set(ids)
    outside = [g for g in genes if g not in known]
    if outside:
        raise ParameterError(
            f"{len(outside)} ranked genes are not in the universe (e.g. {', '.join(outside[:3])});"
            " drop them from the lists or widen the universe"
        )
    present = set(genes)
    extra = [g for g in ids if g not in present]
    if extra:
        R = np.vstack([R, np.full((len(extra), R.shape[1]), np.nan)])
    return genes + tuple(extra), R, len(ids)
