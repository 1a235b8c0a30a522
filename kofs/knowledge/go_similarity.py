"""Array kernel of IC-based GO semantic similarity between genes (Resnik, Lin; BMA, max, avg).

Pure NumPy/SciPy: terms and genes are integer indices; no ids, no I/O, no logging.

Definitions (Resnik 1995; Lin 1998; Pesquita et al. 2008 for the gene-level combinations):

* ``MICA(s, t)`` = the common ancestor of ``s`` and ``t`` with the largest information content;
  ``resnik(s, t) = IC(MICA)`` (optionally divided by a scale, GOSemSim divides by the largest
  finite IC); ``lin(s, t) = 2 IC(MICA) / (IC(s) + IC(t))`` (1 for ``s == t``, 0 for two distinct
  terms of zero IC, where the formula is 0/0).
* For genes ``i``, ``j`` with term sets ``S_i``, ``S_j``:
  ``bma = (sum_{s in S_i} max_{t in S_j} sim + sum_{t in S_j} max_{s in S_i} sim) / (|S_i| + |S_j|)``,
  ``max = max_{s, t} sim``, ``avg = mean_{s, t} sim``.

Algorithm (no dense genes x genes matrix needed, no gene-scale eigen-anything):

1. *MICA by painting.* For a block of row terms, walk their common ancestors ``a`` in ascending
   IC order and write ``IC(a)`` into ``M[rows having a, columns having a]``; the last write is
   the maximum. Cost ``sum_a |D(a) ∩ U1| · |D(a) ∩ U2|`` (about twice ``|U|^2`` on BP).
2. *Segmented reductions.* ``X[s, j] = max_{t in S_j} sim(s, t)`` (or the sum, for ``avg``) for
   every row term ``s`` and column gene ``j``, by one gather of the columns in gene order and
   ``np.maximum.reduceat``; term blocks keep memory bounded.
3. *Gene blocks.* ``sum_{s in S_i} X[s, j]`` is a sparse (genes x terms) @ dense product; the
   second BMA half uses ``Y[t, i] = max_{s in S_i} sim(s, t)``, equal to ``X`` when both gene
   sets coincide. Rows of the gene x gene result are produced block by block, so a caller can
   keep only the top-k of each row.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import scipy.sparse as sp

__all__ = ["mica_ic", "term_similarity", "gene_similarity_blocks", "r_round"]

MEASURES = ("lin", "resnik")
COMBINES = ("bma", "max", "avg")


def mica_ic(anc_rows: sp.csr_matrix, anc_cols: sp.csr_matrix, ic: np.ndarray) -> np.ndarray:
    """Information content of the most informative common ancestor of every term pair.

    Parameters
    ----------
    anc_rows : csr_matrix of shape (B, T)
        Ancestor incidence (reflexive) of the row terms.
    anc_cols : csr_matrix of shape (U, T)
        Ancestor incidence of the column terms.
    ic : ndarray of shape (T,)
        Information content; ancestors with a non-finite IC are never used.

    Returns
    -------
    ndarray of shape (B, U), float64
        ``max_{a in anc(s) ∩ anc(t)} IC(a)``; 0 for pairs without a common ancestor.
    """
    rc = sp.csc_matrix(anc_rows)
    cc = sp.csc_matrix(anc_cols)
    nr = np.diff(rc.indptr)
    nc = np.diff(cc.indptr)
    # IC 0 (the root) would write the initial 0 again; +inf never acts as an ancestor
    shared = np.flatnonzero((nr > 0) & (nc > 0) & np.isfinite(ic) & (ic > 0))
    order = shared[np.argsort(ic[shared], kind="stable")]
    out = np.zeros((anc_rows.shape[0], anc_cols.shape[0]))
    for a in order:
        r = rc.indices[rc.indptr[a] : rc.indptr[a + 1]]
        c = cc.indices[cc.indptr[a] : cc.indptr[a + 1]]
        if len(r) == 1:
            out[r[0], c] = ic[a]
        else:
            out[np.ix_(r, c)] = ic[a]
    return out


def r_round(x: np.ndarray, decimals: int) -> np.ndarray:
    """Round like R >= 4.0 ``round(x, digits)``: the nearer of the two decimal candidates.

    R compares ``ceil(x * 10^d) / 10^d - x`` with ``x - floor(x * 10^d) / 10^d`` in double
    precision and, on an exact tie, takes the candidate with an even last digit. This differs
    from ``np.round`` (which rounds ``x * 10^d`` half-to-even) for values such as 0.4265.
    """
    x = np.asarray(x, dtype=np.float64)
    sgn = np.sign(x)
    a = np.abs(x)
    p10 = 10.0**decimals
    lo = np.floor(a * p10)
    down = lo / p10
    up = np.ceil(a * p10) / p10
    du, dd = up - a, a - down
    take_up = (du < dd) | ((du == dd) & (np.fmod(lo, 2.0) == 1.0))
    return sgn * np.where(take_up, up, down)


def term_similarity(
    mica: np.ndarray,
    ic_rows: np.ndarray,
    ic_cols: np.ndarray,
    *,
    terms_rows: np.ndarray | None = None,
    terms_cols: np.ndarray | None = None,
    measure: str = "lin",
    scale: float = 1.0,
    decimals: int | None = None,
) -> np.ndarray:
    """Resnik or Lin similarity from the MICA information content.

    Parameters
    ----------
    mica : ndarray of shape (B, U)
        From :func:`mica_ic`; overwritten with the result.
    ic_rows : ndarray of shape (B,)
    ic_cols : ndarray of shape (U,)
    terms_rows, terms_cols : int ndarray of shape (B,) and (U,), optional
        Term ids; Lin of a term with itself is 1 also when its IC is 0 (else 0/0 -> 0).
    measure : {"lin", "resnik"}
    scale : float, default 1.0
        Resnik divisor (GOSemSim: the largest finite IC of the ontology).
    decimals : int, optional
        Round the result with :func:`r_round` (GOSemSim rounds term similarities to 3 decimals).

    Returns
    -------
    ndarray of shape (B, U)
    """
    out = mica
    if measure == "resnik":
        if scale != 1.0:
            out /= scale
    elif measure == "lin":
        den = np.add.outer(ic_rows, ic_cols)
        # IC >= 0, so den == 0 only for two terms of zero IC, whose MICA has IC 0 as well:
        # dividing by a tiny positive number leaves 0 there (no mask of the whole block)
        np.maximum(den, np.finfo(np.float64).tiny, out=den)
        out *= 2.0
        out /= den
        zr = np.flatnonzero(np.asarray(ic_rows) <= 0)
        zc = np.flatnonzero(np.asarray(ic_cols) <= 0)
        if len(zr) and len(zc):  # two terms of zero IC: the formula is 0/0
            r, c = np.repeat(zr, len(zc)), np.tile(zc, len(zr))
            same = (terms_rows[r] == terms_cols[c]) if terms_rows is not None else False
            out[r, c] = np.where(same, 1.0, 0.0)
    else:
        raise ValueError(f"measure must be one of {MEASURES}")
    if decimals is not None:
        out = r_round(out, decimals)
    return out


def _segments(sets: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(term index of every gene-term pair in gene order, start of each gene, term count)."""
    s = sp.csr_matrix(sets)
    s.sort_indices()
    counts = np.diff(s.indptr)
    if np.any(counts == 0):
        raise ValueError("every gene must have at least one term")
    return s.indices.astype(np.int64), s.indptr[:-1].astype(np.int64), counts


def _reduce_to_genes(
    anc_r: sp.csr_matrix,
    anc_c: sp.csr_matrix,
    ic: np.ndarray,
    terms_r: np.ndarray,
    terms_c: np.ndarray,
    sets_c: sp.csr_matrix,
    *,
    op: np.ufunc,
    measure: str,
    scale: float,
    decimals: int | None,
    dtype: type,
    block_bytes: int,
) -> np.ndarray:
    """``X[s, j] = op_{t in S_j} sim(s, t)`` for every row term ``s`` and column gene ``j``."""
    perm, inv, by_position = _position_plan(sets_c)
    n_r, n_genes = anc_r.shape[0], sets_c.shape[0]
    out = np.empty((n_r, n_genes), dtype=dtype)
    ic_r, ic_c = ic[terms_r], ic[terms_c]
    step = max(1, int(block_bytes // (8 * (anc_c.shape[0] + 2 * n_genes + 1))))
    for b0 in range(0, n_r, step):
        b1 = min(n_r, b0 + step)
        # transposed block (column terms x row terms): gathers copy whole contiguous rows
        m = mica_ic(anc_c, anc_r[b0:b1], ic)
        sim = term_similarity(
            m, ic_c, ic_r[b0:b1], terms_rows=terms_c, terms_cols=terms_r[b0:b1],
            measure=measure, scale=scale, decimals=decimals,
        ).astype(dtype, copy=False)  # fmt: skip
        # segmented reduction, one term position at a time: genes sorted by decreasing term
        # count, so the genes having an l-th term are a prefix
        acc = sim[by_position[0]]
        for terms_l in by_position[1:]:
            k = len(terms_l)
            op(acc[:k], sim[terms_l], out=acc[:k])
        out[b0:b1] = acc[inv].T
    return out


def _position_plan(sets: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """Genes by decreasing term count; for each position l the l-th term of every gene that has one.

    Returns ``(perm, inv, by_position)`` with ``by_position[l]`` of length
    ``#{genes with more than l terms}``, in ``perm`` order; ``inv`` undoes ``perm``.
    """
    s = sp.csr_matrix(sets)
    counts = np.diff(s.indptr)
    if np.any(counts == 0):
        raise ValueError("every gene must have at least one term")
    perm = np.argsort(-counts, kind="stable")
    inv = np.empty_like(perm)
    inv[perm] = np.arange(len(perm))
    starts = s.indptr[:-1][perm]
    c = counts[perm]
    by_position = [s.indices[starts[: int(np.sum(c > p))] + p] for p in range(int(c.max()))]
    return perm, inv, by_position


def _split_exact(x: np.ndarray, shift: int) -> tuple[np.ndarray, np.ndarray]:
    """``x * 2^shift = hi * 2^31 + lo`` with integer ``hi``, ``lo`` < 2^31 (float64, exact).

    Requires every non-zero ``x`` to be a double in ``[2^(52 - shift), 1]`` (then
    ``x * 2^shift`` is an integer below 2^62). Sums of ``hi`` and ``lo`` over fewer than 2^22
    terms stay exact in float64, so a sum of such doubles can be formed exactly.
    """
    d = np.ldexp(x.astype(np.float64), shift)
    hi = np.floor(np.ldexp(d, -31))
    return hi, d - np.ldexp(hi, 31)


def _join_exact(hi_sum: np.ndarray, lo_sum: np.ndarray, shift: int) -> np.ndarray:
    """The exact sum ``(hi_sum * 2^31 + lo_sum) * 2^-shift`` rounded once to double.

    One IEEE addition of two exact doubles is correctly rounded (ties to even), as is R's
    long-double ``sum()`` of a few doubles converted back to double.
    """
    return np.ldexp(np.ldexp(hi_sum, 31) + lo_sum, -shift)


def gene_similarity_blocks(
    closure: sp.csr_matrix,
    ic: np.ndarray,
    sets1: sp.csr_matrix,
    sets2: sp.csr_matrix | None = None,
    *,
    measure: str = "lin",
    combine: str = "bma",
    scale: float = 1.0,
    decimals: int | None = None,
    single_term_max: bool = False,
    dtype: type = np.float64,
    block_bytes: int = 256 * 2**20,
    out_dtype: type = np.float64,
) -> Iterator[tuple[slice, np.ndarray]]:
    """Gene x gene semantic similarity, produced in blocks of rows.

    Parameters
    ----------
    closure : csr_matrix of shape (T, T)
        Reflexive ancestor incidence (:func:`kofs.knowledge.go_ic.ancestor_closure`).
    ic : ndarray of shape (T,)
        Information content; finite on every ancestor of an annotated term.
    sets1 : csr_matrix of shape (n1, T)
        Term sets of the row genes (non-zero = member); every row non-empty.
    sets2 : csr_matrix of shape (n2, T), optional
        Term sets of the column genes; default ``sets1`` (and then ``Y = X`` is reused).
    measure : {"lin", "resnik"}, default "lin"
    combine : {"bma", "max", "avg"}, default "bma"
    scale : float, default 1.0
        Resnik divisor.
    decimals : int, optional
        GOSemSim compatibility: round term similarities and gene similarities.
    single_term_max : bool, default False
        GOSemSim compatibility: its ``combineScores`` returns the *max* instead of the BMA when
        either gene has a single term (the term-pair matrix degenerates to a vector).
    dtype : numpy dtype, default float64
        Of the intermediate term x gene matrices (float32 halves their memory).
    block_bytes : int, default 256 MiB
        Working memory per block.
    out_dtype : numpy dtype, default float64
        Of the yielded values (float32 halves the memory of an all-pairs result; its sums
        are then formed in float32, relative error ~1e-7). With ``decimals`` they are float64.

    Yields
    ------
    rows : slice
        Rows of the result covered by this block.
    values : ndarray of shape (rows, n2), ``out_dtype``
    """
    if measure not in MEASURES:
        raise ValueError(f"measure must be one of {MEASURES}")
    if combine not in COMBINES:
        raise ValueError(f"combine must be one of {COMBINES}")
    symmetric = sets2 is None
    s1 = sp.csr_matrix(sets1)
    s2 = s1 if symmetric else sp.csr_matrix(sets2)
    # restrict to the terms in use: U1 (rows) and U2 (columns)
    u1 = np.unique(s1.indices)
    u2 = u1 if symmetric else np.unique(s2.indices)
    g1 = sp.csr_matrix(s1[:, u1], dtype=dtype)  # same dtype as X: no upcast copy in g1 @ X
    g1.data[:] = 1.0
    g2 = g1 if symmetric else sp.csr_matrix(s2[:, u2], dtype=dtype)
    g2.data[:] = 1.0
    anc1 = closure[u1]
    anc2 = anc1 if symmetric else closure[u2]
    kw = dict(measure=measure, scale=scale, decimals=decimals, dtype=dtype, block_bytes=block_bytes)
    op = np.add if combine == "avg" else np.maximum
    x = _reduce_to_genes(anc1, anc2, ic, u1, u2, g2, op=op, **kw)  # U1 x n2
    y = None
    if combine == "bma":
        y = x if symmetric else _reduce_to_genes(anc2, anc1, ic, u2, u1, g1, op=op, **kw)  # U2 x n1
    n1, n2 = g1.shape[0], g2.shape[0]
    c1 = np.diff(g1.indptr).astype(np.float64)
    c2 = np.diff(g2.indptr).astype(np.float64)
    pair_terms, pair_starts, _ = _segments(g1)
    rows_per = max(1, int(block_bytes // (8 * max(n2, 1) * 4)))
    one1 = c1 == 1
    one2 = np.flatnonzero(c2 == 1)
    exact = decimals is not None and combine == "bma"
    out = np.float64 if decimals is not None else np.dtype(out_dtype).type
    if exact:
        # R sums the rounded similarities in long double: split every double into two exact
        # integer parts so that the sparse products below sum them without rounding
        shift = 52 + int(np.ceil(np.log2(10.0**decimals)))
        x_hi, x_lo = _split_exact(x, shift)
        y_hi, y_lo = (x_hi, x_lo) if symmetric else _split_exact(y, shift)

    for r0 in range(0, n1, rows_per):
        r1 = min(n1, r0 + rows_per)
        gb = g1[r0:r1]
        if combine == "bma":
            if exact:  # R: sum(rowmax, colmax) = double(sum rowmax) + double(sum colmax)
                part1 = _join_exact(np.asarray(gb @ x_hi), np.asarray(gb @ x_lo), shift)
                part2 = _join_exact(np.asarray(g2 @ y_hi[:, r0:r1]),
                                    np.asarray(g2 @ y_lo[:, r0:r1]), shift).T  # fmt: skip
                val = (part1 + part2) / (c1[r0:r1, None] + c2[None, :])
            else:  # in place: the (rows x n2) temporaries dominate all-pairs runs
                val = np.asarray(gb @ x).astype(out, copy=True)  # sum_{s in S_i} X[s, j]
                val += np.asarray(g2 @ y[:, r0:r1]).T  # sum_{t in S_j} Y[t, i]
                val /= np.add.outer(c1[r0:r1], c2).astype(out, copy=False)
            if single_term_max:
                # max over the pairs = X[s_i, j] for a one-term row gene, Y[t_j, i] for a column
                single = np.flatnonzero(one1[r0:r1])
                val[single] = x[pair_terms[pair_starts[r0 + single]]]
                if len(one2):
                    val[:, one2] = y[g2.indices[g2.indptr[one2]]][:, r0:r1].T
        elif combine == "avg":
            val = np.asarray(gb @ x).astype(out, copy=True)
            val /= np.multiply.outer(c1[r0:r1], c2).astype(out, copy=False)
        else:
            p0, p1 = pair_starts[r0], (pair_starts[r1] if r1 < n1 else len(pair_terms))
            rows = x[pair_terms[p0:p1]]
            val = np.maximum.reduceat(rows, pair_starts[r0:r1] - p0, axis=0).astype(out)
        if decimals is not None:
            val = r_round(val, decimals)
        yield slice(r0, r1), val
