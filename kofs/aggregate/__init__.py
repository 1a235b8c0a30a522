"""Rank aggregation: fuse several :class:`~kofs.types.Ranking` lists into one.

Every aggregator is registered in :data:`kofs.registry.AGGREGATORS`; :func:`aggregate` is the
shared runner (alignment of gene sets, rank matrix, relevant-gene mask, wrapping).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from kofs.errors import ParameterError
from kofs.registry import AGGREGATORS, RANKERS, resolve_params
from kofs.types import AggregateRanking, Ranking

from kofs.aggregate import _methods  # noqa: E402,F401  isort: skip  (registers every aggregator)

__all__ = ["aggregate", "rank_matrix", "AGGREGATORS"]

log = logging.getLogger(__name__)


def rank_matrix(
    rankings: Sequence[Ranking], *, missing: str = "bottom"
) -> tuple[tuple[str, ...], np.ndarray]:
    """Genes (union, in first-seen order) and the (m x L) rank matrix of ``rankings``.

    ``missing="bottom"``: a gene missing from a list is tied at the bottom of that list (ranks
    |list|+1..M averaged), as ALGORITHMS.md §7.4 prescribes. ``missing="nan"``: it gets NaN
    (for aggregators with a missing-gene model, ``AggregatorSpec.partial``).
    """
    if not rankings:
        raise ParameterError("aggregation needs at least one ranked list")
    genes: dict[str, int] = {}
    first = rankings[0].genes
    if all(r.genes is first or r.genes == first for r in rankings):
        genes = dict(zip(first, range(len(first)), strict=True))
    for r in rankings:
        if len(genes) == len(first) and (r.genes is first or r.genes == first):
            continue
        for g in r.genes:
            genes.setdefault(g, len(genes))
    M = len(genes)
    R = np.empty((M, len(rankings)), dtype=np.float64)
    for j, r in enumerate(rankings):
        if len(r.genes) == M and r.genes == tuple(genes):
            R[:, j] = r.ranks
            continue
        col = np.full(M, np.nan)
        idx = np.fromiter((genes[g] for g in r.genes), dtype=np.int64, count=len(r.genes))
        col[idx] = r.ranks
        if missing == "bottom":
            n_missing = int(np.isnan(col).sum())
            col[np.isnan(col)] = len(r.genes) + (n_missing + 1) / 2.0
        R[:, j] = col
    return tuple(genes), R


def _data_lists(rankings: Sequence[Ranking]) -> np.ndarray:
    """True for lists computed from expression values: every list except those of a
    knowledge-only ranker (registry family ``"knowledge"``)."""
    out = []
    for r in rankings:
        name = r.params.get("ranker")
        out.append(not (name in RANKERS and RANKERS.get(name).family == "knowledge"))
    return np.array(out, dtype=bool)


def _built_from_mask(
    genes: Sequence[str], names: Sequence[str], built_from: Mapping[str, Iterable[str]]
) -> np.ndarray:
    unknown = set(built_from) - set(names)
    if unknown:
        raise ParameterError(
            f"built_from names lists that are not aggregated: {', '.join(sorted(unknown))}"
        )
    index = {g: i for i, g in enumerate(genes)}
    B = np.zeros((len(genes), len(names)), dtype=bool)
    for j, n in enumerate(names):
        for g in built_from.get(n, ()):
            if g in index:
                B[index[g], j] = True
    return B


def aggregate(
    rankings: Sequence[Ranking],
    method: str = "em",
    *,
    relevant_genes: Iterable[str] | None = None,
    params: Mapping[str, Any] | None = None,
    built_from: Mapping[str, Iterable[str]] | None = None,
    list_weights: Mapping[str, float] | None = None,
    bootstrap: int = 200,
    seed: int = 0,
) -> AggregateRanking:
    """Fuse ranked lists with the registered aggregator ``method``.

    Parameters
    ----------
    rankings : sequence of Ranking
        The L lists; their names must be distinct. Lists may rank different gene sets: the
        union is ranked; a gene absent from a list is a missing observation for aggregators
        with a missing-gene model (``reliability``) and tied at the bottom for the others.
    method : str
        ``"em"`` (KOFS probabilistic model, eqs 6.16-6.19), ``"reliability"``, ``"borda"``,
        ... (``kofs methods``).
    relevant_genes : iterable of str, optional
        Known-relevant genes (supervision by genes). Genes absent from the lists are dropped
        with a warning by the caller; none left raises :class:`~kofs.errors.ParameterError`.
    params : mapping, optional
        Aggregator parameters.
    built_from : mapping list name -> genes, optional
        The genes each list was built (seeded) from. Aggregators with list context never score
        a list on them; recorded in ``diagnostics["built_from"]`` (counts).
    list_weights : mapping list name -> float, optional
        Fixed list reliabilities (supervision by sample labels, see
        :func:`kofs.aggregate.supervision.label_reliabilities`); only for ``reliability``.
    bootstrap : int
        Bootstrap replicates of the weight intervals (0 = none).
    seed : int
        Seed of the bootstrap.

    Returns
    -------
    AggregateRanking
    """
    from kofs.aggregate.diagnostics import agreement_matrix, warning_line

    spec = AGGREGATORS.get(method)
    names = [r.name for r in rankings]
    if len(set(names)) != len(names):
        raise ParameterError(f"ranked lists must have distinct names, got {names}")
    resolved = resolve_params(f"aggregator {method!r}", spec.params, params or {})
    genes, R = rank_matrix(rankings)
    relevant = None
    if relevant_genes is not None:
        if not spec.supports_relevant:
            raise ParameterError(
                f"aggregator {method!r} does not use relevant genes; use 'reliability' or 'em'"
            )
        wanted = set(relevant_genes)
        relevant = np.fromiter((g in wanted for g in genes), dtype=bool, count=len(genes))
        if not relevant.any():
            raise ParameterError("none of the relevant genes is among the ranked genes")
    if list_weights is not None and not spec.context:
        raise ParameterError(
            f"aggregator {method!r} cannot use list weights from sample labels; use 'reliability'"
        )
    extra: dict[str, Any] = {}
    B = None if not built_from else _built_from_mask(genes, names, built_from)
    if spec.context:
        v = None
        if list_weights is not None:
            v = np.array([float(list_weights.get(n, 0.0)) for n in names])
        extra = {"built_from": B, "data_lists": _data_lists(rankings), "list_weights": v}
    R_nan = (
        R
        if len(set(map(len, (r.genes for r in rankings)))) == 1
        and all(len(r.genes) == len(genes) for r in rankings)
        else rank_matrix(rankings, missing="nan")[1]
    )
    R_in = R_nan if spec.partial else R
    scores, weights, info = spec.func(R_in, relevant=relevant, **resolved, **extra)
    private = {k: info.pop(k) for k in [k for k in info if k.startswith("_")]}
    supervision = (
        "labels" if list_weights is not None else "genes" if relevant is not None else "none"
    )
    diag: dict[str, Any] = {
        "supervision": supervision,
        "agreement": agreement_matrix(R_nan),
        "built_from": {n: int(B[:, j].sum()) for j, n in enumerate(names) if B[:, j].any()}
        if B is not None
        else {},
    }
    if B is not None:
        diag["built_from_genes"] = {
            n: [genes[i] for i in np.flatnonzero(B[:, j])]
            for j, n in enumerate(names)
            if B[:, j].any()
        }
    if private.get("_support") is not None:
        diag["support"] = private["_support"]
    if weights is not None and spec.diagnose is not None:
        diag.update(
            spec.diagnose(
                R_in,
                relevant=relevant,
                weights=np.asarray(weights),
                info={**info, **private},
                n_boot=int(bootstrap),
                seed=int(seed),
                params=resolved,
            )
        )
        diag["warning"] = warning_line(method, diag, names)
        if diag["warning"]:
            log.warning("%s", diag["warning"])
    if relevant is not None and B is not None and not spec.context:
        overlap = [n for j, n in enumerate(names) if (B[:, j] & relevant).any()]
        if overlap:
            diag["circular"] = (
                f"{method}: weights supervised by known genes that also built "
                f"{', '.join(overlap)} (circular: those lists win by construction); "
                "use --aggregate reliability, which never scores a list on its seed genes"
            )
            log.warning("%s", diag["circular"])
    return AggregateRanking(
        method=method,
        genes=genes,
        scores=scores,
        list_names=names,
        list_ranks=R,
        weights=weights,
        info={"method": method, **resolved, **info},
        diagnostics=diag,
    )
