"""One GO aspect prepared for semantic similarity: closure, information content and the
annotation rows (:class:`GOSemantics`, :func:`go_semantics`), plus the helpers that map those
rows onto genes. Re-exported by :mod:`kofs.knowledge.go`, whose docstring describes the two
modes (``"kofs"`` and ``"gosemsim"``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from kofs.errors import ParameterError
from kofs.io.annotations import GOAnnotations
from kofs.io.ids import normalise_id
from kofs.io.ontology import RELATIONS, ROOTS, Ontology, normalise_aspect
from kofs.knowledge.go_ic import ancestor_closure, annotation_counts, information_content
from kofs.knowledge.go_similarity import COMBINES, MEASURES

log = logging.getLogger("kofs.knowledge.go")  # the logger of the module it was split from

__all__ = ["MODES", "GOSemantics", "go_semantics"]

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
    return np.fromiter(
        (lookup[v] for v in sem.rows[column]), dtype=np.int64, count=len(sem.rows[column])
    )
