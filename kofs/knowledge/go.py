"""Gene Ontology knowledge: information content, gene semantic similarity, and the two KOFS
knowledge kinds built from GO (book ch. 6; ALGORITHMS.md §7, §9, §13).

* :func:`gene_similarity` — gene x gene Resnik/Lin similarity (BMA, max or avg), one aspect.
* :func:`go_relation` — sparse top-k GO-similarity graph over the matrix's genes
  (``K_REL^{int,FEA}``, feeds GO-MAH and GO-REL-PROP).
* :func:`go_functions` — genes x GO terms incidence (``K_FUN^{int,FEA}``, feeds GO-REL-VOTE).

Two modes (:data:`MODES`):

``"kofs"`` (default)
    is_a + part_of ancestors; ``p(t)`` = distinct genes annotated to ``t`` or a descendant over
    genes annotated in the aspect; ``IC = -ln p``; all evidence codes (after the reader's
    filters) both in the corpus and in the gene term sets; raw Resnik (nats); no rounding.
``"gosemsim"``
    R GOSemSim 2.24 ``godata(ont=...)`` + ``mgeneSim``: is_a, part_of, regulates,
    negatively/positively_regulates; ``p(t)`` counts annotation rows; IEA dropped from the gene
    term sets only; Resnik divided by the largest finite IC; term similarities rounded to 3
    decimals before combining and the gene value again after; BMA of a gene with a single term
    is the max (as its ``combineScores`` does).

In both modes the aspect root is removed from gene term sets (an annotation to the root means
"no knowledge"), and genes left without terms get no similarity (NaN / no edge).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from kofs.errors import ParameterError
from kofs.io.annotations import GOAnnotations
from kofs.io.ids import CoverageReport, match_id_lists, normalise_id
from kofs.io.ontology import RELATIONS, ROOTS, Ontology, normalise_aspect
from kofs.knowledge.go_ic import ancestor_closure, annotation_counts, information_content
from kofs.knowledge.go_similarity import COMBINES, MEASURES, gene_similarity_blocks
from kofs.types import Expression, FeatureFunctions, FeatureRelation

log = logging.getLogger(__name__)

__all__ = ["MODES", "GOSemantics", "go_semantics", "gene_similarity", "go_relation", "go_functions"]

MODES = ("kofs", "gosemsim")
_MODE_RELATIONS = {"kofs": ("is_a", "part_of"), "gosemsim": RELATIONS}


@dataclass(frozen=True, eq=False)
class GOSemantics:
    """One aspect of an ontology with its closure and information content.

    Attributes
    ----------
    aspect : str
    mode : str
    terms : tuple of str, length T (sorted term ids of the aspect)
    index : dict of str to int
    closure : csr_matrix of shape (T, T), reflexive ancestor incidence
    ic : ndarray of shape (T,), ``+inf`` for unannotated terms
    scale : float
        Resnik divisor (1, or the largest finite IC in ``"gosemsim"`` mode).
    rows : dict of str to ndarray
        The annotation rows of the aspect: ``term`` (int), ``evidence`` and every id column.
    """

    aspect: str
    mode: str
    terms: tuple[str, ...]
    index: dict
    closure: sp.csr_matrix
    ic: np.ndarray
    scale: float
    rows: dict

    @property
    def root(self) -> int:
        return self.index[ROOTS[self.aspect]]


def _check(measure: str, combine: str, mode: str) -> None:
    if measure not in MEASURES:
        raise ParameterError(f"--measure {measure!r} is unknown; use one of {', '.join(MEASURES)}")
    if combine not in COMBINES:
        raise ParameterError(f"--combine {combine!r} is unknown; use one of {', '.join(COMBINES)}")
    if mode not in MODES:
        raise ParameterError(f"--mode {mode!r} is unknown; use one of {', '.join(MODES)}")


def go_semantics(
    ontology: Ontology,
    annotations: GOAnnotations,
    *,
    aspect: str = "BP",
    mode: str = "kofs",
    unknown_terms: Iterable[str] | None = None,
) -> GOSemantics:
    """Ancestor closure and information content of one aspect.

    Parameters
    ----------
    ontology : Ontology
    annotations : GOAnnotations
        Resolved against ``ontology`` here (alt ids mapped, unknown ids dropped).
    aspect : {"BP", "MF", "CC"}, default "BP"
    mode : {"kofs", "gosemsim"}, default "kofs"
    unknown_terms : iterable of str, optional
        Terms treated as absent from the ontology's term table: their annotations still count
        for their ancestors, but they get no IC, are never a common ancestor and are dropped
        from gene term sets. GOSemSim 2.24 computes IC only for the terms of its bundled
        ``gotbl``; passing the live terms it lacks reproduces it exactly (the list for GO
        2022-07-01 is ``tests/data/golden/gosemsim/gosemsim_2.24_missing_terms_GO_2022-07-01.txt``).

    Returns
    -------
    GOSemantics
    """
    if mode not in MODES:
        raise ParameterError(f"--mode {mode!r} is unknown; use one of {', '.join(MODES)}")
    aspect = normalise_aspect(aspect, what="--aspect")
    terms = ontology.terms_of(aspect)
    index = {t: i for i, t in enumerate(terms)}
    if ROOTS[aspect] not in index:
        raise ParameterError(f"the ontology has no {aspect} root term {ROOTS[aspect]}")
    edges = [
        (index[c], index[p])
        for c, p in ontology.parent_edges(_MODE_RELATIONS[mode])
        if c in index and p in index
    ]
    closure = ancestor_closure(len(terms), np.array(edges, dtype=np.int64).reshape(-1, 2))
    ann = annotations.resolved(ontology)
    mask = ann.aspect == aspect
    if not mask.any():
        raise ParameterError(
            f"no {aspect} annotation in {annotations.source}; choose another --aspect"
        )
    sub = ann.select(mask)
    term = np.fromiter((index[t] for t in sub.terms), dtype=np.int64, count=len(sub))
    rows = {"term": term, "evidence": sub.evidence, **sub.id_columns}
    key = sub.gene_ids()
    _, gene = np.unique(key, return_inverse=True)
    inc = sp.csr_matrix((np.ones(len(term)), (gene, term)), shape=(gene.max() + 1, len(terms)))
    counts = annotation_counts(inc, closure, per="row" if mode == "gosemsim" else "gene")
    ic = information_content(counts, counts[index[ROOTS[aspect]]])
    for t in unknown_terms or ():
        if t in index:
            ic[index[t]] = np.inf
    finite = ic[np.isfinite(ic)]
    scale = float(finite.max()) if mode == "gosemsim" and finite.size and finite.max() > 0 else 1.0
    log.info(
        "GO %s (%s mode): %d terms, %d annotated, max IC %.3f",
        aspect, mode, len(terms), int(np.isfinite(ic).sum()), float(finite.max(initial=0.0)),
    )  # fmt: skip
    return GOSemantics(aspect, mode, terms, index, closure, ic, scale, rows)


def _term_sets(sem: GOSemantics, gene_of_row: np.ndarray, n_genes: int) -> sp.csr_matrix:
    """Binary genes x terms matrix of direct annotations (root removed; IEA too in gosemsim)."""
    keep = (gene_of_row >= 0) & (sem.rows["term"] != sem.root) & np.isfinite(sem.ic[sem.rows["term"]])
    if sem.mode == "gosemsim":
        keep &= sem.rows["evidence"] != "IEA"
    m = sp.csr_matrix(
        (np.ones(int(keep.sum())), (gene_of_row[keep], sem.rows["term"][keep])),
        shape=(n_genes, len(sem.terms)),
    )
    m.sum_duplicates()
    m.data[:] = 1.0
    return m


def _mode_kwargs(sem: GOSemantics, measure: str, combine: str) -> dict:
    gs = sem.mode == "gosemsim"
    return dict(
        measure=measure,
        combine=combine,
        scale=sem.scale if measure == "resnik" else 1.0,
        decimals=3 if gs else None,
        single_term_max=gs,
        dtype=np.float64 if gs else np.float32,
    )


def _id_column(sem: GOSemantics, wanted: set[str]) -> str:
    cols = [k for k in sem.rows if k not in ("term", "evidence")]
    hits = {c: len(wanted & {normalise_id(v) for v in set(sem.rows[c])}) for c in cols}
    return max(cols, key=lambda c: hits[c])


def _rows_to_genes(sem: GOSemantics, genes: Sequence[str], column: str) -> np.ndarray:
    pos: dict[str, int] = {}
    for i, g in enumerate(genes):
        pos.setdefault(normalise_id(g), i)
    lookup = {v: pos.get(normalise_id(v), -1) for v in set(sem.rows[column])}
    return np.fromiter((lookup[v] for v in sem.rows[column]), dtype=np.int64, count=len(sem.rows[column]))


def gene_similarity(
    ontology: Ontology,
    annotations: GOAnnotations,
    genes: Sequence[str],
    genes2: Sequence[str] | None = None,
    *,
    measure: str = "lin",
    combine: str = "bma",
    aspect: str = "BP",
    mode: str = "kofs",
    id_column: str | None = None,
    semantics: GOSemantics | None = None,
) -> tuple[np.ndarray, list[str]]:
    """IC-based semantic similarity between genes.

    Parameters
    ----------
    ontology, annotations
        From :func:`kofs.io.ontology.read_obo` and :func:`kofs.io.annotations.read_go_annotations`.
    genes : sequence of str, length n1
        Gene ids in any id column of the annotations (chosen automatically: the most matches).
    genes2 : sequence of str, length n2, optional
        Column genes; default ``genes``.
    measure : {"lin", "resnik"}, default "lin"
    combine : {"bma", "max", "avg"}, default "bma"
    aspect : {"BP", "MF", "CC"}, default "BP"
    mode : {"kofs", "gosemsim"}, default "kofs"
    id_column : str, optional
        Force the annotation id column the genes are looked up in.
    semantics : GOSemantics, optional
        Precomputed :func:`go_semantics` (same aspect and mode) to reuse.

    Returns
    -------
    similarity : ndarray of shape (n1, n2)
        NaN in the rows/columns of genes without terms in the aspect.
    with_terms : list of str
        Genes (of ``genes``, then new ones of ``genes2``) that have terms, in input order.
    """
    _check(measure, combine, mode)
    sem = semantics or go_semantics(ontology, annotations, aspect=aspect, mode=mode)
    g1 = [str(g) for g in genes]
    g2 = g1 if genes2 is None else [str(g) for g in genes2]
    if id_column is None:
        id_column = _id_column(sem, {normalise_id(g) for g in g1 + g2})
    elif id_column not in sem.rows:
        annotations.gene_ids(id_column)  # raises the ParameterError
    sets1 = _term_sets(sem, _rows_to_genes(sem, g1, id_column), len(g1))
    sets2 = sets1 if genes2 is None else _term_sets(sem, _rows_to_genes(sem, g2, id_column), len(g2))
    has1 = np.flatnonzero(np.diff(sets1.indptr) > 0)
    has2 = has1 if genes2 is None else np.flatnonzero(np.diff(sets2.indptr) > 0)
    out = np.full((len(g1), len(g2)), np.nan)
    if len(has1) and len(has2):
        blocks = gene_similarity_blocks(
            sem.closure, sem.ic, sets1[has1], None if genes2 is None else sets2[has2],
            **_mode_kwargs(sem, measure, combine),
        )  # fmt: skip
        for rows, val in blocks:
            out[np.ix_(has1[rows], has2)] = val
    with_terms = [g1[i] for i in has1]
    seen = set(with_terms)
    with_terms += [g2[j] for j in has2 if g2[j] not in seen]
    missing = len(g1) - len(has1)
    if missing:
        log.info("%d of %d genes have no %s term (%s mode)", missing, len(g1), sem.aspect, mode)
    return out, with_terms


def _matrix_gene_of_rows(
    sem: GOSemantics, expression: Expression, source: str, id_map: Mapping[str, str] | None
) -> tuple[np.ndarray, CoverageReport]:
    """Matrix column of every annotation row (-1: none) via the id column that matches best."""
    cols = {k: v for k, v in sem.rows.items() if k not in ("term", "evidence")}
    col, mapping, report = match_id_lists(cols, expression, source=source, id_map=id_map)
    ids = cols[col]
    gene = np.fromiter((mapping.get(v, -1) for v in ids), dtype=np.int64, count=len(ids))
    return gene, report


def go_relation(
    expression: Expression,
    ontology: Ontology,
    annotations: GOAnnotations,
    *,
    measure: str = "lin",
    combine: str = "bma",
    aspect: str = "BP",
    mode: str = "kofs",
    top_k: int = 10,
    min_similarity: float = 0.0,
    id_map: Mapping[str, str] | None = None,
) -> tuple[FeatureRelation, CoverageReport]:
    """Sparse top-k GO semantic-similarity graph over the matrix's genes (``K_REL^{int,FEA}``).

    Each gene with terms keeps its ``top_k`` most similar other genes whose similarity exceeds
    ``min_similarity``; the graph is symmetrised by the element-wise maximum (an edge kept by
    either end). Genes without terms are isolated. Rows are computed in blocks; no dense
    genes x genes matrix is formed.

    Parameters
    ----------
    expression : Expression
    ontology, annotations
    measure, combine, aspect, mode
        As in :func:`gene_similarity`.
    top_k : int, default 10
        Neighbours kept per gene (k >= 1).
    min_similarity : float, default 0.0
        Edges need a similarity strictly above this.
    id_map : mapping, optional
        Annotation gene id -> matrix gene id (``--id-map``), as in
        :func:`kofs.io.ids.match_gene_ids`.

    Returns
    -------
    relation : FeatureRelation
        m x m, symmetric, weights = similarities.
    coverage : CoverageReport
    """
    _check(measure, combine, mode)
    if not isinstance(top_k, (int, np.integer)) or isinstance(top_k, bool) or top_k < 1:
        raise ParameterError(f"top_k {top_k!r} must be a positive integer (e.g. 10)")
    source = f"GO annotations {annotations.source or ''}".strip()
    sem = go_semantics(ontology, annotations, aspect=aspect, mode=mode)
    gene, report = _matrix_gene_of_rows(sem, expression, source, id_map)
    m = expression.n_genes
    sets = _term_sets(sem, gene, m)
    has = np.flatnonzero(np.diff(sets.indptr) > 0)
    rows_i, cols_j, vals = [], [], []
    if len(has) > 1:
        k = min(int(top_k), len(has) - 1)
        blocks = gene_similarity_blocks(sem.closure, sem.ic, sets[has], **_mode_kwargs(sem, measure, combine))
        for rows, val in blocks:
            local = np.arange(rows.start, rows.stop)
            val[np.arange(len(local)), local] = -np.inf  # no self loops
            top = np.argpartition(-val, k - 1, axis=1)[:, :k]
            w = np.take_along_axis(val, top, axis=1)
            keep = w > min_similarity
            rows_i.append(has[np.repeat(local, k).reshape(-1, k)[keep]])
            cols_j.append(has[top[keep]])
            vals.append(w[keep])
    if vals:
        r, c, v = np.concatenate(rows_i), np.concatenate(cols_j), np.concatenate(vals)
    else:
        r = c = np.zeros(0, dtype=np.int64)
        v = np.zeros(0)
    w = sp.csr_matrix((v, (r, c)), shape=(m, m))
    w = w.maximum(w.T).tocsr()
    log.info("GO relation: %d genes with %s terms, %d edges", len(has), sem.aspect, w.nnz // 2)
    rel = FeatureRelation(
        w,
        expression.genes,
        directed=False,
        name=f"GO-{sem.aspect}-{measure}-{combine}",
        provenance={
            "builder": "go_relation", "measure": measure, "combine": combine, "aspect": sem.aspect,
            "mode": mode, "top_k": int(top_k), "min_similarity": float(min_similarity),
            "genes_with_terms": int(len(has)), "ontology_version": ontology.data_version,
            "annotations": annotations.source,
        },
    )  # fmt: skip
    return rel, report


def go_functions(
    expression: Expression,
    ontology: Ontology,
    annotations: GOAnnotations,
    *,
    aspect: str = "BP",
    propagate: bool = True,
    min_genes: int = 2,
    max_genes: int | None = None,
    id_map: Mapping[str, str] | None = None,
) -> tuple[FeatureFunctions, CoverageReport]:
    """Genes x GO terms incidence over the matrix's genes (``K_FUN^{int,FEA}``).

    Parameters
    ----------
    expression : Expression
    ontology, annotations
    aspect : {"BP", "MF", "CC"}, default "BP"
    propagate : bool, default True
        Annotate every gene also to all is_a/part_of ancestors of its terms (true-path rule).
    min_genes : int, default 2
        Keep terms with at least this many matrix genes.
    max_genes : int, optional
        Keep terms with at most this many matrix genes (default: no limit).
    id_map : mapping, optional
        Annotation gene id -> matrix gene id (``--id-map``).

    Returns
    -------
    functions : FeatureFunctions
        0/1 incidence (m x T'), term names filled, ``relevance`` None. The aspect root is never
        a column.
    coverage : CoverageReport
    """
    if min_genes < 1 or (max_genes is not None and max_genes < min_genes):
        raise ParameterError(
            f"min_genes={min_genes}, max_genes={max_genes}: need 1 <= min_genes <= max_genes"
        )
    source = f"GO annotations {annotations.source or ''}".strip()
    sem = go_semantics(ontology, annotations, aspect=aspect, mode="kofs")
    gene, report = _matrix_gene_of_rows(sem, expression, source, id_map)
    inc = _term_sets(sem, gene, expression.n_genes)
    if propagate:
        inc = inc @ sem.closure
        inc.data[:] = 1.0
    size = np.asarray(inc.sum(axis=0)).ravel()
    keep = size >= min_genes
    if max_genes is not None:
        keep &= size <= max_genes
    keep[sem.root] = False
    cols = np.flatnonzero(keep)
    terms = [sem.terms[i] for i in cols]
    fun = FeatureFunctions(
        inc[:, cols].tocsr(),
        expression.genes,
        terms,
        term_names=[ontology.names.get(t, t) for t in terms],
        relevance=None,
        name=f"GO-{sem.aspect}",
        provenance={
            "builder": "go_functions", "aspect": sem.aspect, "propagate": bool(propagate),
            "min_genes": int(min_genes), "max_genes": max_genes,
            "ontology_version": ontology.data_version, "annotations": annotations.source,
        },
    )  # fmt: skip
    log.info("GO functions: %d %s terms over %d genes", len(terms), sem.aspect, report.matrix_genes_covered)
    return fun, report
