"""Data lists that are one source, found before and after the ``posterior`` fusion's fit
(:mod:`kofs.aggregate.relevance`): copies, near copies, and lists that share most of their noise.

* :func:`copy_groups`: lists that place every gene in the same interval are one ranking to the
  model (their agreement is not evidence): fitted once, their weight shared;
* :func:`near_copies` / :func:`near_copy_tables`: full lists, or whole signed tables, more alike
  than the model's correlation can be (``NEAR_COPY``): fitted as one (their mean normal score,
  or mean z-score);
* :func:`one_source` / :func:`noise_sources`: lists whose fitted correlation beyond the relevant
  genes is at least :data:`SHARED_NOISE` (several tools' analyses of one data set; signed
  tables at ``SIGNED_ONE_SOURCE`` of the signed fit's) are one source, for which one list
  stands; :func:`sources_named`, :func:`source_note` and the notices say so.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.special import ndtri

from kofs._compute.ranks import tie_averaged_ranks
from kofs.aggregate.binormal import POINT_WIDTH
from kofs.aggregate.censored import (
    INTERVAL_SHARE,
    bounds_correlation,
    interval_share,
    latent_bounds,
)
from kofs.aggregate.posterior import NEAR_COPY, PosteriorFit

#: Background correlation of two data lists from which a notice says they look computed from
#: one data set (independent studies: 0-0.1 in the planted benchmark and the expression-data
#: sweep; several tools on one data set: 0.6-0.94).
SHARED_NOISE = 0.5
#: Most pairs of lists given the censored estimate (:func:`one_source`): each costs 10-130 ms
#: (40 to 50,000 genes), so 1,000 top-k lists (500,000 pairs) ran for hours; beyond it the
#: fit's correlations alone are read (a notice says so).
MAX_CENSORED_PAIRS = 500


def noise_sources(S: np.ndarray, bound: float = SHARED_NOISE) -> list[list[int]]:
    """The data lists grouped into sources (each source its columns, ascending): lists whose
    fitted correlation ``S`` beyond the relevant genes is at least ``bound`` (rank lists:
    :data:`SHARED_NOISE`; signed tables: :data:`kofs.aggregate.relevance.SIGNED_ONE_SOURCE`) are one source (single
    linkage), every other list a source of its own."""
    group = _single_linkage(S >= bound)
    return [np.flatnonzero(group == g).tolist() for g in np.unique(group)]


#: The likelihood-ratio statistic above which two lists' p-values of the genes neither finds
#: anything in are correlated (one-sided 5 %: chi-square 1 df, 2.706).
NULL_REGION_LR = 2.706


def null_region_correlation(p1: np.ndarray, p2: np.ndarray) -> tuple[float, float, int]:
    """The correlation of two lists' noise read where neither finds anything: the normal
    scores ``Phi^-1(p)`` of the genes with ``0.5 < p < 1`` in both (changed genes have small
    p-values, so this quadrant is their null genes'), fitted as a bivariate normal truncated to
    the positive quadrant (its probability ``1/4 + arcsin(r) / 2 pi``) by maximum likelihood:
    ``(r, the likelihood-ratio statistic of r against 0 (0 for r <= 0), genes)``. Two tools'
    tables of one comparison read 0.47-0.99 here (ALL, limma / Welch / Mann-Whitney); two
    disjoint halves of the ALL samples, B vs T each, -0.08 to 0.00, where the tables' overall
    correlation is 0.35-0.63: the shared *effects* of a contrast that changes many genes."""
    from scipy.optimize import minimize_scalar

    ok = np.isfinite(p1) & np.isfinite(p2) & (p1 > 0.5) & (p2 > 0.5) & (p1 < 1) & (p2 < 1)
    n = int(ok.sum())
    if n < NEAR_COPY_MIN_GENES:
        return float("nan"), float("nan"), n
    u1, u2 = ndtri(p1[ok]), ndtri(p2[ok])
    s11, s22, s12 = float(u1 @ u1), float(u2 @ u2), float(u1 @ u2)

    def nll(r: float) -> float:
        q = 1.0 - r * r
        quadrant = 0.25 + np.arcsin(r) / (2.0 * np.pi)
        return 0.5 * n * np.log(q) + (s11 - 2.0 * r * s12 + s22) / (2.0 * q) + n * np.log(quadrant)

    r = float(minimize_scalar(nll, bounds=(-0.99, 0.999), method="bounded").x)
    return r, max(2.0 * (nll(0.0) - nll(r)), 0.0) if r > 0 else 0.0, n


def one_source(
    fit: PosteriorFit, lo: np.ndarray, hi: np.ndarray, null_p: np.ndarray | None = None
) -> tuple[list[list[int]], np.ndarray, int]:
    """The sources of the data lists of ``fit`` (made on ``lo``, ``hi``; :func:`noise_sources`),
    each with the list that stands for it first: its list of largest separation, a list read
    through its p-values before one that is not (its p-values say how many genes are beyond
    chance; one ranking alone cannot); and the correlation beyond the relevant genes they were
    found from (D, D).

    Several tools' analyses of one data set share most of their noise, and their tails agree
    more than the Gaussian copula of their correlation says, so fused as independent evidence
    their agreement reads as a relevant class (hundreds of calls where nothing changed) and
    their correlated noise as a contrast (the fused ranking below every list). One list of the
    source carries what it knows.

    The correlation is the fit's, but for a pair of which a list shows at least
    :data:`INTERVAL_SHARE` of the genes as intervals (a top-k list, a list lacking genes): the
    fit's interval means shrink its correlation with the share of the list's variance they
    keep, so there it is the censored estimate of :func:`kofs.aggregate.censored.pair_correlation`,
    soft-thresholded as the fit's correlations are (by the size noise reaches with family-wise
    probability 5 % over the pairs, in units of the estimate's standard error under no
    correlation). Beyond :data:`MAX_CENSORED_PAIRS` such pairs none gets it (the fit's
    correlations are read); the third value returned is then their number, else 0.

    ``null_p`` (M, D; NaN where a list has no p-value): a pair of calibrated lists whose
    p-values where neither finds anything are not correlated (:func:`null_region_correlation`,
    its likelihood-ratio test at :data:`NULL_REGION_LR`) shares no noise, whatever the fit's
    correlation, which independent studies of a contrast that changes many genes reach through
    their shared effects (two halves of the ALL samples, B vs T: 0.52-0.59, one half left out)."""
    cal = np.zeros(len(fit.mu), bool) if fit.calibrated is None else np.asarray(fit.calibrated)
    S = np.array(fit.correlation, dtype=np.float64)
    D = S.shape[0]
    wide = interval_share(lo, hi) >= INTERVAL_SHARE
    pairs = [(a, b) for a in range(D) for b in range(a + 1, D) if wide[a] or wide[b]]
    skipped = len(pairs) if len(pairs) > MAX_CENSORED_PAIRS else 0
    if pairs and not skipped:
        t = float(ndtri(1.0 - 0.025 / max(D * (D - 1) // 2, 1)))
        rho = np.where(cal, 0.0, fit.rho)
        bounds = {
            j: latent_bounds(lo[:, j], hi[:, j], float(fit.mu[j]), float(rho[j]))
            for j in sorted({j for pair in pairs for j in pair})
        }
        for a, b in pairs:
            r, se = bounds_correlation(bounds[a], bounds[b], fit.mu[[a, b]], fit.posterior)
            S[a, b] = S[b, a] = np.sign(r) * max(abs(r) - t * se, 0.0)
    if null_p is not None:
        for a in range(D):
            for b in range(a + 1, D):
                if abs(S[a, b]) < SHARED_NOISE or wide[a] or wide[b]:
                    continue
                _, stat, _ = null_region_correlation(null_p[:, a], null_p[:, b])
                if stat == stat and stat < NULL_REGION_LR:  # (NaN: too few genes to tell)
                    S[a, b] = S[b, a] = 0.0
    out = []
    for g in noise_sources(S):
        rep = max(g, key=lambda j: (bool(cal[j]), float(fit.mu[j]), -j))
        out.append([rep, *[j for j in g if j != rep]])
    return out, S, skipped


def sources_named(
    several: list[list[int]], data_cols: np.ndarray, names: Sequence[str], S: np.ndarray
) -> tuple[dict[int, int], list[list[str]], str]:
    """For groups of data lists that are one source (columns of ``data_cols``, the list that
    stands first): each list left out -> the list standing for it (as columns of the lists),
    the groups by name, and their notice, which gives each group's correlation ``S`` of largest
    size with its standing list (a table with its contrast reversed correlates < 0)."""
    source_of = {int(data_cols[j]): int(data_cols[g[0]]) for g in several for j in g[1:]}
    named = [[names[int(data_cols[j])] for j in g] for g in several]
    correlations = [float(max(S[g[0], g[1:]], key=abs)) for g in several]
    return source_of, named, _source_notice(named, correlations)


def source_note(standing: str) -> str:
    """The note of a list left out as one source with the list ``standing`` for it."""
    return (
        f"no say: shares most of its noise with {standing}, which stands for their source; "
        "left out of the fusion"
    )


def _source_notice(groups: list[list[str]], correlations: list[float]) -> str:
    """The notice of lists left out as one source with another (first of each group: the
    list kept)."""
    said = "; ".join(
        f"{name_list(g)} (correlation {r:.2f}): {g[0]} stands for "
        f"{'them' if len(g) > 2 else 'both'}"
        for g, r in zip(groups, correlations, strict=True)
    )
    out = [name for g in groups for name in g[1:]]
    left = f"{out[0]} is left out" if len(out) == 1 else f"{name_list(out)} are left out"
    return (
        "Some data lists share most of their noise beyond the relevant genes, as several tools' "
        f"analyses of one data set do, and are one source: {said}; {left} of the fusion "
        "(weight 0). Their agreement is not evidence: lists from independent data are."
    )


def shared_noise_notice(S: np.ndarray, names: list[str], calls: int) -> str:
    """The notice of a fusion with calls whose data lists share most of their noise (fitted
    correlation at least :data:`SHARED_NOISE`): the relevant-class test reads their agreement
    through a Gaussian copula, which rankings by two-sided statistics of one data set break
    (their tails agree more than it says), so the calls may be false (docs/aggregation.md,
    "Lists computed from expression data"). Empty when it does not apply. Informational: it
    changes no number."""
    D = len(names)
    if calls == 0 or D < 2:
        return ""
    pairs = [
        (float(S[a, b]), names[a], names[b])
        for a in range(D)
        for b in range(a + 1, D)
        if S[a, b] >= SHARED_NOISE
    ]
    if not pairs:
        return ""
    r, a, b = max(pairs)
    more = f" (and {len(pairs) - 1} more pairs)" if len(pairs) > 1 else ""
    return (
        f"{a} and {b}{more} share most of their noise (correlation {r:.2f} beyond the relevant "
        "genes): they look computed from one data set. Their agreement is weak evidence, and "
        f"the {calls} genes at q <= 0.10 may be mostly false -- several tools' rankings of one "
        "null data set were called by the hundreds. Fuse lists from independent data, give the "
        "tools' tables with p-values and fold changes (read as signed tables), or run kofs rank "
        "with labels on the data."
    )


def copy_groups(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """For each list (column), the first list that gives every gene the same interval."""
    D = lo.shape[1]
    first = np.arange(D)
    for j in range(1, D):
        for k in range(j):
            if (
                first[k] == k
                and np.array_equal(lo[:, j], lo[:, k])
                and np.array_equal(hi[:, j], hi[:, k])
            ):
                first[j] = k
                break
    return first


def near_copies(R, lo, hi, masked, held_out, copy_of, calibrated) -> np.ndarray:
    """For each list, the first list of its group of near copies (-1: none): full lists
    (every gene ranked, none masked or cross-fitted, at most a few ties, not calibrated: a
    mean of normal scores would lose their null) whose normal scores correlate at
    :data:`NEAR_COPY` or more with another's, grouped by single linkage; lists already merged
    as identical stay with their group."""
    D = lo.shape[1]
    out = np.full(D, -1)
    listed = ~np.isnan(R).all(axis=1)  # genes of the universe that no list has are no evidence
    full = ~np.isnan(R[listed]).any(axis=0) & ((hi - lo)[listed] <= POINT_WIDTH).all(axis=0)
    full &= ~np.asarray(calibrated, bool)
    if masked is not None:
        full &= ~np.asarray(masked, bool).any(axis=0)
    if held_out is not None:
        full &= np.isnan(held_out[0]).all(axis=0)
    cols = np.flatnonzero(full & (copy_of == np.arange(D)))
    if cols.size < 2:
        return out
    z = -ndtri(np.clip(0.5 * (lo[listed][:, cols] + hi[listed][:, cols]), 1e-12, 1 - 1e-12))
    r = np.corrcoef(z, rowvar=False)
    return _linked(r >= NEAR_COPY, cols, copy_of)


def _single_linkage(link: np.ndarray) -> np.ndarray:
    """Each item's group (the index of the group's first item) by single linkage over ``link``
    (n, n; bool, read above the diagonal)."""
    n = link.shape[0]
    group = np.arange(n)
    for a in range(n):
        for b in range(a + 1, n):
            if link[a, b] and group[a] != group[b]:
                group[group == group[b]] = group[a]
    return group


def _linked(link: np.ndarray, cols: np.ndarray, copy_of: np.ndarray) -> np.ndarray:
    """For each of ``copy_of.size`` lists, the first list of its group (-1: alone): the lists
    ``cols`` grouped by single linkage over ``link`` (bool, one row and column per entry of
    ``cols``), each group named by its first list; identical copies (``copy_of``) follow their
    representative."""
    out = np.full(copy_of.size, -1)
    group = _single_linkage(link)
    for a in range(cols.size):
        members = np.flatnonzero(group == group[a])
        if members.size > 1:
            out[cols[a]] = cols[members[0]]
    for j in range(copy_of.size):
        if copy_of[j] != j and out[copy_of[j]] >= 0:
            out[j] = out[copy_of[j]]
    return out


#: Fewest genes two signed tables share for their correlation to make them near copies.
NEAR_COPY_MIN_GENES = 50


def near_copy_tables(
    Z: np.ndarray, whole: np.ndarray, copy_of: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """For each signed table, the first table of its group of near copies (-1: none), and its
    direction relative to that table (+-1): whole tables (none cut to its significant genes)
    whose z-scores ``Z`` (each read against its own null), over the genes both have (at least
    :data:`NEAR_COPY_MIN_GENES`), correlate at :data:`NEAR_COPY` or more in absolute value
    (the correlation of their normal scores, :func:`_rank_scores`: a tool's extreme z-scores
    do not decide it)
    (below -NEAR_COPY: one contrast given the other way round), grouped by single linkage as
    :func:`near_copies` groups rank lists; tables already merged as identical stay with
    their group.

    The signed model's correlation of the tables may come as close to 1 as ``EIGEN_FLOOR``
    (kofs.aggregate.signed): two tools' tables of one comparison are fitted at 0.9998, and the
    fused evidence ``m' S^-1 z`` then reads mostly the difference between their z-scores,
    which on real data grows with the effect (the t-to-z conversion, limma's moderation): a
    tool's artefact the model's constant correlation takes for signal (ALL BCR/ABL vs NEG,
    limma and Welch: 1,522 calls where each alone makes 183-235)."""
    D = Z.shape[1]
    out, orient = np.full(D, -1), np.ones(D)
    cols = np.flatnonzero(np.asarray(whole, bool) & (copy_of == np.arange(D)))
    if cols.size < 2:
        return out, orient
    block = Z[:, cols]
    r = np.eye(cols.size)
    if not np.isnan(block).any():  # every table has every gene: at once
        if block.shape[0] >= NEAR_COPY_MIN_GENES:
            with np.errstate(invalid="ignore", divide="ignore"):
                r = np.corrcoef(_rank_scores(block), rowvar=False)
            r = np.where(np.isfinite(r), r, 0.0)  # (a table of one z-score throughout)
    else:
        for a in range(cols.size):
            for b in range(a + 1, cols.size):
                r[a, b] = r[b, a] = _shared_rank_correlation(block[:, [a, b]])
    out = _linked(np.abs(r) >= NEAR_COPY, cols, copy_of)
    for a in range(cols.size):
        if out[cols[a]] >= 0:
            # its direction: through the chain of near copies that links it to the first
            # (|r| >= NEAR_COPY along it, so the sign is that of r on each step)
            members = np.flatnonzero(np.isin(cols, np.flatnonzero(out == out[cols[a]])))
            orient[cols[a]] = _chain_sign(r, members, int(np.searchsorted(members, a)))
    for j in range(D):  # identical copies follow their representative
        if copy_of[j] != j and out[copy_of[j]] >= 0:
            orient[j] = orient[copy_of[j]]
    return out, orient


def p_value_copies(P: np.ndarray) -> np.ndarray:
    """(D, D): for each pair of tables whose p-values ``P`` (M, D, as the tables give them;
    NaN: not listed) are a near copy's -- the normal scores of their ranks correlated at
    :data:`NEAR_COPY` or more over the genes both list -- that correlation, else 0. One test's
    p-values with directions that disagree (the direction column of another contrast) share
    their noise whatever their directions say; the signed model, whose relevant genes'
    directions may be unrelated between tables (:mod:`kofs.aggregate.signed`, "Directions"),
    reads such a pair's noise as uncorrelated, and the two fused as two tables counted one test
    twice. The p-values as given, not the z-scores read against each table's empirical null:
    two nulls' centres apart fold ``|z|`` near 0 differently (a table and 70 % of its genes
    with other directions: 0.979), and a table cut to its top genes is a copy over them too
    (its own top 200 with other directions, beside an independent study: FDP 0.45)."""
    D = P.shape[1]
    out = np.zeros((D, D))
    for a in range(D):
        for b in range(a + 1, D):
            r = _shared_rank_correlation(P[:, [a, b]])
            if r >= NEAR_COPY:
                out[a, b] = out[b, a] = r
    return out


def listed_copy(Z: np.ndarray) -> float:
    """How near a copy of each other two tables' z-scores ``Z`` (M, 2) are over the genes both
    list: the absolute correlation of their normal scores (:func:`_rank_scores`), 0 over fewer
    than :data:`NEAR_COPY_MIN_GENES`. A cut table and its own whole table: 1; two tools' tables
    of ALL B vs T over limma's top 200-1000: 0.82-0.98; two independent halves of its samples,
    one cut to its top 200: 0.83-0.88 (BCR/ABL vs NEG and ALL1/AF4 vs B: 0.50-0.70)."""
    return abs(_shared_rank_correlation(Z))


def _shared_rank_correlation(Z: np.ndarray) -> float:
    """The correlation of two columns' normal scores (:func:`_rank_scores`) over the genes
    both have; 0 over fewer than :data:`NEAR_COPY_MIN_GENES` or where one column is constant."""
    both = ~np.isnan(Z).any(axis=1)
    if both.sum() < NEAR_COPY_MIN_GENES:
        return 0.0
    x, y = _rank_scores(Z[both]).T
    if np.std(x) == 0 or np.std(y) == 0:
        return 0.0
    return float(np.corrcoef(x, y)[0, 1])


def _rank_scores(Z: np.ndarray) -> np.ndarray:
    """Each column's normal scores of its ranks (ties averaged): the z-scores as two tables'
    near-copy correlation reads them. A tool's p-values of 0 (an underflow: z 37) or of 1e-40
    where another's are 1e-6 are the same ranks; their z-scores, correlated as they are, made
    one extreme gene decide (a single p-value of 0 in one of two near copies: 0.99 -> 0.90,
    the pair fitted as two tables and their difference read as evidence, FDP 0.36)."""
    ranks = np.column_stack([tie_averaged_ranks(z) for z in Z.T])
    return ndtri((ranks - 0.5) / Z.shape[0])


def _chain_sign(r: np.ndarray, members: np.ndarray, k: int) -> float:
    """The sign linking member ``k`` of a single-linkage group to its first member: the
    product of the correlations' signs along a path of links ``|r| >= NEAR_COPY``."""
    sign = {0: 1.0}
    todo = [0]
    while todo:
        a = todo.pop()
        for b in range(members.size):
            if b not in sign and abs(r[members[a], members[b]]) >= NEAR_COPY:
                sign[b] = sign[a] * float(np.sign(r[members[a], members[b]]))
                todo.append(b)
    return sign.get(k, 1.0)


def name_list(items: list[str]) -> str:
    return ", ".join(items[:-1]) + " and " + items[-1]
