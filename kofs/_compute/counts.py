"""The raw counts behind a single-cell matrix, for the rankers that model counts.

Count models (Pearson residuals, binomial deviance, the seurat_v3 variance, the count null of
the graph autocorrelation) need the UMI counts themselves: their noise is Poisson-like, with a
mean proportional to each cell's total. Users hold either the counts or scanpy's
``normalize_total`` + ``log1p`` of them. :func:`counts_view` accepts both:

* non-negative integer values are the counts;
* values ``v = log(1 + c f_i)`` (natural or base-2 logarithm) of integer counts ``c`` scaled by
  a per-cell factor ``f_i`` are turned back into counts: ``e_ij = expm1(v_ij)`` is ``c_ij f_i``,
  and the smallest stored ``e`` of a cell is ``f_i`` times its smallest count, almost always 1
  in sparse data (2 or 3 are tried when the ratios are not whole numbers). The result is
  accepted when every ratio ``e_ij / unit_i`` lies within 1 % of a whole number (values stored
  in float32 or rounded to 3 decimals, as in scanpy's ``pbmc68k_reduced``, are within 0.2 %);
  the counts are then those whole numbers (zeros stored explicitly in the CSR are zeros,
  left out of the recovery);
* anything else (scaled or centred values, TPM, negative values) is refused with one line
  saying what is needed (the counts: ``--layer``, ``--use-raw``).

The view is computed once per matrix and shared by the rankers of a run
(:func:`counts_view` caches it by the matrix's identity). A dask matrix stays lazy: its view
is a ``map_blocks`` of the same per-chunk conversion (chunks hold whole cells).
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import scipy.sparse as sp

from kofs._compute.blocks import as_csr
from kofs._compute.chunked import chunk_sum, is_dask, row_chunks, take_rows
from kofs._compute.jit import AVAILABLE as _COMPILED
from kofs._compute.jit import numba
from kofs._compute.run_cache import cache_of
from kofs.errors import InputError

__all__ = [
    "Counts",
    "counts_view",
    "log_normalised",
    "masked_totals",
    "subset_cells",
    "take_columns",
]

#: Largest relative distance of a recovered count to a whole number.
RECOVERY_TOLERANCE = 0.01
#: Smallest counts a cell's smallest stored value may stand for (tried in this order).
_UNITS = (1, 2, 3)


@dataclass(frozen=True, eq=False)
class Counts:
    """The counts of a matrix.

    Attributes
    ----------
    X : scipy.sparse.csr_matrix or dask array of shape (n_cells, n_genes), float64
        The counts (a dask array is converted chunk by chunk when computed).
    cell_totals : ndarray of shape (n_cells,)
        ``s_i = sum_j x_ij``.
    gene_totals : ndarray of shape (n_genes,)
        ``t_j = sum_i x_ij``.
    source : str
        ``"counts"`` or ``"log1p"`` / ``"log2p"`` (recovered from log-normalised values).
    """

    X: Any
    cell_totals: np.ndarray
    gene_totals: np.ndarray
    source: str

    @property
    def total(self) -> float:
        return float(self.cell_totals.sum())

    @property
    def gene_fractions(self) -> np.ndarray:
        """``p_j = t_j / sum_j t_j``."""
        return self.gene_totals / max(self.total, 1e-300)

    @cached_property
    def square_sums(self) -> np.ndarray:
        """``sum_i x_ij^2`` per gene (computed once)."""
        if is_dask(self.X):
            return chunk_sum(self.X, _square_chunk)
        return _square_sums(self.X)

    @cached_property
    def depth_sums(self) -> np.ndarray:
        """``sum_i s_i x_ij`` per gene (computed once)."""
        if is_dask(self.X):
            return chunk_sum(self.X, _weighted_chunk, self.cell_totals)
        return np.asarray(self.X.T @ self.cell_totals).ravel()


def subset_cells(counts: Counts, rows: np.ndarray) -> Counts:
    """The :class:`Counts` of some cells (in memory, CSR), totals recomputed over them."""
    rows = np.asarray(rows, dtype=np.int64)
    A = take_rows(counts.X, rows) if is_dask(counts.X) else counts.X[rows]
    A = as_csr(A)
    cells = np.asarray(A.sum(axis=1)).ravel()
    genes = np.asarray(A.sum(axis=0)).ravel()
    return Counts(A, cells, genes, counts.source)


def take_columns(A: sp.csr_matrix, cols: np.ndarray) -> sp.csr_matrix:
    """``A[:, cols]`` of a canonical CSR ``A`` (a compiled pass over the rows when numba is
    there and ``cols`` increase: scipy's column indexing is several times slower on large
    data)."""
    cols = np.asarray(cols, dtype=np.int64)
    increasing = cols.size < 2 or bool(np.all(np.diff(cols) > 0))
    if _COMPILED and sp.isspmatrix_csr(A) and A.has_canonical_format and increasing:
        from kofs._compute.numba_kernels import take_columns as take

        return take(A, cols)
    return A[:, np.asarray(cols)]


def _square_chunk(B, start, stop):
    return _square_sums(as_csr(B))


def _weighted_chunk(B, start, stop, w):
    return np.asarray(as_csr(B).T @ w[start:stop]).ravel()


if _COMPILED:

    @numba.njit(cache=True, nogil=True)
    def _column_square_sums(idx, val, out):  # pragma: no cover
        # out: zeros on entry
        for p in range(idx.shape[0]):
            out[idx[p]] += val[p] * val[p]

    @numba.njit(cache=True, nogil=True)
    def _recover_rows(ptr, data, base2, tol, lo, hi, out, ok):  # pragma: no cover
        for i in range(lo, hi):
            a, b = ptr[i], ptr[i + 1]
            if b == a:
                continue
            unit = math.inf
            for q in range(a, b):
                e = (2.0 ** data[q] - 1.0) if base2 else math.expm1(data[q])
                if not e > 0:
                    unit = -1.0
                    break
                out[q] = e
                if e < unit:
                    unit = e
            if unit <= 0:
                ok[i] = False
                continue
            found = False
            for u in range(1, 4):
                # whole numbers written as they are checked; on the first that is not, the
                # values written so far are restored for the next u
                good = True
                for q in range(a, b):
                    r = out[q] / unit * u
                    c = np.floor(r + 0.5)
                    if abs(r - c) > tol * (1.0 if 1.0 > c else c):  # max(c, 1.0)
                        good = False
                        for t in range(a, q):
                            out[t] = (2.0 ** data[t] - 1.0) if base2 else math.expm1(data[t])
                        break
                    out[q] = c
                if good:
                    found = True
                    break
            ok[i] = found


#: Values checked per step of :func:`_is_counts` (the first step is small: log-normalised
#: values fail at once).
_CHECK_STEPS = (4096, 4_000_000)


def _is_counts(values: np.ndarray) -> bool:
    """Non-negative whole numbers only (a first small step, then by steps: stops at the first
    step holding another value)."""
    a = 0
    while a < values.size:
        b = min(values.size, a + _CHECK_STEPS[a > 0])
        v = values[a:b]
        if not (v.min() >= 0 and np.array_equal(v, np.floor(v))):
            return False
        a = b
    return True


def _square_sums(A: sp.csr_matrix) -> np.ndarray:
    if _COMPILED:
        out = np.zeros(A.shape[1])
        _column_square_sums(A.indices, np.asarray(A.data, dtype=np.float64), out)
        return out
    return np.bincount(A.indices, weights=A.data * A.data, minlength=A.shape[1])


def _recover(A: sp.csr_matrix, base: str) -> sp.csr_matrix | None:
    """The integer counts behind ``A`` (CSR of log-normalised values), or None."""
    if _COMPILED:
        from kofs._compute.numba_kernels import ROW_BLOCKS, row_bounds, run_blocks

        data = np.asarray(A.data, dtype=np.float64)
        counts = np.empty(data.shape[0])
        ok = np.ones(A.shape[0], dtype=np.bool_)
        base2 = base == "log2p"
        run_blocks(
            lambda lo, hi: _recover_rows(
                A.indptr, data, base2, RECOVERY_TOLERANCE, lo, hi, counts, ok
            ),
            row_bounds(A.shape[0], ROW_BLOCKS),
        )
        if not ok.all():
            return None
        return sp.csr_matrix((counts, A.indices.copy(), A.indptr.copy()), shape=A.shape)
    e = np.expm1(A.data) if base == "log1p" else np.exp2(A.data) - 1.0
    if e.size == 0:
        return sp.csr_matrix(A.shape)
    if not np.all(e > 0):
        return None
    sizes = np.diff(A.indptr)
    filled = sizes > 0
    unit = np.ones(A.shape[0])
    unit[filled] = np.minimum.reduceat(e, A.indptr[:-1][filled])
    ratio = e / np.repeat(unit, sizes)
    counts = np.rint(ratio)
    bad = np.abs(ratio - counts) > RECOVERY_TOLERANCE * np.maximum(counts, 1.0)
    if bad.any():  # cells whose smallest value stands for 2 or 3 counts
        row_bad = np.zeros(A.shape[0], dtype=bool)
        row_bad[np.repeat(np.arange(A.shape[0]), sizes)[bad]] = True
        for u in _UNITS[1:]:
            rows = np.flatnonzero(row_bad)
            for i in rows:
                lo, hi = A.indptr[i], A.indptr[i + 1]
                r = ratio[lo:hi] * u
                c = np.rint(r)
                if np.all(np.abs(r - c) <= RECOVERY_TOLERANCE * np.maximum(c, 1.0)):
                    counts[lo:hi] = c
                    row_bad[i] = False
        if row_bad.any():
            return None
    return sp.csr_matrix((counts, A.indices.copy(), A.indptr.copy()), shape=A.shape)


def _without_stored_zeros(A: sp.csr_matrix) -> sp.csr_matrix:
    """``A`` without the zeros stored explicitly in its CSR (a copy only when it has some): a
    stored 0 is a 0 (no count), which the recovery would take for a cell's smallest count
    and give up on."""
    if A.nnz and not A.data.all():
        A = A.copy()
        A.eliminate_zeros()
    return A


def _block_counts(B, source: str, check: bool = False):
    """One chunk (or the whole in-memory matrix) as float64 CSR counts; ``check``: refuse a
    chunk of ``source="counts"`` holding values that are not counts."""
    A = as_csr(B)
    if source == "counts":
        # the first chunk decided: a later one holding negative or fractional values would be
        # taken for counts (the in-memory matrix is refused as a whole)
        if check and not _is_counts(A.data):
            raise InputError(
                "a chunk's values are not counts like the first chunk's (non-negative whole "
                "numbers); give the raw counts (--layer, --use-raw)"
            )
        return A
    out = _recover(_without_stored_zeros(A), source)
    if out is None:
        raise InputError(
            "a chunk's values are not log-normalised counts like the first chunk's; give the "
            "raw counts (--layer, --use-raw)"
        )
    return out


def _detect(sample) -> tuple[str | None, sp.csr_matrix | None]:
    """(``"counts"``, ``"log1p"`` or ``"log2p"``, the counts) for a matrix or a sample of
    rows (CSR or dense); (None, None) for other values."""
    A = as_csr(sample)
    values = A.data
    if _is_counts(values):
        return "counts", A
    if values.size and values.min() < 0:
        return None, None
    A = _without_stored_zeros(A)
    for base in ("log1p", "log2p"):
        found = _recover(A, base)
        if found is not None:
            return base, found
    return None, None


def _refusal(who: str, where: str | None, sample) -> InputError:
    """The error of values that are not counts; negative values are named (no layer of counts
    holds them: a layer given as the counts that has them is not one)."""
    values = as_csr(sample).data
    low = float(values.min()) if values.size else 0.0
    what = (
        f"negative values (as low as {low:.3g}), which neither counts nor log1p-normalised "
        "counts have (scaled or centred?)"
        if low < 0
        else "values that are neither counts nor log1p-normalised counts (scaled, centred or "
        "otherwise transformed?)"
    )
    return InputError(
        f"{who} models raw counts, but the matrix holds {what}; give the counts, e.g. --layer "
        "counts or --use-raw for an .h5ad (layer=/use_raw= in Python), where the file has them",
        path=where,
    )


#: Views kept per run (the run's kernel cache), keyed by the matrix's identity (weakly
#: referenced buffer) or dask name.
_KEEP = 2


def _key(X) -> tuple[Any, Any]:
    if is_dask(X):
        return ("dask", X.name, X.shape), None
    buffer = X.data if sp.issparse(X) else X
    base = buffer.base if isinstance(buffer, np.ndarray) and buffer.base is not None else buffer
    nnz = X.nnz if sp.issparse(X) else X.size
    return (id(base), X.shape, nnz), base


def _row_totals(X) -> np.ndarray:
    """Row sums of a dask matrix, one task per chunk, concatenated in order."""
    import dask
    from dask import delayed

    blocks, _ = row_chunks(X)
    task = delayed(lambda B: np.asarray(B.sum(axis=1), dtype=np.float64).ravel(), pure=True)
    return np.concatenate(dask.compute(*[task(b) for b in blocks]))


def _chunk_gene_totals(B, start, stop):
    return np.asarray(B.sum(axis=0)).ravel()


def counts_view(X, *, who: str = "this ranker", where: str | None = None) -> Counts:
    """The :class:`Counts` of ``X`` (see the module docstring), cached per matrix.

    Parameters
    ----------
    X : ndarray, scipy.sparse matrix or dask array of shape (n_cells, n_genes)
    who : str
        Subject of the error message (``"ranker 'hotspot'"``).
    where : str, optional
        The matrix's file, named in the error.

    Raises
    ------
    InputError
        The values are neither counts nor log-normalised counts.
    """
    views = cache_of("counts")  # the run's: every count ranker and the marker tables share it
    key, base = _key(X)
    hit = None if views is None else views.get(key)
    if hit is not None and (hit[0] is None or hit[0]() is base):
        return hit[1]
    if is_dask(X):
        first = row_chunks(X)[0][0].compute()
        source, _ = _detect(first)
        if source is None:
            raise _refusal(who, where, first)
        C = X.map_blocks(_block_counts, source, dtype=np.float64, meta=sp.csr_matrix((0, 0)))
        checked = X.map_blocks(
            _block_counts, source, True, dtype=np.float64, meta=sp.csr_matrix((0, 0))
        )
        try:  # every chunk is checked here, once; the later passes read C
            cells = _row_totals(checked)
        except InputError as exc:
            raise InputError(f"{who}: {exc.message}", path=where) from None
        genes = chunk_sum(C, _chunk_gene_totals)
    else:
        source, C = _detect(as_csr(X))
        if source is None:
            raise _refusal(who, where, X)
        cells = np.asarray(C.sum(axis=1)).ravel()
        genes = np.asarray(C.sum(axis=0)).ravel()
    view = Counts(C, np.asarray(cells, float), np.asarray(genes, float), source)
    if views is not None:
        while len(views) >= _KEEP:
            views.pop(next(iter(views)))
        try:
            views[key] = (None if base is None else weakref.ref(base), view)
        except TypeError:  # not weak-referenceable: no cache
            pass
    return view


def log_normalised(
    counts: Counts,
    cols: np.ndarray | None = None,
    *,
    target: float | None = None,
    totals: np.ndarray | None = None,
):
    """scanpy's ``normalize_total`` + ``log1p`` of the counts, columns ``cols`` only:
    ``log(1 + x_ij * target / s_i)`` with ``s_i`` the cell's total over **all** genes (or the
    given ``totals``) and ``target`` the median of the non-zero totals by default (scanpy's
    default). CSR (or a lazy dask array), never dense."""
    s = counts.cell_totals if totals is None else np.asarray(totals, dtype=np.float64)
    if target is None:
        pos = s[s > 0]
        target = float(np.median(pos)) if pos.size else 1.0
    factor = np.where(s > 0, target / np.where(s > 0, s, 1.0), 0.0)
    if is_dask(counts.X):
        X = counts.X if cols is None else counts.X[:, np.asarray(cols)]

        def block(B, block_info=None):
            lo = block_info[0]["array-location"][0][0]
            return _scale_log(as_csr(B), factor[lo : lo + B.shape[0]])

        return X.map_blocks(block, dtype=np.float64, meta=sp.csr_matrix((0, 0)))
    A = counts.X if cols is None else take_columns(counts.X, np.asarray(cols))
    return _scale_log(as_csr(A), factor)


def _scale_log(A: sp.csr_matrix, factor: np.ndarray) -> sp.csr_matrix:
    data = A.data * np.repeat(factor, np.diff(A.indptr))
    np.log1p(data, out=data)
    return sp.csr_matrix((data, A.indices, A.indptr), shape=A.shape)


def masked_totals(counts: Counts, genes: np.ndarray) -> np.ndarray:
    """Every cell's total over the genes of the boolean mask ``genes``."""
    w = np.asarray(genes, dtype=np.float64)
    if is_dask(counts.X):
        import dask
        from dask import delayed

        blocks, _ = row_chunks(counts.X)
        task = delayed(lambda B: np.asarray(as_csr(B) @ w).ravel(), pure=True)
        return np.concatenate(dask.compute(*[task(b) for b in blocks]))
    return np.asarray(counts.X @ w).ravel()
