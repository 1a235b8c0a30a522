"""Core types passed between the stages of kofs (DESIGN.md, "Core types").

All are frozen dataclasses; their arrays are made read-only on construction. Knowledge objects
(:class:`SampleCategories`, :class:`SampleSimilarity`, :class:`FeatureRelation`,
:class:`FeatureFunctions`) are always *aligned*: their sample or gene axis is in the order of the
:class:`Expression` they were built for. Aligning happens once, in the converters.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kofs._compute.ranks import average_ranks
from kofs._compute.run_cache import cache_of
from kofs.errors import InputError, ParameterError, whole_number

__all__ = [
    "Expression",
    "SampleCategories",
    "SampleSimilarity",
    "FeatureRelation",
    "FeatureFunctions",
    "RankerInputs",
    "Ranking",
    "AggregateRanking",
]


def _is_sparse(x: Any) -> bool:
    """``scipy.sparse.issparse(x)``, without importing scipy: a sparse matrix exists only
    once scipy.sparse was imported (``kofs --help`` and dense runs stay free of it)."""
    sparse = sys.modules.get("scipy.sparse")
    return sparse is not None and bool(sparse.issparse(x))


def _is_dask(x: Any) -> bool:
    """:func:`kofs._compute.chunked.is_dask`, imported (with scipy.sparse) only for a non-ndarray."""
    if isinstance(x, np.ndarray):
        return False
    from kofs._compute.chunked import is_dask

    return is_dask(x)


def _frozen(a: np.ndarray) -> np.ndarray:
    """A read-only view of ``a`` (the caller's array itself stays writeable; no copy)."""
    view = np.asarray(a).view()
    view.setflags(write=False)
    return view


def seed_scoring(record: Mapping[str, Any] | None) -> str:
    """How a seeded list was scored on its seed genes (``diagnostics["cross_fit"][list]``)."""
    if not record:
        return "-"
    if record.get("rule") == "re-seeded":
        return f"re-seeded {record['folds']}-fold"
    return "excluded"


def first_repeated(ids: Sequence[str]) -> str | None:
    """The first id given more than once, or None."""
    if len(set(ids)) == len(ids):
        return None
    return next(i for i, k in Counter(ids).items() if k > 1)


def _refuse_repeated_genes(genes: Sequence[str], source: str | None) -> None:
    """An :class:`Expression`'s gene ids are distinct: a repeated id is refused, naming it, as
    the matrix readers' default policy refuses one (``duplicates="error"``,
    ``--duplicate-genes error``); their other policies merge the rows of a file."""
    if len(set(genes)) == len(genes):
        return
    counts = Counter(genes)
    repeated = [g for g, k in counts.items() if k > 1]
    first = f"{repeated[0]!r:.40} is there {counts[repeated[0]]} times"
    if len(repeated) > 1:
        shown = ", ".join(f"{g!r:.40}" for g in repeated[:5]) + ", ..." * (len(repeated) > 5)
        first += f"; {len(repeated)} repeated ids in all: {shown}"
    raise ParameterError(
        f"gene ids are not unique ({first}); give each gene once "
        "(merge the rows first: kofs.read_expression's duplicates='first', 'mean' or "
        "'max-variance' does so for a file, as kofs rank --duplicate-genes)",
        path=source,
    )


def _ids(values: Sequence[str]) -> tuple[str, ...]:
    if values is None or isinstance(values, (str, bytes)):
        raise ParameterError(f"gene or sample ids must be a sequence of names, got {values!r:.40}")
    return tuple(str(v) for v in values)


@dataclass(frozen=True, eq=False)
class Expression:
    """An expression matrix, samples as rows.

    Attributes
    ----------
    values : ndarray or scipy.sparse.csr_matrix of shape (n_samples, n_genes), float64
        Dense, or sparse CSR (cells x genes, e.g. single-cell counts): a sparse matrix is kept
        sparse (canonical CSR) and every ranker that declares ``sparse=True`` in the registry
        works on it without densifying. A dask array (chunked over the cells, chunks dense or
        CSR) stays lazy: the same rankers reduce it chunk by chunk (:mod:`kofs._compute.chunked`).
    genes : tuple of str, length n_genes
    samples : tuple of str, length n_samples
    namespace : str or None
        Identifier type of ``genes`` (``"symbol"``, ``"entrez"``, ``"ensembl"``, ...), if known.
    annotations : mapping of str to tuple of str
        Extra per-gene identifier columns read with the matrix (e.g. ``{"symbol": (...)}``).
    source : str or None
        Path the matrix was read from.
    """

    values: Any  # ndarray, scipy.sparse CSR or dask array
    genes: tuple[str, ...]
    samples: tuple[str, ...]
    namespace: str | None = None
    annotations: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    source: str | None = None

    def __repr__(self) -> str:
        kind = "chunked" if self.is_chunked else "sparse" if self.is_sparse else "dense"
        return (
            f"<Expression: {self.n_samples:,} {self.unit} x {self.n_genes:,} genes, {kind}"
            + (f", ids: {self.namespace}" if self.namespace else "")
            + (f", from {self.source}" if self.source else "")
            + ">"
        )

    def __post_init__(self) -> None:
        if _is_sparse(self.values):
            import scipy.sparse as sp

            from kofs._compute.blocks import as_csr, csr_problem

            problem = csr_problem(self.values)  # in its own format: before any conversion
            if problem:  # before any kernel indexes with its arrays; the file is named
                raise InputError(f"malformed sparse matrix ({problem})", path=self.source)
            v = as_csr(sp.csr_matrix(self.values))
        elif _is_dask(self.values):
            v = self.values  # chunked over the cells, stays lazy (kofs._compute.chunked)
            if v.ndim != 2:
                raise ParameterError("Expression.values must be 2-D (samples x genes)")
        else:
            v = np.asarray(self.values, dtype=np.float64)
            if v.ndim != 2:
                raise ParameterError("Expression.values must be 2-D (samples x genes)")
            v = _frozen(v)
        object.__setattr__(self, "values", v)
        object.__setattr__(self, "genes", _ids(self.genes))
        object.__setattr__(self, "samples", _ids(self.samples))
        _refuse_repeated_genes(self.genes, self.source)
        for what, ids in (("gene", self.genes), ("sample", self.samples)):
            joined = "".join(ids)  # one pass in C over a million cell ids
            if "\t" not in joined and "\n" not in joined and "\r" not in joined:
                continue
            bad = next(x for x in ids if "\t" in x or "\n" in x or "\r" in x)
            if bad:  # every output is a tab-separated table
                raise InputError(
                    f"{what} id {bad!r} holds a tab or a line break; ids are written to "
                    "tab-separated tables (rename it)",
                    path=self.source,
                )
        if v.shape != (len(self.samples), len(self.genes)):
            raise ParameterError(
                f"Expression.values has shape {v.shape}, ids give "
                f"({len(self.samples)}, {len(self.genes)})"
            )
        ann = {k: _ids(col) for k, col in dict(self.annotations).items()}
        for k, col in ann.items():
            if len(col) != len(self.genes):
                raise ParameterError(f"annotation column {k!r} has the wrong length")
        object.__setattr__(self, "annotations", ann)

    @property
    def n_samples(self) -> int:
        return self.values.shape[0]

    @property
    def n_genes(self) -> int:
        return self.values.shape[1]

    @property
    def is_sparse(self) -> bool:
        """True when ``values`` is a scipy.sparse CSR matrix."""
        return _is_sparse(self.values)

    @property
    def is_chunked(self) -> bool:
        """True when ``values`` is a dask array (chunked over the cells, computed lazily)."""
        return _is_dask(self.values)

    @property
    def unit(self) -> str:
        """What the rows are, in words: ``"cells"`` for single-cell data (sparse or chunked,
        or read from an .h5ad, a 10x file or folder), else ``"samples"``."""
        if self.is_sparse or self.is_chunked:
            return "cells"
        src = str(self.source or "").lower()
        if src.endswith((".h5ad", ".h5", ".loom", ".mtx", ".mtx.gz")) or (
            src and os.path.isdir(src)
        ):
            return "cells"
        return "samples"

    def gene_index(self) -> dict[str, int]:
        """Map gene id -> column index."""
        return {g: i for i, g in enumerate(self.genes)}

    def subset_samples(self, idx: Sequence[int] | np.ndarray) -> Expression:
        """A new :class:`Expression` holding only the samples at positions ``idx``."""
        idx = np.asarray(idx, dtype=int)
        return Expression(
            self.values[idx],
            self.genes,
            tuple(self.samples[i] for i in idx),
            namespace=self.namespace,
            annotations=self.annotations,
            source=self.source,
        )

    def subset_genes(self, idx: Sequence[int] | np.ndarray) -> Expression:
        """A new :class:`Expression` holding only the genes at positions ``idx``."""
        idx = np.asarray(idx, dtype=int)
        return Expression(
            self.values[:, idx],
            tuple(self.genes[i] for i in idx),
            self.samples,
            namespace=self.namespace,
            annotations={k: tuple(c[i] for i in idx) for k, c in self.annotations.items()},
            source=self.source,
        )


@dataclass(frozen=True, eq=False)
class SampleCategories:
    """A class label per sample (book: K_CAT^SAM).

    Attributes
    ----------
    labels : tuple of str, one per sample, aligned to ``samples``
    samples : tuple of str
    name : str
        Name of the label column.
    parents : mapping of str to str
        Optional hierarchy: label -> parent label.
    by_position : bool
        The labels follow the matrix's samples in order and carry no sample ids (a GSEA
        ``.cls``): ``samples`` are placeholders (``#1``, ``#2``, ...) until
        :func:`kofs.io.labels.align_labels` pairs the labels with the matrix's samples.
    """

    labels: tuple[str, ...]
    samples: tuple[str, ...]
    name: str = "label"
    parents: Mapping[str, str] = field(default_factory=dict)
    by_position: bool = False

    def __repr__(self) -> str:
        classes = self.classes
        shown = ", ".join(classes[:6]) + (", ..." if len(classes) > 6 else "")
        return (
            f"<SampleCategories {self.name!r}: {len(self.samples):,} samples, "
            f"{len(classes)} classes ({shown})>"
        )

    def __post_init__(self) -> None:
        object.__setattr__(self, "labels", _ids(self.labels))
        object.__setattr__(self, "samples", _ids(self.samples))
        if len(self.labels) != len(self.samples):
            raise ParameterError("SampleCategories: labels and samples differ in length")

    @property
    def classes(self) -> tuple[str, ...]:
        """Sorted distinct labels."""
        return tuple(sorted(set(self.labels)))

    @property
    def codes(self) -> np.ndarray:
        """Integer code per sample (index into :attr:`classes`)."""
        lookup = {c: i for i, c in enumerate(self.classes)}
        return np.fromiter((lookup[v] for v in self.labels), dtype=np.int64, count=len(self.labels))

    @property
    def n_classes(self) -> int:
        return len(self.classes)


@dataclass(frozen=True, eq=False)
class SampleSimilarity:
    """An n x n sample affinity (book: K_SIM^{int,SAM}).

    Attributes
    ----------
    matrix : ndarray or scipy.sparse.csr_matrix of shape (n, n), symmetric, non-negative
    samples : tuple of str
    name : str
    provenance : mapping
        How it was built (builder name and parameters).
    """

    matrix: Any
    samples: tuple[str, ...]
    name: str = "similarity"
    provenance: Mapping[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        kind = f"sparse, {self.matrix.nnz:,} entries" if self.is_sparse else "dense"
        return f"<SampleSimilarity {self.name!r}: {len(self.samples):,} samples, {kind}>"

    def __post_init__(self) -> None:
        m = self.matrix
        if _is_sparse(m):
            import scipy.sparse as sp

            m = sp.csr_matrix(m, dtype=np.float64)
        else:
            m = _frozen(np.asarray(m, dtype=np.float64))
        object.__setattr__(self, "matrix", m)
        object.__setattr__(self, "samples", _ids(self.samples))
        if m.shape != (len(self.samples), len(self.samples)):
            raise ParameterError("SampleSimilarity: matrix shape does not match samples")
        object.__setattr__(self, "provenance", dict(self.provenance))

    @property
    def is_sparse(self) -> bool:
        return _is_sparse(self.matrix)

    def degrees(self) -> np.ndarray:
        """Row sums d = S 1."""
        return np.asarray(self.matrix.sum(axis=1)).ravel()


@dataclass(frozen=True, eq=False)
class FeatureRelation:
    """A sparse m x m weighted gene graph over the matrix's genes (book: K_REL^{int,FEA}).

    Attributes
    ----------
    matrix : scipy.sparse.csr_matrix of shape (m, m), non-negative weights
    genes : tuple of str (the expression matrix's genes, in its order)
    directed : bool
    name : str
    provenance : mapping
    """

    matrix: Any
    genes: tuple[str, ...]
    directed: bool = False
    name: str = "relation"
    provenance: Mapping[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        return (
            f"<FeatureRelation {self.name!r}: {len(self.genes):,} genes, "
            f"{self.matrix.nnz:,} edges{', directed' if self.directed else ''}>"
        )

    def __post_init__(self) -> None:
        import scipy.sparse as sp

        object.__setattr__(self, "matrix", sp.csr_matrix(self.matrix, dtype=np.float64))
        object.__setattr__(self, "genes", _ids(self.genes))
        if self.matrix.shape != (len(self.genes), len(self.genes)):
            raise ParameterError("FeatureRelation: matrix shape does not match genes")
        object.__setattr__(self, "provenance", dict(self.provenance))


@dataclass(frozen=True, eq=False)
class FeatureFunctions:
    """A sparse genes x terms incidence with a relevance per term (book: K_FUN^{int,FEA}).

    Attributes
    ----------
    incidence : scipy.sparse.csr_matrix of shape (m, T), 0/1 (or weights)
    genes : tuple of str (the expression matrix's genes, in its order)
    terms : tuple of str, length T
    term_names : tuple of str, length T
    relevance : ndarray of shape (T,) or None
        Relevance r_t^fun of each term (eq. 6.15); None when not yet known.
    name : str
    provenance : mapping
    """

    incidence: Any
    genes: tuple[str, ...]
    terms: tuple[str, ...]
    term_names: tuple[str, ...] = ()
    relevance: np.ndarray | None = None
    name: str = "functions"
    provenance: Mapping[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        return (
            f"<FeatureFunctions {self.name!r}: {len(self.genes):,} genes x "
            f"{len(self.terms):,} terms, relevance {'set' if self.relevance is not None else 'none'}>"
        )

    def __post_init__(self) -> None:
        import scipy.sparse as sp

        object.__setattr__(self, "incidence", sp.csr_matrix(self.incidence, dtype=np.float64))
        object.__setattr__(self, "genes", _ids(self.genes))
        object.__setattr__(self, "terms", _ids(self.terms))
        names = _ids(self.term_names) if self.term_names else self.terms
        object.__setattr__(self, "term_names", names)
        if self.incidence.shape != (len(self.genes), len(self.terms)):
            raise ParameterError("FeatureFunctions: incidence shape does not match genes x terms")
        if len(names) != len(self.terms):
            raise ParameterError("FeatureFunctions: term_names and terms differ in length")
        if self.relevance is not None:
            r = np.asarray(self.relevance, dtype=np.float64)
            if r.shape != (len(self.terms),):
                raise ParameterError("FeatureFunctions: relevance must have one value per term")
            object.__setattr__(self, "relevance", _frozen(r))
        object.__setattr__(self, "provenance", dict(self.provenance))


@dataclass(frozen=True)
class RankerInputs:
    """The internal knowledge handed to one ranker call; every field optional.

    A ranker declares in the registry which fields it requires and which it can use.
    """

    categories: SampleCategories | None = None
    similarity: SampleSimilarity | None = None
    relation: FeatureRelation | None = None
    functions: FeatureFunctions | None = None

    def available(self) -> frozenset[str]:
        """Names of the fields that are set."""
        return frozenset(
            k
            for k in ("categories", "similarity", "relation", "functions")
            if getattr(self, k) is not None
        )


def _id_positions(genes: tuple[str, ...]) -> np.ndarray:
    """Each gene's position in gene-id order. Within a run the lists and the fusion share their
    genes and each is ordered several times: the run's kernel cache keeps one per gene set."""
    cache = cache_of("id_order")
    key = tuple(genes)  # the same object when genes is a tuple
    hit = None if cache is None else cache.get(key)
    if hit is not None:
        return hit
    by_id = np.empty(len(genes), dtype=np.int64)
    by_id[sorted(range(len(genes)), key=genes.__getitem__)] = np.arange(len(genes))
    by_id.setflags(write=False)
    if cache is not None:
        cache[key] = by_id
    return by_id


def _order_by_rank(ranks: np.ndarray, genes: tuple[str, ...]) -> np.ndarray:
    """Indices sorting by rank, ties by gene id (then position, for repeated ids)."""
    return np.lexsort((_id_positions(genes), ranks))


def count_argument(value: Any, what: str) -> int:
    """A number of genes (``top(n)``, a report's ``top``, ...) checked: a whole number >= 0,
    not a bool, text, float or None (a ParameterError naming ``what``, the same rule for every
    result's ``top``)."""
    if not whole_number(value) or value < 0:
        raise ParameterError(f"{what} must be a whole number of genes >= 0, got {value!r:.40}")
    return int(value)


def _symbols_argument(symbols: Any) -> Mapping[str, str] | None:
    """``to_frame``'s ``symbols``: a mapping of gene id to symbol, or None."""
    if symbols is not None and not isinstance(symbols, Mapping):
        raise ParameterError(
            f"to_frame: symbols must be a mapping of gene id to symbol (a dict) or None, got "
            f"{symbols!r:.40}"
        )
    return symbols


def _floats(values: Any) -> np.ndarray:
    """``values`` as float64, pandas' missing value ``<NA>`` read as NaN (as NumPy reads a
    nullable column, but not a list or an object column holding it)."""
    try:
        return np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        pandas = sys.modules.get("pandas")  # <NA> exists only once pandas was imported
        if pandas is None:
            raise
        items = np.asarray(values, dtype=object)
        if items.ndim != 1:
            raise
        return np.asarray([np.nan if v is pandas.NA else v for v in items], dtype=np.float64)


@dataclass(frozen=True, eq=False)
class Ranking:
    """One ranked list over all genes of a matrix.

    Attributes
    ----------
    name : str
        List name (e.g. ``"fisher"``, ``"GO-MAH"``).
    genes : tuple of str
    scores : ndarray of shape (m,)
        Native scores of the method; NaN marks a degenerate gene (zero variance, no knowledge).
    higher_is_better : bool
        Direction of ``scores``.
    params : mapping
        Resolved parameters of the method.
    info : mapping
        Method-specific extras (e.g. the entry order of a multivariate selector).
    ranks : ndarray of shape (m,)
        Derived: 1 = most relevant, ties averaged, NaN scores tied at the bottom.
    """

    name: str
    genes: tuple[str, ...]
    scores: np.ndarray
    higher_is_better: bool
    params: Mapping[str, Any] = field(default_factory=dict)
    info: Mapping[str, Any] = field(default_factory=dict)
    ranks: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise ParameterError(
                f"Ranking: name must be a str (the list's name), got {self.name!r:.40} of type "
                f"{type(self.name).__name__}"
            )
        try:
            s = _floats(self.scores)
        except (TypeError, ValueError):
            raise ParameterError(f"Ranking {self.name!r}: scores must be numbers") from None
        object.__setattr__(self, "genes", _ids(self.genes))
        if s.shape != (len(self.genes),):
            raise ParameterError(
                f"Ranking {self.name!r}: {s.size if s.ndim else 'a single number as'} scores "
                f"for {len(self.genes)} genes (one score per gene)"
            )
        if not isinstance(self.higher_is_better, (bool, np.bool_)):
            raise ParameterError(
                f"Ranking {self.name!r}: higher_is_better must be True or False, got "
                f"{self.higher_is_better!r:.40}"
            )
        if (twice := first_repeated(self.genes)) is not None:
            raise ParameterError(f"Ranking {self.name!r}: gene {twice!r} is listed twice")
        object.__setattr__(self, "scores", _frozen(s))
        object.__setattr__(
            self, "ranks", _frozen(average_ranks(s, higher_is_better=self.higher_is_better))
        )
        object.__setattr__(self, "params", dict(self.params))
        object.__setattr__(self, "info", dict(self.info))

    def order(self) -> np.ndarray:
        """Gene indices from best to worst (ties broken by gene id, NaN last), so the order
        does not depend on the matrix's gene order."""
        return _order_by_rank(self.ranks, self.genes)

    def top(self, k: int) -> list[str]:
        """The ``k`` best gene ids (a whole number >= 0; a labelled table: :meth:`to_frame`)."""
        return [self.genes[i] for i in self.order()[: count_argument(k, "top(k): k")]]

    def to_frame(self, symbols: Mapping[str, str] | None = None) -> Any:
        """The ranking as a pandas DataFrame indexed by gene id, best first: ``symbol`` (when
        ``symbols`` is given), ``rank`` and ``score`` (the ranker's native score)."""
        import pandas as pd

        symbols = _symbols_argument(symbols)
        order = self.order()
        genes = [self.genes[i] for i in order]
        df = pd.DataFrame(
            {"rank": self.ranks[order], "score": self.scores[order]},
            index=pd.Index(genes, name="gene"),
        )
        if symbols is not None:
            df.insert(0, "symbol", [symbols.get(g, "") for g in genes])
        return df

    def __repr__(self) -> str:
        best = ", ".join(self.top(5))
        return (
            f"<Ranking {self.name!r}: {len(self.genes):,} genes, "
            f"{'higher' if self.higher_is_better else 'lower'} score is better; top: {best}>"
        )


@dataclass(frozen=True, eq=False)
class AggregateRanking:
    """The fused ranking of several lists.

    Attributes
    ----------
    method : str
        Aggregator name (``"em"``, ``"borda"``, ...).
    genes : tuple of str
    scores : ndarray of shape (m,), higher is better
    list_names : tuple of str, length L
    list_ranks : ndarray of shape (m, L)
        The input ranks (1 = best) of every gene in every list; NaN where a list does not
        contain the gene (partial lists).
    weights : ndarray of shape (L,) or None
        Source weights pi (EM), summing to 1.
    info : mapping
        Convergence information (iterations, log-likelihood, converged, G size, ...).
    diagnostics : mapping
        Weight diagnostics (:mod:`kofs.aggregate.diagnostics`): ``weight_ci`` (L, 2),
        ``weight_sd``, ``loglik_gain``, ``identified``, ``warning``, ``agreement`` (L, L),
        ``supervision``, ``built_from``, ``support`` (bool per gene, or None), ...
    statistics : mapping of str to ndarray of shape (m,)
        Per-gene statistics the method defines besides its score, e.g. ``p_value`` and
        ``q_value`` (RRA) or ``stuart_q`` (Stuart); empty for most methods.
    ranks : ndarray of shape (m,)
        Derived: 1 = best, ties averaged.
    """

    method: str
    genes: tuple[str, ...]
    scores: np.ndarray
    list_names: tuple[str, ...]
    list_ranks: np.ndarray
    weights: np.ndarray | None = None
    info: Mapping[str, Any] = field(default_factory=dict)
    diagnostics: Mapping[str, Any] = field(default_factory=dict)
    statistics: Mapping[str, np.ndarray] = field(default_factory=dict)
    ranks: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "genes", _ids(self.genes))
        object.__setattr__(self, "list_names", _ids(self.list_names))
        s = np.asarray(self.scores, dtype=np.float64)
        if s.shape != (len(self.genes),):
            raise ParameterError("AggregateRanking: scores do not match genes")
        object.__setattr__(self, "scores", _frozen(s))
        lr = np.asarray(self.list_ranks, dtype=np.float64)
        if lr.shape != (len(self.genes), len(self.list_names)):
            raise ParameterError("AggregateRanking: list_ranks must be genes x lists")
        object.__setattr__(self, "list_ranks", _frozen(lr))
        if self.weights is not None:
            object.__setattr__(self, "weights", _frozen(np.asarray(self.weights, dtype=np.float64)))
        object.__setattr__(self, "ranks", _frozen(average_ranks(s, higher_is_better=True)))
        object.__setattr__(self, "info", dict(self.info))
        object.__setattr__(self, "diagnostics", dict(self.diagnostics))
        stats = {}
        for name, values in self.statistics.items():
            v = np.asarray(values, dtype=np.float64)
            if v.shape != s.shape:
                raise ParameterError(f"AggregateRanking: statistic {name!r} does not match genes")
            stats[str(name)] = _frozen(v)
        object.__setattr__(self, "statistics", stats)

    def order(self) -> np.ndarray:
        """Gene indices from best to worst (ties broken by gene id)."""
        return _order_by_rank(self.ranks, self.genes)

    def top(self, k: int) -> list[str]:
        """The ``k`` best gene ids (a labelled table: :meth:`to_frame`, or
        :meth:`kofs.pipeline.result.RunResult.top` with symbols and effects); ``k`` a whole
        number >= 0."""
        return [self.genes[i] for i in self.order()[: count_argument(k, "top(k): k")]]

    def weight_intervals(self) -> np.ndarray | None:
        """The (L, 2) weight intervals of the diagnostics (``weight_ci``), None without."""
        ci = self.diagnostics.get("weight_ci")
        if ci is None:
            return None
        a = np.asarray(ci, dtype=np.float64)
        return a if a.shape == (len(self.list_names), 2) else None

    def to_frame(self, symbols: Mapping[str, str] | None = None, *, lists: bool = True) -> Any:
        """The fused ranking as a pandas DataFrame indexed by gene id, best first.

        Columns: ``symbol`` (when ``symbols`` is given), ``rank``, ``score``, the per-gene
        statistics of the method (:attr:`statistics`, e.g. ``q_value``), then
        ``rank:<list>`` for every list (with ``lists``).
        """
        import pandas as pd

        symbols = _symbols_argument(symbols)
        order = self.order()
        genes = [self.genes[i] for i in order]
        cols: dict[str, Any] = {"rank": self.ranks[order], "score": self.scores[order]}
        for name, values in self.statistics.items():
            cols[name] = values[order]
        if lists:
            for j, name in enumerate(self.list_names):
                cols[f"rank:{name}"] = self.list_ranks[order, j]
        df = pd.DataFrame(cols, index=pd.Index(genes, name="gene"))
        if symbols is not None:
            df.insert(0, "symbol", [symbols.get(g, "") for g in genes])
        return df

    def weights_columns(self) -> dict[str, list]:
        """The columns of ``weights.tsv`` (:func:`kofs.io.output.write_weights`), one value per
        list in :attr:`list_names` order, without pandas: ``weight`` and, when the method gives
        them, ``ci_low``/``ci_high`` (95 % interval) and ``sd``; ``built_from`` (known genes a
        list was seeded from) when any list was, and ``seed_scoring`` when the aggregator records
        it. Empty for a method without weights."""
        if self.weights is None:
            return {}
        cols: dict[str, list] = {"weight": [float(w) for w in self.weights]}
        diag = self.diagnostics
        ci = self.weight_intervals()
        if ci is not None:
            cols["ci_low"] = [float(v) for v in ci[:, 0]]
            cols["ci_high"] = [float(v) for v in ci[:, 1]]
            sd = diag.get("weight_sd")
            if sd is not None and len(sd) == len(self.list_names):
                cols["sd"] = [float(v) for v in np.asarray(sd, dtype=np.float64)]
        seeded = diag.get("built_from") or {}
        if seeded:
            cols["built_from"] = [int(seeded.get(n, 0)) for n in self.list_names]
        cross = diag.get("cross_fit") or {}
        if cross:
            cols["seed_scoring"] = [seed_scoring(cross.get(n)) for n in self.list_names]
        return cols

    def weights_frame(self) -> Any:
        """The list weights as a pandas DataFrame indexed by list name, heaviest first, with the
        columns of :meth:`weights_columns` (those of ``weights.tsv``). Empty (no rows) for a
        method without weights."""
        import pandas as pd

        if self.weights is None:
            return pd.DataFrame({"weight": []}, index=pd.Index([], name="list"))
        index = pd.Index(list(self.list_names), name="list")
        df = pd.DataFrame(self.weights_columns(), index=index)
        return df.sort_values("weight", ascending=False, kind="stable")

    def __repr__(self) -> str:
        parts = [f"{len(self.genes):,} genes", f"{len(self.list_names)} lists"]
        if self.weights is not None:
            parts.append("weighted")
        if self.statistics:
            parts.append("statistics: " + ", ".join(self.statistics))
        return (
            f"<AggregateRanking {self.method!r}: {', '.join(parts)}; top: {', '.join(self.top(5))}>"
        )
