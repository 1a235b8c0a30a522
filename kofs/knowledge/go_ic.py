"""Array kernels of GO semantics: ancestor closure, annotation counts and information content.

Pure NumPy/SciPy: terms are integer indices ``0..T-1``; no ids, no I/O, no logging.

References
----------
Resnik P. (1995) Using information content to evaluate semantic similarity in a taxonomy. IJCAI.
Lin D. (1998) An information-theoretic definition of similarity. ICML.
Yu G. et al. (2010) GOSemSim. Bioinformatics 26(7):976-978.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["ancestor_closure", "annotation_counts", "information_content"]


def ancestor_closure(n_terms: int, edges: np.ndarray) -> sp.csr_matrix:
    """Reflexive-transitive closure of a DAG's parent relation.

    Parameters
    ----------
    n_terms : int
        Number of terms T.
    edges : ndarray of shape (E, 2), int
        ``(child, parent)`` index pairs.

    Returns
    -------
    csr_matrix of shape (T, T), float64 0/1
        ``A[t, a] = 1`` iff ``a`` is ``t`` or an ancestor of ``t``.

    Notes
    -----
    Repeated squaring of ``I + P`` (``P`` the parent incidence): ``ceil(log2(depth))`` sparse
    products, each entry clipped to 1. A cycle is harmless (it just closes), so relations that
    would create one must be excluded by the caller.
    """
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    data = np.ones(len(edges) + n_terms)
    rows = np.concatenate([edges[:, 0], np.arange(n_terms)])
    cols = np.concatenate([edges[:, 1], np.arange(n_terms)])
    a = sp.csr_matrix((data, (rows, cols)), shape=(n_terms, n_terms))
    a.data[:] = 1.0
    while True:
        b = a @ a
        b.data[:] = 1.0
        if b.nnz == a.nnz:
            b.sort_indices()
            return b
        a = b


def annotation_counts(
    incidence: sp.spmatrix, closure: sp.csr_matrix, *, per: str = "gene"
) -> np.ndarray:
    """Annotations to each term or to any of its descendants.

    Parameters
    ----------
    incidence : sparse matrix of shape (n_genes, T)
        Direct annotations; entry = number of annotation rows of the gene to the term.
    closure : csr_matrix of shape (T, T)
        From :func:`ancestor_closure`.
    per : {"gene", "row"}, default "gene"
        ``"gene"``: distinct genes annotated to ``t`` or a descendant (Resnik's corpus of
        objects; kofs default). ``"row"``: annotation rows, each row counted once for every
        ancestor of its term (GOSemSim).

    Returns
    -------
    ndarray of shape (T,), float64
    """
    inc = sp.csr_matrix(incidence, dtype=np.float64)
    if per == "row":
        direct = np.asarray(inc.sum(axis=0)).ravel()
        return np.asarray(closure.T @ direct).ravel()
    if per != "gene":
        raise ValueError("per must be 'gene' or 'row'")
    binary = inc.copy()
    binary.data[:] = 1.0
    prop = binary @ closure
    prop.data[:] = 1.0
    return np.asarray(prop.sum(axis=0)).ravel()


def information_content(counts: np.ndarray, root_count: float) -> np.ndarray:
    """``IC(t) = -ln(count(t) / count(root))``; ``+inf`` where ``count(t) = 0``.

    Parameters
    ----------
    counts : ndarray of shape (T,)
        From :func:`annotation_counts` (propagated, so the root holds the largest count).
    root_count : float
        ``count(root)`` of the aspect; must be positive.

    Returns
    -------
    ndarray of shape (T,), float64, non-negative (``+inf`` for unannotated terms).
    """
    counts = np.asarray(counts, dtype=np.float64)
    ic = np.full(counts.shape, np.inf)
    pos = counts > 0
    ic[pos] = -np.log(counts[pos] / float(root_count))
    return np.maximum(ic, 0.0)
