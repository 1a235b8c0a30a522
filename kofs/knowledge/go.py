"""Gene Ontology knowledge: information content, gene semantic similarity, and the two KOFS
knowledge kinds built from GO (book ch. 6; ALGORITHMS.md §7, §9, §13).

* :func:`gene_similarity` — gene x gene Resnik/Lin similarity (BMA, max or avg), one aspect.
* :func:`go_relation` — sparse top-k GO-similarity graph over the matrix's genes
  (``K_REL^{int,FEA}``, feeds GO-MAH and GO-REL-PROP).
* :func:`go_functions` — genes x GO terms incidence (``K_FUN^{int,FEA}``, feeds GO-REL-VOTE).

Two modes (:data:`kofs.knowledge.go_semantics.MODES`):

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

import dataclasses
import hashlib
import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from kofs.errors import ParameterError, checked_keywords, require_instance
from kofs.io._fsops import check_api_options
from kofs.io.annotations import GOAnnotations
from kofs.io.ids import CoverageReport, match_id_lists, normalise_id
from kofs.io.ontology import Ontology
from kofs.knowledge.go_semantics import (
    GOSemantics,
    annotation_id_column,
    check_similarity_memory,
    check_similarity_options,
    gene_of_rows,
    gene_term_matrix,
    go_semantics,
    similarity_kwargs,
)
from kofs.knowledge.go_similarity import gene_similarity_blocks
from kofs.progress import Progress, task
from kofs.resources import resolve_limit

if TYPE_CHECKING:
    from kofs.cache import Cache
from kofs.types import Expression, FeatureFunctions, FeatureRelation

log = logging.getLogger(__name__)

__all__ = ["gene_similarity", "genes_with_terms", "go_relation", "go_functions"]


@checked_keywords
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
    max_memory: int | None = None,
    progress: Progress | None = None,
    dtype: type = np.float64,
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
    max_memory : int, optional
        Bytes; fail early (:class:`~kofs.errors.ResourceError`) when the result and the
        kernel's working arrays would need more; the kernel's blocks shrink to fit.
    progress : kofs.progress.Progress, optional
        Told about every block of rows (task ``"GO similarity"``).
    dtype : numpy dtype, default float64
        Of the result; float32 halves the memory of a large all-pairs matrix (``"kofs"`` mode
        only; ``"gosemsim"`` values, rounded to 3 decimals, stay float64).

    Returns
    -------
    similarity : ndarray of shape (n1, n2)
        NaN in the rows/columns of genes without terms in the aspect.
    with_terms : list of str
        Genes (of ``genes``, then new ones of ``genes2``) that have terms, in input order.
    """
    check_similarity_options(measure, combine, mode)
    _check_similarity_arguments(ontology, annotations, genes, genes2, semantics, dtype)
    check_api_options("gene_similarity", progress=progress)
    max_memory = resolve_limit(max_memory)
    sem = semantics or go_semantics(ontology, annotations, aspect=aspect, mode=mode)
    g1 = [str(g) for g in genes]
    g2 = g1 if genes2 is None else [str(g) for g in genes2]
    _refuse_repeated("genes", g1)
    if genes2 is not None:
        _refuse_repeated("genes2", g2)
    if id_column is None:
        id_column = annotation_id_column(sem, {normalise_id(g) for g in g1 + g2})
    elif id_column not in sem.rows:
        annotations.gene_ids(id_column)  # raises the ParameterError
    sets1 = gene_term_matrix(sem, gene_of_rows(sem, g1, id_column), len(g1))
    sets2 = (
        sets1
        if genes2 is None
        else gene_term_matrix(sem, gene_of_rows(sem, g2, id_column), len(g2))
    )
    has1 = np.flatnonzero(np.diff(sets1.indptr) > 0)
    has2 = has1 if genes2 is None else np.flatnonzero(np.diff(sets2.indptr) > 0)
    kw = similarity_kwargs(sem, measure, combine, max_memory)
    out_dtype = np.float64 if kw["decimals"] is not None else np.dtype(dtype).type
    s1, s2 = sets1[has1], None if genes2 is None else sets2[has2]
    check_similarity_memory(
        kw, s1, s2, max_memory, extra=np.dtype(out_dtype).itemsize * len(g1) * len(g2),
        what=f"GO similarity of {len(g1)} x {len(g2)} genes",
        suggestion="give fewer genes, or raise --max-memory",
    )  # fmt: skip
    out = np.empty((len(g1), len(g2)), dtype=out_dtype)
    # NaN only where a gene has no term; rows of genes with terms are written once below
    out[np.setdiff1d(np.arange(len(g1)), has1)] = np.nan
    out[:, np.setdiff1d(np.arange(len(g2)), has2)] = np.nan
    full = len(has1) == len(g1) and len(has2) == len(g2)
    if len(has1) and len(has2):
        with task(progress, "GO similarity", total=len(has1)) as step:
            blocks = gene_similarity_blocks(sem.closure, sem.ic, s1, s2, out_dtype=out_dtype, **kw)
            for rows, val in blocks:
                if full:
                    out[rows] = val
                else:
                    out[np.ix_(has1[rows], has2)] = val
                step(rows.stop - rows.start)
    else:
        out[:] = np.nan
    with_terms = [g1[i] for i in has1]
    seen = set(with_terms)
    with_terms += [g2[j] for j in has2 if g2[j] not in seen]
    missing = len(g1) - len(has1)
    if missing:
        log.info("%d of %d genes have no %s term (%s mode)", missing, len(g1), sem.aspect, mode)
    return out, with_terms


def _refuse_repeated(name: str, genes: Sequence[str]) -> None:
    """A gene given twice (or two ids of one gene, as the annotations are matched) in one of
    :func:`gene_similarity`'s gene lists: the second one's row would be all NaN."""
    first: dict[str, str] = {}
    for g in genes:
        key = normalise_id(g)
        if key in first:
            same = (
                f"gene {g!r} is given twice"
                if first[key] == g
                else f"{first[key]!r} and {g!r} are one gene (ids are matched ignoring case, "
                "database prefixes and versions)"
            )
            raise ParameterError(f"gene_similarity: in {name}, {same}; give each gene once")
        first[key] = g


def _check_similarity_arguments(ontology, annotations, genes, genes2, semantics, dtype) -> None:
    """:func:`gene_similarity`'s arguments have the documented types (a ParameterError saying
    what to give, not an AttributeError from inside the kernel)."""
    import reprlib

    require_instance("gene_similarity", "ontology", ontology, Ontology, "kofs.read_obo")
    require_instance(
        "gene_similarity", "annotations", annotations, GOAnnotations, "kofs.read_go_annotations"
    )
    if semantics is not None and not isinstance(semantics, GOSemantics):
        raise ParameterError(
            f"gene_similarity: semantics must be a GOSemantics (kofs.knowledge.go_semantics."
            f"go_semantics) or None, got {reprlib.repr(semantics)}"
        )
    for name, given in (("genes", genes), ("genes2", genes2)):
        if given is None and name == "genes2":
            continue
        if isinstance(given, (str, bytes)):  # a string is read letter by letter
            raise ParameterError(f"{name}: give a list of gene ids, not one string ({given!r})")
        if not isinstance(given, Iterable) or isinstance(given, Mapping):
            raise ParameterError(f"{name}: give a list of gene ids, got {reprlib.repr(given)}")
    try:
        kind = np.dtype(dtype).kind
    except TypeError:
        raise ParameterError(f"gene_similarity: dtype {dtype!r} is not a numpy dtype") from None
    if kind != "f":  # an integer dtype was numpy's "cannot convert float NaN to integer"
        raise ParameterError(
            f"gene_similarity: dtype {np.dtype(dtype).name} cannot hold similarities (NaN "
            "for genes without terms); give a float dtype, float32 or float64"
        )


def genes_with_terms(
    ontology: Ontology,
    annotations: GOAnnotations,
    genes: Sequence[str],
    *,
    aspect: str = "BP",
    mode: str = "kofs",
    id_column: str | None = None,
    semantics: GOSemantics | None = None,
) -> list[str]:
    """The genes of ``genes`` (in order) that :func:`gene_similarity` gives a similarity: those
    with a term of the aspect besides the root (and, in ``"gosemsim"`` mode, a non-IEA one)."""
    sem = semantics or go_semantics(ontology, annotations, aspect=aspect, mode=mode)
    g = [str(x) for x in genes]
    if id_column is None:
        id_column = annotation_id_column(sem, {normalise_id(x) for x in g})
    sets = gene_term_matrix(sem, gene_of_rows(sem, g, id_column), len(g))
    return [g[i] for i in np.flatnonzero(np.diff(sets.indptr) > 0)]


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
    semantics: GOSemantics | None = None,
    max_memory: int | None = None,
    progress: Progress | None = None,
    cache: Cache | None = None,
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

    semantics : GOSemantics, optional
        Precomputed :func:`go_semantics` (same aspect and mode) to reuse.
    max_memory : int, optional
        Bytes; fail early (:class:`~kofs.errors.ResourceError`) when the similarity kernel
        would need more; its blocks shrink to fit.
    progress : kofs.progress.Progress, optional
        Told about every block of rows (task ``"GO similarity"``).
    cache : kofs.cache.Cache, optional
        Keep the graph there, keyed by the semantics' digest (GO files, filters, aspect,
        mode), the settings, the matrix's gene ids and id columns, the id map and the kofs
        version (it depends on gene ids only, never on expression values).

    Returns
    -------
    relation : FeatureRelation
        m x m, symmetric, weights = similarities.
    coverage : CoverageReport
    """
    check_similarity_options(measure, combine, mode)
    if not isinstance(top_k, (int, np.integer)) or isinstance(top_k, bool) or top_k < 1:
        raise ParameterError(f"top_k {top_k!r} must be a positive integer (e.g. 10)")
    source = f"GO annotations {annotations.source or ''}".strip()
    sem = semantics or go_semantics(ontology, annotations, aspect=aspect, mode=mode)
    key = None
    if cache is not None and sem.digest:
        key = [sem.digest, measure, combine, int(top_k), float(min_similarity), source,
               _genes_digest(expression, id_map)]  # fmt: skip
        m = expression.n_genes
        hit = cache.get("go_relation", key, check=lambda c: _check_arrays(c, m))
        if hit is not None:
            return _relation_from_arrays(*hit, expression)
    rel, report = _go_relation(
        expression, ontology, annotations, sem, source, measure, combine, mode, top_k,
        min_similarity, id_map, max_memory, progress,
    )  # fmt: skip
    if key is not None:
        cache.put("go_relation", key, *_relation_to_arrays(rel, report))
    return rel, report


def _genes_digest(expression: Expression, id_map: Mapping[str, str] | None) -> str:
    """SHA-256 of what matching to the matrix depends on: its gene ids, id columns, id map."""
    doc = [list(expression.genes), {k: list(map(str, v)) for k, v in
           sorted(dict(expression.annotations or {}).items())},
           sorted((str(k), str(v)) for k, v in dict(id_map or {}).items())]  # fmt: skip
    return hashlib.sha256(json.dumps(doc).encode()).hexdigest()


def _relation_to_arrays(rel: FeatureRelation, report: CoverageReport) -> tuple[dict, dict]:
    w = sp.csr_matrix(rel.matrix)
    arrays = {"data": w.data, "indices": w.indices, "indptr": w.indptr}
    meta = {"name": rel.name, "directed": bool(rel.directed), "provenance": dict(rel.provenance),
            "coverage": dataclasses.asdict(report)}  # fmt: skip
    return arrays, meta


def _check_arrays(c, m: int) -> None:
    """The invariants of a cached GO graph (:func:`_relation_to_arrays`) over ``m`` genes,
    checked before the graph reaches the compiled kernels."""
    from kofs.cache import EntryError

    c.csr("indptr", "indices", m, m)
    c.floats("data", len(c.arrays["indices"]))
    if (c.arrays["data"] < 0).any():
        raise EntryError("array 'data' has negative weights")
    c.field("name", str)
    c.field("directed", bool)
    c.field("provenance", dict)
    cov = c.field("coverage", dict)
    names = {f.name for f in dataclasses.fields(CoverageReport)}
    if not set(cov) <= names or not {"source", "input_genes", "matched"} <= set(cov):
        raise EntryError("field 'coverage' does not describe a coverage report")


def _relation_from_arrays(
    arrays: dict, meta: dict, expression: Expression
) -> tuple[FeatureRelation, CoverageReport]:
    m = expression.n_genes
    w = sp.csr_matrix((arrays["data"], arrays["indices"], arrays["indptr"]), shape=(m, m))
    cov = dict(meta["coverage"])
    cov["examples_dropped"] = tuple(cov.get("examples_dropped") or ())
    rel = FeatureRelation(w, expression.genes, directed=meta["directed"], name=meta["name"],
                          provenance=meta["provenance"])  # fmt: skip
    return rel, CoverageReport(**cov)


def _go_relation(expression, ontology, annotations, sem, source, measure, combine, mode, top_k,
                 min_similarity, id_map, max_memory, progress):  # fmt: skip
    gene, report = _matrix_gene_of_rows(sem, expression, source, id_map)
    m = expression.n_genes
    sets = gene_term_matrix(sem, gene, m)
    has = np.flatnonzero(np.diff(sets.indptr) > 0)
    rows_i, cols_j, vals = [], [], []
    kw = similarity_kwargs(sem, measure, combine, max_memory)
    check_similarity_memory(
        kw, sets[has], None, max_memory,
        what=f"GO similarity graph of {len(has)} genes ({sem.aspect})",
        suggestion="use fewer genes (filter the matrix), or raise --max-memory",
    )  # fmt: skip
    if len(has) > 1:
        k = min(int(top_k), len(has) - 1)
        blocks = gene_similarity_blocks(sem.closure, sem.ic, sets[has], **kw)
        step = task(progress, "GO similarity", total=len(has))
        for rows, val in step.each(blocks, lambda b: b[0].stop - b[0].start):
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
    semantics: GOSemantics | None = None,
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
    semantics : GOSemantics, optional
        Precomputed :func:`go_semantics` (same aspect, mode ``"kofs"``) to reuse.

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
    sem = semantics or go_semantics(ontology, annotations, aspect=aspect, mode="kofs")
    gene, report = _matrix_gene_of_rows(sem, expression, source, id_map)
    inc = gene_term_matrix(sem, gene, expression.n_genes)
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
    log.info(
        "GO functions: %d %s terms over %d genes",
        len(terms),
        sem.aspect,
        report.matrix_genes_covered,
    )
    return fun, report
