"""Known null distributions of ranked lists' scores: a list's p-values.

A ranker whose score has a known distribution when no gene is relevant records it in its
ranking's ``info["null"]``; the ``posterior`` aggregator then reads the list's p-values in
place of its positions (a *calibrated* list, :mod:`kofs.aggregate.binormal`), so that the
fraction of relevant genes is learned from the list itself (the two-groups model, Efron
2008), not only from the lists' agreement. Against which null -- the theoretical one below or
the list's empirical null -- depends on its kind (:func:`null_kinds`; p-values brought in
tables: empirical by default, :mod:`kofs.aggregate.empirical_null`).

Nulls:

``{"distribution": "f", "df1": a, "df2": b, "scale": c}``
    ``c * score`` is an F(a, b) statistic under the null (the Fisher score of K classes of n
    samples: ``c = (n - K) / (K - 1)``, the one-way ANOVA F test).
``{"distribution": "normal"}``
    The scores are z-scores, N(0, 1) under the null, higher = more evidence (one-sided upper
    p-values: Hotspot's autocorrelation z against its count null).
``{"distribution": "p"}``
    The scores are p-values themselves.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from scipy.special import betaln, fdtrc, log_ndtr, ndtr

from kofs.types import Ranking

__all__ = [
    "effect_sign_matrix",
    "null_kinds",
    "null_log_p_values",
    "null_p_matrix",
    "null_p_values",
]


def null_p_values(ranking: Ranking) -> np.ndarray | None:
    """Each gene's p-value under the ranking's null, or None when it has no known null. A NaN
    score of a ranker's statistic (``f``, ``normal``: a constant gene, nothing to test) has
    p = 1, the bottom of the list as in its ranks; a NaN of a table of p-values (a gene its
    tool did not test) stays NaN: no information."""
    null = ranking.info.get("null")
    if not isinstance(null, Mapping):
        return None
    s = np.asarray(ranking.scores, dtype=np.float64)
    kind = null.get("distribution")
    if kind == "f":
        a, b, c = float(null["df1"]), float(null["df2"]), float(null["scale"])
        with np.errstate(invalid="ignore"):
            p = np.where(np.isnan(s), 1.0, fdtrc(a, b, np.maximum(c * s, 0.0)))
        p[np.isposinf(s)] = 0.0
        return p
    if kind == "normal":
        return np.where(np.isnan(s), 1.0, ndtr(-s))
    if kind == "p":
        return np.where((s >= 0) & (s <= 1), s, np.nan)
    raise ValueError(f"ranking {ranking.name!r}: unknown null distribution {kind!r}")


def null_log_p_values(ranking: Ranking) -> np.ndarray | None:
    """:func:`null_p_values` as natural logarithms, computed in log space for the statistics
    whose null kofs knows (``f``, ``normal``): p-values below the smallest double (an F of
    thousands of cells, a Hotspot z above 38) keep their order (-inf: an infinite statistic;
    the F test's below :data:`TAIL_P` by :func:`log_f_tail`);
    a table's p-values (``p``) are only as fine as it gives them."""
    null = ranking.info.get("null")
    if not isinstance(null, Mapping):
        return None
    s = np.asarray(ranking.scores, dtype=np.float64)
    kind = null.get("distribution")
    with np.errstate(divide="ignore", invalid="ignore"):
        if kind == "f":
            a, b, c = float(null["df1"]), float(null["df2"]), float(null["scale"])
            x = np.maximum(c * np.where(np.isnan(s), 0.0, s), 0.0)
            p = fdtrc(a, b, x)
            out = np.where(np.isnan(s), 0.0, np.log(p))
            # below ~1e-290 the doubles lose digits, then underflow to 0: the tail in logs
            lost = np.flatnonzero((p < TAIL_P) & np.isfinite(x))
            if lost.size:
                tail = log_f_tail(x[lost], a, b)
                out[lost] = np.where(np.isnan(tail), out[lost], tail)
            out[np.isposinf(s)] = -np.inf
            return out
        if kind == "normal":
            return np.where(np.isnan(s), 0.0, log_ndtr(-s))
    p = null_p_values(ranking)
    with np.errstate(divide="ignore"):
        return None if p is None else np.log(p)


#: p-values of the F test below which :func:`null_log_p_values` computes their logarithm in
#: the tail (:func:`log_f_tail`): near the smallest normal double they lose digits.
TAIL_P = 1e-290


def log_f_tail(x: np.ndarray, d1: float, d2: float, *, max_terms: int = 100_000) -> np.ndarray:
    """``log P(F > x)`` of F(d1, d2) far in its upper tail, where the probability is below the
    smallest double: ``I_y(d2 / 2, d1 / 2)`` at ``y = d2 / (d2 + d1 x)``, the regularized
    incomplete beta function evaluated as its continued fraction (modified Lentz's method;
    Press et al., Numerical Recipes, 3rd ed., 6.4) with the prefactor ``y^a (1 - y)^b / (a
    B(a, b))`` taken in logs. The fraction converges fast for ``y < (a + 1) / (a + b + 2)``,
    which holds wherever the probability underflows (NaN where it does not hold)."""
    x = np.asarray(x, dtype=np.float64)
    a, b = 0.5 * d2, 0.5 * d1
    y = d2 / (d2 + d1 * x)
    ok = (x > 0) & (y < (a + 1.0) / (a + b + 2.0))
    out = np.full(x.shape, np.nan)
    if not ok.any():
        return out
    y = y[ok]
    tiny = 1e-300

    def guard(v: np.ndarray) -> np.ndarray:
        return np.where(np.abs(v) < tiny, tiny, v)

    c = np.ones_like(y)
    d = 1.0 / guard(1.0 - (a + b) * y / (a + 1.0))
    h = d.copy()
    going = np.ones(y.shape, dtype=bool)
    for m in range(1, max_terms + 1):
        m2 = 2 * m
        for aa in (
            m * (b - m) * y / ((a - 1 + m2) * (a + m2)),
            -(a + m) * (a + b + m) * y / ((a + m2) * (a + 1 + m2)),
        ):
            d = 1.0 / guard(1.0 + aa * d)
            c = guard(1.0 + aa / c)
            step = d * c
            h = np.where(going, h * step, h)
        going &= np.abs(step - 1.0) > 1e-15
        if not going.any():
            break
    out[ok] = a * np.log(y) + b * np.log1p(-y) - np.log(a) - betaln(a, b) + np.log(h)
    return out


def null_p_matrix(
    rankings: Sequence[Ranking], genes: Sequence[str], *, log: bool = False
) -> np.ndarray | None:
    """(M, L) p-values of the rankings with a known null over ``genes`` (NaN elsewhere), or
    None when no ranking has one; ``log``: their logarithms (:func:`null_log_p_values`)."""
    cols = [(null_log_p_values if log else null_p_values)(r) for r in rankings]
    if all(c is None for c in cols):
        return None
    rows_of = _Rows(genes)
    out = np.full((len(genes), len(rankings)), np.nan)
    for j, (r, p) in enumerate(zip(rankings, cols, strict=True)):
        if p is None:
            continue
        out[rows_of(r), j] = p
    return out


def null_kinds(rankings: Sequence[Ranking]) -> np.ndarray:
    """Each ranking's kind of null (``"f"``, ``"normal"``, ``"p"``; ``""``: none): how the
    fusion reads its p-values against an empirical null (:mod:`kofs.aggregate.empirical_null`)."""
    return np.array(
        [
            str(r.info["null"].get("distribution", ""))
            if isinstance(r.info.get("null"), Mapping)
            else ""
            for r in rankings
        ],
        dtype=object,
    )


class _Rows:
    """The rows of a ranking's genes among ``genes`` (all of them, in order: a slice)."""

    def __init__(self, genes: Sequence[str]) -> None:
        self.genes = tuple(genes)
        self.index: dict[str, int] | None = None

    def __call__(self, r: Ranking) -> np.ndarray | slice:
        if r.genes == self.genes:
            return slice(None)
        if self.index is None:
            self.index = {g: i for i, g in enumerate(self.genes)}
        index = self.index
        return np.fromiter((index[g] for g in r.genes), dtype=np.int64, count=len(r.genes))


def effect_sign_matrix(rankings: Sequence[Ranking], genes: Sequence[str]) -> np.ndarray | None:
    """(M, L) effect signs of the rankings of two-sided p-values that carry them
    (``info["effect_signs"]``, :mod:`kofs.aggregate.signed`) over ``genes`` (NaN elsewhere),
    or None when no ranking has them."""
    if not any("effect_signs" in r.info for r in rankings):
        return None
    rows_of = _Rows(genes)
    out = np.full((len(genes), len(rankings)), np.nan)
    for j, r in enumerate(rankings):
        signs = r.info.get("effect_signs")
        if signs is not None:
            out[rows_of(r), j] = np.asarray(signs, dtype=np.float64)
    return out
