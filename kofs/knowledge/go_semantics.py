"""One GO aspect prepared for semantic similarity: closure, information content and the
annotation rows (:class:`GOSemantics`, :func:`go_semantics`), plus the helpers that map those
rows onto genes. Re-exported by :mod:`kofs.knowledge.go`, whose docstring describes the two
modes (``"kofs"`` and ``"gosemsim"``).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from kofs.errors import InputError, ParameterError
from kofs.io.annotations import GOAnnotations
from kofs.io.ids import normalise_id
from kofs.io.ontology import RELATIONS, ROOTS, Ontology, normalise_aspect
from kofs.knowledge.go_ic import ancestor_closure, annotation_counts, information_content
from kofs.knowledge.go_similarity import COMBINES, MEASURES
from kofs.progress import Progress, task
from kofs.resources import (
    check_memory,
    estimate_go_semantics,
    estimate_go_similarity,
    similarity_block_bytes,
)

if TYPE_CHECKING:
    from kofs.cache import Cache

log = logging.getLogger(__name__)

__all__ = [
    "MODES",
    "GOSemantics",
    "annotation_id_column",
    "check_similarity_memory",
    "check_similarity_options",
    "gene_of_rows",
    "gene_term_matrix",
    "go_semantics",
    "similarity_kwargs",
]

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
    digest : str or None
        Identity of the inputs and settings (when the ontology and annotations were read by
        kofs' readers); keys cached results derived from it.
    """

    aspect: str
    mode: str
    terms: tuple[str, ...]
    index: dict
    closure: sp.csr_matrix
    ic: np.ndarray
    scale: float
    rows: dict
    digest: str | None = None

    @property
    def root(self) -> int:
        return self.index[ROOTS[self.aspect]]


def check_similarity_options(measure: str, combine: str, mode: str) -> None:
    """Raise :class:`ParameterError` for an unknown ``measure``, ``combine`` or ``mode``."""
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
    gosemsim_version: str | None = None,
    cache: Cache | None = None,
    max_memory: int | None = None,
    progress: Progress | None = None,
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
        ``gotbl``; giving the live terms it lacks reproduces it exactly. Default: none in
        ``"kofs"`` mode; in ``"gosemsim"`` mode the list kofs ships for the ontology's release
        (:func:`kofs.knowledge.gosemsim_terms.gosemsim_unknown_terms`; one warning when it
        ships none). ``()`` gives every live term an IC.
    gosemsim_version : str, optional
        ``"gosemsim"`` mode: the GOSemSim version whose term table is used (default the newest
        shipped for the release).
    cache : kofs.cache.Cache, optional
        Keep the result there, keyed by the ontology's and the annotations' digests (their
        files' SHA-256 and filters), the aspect, the mode, the unknown terms and the kofs
        version. Used only when both inputs carry a digest (as read by kofs' readers).
    max_memory : int, optional
        Bytes; fail early (:class:`~kofs.errors.ResourceError`) when the closure and the
        annotation matrices would need more (:func:`kofs.resources.estimate_go_semantics`).
    progress : kofs.progress.Progress, optional
        Told when the computation starts and ends (task ``"GO information content"``; nothing
        on a cache hit).

    Returns
    -------
    GOSemantics
    """
    if mode not in MODES:
        raise ParameterError(f"--mode {mode!r} is unknown; use one of {', '.join(MODES)}")
    aspect = normalise_aspect(aspect, what="--aspect")
    if gosemsim_version is not None and mode != "gosemsim":
        raise ParameterError("--gosemsim-version applies to --mode gosemsim only")
    if unknown_terms is None and mode == "gosemsim":
        from kofs.knowledge.gosemsim_terms import gosemsim_unknown_terms

        unknown_terms = gosemsim_unknown_terms(ontology, gosemsim_version)
    unknown = sorted(set(unknown_terms or ()))
    key = digest = None
    if ontology.digest and annotations.digest:
        key = [ontology.digest, annotations.digest, aspect, mode, unknown]
        digest = hashlib.sha256(json.dumps(key).encode()).hexdigest()
    if cache is not None and key is not None:
        hit = cache.get("go_semantics", key, check=_check_arrays)
        if hit is not None:
            return replace(_from_arrays(*hit), digest=digest)
    with task(progress, "GO information content"):
        sem = replace(_compute(ontology, annotations, aspect, mode, unknown, max_memory),
                      digest=digest)  # fmt: skip
    if cache is not None and key is not None:
        cache.put("go_semantics", key, *_to_arrays(sem))
    return sem


def _compute(ontology, annotations, aspect, mode, unknown_terms, max_memory) -> GOSemantics:
    terms = ontology.terms_of(aspect)
    check_memory(
        estimate_go_semantics(len(terms), len(annotations)),
        limit=max_memory,
        what=f"GO {aspect} closure and information content ({len(terms)} terms, "
        f"{len(annotations)} annotation rows)",
        suggestion="raise --max-memory",
    )
    index = {t: i for i, t in enumerate(terms)}
    root = ROOTS[aspect]
    if root not in index:
        what = (
            f"marks its {aspect} root term {root} obsolete"
            if root in ontology.obsolete
            else f"has no {aspect} root term {root}"
        )
        raise InputError(
            f"the ontology {what}: not a complete Gene Ontology; give go-basic.obo or go.obo, "
            "or choose another aspect",
            path=ontology.source,
        )
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


def _to_arrays(sem: GOSemantics) -> tuple[dict[str, np.ndarray], dict]:
    """Plain arrays of a :class:`GOSemantics` (for :mod:`kofs.cache`; no pickle)."""
    c = sem.closure
    arrays = {
        "terms": np.array(sem.terms, dtype=str),
        "closure_indptr": c.indptr,
        "closure_indices": c.indices,
        "ic": sem.ic,
        "row_term": sem.rows["term"],
    }
    cols = [k for k in sem.rows if k != "term"]
    for k in cols:
        arrays[f"row:{k}"] = np.array(sem.rows[k].tolist(), dtype=str)
    return arrays, {"aspect": sem.aspect, "mode": sem.mode, "scale": sem.scale, "columns": cols}


def _check_arrays(c) -> None:
    """The invariants of a cached :class:`GOSemantics` (:func:`_to_arrays`), checked before
    the closure and IC reach the compiled similarity kernels."""
    from kofs.cache import EntryError

    t = len(c.strings("terms"))
    c.csr("closure_indptr", "closure_indices", t, t)
    c.floats("ic", t, allow_inf=True)
    if (c.arrays["ic"] < 0).any():
        raise EntryError("array 'ic' has negative values")
    r = len(c.ints("row_term", 0, t))
    columns = c.field("columns", list)
    if not all(isinstance(k, str) for k in columns):
        raise EntryError("field 'columns' is not a list of names")
    for k in columns:
        c.strings(f"row:{k}", r)
    if c.field("aspect", str) not in ROOTS or c.field("mode", str) not in MODES:
        raise EntryError("fields 'aspect' or 'mode' hold an unknown value")
    scale = c.field("scale", (int, float))
    if not np.isfinite(scale) or scale <= 0:
        raise EntryError("field 'scale' is not a positive number")
    if ROOTS[c.meta["aspect"]] not in set(c.arrays["terms"].tolist()):
        raise EntryError("the aspect's root term is missing")


def _from_arrays(arrays: dict, meta: dict) -> GOSemantics:
    terms = tuple(arrays["terms"].tolist())
    t = len(terms)
    indices = arrays["closure_indices"]
    closure = sp.csr_matrix(
        (np.ones(len(indices)), indices, arrays["closure_indptr"]), shape=(t, t)
    )
    rows = {"term": arrays["row_term"]}
    for k in meta["columns"]:
        a = arrays[f"row:{k}"]
        rows[k] = a.astype(object) if a.size else np.zeros(0, dtype=object)
    return GOSemantics(
        meta["aspect"], meta["mode"], terms, {x: i for i, x in enumerate(terms)}, closure,
        arrays["ic"], float(meta["scale"]), rows,
    )  # fmt: skip


def gene_term_matrix(sem: GOSemantics, gene_of_row: np.ndarray, n_genes: int) -> sp.csr_matrix:
    """Binary genes x terms matrix of direct annotations (root removed; IEA too in gosemsim)."""
    keep = (
        (gene_of_row >= 0) & (sem.rows["term"] != sem.root) & np.isfinite(sem.ic[sem.rows["term"]])
    )
    if sem.mode == "gosemsim":
        keep &= sem.rows["evidence"] != "IEA"
    m = sp.csr_matrix(
        (np.ones(int(keep.sum())), (gene_of_row[keep], sem.rows["term"][keep])),
        shape=(n_genes, len(sem.terms)),
    )
    m.sum_duplicates()
    m.data[:] = 1.0
    return m


def similarity_kwargs(
    sem: GOSemantics, measure: str, combine: str, max_memory: int | None = None
) -> dict:
    """Keyword arguments of :func:`gene_similarity_blocks` for ``sem``'s mode (GOSemSim's
    rounding, single-term maximum and float64 in ``gosemsim`` mode; float32 otherwise)."""
    gs = sem.mode == "gosemsim"
    return dict(
        measure=measure,
        combine=combine,
        scale=sem.scale if measure == "resnik" else 1.0,
        decimals=3 if gs else None,
        single_term_max=gs,
        dtype=np.float64 if gs else np.float32,
        block_bytes=similarity_block_bytes(max_memory),
    )


def check_similarity_memory(
    kw: dict, sets1: sp.csr_matrix, sets2: sp.csr_matrix | None, max_memory: int | None,
    *, extra: int = 0, what: str, suggestion: str,
) -> None:  # fmt: skip
    """Fail early when :func:`gene_similarity_blocks` (plus ``extra`` bytes of the caller's
    output) would exceed ``max_memory``."""
    if max_memory is None:
        return
    u1 = len(np.unique(sets1.indices))
    u2 = None if sets2 is None else len(np.unique(sets2.indices))
    need = estimate_go_similarity(
        u1, sets1.shape[0], u2, None if sets2 is None else sets2.shape[0],
        itemsize=np.dtype(kw["dtype"]).itemsize,
        exact=kw["decimals"] is not None and kw["combine"] == "bma",
        bma=kw["combine"] == "bma", block_bytes=kw["block_bytes"],
    )  # fmt: skip
    check_memory(need + extra, limit=max_memory, what=what, suggestion=suggestion)


def annotation_id_column(sem: GOSemantics, wanted: set[str]) -> str:
    """The annotation id column (symbol, Entrez, ...) sharing most ids with ``wanted``."""
    cols = [k for k in sem.rows if k not in ("term", "evidence")]
    hits = {c: len(wanted & {normalise_id(v) for v in set(sem.rows[c])}) for c in cols}
    return max(cols, key=lambda c: hits[c])


def gene_of_rows(sem: GOSemantics, genes: Sequence[str], column: str) -> np.ndarray:
    """Position in ``genes`` of each annotation row's gene (by ``column``; -1 when absent)."""
    pos: dict[str, int] = {}
    for i, g in enumerate(genes):
        pos.setdefault(normalise_id(g), i)
    lookup = {v: pos.get(normalise_id(v), -1) for v in set(sem.rows[column])}
    return np.fromiter(
        (lookup[v] for v in sem.rows[column]), dtype=np.int64, count=len(sem.rows[column])
    )
