"""Per-gene evidence: the GO terms, pathways and neighbours that best explain a gene's place in
the fused ranking (the ``evidence`` column of ranking.tsv and the evidence of report.html).

A knowledge source says what it can explain with (``SourceSpec.evidence`` returns
:class:`EvidenceSource` items: a term incidence or a gene graph, with a label);
:func:`explain` turns them into a :class:`GeneEvidence` given the fused ranking.

**Terms** (GO terms, pathways). The *top set* is the first :func:`top_set_size` genes of the
fused ranking (200 of 8,562; 5 % of a small matrix, at least 10). A term is *enriched* when
its genes are over-represented in the top set: one-sided hypergeometric test, Benjamini-
Hochberg q <= :data:`Q_MAX` over the terms of the source whose size (genes of the matrix) lies
in [:data:`SIZE_MIN`, :data:`SIZE_MAX`] -- the size floor and the test keep out the tiny terms
that one gene alone makes "relevant". A gene's terms are its enriched terms ordered by fold
enrichment computed *without the gene itself* (other top genes of the term over the term's
other genes, relative to the top set's share), so a term explains a gene only through the
other genes it shares with the top, never through the gene alone (at least
:data:`MIN_SUPPORT` other top genes); the fold is shrunk towards 1 by a prior worth
:data:`PSEUDO_GENES` genes, so that 2 of 4 genes does not outrank 25 of 75. Shown: name, id, size, how many of its genes are in the top set and the
best-ranked of them (the supporting genes).

**Neighbours** (GO similarity graph, interaction network, graph files): a gene's neighbours
ordered by their fused rank, with how many of them are in the top set.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from kofs.types import FeatureFunctions, FeatureRelation

__all__ = [
    "EvidenceSource",
    "GeneEvidence",
    "NeighbourHit",
    "TermHit",
    "enriched_terms",
    "explain",
    "top_set_size",
]

#: Smallest and largest term (genes of the matrix annotated to it) that can explain a gene.
SIZE_MIN = 5
SIZE_MAX = 500
#: Largest Benjamini-Hochberg q-value of an enriched term.
Q_MAX = 0.05
#: Fewest other top genes of a term that explain a gene with it.
MIN_SUPPORT = 2
#: Pseudo-genes of the prior that shrinks a term's fold enrichment towards 1 (no enrichment).
PSEUDO_GENES = 10.0
#: Terms and neighbours shown per gene and source; supporting genes shown per term.
SHOWN = 3
SUPPORT_SHOWN = 3


def top_set_size(m: int) -> int:
    """Genes in the top set of a ranking of ``m`` genes: 5 % of them, at least 10, at most 200
    (never more than ``m``)."""
    return int(min(m, max(10, min(200, int(np.ceil(0.05 * m))))))


@dataclass(frozen=True)
class EvidenceSource:
    """What a knowledge source explains genes with.

    Attributes
    ----------
    order : float
        Position of its part in the evidence text (smaller first).
    label : str
        E.g. ``"GO"``, ``"pathways"``, ``"interactors"``.
    knowledge : FeatureFunctions or FeatureRelation
        Aligned to the ranking's genes: terms (incidence) or a gene graph.
    """

    order: float
    label: str
    knowledge: FeatureFunctions | FeatureRelation


@dataclass(frozen=True)
class TermHit:
    """An enriched term of a gene: ``term`` id, ``name``, ``size`` (genes of the matrix),
    ``in_top`` (of them in the top set, the gene included), ``fold`` (shrunken enrichment
    without the gene), ``q`` (BH q-value of the term), ``support`` (best-ranked other top genes, ids)."""

    term: str
    name: str
    size: int
    in_top: int
    fold: float
    q: float
    support: tuple[str, ...]


@dataclass(frozen=True)
class NeighbourHit:
    """Neighbours of a gene: the ``shown`` ids (best fused rank first), ``n_neighbours`` and
    ``in_top`` (of them in the top set)."""

    shown: tuple[str, ...]
    n_neighbours: int
    in_top: int


def hypergeom_upper(x: np.ndarray, N: int, n: np.ndarray, K: int) -> np.ndarray:
    """P(X >= x) for X hypergeometric (population ``N``, ``n`` successes in it, ``K`` draws),
    vectorised over ``x`` and ``n``: scipy.stats.hypergeom.sf(x - 1, N, n, K). The first term
    of each tail comes from log-gamma functions, the next ones by the ratio
    pmf(j+1)/pmf(j) = (n-j)(K-j) / ((j+1)(N-n-K+j+1)), all in one array operation."""
    from scipy.special import gammaln

    x = np.asarray(x, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    if x.size == 0:
        return np.zeros(0)

    def lchoose(a: np.ndarray | float, b: np.ndarray | float) -> np.ndarray:
        return gammaln(np.add(a, 1)) - gammaln(np.add(b, 1)) - gammaln(np.add(a, 1) - b)

    hi = np.minimum(n, K)
    lo = np.maximum(x, np.maximum(0.0, K - (N - n)))
    first = np.exp(lchoose(n, lo) + lchoose(N - n, K - lo) - lchoose(N, K))
    width = int(max(0.0, (hi - lo).max()))
    if width == 0:
        return np.where(lo <= hi, np.clip(first, 0.0, 1.0), 0.0)
    j = lo[:, None] + np.arange(width, dtype=np.float64)[None, :]  # pmf(j) -> pmf(j + 1)
    nn = n[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (nn - j) * (K - j) / ((j + 1) * (N - nn - K + j + 1))
    ratio = np.where(j < hi[:, None], ratio, 0.0)
    terms = first[:, None] * np.cumprod(ratio, axis=1)
    p = np.where(lo <= hi, first + terms.sum(axis=1), 0.0)
    return np.clip(p, 0.0, 1.0)


def _binary(M: Any) -> sp.csr_matrix:
    B = sp.csr_matrix(M, dtype=np.float64, copy=True)
    B.eliminate_zeros()
    B.data[:] = 1.0
    return B


def enriched_terms(
    functions: FeatureFunctions,
    top: np.ndarray,
    *,
    size_min: int = SIZE_MIN,
    size_max: int = SIZE_MAX,
    q_max: float = Q_MAX,
) -> dict[str, np.ndarray]:
    """Enrichment of every term in the top set.

    Parameters
    ----------
    functions : FeatureFunctions (m genes x T terms)
    top : bool ndarray of shape (m,)
        The top set.

    Returns
    -------
    dict of ndarray of shape (T,)
        ``size`` (genes of the matrix), ``in_top``, ``p`` (one-sided hypergeometric, 1 for a
        term outside the size range), ``q`` (BH over the terms in the size range, 1 outside),
        ``enriched`` (bool: in range and q <= ``q_max``).
    """
    B = _binary(functions.incidence)
    size = np.asarray(B.sum(axis=0)).ravel()
    in_top = np.asarray(B.T @ top.astype(np.float64)).ravel()
    m, k = B.shape[0], int(top.sum())
    ok = (size >= size_min) & (size <= size_max)
    p = np.ones(size.size)
    hit = ok & (in_top > 0)  # P(X >= 0) = 1: only terms with a top gene need the test
    p[hit] = hypergeom_upper(in_top[hit], m, size[hit], k)
    q = np.ones(size.size)
    from scipy.stats import false_discovery_control  # Benjamini-Hochberg

    q[ok] = false_discovery_control(p[ok])
    return {"size": size, "in_top": in_top, "p": p, "q": q, "enriched": ok & (q <= q_max)}


def _first_per_row(rows: np.ndarray, n_rows: int, keep: int) -> np.ndarray:
    """Mask of the first ``keep`` entries of each row in ``rows`` (sorted by row)."""
    start = np.searchsorted(rows, np.arange(n_rows))
    return (np.arange(rows.size) - start[rows]) < keep


def _term_hits(
    functions: FeatureFunctions, top: np.ndarray, rank_order: np.ndarray, genes: Sequence[str]
) -> list[tuple[TermHit, ...]]:
    m = len(genes)
    stats = enriched_terms(functions, top)
    enriched = np.flatnonzero(stats["enriched"])
    out: list[tuple[TermHit, ...]] = [()] * m
    if enriched.size == 0:
        return out
    members = sp.csc_matrix(_binary(functions.incidence))[:, enriched]
    B = members.tocoo()
    row, col = B.row.astype(np.int64), B.col.astype(np.int64)
    size, in_top = stats["size"][enriched], stats["in_top"][enriched]
    self_top = top[row].astype(np.float64)
    others_top = in_top[col] - self_top  # other top genes of the term
    keep = others_top >= MIN_SUPPORT
    row, col, others_top, self_top = row[keep], col[keep], others_top[keep], self_top[keep]
    k, N = float(top.sum()), float(m)
    share = np.maximum(k - self_top, 1.0) / max(N - 1.0, 1.0)
    # posterior mean of the term's share of top genes under a Beta prior of PSEUDO_GENES genes
    # centred on the top set's share, over that share: a term of few genes is not trusted more
    # than its genes warrant
    fold = (others_top + PSEUDO_GENES * share) / (size[col] - 1.0 + PSEUDO_GENES) / share
    term_key = np.empty(enriched.size, dtype=np.int64)
    ids = [functions.terms[t] for t in enriched]
    term_key[sorted(range(len(ids)), key=ids.__getitem__)] = np.arange(len(ids))
    sort = np.lexsort((term_key[col], -others_top, -fold, row))
    row, col, fold = row[sort], col[sort], fold[sort]
    first = _first_per_row(row, m, SHOWN)
    row, col, fold = row[first], col[first], fold[first]
    # the best-ranked top genes of each shown term (one more than shown: the gene may be one)
    rank_pos = np.empty(m, dtype=np.int64)
    rank_pos[rank_order] = np.arange(m)
    support: dict[int, list[int]] = {}
    for c in np.unique(col):
        g = members.indices[members.indptr[c] : members.indptr[c + 1]]
        g = g[top[g]]
        support[int(c)] = g[np.argsort(rank_pos[g], kind="stable")][: SUPPORT_SHOWN + 1].tolist()
    hits: dict[int, list[TermHit]] = {}
    q = stats["q"][enriched]
    made: dict[tuple[int, float, int], TermHit] = {}  # one hit per term, fold and left-out gene
    for i, c, f in zip(row.tolist(), col.tolist(), fold.tolist(), strict=True):
        own = i if i in support[c] else -1  # the gene itself is never its own support
        hit = made.get((c, f, own))
        if hit is None:
            t = int(enriched[c])
            hit = made[(c, f, own)] = TermHit(
                term=functions.terms[t],
                name=functions.term_names[t],
                size=int(size[c]),
                in_top=int(in_top[c]),
                fold=float(f),
                q=float(q[c]),
                support=tuple(genes[j] for j in support[c] if j != i)[:SUPPORT_SHOWN],
            )
        hits.setdefault(i, []).append(hit)
    for i, h in hits.items():
        out[i] = tuple(h)
    return out


def _neighbour_hits(
    relation: FeatureRelation, top: np.ndarray, ranks: np.ndarray, genes: Sequence[str]
) -> list[NeighbourHit | None]:
    W = sp.csr_matrix(relation.matrix)
    if not relation.directed:
        W = W.maximum(W.T)
    c = W.tocoo()
    off = c.row != c.col
    m = len(genes)
    W = _binary(sp.csr_matrix((c.data[off], (c.row[off], c.col[off])), shape=W.shape))
    degree = np.diff(W.indptr)
    in_top = np.asarray(W @ top.astype(np.float64)).ravel().astype(np.int64)
    coo = W.tocoo()
    row, col = coo.row.astype(np.int64), coo.col.astype(np.int64)
    key = np.empty(m, dtype=np.int64)
    key[sorted(range(m), key=genes.__getitem__)] = np.arange(m)
    sort = np.lexsort((key[col], ranks[col], row))
    row, col = row[sort], col[sort]
    first = _first_per_row(row, m, SHOWN)
    row, col = row[first], col[first]
    shown: dict[int, list[str]] = {}
    for i, j in zip(row.tolist(), col.tolist(), strict=True):
        shown.setdefault(i, []).append(genes[j])
    return [
        NeighbourHit(tuple(shown[i]), int(degree[i]), int(in_top[i])) if degree[i] else None
        for i in range(m)
    ]


_UNSAFE = re.compile(r"[|;\t\r\n]+")


def _clean(text: str) -> str:
    return _UNSAFE.sub(",", text).strip()


class GeneEvidence(Mapping[str, str]):
    """Gene id -> evidence text (a mapping, as ranking.tsv's ``evidence`` column), with the
    structured evidence behind it: :meth:`parts` gives each source's :class:`TermHit` tuple or
    :class:`NeighbourHit` of a gene.

    Text: ``"<label>: <item>; <item> | <label>: ..."``; a term reads
    ``"name (ID: 8 of 10 genes in the top 200, with A, B, C)"``, neighbours
    ``"A, B, C (5 of 12 in the top 200)"``; genes by symbol where known.
    """

    def __init__(
        self,
        genes: Sequence[str],
        labels: Sequence[str],
        hits: Sequence[Sequence[Any]],
        *,
        top: int,
        symbols: Mapping[str, str] | None = None,
    ) -> None:
        self.genes = tuple(genes)
        self.labels = tuple(labels)
        self.top = int(top)
        self.symbols = dict(symbols or {})
        self._index = {g: i for i, g in enumerate(self.genes)}
        self._hits = [list(h) for h in hits]  # per source, per gene
        self._term_texts: dict[int, str] = {}  # by id() of a TermHit, shared between genes
        self._text: dict[str, str] = {}  # formatted when first asked for
        self._explained = tuple(  # the genes with any evidence, in the genes' order
            g for i, g in enumerate(self.genes) if any(h[i] for h in self._hits)
        )
        self._has = frozenset(self._explained)

    def name(self, gene: str) -> str:
        """The gene's symbol where known, else its id."""
        return self.symbols.get(gene, gene)

    def parts(self, gene: str) -> dict[str, Any]:
        """{label: tuple of TermHit, or NeighbourHit} of ``gene`` (sources with evidence)."""
        i = self._index[gene]
        return {lab: h[i] for lab, h in zip(self.labels, self._hits, strict=True) if h[i]}

    def _format(self, i: int) -> str:
        parts = []
        for label, per_gene in zip(self.labels, self._hits, strict=True):
            h = per_gene[i]
            if not h:
                continue
            if isinstance(h, NeighbourHit):
                names = ", ".join(_clean(self.name(g)) for g in h.shown)
                parts.append(
                    f"{label}: {names} ({h.in_top} of {h.n_neighbours} in the top {self.top})"
                )
            else:
                parts.append(f"{label}: " + "; ".join(self._cached_text(t) for t in h))
        return " | ".join(parts)

    def _cached_text(self, t: TermHit) -> str:
        text = self._term_texts.get(id(t))
        if text is None:
            text = self._term_texts[id(t)] = self.term_text(t)
        return text

    def term_text(self, t: TermHit) -> str:
        """``"name (ID: 8 of 10 genes in the top 200, with A, B, C)"``."""
        name = _clean(t.name)
        ident = "" if t.name == t.term else f"{_clean(t.term)}: "
        support = ", ".join(_clean(self.name(g)) for g in t.support)
        return (
            f"{name} ({ident}{t.in_top} of {t.size} genes in the top {self.top}"
            + (f", with {support}" if support else "")
            + ")"
        )

    def __getitem__(self, gene: str) -> str:
        if gene not in self._has:
            raise KeyError(gene)
        text = self._text.get(gene)
        if text is None:
            text = self._text[gene] = self._format(self._index[gene])
        return text

    def __contains__(self, gene: object) -> bool:
        return gene in self._has

    def __iter__(self) -> Iterator[str]:
        return iter(self._explained)

    def __len__(self) -> int:
        return len(self._explained)

    def __repr__(self) -> str:
        return (
            f"<GeneEvidence: {len(self)} of {len(self.genes):,} genes explained by "
            f"{', '.join(self.labels) or 'nothing'}; top set {self.top}>"
        )


def explain(
    sources: Sequence[EvidenceSource],
    genes: Sequence[str],
    ranks: np.ndarray,
    *,
    symbols: Mapping[str, str] | None = None,
) -> GeneEvidence | None:
    """The evidence of every gene given the fused ranking (None without any source).

    Parameters
    ----------
    sources : sequence of EvidenceSource
        Their knowledge aligned to ``genes``.
    genes : sequence of str
    ranks : ndarray of shape (m,)
        Fused ranks (1 = best; ties and NaN allowed: order by rank, then gene id).
    symbols : mapping gene id -> symbol, optional
    """
    sources = sorted(sources, key=lambda s: s.order)
    if not sources:
        return None
    genes = tuple(genes)
    m = len(genes)
    r = np.asarray(ranks, dtype=np.float64)
    r = np.where(np.isfinite(r), r, np.inf)
    key = np.empty(m, dtype=np.int64)
    key[sorted(range(m), key=genes.__getitem__)] = np.arange(m)
    order = np.lexsort((key, r))
    k = top_set_size(m)
    top = np.zeros(m, dtype=bool)
    top[order[:k]] = True
    dense_rank = np.empty(m, dtype=np.int64)
    dense_rank[order] = np.arange(m)
    hits: list[Sequence[Any]] = []
    for s in sources:
        know = s.knowledge
        if tuple(know.genes) != genes:
            raise ValueError(f"evidence {s.label!r}: knowledge not aligned to the ranking")
        if isinstance(know, FeatureFunctions):
            hits.append(_term_hits(know, top, order, genes))
        else:
            hits.append(_neighbour_hits(know, top, dense_rank, genes))
    return GeneEvidence(genes, [s.label for s in sources], hits, top=k, symbols=symbols)
