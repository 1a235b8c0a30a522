"""Signed tables: differential-expression tables read through their z-scores and effect signs.

Tables of one experiment analysed by several tools (DESeq2 and edgeR on the same counts) share
their noise. Read through their two-sided p-values alone, their normal scores are more alike in
the tails than a Gaussian copula says (docs/lists.md), and the fusion's q-values come out
optimistic (FDP 0.225 at q <= 0.10 for tables sharing 60 % of their noise). With each table's
effect sign the model is exact again:

* table l gives gene i the signed z-score ``z_il = sign_il * Q^-1(p_il / 2)``, N(0, 1) under
  the null whatever the test (``Q`` the upper normal tail);
* background genes: ``z_i ~ N(0, S)`` (S: the tables' correlation, shared noise);
* relevant genes: ``z_i = s_i lambda_i (sig_k m) + e_i``, ``e_i ~ N(0, S)``: the gene goes up
  or down (``s_i = +-1``, equally likely) by a gene-specific amount ``lambda_i ~ N(1, tau2)``
  shared by the tables (effect sizes differ between genes), in the tables' directions of a
  pattern ``sig_k`` (+-1 per table) of probability ``pi_k`` (below, "Directions"; the first
  pattern, the same way in every table, ``m_l < 0`` a table whose contrast is the other way
  round); its likelihood ratio given the pattern, integrated over ``s`` and ``lambda``, is
  ``h^-1/2 exp((tau2 a^2 - c) / 2h) cosh(a / h)`` with ``a = m_k' S^-1 z_i``, ``c = m_k' S^-1
  m_k``, ``h = 1 + tau2 c``, ``m_k = sig_k m`` (``tau2 = 0``: ``exp(-c/2) cosh(a)``), and the
  gene's is their mixture over the patterns;
* each table is read against its *empirical null* (Efron 2004, 2007;
  :func:`kofs.aggregate.empirical_null.signed_null`): the genes of one experiment are
  correlated, so its z-scores spread around a shifted centre and wider than N(0, 1) even where
  nothing changed; ``z`` above is the table's z-score centred and scaled by the normal fitted
  to the middle of its histogram (never narrower than N(0, 1));
* a gene a table lacks is missing there (its marginal over the tables that have it), unless
  the table is *cut* to its significant genes (:class:`Censored`): a gene below its cut has
  ``lo_l <= z_il <= hi_l`` there (``|z| <=`` the z of the table's largest listed p-value, on
  the scale its z-scores are read on), a censored observation whose probability enters the
  likelihood exactly (below: "Censored tables");
* the prior ``P(Z_i = 1) = expit(x_i' beta)`` is :mod:`kofs.aggregate.posterior`'s.

Fitted by EM on the exact z (no binning), ``s`` and ``lambda`` the missing data: ``m`` the
regression of the z on ``s lambda`` over the relevant genes (posterior-weighted), S the pooled
within-class correlation, beta one Newton step of the prior's ridge-logistic regression; tau2
is profiled over a grid (:data:`TAU2_GRID`: EM moves it slowly near 0, and not at all from 0),
each fit warm-started from the last. The spread matters: with effects of varying size
(Gamma, mean 3 SD) a fixed shift fitted a relevant class too narrow, whose fraction came out
less than half the truth (two independent tables: 96 calls at FDP 0.002, against 135 at 0.080
with tau2 fitted; one table: 80 against Benjamini-Hochberg's 97, with tau2 97; fixed shifts:
the same calls either way; docs/lists.md). The separations ``|m_l|`` are the tables'
reliabilities; a table's weight is its Shapley share of the Mahalanobis separation ``m' S^-1 m``
(its gain in separation averaged over the orders in which tables are added; ``m_l^2`` for
independent tables, as the rank model's; :func:`signed_weights`): tables of one comparison by
two tools share it, where the share ``m_l (S^-1 m)_l`` of the discriminant gave one 1 and the
other 0. The likelihood is exact
(not a pseudo-likelihood), so the test of a relevant class against the tables' correlation alone
is an ordinary likelihood ratio.

Directions. Studies of one question mostly see a changed gene go the same way, but tables
of different contrasts, tissues or treatments need not: a relevant gene may go up in one and
down in another, or the directions may be unrelated. With one pattern (every relevant gene the
same way in every table, as this model had it until 2026-11-29) such tables' relevant genes
that disagree were read as background, and their disagreement as correlated noise: three
independent studies whose changed genes' directions are unrelated (``bench/bench_z_tables.py``
row 8, 10 seeds) called 68 genes at FDP 0.185 where Fisher's combination of their p-values
with BH calls 122 at 0.094 (two such studies were fitted at a noise correlation of 0.22). Each
relevant gene's directions now follow one of the ``2^(D-1)`` patterns of
:func:`direction_patterns` (a pattern and its mirror image are one: ``s`` turns both), the
patterns' weights ``pi`` learned by EM as a mixture's (the share of the relevant genes each
pattern's posterior gives), starting at :data:`SAME_WAY_START` for the same-way pattern; a
pattern whose weight falls below :data:`PATTERN_FLOOR` leaves the fit. The patterns are a
richer model than one, and with weak signal they fit noise: six tables of one question whose
changed genes are weak (4,000 genes, 200 changed by 0.3 x Gamma(2, 1.25) SD) kept 3-27 patterns
of weight up to 0.08 and called genes at mean FDP 0.083 where the one pattern's was 0.037. So
the one-pattern fit is made first (the same as before the patterns, to the last digit), the
patterns' fit from it, and the patterns replace it only when their likelihood-ratio test is
significant at :data:`DIRECTION_ALPHA` (chi-square with ``2^(D-1) + D - 1`` degrees of
freedom, the tables' own changes below included; conservative where the weights sit on their
boundary; ``SignedFit.direction_test``), against
the better of the two one-pattern points: the EM's and the patterns' fit with its heaviest
pattern alone (with a cut table the EM stops short of the maximum: an independent study's top
7 beside a whole table, a patterns' fit of weights 0.999 / 0.001 was 187 nats above the
one-pattern EM's, all of it the better optimum). Tables of one question are fitted as before,
tables whose genes go different ways give tens to hundreds of nats. The patterns' fit is not
made where no pattern could raise the likelihood at the one-pattern fit (the derivative in each
pattern's weight, :func:`_patterns_could_help`; tables of one question mostly): a stationary
point of the patterns' model, where their EM would stay. Row 8 now: 118
calls at FDP 0.074; half the genes' directions random (row 9): 103 at 0.173 before, 120 at
0.077 now; rows 1-7 (tables of one question) the same calls as before (docs/lists.md, "Tables
whose changed genes go different ways"). The pattern of largest weight is made the first
(:func:`_canonical`: ``m`` turned by its signs), so a table whose genes mostly go the other way
still has ``m_l < 0``. The sign patterns are fitted up to :data:`DIRECTION_TABLES` tables (32
patterns; each EM step computes every pattern of weight above 0); beyond, one (and the
tables' own changes, below).
:attr:`SignedFit.agreement` says how often two tables' relevant genes go the same way.

Own changes. Independent studies also see genes change that the others do not (a tissue's
own genes, a cohort's own differences). With every relevant gene changed in every table such
genes had no place: one table was read as the class and the other's changed genes as
background, or a class of small separations and a wide spread took every gene beyond either
table's middle (two studies of 150 own changed genes each, none shared: FDP 0.39-0.45). The
last ``D`` patterns are therefore the tables' own changes (``sig`` the unit vector of table l:
the gene changes there by ``m_l``, and is background in the others); a relevant gene is one
changed in some table. Where the one-pattern fit gives a table almost no separation (``|m_l|
< M_START / 2``), its own changes cannot show there (its own pattern's separation is that
``m_l``), so the patterns are also fitted from that fit with the table's separation at
``M_START``, the likelier of the two patterns' fits tested against the one pattern. The
tables' own changes are patterns at any number of tables (beyond :data:`DIRECTION_TABLES`
beside the one sign pattern: eight studies with their own genes beside shared ones called
106-125 genes where Fisher's combination calls 256-258; now 334-353 at FDP 0.08-0.10; ten
DE tables of one question, 50,000 genes, fuse in 2.1 s instead of 1.3: the patterns' fit is
made, and the likelihood-ratio test keeps the one pattern).

A fit that ends at no class (every separation 0) from the usual start is fitted again from the
genes the tables rank highest together (:func:`_top_start`), the likelier kept: m = 0 is a
fixed point of the EM, and three real-data studies' start of separation 2 fell into it where
the planted class was 228 nats likelier (0 calls; now 111 at FDP 0.01, docs/lists.md).

Near copies. Two tools' tables of one comparison on the same samples (limma and Welch's t)
have z-scores correlated 0.98-0.9998; S is then fitted that close to 1 (:data:`EIGEN_FLOOR`
allows it), and with separations ``m_l`` a few per cent apart the fused evidence ``a = m' S^-1
z`` reads mostly the *difference* of their z-scores -- which on real data grows with the effect
(a t statistic's normal score depends on its degrees of freedom, limma moderates the
variances), a tool's artefact that the constant correlation takes for signal (ALL BCR/ABL vs
NEG: 1,522 calls where each table alone makes 183-235). Whole tables whose z-scores correlate at
``NEAR_COPY`` (0.98) or more are therefore fitted as one table before this model sees them
(:func:`kofs.aggregate.sources.near_copy_tables`): the mean of their z-scores, each read
against its own empirical null, read against its own null in turn, their weight shared. Tables
less alike whose fitted S is still at least ``SIGNED_ONE_SOURCE`` in absolute value (0.8; a
t-test's and a Mann-Whitney test's tables of the same samples 0.96; two contrasts sharing a
control group 0.5, fused as two) are one source, for which one table stands (:func:`kofs.aggregate.relevance._shared_noise`; the fused evidence of two such tables
read their disagreement as signal: 3 of 20 null halves of ALL with calls).

Censored tables. Given a gene's observed z-scores ``z_O``, a censored table's ``z_l`` is
normal: background ``N(b, V)`` with ``b = S_lO S_OO^-1 z_O`` and ``V = S_ll - S_lO S_OO^-1
S_Ol``; relevant, given the direction s, ``N(b + u d, V)`` with ``d = m_l - S_lO S_OO^-1 m_O``
and ``u = s lambda``, whose posterior given ``z_O`` is ``N((s + tau2 a) / h, tau2 / h)`` -- so
its expectation over lambda is ``N(b + E[u] d, V + d^2 tau2 / h)``, and the censored factor a
difference of two normal CDFs (closed form; the likelihood is exact for one censored table per
gene, ``tests/test_aggregate_signed.py`` checks it against a numerical integral). The bounds
are the cut's z read as the table's z-scores are: ``(+-Q^-1(p_max / 2) - delta) / sigma``
with the table's empirical null (a cut table lacks its middle, so ``delta = 0``, and with
fewer than ``MIN_GENES`` listed, its usual few, ``sigma = 1``: the theoretical null;
:func:`kofs.aggregate.empirical_null.signed_null`).

Whether a cut table shares its noise with another table (one source) is read also at the
likelihood's maximum, not only at the EM's fixed point: with censored entries the correlation
step is no M-step (below), and beside its own whole table, whose empirical null spreads 2.43
(ALL B vs T, limma), limma's top 200 stopped at a correlation of 0.15 where the maximum, the
cut table read against N(0, 1), is 0.94 (:func:`polished`: L-BFGS over ``(m, S, beta)`` from
the EM's fit; 0.95 / 0.86 for its top 500 / 1,000): one source, 109 calls where the pair fused
as two called 229 / 557 / 1,110. Two guards, both of the pair alone
(:func:`kofs.aggregate.relevance._cut_noise`): the two tables' z-scores over the genes both
list are a near copy's (the correlation of their normal scores at least ``NEAR_COPY``, 0.98;
:func:`kofs.aggregate.sources.listed_copy`: a cut table and its own whole table 1), and the
two tables alone read the correlation above the bound by a one-sided likelihood-ratio test
(:func:`correlation_evidence`; limma's pair 27-156 nats, 7 listed genes of an independent
study given 0.85: 0.31). The maximum alone grouped an independent study: two halves of B vs
T's samples, one cut to its top 200, share their comparison's wide differences, which the
maximum reads as shared noise (0.88, 23 nats; the pair had called 222 genes, the whole half
alone 0), but their listed z-scores are no near copy (0.83-0.88 over six seeds). So two
tools' cut and whole tables stay two tables too (limma's cut beside Welch's whole table of B
vs T: 0.82-0.93), as before. The fused answer is the EM's fit, as before: the maximum there
changed the calls of independent cut studies both ways (``bench_cut_tables.py --signed``:
30 -> 28 and 32 -> 43 in two rows; BCR/ABL vs NEG halves 66 -> 52, 94 -> 135).

A gene censored in several tables (below several cut tables' cuts) has them taken as
independent given its observed tables and its direction s: the factors are multiplied within
each s (the tables' residual correlation and their sharing of lambda given s are dropped:
exact for tau2 = 0 and tables uncorrelated given the observed ones; a bivariate normal
probability per gene and EM step was not worth its cost). A gene observed in no table but
below a cut table's cut is read through its censored factors alone (it is below every cut); a
gene in no table at all is excluded (log LR 0), as before.

EM reads the censored z as missing data: the m-step takes its truncated-normal moments
(``E[z]``, ``E[z^2]``, ``E[u z]``, ``E[u^2]``: the pair (u, z) is bivariate normal given s,
truncated in z), and the observed tables' regressors ``E[u]``, ``E[u^2]`` are given the
censored table too -- exact for a gene censored in one table; one censored in several has them
given its observed tables and the posterior of s (the censored tables' information on
lambda's size beyond the sign is not fed back: exact for tau2 = 0). With one cut table the
likelihood rose at every step (ALL data, one study cut at padj <= 0.10). A pair of censored tables
of one gene adds the product of their expected z-scores to the correlation step, as the
independence above reads them; the correlation step is then not an exact M-step, and where
most genes are censored in several tables (every table cut) the likelihood fell at steps and
the fit took thousands of them (20-35 s for 8,562 genes, against 1-4 s with a whole table
beside the cut ones): the fusion reads signed tables that are all cut through their p-values
(:func:`kofs.aggregate.relevance.posterior_aggregate`; their top-200 precision was the same,
0.13). The relevant-class test's null correlation is fitted by maximising its likelihood
numerically (:func:`_null_correlation`).
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from scipy.optimize import minimize
from scipy.special import chdtrc, expit, log_ndtr, logit, logsumexp, ndtr, ndtri

from kofs.aggregate.posterior import (
    NO_SEPARATION,
    PriorDesign,
    _corr_matrix,
    _offdiag,
    likelihood_ratio_test,
)
from kofs.aggregate.uncertainty import SPLIT_SIZE

__all__ = [
    "Censored",
    "SignedFit",
    "fit_signed",
    "half_sample_refits",
    "integrated_posterior",
    "signed_test",
    "signed_weights",
    "signed_z",
]

#: Starting fraction of relevant genes and separation.
RHO_START = 0.05
M_START = 2.0
#: Largest separation (beyond it two classes are told apart perfectly anyway).
M_MAX = 12.0
#: The grid over which the relevant genes' effect-size variance tau2 (relative to m) is
#: profiled (0: every relevant gene shifted by exactly m; large: effects spread around 0).
TAU2_GRID = (0.0, 0.05, 0.2, 0.8, 3.2, 12.8, 51.2)
#: Smallest eigenvalue of the tables' correlation S. Two tools on the same samples give
#: z-scores correlated 0.99 and more (Welch's t and the Mann-Whitney test on the ALL data); the
#: likelihood is exact, so S may come that close to singular (the rank model's floor, 0.02,
#: misread such tables: a class of 45 % of the genes with p-values near 1 on real data). Tables
#: correlated 0.98 or more reach the fit as one table (module docstring, "Near copies"): fitted
#: at 0.9998 the fused evidence read the tools' difference.
EIGEN_FLOOR = 1e-6
#: EM steps without a rise of the likelihood above the likeliest point reached after which
#: the EM of the signed model ends there (:func:`_em`: its steps are not all exact M-steps).
EM_PATIENCE = 100
#: Stopping tolerance of the half-sample refits (they only measure the parameters' spread).
REFIT_TOL = 1e-5
#: z-scores are kept within +- Z_MAX (p-values down to 1e-300).
Z_MAX = 37.0
#: Below -DEEP_TAIL the normal CDF is taken in logs (:func:`_log_mass`; Phi(-20) ~ 3e-89).
DEEP_TAIL = 20.0
#: Most tables whose relevant genes' directions are fitted pattern by pattern (2^(D-1)
#: patterns and the D tables' own changes; module docstring, "Directions"); beyond (the
#: tables' own changes still fitted), a relevant gene changes the same way in
#: every table (the one pattern).
DIRECTION_TABLES = 6
#: A direction pattern whose weight falls below this is dropped from the fit (EM cannot raise
#: a weight of 0, and one of 1e-8 moves the likelihood by less than the tolerance).
PATTERN_FLOOR = 1e-8
#: The first pattern's starting weight (the rest share the remainder).
SAME_WAY_START = 0.5
#: The patterns replace the one pattern when their likelihood-ratio test against it is
#: significant at this level (module docstring, "Directions").
DIRECTION_ALPHA = 0.05


def direction_patterns(D: int) -> np.ndarray:
    """(K, D) of +-1 and 0: the ways a relevant gene's changes can go in ``D`` tables,
    relative to the gene's own direction (a pattern and its mirror image are one). The first
    ``2^(D-1)`` rows change in every table (the first table +1; the first row all +1: the same
    way in every table); the last ``D`` in one table alone (row ``2^(D-1) + l``: table l's own
    change, the other tables' background). The sign rows up to :data:`DIRECTION_TABLES`
    tables; beyond, the first of them alone (and the D tables' own changes)."""
    if D < 2:
        return np.ones((1, max(D, 0)))
    if D > DIRECTION_TABLES:
        return np.vstack([np.ones((1, D)), np.eye(D)])
    k = np.arange(1 << (D - 1))
    bits = (k[:, None] >> np.arange(D - 1)) & 1
    return np.vstack([np.hstack([np.ones((k.size, 1)), 1.0 - 2.0 * bits]), np.eye(D)])


def _sign_patterns(D: int) -> int:
    """How many of :func:`direction_patterns`' rows change in every table."""
    return 1 if D < 2 or D > DIRECTION_TABLES else 1 << (D - 1)


def signed_z(p: np.ndarray, signs: np.ndarray) -> np.ndarray:
    """``sign * Q^-1(p / 2)``: the signed z-score of a two-sided p-value (NaN stays NaN; a
    sign of 0 -- no change -- gives 0)."""
    p = np.clip(np.asarray(p, dtype=np.float64), 1e-300, 1.0)
    z = -ndtri(p / 2.0)
    return np.clip(np.sign(np.asarray(signs, dtype=np.float64)) * z, -Z_MAX, Z_MAX)


class Censored(NamedTuple):
    """The genes below cut tables' cuts: ``mask`` (M, D) the entries observed only as ``lo_l <=
    z <= hi_l`` (``lo``, ``hi``: (D,) each table's interval, on the scale its z-scores are read
    on; module docstring, "Censored tables")."""

    mask: np.ndarray
    lo: np.ndarray
    hi: np.ndarray

    def of(self, rows: np.ndarray | None) -> Censored:
        """The censoring of these genes (all: itself)."""
        return self if rows is None else self._replace(mask=self.mask[rows])


def _log_mass(al: np.ndarray, be: np.ndarray) -> np.ndarray:
    """``log(Phi(be) - Phi(al))`` (al < be). An interval above 0 is mirrored below it (the
    difference of two CDFs near 1 is lost, of two near 0 is not); one deeper than
    :data:`DEEP_TAIL` is taken in log CDFs (the CDFs underflow there)."""
    above = al > 0
    lo, hi = np.where(above, -be, al), np.where(above, -al, be)
    with np.errstate(divide="ignore"):
        out = np.log(ndtr(hi) - ndtr(lo))
    deep = hi < -DEEP_TAIL
    if deep.any():
        top = log_ndtr(hi[deep])
        out[deep] = top + np.log1p(-np.exp(log_ndtr(lo[deep]) - top))
    return out


def _truncated(
    mean: np.ndarray, var: np.ndarray, lo: np.ndarray, hi: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``log P(lo <= x <= hi)``, ``E[x]`` and ``E[x^2]`` given it, of ``x ~ N(mean, var)``
    (the truncated normal's moments, its density ratios taken in log space)."""
    sd = np.sqrt(var)
    al, be = (lo - mean) / sd, (hi - mean) / sd
    log_p = _log_mass(al, be)
    ra = np.exp(-0.5 * al * al - _LOG_ROOT_2PI - log_p)  # phi(al) / mass
    rb = np.exp(-0.5 * be * be - _LOG_ROOT_2PI - log_p)
    first = np.clip(mean + sd * (ra - rb), lo, hi)
    spread = np.maximum(var * (1.0 + al * ra - be * rb - (ra - rb) ** 2), 0.0)
    return log_p, first, spread + first * first


_LOG_ROOT_2PI = 0.5 * np.log(2.0 * np.pi)


class _CutTerms(NamedTuple):
    """Per censored entry (:attr:`_Patterns.cut` order): the background's truncated moments
    ``E[z]``, ``E[z^2]``, and the relevant class's given s = +1 (row 0) and s = -1 (row 1):
    ``E[z]``, ``E[z^2]``, ``E[u z]``, ``E[u]``, ``E[u^2]`` (module docstring, "Censored
    tables")."""

    z0: np.ndarray
    zz0: np.ndarray
    z1: np.ndarray
    zz1: np.ndarray
    uz1: np.ndarray
    u1: np.ndarray
    uu1: np.ndarray


class _Terms(NamedTuple):
    """:meth:`_Patterns.terms`."""

    a: np.ndarray
    c: np.ndarray
    llr: np.ndarray
    ld0: float
    es: np.ndarray  # E[s | relevant] = tanh(a / h) (times the censored factors' odds)
    cut: _CutTerms | None = None


class _Cut(NamedTuple):
    """The censored entries grouped by the tables a gene has and those it is censored in:
    ``groups`` (observed tables, censored tables, genes, their observed z); the entries
    (gene ``gi``, table ``li``) in group order, each group's censored tables in turn; ``genes``
    the genes with a censored entry. The terms are computed per *unit* (gene ``ugi``, bounds
    ``lo``, ``hi``; ``unit``: each entry's): a group with no observed table has one unit per
    table, its genes' terms being the same (the genes below every cut: most of them where
    every table is cut). ``single``: the entries of the genes censored in one table only."""

    groups: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]
    gi: np.ndarray
    li: np.ndarray
    unit: np.ndarray
    ugi: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    genes: np.ndarray
    single: np.ndarray


class _Patterns:
    """The genes grouped by which tables they have (each group's marginal model)."""

    def __init__(self, Z: np.ndarray, censored: Censored | None = None) -> None:
        seen = ~np.isnan(Z)
        self.Z0 = np.where(seen, Z, 0.0)
        self.seen = seen.astype(np.float64)
        self.complete = bool(seen.all())
        keys = seen @ (1 << np.arange(Z.shape[1], dtype=np.int64))
        groups = []
        for k in np.unique(keys):
            if k == 0:
                continue
            where = np.flatnonzero(keys == k)
            cols = np.flatnonzero(seen[where[0]])
            # every gene has every table: a slice, no copies
            rows: np.ndarray | slice = slice(None) if where.size == Z.shape[0] else where
            z = np.ascontiguousarray(self.Z0[rows][:, cols])
            # the group's scatter: the sum of its quadratic forms is a trace
            groups.append((cols, rows, z, z.T @ z))
        self.groups = groups
        # the scatter sums that do not change: sum z_i z_j and sum z_i^2 over the genes that
        # both tables have (Z0 is 0 where a table lacks the gene)
        self.zz = self.Z0.T @ self.Z0
        self.z2 = (self.Z0 * self.Z0).T @ self.seen
        self.cut = None if censored is None else _cut_groups(self.Z0, seen, censored)
        # the genes some table has or a cut table's cut bounds (the others say nothing)
        listed = seen.any(axis=1)
        if self.cut is not None:
            listed[self.cut.genes] = True
        self.listed = listed.astype(np.float64)

    def terms(self, m: np.ndarray, S: np.ndarray, tau2: float) -> _Terms:
        """Per gene, over its tables: ``a = m' S^-1 z``, ``c = m' S^-1 m``, ``log LR`` and
        ``E[s]`` given relevance (0 for a gene no table has); and the background log density
        ``sum_i log N(z_i; 0, S)`` summed over the genes."""
        M = self.Z0.shape[0]
        a, c = np.zeros(M), np.zeros(M)
        ld0 = 0.0
        for cols, rows, z, scatter in self.groups:
            Sc = S[np.ix_(cols, cols)]
            inv = np.linalg.inv(Sc)
            g = inv @ m[cols]
            a[rows] = z @ g
            c[rows] = float(m[cols] @ g)
            _, logdet = np.linalg.slogdet(Sc)
            n = z.shape[0]
            ld0 -= 0.5 * (
                float(np.sum(inv * scatter)) + n * (logdet + len(cols) * np.log(2 * np.pi))
            )
        h = 1.0 + tau2 * c
        x = a / h
        e = np.exp(-2.0 * np.abs(x))  # log cosh x and tanh x from one exponential
        llr = (tau2 * a * a - c) / (2.0 * h) + np.abs(x) + np.log1p(e) - np.log(2.0)
        llr -= 0.5 * np.log(h) if tau2 > 0 else 0.0
        es = np.sign(x) * (1.0 - e) / (1.0 + e)
        if self.cut is None:
            return _Terms(a, c, llr, ld0, es)
        return self._censored(m, S, tau2, a, c, llr, ld0, es)

    def _censored(self, m, S, tau2, a, c, llr, ld0, es) -> _Terms:
        """The terms with each censored table's factor (module docstring, "Censored
        tables"): the log LR and E[s] of the genes with a censored entry, the background's
        censored log probabilities added to ``ld0``, and the entries' moments."""
        cut = self.cut
        assert cut is not None
        b, V, d = np.empty(cut.ugi.size), np.empty(cut.ugi.size), np.empty(cut.ugi.size)
        k = 0
        for obs, cens, rows, z in cut.groups:
            S_co = S[np.ix_(cens, obs)]
            # S_CO S_OO^-1 (no observed table: the censored tables' marginals)
            B = np.linalg.solve(S[np.ix_(obs, obs)], S_co.T).T if obs.size else S_co
            bb = z @ B.T  # (genes, censored tables)
            vv = np.diag(S)[cens] - np.sum(B * S_co, axis=1)
            dd = m[cens] - B @ m[obs]
            n = rows.size
            for j in range(cens.size):
                b[k : k + n], V[k : k + n], d[k : k + n] = bb[:, j], vv[j], dd[j]
                k += n
        h = (1.0 + tau2 * c)[cut.ugi]
        v = tau2 / h  # lambda's posterior variance given the observed tables
        log0, z0, zz0 = _truncated(b, V, cut.lo, cut.hi)
        var1 = V + v * d * d
        kappa = v * d / var1  # the slope of u on z (given s)
        log1, z1, zz1, uz1, u1, uu1 = (np.empty((2, b.size)) for _ in range(6))
        for r, sign in enumerate((1.0, -1.0)):
            mu = (sign + tau2 * a[cut.ugi]) / h  # E[u | s, z_O]
            mz = b + mu * d
            log1[r], z1[r], zz1[r] = _truncated(mz, var1, cut.lo, cut.hi)
            uz1[r] = (mu - kappa * mz) * z1[r] + kappa * zz1[r]
            u1[r] = mu + kappa * (z1[r] - mz)
            uu1[r] = (
                v
                - kappa * kappa * var1
                + mu * mu
                + 2.0 * mu * kappa * (z1[r] - mz)
                + kappa * kappa * (zz1[r] - 2.0 * mz * z1[r] + mz * mz)
            )
        M, at = a.size, cut.unit  # each entry's unit
        up, down = (np.bincount(cut.gi, log1[r, at], minlength=M)[cut.genes] for r in (0, 1))
        bg = np.bincount(cut.gi, log0[at], minlength=M)[cut.genes]
        g = cut.genes
        hg = 1.0 + tau2 * c[g]
        x = a[g] / hg
        llr, es = llr.copy(), es.copy()
        llr[g] = (
            (tau2 * a[g] ** 2 - c[g]) / (2.0 * hg)
            - (0.5 * np.log(hg) if tau2 > 0 else 0.0)
            + np.logaddexp(x + up, -x + down)
            - np.log(2.0)
            - bg
        )
        es[g] = np.tanh(x + 0.5 * (up - down))
        moments = _CutTerms(
            z0[at], zz0[at], z1[:, at], zz1[:, at], uz1[:, at], u1[:, at], uu1[:, at]
        )
        return _Terms(a, c, llr, ld0 + float(log0[at].sum()), es, moments)


class _Mixed(NamedTuple):
    """The terms over the direction patterns (:func:`_mixed`): per gene the log LR of the
    mixture, the background log density ``ld0``, the patterns kept (``sig``, (K, D)) with
    their terms (``parts``) and each gene's posterior over them given relevance (``w``, (K,
    M))."""

    llr: np.ndarray
    ld0: float
    sig: np.ndarray
    parts: list[_Terms]
    w: np.ndarray


def _mixed(
    pat: _Patterns, m: np.ndarray, S: np.ndarray, tau2: float, sig: np.ndarray, pi: np.ndarray
) -> _Mixed:
    """The terms of the model whose relevant genes change by the pattern ``sig[k]`` (times
    their own direction) with probability ``pi[k]``: each pattern's are those of the
    separations ``sig[k] * m`` (module docstring, "Directions"); patterns of weight 0 are
    left out."""
    keep = np.flatnonzero(pi > 0)
    sig, pi = sig[keep], pi[keep]
    parts = [pat.terms(k * m, S, tau2) for k in sig]
    if len(parts) == 1:
        t = parts[0]
        return _Mixed(t.llr, t.ld0, sig, parts, np.ones((1, t.llr.size)))
    lw = np.log(pi)[:, None] + np.stack([t.llr for t in parts])
    llr = logsumexp(lw, axis=0)
    return _Mixed(llr, parts[0].ld0, sig, parts, np.exp(lw - llr))


def _cut_groups(Z0: np.ndarray, seen: np.ndarray, censored: Censored) -> _Cut | None:
    """:class:`_Cut` of the censored entries (None: none)."""
    mask = np.asarray(censored.mask, bool) & ~seen
    if not mask.any():
        return None
    bits = 1 << np.arange(Z0.shape[1], dtype=np.int64)
    keys = (seen @ bits) + ((mask @ bits) << Z0.shape[1])
    groups, gi, li, unit, ugi, uli = [], [], [], [], [], []
    units = 0
    for k in np.unique(keys[mask.any(axis=1)]):
        rows = np.flatnonzero(keys == k)
        obs, cens = np.flatnonzero(seen[rows[0]]), np.flatnonzero(mask[rows[0]])
        alike = obs.size == 0  # no observed table: one unit stands for the group's genes
        first = rows[:1] if alike else rows
        groups.append((obs, cens, first, np.ascontiguousarray(Z0[first][:, obs])))
        for j in cens:
            gi.append(rows)
            li.append(np.full(rows.size, j))
            unit.append(units + (np.zeros(rows.size, np.int64) if alike else np.arange(rows.size)))
            ugi.append(first)
            uli.append(np.full(first.size, j))
            units += first.size
    ll, g = np.concatenate(uli), np.concatenate(gi)
    lo, hi = np.asarray(censored.lo, np.float64), np.asarray(censored.hi, np.float64)
    return _Cut(
        groups,
        g,
        np.concatenate(li),
        np.concatenate(unit),
        np.concatenate(ugi),
        lo[ll],
        hi[ll],
        np.flatnonzero(mask.any(axis=1)),
        mask.sum(axis=1)[g] == 1,
    )


def _one_cut_moments(
    cut: _Cut, t: _CutTerms, es: np.ndarray, esl: np.ndarray, el2: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_moments` with ``E[s lambda]`` and ``E[lambda^2]`` of the genes censored in one
    table given that table too (exact; the genes censored in several keep those given their
    observed tables: module docstring)."""
    one = cut.single
    if not one.any():
        return esl, el2
    g = cut.gi[one]
    w = 0.5 * (1.0 + es[g])
    esl, el2 = esl.copy(), el2.copy()
    esl[g] = w * t.u1[0, one] + (1.0 - w) * t.u1[1, one]
    el2[g] = w * t.uu1[0, one] + (1.0 - w) * t.uu1[1, one]
    return esl, el2


def _cut_relevant(
    cut: _Cut, t: _CutTerms, p: np.ndarray, es: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The censored entries' expected ``p z``, ``p z^2``, ``p u z`` and ``p u^2`` over the
    relevant class (weight ``p``: the posterior of relevance, times a direction pattern's) and
    the gene's direction (``E[s] = es``); the background's part is ``(1 - p)`` times the
    truncated moments ``t.z0``, ``t.zz0``."""
    pg, w = p[cut.gi], 0.5 * (1.0 + es[cut.gi])

    def mix(x: np.ndarray) -> np.ndarray:
        return pg * (w * x[0] + (1.0 - w) * x[1])

    return mix(t.z1), mix(t.zz1), mix(t.uz1), mix(t.uu1)


def _moments(t: _Terms, tau2: float) -> tuple[np.ndarray, np.ndarray]:
    """Given relevance: ``E[s lambda]`` and ``E[lambda^2]`` of the gene's direction s and
    effect size lambda ~ N(1, tau2) (module docstring)."""
    a, es = t.a, t.es
    h = 1.0 + tau2 * t.c
    esl = (es + tau2 * a) / h
    el2 = tau2 / h + (1.0 + 2.0 * tau2 * a * es + (tau2 * a) ** 2) / h**2
    return esl, el2


def _softplus_expit(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``log(1 + e^x)`` and ``expit(x)`` from one exponential."""
    u = np.exp(-np.abs(x))
    return np.maximum(x, 0.0) + np.log1p(u), np.where(x >= 0, 1.0, u) / (1.0 + u)


@dataclass(frozen=True)
class SignedFit:
    """A fit of the model of the module docstring.

    ``m`` (D,) signed separations; ``mu`` their sizes (the reliabilities); ``correlation`` S;
    ``spread`` tau2, the variance of the relevant genes' effect sizes relative to m;
    ``beta`` the prior's coefficients on the standardised covariates (``center``, ``scale``);
    per gene ``log_lr`` (the tables' evidence), ``prior_log_odds``, ``log_odds`` (their sum:
    the fused score) and ``posterior``; ``rho`` the mean prior; ``log_likelihood`` the full
    log-likelihood (nats); ``direction_weights`` the weights of the direction patterns
    (:func:`direction_patterns`; the first, every table the same way, the heaviest) and
    ``direction_test`` the likelihood-ratio statistic of the patterns against one and its
    degrees of freedom (module docstring, "Directions"; (0, 0): one pattern only)."""

    m: np.ndarray
    correlation: np.ndarray
    spread: float
    beta: np.ndarray
    center: np.ndarray
    scale: np.ndarray
    log_lr: np.ndarray
    prior_log_odds: np.ndarray
    rho: float
    log_likelihood: float
    iterations: int
    converged: bool
    direction_weights: np.ndarray
    direction_test: tuple[float, int] = (0.0, 0)

    @property
    def patterned(self) -> bool:
        """Whether the direction patterns replaced the one pattern (their likelihood-ratio
        test significant at :data:`DIRECTION_ALPHA`)."""
        stat, df = self.direction_test
        return df > 0 and float(chdtrc(df, stat)) <= DIRECTION_ALPHA

    @property
    def directions(self) -> np.ndarray:
        """(K, D) the direction patterns whose weights are :attr:`direction_weights`."""
        return direction_patterns(len(self.m))

    @property
    def agreement(self) -> np.ndarray:
        """(D, D) how often two tables' relevant genes change the same way as their
        separations' signs say, less how often not: ``sum_k pi_k sig_ki sig_kj`` (1: every
        relevant gene so, as the model of one pattern has it; 0: unrelated directions), over
        the patterns that change both tables; NaN for two tables no pattern of weight above 0
        changes both of (their relevant genes change in one table alone: the separations'
        signs say nothing of the pair, and reading them gave "every gene the same way" or "a
        contrast reversed" as they happened to fall)."""
        sig = self.directions
        both = (np.abs(sig) * self.direction_weights[:, None]).T @ np.abs(sig)
        agree = (sig * self.direction_weights[:, None]).T @ sig
        out = np.divide(agree, both, out=np.full_like(agree, np.nan), where=both > 0)
        np.fill_diagonal(out, 1.0)
        return out

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


class _Part(NamedTuple):
    """One direction pattern's share of the relevant class in the correlation step: its signs
    ``sig`` (D,), ``pt = p w E[u]`` and ``p2 = p w E[u^2]`` per gene (``u = s lambda``, ``p w``
    the posterior of relevance with this pattern) and its censored entries' expected ``p w z``,
    ``p w z^2``, ``p w u z``, ``p w u^2`` (:func:`_cut_relevant`; None without censoring)."""

    sig: np.ndarray
    pt: np.ndarray
    p2: np.ndarray
    cut: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None


def _correlation_step(
    pat: _Patterns,
    m: np.ndarray,
    parts: list[_Part],
    background: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """The pooled within-class correlation, pairwise over the genes both tables have:
    ``sum_i [(1 - p_i) z_i z_i' + sum_k p_i w_ik E((z_i - u sig_k m)(z_i - u sig_k m)')]`` with
    background genes around 0 and relevant ones of pattern k around ``u sig_k m`` (``u = s
    lambda``; each pattern's :class:`_Part`), each pair's variances over the same genes.
    ``background``: the censored entries' expected ``(1 - p) z`` and ``(1 - p) z^2`` under the
    background; a table then has them too, their relevant part the patterns'."""
    Z, seen = pat.Z0, pat.seen
    D = Z.shape[1]
    if D < 2:
        return np.eye(D)
    if background is not None:
        assert pat.cut is not None
        at = (pat.cut.gi, pat.cut.li)
        E, E2, W = Z.copy(), Z * Z, seen.copy()
        E[at] = background[0] + sum(part.cut[0] for part in parts if part.cut is not None)
        E2[at] = background[1] + sum(part.cut[1] for part in parts if part.cut is not None)
        W[at] = 1.0
        cross, own = E.T @ E, E2.T @ W
        for part in parts:
            assert part.cut is not None
            mk = part.sig * m
            U, T = Z * part.pt[:, None], part.p2[:, None] * seen
            U[at], T[at] = part.cut[2], part.cut[3]
            zt = U.T @ W
            tt = W.T @ (part.p2[:, None] * W)
            cross = cross - zt * mk[None, :] - zt.T * mk[:, None] + tt * np.outer(mk, mk)
            own = own - 2.0 * zt * mk[:, None] + (T.T @ W) * (mk * mk)[:, None]
        return _pairwise_correlation(cross, own, D)
    cross, own = pat.zz, pat.z2
    for part in parts:
        mk = part.sig * m
        if pat.complete:
            zt = np.repeat((Z.T @ part.pt)[:, None], D, axis=1)
            tt = np.full((D, D), float(part.p2.sum()))
        else:
            zt = Z.T @ (part.pt[:, None] * seen)  # [i, j]: sum of pt z_i over the genes j has
            tt = seen.T @ (part.p2[:, None] * seen)
        cross = cross - zt * mk[None, :] - zt.T * mk[:, None] + tt * np.outer(mk, mk)
        # table i's scatter over the genes j has too
        own = own - 2.0 * zt * mk[:, None] + tt * (mk * mk)[:, None]
    return _pairwise_correlation(cross, own, D)


def _pairwise_correlation(cross: np.ndarray, own: np.ndarray, D: int) -> np.ndarray:
    """The correlation matrix of the pairs' scatter ``cross`` and each table's ``own``
    scatter over the genes the other table has too."""
    iu = _offdiag(D)
    # each root taken apart: the product of two floored scatters (1e-300 each) underflows to
    # 0 and 0 / 0 was NaN when two tables' z-scores are all 0 over the genes they share
    r = cross[iu] / (np.sqrt(np.maximum(own[iu], 1e-300)) * np.sqrt(np.maximum(own.T[iu], 1e-300)))
    return _corr_matrix(np.clip(r, -1.0, 1.0), D, EIGEN_FLOOR)


def _top_start(pat: _Patterns, m0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A start (m, S) from the :data:`RHO_START` share of the genes of largest ``sum_l z_l^2``
    taken as the relevant class: each table's separation their mean z-score in the direction
    ``sign(m0_l)`` gives it, at least :data:`M_START` / 2; S the identity."""
    Z = pat.Z0
    n = max(int(round(RHO_START * Z.shape[0])), 1)
    top = np.argsort(-np.sum(Z * Z, axis=1), kind="stable")[:n]
    sign = np.where(m0 < 0, -1.0, 1.0)
    # each gene's direction: that of its sum of z-scores turned to the tables' signs
    s = np.where(Z[top] @ sign < 0, -1.0, 1.0)
    m = np.maximum((s[:, None] * Z[top]).mean(axis=0) * sign, M_START / 2.0) * sign
    return np.clip(m, -M_MAX, M_MAX), np.eye(Z.shape[1])


def _start(pat: _Patterns) -> np.ndarray:
    """Start separations: M_START, the tables' signs those that agree most with their z-scores'
    agreement ``C`` (their correlations about 0 over the genes both have): the largest ``s' C
    s``, from the signs of C's leading eigenvector, each sign then turned while that raises it
    (a table with the contrast reversed: negative); the first table's sign +. The signs were
    those of each table's agreement with the first table: a first table of noise gave the
    tables with signal random signs, and the EM, started with their relevant genes' directions
    in conflict, kept them so (six tables of 100 relevant genes in 2,000 beside six of noise
    listed first: ~800 calls at FDP 0.95, where the six alone call 108 at 0.08)."""
    zz = np.asarray(pat.zz, dtype=np.float64)
    d = np.sqrt(np.diag(zz))
    d = np.where(d > 0, d, 1.0)
    off = zz / np.outer(d, d)
    np.fill_diagonal(off, 0.0)
    s = np.where(np.linalg.eigh(off)[1][:, -1] < 0, -1.0, 1.0)
    for _ in range(s.size * s.size):  # each turn raises s' C s: it ends
        pull = s * (off @ s)
        k = int(np.argmin(pull))
        if pull[k] >= 0:
            break
        s[k] = -s[k]
    return M_START * s * s[0]


def fit_signed(
    Z: np.ndarray,
    X: np.ndarray,
    center: np.ndarray,
    scale: np.ndarray,
    *,
    max_prior: float = 0.5,
    start: SignedFit | None = None,
    rows: np.ndarray | None = None,
    spread: bool = True,
    tol: float = 1e-7,
    max_iter: int = 2000,
    censored: Censored | None = None,
) -> SignedFit:
    """Fit the model of the module docstring to the signed z-scores ``Z`` (M, D; NaN: the
    gene is not in the table) with the standardised prior design ``X`` (M, P + 1, intercept
    first; its standardisation ``center``, ``scale``). ``start``: a warm start; ``rows``: fit
    on these genes only (the per-gene outputs are still every gene's); ``spread``: fit the
    effect sizes' variance tau2 (else 0: every relevant gene shifted by exactly m);
    ``censored``: the genes below cut tables' cuts (:class:`Censored`; NaN in ``Z``)."""
    Zf = np.asarray(Z, dtype=np.float64)
    Xf = np.asarray(X, dtype=np.float64)
    Zr, Xr = (Zf, Xf) if rows is None else (Zf[rows], Xf[rows])
    pat = _Patterns(Zr, None if censored is None else censored.of(rows))
    design = PriorDesign(Xr, np.ones(Zr.shape[0]), max_prior)

    def every() -> tuple[_Patterns, PriorDesign]:
        """The patterns and design of every gene (the per-gene outputs are every gene's)."""
        if rows is None:
            return pat, design
        return _Patterns(Zf, censored), PriorDesign(Xf, np.ones(Zf.shape[0]), max_prior)

    if start is not None:  # a refit: the spread held at the start's
        m, S, beta, pi, ll, iterations, converged = _em(
            pat, design, start.m, start.correlation, start.beta, start.direction_weights,
            start.spread, tol, max_iter,
        )  # fmt: skip
        return _finish(
            *every(), m, S, beta, pi, start.spread, center, scale, iterations, converged,
            direction_test=start.direction_test,
        )  # fmt: skip
    beta0 = np.zeros(Xr.shape[1])
    beta0[0] = logit(RHO_START)
    K = len(direction_patterns(Zr.shape[1]))
    start_state = (_start(pat), np.eye(Zr.shape[1]), design._cap(beta0))
    same_way = np.zeros(K)
    same_way[0] = 1.0
    one, total = _profile(pat, design, (*start_state, same_way), spread, tol, max_iter)
    if np.all(np.abs(one[1]) <= NO_SEPARATION) and pat.complete:
        # no class: m = 0 is a fixed point of the EM (every gene's evidence 1), and a start can
        # fall into it where a class is there (three real-data studies, 200 planted genes: the
        # start of separation 2 ended at no class, one of 3 found the planted genes 228 nats
        # likelier). A second start from the genes the tables rank highest together
        m_top, S_top = _top_start(pat, start_state[0])
        top, steps = _profile(
            pat, design, (m_top, S_top, start_state[2], same_way), spread, tol, max_iter
        )
        total += steps
        if top[0] > one[0]:
            one = top
    test = (0.0, 0)
    _, m1, S1, beta1, _, _, _ = one
    # a table the one pattern gives (almost) no separation: its own changes, if it has any,
    # cannot show at that fit (its own pattern's separation is its m_l, ~0), so the patterns
    # are fitted from the one pattern's with that table's separation at M_START too
    faint = np.abs(m1) < M_START / 2.0
    starts = []
    if K > 1 and _patterns_could_help(pat, design, one):
        starts.append(m1)
    if K > 1 and faint.any() and not faint.all() and pat.complete:
        starts.append(np.where(faint, M_START * np.where(m1 < 0, -1.0, 1.0), m1))
    if starts:
        # the patterns against one (nested: the one-pattern fit is the patterns' with every
        # other weight 0), by the likelihood-ratio test -- chi-square with K - 1 degrees of
        # freedom, conservative where the weights sit on the boundary
        pi0 = np.full(K, (1.0 - SAME_WAY_START) / (K - 1))
        pi0[0] = SAME_WAY_START
        mixed = None
        for m_start in starts:
            fit, steps = _profile(pat, design, (m_start, S1, beta1, pi0), spread, tol, max_iter)
            total += steps
            if mixed is None or fit[0] > mixed[0]:
                mixed = fit
        assert mixed is not None
        # against the better of the one-pattern fits: the EM's, and the patterns' fit with its
        # heaviest pattern alone (with cut tables the EM stops short of the maximum, and a
        # patterns' fit of weights 0.999 / 0.001 was 187 nats above the one-pattern EM's)
        heaviest = np.zeros(K)
        _, mp, Sp, betap, pip, taup, _ = mixed
        heaviest[int(np.argmax(pip))] = 1.0
        alone = _evaluate(pat, design, mp, Sp, betap, heaviest, taup)[2]
        test = (max(2.0 * (mixed[0] - max(one[0], alone)), 0.0), K - 1)
        if chdtrc(test[1], test[0]) <= DIRECTION_ALPHA:
            one = mixed
    _, m, S, beta, pi, tau2, converged = one
    return _finish(
        *every(), m, S, beta, pi, tau2, center, scale, total, converged, direction_test=test
    )


def in_every_table(
    fit: SignedFit, Z: np.ndarray, censored: Censored | None = None
) -> np.ndarray | None:
    """Per gene, the probability that it changes in every table, given that it is relevant
    and its z-scores ``Z``: the posterior weight of the patterns that change in every table
    against the tables' own changes (module docstring, "Own changes"); None where the fit
    gives the tables' own changes no weight (every relevant gene changes in every table)."""
    n = _sign_patterns(len(fit.m))
    pi = np.asarray(fit.direction_weights)
    if len(pi) <= n or not (pi[n:] > 0).any():
        return None
    pat = _Patterns(np.asarray(Z, dtype=np.float64), censored)
    mx = _mixed(pat, fit.m, fit.correlation, fit.spread, fit.directions, pi)
    every = np.flatnonzero(pi > 0) < n  # (mx.w has the rows of the patterns kept)
    return mx.w[every].sum(axis=0)


def _patterns_could_help(pat: _Patterns, design: PriorDesign, one: tuple) -> bool:
    """Whether the likelihood rises, at the one-pattern fit ``one``, as a little weight moves
    from the same-way pattern to another: its derivative in that direction, ``sum_i p_i
    (LR_ik / LR_i0 - 1)`` (``p_i`` the gene's posterior of relevance, ``LR_ik`` its likelihood
    ratio under pattern k), positive for some k. The log-likelihood is concave in the
    patterns' weights, so where no derivative is positive the one pattern is their best
    weights at the fit's other parameters -- a stationary point of the patterns' model, where
    their EM from it would stay (tables whose changed genes all go one way: no second fit)."""
    _, m, S, beta, _, tau2, _ = one
    sig = direction_patterns(len(m))
    llr0 = pat.terms(m, S, tau2).llr
    p = expit(design.X @ beta + llr0) * pat.listed
    for k in sig[1:]:
        gain = np.exp(np.minimum(pat.terms(k * m, S, tau2).llr - llr0, 700.0)) - 1.0
        if float(p @ gain) > 0:
            return True
    return False


def _profile(
    pat: _Patterns,
    design: PriorDesign,
    state: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    spread: bool,
    tol: float,
    max_iter: int,
) -> tuple[tuple, int]:
    """The fit of largest likelihood over the spread's grid, from ``state`` = (m, S, beta,
    pi): tau2 profiled over :data:`TAU2_GRID` (EM moves tau2 slowly, and not at all from 0),
    each fit warm-started from the last, the grid stopped once the likelihood has fallen
    twice. ``(ll, m, S, beta, pi, tau2, converged)`` and the EM steps taken."""
    best: tuple | None = None
    falls = 0
    total = 0
    for tau2 in TAU2_GRID if spread else (0.0,):
        m, S, beta, pi, ll, iterations, converged = _em(
            pat, design, state[0], state[1], state[2], state[3], tau2, tol, max_iter
        )
        total += iterations
        state = (m, S, beta, pi)
        if best is None or ll > best[0]:
            best, falls = (ll, m, S, beta, pi, tau2, converged), 0
        else:
            falls += 1
            if falls == 2:
                break
    assert best is not None
    return best, total


def _prior_norm(eta: np.ndarray, design: PriorDesign) -> float:
    """``sum_i log(1 + e^eta_i)`` (one value times the genes for an intercept alone)."""
    if design.intercept_only:
        return float(np.logaddexp(0.0, eta[0])) * eta.shape[0]
    return float(np.sum(np.logaddexp(0.0, eta)))


def _em(
    pat: _Patterns,
    design: PriorDesign,
    m: np.ndarray,
    S: np.ndarray,
    beta: np.ndarray,
    pi: np.ndarray,
    tau2: float,
    tol: float,
    max_iter: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float, int, bool]:
    """EM for (m, S, beta, pi) at a fixed spread tau2 (``pi``: the weights of the direction
    patterns :func:`direction_patterns`), accelerated by SQUAREM (Varadhan & Roland 2008; an
    extrapolation that lowers the likelihood is replaced by the plain EM steps): the
    parameters, the log-likelihood at them, the EM steps and whether it converged."""
    D, K = len(m), len(pi)
    sig = direction_patterns(D)
    iu = _offdiag(D)

    def pack(m, S, beta, pi):
        return np.concatenate([m, beta, S[iu], pi])

    def unpack(theta):
        S = _corr_matrix(np.clip(theta[D + design.P : -K], -1.0, 1.0), D, EIGEN_FLOOR)
        m = np.clip(theta[:D], -M_MAX, M_MAX)
        return m, S, design._cap(theta[D : D + design.P]), _simplex(theta[-K:])

    def step(theta):
        """One EM update of theta and the log-likelihood at theta."""
        m, S, beta, pi = unpack(theta)
        mx = _mixed(pat, m, S, tau2, sig, pi)
        eta = design.X @ beta
        soft, p = _softplus_expit(eta + mx.llr)
        ll = mx.ld0 + float(np.sum(soft)) - _prior_norm(eta, design)
        m_new, S_new, pi_new = _m_step(pat, mx, p, tau2, pi)
        return pack(m_new, S_new, design._prior_step(beta, eta, p), pi_new), ll

    theta = pack(m, S, beta, pi)
    ll_old = -np.inf
    converged = False
    steps = 0
    # the likeliest point the steps have been at: the correlation step is no exact M-step
    # (a correlation matrix of unit diagonal; with cut tables not even the pooled scatter's),
    # and the steps can lower the likelihood and wander; a top-200 cut table beside a whole
    # one of unrelated directions ran 2,000 steps at each of two spreads and ended 670 nats
    # below where it started (11.6 s of 13.3 at 6,000 genes; 108 s at 20,000), so steps that
    # do not rise above it for EM_PATIENCE steps end the EM there
    best_ll, best, since = -np.inf, theta, 0
    while steps < max_iter:
        t1, ll = step(theta)
        t2, ll1 = step(t1)
        steps += 2
        since += 2
        for value, point in ((ll, theta), (ll1, t1)):
            if value > best_ll + tol * max(1.0, abs(best_ll)):
                since = 0
            if value > best_ll:
                best_ll, best = value, point
        if since >= EM_PATIENCE:
            theta, converged = best, True
            break
        r = t1 - theta
        v = t2 - t1 - r
        nv = float(np.linalg.norm(v))
        nxt, ll_next = t2, ll1
        if nv > 0:
            alpha = min(-float(np.linalg.norm(r)) / nv, -1.0)
            t3, ll3 = step(theta - 2.0 * alpha * r + alpha * alpha * v)
            steps += 1
            if ll3 >= ll1:
                nxt, ll_next = t3, ll3
        change = float(np.max(np.abs(nxt - theta)))
        theta = nxt
        if change < tol or abs(ll_next - ll_old) < tol * max(1.0, abs(ll_next)):
            converged = True
            break
        ll_old = ll_next
    m, S, beta, pi = unpack(theta)
    return m, S, beta, pi, _evaluate(pat, design, m, S, beta, pi, tau2)[2], steps, converged


def _simplex(x: np.ndarray) -> np.ndarray:
    """Pattern weights from ``x`` (an EM step's, or SQUAREM's extrapolation of them): negative
    ones and those below :data:`PATTERN_FLOOR` at 0, the rest summing to 1 (the first
    pattern's alone if none is left)."""
    pi = np.where(x >= PATTERN_FLOOR, x, 0.0)
    total = float(pi.sum())
    if total <= 0:
        pi = np.zeros_like(x)
        pi[0] = 1.0
        return pi
    return pi / total


def _m_step(
    pat: _Patterns, mx: _Mixed, p: np.ndarray, tau2: float, pi: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The EM update of ``(m, S, pi)`` from the posterior of relevance ``p`` and the genes'
    posteriors over the direction patterns (``mx``): ``m_l`` the regression of table l's z on
    ``sig_kl u`` over the relevant genes of every pattern k, S the pooled within-class
    correlation (:func:`_correlation_step`), ``pi_k`` the share of the relevant genes (of the
    genes some table has or a cut table's cut bounds) with pattern k."""
    D = pat.Z0.shape[1]
    num, den = np.zeros(D), np.zeros(D)
    parts: list[_Part] = []
    background = None
    for sig_k, t, w in zip(mx.sig, mx.parts, mx.w, strict=True):
        pk = p * w
        esl, el2 = _moments(t, tau2)
        cut = None
        if t.cut is not None:  # the censored entries' regressions of z on u
            assert pat.cut is not None
            esl, el2 = _one_cut_moments(pat.cut, t.cut, t.es, esl, el2)
            cut = _cut_relevant(pat.cut, t.cut, pk, t.es)
            if background is None:
                q = (1.0 - p)[pat.cut.gi]
                background = (q * t.cut.z0, q * t.cut.zz0)
        n_k, d_k = pat.Z0.T @ (pk * esl), pat.seen.T @ (pk * el2)
        if cut is not None:
            assert pat.cut is not None
            n_k = n_k + np.bincount(pat.cut.li, cut[2], minlength=D)
            d_k = d_k + np.bincount(pat.cut.li, cut[3], minlength=D)
        num, den = num + sig_k * n_k, den + sig_k * sig_k * d_k
        parts.append(_Part(sig_k, pk * esl, pk * el2, cut))
    m_new = np.clip(num / np.maximum(den, 1e-300), -M_MAX, M_MAX)
    S_new = _correlation_step(pat, m_new, parts, background)
    if len(pi) == 1:
        return m_new, S_new, pi
    shares = mx.w @ (p * pat.listed)
    total = float(shares.sum())
    if total <= 0:
        return m_new, S_new, pi
    pi_new = np.zeros_like(pi)
    pi_new[pi > 0] = shares / total
    return m_new, S_new, _simplex(pi_new)


def _evaluate(pat: _Patterns, design: PriorDesign, m, S, beta, pi, tau2: float):
    """The terms over the direction patterns, prior log-odds and log-likelihood of the
    parameters."""
    mx = _mixed(pat, m, S, tau2, direction_patterns(len(m)), pi)
    eta = design.X @ beta
    ll = mx.ld0 + float(np.sum(np.logaddexp(0.0, eta + mx.llr))) - _prior_norm(eta, design)
    return mx, eta, ll


def _canonical(m: np.ndarray, pi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The same model with its heaviest direction pattern first: ``m`` turned by that
    pattern's signs and the weights moved with it (``sig_k m`` is unchanged), so that a
    table whose relevant genes mostly change the other way has a negative separation, as in
    the model of one pattern."""
    n = _sign_patterns(len(m))
    k = int(np.argmax(pi[:n]))
    if k == 0:
        return m, pi
    sig = direction_patterns(len(m))[:n]
    turned = sig * sig[k]
    index = ((turned[:, 1:] < 0) * (1 << np.arange(len(m) - 1))).sum(axis=1)
    # a table's own change turned is the same pattern (its mirror image)
    return sig[k] * m, np.concatenate([pi[:n][index], pi[n:]])


def _finish(
    pat: _Patterns,
    design: PriorDesign,
    m,
    S,
    beta,
    pi,
    tau2,
    center,
    scale,
    iterations,
    converged,
    direction_test: tuple[float, int] = (0.0, 0),
) -> SignedFit:
    m, pi = _canonical(m, pi)
    mx, eta, ll = _evaluate(pat, design, m, S, beta, pi, tau2)
    return SignedFit(
        m=m,
        correlation=S,
        spread=tau2,
        beta=beta,
        center=center,
        scale=scale,
        log_lr=mx.llr,
        prior_log_odds=eta,
        rho=design.mean_prior(eta),
        log_likelihood=ll,
        iterations=int(iterations),
        converged=bool(converged),
        direction_weights=pi,
        direction_test=direction_test,
    )


#: Most tables whose Shapley shares (:func:`signed_weights`) are computed over every subset
#: (2^D separations); beyond, over :data:`SHAPLEY_PERMUTATIONS` random orders and their cyclic
#: rotations (every table at every position once per order: exact for exchangeable tables).
SHAPLEY_EXACT = 8
SHAPLEY_PERMUTATIONS = 64


def _separation(m: np.ndarray, S: np.ndarray, cols: list[int]) -> float:
    """``m_A' S_AA^-1 m_A`` of the tables ``cols`` (0 for none)."""
    if not cols:
        return 0.0
    mA = m[cols]
    return float(mA @ np.linalg.solve(S[np.ix_(cols, cols)], mA))


def signed_weights(
    m: np.ndarray, S: np.ndarray, direction_weights: np.ndarray | None = None
) -> np.ndarray:
    """Each table's Shapley share of the Mahalanobis separation ``c(A) = m_A' S_AA^-1 m_A``:
    its gain ``c(A + l) - c(A)`` averaged over the orders in which the tables can be added
    (the LMG / Shapley decomposition of a discriminant's separation, as of a regression's R^2;
    Gromping 2007), normalised to sum 1 (all 0 without separation). ``m_l^2`` for independent
    tables; tables that carry the same information (two tools' tables of one comparison,
    background correlation near 1) split it, where the share ``m_l (S^-1 m)_l`` of the
    discriminant gave the one of slightly larger separation everything and the other 0 (ALL
    B vs T, limma and Welch: 1.0 / 0.0). Never negative (``c`` never falls as tables are
    added). Exact over all subsets up to :data:`SHAPLEY_EXACT` tables, else over sampled
    orders (a fixed seed: the same weights every run). With ``direction_weights`` (the weights
    of :func:`direction_patterns`): the shares of each pattern's separations ``sig_k m``
    averaged over the patterns (Shapley values are linear in the separation), as the fused
    evidence reads each pattern's."""
    m = np.asarray(m, dtype=np.float64)
    S = np.asarray(S, dtype=np.float64)
    if direction_weights is None:
        phi = _shapley(m, S)
    else:
        sig = direction_patterns(m.size)
        phi = sum(
            (
                float(w) * _shapley(k * m, S)
                for k, w in zip(sig, direction_weights, strict=True)
                if w > 0
            ),
            np.zeros(m.size),
        )
    total = phi.sum()
    return phi / total if total > 0 else phi


def _shapley(m: np.ndarray, S: np.ndarray) -> np.ndarray:
    """Each table's Shapley share of the Mahalanobis separation (:func:`signed_weights`),
    unnormalised."""
    m = np.asarray(m, dtype=np.float64)
    S = np.asarray(S, dtype=np.float64)
    D = m.size
    phi = np.zeros(D)
    if D <= SHAPLEY_EXACT:
        masks = np.arange(1 << D)
        inside = (masks[:, None] >> np.arange(D)) & 1  # (2^D, D): which tables each subset has
        c = np.array([_separation(m, S, np.flatnonzero(row).tolist()) for row in inside])
        size = inside.sum(axis=1)
        fact = np.array([math.factorial(k) for k in range(D + 1)], dtype=np.float64)
        coef = fact[size] * fact[np.maximum(D - size - 1, 0)] / fact[D]
        for j in range(D):
            without = masks[inside[:, j] == 0]
            phi[j] = float(coef[without] @ (c[without | 1 << j] - c[without]))
    else:
        rng = np.random.default_rng(0)
        base = np.array([rng.permutation(D) for _ in range(SHAPLEY_PERMUTATIONS)])
        # every order's cyclic rotations: each table at each position once per order
        orders = np.concatenate([np.roll(base, r, axis=1) for r in range(D)])
        # the prefixes' separations from one Cholesky factor of S in each order: c(first k)
        # = the sum of the first k squares of L^-1 m
        L = np.linalg.cholesky(S[orders[:, :, None], orders[:, None, :]] + 1e-10 * np.eye(D))
        w = np.linalg.solve(L, m[orders][:, :, None])[:, :, 0]
        np.add.at(phi, orders.ravel(), (w**2).ravel())
        phi /= orders.shape[0]
    return np.maximum(phi, 0.0)  # rounding


def signed_test(
    fit: SignedFit, Z: np.ndarray, censored: Censored | None = None
) -> dict[str, float]:
    """Does a relevant class explain the tables more than their correlation alone? The
    likelihood ratio of the fit against ``N(0, S0)`` (S0: the tables' correlation over all
    genes, which is the maximum-likelihood null: every z is N(0, 1) under it), referred to
    chi-square with as many degrees of freedom as the class has parameters (the separations,
    the prior's coefficients, the spread and, where they were chosen, the direction patterns'
    weights; approximate: the null lies on the boundary). The same keys
    as :func:`kofs.aggregate.posterior.relevant_class_test`. With censored entries S0
    maximises the null likelihood numerically (:func:`_null_correlation`)."""
    pat = _Patterns(np.asarray(Z, dtype=np.float64), censored)
    D, M = Z.shape[1], Z.shape[0]
    none = np.zeros(D)
    if pat.cut is None:
        S0 = _correlation_step(pat, none, [_Part(np.ones(D), np.zeros(M), np.zeros(M))])
        ld0 = pat.terms(none, S0, 0.0).ld0
    else:
        ld0 = _null_correlation(pat, fit.correlation)

    free = D + len(fit.beta) + int(fit.spread > 0) + (fit.direction_test[1] if fit.patterned else 0)
    return likelihood_ratio_test(fit.log_likelihood - ld0, free)


def _null_correlation(pat: _Patterns, start: np.ndarray) -> float:
    """The largest background log-likelihood ``sum_i log N(z_i; 0, S)`` (with the censored
    entries' probabilities) over correlation matrices S, from ``start``. Not by EM: its
    correlation step (the censored entries' imputed scatter, normalised) is not an M-step, and
    where the relevant genes must be read as background it fell to a fixed point of lower
    likelihood (a cut study's few listed genes, extreme in the other studies too, made its
    correlation with them 0.99). S is parametrised by its Cholesky factor's rows, each
    ``(x, 1)`` normalised (any x gives a correlation matrix)."""
    D = start.shape[0]
    if D < 2:
        return pat.terms(np.zeros(D), np.eye(D), 0.0).ld0

    def nll(x: np.ndarray) -> float:
        return -pat.terms(np.zeros(D), _from_cholesky_rows(x, D), 0.0).ld0

    x0 = _cholesky_rows(start)
    res = minimize(nll, x0, method="L-BFGS-B")
    return -min(float(res.fun), nll(x0))


def _cholesky_rows(S: np.ndarray) -> np.ndarray:
    """A correlation matrix's free parameters: the below-diagonal entries of its Cholesky
    factor, each row divided by its diagonal entry (:func:`_from_cholesky_rows` inverts it)."""
    L = np.linalg.cholesky(S)
    return (L / np.diag(L)[:, None])[np.tril_indices(S.shape[0], -1)]


def _from_cholesky_rows(x: np.ndarray, D: int) -> np.ndarray:
    """The correlation matrix of the parameters ``x`` (:func:`_cholesky_rows`): the factor's
    rows ``(x, 1)`` normalised, so any ``x`` gives one (eigenvalues floored at
    :data:`EIGEN_FLOOR`)."""
    L = np.eye(D)
    L[np.tril_indices(D, -1)] = x
    L /= np.linalg.norm(L, axis=1)[:, None]
    return _corr_matrix(np.clip((L @ L.T)[_offdiag(D)], -1.0, 1.0), D, EIGEN_FLOOR)


def half_sample_refits(
    fit: SignedFit,
    Z: np.ndarray,
    X: np.ndarray,
    *,
    n: int,
    seed: int,
    max_prior: float,
    censored: Censored | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(B, D + P + 1) parameters ``(|m|, beta)`` and (B, D) weights of ``n`` refits on random
    halves of the genes, warm-started from ``fit`` (a delete-d jackknife with d = M / 2: their
    spread estimates the full fit's; :mod:`kofs.aggregate.uncertainty`)."""
    rng = np.random.default_rng(seed)
    M = Z.shape[0]
    halves = [np.sort(rng.choice(M, M // 2, replace=False)) for _ in range(n)]  # drawn first

    def refit(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        f = fit_signed(
            Z,
            X,
            fit.center,
            fit.scale,
            max_prior=max_prior,
            start=fit,
            rows=rows,
            tol=REFIT_TOL,
            censored=censored,
        )
        return np.concatenate([f.mu, f.beta]), signed_weights(
            f.m, f.correlation, f.direction_weights
        )

    # each refit depends on its half alone (pool.map keeps their order): large ones on two
    # threads, whose NumPy work runs without the GIL
    workers = 2 if (M // 2) * Z.shape[1] * n >= SPLIT_SIZE else 1
    with ThreadPoolExecutor(max_workers=workers) as pool:
        done = list(pool.map(refit, halves))
    return np.array([d[0] for d in done]), np.array([d[1] for d in done])


def integrated_posterior(
    fit: SignedFit, Z: np.ndarray, X: np.ndarray, cov: np.ndarray, *, draws: int, seed: int,
    max_prior: float, censored: Censored | None = None,
) -> np.ndarray:  # fmt: skip
    """Each gene's posterior averaged over draws of ``(m, beta)`` from ``N(theta, cov)`` (the
    refits' covariance; the signs of m and S held at the fit), as the rank model's
    integrated posterior."""
    D = len(fit.m)
    theta = np.concatenate([fit.mu, fit.beta])
    if draws <= 0 or not np.any(cov):
        return fit.posterior
    pat = _Patterns(np.asarray(Z, dtype=np.float64), censored)
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
        mx = _mixed(pat, m, fit.correlation, fit.spread, fit.directions, fit.direction_weights)
        total += expit(design.X @ beta + mx.llr)
    return total / draws


def polished(
    fit: SignedFit,
    Z: np.ndarray,
    X: np.ndarray,
    *,
    max_prior: float,
    censored: Censored | None,
) -> SignedFit:
    """The fit with ``(m, S, beta)`` taken to the likelihood's maximum numerically at its spread
    (L-BFGS-B from the fit; S by its Cholesky factor's normalised rows, as
    :func:`_null_correlation`): with censored tables the EM's correlation step is no M-step, and
    beside a whole table of the same samples a cut table's fitted correlation stopped at 0.24
    where 0.99 was 490 nats likelier (ALL B vs T, limma's top 200 beside its whole table). The
    fit itself when no better point is found. The direction patterns' weights are held at the
    fit's."""
    if censored is None:
        return fit
    pat = _Patterns(np.asarray(Z, dtype=np.float64), censored)
    if pat.cut is None or len(fit.m) < 2:
        return fit
    design = PriorDesign(np.asarray(X, dtype=np.float64), np.ones(Z.shape[0]), max_prior)
    D, P = len(fit.m), len(fit.beta)

    def unpack(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        S = _from_cholesky_rows(x[D + P :], D)
        return np.clip(x[:D], -M_MAX, M_MAX), S, design._cap(x[D : D + P])

    def nll(x: np.ndarray) -> float:
        ll = _evaluate(pat, design, *unpack(x), fit.direction_weights, fit.spread)[2]
        return -ll if np.isfinite(ll) else np.inf

    start = np.concatenate([fit.m, fit.beta, _cholesky_rows(fit.correlation)])
    res = minimize(nll, start, method="L-BFGS-B")
    if not np.isfinite(res.fun) or -float(res.fun) <= fit.log_likelihood:
        return fit
    m, S, beta = unpack(res.x)
    return _finish(pat, design, m, S, beta, fit.direction_weights, fit.spread, fit.center,
                   fit.scale, fit.iterations + int(res.nit), fit.converged)  # fmt: skip


def correlation_evidence(
    fit: SignedFit,
    Z: np.ndarray,
    X: np.ndarray,
    pair: tuple[int, int],
    bound: float,
    *,
    max_prior: float,
    censored: Censored | None,
) -> float:
    """How much likelier the two tables ``pair`` are read with their fitted correlation than
    with it held at ``bound`` (its sign kept): the log-likelihood ratio of the two tables alone
    (their marginal model; ``(m, beta)`` refitted at each, numerically, at the fit's spread), 0
    when the fitted correlation is within the bound. A cut table's few listed genes say little of
    its noise: five to seven beside an independent study's whole table gave 0.85."""
    cols = list(pair)
    S = np.asarray(fit.correlation)[np.ix_(cols, cols)]
    r_hat = float(S[0, 1])
    if abs(r_hat) <= bound:
        return 0.0
    Z2 = np.asarray(Z, dtype=np.float64)[:, cols]
    cen = None
    if censored is not None:
        cen = Censored(np.asarray(censored.mask)[:, cols], np.asarray(censored.lo)[cols],
                       np.asarray(censored.hi)[cols])  # fmt: skip
    pat = _Patterns(Z2, cen)
    design = PriorDesign(np.asarray(X, dtype=np.float64), np.ones(Z2.shape[0]), max_prior)
    P = len(fit.beta)
    # the pair's direction patterns (the same way, opposite ways, the first's or the second's
    # own change), as the fit's weights say; a pattern that changes neither is background
    # for the pair
    two = fit.directions[:, cols]
    pi2 = np.zeros(len(direction_patterns(2)))
    for k, (x, y) in enumerate(two):
        if x != 0 or y != 0:
            pi2[0 if x * y > 0 else 1 if x * y < 0 else 2 if y == 0 else 3] += (
                fit.direction_weights[k]
            )
    pi2 = pi2 / pi2.sum() if pi2.sum() > 0 else np.eye(len(pi2))[0]

    def best(r: float | None) -> tuple[float, float]:
        """The largest log-likelihood with the correlation at r (None: free) and the
        correlation there."""

        def unpack(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            rr = float(np.tanh(x[-1])) if r is None else r
            S = _corr_matrix(np.array([rr]), 2, EIGEN_FLOOR)
            return np.clip(x[:2], -M_MAX, M_MAX), S, design._cap(x[2 : 2 + P])

        def nll(x: np.ndarray) -> float:
            ll = _evaluate(pat, design, *unpack(x), pi2, fit.spread)[2]
            return -ll if np.isfinite(ll) else np.inf

        x0 = np.concatenate([fit.m[cols], fit.beta, [np.arctanh(np.clip(r_hat, -0.999, 0.999))]])
        if r is not None:
            x0 = x0[:-1]
        res = minimize(nll, x0, method="L-BFGS-B")
        x = res.x if float(res.fun) <= nll(x0) else x0
        return -nll(x), float(unpack(x)[1][0, 1])

    free, r_free = best(None)
    if abs(r_free) <= bound:  # the pair alone reads its correlation within the bound
        return 0.0
    return max(free - best(float(np.sign(r_free)) * bound)[0], 0.0)
