"""Array kernels of the graph-based univariate scores: Laplacian Score and SPEC phi1/phi2/phi3.

Notation (ALGORITHMS.md §2): ``X`` n x m (samples x genes), ``S`` n x n non-negative symmetric
affinity (dense ndarray or scipy.sparse), ``d = S 1``, ``D = diag(d)``, ``L = D - S``,
``Lcal = I - D^{-1/2} S D^{-1/2}`` with eigenpairs ``(lambda_j, xi_j)`` ascending,
``xi_1 = D^{1/2} 1 / ||D^{1/2} 1||``, ``f^ = D^{1/2} f / ||D^{1/2} f||``,
``alpha_j = f^T xi_j``.

phi1 and phi2 never eigendecompose: with ``f~ = f - (f^T d / 1^T d) 1`` (D-weighted centring)
and ``g = D^{1/2} f~``, ``Lcal^r D^{1/2} f = Lcal^r g`` for r >= 1 (``Lcal xi_1 = 0``), so

* ``phi1 = g^T Lcal^r g / (f~^T D f~ + (1^T d) mu^2)`` (denominator = ``f^T D f``),
* ``phi2 = g^T Lcal^r g / f~^T D f~`` (= ``phi1 / (1 - alpha_1^2)``),

and for r = 1, ``g^T Lcal g = f~^T D f~ - f~^T S f~``: the five sums of eq. 5.9, evaluated on
the centred feature for numerical stability. ``Lcal^r`` is applied by repeated (sparse) products.
All genes are scored at once, by column blocks of bounded memory.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from kofs._compute import chunked as _chunked
from kofs._compute.blocks import as_csr, is_sparse
from kofs._compute.chunked import is_dask
from kofs._compute.matrix import column_means, constant_genes, weighted_sq_deviations
from kofs.errors import ParameterError

logger = logging.getLogger(__name__)

#: Dense eigendecomposition (LAPACK, subset) up to this many samples; Lanczos above.
DENSE_EIG_MAX = 2000
_BLOCK_BYTES = 32 * 2**20


def _col_blocks(n: int, m: int) -> Iterator[slice]:
    width = max(1, min(m, _BLOCK_BYTES // (8 * max(n, 1))))
    for start in range(0, m, width):
        yield slice(start, min(m, start + width))


def prepare_graph(S, X: np.ndarray):
    """Validate ``S`` (non-negative; symmetrised if needed) and drop isolated samples (d_i = 0).

    Returns
    -------
    S : ndarray or csr_matrix restricted to samples with positive degree
    X : ndarray, the same rows of ``X``
    d : ndarray of the degrees
    """
    if sp.issparse(S):
        S = sp.csr_matrix(S, dtype=np.float64)
        smin = S.data.min() if S.nnz else 0.0
    else:
        S = np.asarray(S, dtype=np.float64)
        smin = S.min() if S.size else 0.0
    n = X.shape[0]
    if S.shape != (n, n):
        raise ParameterError(
            f"similarity is {S.shape[0]} x {S.shape[1]}, the matrix has {n} samples"
        )
    if not np.isfinite(smin) or smin < 0:
        raise ParameterError(
            "similarity has negative or non-finite entries; graph scores need a non-negative "
            "affinity (use kind rbf, knn or label)"
        )
    asym = abs(S - S.T).max() if S.shape[0] else 0.0
    if asym > 1e-12 * max(abs(smin), abs(S).max() if S.shape[0] else 0.0, 1e-300):
        logger.warning("similarity is not symmetric (max |S - S'| = %.3g); using (S + S')/2", asym)
        S = (S + S.T) / 2.0
        if sp.issparse(S):
            S = sp.csr_matrix(S)
    d = np.asarray(S.sum(axis=1)).ravel()
    keep = d > 0
    if not keep.all():
        logger.warning(
            "%d isolated samples (zero degree) ignored by the graph score", int((~keep).sum())
        )
        idx = np.flatnonzero(keep)
        if idx.size < 2:
            raise ParameterError(
                "similarity graph has fewer than 2 connected samples; give a matrix with more "
                "samples or a denser similarity"
            )
        S = S[idx][:, idx]
        X = X[idx]
        d = d[idx]
    return S, X, d


def _normalized_product(S, dm: np.ndarray, V: np.ndarray) -> np.ndarray:
    """``Lcal V = V - D^{-1/2} S D^{-1/2} V`` (one new array: the product's, updated in place)."""
    P = np.asarray(S @ (dm[:, None] * V))
    if not P.flags.writeable or np.shares_memory(P, V):
        P = P.copy()
    np.multiply(dm[:, None], P, out=P)
    return np.subtract(V, P, out=P)


def graph_quadratic_forms(X: np.ndarray, S, *, power: int = 1):
    """Per gene: ``num = g^T Lcal^power g``, ``den_c = f~^T D f~``, ``den = f^T D f``.

    Parameters
    ----------
    X : ndarray of shape (n, m)
    S : ndarray or sparse matrix of shape (n, n), non-negative, symmetric
    power : int >= 1
        Exponent r of ``gamma(x) = x^r``.

    Returns
    -------
    num, den_c, den : three ndarrays of shape (m,)
        Genes constant on the graph's samples get NaN in all three.
    """
    S, X, d = prepare_graph(S, X)
    if is_sparse(X) or is_dask(X):
        return _sparse_quadratic_forms(X, S, d, power=power)
    return _dense_quadratic_forms(X, S, d, power=power)


def _dense_quadratic_forms(X: np.ndarray, S, d: np.ndarray, *, power: int):
    """:func:`graph_quadratic_forms` of a dense ``X`` by column blocks, the temporaries of a
    block written into buffers reused from block to block (blocks of 32 MB are above the
    allocator's reuse threshold: fresh arrays cost page faults and zeroing every time). The
    blocks stay those of :func:`_col_blocks`: OpenBLAS's matrix-vector products (``d @ F``)
    give other last bits for other block widths (their threads and unrolled loops split the
    columns by the width)."""
    n, m = X.shape
    vol = d.sum()
    sd = np.sqrt(d)
    dm = 1.0 / sd
    num = np.empty(m)
    den_c = np.empty(m)
    den = np.empty(m)
    constant = np.empty(m, dtype=bool)
    dense_S = isinstance(S, np.ndarray)
    pool: dict[tuple[int, tuple[int, ...]], np.ndarray] = {}

    def buffer(slot: int, shape: tuple[int, ...]) -> np.ndarray:
        out = pool.get((slot, shape))
        if out is None:
            out = pool[(slot, shape)] = np.empty(shape)
        return out

    def product(V: np.ndarray, slot: int) -> np.ndarray:
        """``Lcal V`` into buffer ``slot`` (V's own buffer is another)."""
        tmp = np.multiply(dm[:, None], V, out=buffer(1, V.shape))
        P = np.matmul(S, tmp, out=buffer(slot, V.shape)) if dense_S else np.array(S @ tmp)
        np.multiply(dm[:, None], P, out=P)
        return np.subtract(V, P, out=P)

    for cols in _col_blocks(n, m):
        F = X[:, cols]
        shape = F.shape
        mu = (d @ F) / vol
        Fc = np.subtract(F, mu, out=buffer(0, shape))
        dc = d @ np.multiply(Fc, Fc, out=buffer(1, shape))
        if power == 1:
            SF = np.matmul(S, Fc, out=buffer(2, shape)) if dense_S else np.asarray(S @ Fc)
            q = dc - np.einsum("ij,ij->j", Fc, SF)
        else:
            V = np.multiply(Fc, sd[:, None], out=Fc)
            slots = [0, 2, 3]  # V's buffer first
            for _ in range(power // 2):
                slots = [*slots[1:], slots[0]]
                V = product(V, slots[0])
            if power % 2 == 0:
                W = V
            else:
                W = product(V, slots[1])
            q = np.einsum("ij,ij->j", V, W)
        num[cols] = np.maximum(q, 0.0)
        den_c[cols] = dc
        den[cols] = dc + vol * mu * mu
        constant[cols] = np.ptp(F, axis=0) == 0
    for arr in (num, den_c, den):
        arr[constant] = np.nan
    return num, den_c, den


def _compiled_kernels():
    """:mod:`kofs._compute.numba_kernels` when numba is installed, else None; imported only for the
    sparse matrices it serves (dense runs never load numba)."""
    from kofs._compute import numba_kernels

    return numba_kernels if numba_kernels.AVAILABLE else None


#: ``vol mu^2 / f~^T D f~`` above which the algebraic centring of a sparse or chunked gene
#: (``f^T S f - vol mu^2``) keeps fewer than ~9 significant digits of its graph term: such a
#: gene (a large offset: no zeros) is centred explicitly.
CENTRING_LIMIT = 1e6


def _centre_offset_genes(X, S, mu, den_c, num, vol: float) -> None:
    """``num = f~^T D f~ - f~^T S f~`` recomputed, in place, from explicitly centred columns for
    the genes whose offset makes the algebraic centring lose precision (:data:`CENTRING_LIMIT`):
    on the same label graph, a gene of mean 1e8 and spread 1 got a Laplacian Score of 0.85 dense,
    anything from 0 to 8 sparse or chunked. Such genes have no zeros: their dense columns cost
    what their CSR columns do."""
    with np.errstate(divide="ignore", invalid="ignore"):
        bad = np.flatnonzero((den_c > 0) & (vol * mu * mu > CENTRING_LIMIT * den_c))
    if not bad.size:
        return
    chunked = is_dask(X)
    for block in _col_blocks(X.shape[0], bad.size):
        cols = bad[block]
        F = X[:, cols].compute() if chunked else X[:, cols]
        Fc = (F.toarray() if sp.issparse(F) else np.asarray(F, dtype=np.float64)) - mu[cols]
        fsf = np.einsum("ij,ij->j", Fc, np.asarray(S @ Fc))
        num[cols] = np.maximum(den_c[cols] - fsf, 0.0)


def _sparse_quadratic_forms(X, S, d: np.ndarray, *, power: int):
    """:func:`graph_quadratic_forms` for a sparse CSR ``X`` (never densified as a whole).

    ``f~^T D f~`` is a two-pass weighted reduction over the stored entries. For ``power = 1``
    the centring is algebraic: with ``S 1 = d``, ``f~^T S f~ = f^T S f - vol mu^2``, and
    ``f^T S f`` of every gene is ``sum_i x_i . (S x)_i`` over row blocks of ``S X`` (a sparse
    product, reduced block by block). Higher powers apply ``Lcal`` to dense column blocks of
    bounded memory.
    """
    chunked = is_dask(X)
    X = X if chunked else as_csr(X)
    n, m = X.shape
    vol = d.sum()
    mu = column_means(X, d)
    den_c = weighted_sq_deviations(X, d, mu)
    if power == 1 and chunked:
        num = np.maximum(den_c - (_chunked.graph_term(X, S) - vol * mu * mu), 0.0)
    elif power == 1 and sp.issparse(S) and _compiled_kernels() is not None:
        fsf = _compiled_kernels().graph_gene_products(X, as_csr(S))
        num = np.maximum(den_c - (fsf - vol * mu * mu), 0.0)
    elif power == 1:
        S = sp.csr_matrix(S) if sp.issparse(S) else S
        fsf = np.zeros(m)
        per_row = S.nnz / n if sp.issparse(S) else n
        fill = min(m, per_row * X.nnz / n) if sp.issparse(S) else m  # entries of a row of S X
        rows = max(1, int(_BLOCK_BYTES // (12 * max(1.0, fill))))
        for start in range(0, n, rows):
            block = slice(start, min(n, start + rows))
            product = X[block].multiply(S[block] @ X)  # x_i . (S x)_i on x_i's stored entries
            fsf += np.asarray(product.sum(axis=0)).ravel()
        num = np.maximum(den_c - (fsf - vol * mu * mu), 0.0)
    else:
        sd = np.sqrt(d)
        dm = 1.0 / sd
        num = np.empty(m)
        for cols in _col_blocks(n, m):
            F = X[:, cols].compute() if chunked else X[:, cols]
            Fc = (F.toarray() if sp.issparse(F) else np.asarray(F)) - mu[cols]
            V = sd[:, None] * Fc
            for _ in range(power // 2):
                V = _normalized_product(S, dm, V)
            W = V if power % 2 == 0 else _normalized_product(S, dm, V)
            num[cols] = np.maximum(np.einsum("ij,ij->j", V, W), 0.0)
    if power == 1:
        _centre_offset_genes(X, S, mu, den_c, num, vol)
    den = den_c + vol * mu * mu
    constant = constant_genes(X)
    for arr in (num, den_c, den):
        arr[constant] = np.nan
    return num, den_c, den


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        out = num / den
    out[~(den > 0)] = np.nan
    return out


def laplacian_score(X: np.ndarray, S) -> np.ndarray:
    """Laplacian Score ``L_r = f~^T L f~ / f~^T D f~`` (He et al. 2005, eq. 7; book eq. 4.2).

    Lower is better; NaN for a gene constant on the graph. Equals SPEC phi2 with
    ``gamma(x) = x`` on the same ``S``.

    Parameters
    ----------
    X : ndarray of shape (n, m)
    S : ndarray or sparse matrix of shape (n, n)

    Returns
    -------
    ndarray of shape (m,)
    """
    num, den_c, _ = graph_quadratic_forms(X, S, power=1)
    return _ratio(num, den_c)


def spec_phi1(X: np.ndarray, S, *, power: int = 1) -> np.ndarray:
    """SPEC phi1 ``f^^T gamma(Lcal) f^`` with ``gamma(x) = x^power`` (book eq. 2.17). Lower is better."""
    num, _, den = graph_quadratic_forms(X, S, power=power)
    return _ratio(num, den)


def spec_phi2(X: np.ndarray, S, *, power: int = 1) -> np.ndarray:
    """SPEC phi2 ``f^^T gamma(Lcal) f^ / (1 - (f^^T xi_1)^2)`` (book eq. 2.18). Lower is better."""
    num, den_c, _ = graph_quadratic_forms(X, S, power=power)
    return _ratio(num, den_c)


def normalized_eigenpairs(S, *, n_pairs: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The ``n_pairs`` smallest eigenpairs of ``Lcal`` after the trivial one.

    ``xi_1 = D^{1/2} 1 / ||D^{1/2} 1||`` is fixed explicitly; the other vectors are made
    orthogonal to it and re-diagonalised (Rayleigh-Ritz), so that a disconnected graph (eigenvalue
    0 of multiplicity c) still gives xi_2..xi_c spanning the rest of the null space.

    Parameters
    ----------
    S : ndarray or sparse (n, n) with positive degrees
    n_pairs : int
        Number of non-trivial pairs wanted (1 <= n_pairs <= n - 1).
    seed : int
        Seeds the Lanczos start vector (sparse / large n).

    Returns
    -------
    lam : ndarray of shape (p,), ascending (p <= n_pairs)
    U : ndarray of shape (n, p)
        ``xi_2 .. xi_{p+1}``.
    """
    n = S.shape[0]
    d = np.asarray(S.sum(axis=1)).ravel()
    dm = 1.0 / np.sqrt(d)
    xi1 = np.sqrt(d) / np.linalg.norm(np.sqrt(d))
    want = min(n_pairs + 1, n)
    if n > DENSE_EIG_MAX or (sp.issparse(S) and n > 500):
        A = (
            sp.diags(dm) @ sp.csr_matrix(S) @ sp.diags(dm)
            if sp.issparse(S)
            else dm[:, None] * S * dm
        )
        v0 = np.random.default_rng(seed).standard_normal(n)
        _, V = spla.eigsh(A, k=want, which="LA", v0=v0, tol=1e-12)
    else:
        dense = S.toarray() if sp.issparse(S) else np.asarray(S)
        A = dm[:, None] * dense * dm[None, :]
        _, V = sla.eigh(A, subset_by_index=[n - want, n - 1])
    V = V - np.outer(xi1, xi1 @ V)
    Q, sv, _ = np.linalg.svd(V, full_matrices=False)
    Q = Q[:, sv > 1e-8 * max(sv.max(initial=0.0), 1e-300)][:, :n_pairs]
    H = Q.T @ np.asarray(A @ Q)
    mu, R = np.linalg.eigh((H + H.T) / 2.0)
    order = np.argsort(-mu, kind="stable")
    return 1.0 - mu[order], Q @ R[:, order]


def eigengap_clusters(lam: np.ndarray) -> int:
    """Number of clusters k >= 2 by the eigengap heuristic (von Luxburg 2007, section 8.3).

    ``lam`` holds ``lambda_2 .. lambda_{p+1}`` of the normalised Laplacian (ascending); with
    ``lambda_1 = 0``, k maximises ``lambda_{k+1} - lambda_k`` over ``2 <= k <= p`` (the first
    such k on ties). Fewer than two values give 2.
    """
    full = np.concatenate([[0.0], np.asarray(lam, dtype=np.float64)])
    if full.size < 3:
        return 2
    gaps = full[2:] - full[1:-1]  # gaps[j] = lambda_{j+3} - lambda_{j+2}, i.e. k = j + 2
    return int(np.argmax(gaps)) + 2


def spec_phi3(
    X: np.ndarray, S, *, k: int | None, power: int = 1, seed: int = 0, k_max: int = 20
) -> tuple[np.ndarray, np.ndarray]:
    """SPEC phi3 ``sum_{j=2}^{k} (gamma(2) - gamma(lambda_j)) alpha_j^2`` (book eq. 2.19).

    Higher is better.

    Parameters
    ----------
    X : ndarray of shape (n, m)
    S : ndarray or sparse matrix of shape (n, n)
    k : int or None
        Number of clusters, 2 <= k <= n - 1 (k = 1 gives identically 0). None: estimated by
        :func:`eigengap_clusters` from the ``min(k_max, n - 1)`` smallest non-trivial
        eigenvalues.
    power : int
        Exponent r of ``gamma(x) = x^r``.
    seed : int
        Lanczos start vector seed.
    k_max : int
        Largest k considered when k is None.

    Returns
    -------
    scores : ndarray of shape (m,)
    lam : ndarray, the eigenvalues ``lambda_2 .. lambda_{k+1}`` used (the last one only for the
        gap check; a warning is logged when ``lambda_k == lambda_{k+1}``); with k None, all
        ``lambda_2 .. lambda_{k_max+1}`` computed (k = ``eigengap_clusters(lam)``).
    """
    S, X, d = prepare_graph(S, X)
    n, m = X.shape
    if n < 3:
        raise ParameterError(
            f"spec-phi3 needs at least 3 connected samples, got {n}; give a matrix with more "
            "samples or leave spec-phi3 out (--rankers, --lists)"
        )
    if k is None:
        lam, U = normalized_eigenpairs(S, n_pairs=max(2, min(k_max, n - 1)), seed=seed)
        k = min(eigengap_clusters(lam), n - 1)
    elif not 2 <= k <= n - 1:
        raise ParameterError(
            f"spec-phi3: k must lie in [2, {n - 1}] (number of clusters), got {k}; set "
            f"--param spec-phi3.k=K with 2 <= K <= {n - 1}"
        )
    else:
        lam, U = normalized_eigenpairs(S, n_pairs=min(k, n - 1), seed=seed)
    if lam.size >= k and abs(lam[k - 1] - lam[k - 2]) <= 1e-10 * max(1.0, abs(lam[k - 1])):
        logger.warning(
            "spec-phi3: lambda_%d == lambda_%d, the %d-cluster cut is ambiguous", k, k + 1, k
        )
    used = lam[: k - 1]
    weights = 2.0**power - np.clip(used, 0.0, 2.0) ** power
    Ut = (np.sqrt(d)[:, None] * U[:, : k - 1]).T
    vol = d.sum()
    if is_sparse(X) or is_dask(X):
        # Ut 1 = 0 (xi_j orthogonal to xi_1), so Ut f~ = Ut f: a sparse product, no centring
        mu = column_means(X, d)
        norm2 = weighted_sq_deviations(X, d, mu) + vol * mu * mu
        A = _chunked.left_product(Ut, X) if is_dask(X) else np.asarray((X.T @ Ut.T).T)
        with np.errstate(divide="ignore", invalid="ignore"):
            scores = (weights @ (A * A)) / norm2
        scores[constant_genes(X)] = np.nan
        return scores, lam
    scores = np.empty(m)
    for cols in _col_blocks(n, m):
        F = X[:, cols]
        mu = (d @ F) / vol
        Fc = F - mu
        norm2 = d @ (Fc * Fc) + vol * mu * mu
        A = Ut @ Fc  # xi_j^T D^{1/2} f~ = xi_j^T D^{1/2} f (xi_j orthogonal to xi_1)
        with np.errstate(divide="ignore", invalid="ignore"):
            scores[cols] = (weights @ (A * A)) / norm2
    scores[np.ptp(X, axis=0) == 0] = np.nan
    return scores, lam
