"""The ``posterior`` aggregator: posterior probability of relevance (the default fusion).

Data-driven lists (every list except those of a knowledge-only ranker; every list a user
brings) are the evidence; knowledge lists, known relevant genes and gene-level covariates are
the prior (:mod:`kofs.aggregate.posterior`, :mod:`kofs.aggregate.prior`). The registry adapter
below fits the model, attaches per-gene statistics (``posterior``, ``lfdr``, ``q_value``,
``data_posterior``) and the diagnostics (weights with intervals, each data list's AUC, the
prior's odds ratios, the agreement test and the relevant-class test) in plain words. Data
lists that are copies of each other (identical, or full lists more alike than the model's list
correlation can be) are fitted as one ranking and share its weight; whole signed tables (DE
tables with fold changes) whose z-scores correlate at ``NEAR_COPY`` or more are fitted as
one table, their mean z-score. Lists that share most of their noise (several tools' analyses
of one data set: rank lists by their fit's correlation, signed tables by the signed fit's,
:func:`_shared_noise`) are one source, for which one of them stands (these groupings:
:mod:`kofs.aggregate.sources`).
Lists given the wrong way round are found and left out by :mod:`kofs.aggregate.reversed`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any, NamedTuple

import numpy as np
from scipy.special import chdtrc, expit, log_ndtr, ndtr, ndtri, ndtri_exp, stdtrit

from kofs._compute.ranks import tie_averaged_ranks
from kofs.aggregate.empirical_null import list_nulls, recalibrated, signed_null
from kofs.aggregate.envelope import fit_envelope
from kofs.aggregate.intervals import TieBlocks, observation_intervals
from kofs.aggregate.posterior import (
    NEAR_COPY,
    NO_SEPARATION,
    P_RANGE,
    ClassNull,
    PosteriorFit,
    Prior,
    _standardise,
    correlation_correction,
    fit_posterior,
    q_values,
    relevant_class_test,
    separation_shares,
)
from kofs.aggregate.prior import knowledge_prior
from kofs.aggregate.reversed import (
    oriented,
    readable_reversed,
    reversed_copies,
    reversed_list,
)
from kofs.aggregate.signed import (
    DIRECTION_TABLES,
    Censored,
    SignedFit,
    correlation_evidence,
    fit_signed,
    half_sample_refits,
    in_every_table,
    integrated_posterior,
    polished,
    signed_test,
    signed_weights,
    signed_z,
)
from kofs.aggregate.sources import (
    MAX_CENSORED_PAIRS,
    copy_groups,
    listed_copy,
    name_list,
    near_copies,
    near_copy_tables,
    noise_sources,
    one_source,
    p_value_copies,
    shared_noise_notice,
    source_note,
    sources_named,
)
from kofs.aggregate.top_k_null import simulated_class_test, top_k_lists
from kofs.aggregate.uncertainty import (
    LITTLE_SAY,
    Halves,
    Resamples,
    agreement_test,
    half_sample_fits,
    integrated_lfdr,
    prepare_halves,
    tempered_fit,
    wald,
)
from kofs.registry import Param, aggregator

__all__ = ["posterior_aggregate"]

log = logging.getLogger(__name__)

#: Level below which the agreement test says the data lists share no signal.
AGREEMENT_ALPHA = 0.05
#: Parameter draws of the posteriors integrated over the parameters' error.
INTEGRATION_DRAWS = 30
#: Fewest genes with which half-sample refits run (a half of fewer than ten genes has no
#: sampling distribution to speak of; smaller fusions get no intervals).
RESAMPLE_MIN_GENES = 20
#: How the p-values of calibrated lists are read (the ``null`` parameter).
NULL_READINGS = ("auto", "empirical", "theoretical")
#: How the relevant-class test reads top-k data lists (kofs.aggregate.top_k_null).
TOP_K_NULLS = ("simulated", "independent")


def null_probability(p: float) -> float:
    """P(no shared signal | data) from the agreement test's p-value with prior odds 1 and the
    Sellke-Bayarri-Berger (2001) bound on the Bayes factor, ``B >= -e p log p`` (p < 1/e; 1
    above): the probability most favourable to a signal that the p-value allows."""
    p = float(min(max(p, 1e-300), 1.0))
    bound = -np.e * p * np.log(p) if p < 1 / np.e else 1.0
    return bound / (1.0 + bound)


def _odds_ratio_unit(prior: Prior, k: int, lists: set[str]) -> float:
    """The covariate change whose odds ratio is reported: for a knowledge list's position, a
    gene in its top 1 % against its median gene (normal scores 2.33 vs 0); for an indicator,
    0 -> 1; else one standard deviation."""
    x = np.asarray(prior.X[:, k], dtype=np.float64)
    if prior.names[k] in lists:
        return 2.3263478740408408
    if np.all(np.isin(x, (0.0, 1.0))):
        return 1.0
    return float(x.std()) or 1.0


#: The normal score of the floor of the p-values the model reads (``P_RANGE[0]``).
Z_FLOOR = float(-ndtri(P_RANGE[0]))


#: How far past the list's largest finite normal score an infinite statistic (log p = -inf:
#: an F of zero within-group variance, an infinite z) is placed: ahead of every finite one.
INFINITE_PAST = 1.0


def _p_of_one(
    lo: np.ndarray, raw: np.ndarray, known: np.ndarray, center: float, spread: float, up: bool
) -> np.ndarray:
    """A calibrated list's p-values of exactly 1 read as the interval their tie block spans:
    ``[1 - f, 1]`` (``f`` the share of the list's genes at 1; on the scale the list is read on,
    its null ``center``, ``spread``, ``up``). A p of 1 says only that the test found nothing
    (no counts, a gene filtered and set to 1, a constant gene's statistic); as a point it took
    the floor's normal score, -7.03, and genes at 1 in two independent tables (unexpressed in
    both) made their scores look alike: 100 such genes of 4,000 put two independent studies'
    correlation at 0.53-0.55, and one was left out as the other's source (74 calls where the
    two make 86-107). Under the null the block's genes lie anywhere in its span, which the
    interval says."""
    one = known & (raw >= 1.0)
    if not one.any():
        return lo
    f = float(one.sum()) / float(known.sum())
    start = recalibrated(np.array([1.0 - f]), center, spread, up)[0]
    return np.where(one, np.clip(start, *P_RANGE), lo)


def _past_floor(log_p: np.ndarray, known: np.ndarray) -> np.ndarray:
    """Each gene's upper normal score ``Q^-1(p)`` past :data:`Z_FLOOR`, from its log p-value
    (0 for p-values above the floor and unknown ones); an infinite statistic, which has no
    finite score, :data:`INFINITE_PAST` beyond the largest finite one, so that the list's
    order is kept."""
    out = np.zeros(log_p.shape)
    below = known & np.isfinite(log_p) & (log_p < np.log(P_RANGE[0]))
    if below.any():
        out[below] = np.maximum(-ndtri_exp(log_p[below]) - Z_FLOOR, 0.0)
    infinite = known & np.isneginf(log_p)
    if infinite.any():
        out[infinite] = out.max() + INFINITE_PAST
    return out


def _past_floor_terms(fit: PosteriorFit, past: np.ndarray) -> np.ndarray:
    """The fused log-odds that normal scores past the floor (``past``, M x D: in each
    calibrated data list) add to the floor's: a point's terms are linear in its normal score
    ``s`` (its own term ``v mu s - v mu^2 / 2``, its share of the correlation correction
    ``sqrt(v) g s``; :func:`kofs.aggregate.posterior.gene_terms`), so the gene's log-odds
    rise with list l's score at the slope ``v_l mu_l + sqrt(v_l) g_l``."""
    if not past.any():
        return np.zeros(past.shape[0])
    mu = np.asarray(fit.mu, dtype=np.float64)
    v = np.asarray(fit.tempering, dtype=np.float64)
    slope = v * mu
    if len(mu) > 1:
        sv, g, _ = correlation_correction(mu, fit.correlation, v)
        slope = slope + sv * g
    return past @ slope


def posterior_aggregate(
    R: np.ndarray,
    names: list[str],
    *,
    data_lists: np.ndarray | None = None,
    from_one_matrix: bool = False,
    relevant: np.ndarray | None = None,
    built_from: np.ndarray | None = None,
    held_out: tuple[np.ndarray, np.ndarray] | None = None,
    covered: np.ndarray | None = None,
    absent_missing: np.ndarray | None = None,
    covariates: Mapping[str, np.ndarray] | None = None,
    list_weights: np.ndarray | None = None,
    signal_test: Mapping[str, Any] | None = None,
    null_p: np.ndarray | None = None,
    null_log_p: np.ndarray | None = None,
    null_kinds: np.ndarray | None = None,
    effect_signs: np.ndarray | None = None,
    max_prior: float = 0.5,
    dependence: bool = True,
    n_bins: int = 512,
    envelope: bool = True,
    resamples: int = 20,
    null: str = "auto",
    top_k_null: str = "simulated",
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """Fit the posterior-relevance model on a rank matrix (module docstring).

    ``signal_test``: an outside test that the data lists have anything to find (its
    ``p_value``, and what it measured; ``kofs rank`` gives the sample-structure or the
    label-association test when every data list comes from a ranker,
    :mod:`kofs.pipeline.structure`): its no-signal probability joins those of the agreement and
    relevant-class tests.

    ``from_one_matrix``: every data list is a kofs ranker's, computed from one matrix (``kofs
    rank``): the lists are one data set's by design, and lists that share most of their noise
    are not reduced to one source (:func:`one_source`; else they are).

    ``top_k_null``: with top-k data lists (positions for fewer than half of the genes),
    ``"simulated"`` refers the relevant-class test to its distribution under the lists'
    latent correlation (:mod:`kofs.aggregate.top_k_null`: the noise top-k lists from one data
    set share is otherwise read as relevance), ``"independent"`` keeps the model's own
    reference (the lists independent given relevance). Not where the genes are the lists'
    union (no universe, and no list of every gene), nor with calibrated, masked or
    cross-fitted lists.

    ``envelope``: each rank list's evidence is the smaller of its binormal term and its
    decreasing-histogram relevant class's (:mod:`kofs.aggregate.envelope`); the weights stay
    the lists' shares under the binormal reliabilities.

    ``null_p`` (M, L): each gene's p-value under its list's known null (NaN: the list has
    none, or the gene no p-value). A data list with p-values is *calibrated*: the model reads
    its p-values, not its positions (:mod:`kofs.aggregate.binormal`), so that how many genes
    it finds beyond chance is learned from it, alone too (the two-groups model), each read
    against its null. ``null_log_p`` (M, L): their logarithms, computed in log space
    (:func:`kofs.aggregate.nulls.null_log_p_values`): genes whose p-values are below the
    model's floor (``P_RANGE``, 1e-300) keep their order through them (a point's terms are
    linear in its normal score, so the fused log-odds go on rising with it past the floor, as
    they do above it). ``null_kinds`` (L,): each list's kind of null (``"f"``, ``"normal"``,
    ``"p"``, :func:`kofs.aggregate.nulls.null_kinds`; None: every list ``"p"``). ``null``:
    ``"empirical"`` reads every calibrated list against its empirical null
    (:mod:`kofs.aggregate.empirical_null`), ``"theoretical"`` reads the p-values as they are,
    ``"auto"`` (the default) reads p-values brought in tables (``"p"``) against their empirical
    null and kofs's own statistics (the F test of the labels, Hotspot's z) against their
    theoretical one (docs/aggregation.md, "The empirical null").

    Returns the fused scores (posterior log-odds), the list weights and ``info`` (with
    ``statistics`` and ``diagnostics`` entries for the runner).
    """
    run = _Fusion(
        R,
        names,
        data_lists=data_lists,
        from_one_matrix=from_one_matrix,
        built_from=built_from,
        held_out=held_out,
        absent_missing=absent_missing,
        list_weights=list_weights,
        signal_test=signal_test,
        null_p=null_p,
        null_log_p=null_log_p,
        null_kinds=null_kinds,
        effect_signs=effect_signs,
        max_prior=max_prior,
        dependence=dependence,
        n_bins=n_bins,
        envelope=envelope,
        resamples=resamples,
        null=null,
        top_k_null=top_k_null,
        seed=seed,
    )
    # lists that are one ranking to the model, or near copies of each other: fitted as one
    run.merge_copies()
    run.prior = knowledge_prior(
        run.R,
        names,
        knowledge=~run.data,
        covered=covered,
        built_from=built_from,
        held_out=held_out,
        relevant=relevant,
        covariates=covariates,
    )
    # lists given the wrong way round: left out
    run.leave_out_reversed_copies()
    run.leave_out_reversed_list()
    # lists of one source (several tools' analyses of one data set): one stands for them
    run.leave_out_one_source()
    run.read_list_weights()
    if run.signed:
        run.signed_path()
    else:
        run.rank_path()
    return run.scores, run.weights, run.info()


class _Fusion:
    """One run of :func:`posterior_aggregate`: the prepared problem (the rank matrix, each
    calibrated list's p-values and empirical null, the signed tables' directions), the data
    lists still fused with their observation intervals, and the steps that reduce them (copies
    merged, lists given the wrong way round and lists of one source left out) and fit them
    (the signed tables' model, or the rank lists' beside the side thread's tasks).

    Its attributes are the function's state, named as its locals were: ``data_cols`` the data
    lists fused, ``Bd``, ``blocks``, ``lo``, ``hi`` their masks, tie blocks and observation
    intervals (:meth:`intervals`), ``notices`` and ``notes`` what the answer says."""

    def __init__(
        self,
        R: np.ndarray,
        names: list[str],
        *,
        data_lists: np.ndarray | None,
        from_one_matrix: bool,
        built_from: np.ndarray | None,
        held_out: tuple[np.ndarray, np.ndarray] | None,
        absent_missing: np.ndarray | None,
        list_weights: np.ndarray | None,
        signal_test: Mapping[str, Any] | None,
        null_p: np.ndarray | None,
        null_log_p: np.ndarray | None,
        null_kinds: np.ndarray | None,
        effect_signs: np.ndarray | None,
        max_prior: float,
        dependence: bool,
        n_bins: int,
        envelope: bool,
        resamples: int,
        null: str,
        top_k_null: str,
        seed: int,
    ) -> None:
        """The calibrated lists read against their nulls, and the data lists' intervals."""
        self.names = names
        self.from_one_matrix = from_one_matrix
        self.built_from = built_from
        self.held_out = held_out
        self.absent_missing = absent_missing
        self.list_weights = list_weights
        self.signal_test = signal_test
        self.null_log_p = null_log_p
        self.max_prior = max_prior
        self.dependence = dependence
        self.n_bins = n_bins
        self.envelope = envelope
        self.resamples = resamples
        self.top_k_null = top_k_null
        self.seed = seed
        self.fit_options: dict[str, Any] = {
            "max_prior": max_prior,
            "dependence": dependence,
            "n_bins": n_bins,
        }
        self.R = R = np.asarray(R, dtype=np.float64)
        self.M, self.L = M, L = R.shape
        data = np.ones(L, bool) if data_lists is None else np.asarray(data_lists, bool)
        self.notices: list[str] = []
        if not data.any():
            # nothing from the data: the knowledge lists are all there is, fused as evidence
            data = np.ones(L, bool)
            self.notices.append(
                "No list was computed from the data: the knowledge lists are fused as evidence "
                "of each other, so the answer says what is known, not what this experiment "
                "shows."
            )
        self.data = data
        self.every_data_col = np.flatnonzero(data)
        if effect_signs is not None and absent_missing is not None:
            signed_cols = data & ~np.isnan(np.asarray(effect_signs, np.float64)).all(axis=0)
            cut = ~np.asarray(absent_missing, bool) & np.isnan(R).any(axis=0)
            if signed_cols.any() and cut[signed_cols].all():
                # every signed table cut to its significant genes: the signed model would fit
                # its separations and correlations from a few listed genes each and genes
                # censored in every table (most), whose EM is slow and not exact
                # (kofs.aggregate.signed); its top-200 precision was the p-values' (ALL data,
                # bench_cut_tables.py --signed)
                effect_signs = None
                self.notices.append(
                    "Every table with effect directions is cut to its significant genes: they "
                    "are read through their p-values (the directions are read where a whole "
                    "table is fused beside the cut ones)."
                )
        self.effect_signs = effect_signs
        self.has_null = np.zeros(L, dtype=bool)
        # each calibrated list's empirical null (kofs.aggregate.empirical_null)
        self.center, self.spread = np.zeros(L), np.ones(L)
        kinds = np.full(L, "p", dtype=object) if null_kinds is None else np.asarray(null_kinds)
        self.up = kinds == "normal"
        self.emp = np.zeros(L, dtype=bool)  # the lists read against their empirical null
        if null_p is not None:
            null_p = np.asarray(null_p, dtype=np.float64)
            self.has_null = data & ~np.isnan(null_p).all(axis=0)
            # p-values brought in tables: their tools, samples and correlation are unseen;
            # kofs's own statistics: exact under their model, and checked on the samples they
            # came from
            self.emp = self.has_null & (null == "empirical" or (null == "auto" and kinds == "p"))
            if self.emp.any():
                self.center[self.emp], self.spread[self.emp] = list_nulls(
                    null_p[:, self.emp], self.up[self.emp]
                )
        self.null_p = null_p
        # each gene's normal score past the floor of its p-value in each calibrated list
        self.past_floor = np.zeros((M, L))
        self.data_cols = self.every_data_col
        self.Bd, self.blocks, (self.lo, self.hi) = self.intervals(self.every_data_col)
        self.prior: Prior
        # reversed_of: each list left out as given the wrong way round -> the list it is the
        # reverse of (-1: none, its own reverse fits the lists better)
        self.reversed_of: dict[int, int] = {}
        # source_of: each list left out as sharing most of its noise with another -> that
        # list; named: those sources by name, the list kept first
        self.source_of: dict[int, int] = {}
        self.named: list[list[str]] = []
        # the agreement tests' overlap tails (a test of the lists left after one is left out
        # reads its pairs' from the test of all; on the side thread, one test at a time)
        self.tails: dict[tuple[int, int, int, int], float] = {}
        self.prefit: PosteriorFit | None = None  # the untempered fit, when already made ...
        self.before: tuple | None = None  # side tasks of lists since left out
        # the relevant-class tests' null part of lists since left out: (part, lists, lo, hi)
        self.given: tuple[ClassNull, np.ndarray, np.ndarray, np.ndarray] | None = None
        self.known_test: dict[str, float] | None = None  # ... and its relevant-class test
        self.side: ThreadPoolExecutor | None = None
        # side tasks started for these lists
        self.early: tuple[np.ndarray, Any, Any] | None = None

    def held_out_of(self, cols: np.ndarray):
        held_out = self.held_out
        return None if held_out is None else (held_out[0][:, cols], held_out[1][:, cols])

    def intervals(self, cols: np.ndarray):
        """Lists ``cols``' masks, tie blocks and observation intervals (a calibrated list's
        p-values a point each); sets their normal scores past the floor (``past_floor``)."""
        R, absent_missing, null_p = self.R, self.absent_missing, self.null_p
        Bd = None if self.built_from is None else np.asarray(self.built_from, bool)[:, cols]
        if absent_missing is not None and np.any(np.asarray(absent_missing)[cols]):
            # a table lacks the genes its tool did not test: no information, not "below the list"
            gone = np.isnan(R[:, cols]) & np.asarray(absent_missing, bool)[cols]
            if gone.any():  # (a table of every gene masks nothing: no mask, as without it)
                Bd = gone if Bd is None else (Bd | gone)
        HOd = self.held_out_of(cols)
        blocks = TieBlocks.of(R[:, cols], Bd)  # each list sorted once (also for the refits)
        lo, hi = observation_intervals(R[:, cols], Bd, HOd, blocks=blocks)
        for k, j in enumerate(cols.tolist()):
            if self.has_null[
                j
            ]:  # its p-values: a point each; none (NaN), or masked: no information
                assert null_p is not None
                p = np.clip(
                    recalibrated(null_p[:, j], self.center[j], self.spread[j], self.up[j]),
                    *P_RANGE,
                )
                known = ~np.isnan(p)
                if Bd is not None:
                    known &= ~Bd[:, k]
                lo[:, k] = np.where(known, p, 0.0)
                hi[:, k] = np.where(known, p, 1.0)
                lo[:, k] = _p_of_one(
                    lo[:, k], null_p[:, j], known, self.center[j], self.spread[j], self.up[j]
                )
                below = np.isnan(R[:, j]) & (Bd is None or ~Bd[:, k])
                if below.any() and known.any():
                    # a gene the list lacks lies below it (a table cut to its best genes,
                    # named with top_k; a top-k Ranking): its p-value is above the largest one
                    # the list gives
                    lo[below, k] = float(np.max(p[known]))
                if self.null_log_p is not None and not self.emp[j]:
                    self.past_floor[:, j] = _past_floor(self.null_log_p[:, j], known)
        return Bd, blocks, (lo, hi)

    def use(self, cols: np.ndarray) -> None:
        """Fuse the data lists ``cols``: their intervals (:meth:`intervals`)."""
        self.data_cols = cols
        self.Bd, self.blocks, (self.lo, self.hi) = self.intervals(cols)

    def merge_copies(self) -> None:
        """Lists that place every gene in the same interval are one ranking to the model (their
        agreement is not evidence): fitted once, their weight shared; so are full lists more
        alike than the model's correlation can be (near copies): fitted as one ranking, their
        mean normal score (signed tables: :meth:`find_copies`)."""
        Zt, orient = self.find_copies()
        R, names, every_data_col = self.R, self.names, self.every_data_col
        lo, hi, null_p, effect_signs = self.lo, self.hi, self.null_p, self.effect_signs
        tables, identical, near = self.tables, self.identical, self.near
        self.copy_of = copy_of = np.where(near >= 0, near, identical)
        data_cols = every_data_col[np.unique(copy_of)]
        if data_cols.size < every_data_col.size:
            R = R.copy()
            for rep in np.unique(copy_of):
                same = every_data_col[copy_of == rep]
                if same.size == 1:
                    continue
                if tables and np.any(near[copy_of == rep] >= 0):
                    assert null_p is not None and effect_signs is not None
                    # one table: the mean of the distinct tables' z-scores (each read against
                    # its own null, turned the representative's way round), over the tables
                    # that have the gene; read against its own null below, as any table
                    one = (copy_of == rep) & (identical == np.arange(identical.size))
                    mean = _mean_z(Zt[:, one] * orient[one])
                    null_p, effect_signs = null_p.copy(), np.array(effect_signs, np.float64)
                    j = int(same[0])
                    null_p[:, j] = np.where(
                        np.isnan(mean), np.nan, 2.0 * ndtr(-np.abs(np.nan_to_num(mean)))
                    )
                    effect_signs[:, j] = np.sign(mean)
                    if self.null_log_p is not None:
                        self.null_log_p = np.array(self.null_log_p, np.float64)
                        self.null_log_p[:, j] = np.log(2.0) + log_ndtr(-np.abs(mean))
                    R[:, j] = _ranks_of(-np.abs(mean))
                    if self.emp[j]:
                        self.center[j], self.spread[j] = (
                            a[0] for a in list_nulls(null_p[:, [j]], self.up[[j]])
                        )
                    self.notices.append(
                        f"{name_list([names[j] for j in same])} give the genes almost the same "
                        f"z-scores (their signed z-scores correlated >= {NEAR_COPY:.2f}, more "
                        "alike than the signed model's correlation of the tables can tell apart: "
                        "it reads their small differences as evidence): they are fitted as one "
                        "table (their mean z-score) and share its weight."
                    )
                elif np.any(near[copy_of == rep] >= 0):
                    # the mean over the distinct rankings (an identical copy counts once)
                    one = (copy_of == rep) & (identical == np.arange(identical.size))
                    R[:, same[0]] = _mean_score_ranks(
                        R[:, every_data_col[one]], lo[:, one], hi[:, one]
                    )
                    self.notices.append(
                        f"{name_list([names[j] for j in same])} rank the genes almost "
                        f"identically (correlation of their normal scores >= {NEAR_COPY:.2f}, "
                        "more alike than the fusion's model of correlated lists can tell apart): "
                        "they are fitted as one ranking (their mean normal score) and share its "
                        "weight."
                    )
                else:
                    self.notices.append(
                        f"{name_list([names[j] for j in same])} rank the genes identically: they "
                        "are one ranking to the fusion, counted once, and share its weight."
                    )
            self.R, self.null_p, self.effect_signs = R, null_p, effect_signs
            self.use(data_cols)
        else:
            self.data_cols = data_cols

    def find_copies(self) -> tuple[Any, Any]:
        """The lists' copy groups (``identical``: the same interval for every gene; ``near``:
        near copies, -1 none). Signed tables (every data list a table with effect directions,
        no label weights: the signed model reads them, :meth:`signed_path`): tables giving
        every gene the same p-value but not the same direction are not copies; whole tables
        whose z-scores are more alike than the signed model can tell apart are one table
        (near_copy_tables): their z-scores read against their own nulls (``own_null``) and
        their orientations are returned for their mean (None, None: rank lists)."""
        R, every_data_col = self.R, self.every_data_col
        lo, hi, null_p, effect_signs = self.lo, self.hi, self.null_p, self.effect_signs
        Zt = orient = None
        signed_lists = (
            effect_signs is not None
            and self.list_weights is None
            and bool(self.has_null[every_data_col].all())
        )
        if signed_lists:
            assert effect_signs is not None
            # a table read without directions (its fold changes all 0, or no such column) whose
            # p-values are those of a table with directions is that table: it takes its
            # directions (else the two were merged as identical through their p-values, and the
            # signed model then fitted the remaining tables without merging their near copies)
            no_dir = np.isnan(np.asarray(effect_signs, np.float64)[:, every_data_col]).all(axis=0)
            if no_dir.any() and not no_dir.all():
                effect_signs = np.array(effect_signs, np.float64)
                same_p = copy_groups(lo, hi)
                for col in np.flatnonzero(no_dir).tolist():
                    like = np.flatnonzero((same_p == same_p[col]) & ~no_dir)
                    if like.size:
                        effect_signs[:, every_data_col[col]] = effect_signs[
                            :, every_data_col[like[0]]
                        ]
        tables = (
            signed_lists
            and not np.isnan(np.asarray(effect_signs)[:, every_data_col]).all(axis=0).any()
        )
        own_null: tuple[np.ndarray, np.ndarray] | None = None  # each table's, before merging
        if tables:
            assert null_p is not None and effect_signs is not None
            given_signs = np.sign(np.asarray(effect_signs, np.float64)[:, every_data_col])
            marks = np.where(np.isnan(given_signs), 9.0, given_signs)
            identical = copy_groups(np.vstack([lo, marks]), np.vstack([hi, marks]))
            Zt = signed_z(null_p[:, every_data_col], given_signs)
            own_null = (
                signed_null(Zt)
                if self.emp[every_data_col].all()
                else (np.zeros(Zt.shape[1]), np.ones(Zt.shape[1]))
            )
            Zt = (Zt - own_null[0]) / own_null[1]
            whole = ~np.isnan(R[:, every_data_col][~np.isnan(R).all(axis=1)]).any(axis=0)
            if self.absent_missing is not None:
                # a table lacking genes its tool did not test is whole (they are missing); one
                # cut to its significant genes is not
                lacks = np.isnan(R[:, every_data_col]).any(axis=0)
                whole |= lacks & np.asarray(self.absent_missing, bool)[every_data_col]
            if self.built_from is not None:
                whole &= ~np.asarray(self.built_from, bool)[:, every_data_col].any(axis=0)
            if self.held_out is not None:
                whole &= np.isnan(self.held_out[0][:, every_data_col]).all(axis=0)
            near, orient = near_copy_tables(Zt, whole, identical)
        else:
            identical = copy_groups(lo, hi)
            near = near_copies(
                R[:, every_data_col],
                lo,
                hi,
                self.Bd,
                self.held_out_of(every_data_col),
                identical,
                self.has_null[every_data_col],
            )
        self.effect_signs = effect_signs
        self.tables, self.own_null = tables, own_null
        self.identical, self.near = identical, near
        return Zt, orient

    def leave_out_reversed_copies(self) -> None:
        """Lists given also the wrong way round (the same ranking in both directions): the
        model (separations >= 0) cannot read both; the one whose direction fits the other lists
        worse is left out."""
        names, has_null = self.names, self.has_null
        lo, hi = self.lo, self.hi
        anti_pairs = [
            (int(self.data_cols[a]), int(self.data_cols[b])) for a, b in reversed_copies(lo, hi)
        ]
        for a, b in anti_pairs:
            # the earlier list, with the later one out, read as given and reversed (or the
            # later one, with the earlier out: only a list placing nearly every gene at a point
            # can be read reversed, reversed_list)
            full = readable_reversed(lo, hi)[np.searchsorted(self.data_cols, [a, b])]
            if not full.any():
                continue
            tried, other = (a, b) if full[0] else (b, a)
            cols = np.setdiff1d(self.data_cols, [other])
            _, _, (lo_t, hi_t) = self.intervals(cols)
            right = oriented(
                lo_t,
                hi_t,
                self.prior,
                has_null[cols],
                int(np.searchsorted(cols, tried)),
                **self.fit_options,
            )
            out, keep = (other, tried) if right else (tried, other)
            self.reversed_of[out] = keep
            self.notices.append(
                f"{names[out]} ranks the genes it shares with {names[keep]} in the opposite "
                f"order (positions correlated <= -{NEAR_COPY:.2f}): one of the two is ranked the "
                f"wrong way round. {names[keep]}'s direction fits the other lists better, and "
                f"{names[out]} is left out of the fusion (weight 0); give its direction if it is "
                "right."
            )
            log.warning("%s", self.notices[-1])  # a list left out: said on stderr too
            self.data_cols = np.setdiff1d(self.data_cols, [out])
        if self.reversed_of:
            self.use(self.data_cols)

    def side_tasks(
        self,
        pool: ThreadPoolExecutor,
        cols: np.ndarray,
        single: bool,
        before: tuple | None = None,
    ) -> tuple[Any, Any]:
        """The half-sample refits' data (None: no refits) and the agreement test, on the
        pool's thread: they depend on the ranks alone (not on the fit). ``before``: the side
        tasks started for other lists (``(lists, halves, agreement)``), whose halves, when
        they were made, give the lists both have their coding (:func:`_made_halves`)."""
        M, prior = self.M, self.prior
        halves = None
        if self.resamples > 0 and not single and M >= RESAMPLE_MIN_GENES:
            halves = pool.submit(
                lambda **kw: prepare_halves(reuse=_made_halves(before, cols), **kw),
                data_ranks=self.R[:, cols],
                prior=prior,
                masked=self.Bd,
                n=int(self.resamples),
                seed=self.seed,
                max_prior=self.max_prior,
                n_bins=self.n_bins,
                standardisation=_standardise(np.asarray(prior.X, np.float64), np.ones(M))[1:],
                calibrated=self.has_null[cols],
                blocks=self.blocks,
                intervals=(self.lo, self.hi),
                threads=1,  # beside the fit: one thread each
            )
        return halves, pool.submit(agreement_test, self.lo, self.hi, self.tails)

    def leave_out_reversed_list(self) -> None:
        """A list that leads the fit and whose reverse the lists explain better: given the
        wrong way round, left out (rank lists, three or more). The side tasks start first,
        beside the fit this test makes."""
        if not (self.effect_signs is None and self.data_cols.size >= 3):
            return
        names = self.names
        side = self.side = ThreadPoolExecutor(max_workers=1)
        try:
            self.early = (self.data_cols, *self.side_tasks(side, self.data_cols, False))
            flip, self.prefit, self.known_test = reversed_list(
                self.lo, self.hi, self.prior, self.has_null[self.data_cols], **self.fit_options
            )
            if flip is not None:
                prefit = self.prefit
                assert prefit is not None
                k, gains = flip
                j = int(self.data_cols[k])
                self.reversed_of[j] = -1
                self.notices.append(
                    f"{names[j]}, read the other way round, fits the lists better (the relevant "
                    f"class's full log-likelihood {gains[1]:.0f} nats above no class, against "
                    f"{gains[0]:.0f} as given): it is ranked the wrong way round (a p-value of the "
                    "opposite one-sided test, a score of the opposite sign) and is left out of the "
                    "fusion (weight 0). If it is right, the other lists run the other way."
                )
                log.warning("%s", self.notices[-1])
                # the class tests' null part of the lists as given: the kept lists' part of it
                # is theirs (ClassNull.subset; the intervals it was made on kept for its check)
                if prefit.class_null is not None:
                    self.given = (prefit.class_null, self.data_cols, self.lo, self.hi)
                self.use(np.setdiff1d(self.data_cols, [j]))
                self.known_test = None
                _cancel(self.early)  # (those tasks' lists were others)
                # the side tasks of the lists without it, beside the refit below
                self.early = (
                    self.data_cols,
                    *self.side_tasks(side, self.data_cols, False, self.early),
                )
                if prefit.mu[k] <= NO_SEPARATION:
                    # it had no say: the fit without it, from the fit with it
                    rest = np.delete(np.arange(prefit.mu.size), k)
                    self.prefit = fit_posterior(
                        self.lo,
                        self.hi,
                        self.prior,
                        calibrated=self.has_null[self.data_cols],
                        start=replace(
                            prefit,
                            mu=prefit.mu[rest],
                            correlation=prefit.correlation[np.ix_(rest, rest)],
                        ),
                        **self.fit_options,
                    )
                else:  # it led the fit: the fit of the others from the usual starts
                    self.prefit = None
        except BaseException as exc:
            _stop_side(side, exc)
            raise

    def all_signed(self, cols: np.ndarray) -> bool:
        """Whether every list of ``cols`` is a table of p-values with effect directions."""
        return (
            self.effect_signs is not None
            and bool(self.has_null[cols].all())
            and not np.isnan(np.asarray(self.effect_signs)[:, cols]).all(axis=0).any()
        )

    def leave_out_one_source(self) -> None:
        """Lists that share most of their noise (several tools' analyses of one data set) are
        one source, for which one of them stands (one_source); not lists of one matrix, nor
        lists with label weights, nor signed tables (:meth:`signed_path`)."""
        if (
            self.from_one_matrix
            or self.list_weights is not None
            or self.data_cols.size < 2
            or self.all_signed(self.data_cols)
        ):
            return
        try:
            if self.prefit is None and self.early is None:
                # the side tasks of these lists start first, beside the fit (as above)
                self.side = self.side or ThreadPoolExecutor(max_workers=1)
                self.early = (self.data_cols, *self.side_tasks(self.side, self.data_cols, False))
            base0 = self.prefit or fit_posterior(
                self.lo,
                self.hi,
                self.prior,
                calibrated=self.has_null[self.data_cols],
                **self.fit_options,
            )
            sources, noise, skipped = one_source(
                base0,
                self.lo,
                self.hi,
                None if self.null_p is None else self.null_p[:, self.data_cols],
            )
            if skipped:
                self.notices.append(
                    f"{skipped:,} pairs of lists include a top-k list or one lacking genes: "
                    f"beyond {MAX_CENSORED_PAIRS} their censored correlation is not estimated "
                    "(minutes to hours), so top-k lists that share most of their noise (one "
                    "data set's) are not found as one source and their overlap reads as "
                    "agreement"
                )
                log.warning("%s", self.notices[-1])
            if len(sources) < self.data_cols.size:
                several = [g for g in sources if len(g) > 1]
                self.source_of, self.named, notice = sources_named(
                    several, self.data_cols, self.names, noise
                )
                self.notices.append(notice)
                log.warning("%s", self.notices[-1])
                self.use(self.data_cols[sorted(g[0] for g in sources)])
                _cancel(self.early)
                self.before, self.early = self.early, None
                # the fit of the lists kept from the usual starts: as if given alone (a start
                # from the fit with the others can stay in the mode their shared noise made)
                self.known_test, self.prefit = None, None
            else:
                self.prefit = base0
        except BaseException as exc:
            if self.side is not None:
                _stop_side(self.side, exc)
            raise

    def read_list_weights(self) -> None:
        """The label weights of the lists fused (``v``), whether the signed model reads them,
        and the notes on the lists left out."""
        names, data_cols = self.names, self.data_cols
        self.v = None
        if self.list_weights is not None:
            lw = np.clip(np.asarray(self.list_weights, dtype=np.float64)[data_cols], 0.0, None)
            v = lw / lw.max() if lw.max() > 0 else np.ones(len(data_cols))
            # a calibrated list's evidence is already measured against its null (the labels' F
            # test): it is not tempered by how well its genes predict the labels
            self.v = np.where(self.has_null[data_cols], 1.0, v)
        self.D = len(data_cols)
        self.cal = self.has_null[data_cols]
        self.signed = self.v is None and self.all_signed(data_cols)
        if self.effect_signs is not None and not self.signed:
            self.notices.append(
                "Some lists are tables with effect directions, but not every data list is: the "
                "tables are read through their two-sided p-values alone (their directions are "
                "used only when every data list is such a table)."
            )
        self.notes: dict[str, str] = {
            names[j]: (
                f"no say: the reverse of {names[keep]}, left out of the fusion"
                if keep >= 0
                else "no say: ranked the wrong way round (its reverse fits the other lists "
                "better), left out of the fusion"
            )
            for j, keep in self.reversed_of.items()
        }
        self.notes.update({names[j]: source_note(names[r]) for j, r in self.source_of.items()})
        self.statistics: dict[str, np.ndarray] = {}
        self.beyond: dict[str, float] | None = None
        self.resampled: Resamples | None = None
        # the local fdr integrated over the refits' error
        self.integrated: np.ndarray | None = None
        self.empirical: dict[str, Any] | None = None
        self.fit: PosteriorFit | SignedFit
        self.robust: PosteriorFit | SignedFit

    def signed_inputs(self, cols: np.ndarray):
        """The genes below the cut tables' cuts (M, len(cols)) and the tables' nulls read
        already (None: none)."""
        # a gene a cut table lacks (absent below it, not missing) lies below its cut
        below = np.zeros((self.M, len(cols)), dtype=bool)
        if self.absent_missing is not None:
            below = np.isnan(self.R[:, cols]) & ~np.asarray(self.absent_missing, bool)[cols]
            if self.Bd is not None:
                below &= ~self.Bd
        known_null = None
        own_null, every_data_col = self.own_null, self.every_data_col
        if own_null is not None and self.emp[every_data_col].all():
            # each table's null, read above (a table standing for near copies: their mean,
            # read anew)
            at = np.searchsorted(every_data_col, cols)
            merged = np.isin(cols, every_data_col[self.near >= 0])
            known_null = (
                np.where(merged, np.nan, own_null[0][at]),
                np.where(merged, np.nan, own_null[1][at]),
            )
        return below, known_null

    def signed_sources(self, below, known_null) -> _SignedProblem | None:
        """The signed tables' problem (:func:`_signed_problem`), with the tables of one source
        left out (then None: the problem of the tables kept is made anew)."""
        null_p, effect_signs, data_cols = self.null_p, self.effect_signs, self.data_cols
        names = self.names
        assert null_p is not None and effect_signs is not None
        # Tables whose noise beyond the changed genes is mostly one noise (the fitted
        # correlation S at least SIGNED_ONE_SOURCE: several tools' tables of one data set; a
        # t-test and a Mann-Whitney test of the same samples correlate 0.94-0.97,
        # independent studies 0-0.1) are one source, as rank lists are (one_source): the
        # model's constant S is not their shared noise, whose tools disagree more the larger
        # the effect, and the fused evidence m' S^-1 z then reads that disagreement as signal
        # (ALL BCR/ABL vs NEG, Welch and Mann-Whitney: 292 calls, each alone 183 / 261).
        # One table stands for the source: a full table before a cut one or one lacking
        # genes (it ranks every gene), then the one of largest separation
        prepared = _signed_problem(
            null_p[:, data_cols],
            np.asarray(effect_signs)[:, data_cols],
            self.prior,
            below=below,
            max_prior=self.max_prior,
            empirical_null=bool(self.emp[data_cols].all()),
            known_null=known_null,
        )
        pre = prepared.fit
        noise = pre.correlation
        if prepared.censored is not None:
            # (a cut table's: at the likelihood's maximum, where near copies show it)
            noise = _cut_noise(prepared, max_prior=self.max_prior)
        # one test's p-values given with directions that disagree: one source
        copies = p_value_copies(null_p[:, data_cols])
        noise = np.where(copies > np.abs(noise), copies, noise)
        groups = [
            g
            for g in noise_sources(
                _shared_noise(prepared, null_p[:, data_cols], noise), SIGNED_ONE_SOURCE
            )
            if len(g) > 1
        ]
        if not groups:
            return prepared
        cut = below.any(axis=0)
        # (a table that lacks more than a tenth of the genes another of its source
        # has -- a tool that filtered them, NA p-values -- is not full either: one
        # filtered to 60 % stood for its source by a larger separation and called 64
        # genes where the full table calls 103)
        has = (~np.isnan(prepared.Z)).sum(axis=0)

        def order(g: list[int]) -> list[int]:
            most = max(int(has[j]) for j in g)
            return sorted(
                g,
                key=lambda j: (
                    bool(cut[j]),
                    bool(has[j] < 0.9 * most),
                    -float(pre.mu[j]),
                    j,
                ),
            )

        several = [order(g) for g in groups]
        self.source_of, self.named, notice = sources_named(several, data_cols, names, noise)
        self.notices.append(notice)
        log.warning("%s", self.notices[-1])
        self.notes.update({names[j]: source_note(names[r]) for j, r in self.source_of.items()})
        self.use(
            np.array(
                [c for c in data_cols.tolist() if c not in self.source_of], dtype=data_cols.dtype
            )
        )
        self.D = len(self.data_cols)
        self.cal = self.has_null[self.data_cols]
        return None

    def signed_path(self) -> None:
        """The fusion of signed tables (every data list a table of two-sided p-values with its
        effect directions, :func:`_signed_answer`)."""
        null_p, effect_signs, names = self.null_p, self.effect_signs, self.names
        assert null_p is not None and effect_signs is not None
        self.single = False
        below, known_null = self.signed_inputs(self.data_cols)
        prepared = None
        if not self.from_one_matrix and self.D >= 2:
            prepared = self.signed_sources(below, known_null)
            if prepared is None:
                below, known_null = self.signed_inputs(self.data_cols)
        data_cols = self.data_cols
        self.test = agreement_test(self.lo, self.hi)
        fit, scores, weights, statistics, resampled, beyond, (delta, sigma) = _signed_answer(
            null_p[:, data_cols],
            np.asarray(effect_signs)[:, data_cols],
            self.prior,
            data_cols,
            self.L,
            below=below,
            signal_test=self.signal_test,
            max_prior=self.max_prior,
            resamples=self.resamples,
            empirical_null=bool(self.emp[data_cols].all()),
            known_null=known_null,
            seed=self.seed,
            prepared=prepared,
        )
        self.fit, self.scores, self.weights, self.statistics = fit, scores, weights, statistics
        self.resampled, self.beyond = resampled, beyond
        signal_test = self.signal_test
        self.robust = fit
        self.no_class = bool(np.all(fit.mu <= NO_SEPARATION))
        if self.no_class:
            self.notices.append(
                "The fit finds no class of changed genes in the tables (every separation 0): the "
                "fused ranking is their mean signed z-score in absolute value, each table counting "
                "equally, and no gene's posterior is above its prior. "
                f"{_what_to_give(self.from_one_matrix, signal_test)} to learn which table to trust."
            )
        empirical = (
            None
            if not self.emp[data_cols].all()
            else {
                "lists": [names[j] for j in data_cols],
                "center": delta.tolist(),
                "spread": sigma.tolist(),
                "reading": "signed z-scores: a normal fitted to the middle of each table's z-scores",
            }
        )
        own_null, every_data_col = self.own_null, self.every_data_col
        if empirical is not None and own_null is not None and np.any(self.near >= 0):
            # near copies fitted as one table: each table's own null (their mean, read against
            # its own, is N(0, 1) within rounding)
            kept = np.isin(every_data_col[self.copy_of], data_cols)
            empirical.update(
                lists=[names[j] for j in every_data_col[kept]],
                center=own_null[0][kept].tolist(),
                spread=own_null[1][kept].tolist(),
            )
        self.empirical = empirical
        effect = _effect_on_calls(statistics["q_value"])
        if beyond["p_value"] > AGREEMENT_ALPHA:
            self.notices.append(
                f"The tables show no relevant genes beyond chance and their shared noise (a "
                f"class of changed genes does not explain their z-scores better than their "
                f"correlation alone, p = {beyond['p_value']:.2g}): {effect}."
            )
        if signal_test is not None and float(signal_test["p_value"]) > AGREEMENT_ALPHA:
            self.notices.append(_signal_notice(signal_test, effect))
        if not self.no_class and beyond["p_value"] <= AGREEMENT_ALPHA:
            # (where no relevant class stands out, the patterns' weights are fitted to noise)
            mixed = _directions_notice(fit, [names[j] for j in data_cols])
            if mixed:
                self.notices.append(mixed)
                log.warning("%s", mixed)

    def rank_path(self) -> None:
        """The fusion of rank lists and tables read through their p-values: the fit, beside
        the side thread's tasks (:meth:`fit_beside_side_tasks`), and the answer
        (:meth:`rank_answer`)."""
        data_cols, names = self.data_cols, self.names
        if self.emp[data_cols].any():
            read = data_cols[self.emp[data_cols]]
            self.empirical = {
                "lists": [names[j] for j in read],
                "center": self.center[read].tolist(),
                "spread": self.spread[read].tolist(),
                "reading": "p-values: a half-normal fitted to the middle of each list's folded "
                "z-scores Q^-1(p / 2) (a normal to its z-scores Q^-1(p) for a z-score read "
                "one-sided)",
            }
        # untempered: the reliabilities are learned from all the evidence. One ranking alone
        # carries no information on them (its positions are uniform under the model): no fit, the
        # parameters stay at their starts and are not reported. A calibrated list does: its
        # p-values show how many genes are relevant, and how far from the others
        self.single = self.D == 1 and not self.cal[0]
        # the half-sample refits' data and the agreement test depend on the ranks alone (not on
        # the fit): they are made on a second thread while the fit is solved; then the
        # envelope's fit and the relevant-class test run there while the refits are solved.
        # The tasks share
        # nothing (NumPy's large array operations run without the GIL; each result depends on
        # its own inputs alone)
        side = self.side = self.side or ThreadPoolExecutor(max_workers=1)
        try:
            fit, robust = self.fit_beside_side_tasks(side)
        except BaseException as exc:
            _stop_side(side, exc)
            raise
        else:
            # a task not started and no longer needed (the halves of a fit without a relevant
            # class) is cancelled; a running one is waited for
            side.shutdown(wait=True, cancel_futures=True)
        self.rank_answer(fit, robust)

    def fit_beside_side_tasks(self, side: ThreadPoolExecutor) -> tuple[PosteriorFit, PosteriorFit]:
        """The fit, its weights, the envelope's fit, the relevant-class test, the half-sample
        refits and the integrated posteriors (the side tasks on ``side``); returns the fit and
        the one whose evidence the envelope bounds (``robust``)."""
        lo, hi, prior, data_cols, names = self.lo, self.hi, self.prior, self.data_cols, self.names
        single, cal, D, L, v = self.single, self.cal, self.D, self.L, self.v
        max_prior, dependence, n_bins = self.max_prior, self.dependence, self.n_bins
        early = self.early
        if early is not None and np.array_equal(early[0], data_cols):
            halves, agreement = early[1], early[2]
        else:  # (a list left out since: those tasks' lists were others)
            halves, agreement = self.side_tasks(side, data_cols, single, early or self.before)
        base = self.prefit or fit_posterior(
            lo,
            hi,
            prior,
            max_prior=max_prior,
            dependence=dependence,
            n_bins=n_bins,
            max_iter=0 if single else 1000,
            calibrated=cal,
        )
        self.lone = None if single or v is not None else _lone_class(base, prior)
        if self.lone is not None:
            # the class rests on one ranking that nothing else can check: the fit with
            # every separation 0, of the same likelihood (_lone_class)
            base = fit_posterior(
                lo,
                hi,
                prior,
                start=replace(base, mu=np.zeros(D)),
                fixed_mu=True,
                max_prior=max_prior,
                dependence=dependence,
                n_bins=n_bins,
                calibrated=cal,
            )
        fit = base
        if v is not None and not single:
            fit = tempered_fit(base, lo, hi, prior, v, max_prior=max_prior, n_bins=n_bins)
        self.fit = fit
        # every separation 0: the fit finds no relevant class in the data lists (their
        # agreement is their correlation), every gene's evidence is 0 and the log-odds
        # would tie the genes (or order them by knowledge alone)
        self.no_class = no_class = not single and bool(np.all(fit.mu <= NO_SEPARATION))
        if single:
            weights = np.zeros(L)
            weights[data_cols[0]] = 1.0
        elif no_class:
            weights = np.zeros(L)
            weights[data_cols] = 1.0 / D
        else:
            weights = separation_shares(fit, prior, data_cols, names)
        self.weights = weights
        # the weights are the lists' shares under the fitted reliabilities; each gene's
        # evidence from a rank list is bounded by the list's nonparametric relevant class
        # (envelope)
        self.statistics = {}
        bounded = (
            None
            if single or no_class or not self.envelope
            else side.submit(fit_envelope, fit, lo, hi)
        )
        # top-k lists: the test's null by simulation (kofs.aggregate.top_k_null); not
        # when the genes are the lists' union (no universe given and no list of every
        # gene: each gene in some list, which lists cut from one universe would not
        # reproduce)
        self.partial = partial = top_k_lists(lo, hi)
        present = ~np.isnan(self.R[:, data_cols])
        union = not present.all(axis=0).any() and bool(present.any(axis=1).all())
        self.simulate = (
            self.top_k_null == "simulated"
            and bool(partial.any())
            and not union
            and not cal.any()
            and self.Bd is None
            and self.held_out is None
        )
        class_test = (
            None if single or base.relevant_class else side.submit(self.class_test_of, base)
        )
        if halves is not None and not no_class:
            self.resampled = half_sample_fits(
                fit,
                halves.result(),
                weights_of=lambda f, rows: separation_shares(f, prior, data_cols, names, rows),
            )
        self.robust = robust = fit if bounded is None else bounded.result()
        # the integrated posteriors while the side thread finishes the class test
        self.integrated = (
            None
            if self.resampled is None
            else integrated_lfdr(
                robust,
                lo,
                hi,
                prior,
                self.resampled.cov,
                draws=INTEGRATION_DRAWS,
                seed=self.seed,
                max_prior=max_prior,
                n_bins=n_bins,
            )
        )
        self.test = agreement.result()
        self.beyond = base.relevant_class if class_test is None else class_test.result()
        return fit, robust

    def class_test_of(self, fit0: PosteriorFit) -> dict[str, float]:
        """The relevant-class test of ``fit0`` (on the side thread): the one made with the
        reversed-list test when of that fit, its null part of the lists as given when one was
        left out, simulated for top-k lists."""
        lo, hi, data_cols, given = self.lo, self.hi, self.data_cols, self.given
        t = self.known_test if self.known_test is not None and fit0 is self.prefit else None
        if t is None:
            null = None
            if given is not None and np.isin(data_cols, given[1]).all():
                part, cols_before = given[0], given[1]
                null = part.subset(np.searchsorted(cols_before, data_cols), lo, hi)
            t = relevant_class_test(fit0, lo, hi, dependence=self.dependence, null=null)
        if self.simulate:
            options = {
                "max_prior": self.max_prior,
                "dependence": self.dependence,
                "n_bins": self.n_bins,
            }
            t = simulated_class_test(
                t, fit0, lo, hi, self.prior, fit_options=options, seed=self.seed
            )
        return t

    def rank_answer(self, fit: PosteriorFit, robust: PosteriorFit) -> None:
        """The fused scores, the per-gene statistics and the notices of the rank lists' fit
        (``fit``, ``robust``: :meth:`fit_beside_side_tasks`')."""
        lo, hi, data_cols, names, D = self.lo, self.hi, self.data_cols, self.names, self.D
        test, beyond = self.test, self.beyond
        from_one_matrix, signal_test, notices = self.from_one_matrix, self.signal_test, self.notices
        if self.single:
            # one list's positions say nothing about how many genes are relevant: its ranking is
            # the answer, without posterior probabilities
            self.scores = _normal_scores(lo[:, 0], hi[:, 0])
            notices.append(one_list_notice(names[data_cols[0]], from_one_matrix=from_one_matrix))
            return
        scores = robust.log_odds + _past_floor_terms(fit, self.past_floor[:, data_cols])
        if self.no_class:
            # the limit of the model's ranking as the separations go to 0 together: the data
            # lists' average normal score, each list counting equally (not the knowledge prior,
            # which would rank by knowledge alone)
            scores = _normal_scores(lo, hi).mean(axis=1)
            why = (
                "every separation 0: their agreement is what their correlation gives"
                if self.lone is None
                else f"the class the fit found rests on {names[data_cols[self.lone]]} alone, "
                "which no other list agrees with beyond their correlation, and one ranking's "
                "positions say nothing of how many of its genes are relevant: that class and "
                "none fit the lists equally well"
            )
            if D == 1:
                # one calibrated list: no agreement, no average, no other list to trust
                notices.append(
                    f"The fit finds no relevant class in {names[data_cols[0]]} (separation "
                    "0: its p-values are no further from their null than chance takes "
                    "them): the fused ranking is its order, and no gene's posterior is "
                    f"above its prior. {_what_to_give(from_one_matrix, signal_test)}."
                )
            else:
                notices.append(
                    f"The fit finds no relevant class in the data lists ({why}): the fused "
                    "ranking is their average normal score, each list counting equally, and "
                    "no gene's posterior is above its prior. "
                    f"{_what_to_give(from_one_matrix, signal_test)} to learn which list to "
                    "trust."
                )
        self.scores = scores
        # integrated over the parameters' error (the plug-in one without refits)
        lfdr = 1.0 - robust.posterior if self.integrated is None else self.integrated
        q = q_values(lfdr, scores)
        # the chance that the lists share no signal at all (then no gene can be told from the
        # others), or that their agreement is only their correlation (shared noise: lists
        # computed from one data set agree also where no gene is relevant): each test's p-value
        # turned into a posterior probability by the Sellke-Bayarri-Berger bound, the larger
        # kept; the posteriors are averaged over the two models (their order, the fused
        # ranking, does not change)
        assert beyond is not None  # the relevant-class test of every fit of several lists
        no_signal = null_probability(beyond["p_value"])
        if not self.cal.any():
            # with a calibrated list the relevant-class test is the likelihood ratio of its
            # p-values too (a class of genes beyond chance), which agreement need not show
            no_signal = max(no_signal, null_probability(test["p_value"]))
        if signal_test is not None:
            no_signal = max(no_signal, null_probability(float(signal_test["p_value"])))
        statistics = _with_no_signal(lfdr, q, no_signal, fit.rho, robust.list_terms.sum(axis=1))
        self.statistics = statistics
        effect = _effect_on_calls(statistics["q_value"])
        if test["p_value"] <= AGREEMENT_ALPHA and beyond["p_value"] > AGREEMENT_ALPHA:
            notices.append(
                f"The data lists agree with each other, but no more than lists sharing noise "
                f"would (a relevant class does not explain them better than their correlation "
                f"alone, p = {beyond['p_value']:.2g}): {effect}, and the ranking may follow "
                "noise the lists share (lists computed from one data set do). "
                f"{_what_to_give(from_one_matrix, signal_test)}, or a list from other data."
            )
        topk = _top_k_notice(
            self.partial, self.weights[data_cols], [names[j] for j in data_cols], self.simulate
        )
        if topk:
            notices.append(topk)
        if signal_test is None:
            called = int(np.sum(statistics["q_value"] <= 0.10))
            shared = shared_noise_notice(fit.correlation, [names[j] for j in data_cols], called)
            if shared:
                notices.append(shared)
        if signal_test is not None and float(signal_test["p_value"]) > AGREEMENT_ALPHA:
            notices.append(
                f"{_signal_notice(signal_test, effect)} "
                f"{_what_to_give(from_one_matrix, signal_test)}, or a list from other data."
            )
        if test["p_value"] > AGREEMENT_ALPHA and not self.cal.any():
            notices.append(
                f"The data lists agree with each other no more than independent random "
                f"rankings would (p = {test['p_value']:.2g}): there is no shared signal for the "
                "fusion to learn from, so read the weights and q-values as uninformative. Look "
                "at the lists one by one, or "
                f"{_lower_first(_what_to_give(from_one_matrix, signal_test))}."
            )

    def info(self) -> dict[str, Any]:
        """``info``: the fitted parameters, the per-gene statistics and the diagnostics (the
        tests, the lists' reliabilities and notes, the prior's effects, their intervals)."""
        single, statistics, fit, data_cols = self.single, self.statistics, self.fit, self.data_cols
        L, signal_test = self.L, self.signal_test
        if not single and signal_test is not None and "q_value" in statistics:
            floor = _signal_floor_notice(signal_test, float(fit.rho), statistics["q_value"])
            if floor:
                self.notices.append(floor)
        mu = np.full(L, np.nan)
        auc = np.full(L, np.nan)
        if not single:
            mu[data_cols] = fit.mu
            auc[data_cols] = fit.auc
        left_out = np.array(sorted({**self.reversed_of, **self.source_of}), dtype=np.int64)
        mu[left_out], auc[left_out] = 0.0, 0.5
        temp = np.full(L, np.nan)
        temp[data_cols] = fit.tempering
        diag = self.diagnostics()
        reliability = self.reliability_and_notes()
        prior_rows = self.prior_effects(diag, reliability)
        self.share_with_copies(mu, auc, temp, diag, reliability)
        diag.update(
            list_reliability=reliability,
            list_notes=self.notes,
            notices=self.notices,
            prior_effects=prior_rows,
        )
        return {
            "mu": mu.tolist(),
            "auc": auc.tolist(),
            "tempering": temp.tolist(),
            "prior": None if single else float(fit.rho),
            "expected_relevant": float(self.robust.posterior.sum()) if not single else None,
            "log_likelihood": None if single else float(fit.log_likelihood),
            "iterations": int(fit.iterations),
            "converged": bool(fit.converged),
            "statistics": statistics,
            "_diagnostics": diag,
        }

    def diagnostics(self) -> dict[str, Any]:
        """The tests (agreement, relevant class, the outside signal test), the sources, the
        lists' correlation, the envelope and the empirical nulls."""
        test, beyond, signal_test = self.test, self.beyond, self.signal_test
        fit, robust, names, data_cols, hi = (
            self.fit,
            self.robust,
            self.names,
            self.data_cols,
            self.hi,
        )
        diag: dict[str, Any] = {
            "agreement_test": {
                **{k: test[k] for k in ("statistic", "sum_statistic", "p_value", "pairs", "tests")},
                # (one list, or one table left of a source: no pair to test)
                "no_signal_probability": None
                if self.single or self.D < 2
                else float(null_probability(test["p_value"])),
            },
            "relevant_class_test": None
            if beyond is None
            else {
                **beyond,
                "no_signal_probability": float(null_probability(beyond["p_value"])),
            },
            "sources": self.named or None,
            "signal_test": None
            if signal_test is None
            else {
                **dict(signal_test),
                "no_signal_probability": float(null_probability(float(signal_test["p_value"]))),
            },
            "list_correlation": {
                "lists": [names[j] for j in data_cols],
                "matrix": fit.correlation.tolist(),
            },
            "n_resamples": 0 if self.resampled is None else int(self.resamples),
            "envelope": _envelope_diagnostic(fit, robust, hi, [names[j] for j in data_cols])
            if isinstance(fit, PosteriorFit)
            and isinstance(robust, PosteriorFit)
            and robust.envelope is not None
            else None,
        }
        if self.empirical is not None:
            diag["empirical_null"] = self.empirical
        if isinstance(fit, SignedFit) and 2 <= self.D <= DIRECTION_TABLES:
            # (beyond DIRECTION_TABLES the one pattern is assumed, not learned: no share to give)
            diag["same_direction"] = {
                "lists": [names[j] for j in data_cols],
                # None: no relevant gene changes in both tables (each its own changes)
                "matrix": [
                    [None if np.isnan(x) else float(x) for x in row] for row in _same_direction(fit)
                ],
                "reading": "the share of the relevant genes changed in both tables whose "
                "z-scores have the same sign there (1: all, 0.5: unrelated directions, 0: a "
                "contrast reversed; None: no relevant gene changes in both)",
                "patterns_test": {
                    "statistic": float(fit.direction_test[0]),
                    "df": int(fit.direction_test[1]),
                    "p_value": float(chdtrc(fit.direction_test[1], fit.direction_test[0]))
                    if fit.direction_test[1]
                    else None,
                    "patterns": fit.patterned,
                },
            }
        return diag

    def reliability_and_notes(self) -> dict[str, str]:
        """Each fused list's reliability in words; its note (``notes``) when it has (little)
        say or is read through its p-values."""
        names, data_cols, fit, notes = self.names, self.data_cols, self.fit, self.notes
        no_class, v, weights = self.no_class, self.v, self.weights
        reliability: dict[str, str] = {}
        for k, j in enumerate(data_cols):
            if self.single:
                reliability[names[j]] = "not learned: a single ranking cannot show its reliability"
                continue
            reliability[names[j]] = (
                f"ranks a relevant gene above a background gene with probability "
                f"{fit.auc[k]:.2f} (0.5 = chance)"
            )
            if fit.mu[k] <= NO_SEPARATION and not no_class:
                notes[names[j]] = (
                    "no say: it ranks the relevant genes no higher than the others (a random or "
                    "reversed list is fitted at chance)"
                )
            elif v is not None and v[k] < LITTLE_SAY:
                notes[names[j]] = "little say: it predicts the labels much worse than the best list"
            elif isinstance(fit, PosteriorFit) and not no_class and weights[j] < SAY_WEIGHT:
                explained = _explained_note(
                    fit, k, [names[c] for c in data_cols], weights[data_cols]
                )
                if explained:
                    notes[names[j]] = explained
            elif isinstance(fit, SignedFit) and not no_class:
                subtracted = _subtracted_note(
                    fit.m, fit.correlation, k, [names[c] for c in data_cols], weights[data_cols]
                )
                if subtracted:
                    notes[names[j]] = subtracted
            if self.cal[k]:
                against = "empirical" if self.emp[j] else "theoretical"
                read = (
                    f"read through its p-values, against their {against} null (calibrated: how "
                    "many genes it finds beyond chance is learned from it)"
                )
                if self.signed:
                    read = (
                        "read through its signed z-scores (two-sided p-values and effect "
                        "directions: the tables' shared noise and each gene's direction are "
                        f"modelled), against its {against} null"
                    )
                notes[names[j]] = f"{notes[names[j]]}; {read}" if names[j] in notes else read
        return reliability

    def prior_effects(
        self, diag: dict[str, Any], reliability: dict[str, str]
    ) -> list[dict[str, Any]]:
        """The prior's odds ratios (with the refits' intervals, also of the weights and
        separations, into ``diag``); a knowledge list's in words (``reliability``)."""
        prior, fit, names, L, resamples = self.prior, self.fit, self.names, self.L, self.resamples
        prior_rows: list[dict[str, Any]] = []
        if prior.X.shape[1] and not self.single:
            for k, name in enumerate(prior.names):
                unit = _odds_ratio_unit(prior, k, set(names))
                b = fit.beta[k + 1] / fit.scale[k] * unit
                prior_rows.append({"covariate": name, "log_odds_ratio": float(b), "unit": unit})
        resampled = self.resampled
        if resampled is not None:
            se_mu = resampled.se_mu
            mu_ci = np.full((L, 2), np.nan)
            mu_ci[self.data_cols] = wald(fit.mu, se_mu, 0.0, np.inf, df=int(resamples) - 1)
            auc_ci = ndtr(mu_ci / np.sqrt(2.0))
            diag.update(
                weight_ci=wald(self.weights, resampled.se_weights, 0.0, 1.0, df=int(resamples) - 1),
                weight_sd=resampled.se_weights,
                mu_ci=mu_ci,
                auc_ci=auc_ci,
            )
            se_b = resampled.se_beta
            t_crit = float(stdtrit(max(int(resamples) - 1, 1), 0.975))
            for k, row in enumerate(prior_rows):
                half = t_crit * se_b[k + 1] / fit.scale[k] * row["unit"]
                row["ci"] = (row["log_odds_ratio"] - half, row["log_odds_ratio"] + half)
        for row in prior_rows:
            covariate = str(row["covariate"])
            if covariate in names:
                ratio = float(np.exp(float(row["log_odds_ratio"])))
                reliability[covariate] = (
                    f"a gene in its top 1 % is {ratio:.2g} times as likely "
                    "to be relevant as its median gene (learned from the data evidence)"
                )
        return prior_rows

    def share_with_copies(
        self,
        mu: np.ndarray,
        auc: np.ndarray,
        temp: np.ndarray,
        diag: dict[str, Any],
        reliability: dict[str, str],
    ) -> None:
        """Lists fitted as one (identical, or near copies): each takes the parameters,
        intervals and reliability of the list standing for them, a share of its weight, and a
        note saying so (as does that list)."""
        names, notes, weights = self.names, self.notes, self.weights
        copy_of, every_data_col = self.copy_of, self.every_data_col
        for rep in np.unique(copy_of):
            same = every_data_col[copy_of == rep]
            if same.size == 1:
                continue
            r = same[0]
            for arr in (mu, auc, temp):
                arr[same] = arr[r]
            weights[same] = weights[r] / same.size
            if self.resampled is not None:
                for key in ("mu_ci", "auc_ci"):
                    diag[key][same] = diag[key][r]
                for key in ("weight_ci", "weight_sd"):
                    diag[key][same] = diag[key][r] / same.size
            near_group = bool(np.any(self.near[copy_of == rep] >= 0))
            # (signed tables: z-scores; rank lists: rankings)
            alike, by, one_as = (
                ("z-scores", "signed z-scores", "one table with {}, their mean z-score,")
                if self.tables
                else ("ranking", "normal scores", "one ranking with {}")
            )
            # a group left out of the fusion (one source with another list, or reversed): its
            # copies are too, and say so (they read only "its weight shared", beside weight 0)
            left_note = notes[names[r]] if r in self.source_of or r in self.reversed_of else None
            for j in same[1:]:
                if names[r] in reliability:
                    reliability[names[j]] = reliability[names[r]]
                copy_note = (
                    f"nearly the same {alike} as {names[r]} ({by} correlated >= "
                    f"{NEAR_COPY:.2f}): fitted as {one_as.format('it')} its weight shared"
                    if near_group
                    else f"the same ranking as {names[r]}: counted once with it, its weight shared"
                )
                notes[names[j]] = f"{left_note}; {copy_note}" if left_note else copy_note
            # the list standing for the group says so too (it read 'no say' beside a copy saying
            # that it shares its weight)
            others = [names[j] for j in same[1:]]
            them = others[0] if len(others) == 1 else name_list(others)
            it = "it" if len(others) == 1 else "them"
            own = (
                f"nearly the same {alike} as {them} ({by} correlated >= {NEAR_COPY:.2f}): "
                f"fitted as {one_as.format(it)} its weight shared"
                if near_group
                else f"the same ranking as {them}: counted once with {it}, its weight shared"
            )
            notes[names[r]] = f"{notes[names[r]]}; {own}" if names[r] in notes else own


#: Below this weight a list has (almost) no say (:data:`kofs.report.fusion.ZERO_WEIGHT`).
SAY_WEIGHT = 0.01
#: Correlations of the lists' scores (the fit's ``S``) named in a note on a list they explain.
NAMED_CORRELATION = 0.3


def _explained_note(fit: PosteriorFit, k: int, names: Sequence[str], weights: np.ndarray) -> str:
    """Why fitted list ``k`` has (almost) no say although it separates the relevant genes
    (``mu_k`` > 0), when the fit says so: its coefficient in the fused evidence (``S_v^-1 m``,
    the linear discriminant of the lists' scores, :func:`correlation_correction`) is <= 0, so
    given the lists its scores are correlated with it adds no evidence (it enters only to
    cancel the noise it shares with them). "" when that is not the reason."""
    D = len(names)
    if D < 2 or fit.mu[k] <= NO_SEPARATION:
        return ""
    _, g, m = correlation_correction(fit.mu, fit.correlation, fit.tempering)
    if float((g + m)[k]) > 0:
        return ""
    S = np.asarray(fit.correlation)
    others = sorted((i for i in range(D) if i != k), key=lambda i: -S[k, i])
    named = [i for i in others if S[k, i] >= NAMED_CORRELATION] or others[:1]
    heaviest = int(np.argmax(weights))
    said = ", ".join(f"{names[i]} ({S[k, i]:.2f})" for i in named)
    return (
        "no say: alone it separates the relevant genes, but its scores are correlated with "
        f"those of {said} (the fit's correlation of the lists' scores), and given them it adds "
        "no evidence: its coefficient in the fused evidence is not positive"
        + (
            f"; the weight goes to {names[heaviest]}"
            if heaviest != k and weights[heaviest] >= SAY_WEIGHT
            else ""
        )
    )


def _subtracted_note(
    m: np.ndarray,
    S: np.ndarray,
    k: int,
    names: Sequence[str],
    weights: np.ndarray | None = None,
) -> str:
    """The note of a signed table (``k``) that the fused evidence ``a = m' S^-1 z`` subtracts:
    it separates the relevant genes (``m_k != 0``) but its coefficient ``(S^-1 m)_k`` has the
    opposite sign, so given the tables its z-scores are correlated with the fusion reads the
    difference between them as evidence: noise cancelled where the model's correlation is
    right, the tools' disagreement where it is not (ALL BCR/ABL vs NEG, Welch beside
    Mann-Whitney, z-scores correlated 0.97, before such tables were one source,
    :func:`_shared_noise`; tables correlated 0.98 or more are fitted as one,
    :func:`near_copy_tables`; docs/aggregation.md, "Weights of tables of one comparison"). Its weight (a Shapley share of
    the separation) does not show it. With the tables' ``weights``: a table whose weight is
    mostly the noise it cancels (more than twice its share ``m_k^2 / m'm`` were the tables
    independent: a table with no signal sharing another's noise was given weight 0.49 beside
    one of AUC 0.98 given 0.014, its note silent) is named so. "" when neither is so."""
    D = len(names)
    if D < 2:
        return ""
    m = np.asarray(m, dtype=np.float64)
    coef = np.linalg.solve(np.asarray(S, dtype=np.float64), m)
    others = sorted((i for i in range(D) if i != k), key=lambda i: -abs(S[k, i]))
    named = [i for i in others if abs(S[k, i]) >= NAMED_CORRELATION] or others[:1]
    said = ", ".join(f"{names[i]} ({S[k, i]:.4g})" for i in named)
    if weights is not None and weights[k] * float(m @ m) > 2.0 * float(m[k]) ** 2:
        # its weight more than twice its share were the tables independent (m_k^2 / m'm):
        # the separation it adds is mostly the noise it cancels in the others
        return (
            f"cancels noise: most of its weight is not its own separation of the relevant genes "
            f"({abs(float(m[k])):.2g}) but the noise it cancels in the tables its z-scores are "
            f"correlated with, {said}: the fusion reads the difference "
            "between them as evidence (right if their shared noise is as the model has it: "
            "a control comparison of the same samples; compare the fused ranking with each "
            "table's)"
        )
    if abs(float(m[k])) <= NO_SEPARATION or float(m[k] * coef[k]) > 0:
        return ""
    return (
        "subtracted: alone it separates the relevant genes, but its z-scores are correlated with "
        f"those of {said}, and the fused evidence counts it with the opposite sign: the fusion "
        "reads the difference between the tables as evidence (right if their shared noise is as "
        "the model has it; two tools on the same samples can differ most where effects are "
        "large, and the fused ranking then follows their disagreement: compare it with each "
        "table's)"
    )


#: Narrowest half-width of a cut table's censored interval (its z-scores' scale).
MIN_CUT = 1e-3
#: A table whose p-values all stop at this or below holds its significant genes alone
#: (:func:`_shared_noise`; the bound at which an unnamed table is read as cut,
#: ``kofs.pipeline.user_lists.CUT_P``).
SELECTED_P = 0.5
#: Signed tables whose fitted noise correlation beyond the changed genes is at least this
#: (in absolute value) are one source (:func:`_shared_noise`). Higher than the rank lists'
#: :data:`SHARED_NOISE`: signed tables' shared noise is modelled (their copula is right), and
#: what breaks it is two tools' reading of the *same* samples, whose difference grows with the
#: effect (correlated 0.94-0.99 on ALL: Welch, limma, Mann-Whitney). Tables with real noise of
#: their own correlate less and were fused right as two: two contrasts sharing a control
#: group (n / (n + n_control), 0.5 for equal groups; 56-66 calls where each alone makes 25-54,
#: and one contrast dropped at 0.5), studies sharing half their samples (~0.5).
SIGNED_ONE_SOURCE = 0.8
#: Signed z-scores beyond this size are read on a log scale (:func:`_tail_compressed`).
Z_TAIL = 6.0


def _tail_compressed(z: np.ndarray) -> np.ndarray:
    """Signed z-scores with their tails beyond :data:`Z_TAIL` compressed, ``sign(z) (Z_TAIL +
    log(1 + |z| - Z_TAIL))``: the same order, the same values below it. The signed model's
    effects are normal (``lambda ~ N(1, tau2)``), and DE tables hold a few genes at p = 0 or
    1e-200 (z 30-38): six such genes in one table beside an independent study took the fit's
    separation and spread, and the other study's weight fell from ~0.5 to 0.01-0.03 (calls
    134-161 -> 6-21, four seeds; so read, 0.43-0.47 and 138-173). A null gene reaches |z| = 6
    with probability 2e-9, so nothing below it is read otherwise and no gene the null could
    give is moved; above it a gene is beyond chance in any table, and only how far it lies is
    compressed."""
    a = np.abs(z)
    return np.where(a > Z_TAIL, np.sign(z) * (Z_TAIL + np.log1p(np.maximum(a - Z_TAIL, 0.0))), z)


class _SignedProblem(NamedTuple):
    """Signed tables read for :func:`fit_signed`: their z-scores ``Z`` centred and scaled by
    their nulls ``delta``, ``sigma``, the standardised prior design ``X`` (``center``,
    ``scale``), the genes censored below cut tables' cuts, and the fit."""

    Z: np.ndarray
    X: np.ndarray
    center: np.ndarray
    scale: np.ndarray
    censored: Censored | None
    delta: np.ndarray
    sigma: np.ndarray
    fit: SignedFit


def _signed_problem(
    null_p: np.ndarray,
    signs: np.ndarray,
    prior: Prior,
    *,
    below: np.ndarray,
    max_prior: float,
    empirical_null: bool,
    known_null: tuple[np.ndarray, np.ndarray] | None,
) -> _SignedProblem:
    """The signed tables' z-scores, each read against its empirical null, and their fit
    (:func:`_signed_answer`'s arguments)."""
    Z = signed_z(null_p, signs)  # NaN where a table has no p-value or no direction
    D = Z.shape[1]
    X, center, scale = _standardise(np.asarray(prior.X, dtype=np.float64), None)
    # each table read against its empirical null (the refits and draws below read these too).
    # A cut table's z-scores lack their middle: signed_null reads no centre there (0) and its
    # spread over the range it lists when that is wide enough, else (fewer than MIN_GENES
    # genes: a cut table's usual few) the theoretical null N(0, 1)
    delta, sigma = np.zeros(D), np.ones(D)
    if empirical_null:
        if known_null is None:
            delta, sigma = signed_null(Z)
        else:
            delta, sigma = np.array(known_null[0]), np.array(known_null[1])
            todo = np.isnan(delta) | np.isnan(sigma)
            if todo.any():
                delta[todo], sigma[todo] = signed_null(Z[:, todo])
    Z = _tail_compressed((Z - delta) / sigma)
    censored = None
    if below.any():
        # the cut's z on the table's scale: |z| <= Q^-1(p_max / 2) before centring and scaling
        cut_tables = below.any(axis=0)
        p_max = np.ones(D)
        p_max[cut_tables] = np.nanmax(null_p[:, cut_tables], axis=0)
        # (a table whose p-values reach 1 has its genes below it at z ~ 0: a width of
        # 2 * MIN_CUT keeps their censored probability a number, not 0 / 0)
        cut = np.maximum(-ndtri(np.clip(p_max, 1e-300, 1.0) / 2.0), MIN_CUT)
        censored = Censored(
            below,
            _tail_compressed((-cut - delta) / sigma),
            _tail_compressed((cut - delta) / sigma),
        )
    fit = fit_signed(Z, X, center, scale, max_prior=max_prior, censored=censored)
    return _SignedProblem(Z, X, center, scale, censored, delta, sigma, fit)


#: A cut table and another are one source when their correlation is above
#: :data:`SIGNED_ONE_SOURCE` by at least this much log-likelihood (nats; a one-sided
#: likelihood-ratio test at 5 %: chi-square(1) 0.90 quantile / 2).
ONE_SOURCE_EVIDENCE = 1.35


def _cut_noise(prepared: _SignedProblem, *, max_prior: float) -> np.ndarray:
    """The tables' correlation S beyond the changed genes when some are cut, for
    :func:`_shared_noise`: the EM's, but for a pair with a cut table that is one source at the
    likelihood's maximum (:func:`polished`, the cut table read against N(0, 1)), whose listed
    genes show it (:func:`correlation_evidence` at least :data:`ONE_SOURCE_EVIDENCE`) and whose
    z-scores over the genes both list are a near copy's (:func:`kofs.aggregate.sources.listed_copy` at least
    :data:`NEAR_COPY`; module docstring of :mod:`kofs.aggregate.signed`, "Censored tables")."""
    S_em = np.array(prepared.fit.correlation, dtype=np.float64)
    assert prepared.censored is not None  # (called where a table is cut)
    cut = np.asarray(np.asarray(prepared.censored.mask).any(axis=0), dtype=bool)
    pairs = cut[:, None] | cut[None, :]
    np.fill_diagonal(pairs, False)
    todo = pairs & (np.abs(S_em) < SIGNED_ONE_SOURCE)
    for a, b in zip(*np.nonzero(np.triu(todo, 1)), strict=True):
        if listed_copy(prepared.Z[:, [a, b]]) < NEAR_COPY:
            todo[a, b] = todo[b, a] = False
    if not todo.any():
        return S_em  # no pair with a cut table left to read
    Z, X, censored = prepared.Z, prepared.X, prepared.censored
    fit = polished(prepared.fit, Z, X, max_prior=max_prior, censored=censored)
    S = S_em.copy()
    for a, b in zip(*np.nonzero(np.triu(todo, 1)), strict=True):
        r = float(fit.correlation[a, b])
        if abs(r) < SIGNED_ONE_SOURCE:
            continue
        gain = correlation_evidence(
            fit, Z, X, (a, b), SIGNED_ONE_SOURCE, max_prior=max_prior, censored=censored
        )
        log.debug("tables %d, %d: correlation %.3f, %.2f nats above %.2f", a, b, r, gain,
                  SIGNED_ONE_SOURCE)  # fmt: skip
        if gain >= ONE_SOURCE_EVIDENCE:
            S[a, b] = S[b, a] = r
    return S


def _shared_noise(
    prepared: _SignedProblem, null_p: np.ndarray, correlation: np.ndarray | None = None
) -> np.ndarray:
    """The signed fit's correlation of the tables beyond the changed genes (D, D), in absolute
    value (a table whose contrast is the other way round shares its noise as much: fitted at
    -0.98 beside its tool's other table, the two were fused and called 178-293 genes at FDP
    0.61-0.73 where one table calls 73-106), 0 for a pair it says nothing of:

    * a table whose p-values (``null_p``, M x D) all stop at :data:`SELECTED_P` or below and
      that is not read as cut, i.e. a table of its significant genes read as the genes it
      tested (``tested=``): the genes it shares with another are mostly changed genes, and
      their correlation there is not the tables' noise (two independent studies' tables so read
      came out above the bound, and one stood for both);
    * a pair sharing fewer than half of the shorter table's genes (observed or below a cut,
      over the genes some table gives a z-score): too little to read their noise from. A
      tool's table filtered to 40 % of the genes (low counts, NA p-values) beside the other
      tool's full table still shares all of its genes with it."""
    S = np.abs(np.array(
        prepared.fit.correlation if correlation is None else correlation, dtype=np.float64
    ))  # fmt: skip
    seen = ~np.isnan(prepared.Z)
    cut = np.zeros(S.shape[0], dtype=bool)
    if prepared.censored is not None:
        cut = np.asarray(prepared.censored.mask.any(axis=0), dtype=bool)
        # (over the genes some table gives a z-score: a universe's genes that no table lists
        # are below every cut table's cut and in no full table, and counted so a full table
        # beside its own tool's cut table shared 3,000 of 20,000 genes, was not grouped, and
        # the two fitted together called nothing)
        seen |= prepared.censored.mask & seen.any(axis=1, keepdims=True)
    with np.errstate(invalid="ignore"):
        p_max = np.nanmax(np.where(np.isnan(prepared.Z), np.nan, null_p), axis=0)
    selected = (p_max <= SELECTED_P) & ~cut
    seen = seen.astype(np.float64)
    both = seen.T @ seen
    n = np.diag(both)
    S[both < 0.5 * np.minimum(n[:, None], n[None, :])] = 0.0
    S[selected, :] = 0.0
    S[:, selected] = 0.0
    return S


def _signed_answer(
    null_p: np.ndarray,
    signs: np.ndarray,
    prior: Prior,
    data_cols: np.ndarray,
    L: int,
    *,
    below: np.ndarray,
    signal_test: Mapping[str, Any] | None,
    max_prior: float,
    resamples: int,
    empirical_null: bool,
    seed: int,
    known_null: tuple[np.ndarray, np.ndarray] | None = None,
    prepared: _SignedProblem | None = None,
):
    """The fusion of signed tables (every data list a table of two-sided p-values with its
    effects' directions; :mod:`kofs.aggregate.signed`): the fit, fused scores, list weights,
    per-gene statistics, half-sample refits and relevant-class test, as the rank model's.
    ``below`` (M, D): the genes below a cut table's cut (it lacks them and lists only its
    significant genes), censored at the z of its largest p-value: ``|z| <= Q^-1(p_max / 2)``,
    centred and scaled as the table's z-scores are. ``known_null``: each table's empirical null
    when already read (NaN: to read). ``prepared``: these tables' :func:`_signed_problem`,
    when made already."""
    if prepared is None:
        prepared = _signed_problem(
            null_p,
            signs,
            prior,
            below=below,
            max_prior=max_prior,
            empirical_null=empirical_null,
            known_null=known_null,
        )
    Z, X, _, _, censored, delta, sigma, fit = prepared
    M, D = Z.shape
    weights = np.zeros(L)
    scores = fit.log_odds
    if np.all(fit.mu <= NO_SEPARATION):
        # no class: the limit of the model's ranking as the separations go to 0 together,
        # each table counting equally (log cosh(a) ~ a^2 / 2, a the tables' combined z-score)
        weights[data_cols] = 1.0 / D
        seen = ~np.isnan(Z)  # a gene no table has (a universe given) scores 0
        total = np.where(seen, Z, 0.0).sum(axis=1)
        scores = np.abs(total / np.maximum(seen.sum(axis=1), 1))
    else:
        # each direction pattern's shares, as the fused evidence reads the patterns (and the
        # half-sample refits' weights are): a table's own changes count for it alone
        weights[data_cols] = signed_weights(fit.m, fit.correlation, fit.direction_weights)
    post = fit.posterior
    resampled = None
    if resamples > 0 and M >= RESAMPLE_MIN_GENES:
        theta, w = half_sample_refits(
            fit, Z, X, n=int(resamples), seed=seed, max_prior=max_prior, censored=censored
        )
        full = np.zeros((len(w), L))
        full[:, data_cols] = w
        resampled = Resamples(mu=theta[:, :D], beta=theta[:, D:], weights=full)
        post = integrated_posterior(
            fit,
            Z,
            X,
            resampled.cov,
            draws=INTEGRATION_DRAWS,
            seed=seed,
            max_prior=max_prior,
            censored=censored,
        )
    lfdr = 1.0 - post
    q = q_values(lfdr, fit.log_odds)
    beyond = signed_test(fit, Z, censored)
    null = null_probability(beyond["p_value"])
    if signal_test is not None:
        null = max(null, null_probability(float(signal_test["p_value"])))
    statistics = _with_no_signal(lfdr, q, null, fit.rho, fit.log_lr)
    every = in_every_table(fit, Z, censored)
    if every is not None:
        # genes that change in some tables alone are relevant too: the probability that a
        # gene is relevant *and* changes in every table (a replicated change) beside it
        statistics["replicated"] = statistics["posterior"] * every
    return fit, scores, weights, statistics, resampled, beyond, (delta, sigma)


#: Pairs of tables whose relevant genes go the same way this share of the time or less, and
#: as often the other way, are named in a notice (their directions mostly unrelated).
MIXED_DIRECTIONS = 0.75


def _same_direction(fit: SignedFit) -> np.ndarray:
    """(D, D) the share of the relevant genes whose z-scores have the same sign in two tables:
    ``(1 + A_lj sign(m_l m_j)) / 2``, A the patterns' agreement (:attr:`SignedFit.agreement`;
    NaN for two tables whose relevant genes change in one of them alone)."""
    sign = np.where(np.asarray(fit.m) < 0, -1.0, 1.0)
    return (1.0 + fit.agreement * np.outer(sign, sign)) / 2.0


def _directions_notice(fit: SignedFit, names: Sequence[str]) -> str:
    """The notice naming the tables whose relevant genes go the same way in no more than
    :data:`MIXED_DIRECTIONS` and no less than 1 - it of the cases ("" for none): tables of
    different contrasts, fused with each gene's direction free between them."""
    same = _same_direction(fit)
    pairs = [
        f"{names[a]} and {names[b]} ({same[a, b]:.0%})"
        for a in range(len(names))
        for b in range(a + 1, len(names))
        if 1.0 - MIXED_DIRECTIONS <= same[a, b] <= MIXED_DIRECTIONS
    ]
    if not pairs:
        return ""
    return (
        "Some tables' changed genes do not go the same way: their relevant genes have z-scores "
        f"of the same sign in {', '.join(pairs)} of the cases (50 %: unrelated directions, as "
        "tables of different contrasts or tissues may be). The fit reads each changed gene's "
        'direction in each table from the patterns it learns (docs/lists.md, "Tables whose '
        'changed genes go different ways"); if the tables should agree, check their contrasts.'
    )


def _with_no_signal(
    lfdr: np.ndarray, q: np.ndarray, null: float, rho: float, evidence: np.ndarray
) -> dict[str, np.ndarray]:
    """The per-gene statistics averaged over the fitted model and the model without signal,
    of probability ``null`` (every gene at the prior ``rho``); ``data_posterior`` from the
    data ``evidence`` (log likelihood ratios) at the prior's intercept alone."""
    return {
        "posterior": (1 - null) * (1.0 - lfdr) + null * rho,
        "lfdr": (1 - null) * lfdr + null * (1 - rho),
        "q_value": np.minimum((1 - null) * q + null * (1 - rho), 1.0),
        "data_posterior": expit(np.log(rho / (1 - rho)) + evidence),
    }


def _effect_on_calls(q_value: np.ndarray) -> str:
    """What a no-signal probability did to the calls, for a notice."""
    called = int(np.sum(q_value <= 0.10))
    if called == 0:
        return "no gene reaches q <= 0.10"
    return f"the q-values are raised ({called} genes still at q <= 0.10)"


def _lone_class(fit: PosteriorFit, prior: Prior) -> int | None:
    """The data list on which alone the relevant class of ``fit`` rests, where the lists
    cannot have shown that class: one uncalibrated list with a separation, whose fitted
    correlation with every other list is 0, under a prior without covariates (else None).

    Under the model a ranking's positions are uniform whatever its separation and the share of
    relevant genes (they are positions in the mixture), and such a list's class changes nothing
    in the others' distribution: the likelihood is the same for every separation of it, 0
    included, and the fit's point on that ridge is where its iterations stopped (a Welch
    test's top 100 beside a random ranking: the random list took all the weight in 3 of 4
    seeds, gain over no class 0.001-0.002 nats). With covariates the prior's agreement with
    the list can show the class; with label weights, the labels; a list of p-values shows it
    alone."""
    if np.asarray(prior.X).shape[1] > 0:
        return None
    on = np.flatnonzero(np.asarray(fit.mu) > NO_SEPARATION)
    if on.size != 1:
        return None
    j = int(on[0])
    if fit.calibrated is not None and bool(np.asarray(fit.calibrated)[j]):
        return None
    if np.any(np.delete(np.asarray(fit.correlation)[j], j) != 0):
        return None
    return j


def _cancel(early: tuple | None) -> None:
    """Cancel the side tasks started early for lists since changed (``(lists, task, ...)``;
    a task may be None); one already running finishes unread."""
    for task in () if early is None else early[1:]:
        if task is not None:
            task.cancel()


def _made_halves(before: tuple | None, cols: np.ndarray) -> tuple[Halves, np.ndarray] | None:
    """The halves made by the side tasks ``before`` (``(lists, halves, agreement)``, started
    for other lists) when they were made (not cancelled, no error), with the index there of
    each list of ``cols`` (-1: not there): :func:`prepare_halves`' ``reuse``. Called on the
    side thread, after those tasks (one worker: they have run or been cancelled); the halves
    are the same with or without them."""
    if before is None:
        return None
    lists, task = before[0], before[1]
    if task is None or not task.done() or task.cancelled() or task.exception() is not None:
        return None
    at = {int(c): i for i, c in enumerate(np.asarray(lists).tolist())}
    return task.result(), np.array([at.get(int(c), -1) for c in cols], dtype=np.int64)


def _stop_side(side: ThreadPoolExecutor, exc: BaseException) -> None:
    """The side pool after an error: its tasks not started are cancelled and a running one is
    waited for, but not after an interrupt (Ctrl-C, SIGTERM): the side tasks compute only (no
    file), and the simulated null of top-k lists runs for minutes at 100,000 genes -- kofs
    said "terminated" and went on for 70-180 s. The process ends with the task running."""
    side.shutdown(wait=not isinstance(exc, KeyboardInterrupt), cancel_futures=True)


def _top_k_notice(
    partial: np.ndarray, weights: np.ndarray, names: list[str], simulated: bool
) -> str:
    """The notice of a fusion whose weight is mostly on top-k lists (``partial``:
    :func:`kofs.aggregate.top_k_null.top_k_lists`), when there are two or more: the
    noise they share is not in the model, so their overlap is read as relevance
    (docs/aggregation.md, "Scenarios outside the benchmark"). ``simulated``: the
    relevant-class test was referred to simulations of their correlation. Empty when it does
    not apply."""
    share = float(np.sum(weights[partial]))
    if partial.sum() < 2 or share < 0.5:
        return ""
    listed = ", ".join(n for n, p in zip(names, partial.tolist(), strict=True) if p)
    head = (
        f"Top-k lists ({listed}) carry {share:.0%} of the weight. The noise top-k lists share "
        "is not in the model (their overlap is read as relevance), so if they come from one "
        "data set -- several tools on the same samples -- the weights and the ranking may "
        "follow that noise"
    )
    if simulated:
        return (
            f"{head}; the q-values are guarded against it (the relevant-class test is referred "
            "to data sets simulated with the lists' correlation, which can cost calls where "
            "nearly binary lists from independent data agree: --aggregate-param "
            "top_k_null=independent for those). Give full rankings, or the tools' p-value "
            "tables, where you can."
        )
    return (
        f"{head}, and so may the q-values (top_k_null=independent: six random top-300 lists "
        "of 2,000 genes sharing 41 % of their noise call 255-308 genes, 97-98 % of them "
        "false). Give full rankings, or the tools' p-value tables, or a list from other data."
    )


def one_list_notice(name: str, *, from_one_matrix: bool, labelled: bool = False) -> str:
    """The notice of a fusion with one data list and no known null, with what to give for
    q-values among the options of the command that ran: lists the user brings (``kofs
    aggregate``) gain from a table of p-values; ``kofs rank`` without labels from labels; with
    labels (``labelled``, said by :func:`kofs.pipeline.supervision.aggregate_supervised`), not
    labels again but a list computed from them with a known null."""
    if not from_one_matrix:
        what = "Add lists, or give a table of p-values (read against their null), for q-values."
    elif labelled:
        what = (
            "The labels are given: add a list computed from the data and the labels with a "
            "known null (--rankers fisher: its F test gives p-values), or more lists, for "
            "q-values."
        )
    else:
        what = "Add lists computed from the data, or labels (--labels), for q-values."
    return (
        f"Only one list ({name}) is evidence from the data: the fused ranking is that list's, "
        f"and no probability of relevance can be learned from a single ranking. {what}"
    )


def _what_to_give(from_one_matrix: bool, signal_test: Mapping[str, Any] | None) -> str:
    """What the reader can give for the fusion to learn more, among the options of the command
    that ran: with labels given (the signal test says so), not labels again; lists the user
    brings (``kofs aggregate``, ``from_one_matrix`` False) have no labels to give."""
    if signal_test is not None and signal_test.get("labels"):
        return (
            "Check that the labels are the contrast meant, or give known genes (--relevant-genes)"
        )
    if from_one_matrix:
        return "Give labels (--labels) or known genes (--relevant-genes)"
    return "Give known genes (--relevant-genes)"


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]


def _signal_notice(signal_test: Mapping[str, Any], effect: str) -> str:
    """The notice of an outside test that finds no signal."""
    summary = signal_test.get("summary", "An outside test finds no signal for the lists")
    return f"{summary} (p = {float(signal_test['p_value']):.2g}): {effect}."


def _signal_floor_notice(signal_test: Mapping[str, Any], rho: float, q_value: np.ndarray) -> str:
    """The notice of an outside test that finds signal (p <= :data:`AGREEMENT_ALPHA`) but
    whose p-value alone keeps every gene's q-value above 0.10: its probability of no signal
    (:func:`null_probability`, p = 0.01 allows 0.11) times the prior's background share is a
    floor under every q-value (the outside test's `signal_p=0.01` gave no call beside a table
    that alone calls a hundred genes, without a word). Empty when it does not apply."""
    p = float(signal_test["p_value"])
    floor = null_probability(p) * (1.0 - rho)
    if p > AGREEMENT_ALPHA or floor <= 0.10 or np.any(q_value <= 0.10):
        return ""
    return (
        f"The outside test's p = {p:.2g} allows a probability of {null_probability(p):.2f} that "
        f"there is no signal at all, so no gene's q-value is below {floor:.3f} and none is "
        "called at q <= 0.10; the ranking is unchanged. A smaller p-value (a test with more "
        "permutations or more samples) lowers the floor."
    )


def _envelope_diagnostic(fit: PosteriorFit, robust: PosteriorFit, hi: np.ndarray, names):
    """How much the envelope bounded each rank list's evidence: over the genes in its top 1 %,
    the share whose term it lowered and the median amount (nats); and its histogram's top
    bin's log likelihood ratio (a list's most certain position). Under normal noise (planted,
    five seeds) 40-47 % of the top 1 % are lowered by a median of 0.04-0.09 nats; with
    Student-t (3 df) noise 79-97 % by 0.2-1.4 nats."""
    env = robust.envelope
    assert env is not None
    lowered = fit.list_terms - robust.list_terms
    rows = []
    for k, name in enumerate(names):
        if not env.capped[k]:
            continue
        top = hi[:, k] <= 0.01
        d = lowered[top, k] if top.any() else np.zeros(0)
        rows.append(
            {
                "list": name,
                "top_share_lowered": float(np.mean(d > 1e-9)) if d.size else 0.0,
                "top_median_lowered": float(np.median(d)) if d.size else 0.0,
                "top_bin_log_lr": float(np.log(env.rel[k, 0] / env.bg[k, 0])),
            }
        )
    return {"lists": rows, "iterations": int(env.iterations)}


def _mean_z(Z: np.ndarray) -> np.ndarray:
    """Each gene's mean z-score over the tables that have it (NaN: none has it)."""
    seen = ~np.isnan(Z)
    n = seen.sum(axis=1)
    total = np.where(seen, Z, 0.0).sum(axis=1)
    return np.where(n > 0, total / np.maximum(n, 1), np.nan)


def _ranks_of(x: np.ndarray) -> np.ndarray:
    """Ranks of ``x`` (1 = smallest, ties averaged; NaN stays NaN)."""
    out = np.full(x.shape, np.nan)
    ok = ~np.isnan(x)
    out[ok] = tie_averaged_ranks(x[ok])
    return out


def _mean_score_ranks(R: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Ranks (1 = best, ties averaged) of the mean normal score of full lists (``R``: their
    ranks; genes of the universe that they do not list stay NaN)."""
    listed = ~np.isnan(R).all(axis=1)
    z = np.full(R.shape[0], np.nan)
    z[listed] = -ndtri(np.clip(0.5 * (lo[listed] + hi[listed]), 1e-12, 1 - 1e-12)).mean(axis=1)
    return _ranks_of(-z)


def _normal_scores(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return -ndtri(np.clip(0.5 * (lo + hi), 1e-15, 1 - 1e-15))


@aggregator(
    "posterior",
    summary=(
        "posterior probability of relevance: data lists are the evidence (binormal rank "
        "model, reliabilities learned from their agreement, each list's evidence bounded by "
        "a decreasing-histogram relevant class; DE tables with fold changes: their signed "
        "z-scores), knowledge lists a prior whose strength is learned; per-gene posterior, "
        "local fdr and q-value"
    ),
    reference=(
        "kofs (docs/aggregation.md); Deng et al. 2014 JASA (BARD); Scott et al. 2015 JASA "
        "(FDR regression); Efron 2008 Stat Sci"
    ),
    params={
        "max_prior": Param(
            0.5, float, "cap of the fraction of relevant genes", low=0.0, high=1.0, closed="right"
        ),
        "dependence": Param(True, bool, "down-weight redundant data lists (c_l)"),
        "n_bins": Param(512, int, "bins of the fit's sufficient statistics", low=16),
        "envelope": Param(
            True,
            bool,
            "bound each rank list's evidence by a decreasing-histogram relevant class "
            "(robust to heavy-tailed noise; False: the binormal model alone)",
        ),
        "resamples": Param(
            20,
            int,
            "half-sample refits for intervals and posteriors integrated over the parameters' error (0 = none)",
            low=0,
            high=10_000,
        ),
        "null": Param(
            "auto",
            str,
            "null of the lists with p-values: empirical (fitted to the middle of each list's "
            "histogram), theoretical, or auto (empirical for p-values brought in tables, "
            "theoretical for kofs's own statistics: the F test of the labels, Hotspot's z)",
            choices=NULL_READINGS,
        ),
        "top_k_null": Param(
            "simulated",
            str,
            "null of the relevant-class test with top-k data lists: simulated (their latent "
            "correlation, the noise lists from one data set share, simulated and each data set "
            "fitted and tested as the data) or independent (the lists independent given "
            "relevance: lists from independent data sets)",
            choices=TOP_K_NULLS,
        ),
    },
    learns_weights=True,
    supports_relevant=True,
    partial_lists=True,
    context=True,
)
def _posterior(
    R: np.ndarray,
    *,
    relevant: np.ndarray | None,
    names: list[str],
    built_from: np.ndarray | None = None,
    held_out: tuple[np.ndarray, np.ndarray] | None = None,
    data_lists: np.ndarray | None = None,
    from_one_matrix: bool = False,
    covered: np.ndarray | None = None,
    absent_missing: np.ndarray | None = None,
    covariates: Mapping[str, np.ndarray] | None = None,
    list_weights: np.ndarray | None = None,
    list_weight_replicates: np.ndarray | None = None,
    signal_test: Mapping[str, Any] | None = None,
    null_p: np.ndarray | None = None,
    null_log_p: np.ndarray | None = None,
    null_kinds: np.ndarray | None = None,
    effect_signs: np.ndarray | None = None,
    universe: int | None = None,
    seed: int = 0,
    **params,
):
    """Registry adapter of :func:`posterior_aggregate` (genes of the universe that no list
    contains are rows of NaN, fitted like the others; the runner drops their scores)."""
    m = R.shape[0]
    if universe is not None and universe > m:
        pad = universe - m
        R = np.vstack([R, np.full((pad, R.shape[1]), np.nan)])
        if relevant is not None:
            relevant = np.concatenate([relevant, np.zeros(pad, dtype=bool)])
        if built_from is not None:
            built_from = np.vstack([built_from, np.zeros((pad, R.shape[1]), dtype=bool)])
        if held_out is not None:
            nan = np.full((pad, R.shape[1]), np.nan)
            held_out = (np.vstack([held_out[0], nan]), np.vstack([held_out[1], nan]))
        if covered is not None:
            covered = np.vstack([covered, np.zeros((pad, R.shape[1]), dtype=bool)])
        if null_p is not None:
            null_p = np.vstack([null_p, np.full((pad, R.shape[1]), np.nan)])
        if null_log_p is not None:
            null_log_p = np.vstack([null_log_p, np.full((pad, R.shape[1]), np.nan)])
        if effect_signs is not None:
            effect_signs = np.vstack([effect_signs, np.full((pad, R.shape[1]), np.nan)])
        if covariates:
            covariates = {
                k: np.concatenate([np.asarray(v, float), np.full(pad, np.nan)])
                for k, v in covariates.items()
            }
    scores, weights, info = posterior_aggregate(
        R,
        names,
        data_lists=data_lists,
        from_one_matrix=from_one_matrix,
        relevant=relevant,
        built_from=built_from,
        held_out=held_out,
        covered=covered,
        absent_missing=absent_missing,
        covariates=covariates,
        list_weights=list_weights,
        signal_test=signal_test,
        null_p=null_p,
        null_log_p=null_log_p,
        null_kinds=null_kinds,
        effect_signs=effect_signs,
        seed=seed,
        **params,
    )
    info["statistics"] = {k: np.asarray(v)[:m] for k, v in info["statistics"].items()}
    return np.asarray(scores)[:m], weights, info
