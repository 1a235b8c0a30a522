"""Rank aggregation: fuse several :class:`~kofs.types.Ranking` lists into one.

Every aggregator is registered in :data:`kofs.registry.AGGREGATORS`; :func:`aggregate` is the
shared runner (alignment of gene sets, partial rank matrix, gene universe, relevant-gene mask,
wrapping). Lists may rank different genes: :mod:`kofs.aggregate.partial` describes how a gene
that a list does not contain is treated.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from kofs._compute.canonical import canonical_rows
from kofs.aggregate.diagnostics import AGAINST, AGAINST_Z, DOMINANT_WEIGHT
from kofs.aggregate.nulls import effect_sign_matrix, null_kinds, null_p_matrix
from kofs.aggregate.partial import complete_ranks, partial_rank_matrix
from kofs.errors import ParameterError, checked_keywords, whole_number
from kofs.options import BOOTSTRAP_MAX, SEED_MAX
from kofs.registry import AGGREGATORS, DEFAULT_AGGREGATOR, RANKERS, resolve_params
from kofs.types import AggregateRanking, Ranking

from kofs.aggregate import _methods  # noqa: E402,F401  isort: skip  (registers every aggregator)

__all__ = ["aggregate", "AGGREGATORS"]

log = logging.getLogger(__name__)


#: Most lists whose pairwise agreement (Spearman, diagnostics["agreement"]) is computed.
AGREEMENT_MAX_LISTS = 200


def _check_list_weights(list_weights: Mapping[str, float], names: Sequence[str]) -> None:
    """Weights of lists that are aggregated, finite and >= 0, some above 0 (an unknown name,
    NaN or all zeros were ignored in silence, a negative weight read as 0)."""
    if not isinstance(list_weights, Mapping):
        raise ParameterError(
            f"list_weights: give a mapping of list name to weight, not a "
            f"{type(list_weights).__name__}"
        )
    unknown = sorted(set(map(str, list_weights)) - set(names))
    if unknown:
        raise ParameterError(
            f"list_weights names lists that are not aggregated: {', '.join(unknown[:5])}"
        )
    try:
        values = np.array([float(v) for v in list_weights.values()], dtype=np.float64)
    except (TypeError, ValueError):
        raise ParameterError("list_weights: every weight must be a number") from None
    if not np.all(np.isfinite(values)) or np.any(values < 0) or not np.any(values > 0):
        raise ParameterError(
            "list_weights: weights must be finite numbers >= 0, at least one of them above 0"
        )


def _data_lists(rankings: Sequence[Ranking]) -> np.ndarray:
    """True for lists computed from expression values: every list except those of a
    knowledge-only ranker (registry family ``"knowledge"``)."""
    import kofs.rankers  # noqa: F401  (registers every ranker)

    out = []
    for r in rankings:
        name = str(r.params.get("ranker"))
        out.append(not (name in RANKERS and RANKERS.get(name).family == "knowledge"))
    return np.array(out, dtype=bool)


def _from_one_matrix(rankings: Sequence[Ranking]) -> bool:
    """Whether every data list is a kofs ranker's (computed from one matrix by ``kofs rank``):
    the fusion then reads them as one data set's by design
    (:func:`kofs.aggregate.sources.one_source` does not apply)."""
    data = [r for r, d in zip(rankings, _data_lists(rankings), strict=True) if d]
    return bool(data) and all(str(r.params.get("ranker")) in RANKERS for r in data)


def _knowledge_names(
    knowledge: Iterable[str] | None, names: Sequence[str], method: str, context: bool
) -> list[str]:
    """The lists named as knowledge (``aggregate(knowledge=...)``), checked."""
    if knowledge is None:
        return []
    if isinstance(knowledge, str) or not isinstance(knowledge, Iterable):
        raise ParameterError(
            f"knowledge: give the names of the knowledge lists as a list, got {knowledge!r}"
        )
    chosen = [str(k) for k in knowledge]
    if not chosen:
        return []
    if not context:
        raise ParameterError(
            f"aggregator {method!r} does not use knowledge lists as a prior; use 'posterior'"
        )
    unknown = [k for k in chosen if k not in names]
    if unknown:
        raise ParameterError(
            f"knowledge: no list is named {unknown[0]!r} (the lists: {', '.join(names)})"
        )
    if set(names) <= set(chosen):
        raise ParameterError(
            "knowledge: every list is named as knowledge; at least one list must be evidence "
            "from data (the knowledge is a prior of what the data lists show)"
        )
    return chosen


def _covered(rankings: Sequence[Ranking], genes: Sequence[str]) -> np.ndarray:
    """(M, L): the genes each list has knowledge about (present, with a finite score)."""
    index: dict[str, int] | None = None
    order = list(genes)
    out = np.zeros((len(genes), len(rankings)), dtype=bool)
    for j, r in enumerate(rankings):
        if list(r.genes) == order:  # the common case: every list over the same genes, in order
            rows = np.arange(len(order))
        else:
            if index is None:
                index = {g: i for i, g in enumerate(order)}
            rows = np.fromiter((index[g] for g in r.genes), dtype=np.int64, count=len(r.genes))
        out[rows, j] = np.isfinite(np.asarray(r.scores, dtype=np.float64))
    return out


def _covariates(
    covariates: Mapping[str, Mapping[str, float]] | None,
    genes: Sequence[str],
    rows: np.ndarray,
) -> dict[str, np.ndarray] | None:
    """Gene-level covariates as arrays over the (canonically ordered) genes; NaN = unknown."""
    if covariates is None or (isinstance(covariates, Mapping) and not covariates):
        return None
    if not isinstance(covariates, Mapping):
        raise ParameterError(
            "covariates: give a mapping of covariate name to {gene: value} (or a pandas "
            f"Series), not a {type(covariates).__name__}"
        )
    out = {}
    for name, values in covariates.items():
        if not hasattr(values, "get"):
            raise ParameterError(
                f"covariates: {name!r} must map gene ids to numbers (a mapping or a pandas "
                f"Series), not a {type(values).__name__}"
            )
        try:
            col = np.array([float(values.get(g, np.nan)) for g in genes], dtype=np.float64)
        except (TypeError, ValueError):
            raise ParameterError(
                f"covariates: {name!r} holds a value that is not a number"
            ) from None
        out[str(name)] = col[rows]
    return out


def _check_ids(what: str, ids: object) -> None:
    """``ids`` is a collection of gene ids: a bare string would be read letter by letter."""
    if isinstance(ids, (str, bytes)):
        raise ParameterError(
            f"{what}: give a list (or set) of gene ids, not one string ({ids!r:.40}); one gene "
            f"is [{ids!r:.40}]"
        )
    if not isinstance(ids, Iterable) or isinstance(ids, Mapping):
        raise ParameterError(f"{what}: give a list (or set) of gene ids, got {ids!r:.40}")


def _built_from_mask(
    genes: Sequence[str], names: Sequence[str], built_from: Mapping[str, Iterable[str]]
) -> np.ndarray:
    if not isinstance(built_from, Mapping):
        raise ParameterError(
            "built_from: give a mapping of list name to the genes the list was built from "
            f"({{'GO-MAH': ['TP53', ...]}}), got a {type(built_from).__name__}"
        )
    for name, seeds in built_from.items():
        _check_ids(f"built_from[{name!r}]", seeds)
    unknown = set(built_from) - set(names)
    if unknown:
        raise ParameterError(
            f"built_from names lists that are not aggregated: {', '.join(sorted(unknown))}"
        )
    index = {g: i for i, g in enumerate(genes)}
    B = np.zeros((len(genes), len(names)), dtype=bool)
    for j, n in enumerate(names):
        for g in built_from.get(n, ()):
            if g in index:
                B[index[g], j] = True
    return B


@checked_keywords
def aggregate(
    rankings: Sequence[Ranking],
    method: str = DEFAULT_AGGREGATOR,
    *,
    relevant_genes: Iterable[str] | None = None,
    params: Mapping[str, Any] | None = None,
    universe: int | Iterable[str] | None = None,
    built_from: Mapping[str, Iterable[str]] | None = None,
    held_out: Mapping[str, Sequence[tuple[Iterable[str], Ranking]]] | None = None,
    list_weights: Mapping[str, float] | None = None,
    list_weight_replicates: Mapping[str, Any] | None = None,
    covariates: Mapping[str, Mapping[str, float]] | None = None,
    knowledge: Iterable[str] | None = None,
    signal_test: Mapping[str, Any] | None = None,
    bootstrap: int = 200,
    seed: int = 0,
) -> AggregateRanking:
    """Fuse ranked lists with the registered aggregator ``method``.

    Parameters
    ----------
    rankings : sequence of Ranking
        The L lists; their names must be distinct. They may rank different genes (partial
        lists, top-k lists); see :mod:`kofs.aggregate.partial` for the treatment of a gene a
        list does not contain.
    method : str
        ``"posterior"`` (the default), ``"em"`` (KOFS probabilistic model, eqs 6.16-6.19), ``"borda"``,
        ``"rra"``, ``"stuart"``, ... (``kofs methods``).
    relevant_genes : iterable of str, optional
        Known-relevant genes (supervision by genes). Genes absent from the lists are dropped
        with a warning by the caller; none left raises :class:`~kofs.errors.ParameterError`.
    params : mapping, optional
        Aggregator parameters.
    universe : int or iterable of str, optional
        The gene universe: its size N (at least the number of distinct genes in the lists),
        or its gene ids (every ranked gene must be one of them; the others are added to the
        result as genes no list contains). Default: the genes of the lists (N = their number,
        as RobustRankAggreg).
    built_from : mapping list name -> genes, optional
        The genes each list was built (seeded) from. Aggregators with list context never score
        a list on them; recorded in ``diagnostics["built_from"]`` (counts).
    held_out : mapping list name -> sequence of (genes, Ranking), optional
        Cross-fitting of a seeded list (:mod:`kofs.aggregate.cross_fit`): per fold, the seed
        genes held out and the list rebuilt from the other seeds. The held-out genes are
        observed at their position in that rebuild (fit and score) instead of not at all.
        Every name must be in ``built_from``; only for aggregators with list context
        (``posterior``). ``diagnostics["cross_fit"]`` says how each seeded list was scored.
    list_weights : mapping list name -> float, optional
        Fixed list reliabilities (supervision by sample labels, see
        :func:`kofs.aggregate.supervision.label_reliabilities`): each data list's evidence is tempered by its weight over the largest; only for ``posterior``.
    list_weight_replicates : mapping list name -> array-like of float, optional
        Bootstrap replicates of ``list_weights`` (all of one length).
    covariates : mapping name -> (mapping gene -> float), optional
        Gene-level covariates of the prior of ``posterior`` (e.g. ``{"study bias": {gene:
        log number of annotations}}``; a pandas Series works); genes without a value get the
        mean.
    knowledge : iterable of str, optional
        Names of lists that rank genes by what is known (a GO-, pathway- or literature-based
        prioritisation a user brings), not by this experiment's data: ``posterior`` uses them
        as covariates of the prior, whose strength it learns from the other lists, and a gene
        such a list lacks is unknown to it, not below it -- as the lists of kofs's knowledge
        rankers. At least one list must stay data.
    signal_test : mapping, optional
        An outside test that the data lists have anything to find: its ``p_value`` (and what
        else it reports, kept in ``diagnostics["signal_test"]``; ``summary``: one sentence
        saying what it found, for the notice). Its no-signal probability joins those of the
        fusion's own tests (only ``posterior``). ``kofs rank`` gives the sample-structure
        test (no labels) or the label-association test (labels) when every data list comes
        from a ranker (:mod:`kofs.pipeline.structure`).
    bootstrap : int
        Bootstrap replicates of the weight intervals (0 = none).
    seed : int
        Seed of the bootstrap.

    Returns
    -------
    AggregateRanking
        ``list_ranks`` holds NaN where a list does not contain a gene; ``statistics`` the
        per-gene values the method defines (p- and q-values of RRA, Q of Stuart);
        ``diagnostics`` the weight diagnostics (:mod:`kofs.aggregate.diagnostics`).
    """
    # the kernels' matrix products are tall and thin (genes x lists): one BLAS thread is as fast
    # on an idle machine and several times faster on a busy one (threads wait for cores)
    with threadpool_limits(limits=1, user_api="blas"):
        return _aggregate(
            rankings,
            method,
            relevant_genes=relevant_genes,
            params=params,
            universe=universe,
            built_from=built_from,
            held_out=held_out,
            list_weights=list_weights,
            list_weight_replicates=list_weight_replicates,
            covariates=covariates,
            knowledge=knowledge,
            signal_test=signal_test,
            bootstrap=bootstrap,
            seed=seed,
        )


def _aggregate(
    rankings: Sequence[Ranking],
    method: str = DEFAULT_AGGREGATOR,
    *,
    relevant_genes: Iterable[str] | None = None,
    params: Mapping[str, Any] | None = None,
    universe: int | Iterable[str] | None = None,
    built_from: Mapping[str, Iterable[str]] | None = None,
    held_out: Mapping[str, Sequence[tuple[Iterable[str], Ranking]]] | None = None,
    list_weights: Mapping[str, float] | None = None,
    list_weight_replicates: Mapping[str, Any] | None = None,
    covariates: Mapping[str, Mapping[str, float]] | None = None,
    knowledge: Iterable[str] | None = None,
    signal_test: Mapping[str, Any] | None = None,
    bootstrap: int = 200,
    seed: int = 0,
) -> AggregateRanking:
    """:func:`aggregate` (under the thread limit)."""
    from kofs.aggregate.diagnostics import agreement_matrix, warning_line

    spec = AGGREGATORS.get(method)
    for name, value, high in (("seed", seed, SEED_MAX), ("bootstrap", bootstrap, BOOTSTRAP_MAX)):
        if not whole_number(value) or not (0 <= value <= high):
            raise ParameterError(f"{name} must be an integer in [0, {high}], got {value!r}")
    if isinstance(rankings, (Ranking, Mapping, str)) or not isinstance(rankings, Iterable):
        raise ParameterError(
            f"aggregate fuses a list of kofs.Ranking objects, got a {type(rankings).__name__}"
            + (
                ": give its values, list(rankings.values())"
                if isinstance(rankings, Mapping)
                else ""
            )
        )
    rankings = list(rankings)
    # a None among them is wrong too (it was taken for "none wrong": an AttributeError)
    wrong = [r for r in rankings if not isinstance(r, Ranking)]
    if wrong:
        got = "None" if wrong[0] is None else f"a {type(wrong[0]).__name__}"
        raise ParameterError(
            f"aggregate fuses kofs.Ranking objects, got {got}: "
            "kofs.aggregate_lists reads gene lists, tables and files"
        )
    names = [r.name for r in rankings]
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise ParameterError(f"ranked lists must have distinct names; repeated: {', '.join(dup)}")
    resolved = resolve_params(f"aggregator {method!r}", spec.params, params or {})
    if rankings and not any(r.genes for r in rankings):
        raise ParameterError("every ranked list is empty: there is no gene to fuse")
    genes, R = partial_rank_matrix(rankings)
    genes, R, N = _apply_universe(genes, R, universe)
    _check_universe_memory(N, len(rankings), method)
    m = len(genes)
    relevant = None
    if relevant_genes is not None:
        _check_ids("relevant_genes", relevant_genes)
        if not spec.supports_relevant:
            raise ParameterError(
                f"aggregator {method!r} does not use relevant genes; use 'posterior' or 'em'"
            )
        wanted = set(relevant_genes)
        relevant = np.fromiter((g in wanted for g in genes), dtype=bool, count=m)
        if not relevant.any():
            raise ParameterError("none of the relevant genes is among the ranked genes")
    if list_weights is not None and not spec.context:
        raise ParameterError(
            f"aggregator {method!r} cannot use list weights from sample labels; use 'posterior'"
        )
    if list_weights is not None:
        _check_list_weights(list_weights, names)
    if covariates and not spec.context:
        raise ParameterError(f"aggregator {method!r} does not use gene covariates; use 'posterior'")
    known_lists = _knowledge_names(knowledge, names, method, spec.context)
    if signal_test is not None and not spec.context:
        raise ParameterError(f"aggregator {method!r} does not use a signal test; use 'posterior'")
    if signal_test is not None:
        try:
            p_signal = float(signal_test["p_value"])
        except (KeyError, TypeError, ValueError):
            p_signal = np.nan
        if not 0.0 <= p_signal <= 1.0:
            raise ParameterError("signal_test needs a 'p_value' in [0, 1]")
    B = None if not built_from else _built_from_mask(genes, names, built_from)
    if held_out and not spec.context:
        raise ParameterError(
            f"aggregator {method!r} cannot use cross-fitted lists (held_out); use 'posterior'"
        )
    if held_out and (B is None or set(held_out) - set(built_from or {})):
        raise ParameterError("held_out names a list that built_from does not (its seed genes)")
    HO = None
    n_scored: dict[str, int] = {}
    if held_out:
        from kofs.aggregate.cross_fit import held_out_intervals

        assert B is not None
        lo_h, hi_h, n_scored = held_out_intervals(genes, names, B, held_out)
        HO = (lo_h, hi_h)
    # the kernels see the genes sorted by id and the lists sorted by name: the result does not
    # depend on the order of the genes or of the lists, to the last bit
    rows = canonical_rows(genes)
    cols = np.array(sorted(range(len(names)), key=lambda j: names[j]), dtype=np.int64)
    Rc = R[np.ix_(rows, cols)]
    relc = None if relevant is None else relevant[rows]
    Bc = None if B is None else B[np.ix_(rows, cols)]
    extra: dict[str, Any] = {}
    if spec.context:
        v = None
        if list_weights is not None:
            v = np.array([float(list_weights.get(n, 0.0)) for n in names])[cols]
        reps = None
        if list_weights is not None and list_weight_replicates:
            lengths = {len(np.atleast_1d(list_weight_replicates.get(n, ()))) for n in names}
            if len(lengths) > 1:
                raise ParameterError(
                    "list_weight_replicates: every list needs the same number of replicates "
                    "(each list fused has some), "
                    f"got lengths {sorted(lengths)}"
                )
            reps = np.column_stack(
                [np.asarray(list_weight_replicates.get(n, ()), dtype=np.float64) for n in names]
            )[:, cols]
        extra = {
            "names": [names[j] for j in cols],
            "built_from": Bc,
            "data_lists": (_data_lists(rankings) & ~np.isin(names, known_lists))[cols],
            "from_one_matrix": _from_one_matrix(rankings),
            "covered": _covered(rankings, genes)[np.ix_(rows, cols)],
            "absent_missing": np.array(
                [
                    rankings[j].params.get("absent") == "missing" or names[j] in known_lists
                    for j in cols
                ],
                dtype=bool,
            ),
            "covariates": _covariates(covariates, genes, rows),
            "list_weights": v,
            "list_weight_replicates": reps,
            "seed": int(seed),
        }
        if signal_test is not None:
            extra["signal_test"] = dict(signal_test)
        P = null_p_matrix(rankings, genes)
        if P is not None:
            extra["null_p"] = P[np.ix_(rows, cols)]
            log_p = null_p_matrix(rankings, genes, log=True)
            assert log_p is not None
            extra["null_log_p"] = log_p[np.ix_(rows, cols)]
            extra["null_kinds"] = null_kinds(rankings)[cols]
            signs = effect_sign_matrix(rankings, genes)
            if signs is not None:
                extra["effect_signs"] = signs[np.ix_(rows, cols)]
        if HO is not None:
            extra["held_out"] = (HO[0][np.ix_(rows, cols)], HO[1][np.ix_(rows, cols)])
    partial = bool(np.isnan(R).any()) or N > m
    if spec.partial_lists:
        R_in, mask = Rc, relc
        scores_c, weights, info = spec.func(Rc, relevant=relc, universe=N, **resolved, **extra)
    else:
        R_in = complete_ranks(Rc, universe=N) if partial else Rc
        mask = relc
        if relc is not None and N > m:
            mask = np.concatenate([relc, np.zeros(N - m, dtype=bool)])
        scores_c, weights, info = spec.func(R_in, relevant=mask, **resolved, **extra)
    scores = _uncanonical(scores_c, rows, m)
    info = dict(info)
    private = {k: info.pop(k) for k in [k for k in info if k.startswith("_")]}
    diag = _diagnostics(
        spec,
        method,
        [names[j] for j in cols],
        genes,
        R[:, cols],
        R_in,
        mask,
        relevant,
        None if B is None else B[:, cols],
        weights,
        info,
        private,
        resolved,
        list_weights is not None,
        bootstrap,
        seed,
        agreement_matrix,
        warning_line,
        {r.name for r in rankings if (r.params or {}).get("path")},
    )
    back = np.argsort(cols)  # canonical list order -> the caller's
    weights = None if weights is None else np.asarray(weights)[back]
    for key in _PER_LIST_INFO:
        if isinstance(info.get(key), (list, np.ndarray)) and len(info[key]) == len(names):
            info[key] = [info[key][j] for j in back]
    diag = _lists_back(diag, back, names)
    if B is not None and spec.context:
        diag["cross_fit"] = _cross_fit_record(names, B, held_out or {}, n_scored)
    statistics = {
        k: _uncanonical(v, rows, m) for k, v in (info.pop("statistics", None) or {}).items()
    }
    if partial:
        info["universe"] = N
        info["list_lengths"] = dict(zip(names, map(int, (~np.isnan(R)).sum(axis=0)), strict=True))
    return AggregateRanking(
        method=method,
        genes=genes,
        scores=scores,
        list_names=tuple(names),
        list_ranks=R,
        weights=weights,
        info={"method": method, **resolved, **info},
        statistics=statistics,
        diagnostics=diag,
    )


def _diagnostics(
    spec,
    method,
    names,
    genes,
    R,
    R_in,
    mask,
    relevant,
    B,
    weights,
    info,
    private,
    resolved,
    labels,
    bootstrap,
    seed,
    agreement_matrix,
    warning_line,
    from_files: set[str],
) -> dict[str, Any]:
    """Supervision level, agreement matrix, built-from genes, data support and the
    aggregator's weight diagnostics (intervals, likelihood gain, identification warning).
    ``from_files``: the lists read from a user's file (a direction can be given there)."""
    supervision = "labels" if labels else "genes" if relevant is not None else "none"
    # every pair of lists (pairwise complete genes): beyond AGREEMENT_MAX_LISTS lists the L x L
    # table took minutes (2,000 lists of 2 genes: 14 s of a 17 s Borda) and filled manifest.json
    agreement = agreement_matrix(R) if R.shape[1] <= AGREEMENT_MAX_LISTS else None
    diag: dict[str, Any] = {"supervision": supervision, "agreement": agreement}
    diag["built_from"] = (
        {n: int(B[:, j].sum()) for j, n in enumerate(names) if B[:, j].any()}
        if B is not None
        else {}
    )
    if B is not None:
        diag["built_from_genes"] = {
            n: [genes[i] for i in np.flatnonzero(B[:, j])]
            for j, n in enumerate(names)
            if B[:, j].any()
        }
    diag.update(private.get("_diagnostics") or {})
    if weights is not None and spec.diagnose is not None:
        diag.update(
            spec.diagnose(
                R_in,
                relevant=mask,
                weights=np.asarray(weights),
                info={**info, **private},
                n_boot=int(bootstrap),
                seed=int(seed),
                params=resolved,
            )
        )
        diag["warning"] = warning_line(method, diag, names)
        if diag["warning"]:
            log.warning("%s", diag["warning"])
    if weights is not None:
        against = _against_agreeing_lists(
            names, np.asarray(weights, float), agreement, R, from_files
        )
        if against:
            diag["notices"] = [*(diag.get("notices") or []), against]
            log.warning("%s", against)
    if relevant is not None and B is not None and not spec.context:
        overlap = [n for j, n in enumerate(names) if (B[:, j] & relevant).any()]
        if overlap:
            diag["circular"] = (
                f"{method}: weights supervised by known genes that also built "
                f"{', '.join(overlap)} (circular: those lists win by construction); "
                "use --aggregate posterior, which never scores a list on its seed genes"
            )
            log.warning("%s", diag["circular"])
    return diag


def _against_agreeing_lists(
    names: Sequence[str],
    weights: np.ndarray,
    agreement: np.ndarray | None,
    R: np.ndarray,
    from_files: frozenset[str] | set[str] = frozenset(),
) -> str | None:
    """A notice when the list that carries most of the weight runs against two lists that
    agree with each other: the fused answer is then that one list's, and a list ranked the
    wrong way round (a p-value taken descending, a score of the opposite sign) wins this way
    (an independent check: a reversed list beside top-k lists took all the weight in 8 of 30
    seeds, ~3,500 calls at FDP 0.99, and said nothing). The remedy it names is a direction
    for a list read from a file (``from_files``); a list kofs built (Fisher, SPEC) has none
    to give."""
    if agreement is None or len(names) < 3 or not np.isfinite(weights).all():
        return None
    total = weights.sum()
    j = int(np.argmax(weights))
    if total <= 0 or weights[j] / total < DOMINANT_WEIGHT:
        return None
    A = np.nan_to_num(np.asarray(agreement, dtype=np.float64))
    seen = ~np.isnan(R)  # (genes, lists): the pairs' shared genes, counted only when needed

    def z(a: int, b: int) -> float:  # r sqrt(n - 1): standard errors from 0 under independence
        return A[a, b] * math.sqrt(max(int((seen[:, a] & seen[:, b]).sum()) - 1, 0))

    against = [
        a for a in range(len(names)) if a != j and A[j, a] <= -AGAINST and z(j, a) <= -AGAINST_Z
    ]
    pairs = [
        (a, b)
        for i, a in enumerate(against)
        for b in against[i + 1 :]
        if A[a, b] >= AGAINST and z(a, b) >= AGAINST_Z
    ]
    if not pairs:
        return None
    a, b = max(pairs, key=lambda p: A[p[0], p[1]])
    head = (
        f"'{names[j]}' carries {weights[j] / total:.0%} of the weight, and its ranking runs "
        f"against '{names[a]}' and '{names[b]}' (Spearman {A[j, a]:+.2f}, {A[j, b]:+.2f}), "
        f"which agree with each other ({A[a, b]:+.2f}): the fused ranking is mostly "
        f"'{names[j]}'s. "
    )
    if names[j] in from_files:
        return head + (
            f"If '{names[j]}' is ranked the wrong way round (a p-value taken descending, a "
            "score of the opposite sign), give its direction (FILE:COLUMN:asc|desc); if it "
            "is right, the other lists disagree with it."
        )
    return head + (
        f"'{names[j]}' is computed by kofs, so the other lists disagree with it: they rank "
        "other genes first (e.g. lists built from knowledge beside a list of the data)."
    )


#: Per-list entries of an aggregator's ``info`` (put back into the caller's list order).
_PER_LIST_INFO = ("mu", "auc", "tempering")


def _lists_back(diag: dict[str, Any], back: np.ndarray, names: Sequence[str]) -> dict[str, Any]:
    """Diagnostics computed in canonical list order, back in the caller's list order."""
    L = len(names)
    for key in ("weight_ci", "weight_sd", "mu_ci", "auc_ci"):
        if diag.get(key) is not None and len(diag[key]) == L:
            diag[key] = np.asarray(diag[key])[back]
    if diag.get("agreement") is not None:
        diag["agreement"] = np.asarray(diag["agreement"])[np.ix_(back, back)]
    for key in ("built_from", "built_from_genes"):
        if key in diag:
            diag[key] = {n: diag[key][n] for n in names if n in diag[key]}
    return diag


def _cross_fit_record(
    names: Sequence[str],
    B: np.ndarray,
    held_out: Mapping[str, Sequence[tuple[Iterable[str], Ranking]]],
    n_scored: Mapping[str, int],
) -> dict[str, dict[str, Any]]:
    """How each seeded list was scored on its seed genes: cross-fitted (re-seeded K-fold) or
    excluded (its seed genes are missing observations)."""
    out: dict[str, dict[str, Any]] = {}
    for j, n in enumerate(names):
        if not B[:, j].any():
            continue
        seeds = int(B[:, j].sum())
        if n in held_out:
            out[n] = {
                "rule": "re-seeded",
                "folds": len(held_out[n]),
                "seed_genes": seeds,
                "scored_held_out": int(n_scored.get(n, 0)),
            }
        else:
            out[n] = {"rule": "excluded", "seed_genes": seeds}
    return out


def _uncanonical(values, rows: np.ndarray, m: int) -> np.ndarray:
    """Per-gene values computed in canonical row order, back in the lists' gene order."""
    out = np.empty(m, dtype=np.float64)
    out[rows] = np.asarray(values, dtype=np.float64)[:m]
    return out


#: Bytes a fusion holds per gene of the universe and per list (measured peak RSS, two top-40
#: lists with a universe of 200,000 and 400,000 genes: 581 and 1,010 MB with ``posterior``,
#: whose model has a row for every gene; ``rra`` and ``borda`` at 10,000,000: 565 and 479 MB,
#: ~40 bytes per gene), with a margin.
POSTERIOR_BYTES = 1_200
RANK_BYTES = 64


def _check_universe_memory(N: int, lists: int, method: str) -> None:
    """Fail before fusing when a universe of ``N`` genes would take more memory than this
    machine allows (:func:`kofs.resources.default_memory_limit`): the genes no list holds are
    modelled too, so the cost grows with N, not with the lists' lengths."""
    from kofs.errors import ResourceError
    from kofs.resources import default_memory_limit, format_size

    limit = default_memory_limit()
    per_gene = POSTERIOR_BYTES * max(lists, 1) if method == "posterior" else RANK_BYTES
    need = 200 * 2**20 + N * per_gene
    if limit is None or need <= limit:
        return
    raise ResourceError(
        f"a universe of {N:,} genes (--universe): fusing {lists} lists over it with {method} "
        f"needs ~{format_size(need)}, more than the {format_size(limit)} this machine allows "
        "(80 % of its memory); give the number of genes measured (a genome has fewer than "
        "100,000)"
    )


def _apply_universe(
    genes: tuple[str, ...], R: np.ndarray, universe: int | Iterable[str] | None
) -> tuple[tuple[str, ...], np.ndarray, int]:
    """(genes, rank matrix, N) after adding the universe's genes that no list contains."""
    m = len(genes)
    if universe is None:
        return genes, R, m
    if isinstance(universe, (int, np.integer)) and not isinstance(universe, bool):
        if universe < m:
            raise ParameterError(
                f"universe size {int(universe)} is smaller than the {m} distinct genes of the "
                "lists; give at least that many"
            )
        return genes, R, int(universe)
    if isinstance(universe, (str, bytes)) or not isinstance(universe, Iterable):
        raise ParameterError(
            f"universe must be a number of genes or a collection of gene ids, got {universe!r}"
        )
    ids = list(dict.fromkeys(str(g) for g in universe))
    known = set(ids)
    outside = [g for g in genes if g not in known]
    if outside:
        raise ParameterError(
            f"{len(outside)} ranked genes are not in the universe (e.g. {', '.join(outside[:3])});"
            " drop them from the lists or widen the universe"
        )
    present = set(genes)
    extra = [g for g in ids if g not in present]
    if extra:
        R = np.vstack([R, np.full((len(extra), R.shape[1]), np.nan)])
    return genes + tuple(extra), R, len(ids)
