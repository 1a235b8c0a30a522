"""Signed tables: differential-expression tables read through their z-scores and effect signs.

Tables of one experiment analysed by several tools (DESeq2 and edgeR on the same counts) share
their noise. Read through their two-sided p-values alone, their normal scores are more alike in
the tails than a Gaussian copula says (docs/lists.md), and the fusion's q-values come out
optimistic (FDP 0.225 at q <= 0.10 for tables sharing 60 % of their noise). With each table's
effect sign the model is exact again:

* table l gives gene i the signed z-score ``z_il = sign_il * Q^-1(p_il / 2)``, N(0, 1) under
  the null whatever the test (``Q`` the upper normal tail);
* background genes: ``z_i ~ N(0, S)`` (S: the tables' correlation, shared noise);
* relevant genes: ``z_i ~ (N(m, S) + N(-m, S)) / 2``: the gene goes up or down, in the same
  direction in every table (``m_l < 0``: a table whose contrast is the other way round), so
  its likelihood ratio is ``exp(-m' S^-1 m / 2) cosh(m' S^-1 z_i)``;
* a gene a table lacks is missing there (its marginal over the tables that have it);
* the prior ``P(Z_i = 1) = expit(x_i' beta)`` is :mod:`kofs.aggregate.posterior`'s.

Fitted by EM on the exact z (no binning: ``m`` the posterior-weighted mean of ``tanh(a_i)
z_i`` with ``a_i = m' S^-1 z_i``, S the pooled within-class correlation, beta one Newton step
of the prior's ridge-logistic regression). The separations ``|m_l|`` are the tables'
reliabilities; a table's weight is its share ``m_l (S^-1 m)_l`` of the Mahalanobis separation
``m' S^-1 m`` (``m_l^2`` for independent tables, as the rank model's). The full likelihood is
exact (not a pseudo-likelihood), so the test of a relevant class against the tables' correlation
alone is an ordinary likelihood ratio.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import chdtrc, expit, logit, ndtr, ndtri

from kofs.aggregate.posterior import PriorDesign, _corr_matrix, _offdiag

__all__ = ["SignedFit", "fit_signed", "signed_z", "signed_test", "signed_weights"]

#: Starting fraction of relevant genes and separation.
RHO_START = 0.05
M_START = 2.0
#: Largest separation (beyond it two classes are told apart perfectly anyway).
M_MAX = 12.0
#: z-scores are kept within +- Z_MAX (p-values down to 1e-300).
Z_MAX = 37.0


def signed_z(p: np.ndarray, signs: np.ndarray) -> np.ndarray:
    """``sign * Q^-1(p / 2)``: the signed z-score of a two-sided p-value (NaN stays NaN; a
    sign of 0 -- no change -- gives 0)."""
    p = np.clip(np.asarray(p, dtype=np.float64), 1e-300, 1.0)
    z = -ndtri(p / 2.0)
    return np.clip(np.sign(np.asarray(signs, dtype=np.float64)) * z, -Z_MAX, Z_MAX)


def _logcosh(a: np.ndarray) -> np.ndarray:
    x = np.abs(a)
    return x + np.log1p(np.exp(-2.0 * x)) - np.log(2.0)


class _Patterns:
    """The genes grouped by which tables they have (each group's marginal model)."""

    def __init__(self, Z: np.ndarray) -> None:
        seen = ~np.isnan(Z)
        self.Z0 = np.where(seen, Z, 0.0)
        self.seen = seen
        keys = seen @ (1 << np.arange(Z.shape[1], dtype=np.int64))
        self.groups = [
            (np.flatnonzero(seen[np.flatnonzero(keys == k)[0]]), np.flatnonzero(keys == k))
            for k in np.unique(keys)
            if k != 0
        ]

    def terms(self, m: np.ndarray, S: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per gene: ``a = m' S^-1 z`` and ``log LR`` over its tables, and its background log
        density ``log N(z; 0, S)`` (0 for a gene no table has)."""
        M = self.Z0.shape[0]
        a, llr, ld0 = np.zeros(M), np.zeros(M), np.zeros(M)
        for cols, rows in self.groups:
            Sc = S[np.ix_(cols, cols)]
            inv = np.linalg.inv(Sc)
            z = self.Z0[np.ix_(rows, cols)]
            g = inv @ m[cols]
            a[rows] = z @ g
            llr[rows] = _logcosh(a[rows]) - 0.5 * float(m[cols] @ g)
            _, logdet = np.linalg.slogdet(Sc)
            q = np.einsum("ij,ij->i", z @ inv, z)
            ld0[rows] = -0.5 * (q + logdet + len(cols) * np.log(2 * np.pi))
        return a, llr, ld0


@dataclass(frozen=True)
class SignedFit:
    """A fit of the model of the module docstring.

    ``m`` (D,) signed separations; ``mu`` their sizes (the reliabilities); ``correlation`` S;
    ``beta`` the prior's coefficients on the standardised covariates (``center``, ``scale``);
    per gene ``log_lr`` (the tables' evidence), ``prior_log_odds``, ``log_odds`` (their sum:
    the fused score) and ``posterior``; ``rho`` the mean prior; ``log_likelihood`` the full
    log-likelihood (nats)."""

    m: np.ndarray
    correlation: np.ndarray
    beta: np.ndarray
    center: np.ndarray
    scale: np.ndarray
    log_lr: np.ndarray
    prior_log_odds: np.ndarray
    rho: float
    log_likelihood: float
    iterations: int
    converged: bool

    @property
    def mu(self) -> np.ndarray:
        return np.abs(self.m)

    @property
    def auc(self) -> np.ndarray:
        """``Phi(|m_l| / sqrt 2)``: the chance that the table's z-score, taken in the gene's
        direction, is above a background gene's."""
        return ndtr(self.mu / np.sqrt(2.0))

    @property
    def tempering(self) -> np.ndarray:
        """Label weights (none: every table weighs 1; as :class:`PosteriorFit`)."""
        return np.ones(len(self.m))

    @property
    def envelope(self) -> None:
        """No envelope: a z-score's null is exact (as a calibrated list's)."""
        return None

    @property
    def log_odds(self) -> np.ndarray:
        return self.prior_log_odds + self.log_lr

    @property
    def posterior(self) -> np.ndarray:
        return expit(self.log_odds)


def _scatter(x, y, mx: float, my: float, p: np.ndarray, pt: np.ndarray) -> float:
    """``sum_i [(1 - p_i) x_i y_i + p_i E((x_i - s mx)(y_i - s my))]`` (``pt = p E[s]``)."""
    return float(np.sum(x * y) - np.sum(pt * (x * my + mx * y)) + np.sum(p) * mx * my)


def _correlation_step(pat: _Patterns, m: np.ndarray, p: np.ndarray, t: np.ndarray) -> np.ndarray:
    """The pooled within-class correlation (pairwise over the genes both tables have):
    background genes around 0, relevant ones around ``sign * m`` (``t = E[sign]``)."""
    Z, seen = pat.Z0, pat.seen
    D = Z.shape[1]
    pt = p * t
    r = []
    for i, j in zip(*_offdiag(D), strict=True):
        both = seen[:, i] & seen[:, j]
        c = _scatter(Z[both, i], Z[both, j], m[i], m[j], p[both], pt[both])
        vi = _scatter(Z[both, i], Z[both, i], m[i], m[i], p[both], pt[both])
        vj = _scatter(Z[both, j], Z[both, j], m[j], m[j], p[both], pt[both])
        r.append(c / np.sqrt(max(vi, 1e-300) * max(vj, 1e-300)))
    return _corr_matrix(np.clip(np.array(r), -1.0, 1.0), D)


def _start(pat: _Patterns) -> np.ndarray:
    """Start separations: M_START, each table's sign that of its z-scores' agreement with the
    first table's over the genes both have (a table with the contrast reversed: negative)."""
    Z, seen = pat.Z0, pat.seen
    D = Z.shape[1]
    m = np.full(D, M_START)
    for j in range(1, D):
        both = seen[:, 0] & seen[:, j]
        if np.sum(Z[both, 0] * Z[both, j]) < 0:
            m[j] = -M_START
    return m


def fit_signed(
    Z: np.ndarray,
    X: np.ndarray,
    center: np.ndarray,
    scale: np.ndarray,
    *,
    max_prior: float = 0.5,
    start: SignedFit | None = None,
    rows: np.ndarray | None = None,
    tol: float = 1e-7,
    max_iter: int = 2000,
) -> SignedFit:
    """Fit the model of the module docstring to the signed z-scores ``Z`` (M, D; NaN: the
    gene is not in the table) with the standardised prior design ``X`` (M, P + 1, intercept
    first; its standardisation ``center``, ``scale``). ``start``: a warm start; ``rows``: fit
    on these genes only (the per-gene outputs are still every gene's)."""
    Zf = np.asarray(Z, dtype=np.float64)
    Xf = np.asarray(X, dtype=np.float64)
    Zr, Xr = (Zf, Xf) if rows is None else (Zf[rows], Xf[rows])
    pat = _Patterns(Zr)
    design = PriorDesign(Xr, np.ones(Zr.shape[0]), max_prior)
    if start is None:
        m = _start(pat)
        S = np.eye(Zr.shape[1])
        beta = np.zeros(Xr.shape[1])
        beta[0] = logit(RHO_START)
        beta = design._cap(beta)
    else:
        m, S, beta = start.m.copy(), start.correlation.copy(), start.beta.copy()
    ll_old = -np.inf
    converged = False
    iterations = 0
    while iterations < max_iter:
        iterations += 1
        a, llr, ld0 = pat.terms(m, S)
        eta = Xr @ beta
        log_odds = eta + llr
        ll = float(np.sum(ld0 + np.logaddexp(0.0, log_odds) - np.logaddexp(0.0, eta)))
        p = expit(log_odds)
        t = np.tanh(a)
        # M step: the separations (per table, over the genes it has), the correlation, beta
        w = p[:, None] * pat.seen
        m_new = np.sum(w * (t[:, None] * pat.Z0), axis=0) / np.maximum(w.sum(axis=0), 1e-300)
        m_new = np.clip(m_new, -M_MAX, M_MAX)
        S_new = _correlation_step(pat, m_new, p, t)
        beta_new = design._prior_step(beta, eta, p)
        change = max(
            float(np.max(np.abs(m_new - m))),
            float(np.max(np.abs(S_new - S))),
            float(np.max(np.abs(beta_new - beta))),
        )
        m, S, beta = m_new, S_new, beta_new
        if change < tol or abs(ll - ll_old) < tol * max(1.0, abs(ll)):
            converged = True
            break
        ll_old = ll
    return _finish(Zf, Xf, m, S, beta, center, scale, max_prior, iterations, converged)


def _finish(Z, X, m, S, beta, center, scale, max_prior, iterations, converged) -> SignedFit:
    pat = _Patterns(Z)
    _, llr, ld0 = pat.terms(m, S)
    eta = X @ beta
    design = PriorDesign(X, np.ones(Z.shape[0]), max_prior)
    ll = float(np.sum(ld0 + np.logaddexp(0.0, eta + llr) - np.logaddexp(0.0, eta)))
    return SignedFit(
        m=m,
        correlation=S,
        beta=beta,
        center=center,
        scale=scale,
        log_lr=llr,
        prior_log_odds=eta,
        rho=design.mean_prior(eta),
        log_likelihood=ll,
        iterations=int(iterations),
        converged=bool(converged),
    )


def signed_weights(m: np.ndarray, S: np.ndarray) -> np.ndarray:
    """Each table's share ``m_l (S^-1 m)_l`` of the separation ``m' S^-1 m`` (0 when
    negative; normalised to sum 1; all 0 without separation)."""
    share = np.maximum(m * np.linalg.solve(S, m), 0.0)
    total = share.sum()
    return share / total if total > 0 else share


def signed_test(fit: SignedFit, Z: np.ndarray) -> dict[str, float]:
    """Does a relevant class explain the tables more than their correlation alone? The
    likelihood ratio of the fit against ``N(0, S0)`` (S0: the tables' correlation over all
    genes, which is the maximum-likelihood null: every z is N(0, 1) under it), referred to
    chi-square with as many degrees of freedom as the class has parameters (the separations
    and the prior's coefficients; approximate: the null lies on the boundary). The same keys
    as :func:`kofs.aggregate.posterior.relevant_class_test`."""
    pat = _Patterns(np.asarray(Z, dtype=np.float64))
    D = Z.shape[1]
    S0 = _correlation_step(pat, np.zeros(D), np.zeros(Z.shape[0]), np.zeros(Z.shape[0]))
    _, _, ld0 = pat.terms(np.zeros(D), S0)
    gain = fit.log_likelihood - float(np.sum(ld0))
    df = D + len(fit.beta)
    statistic = max(2.0 * gain, 0.0)
    return {
        "statistic": statistic,
        "df": float(df),
        "p_value": float(chdtrc(df, statistic)),
        "gain": float(gain),
    }


def half_sample_refits(
    fit: SignedFit, Z: np.ndarray, X: np.ndarray, *, n: int, seed: int, max_prior: float
) -> tuple[np.ndarray, np.ndarray]:
    """(B, D + P + 1) parameters ``(|m|, beta)`` and (B, D) weights of ``n`` refits on random
    halves of the genes, warm-started from ``fit`` (a delete-d jackknife with d = M / 2: their
    spread estimates the full fit's; :mod:`kofs.aggregate.uncertainty`)."""
    rng = np.random.default_rng(seed)
    M = Z.shape[0]
    thetas, weights = [], []
    for _ in range(n):
        rows = np.sort(rng.choice(M, M // 2, replace=False))
        f = fit_signed(Z, X, fit.center, fit.scale, max_prior=max_prior, start=fit, rows=rows)
        thetas.append(np.concatenate([f.mu, f.beta]))
        weights.append(signed_weights(f.m, f.correlation))
    return np.array(thetas), np.array(weights)


def integrated_posterior(
    fit: SignedFit, Z: np.ndarray, X: np.ndarray, cov: np.ndarray, *, draws: int, seed: int,
    max_prior: float,
) -> np.ndarray:  # fmt: skip
    """Each gene's posterior averaged over draws of ``(m, beta)`` from ``N(theta, cov)`` (the
    refits' covariance; the signs of m and S held at the fit), as the rank model's
    integrated posterior."""
    D = len(fit.m)
    theta = np.concatenate([fit.mu, fit.beta])
    if draws <= 0 or not np.any(cov):
        return fit.posterior
    pat = _Patterns(np.asarray(Z, dtype=np.float64))
    design = PriorDesign(np.asarray(X, dtype=np.float64), np.ones(Z.shape[0]), max_prior)
    rng = np.random.default_rng(seed)
    vals, vecs = np.linalg.eigh((cov + cov.T) / 2)
    root = vecs * np.sqrt(np.clip(vals, 0.0, None))
    sign = np.where(fit.m < 0, -1.0, 1.0)
    total = np.zeros(Z.shape[0])
    for _ in range(draws):
        t = theta + root @ rng.standard_normal(len(theta))
        m = sign * np.maximum(t[:D], 0.0)
        beta = design._cap(t[D:])
        _, llr, _ = pat.terms(m, fit.correlation)
        total += expit(design.X @ beta + llr)
    return total / draws
