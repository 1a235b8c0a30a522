"""Canonical gene and sample order: what makes a run independent of the input's row order.

Floating-point sums, eigen-solvers, iterative solvers and top-k selections with ties all depend
on the order in which genes and samples arrive, so a shuffled matrix used to give (slightly)
different scores and, through ties, different ranks. :func:`kofs.pipeline.rank` therefore
computes on the matrix sorted by gene id and sample id (:func:`canonicalize`) and puts the
results back into the caller's gene order (:func:`restore_ranking`, :func:`restore_aggregate`):
every order-sensitive kernel then sees the same order whatever the file's order was.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kofs.types import (
    AggregateRanking,
    Expression,
    FeatureFunctions,
    FeatureRelation,
    RankerInputs,
    Ranking,
    SampleCategories,
    SampleSimilarity,
)

__all__ = [
    "Canonical",
    "canonical_inputs",
    "canonical_rows",
    "canonicalize",
    "restore_aggregate",
    "restore_ranking",
]


@dataclass(frozen=True)
class Canonical:
    """A matrix (and labels) in canonical order and the permutations back.

    Attributes
    ----------
    expression : Expression
        Genes sorted by id, samples sorted by id.
    labels : SampleCategories or None
        Aligned to ``expression.samples`` (None when none were given).
    genes : ndarray of int
        ``expression.genes[k] == original.genes[genes[k]]``.
    samples : ndarray of int
        Same for samples.
    identity : bool
        The input was already canonical (no copy was made).
    """

    expression: Expression
    labels: SampleCategories | None
    genes: np.ndarray
    samples: np.ndarray
    identity: bool


def _take(X, rows: np.ndarray, cols: np.ndarray):
    """``X[rows][:, cols]``: dense by ``np.ix_``; sparse (CSR) and chunked (dask) axis by axis,
    never through an n x m index array."""
    if isinstance(X, np.ndarray):
        return X[np.ix_(rows, cols)]
    return X[rows][:, cols]


def _order(ids: tuple[str, ...]) -> np.ndarray:
    return np.asarray(sorted(range(len(ids)), key=ids.__getitem__), dtype=np.int64)


def canonicalize(expression: Expression, labels: SampleCategories | None = None) -> Canonical:
    """Sort the genes and samples of ``expression`` by id (labels follow their samples; the
    cells of a chunked matrix stay in file order).

    Labels must be aligned to the matrix's samples (as :func:`kofs.io.labels.align_labels`
    returns them) or hold them in any order; samples the labels lack keep no label (the
    rankers then refuse as before).
    """
    g, s = _order(expression.genes), _order(expression.samples)
    if expression.is_chunked:
        # sorting the cells of a chunked (dask) matrix gathers rows of every chunk into every
        # output chunk, in every pass: Dask then holds about the whole matrix at once (measured:
        # peak RSS +1 x the data). The cells stay in file order instead (the run warns once,
        # :func:`kofs.pipeline.rank`).
        s = np.arange(s.size, dtype=np.int64)
    same = bool((g == np.arange(g.size)).all() and (s == np.arange(s.size)).all())
    if same:
        return Canonical(expression, labels, g, s, True)
    expr = Expression(
        _take(expression.values, s, g),
        [expression.genes[i] for i in g],
        [expression.samples[i] for i in s],
        namespace=expression.namespace,
        annotations={k: [c[i] for i in g] for k, c in expression.annotations.items()},
        source=expression.source,
    )
    if labels is not None and tuple(labels.samples) == tuple(expression.samples):
        labels = SampleCategories(
            [labels.labels[i] for i in s],
            expr.samples,
            name=labels.name,
            parents=labels.parents,
        )
    return Canonical(expr, labels, g, s, False)


def _csr(matrix, rows: np.ndarray, cols: np.ndarray | None = None):
    """Rows/columns of a sparse matrix picked, in canonical CSR form (sorted column indices,
    no duplicates), so sparse products add their terms in one order."""
    m = matrix[rows] if cols is None else matrix[rows][:, cols]
    m = m.tocsr(copy=True)
    m.sum_duplicates()
    m.sort_indices()
    return m


def canonical_inputs(inputs: RankerInputs, canon: Canonical) -> RankerInputs:
    """``inputs`` (aligned to the original matrix) aligned to ``canon.expression``; sparse
    matrices in canonical CSR form (sorted indices)."""
    sparse = [
        inputs.relation.matrix if inputs.relation is not None else None,
        inputs.functions.incidence if inputs.functions is not None else None,
        inputs.similarity.matrix
        if inputs.similarity is not None and inputs.similarity.is_sparse
        else None,
    ]
    if canon.identity and all(x is None or x.has_canonical_format for x in sparse):
        return inputs
    g, s = canon.genes, canon.samples
    cats, sim, rel, fun = inputs.categories, inputs.similarity, inputs.relation, inputs.functions
    if cats is not None:
        cats = SampleCategories(
            [cats.labels[i] for i in s], canon.expression.samples, name=cats.name,
            parents=cats.parents,
        )  # fmt: skip
    if sim is not None:
        m = _csr(sim.matrix, s, s) if sim.is_sparse else sim.matrix[np.ix_(s, s)]
        sim = SampleSimilarity(m, canon.expression.samples, sim.name, sim.provenance)
    if rel is not None:
        rel = FeatureRelation(
            _csr(rel.matrix, g, g), canon.expression.genes, rel.directed, rel.name, rel.provenance
        )
    if fun is not None:
        fun = FeatureFunctions(
            _csr(fun.incidence, g), canon.expression.genes, fun.terms, fun.term_names, fun.relevance,
            fun.name, fun.provenance,
        )  # fmt: skip
    return RankerInputs(categories=cats, similarity=sim, relation=rel, functions=fun)


def canonical_rows(genes: tuple[str, ...]) -> np.ndarray:
    """Row order that sorts ``genes`` by id (for kernels over genes x lists matrices)."""
    return _order(genes)


def _back(canon: Canonical) -> np.ndarray:
    inv = np.empty_like(canon.genes)
    inv[canon.genes] = np.arange(canon.genes.size)
    return inv


def restore_ranking(ranking: Ranking, canon: Canonical) -> Ranking:
    """``ranking`` (over the canonical genes) in the original gene order.

    Gene positions in ``info["order"]`` (multivariate selectors' entry order) are mapped too.
    """
    if canon.identity or ranking.genes != canon.expression.genes:
        return ranking
    inv = _back(canon)
    info = dict(ranking.info)
    if "order" in info:
        info["order"] = [int(canon.genes[int(i)]) for i in info["order"]]
    return Ranking(
        name=ranking.name,
        genes=[ranking.genes[i] for i in inv],
        scores=ranking.scores[inv],
        higher_is_better=ranking.higher_is_better,
        params=ranking.params,
        info=info,
    )


def restore_aggregate(final: AggregateRanking, canon: Canonical) -> AggregateRanking:
    """``final`` (over the canonical genes) in the original gene order."""
    if canon.identity or final.genes != canon.expression.genes:
        return final
    inv = _back(canon)
    return AggregateRanking(
        method=final.method,
        genes=[final.genes[i] for i in inv],
        scores=final.scores[inv],
        list_names=final.list_names,
        list_ranks=final.list_ranks[inv],
        weights=final.weights,
        info=final.info,
        statistics={k: np.asarray(v)[inv] for k, v in final.statistics.items()},
        diagnostics={
            k: (np.asarray(v)[inv] if k == "support" and v is not None else v)
            for k, v in final.diagnostics.items()
        },
    )
