"""The one place that knows the whole flow: plan -> convert -> rank -> aggregate.

:func:`rank` takes already-read objects (see :mod:`kofs.io`, :mod:`kofs.sources`) and returns
a :class:`RunResult`; :func:`run_plan` builds planned lists and aggregates them. A whole run
from files is :func:`kofs.pipeline.run.run`; writing is :mod:`kofs.pipeline.write`.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from kofs._compute.canonical import (
    canonical_inputs,
    canonicalize,
    restore_aggregate,
    restore_ranking,
)
from kofs._compute.chunked import GRAPH_MEMORY
from kofs._compute.matrix import column_range
from kofs._compute.ranks import constant_range
from kofs.aggregate import aggregate as aggregate_lists
from kofs.aggregate.partial import partial_rank_matrix
from kofs.context import Context, ListPlan
from kofs.errors import InputError, KofsError, ParameterError
from kofs.io.ids import CoverageReport, match_gene_ids
from kofs.progress import Progress, task
from kofs.rankers import estimate_ranker, run_ranker
from kofs.registry import AGGREGATORS, DEFAULT_AGGREGATOR, RANKERS, resolve_params, unknown_message
from kofs.resources import check_memory, estimate_knn_graph, resolve_limit
from kofs.sources import KnowledgeSources
from kofs.types import (
    AggregateRanking,
    Expression,
    RankerInputs,
    Ranking,
    SampleCategories,
    SampleSimilarity,
)

log = logging.getLogger(__name__)


def _html_escape(text: str) -> str:
    import html

    return html.escape(text)


@dataclass(frozen=True)
class RunResult:
    """Everything a run produced."""

    expression: Expression
    final: AggregateRanking
    lists: tuple[Ranking, ...]
    coverage: tuple[CoverageReport, ...]
    timings: Mapping[str, float]
    settings: Mapping[str, Any]
    #: gene id -> evidence text (a :class:`kofs.knowledge.evidence.GeneEvidence` with the terms and
    #: neighbours behind it), None without knowledge sources
    evidence: Mapping[str, str] | None = None
    sources: KnowledgeSources | None = None
    config: Any = None  # the kofs.pipeline.config.RunConfig of a run started from one
    #: gene id -> symbol, from the matrix or the knowledge sources (None: ids are the symbols)
    symbols: Mapping[str, str] | None = None
    #: the sample labels the run used (aligned to ``expression.samples``)
    labels: SampleCategories | None = None
    #: per-group marker tables (:class:`kofs.rankers.markers.MarkerTables`), with labels
    markers: Any = None
    #: the warnings logged while the run ran (:func:`kofs.pipeline.run.run`), for the report
    warnings: tuple[str, ...] = ()

    def to_frame(self, *, lists: bool = True, evidence: bool = True) -> Any:
        """Every gene as a pandas DataFrame indexed by gene id, best first: ``symbol`` (when
        known), ``rank``, ``score``, the fusion's per-gene statistics (e.g. ``q_value``),
        ``rank:<list>`` per list (``lists``) and ``evidence`` (``evidence``, when known) --
        the table of ranking.tsv."""
        df = self.final.to_frame(self.symbols, lists=lists)
        if evidence and self.evidence is not None:
            ev = self.evidence
            df["evidence"] = [ev.get(g, "") for g in df.index]
        return df

    def top(self, n: int = 20) -> Any:
        """The ``n`` best genes as a pandas DataFrame indexed by gene id: ``symbol`` (when
        known), ``rank``, ``score``, the fusion's per-gene statistics (``q_value``, ...) and,
        with sample labels, ``higher_in`` (the group of highest mean), ``versus`` and
        ``effect`` (difference of group means on log-scale data, else their ratio;
        :mod:`kofs.report.effects`)."""
        df = self.final.to_frame(self.symbols, lists=False).iloc[: max(0, int(n))].copy()
        labels = self.labels
        if labels is not None and len(set(labels.labels) - {""}) >= 2 and len(df):
            from kofs.report.effects import columns, gene_effects

            index = self.expression.gene_index()
            idx = [index[g] for g in df.index]
            effects = gene_effects(
                columns(self.expression.values, idx),
                list(labels.labels),
                sparse=self.expression.is_sparse or self.expression.is_chunked,
            )
            df["higher_in"] = [e.group if e else "" for e in effects]
            df["versus"] = [e.versus if e else "" for e in effects]
            df["effect"] = [e.effect if e else np.nan for e in effects]
        return df

    def weights_frame(self) -> Any:
        """The list weights with their intervals as a DataFrame
        (:meth:`kofs.types.AggregateRanking.weights_frame`)."""
        return self.final.weights_frame()

    def __repr__(self) -> str:
        e, f = self.expression, self.final
        names = [(self.symbols or {}).get(g, g) for g in f.top(5)]
        return (
            f"<RunResult: {e.n_samples:,} samples x {e.n_genes:,} genes, "
            f"{len(self.lists)} lists fused by {f.method}; top: {', '.join(names)}>"
        )

    def _repr_html_(self) -> str:
        return f"<p>{_html_escape(repr(self))}</p>" + self.top(10).to_html()


def relevant_gene_ids(
    expression: Expression, genes: Iterable[str], *, path: str | None = None
) -> tuple[str, ...]:
    """The matrix's gene ids of the user's relevant genes (absent ones dropped with a warning)."""
    genes = list(genes)
    mapping, report = match_gene_ids(genes, expression, source="relevant genes", path=path)
    if report.dropped or report.ambiguous:
        log.warning(
            "relevant genes: %d of %d not in the matrix (dropped)",
            report.dropped + report.ambiguous,
            len(genes),
        )
    return tuple(expression.genes[i] for i in sorted(set(mapping.values())))


#: Largest |value| ranked: squares and Gram products of larger values overflow float64.
MAX_ABS_VALUE = 1e100
#: Smallest largest-|value| of a varying gene: squares of smaller values underflow float64.
MIN_ABS_VALUE = 1e-100
#: A matrix whose values (the first COUNTS_SAMPLE stored ones) are non-negative integers with a
#: maximum of at least COUNTS_MIN_MAX looks like raw counts: one warning line (log-scale
#: expression rarely exceeds 30).
COUNTS_MIN_MAX = 100
COUNTS_SAMPLE = 1_000_000


def check_magnitude(expression: Expression) -> float | None:
    """Refuse a matrix the rankers cannot rank (InputError naming the file).

    * values beyond :data:`MAX_ABS_VALUE` (their squares overflow);
    * every gene constant across the samples (:func:`kofs._compute.ranks.constant_range`, a relative
      test): all genes would tie;
    * a varying gene whose values all lie below :data:`MIN_ABS_VALUE` in magnitude (e.g. data
      multiplied by 1e-200): variances and distances underflow to 0;
    * a chunked (Dask) matrix holding NaN or infinite values, or a malformed sparse chunk (an
      in-memory matrix is checked when it is read).

    A chunked matrix is checked from its per-gene moments (one pass over the chunks, shared
    with the rankers that need them); the raw-counts test looks at its first chunk.

    Returns
    -------
    float or None
        The largest value when the matrix looks like raw counts (non-negative integers, the
        first :data:`COUNTS_SAMPLE` stored values, reaching :data:`COUNTS_MIN_MAX`), for
        :func:`warn_raw_counts`; else None.
    """
    X = expression.values
    if expression.is_chunked:
        from kofs._compute import chunked

        try:  # the first pass over the file: a damaged one fails here
            mom = chunked.moments(X)
        except KofsError:
            raise
        except (OSError, ValueError, KeyError, IndexError, TypeError) as exc:
            raise InputError(
                f"cannot read the matrix chunk by chunk ({type(exc).__name__}: {exc})",
                path=expression.source,
            ) from None
        if mom.malformed:
            raise InputError(f"malformed sparse matrix ({mom.malformed})", path=expression.source)
        if mom.nonfinite:
            raise InputError(
                f"holds {mom.nonfinite} NaN or infinite value(s); fix or impute them",
                path=expression.source,
            )
        hi, lo = mom.hi[0], mom.lo[0]
        top = float(max(hi.max(), -lo.min()))  # max |x|
        first = chunked.row_chunks(X)[0][0].compute()
        sample = np.ravel(first.data if sp.issparse(first) else first)[:COUNTS_SAMPLE]
    elif sp.issparse(X):
        if X.shape[0] == 0 or X.shape[1] == 0:
            return None
        hi, lo = column_range(X)  # implicit zeros included
        top = float(max(hi.max(), -lo.min()))
        sample = X.data[:COUNTS_SAMPLE]
    else:
        X = np.asarray(X)
        if X.size == 0 or np.isnan(X).all():
            return None
        hi, lo = X.max(axis=0), X.min(axis=0)  # NaN in a column: not constant, not tiny
        top = float(max(np.nanmax(X), -np.nanmin(X)))  # over every value, NaN aside
        sample = np.ravel(X)[:COUNTS_SAMPLE]
    if top > MAX_ABS_VALUE:
        raise InputError(
            f"values as large as {top:.3g}: beyond {MAX_ABS_VALUE:g} their squares "
            "overflow the statistics; log-transform or rescale the data",
            path=expression.source,
        )
    constant = constant_range(hi, lo)
    if constant.all():
        n, m = expression.values.shape
        raise InputError(
            f"all {m} genes are constant across the {n} samples"
            f"{' (all values 0)' if top == 0 else ''}: nothing to rank; check the file "
            "(wrong column? all-zero export?)",
            path=expression.source,
        )
    scale = np.maximum(np.abs(hi), np.abs(lo))
    tiny = np.flatnonzero(~constant & (scale < MIN_ABS_VALUE))
    if tiny.size:
        g = int(tiny[0])
        raise InputError(
            f"{tiny.size} varying gene(s) have values no larger than {scale[g]:.3g} in magnitude "
            f"(e.g. {expression.genes[g]!r}): below {MIN_ABS_VALUE:g} their squares underflow "
            "to 0 and every statistic ties; rescale the data (multiply it by a constant)",
            path=expression.source,
        )
    n_const = int(constant.sum())
    if n_const:
        log.info("%d constant genes are ranked last", n_const)
    if (
        top >= COUNTS_MIN_MAX
        and sample.size
        and sample.min() >= 0
        and np.array_equal(sample, np.round(sample))
    ):
        return top
    return None


def warn_raw_counts(expression: Expression, top: float | None, rankers: Sequence[str]) -> None:
    """One warning line when a matrix that looks like raw counts (``top``: its largest value,
    from :func:`check_magnitude`) goes to rankers that rank values as given (the rankers
    registered with ``counts=True`` model or normalise counts themselves)."""
    given = [r for r in dict.fromkeys(rankers) if r in RANKERS and not RANKERS.get(r).counts]
    if top is None or not given:
        return
    where = f"{expression.source}: " if expression.source else ""
    log.warning(
        "%svalues are non-negative integers up to %.0f (raw counts?): %s rank them as given; "
        "normalise and log-transform them first for the usual analysis (e.g. scanpy's "
        "normalize_total + log1p, or log2(x + 1) of normalised counts), or use rankers that "
        "model counts (%s)",
        where,
        top,
        ", ".join(given),
        ", ".join(s.name for s in RANKERS if s.counts),
    )


def check_ranker_memory(
    context: Context, plan: ListPlan, inputs: RankerInputs, params: Mapping[str, Any]
) -> None:
    """Fail early when a list's ranker would exceed ``context.max_memory``."""
    if context.max_memory is None:
        return
    spec = RANKERS.get(plan.ranker)
    sim = inputs.similarity
    n, m = context.expression.values.shape
    given = None if sim is None else ("dense" if isinstance(sim.matrix, np.ndarray) else "sparse")
    full = resolve_params(f"ranker {plan.ranker!r}", spec.params, params)
    need = estimate_ranker(plan.ranker, n, m, params=full, given_similarity=given)
    # the registry's estimates count two dense float64 copies of X: a sparse-capable ranker on
    # sparse X holds two CSR copies instead, on chunked X only per-gene vectors; any other
    # ranker densifies, and the sparse original stays alive
    nnz = context.expression.values.nnz if context.expression.is_sparse else None
    if context.expression.is_chunked and spec.sparse:
        # X stays on disk: per-gene vectors, and for a graph ranker the graph and the chunks
        # held at once by the graph term (kofs._compute.chunked.GRAPH_MEMORY)
        need = 4 * 8 * m
        if "graph" in spec.params or "similarity" in spec.params:
            if given == "sparse" and sim is not None:
                graph = 2 * 12 * sim.matrix.nnz
            elif given == "dense":
                graph = 3 * 8 * n * n
            else:
                graph = estimate_knn_graph(n, 0, k=int(full.get("k") or 10))
            need += graph + GRAPH_MEMORY
    elif nnz is not None and spec.sparse:
        # every n x m term of the estimate (the copies of X, a kNN graph's centred copy) is a
        # CSR matrix here: estimate with the number of genes whose dense size is the CSR's
        m_csr = max(1, min(m, -(-(12 * nnz + 8 * (n + 1)) // (8 * n))))
        need = estimate_ranker(plan.ranker, n, m_csr, params=full, given_similarity=given)
    elif nnz is not None:
        need += 12 * nnz + 8 * (n + 1)
    hint = (
        f"a sparser similarity (--param {plan.ranker}.similarity=knn), "
        if "similarity" in spec.params
        else ""
    )
    if nnz is not None and not spec.sparse:
        capable = ", ".join(s.name for s in RANKERS if s.sparse)
        hint = f"a ranker that works on sparse data ({capable}), " + hint
    check_memory(
        need,
        limit=context.max_memory,
        what=f"list {plan.name} ({plan.ranker})",
        suggestion=f"use {hint}fewer genes (filter the matrix) or leave the list out",
    )


def build_lists(
    context: Context,
    plans: Sequence[ListPlan],
    *,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    threads: int | None = None,
    timings: dict[str, float] | None = None,
) -> list[Ranking]:
    """Build every planned list (parameters checked first, memory checked per list, BLAS and
    worker threads capped by ``threads``)."""
    if not plans:
        raise ParameterError("nothing to rank: no ranker applies to the given inputs")
    names = [p.name for p in plans]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise ParameterError(f"list names must be unique, repeated: {', '.join(sorted(dup))}")
    params = dict(params or {})
    unknown = set(params) - set(names) - {p.ranker for p in plans}
    if unknown:
        raise ParameterError(
            "--param: " + unknown_message("list or ranker", sorted(unknown)[0], names)
        )
    per_list = {}
    for plan in plans:  # every parameter is checked before any work starts
        p = {**plan.params, **params.get(plan.ranker, {}), **params.get(plan.name, {})}
        if "n_jobs" in RANKERS.get(plan.ranker).params and "n_jobs" not in p:
            p["n_jobs"] = threads or os.cpu_count() or 1  # --threads also sets worker counts
        resolve_params(f"ranker {plan.ranker!r}", RANKERS.get(plan.ranker).params, p)
        per_list[plan.name] = p
    timings = {} if timings is None else timings
    lists: list[Ranking] = []
    with threadpool_limits(limits=threads):
        for plan in task(context.progress, "lists", total=len(plans)).each(plans):
            t0 = time.perf_counter()
            inputs = plan.build_inputs(context)
            p = per_list[plan.name]
            check_ranker_memory(context, plan, inputs, p)
            ranking = run_ranker(
                plan.ranker,
                context.expression,
                inputs,
                seed=context.seed,
                list_name=plan.name,
                params=p,
            )
            lists.append(ranking)
            timings[f"rank:{plan.name}"] = round(time.perf_counter() - t0, 4)
            log.info("list %s built in %.2f s", plan.name, timings[f"rank:{plan.name}"])
    return lists


#: Supervision levels of the list weights.
SUPERVISION = ("none", "genes", "labels")

#: Paired bootstrap replicates of the label reliabilities behind the soft label weights (cheap:
#: the per-sample 1-NN outcomes are resampled, nothing is re-fitted).
RULE_REPLICATES = 200


def default_supervision(relevant_genes, labels) -> str:
    """``"genes"`` with known relevant genes, else ``"labels"`` with sample labels, else
    ``"none"`` (chosen by measurement on ALL: docs/aggregation.md, "Defaults")."""
    if relevant_genes:
        return "genes"
    return "labels" if labels is not None else "none"


def aggregate_supervised(
    context: Context,
    lists: Sequence[Ranking],
    method: str,
    *,
    params: Mapping[str, Any] | None = None,
    supervision: str | None = None,
    built_from: Mapping[str, Sequence[str]] | None = None,
    held_out: Mapping[str, Sequence[tuple[Sequence[str], Ranking]]] | None = None,
    bootstrap: int = 200,
) -> AggregateRanking:
    """Aggregate ``lists`` at the requested supervision level (see :func:`run_plan`);
    ``held_out``: the cross-fit of the seeded lists (:func:`kofs.pipeline.reseeding.reseeded_lists`),
    used by aggregators with list context (``posterior``)."""
    from kofs.aggregate.supervision import label_reliabilities, soft_label_weights

    level = supervision or default_supervision(context.relevant_genes, context.categories)
    if level not in SUPERVISION:
        raise ParameterError(
            f"supervision must be one of {', '.join(SUPERVISION)}, got {supervision!r}"
        )
    if level == "labels" and not AGGREGATORS.get(method).context:
        if supervision is not None:
            raise ParameterError(
                f"supervision 'labels' needs an aggregator that takes list weights "
                f"(posterior), not {method!r}"
            )
        level = "none"  # the default only: the book's EM and the rank statistics ignore labels
    if level == "labels" and supervision is None and len(lists) < 2:
        level = "none"  # one list: nothing to weigh
    if level == "labels" and supervision is None:
        assert context.categories is not None
        _, counts = np.unique(np.asarray(context.categories.labels), return_counts=True)
        if len(counts) < 2 or counts.min() < 2:
            level = "none"  # the default only: no cross-validation with a one-sample class
    relevant = None
    list_weights = None
    replicates = None
    label_rule = None
    if level == "genes":
        if not context.relevant_genes:
            raise ParameterError(
                "supervision 'genes' needs known relevant genes (--relevant-genes)"
            )
        relevant = context.relevant_genes
    elif level == "labels":
        if context.categories is None:
            raise ParameterError("supervision 'labels' needs sample labels (--labels)")
        # only the data lists' predictive value is asked: knowledge lists enter the prior
        data = [r for r in lists if not _knowledge_list(r)]
        genes, R = partial_rank_matrix(data)
        index = context.expression.gene_index()
        cols = np.fromiter((index[g] for g in genes), dtype=np.int64, count=len(genes))
        raw, reps = label_reliabilities(
            context.expression.values[:, cols],
            context.categories.labels,
            R,
            seed=context.seed,
            genes=genes,
            samples=context.expression.samples,
            n_boot=max(bootstrap, RULE_REPLICATES),
            refit=_supervised_refit(context, data, genes),
        )
        v, p_best = soft_label_weights(raw, reps)
        names = [r.name for r in data]
        list_weights = dict(zip(names, map(float, v), strict=True))
        label_rule = {
            "rule": "soft: chance of being the most predictive list, over the likeliest's",
            "reliability": dict(zip(names, map(float, raw), strict=True)),
            "p_best": dict(zip(names, map(float, p_best), strict=True)),
        }
        if bootstrap > 0 and reps is not None:
            replicates = {n: reps[:bootstrap, j] for j, n in enumerate(names)}
        for r in lists:
            if _knowledge_list(r):  # not used by the fusion (prior lists), present for the runner
                list_weights[r.name] = 1.0
                if replicates is not None:
                    replicates[r.name] = np.ones(len(next(iter(replicates.values()))))
    fused = aggregate_lists(
        lists,
        method,
        relevant_genes=relevant,
        params=params,
        built_from=built_from or None,
        held_out=(held_out or None) if AGGREGATORS.get(method).context else None,
        list_weights=list_weights,
        list_weight_replicates=replicates,
        covariates=_study_bias(context) if AGGREGATORS.get(method).context else None,
        bootstrap=bootstrap,
        seed=context.seed,
    )
    if label_rule is not None:
        fused = replace(fused, diagnostics={**fused.diagnostics, "label_reliability": label_rule})
    return fused


def _knowledge_list(r: Ranking) -> bool:
    name = str(r.params.get("ranker"))
    return name in RANKERS and RANKERS.get(name).family == "knowledge"


def _study_bias(context: Context) -> dict[str, dict[str, float]] | None:
    """The prior's study-bias covariate: ``log(1 + number of annotations and interactions)``
    of every gene, over the knowledge sources of the run (GO terms with the true-path rule,
    gene sets, interaction partners: what their evidence hooks provide). None without
    knowledge sources. Well-studied genes head every knowledge list; with this covariate the
    prior learns what being studied predicts by itself, and a knowledge list earns only what
    it adds to that."""
    from kofs.sources import SOURCES
    from kofs.types import FeatureFunctions

    sources = context.sources
    if sources is None or not getattr(sources, "data", None):
        return None
    genes = context.expression.genes
    count = np.zeros(len(genes))
    used = False
    for spec in SOURCES:
        if spec.evidence is None or spec.name not in sources:
            continue
        for part in spec.evidence(context):
            k = part.knowledge
            index = {g: i for i, g in enumerate(genes)}
            rows = np.fromiter((index.get(g, -1) for g in k.genes), np.int64, len(k.genes))
            if isinstance(k, FeatureFunctions):
                per_gene = np.asarray((k.incidence != 0).sum(axis=1)).ravel()
            else:
                W = k.matrix
                per_gene = (
                    np.asarray((W != 0).sum(axis=1)).ravel()
                    + np.asarray((W != 0).sum(axis=0)).ravel()
                )
            ok = rows >= 0
            np.add.at(count, rows[ok], per_gene[ok])
            used = True
    if not used:
        return None
    return {"study bias": dict(zip(genes, np.log1p(count).tolist(), strict=True))}


def _supervised_refit(context: Context, lists: Sequence[Ranking], genes: Sequence[str]):
    """The ``refit`` of :func:`~kofs.aggregate.supervision.label_reliabilities`: the lists of a
    ranker that needs the labels (Fisher score, ReliefF, ...) re-built on a subset of the
    samples, with the same parameters; None when no list needs them."""
    supervised = {
        j: r
        for j, r in enumerate(lists)
        if r.params.get("ranker") in RANKERS and RANKERS.get(r.params["ranker"]).supervised
    }
    if not supervised:
        return None
    assert context.categories is not None
    labels = np.asarray(context.categories.labels, dtype=object)
    name = context.categories.name
    samples = context.expression.samples

    def refit(rows: np.ndarray) -> dict[int, np.ndarray]:
        sub = context.expression.subset_samples(rows)
        inputs = RankerInputs(
            categories=SampleCategories(
                tuple(labels[rows]), tuple(samples[i] for i in rows), name=name
            )
        )
        out = {}
        for j, r in supervised.items():
            params = {k: v for k, v in r.params.items() if k != "ranker"}
            again = run_ranker(r.params["ranker"], sub, inputs, seed=context.seed, params=params)
            index = {gene: i for i, gene in enumerate(again.genes)}
            ranks = np.asarray(again.ranks, dtype=np.float64)
            out[j] = np.array([ranks[index[gene]] if gene in index else np.nan for gene in genes])
        return out

    return refit


def _with_nuisance(
    context: Context, lists: list[Ranking], timings: dict[str, float]
) -> list[Ranking]:
    """Every list with ``info["nuisance"]``: how much of its top falls in nuisance programmes
    (:func:`kofs.knowledge.programmes.list_nuisance`)."""
    from kofs.knowledge.programmes import list_nuisance

    t0 = time.perf_counter()
    with threadpool_limits(limits=1, user_api="blas"):  # small matrices: threads only cost
        found = list_nuisance(context.expression, lists, seed=context.seed)
    timings["nuisance"] = round(time.perf_counter() - t0, 4)
    return [replace(r, info={**r.info, "nuisance": f}) for r, f in zip(lists, found, strict=True)]


def run_plan(
    context: Context,
    plans: Sequence[ListPlan],
    *,
    aggregate: str = DEFAULT_AGGREGATOR,
    aggregate_params: Mapping[str, Any] | None = None,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    threads: int | None = None,
    settings: Mapping[str, Any] | None = None,
    built_from: Mapping[str, Sequence[str]] | None = None,
    supervision: str | None = None,
    bootstrap: int = 200,
    cross_fit: int = 5,
) -> RunResult:
    """Build every planned list (:func:`build_lists`) and aggregate them.

    ``supervision`` (:data:`SUPERVISION`): ``"none"``, ``"genes"`` (the context's relevant
    genes supervise the weights) or ``"labels"`` (list weights = cross-validated predictive
    value on the context's samples, :func:`kofs.aggregate.supervision.label_reliabilities`);
    None = :func:`default_supervision`. ``built_from`` maps list names to the genes they were
    seeded from (never scored on them). ``cross_fit`` = K >= 2: with an aggregator that takes
    list context (``posterior``), each seeded list is rebuilt from K-1 folds of its seed genes
    and scored on the held-out fold (:mod:`kofs.pipeline.reseeding`); 0: its seed genes are left out of
    its scoring.
    """
    from kofs.pipeline.reseeding import reseeded_lists

    timings: dict[str, float] = {}
    lists = build_lists(context, plans, params=params, threads=threads, timings=timings)
    lists = _with_nuisance(context, lists, timings)
    held_out: dict = {}
    excluded: dict[str, str] = {}
    if built_from and AGGREGATORS.get(aggregate).context:
        held_out, excluded = reseeded_lists(
            context,
            plans,
            built_from,
            build=build_lists,
            folds=cross_fit,
            params=params,
            threads=threads,
            timings=timings,
        )
    with threadpool_limits(limits=threads):
        t0 = time.perf_counter()
        final = aggregate_supervised(
            context,
            lists,
            aggregate,
            params=aggregate_params,
            supervision=supervision,
            built_from=built_from,
            held_out=held_out,
            bootstrap=bootstrap,
        )
        timings["aggregate"] = round(time.perf_counter() - t0, 4)
    for name, why in excluded.items():
        record = final.diagnostics.get("cross_fit", {}).get(name)
        if record is not None:
            record["reason"] = why
    return RunResult(
        expression=context.expression,
        final=final,
        lists=tuple(lists),
        coverage=tuple(context.coverage),
        timings=timings,
        settings=dict(settings or {}),
    )


#: The keywords of :func:`rank` besides the options of :class:`~kofs.pipeline.config.RunConfig`: the
#: things a Python caller holds in memory, the configuration itself and a progress callback.
RANK_KEYWORDS = ("labels", "relevant_genes", "sources", "config", "progress")

#: RunConfig options that read the matrix or a labels file, or write the output folder
#: (``kofs.run``'s work): :func:`rank`, given the matrix itself, warns when one is set.
FILE_OPTIONS = (
    "expression",
    "gene_column",
    "duplicate_genes",
    "missing_values",
    "decimal",
    "chunk_size",
    "output",
    "top",
    "no_report",
    "title",
)


def rank(
    data: Any,
    *,
    labels: SampleCategories | str | Sequence[Any] | None = None,
    relevant_genes: Iterable[str] | str | os.PathLike | None = None,
    sources: KnowledgeSources | None = None,
    config: Any = None,
    progress: Progress | None = None,
    **overrides: Any,
) -> RunResult:
    """Rank the genes of ``data`` with every list the inputs allow and fuse the lists.

    The objects-in entry point (``kofs.rank``); :func:`kofs.pipeline.run.run` runs a whole
    :class:`~kofs.pipeline.config.RunConfig` from files. Both take the same options, declared once in
    :class:`~kofs.pipeline.config.RunConfig`: a keyword here is a YAML key of ``kofs run`` and a long
    option of ``kofs rank`` (``bootstrap=0`` is ``bootstrap: 0`` and ``--bootstrap 0``; the
    list of all is docs/cli.md), checked by its declaration; an unknown keyword is a
    ParameterError with a did-you-mean hint.

    Parameters
    ----------
    data : Expression, pandas.DataFrame, ndarray, scipy.sparse matrix or AnnData
        The matrix, samples (cells) as rows (see :func:`kofs.io.convert.as_expression`): a
        DataFrame may also have genes as rows -- found from the labels' sample ids (a Series'
        index, a SampleCategories' samples) or an index named like a gene column, or given by
        ``genes_in``; an array or sparse matrix gets ids ``sample0..``/``gene0..``; a sparse
        matrix or an AnnData's sparse ``X`` stays sparse. With an AnnData the result is also
        stored in it, scanpy style: ``adata.var["kofs_rank"]``, ``["kofs_score"]``,
        ``["kofs_rank_<list>"]``, ``["kofs_score_<list>"]`` and ``adata.uns["kofs"]``
        (weights, settings, versions); :func:`kofs.io.adata_results.store_result` stores it
        under another key.
    labels : SampleCategories, str or array-like, optional
        The labels themselves (the in-memory form of the ``labels`` option): aligned to the
        samples (:func:`kofs.io.labels.align_labels`); an array-like (list, ndarray, pandas
        Series) holds one label per sample in row order, or a Series is aligned by its index
        (:func:`labels_from_values`); missing values are unlabelled samples. With an AnnData,
        a string names an ``obs`` column (``"cell_type"`` or ``"obs:cell_type"``). Default:
        the ``labels`` file of ``config`` (read with ``label_column``, ``sample_column``,
        ``missing_labels``), if any. Labels enable the supervised rankers and the Fisher list.
    relevant_genes : iterable of str, or path, optional
        Known-relevant genes G (ids, or a file as the ``relevant_genes`` option): supervised
        list weights, term relevance M_rel/M_all, GO-CAN-MAH and the start of relevance
        propagation.
    sources : kofs.sources.KnowledgeSources, optional
        Knowledge already read (:func:`kofs.sources.read_sources`): GO, pathways,
        interactions, graphs, auxiliary data. Or name the files as options (``go=``,
        ``go_annotations=``, ``pathways=``, ``interactions=``, ...), read here; not both.
        With any source the plan is the KOFS list catalogue (book Table 6.3: SPEC, Fisher,
        Pathway-FILT, GO-REL-VOTE, GO-MAH, ...); without, the default single-source rankers.
    config : RunConfig, mapping of options or path of a YAML config, optional
        Options under ``overrides``. Options that read the matrix file or write the output
        folder (:data:`FILE_OPTIONS`) do not apply to a matrix in memory: a warning names
        those set.
    progress : kofs.progress.Progress, optional
        Told about each list and the GO steps (default: nothing reported).
    **overrides
        RunConfig options by name, e.g. ``method`` (``"kofs"`` or ``"msfs"``), ``lists``,
        ``rankers``, ``aggregate`` (default: that of the defaults version, ``"posterior"``),
        ``param`` (``{ranker_or_list: {key: value}}``), ``aggregate_param``
        (``{key: value}``), ``msfs_weights``, ``supervision``, ``bootstrap``, ``cross_fit``,
        ``markers``, ``seed``, ``threads``, ``max_memory`` (``"4G"`` or bytes),
        ``dask_scheduler``, ``defaults`` (the defaults version), ``genes_in`` (a DataFrame's
        orientation) and, with an AnnData, ``layer``, ``use_raw`` and ``use_graph`` (an
        ``obsp`` key; ``True`` = ``"connectivities"``, scanpy's ``pp.neighbors`` graph).

    Returns
    -------
    RunResult
    """
    from kofs.io.convert import as_expression
    from kofs.pipeline.config import all_options, as_config, key_name

    known = [*all_options(), "defaults"]
    for k in overrides:
        if key_name(k) not in known:
            raise ParameterError(_unknown_keyword(str(k), [*RANK_KEYWORDS, *known]))
    if overrides.get("use_graph") is True:
        overrides["use_graph"] = "connectivities"  # the graph scanpy.pp.neighbors makes
    if isinstance(relevant_genes, (str, os.PathLike)):  # a file: the option itself
        overrides["relevant_genes"], relevant_genes = os.fspath(relevant_genes), None
    cfg = as_config(config, **overrides)
    i = cfg.inputs
    unused = list(FILE_OPTIONS)
    path = i.labels if labels is None and i.labels and not i.labels.startswith("obs:") else None
    if path is not None:  # the labels file of the options, read as kofs.run reads it
        from kofs.io.labels import align_labels, read_labels

        labels = file_labels = read_labels(
            path, sample_column=i.sample_column, label_column=i.label_column
        )
    else:
        labels = i.labels if labels is None else labels
        unused += ["label_column", "sample_column", "missing_labels"]
    expression, adata = as_expression(
        data,
        layer=i.layer,
        use_raw=i.use_raw,
        genes_in=i.genes_in,
        sample_ids=_label_sample_ids(labels),
    )
    if path is not None:
        expression, labels = align_labels(
            expression, file_labels, missing=i.missing_labels, labels_path=path
        )
        if adata is not None and i.use_graph and expression.n_samples != adata.n_obs:
            raise ParameterError("use_graph cannot be combined with dropping unlabelled cells")
    categories, similarity = _anndata_knowledge(adata, expression, labels, i.use_graph)
    if relevant_genes is None and i.relevant_genes:
        from kofs.io.genes import read_gene_list

        relevant_genes = read_gene_list(i.relevant_genes)
    if sources is None:
        sources = read_config_sources(cfg, progress=progress)
    elif knowledge_given(cfg):
        raise ParameterError(
            "knowledge given twice: as sources= and as files in the options (go=, pathways=, "
            "...); give one"
        )
    _warn_unused(cfg, unused)
    result = rank_config(
        expression,
        cfg,
        labels=categories,
        relevant_genes=relevant_genes,
        sources=sources,
        similarity=similarity,
        progress=progress,
    )
    if adata is not None:
        from kofs.io.adata_results import store_result

        store_result(adata, result)
    return result


def _unknown_keyword(name: str, known: Sequence[str]) -> str:
    import difflib

    close = difflib.get_close_matches(name, list(known), n=1)
    hint = (
        f"did you mean {close[0]!r}?"
        if close
        else "the keywords are " + ", ".join(RANK_KEYWORDS) + " and the options of "
        "kofs.RunConfig, named as in docs/cli.md"
    )
    return f"kofs.rank: unknown keyword {name!r} ({hint})"


def _warn_unused(config: Any, names: Iterable[str]) -> None:
    """One warning naming the options set in ``config`` that :func:`rank` does not use."""
    from kofs.pipeline.config import all_options

    known = all_options()
    set_ = [n for n in names if config.get(n) != known[n][1].default]
    if set_:
        log.warning(
            "kofs.rank ranks the matrix and labels it is given and writes nothing: %s "
            "ignored (kofs.run reads and writes files)",
            ", ".join(known[n][1].key for n in set_),
        )


def knowledge_given(config: Any) -> bool:
    """Whether ``config`` names knowledge: any knowledge option set, or an id map."""
    return config.inputs.id_map is not None or any(
        k != type(k)() for k in config.knowledge.values()
    )


def open_config_cache(config: Any) -> Any:
    """The GO cache a config asks for (``cache_dir``, ``no_cache``; :mod:`kofs.cache`)."""
    from kofs.cache import open_cache

    res = config.resources
    uses_go = config.knowledge["go"].go is not None
    return open_cache(
        res.cache_dir,
        enabled=not res.no_cache,
        used=uses_go,
        outputs=[config.output.output],
    )


def read_config_sources(config: Any, *, progress: Progress | None = None) -> KnowledgeSources:
    """The knowledge files ``config`` names, read (GO through its cache, under its memory
    limit); empty :class:`KnowledgeSources` when it names none."""
    from kofs.sources import read_sources

    return read_sources(
        config,
        cache=open_config_cache(config),
        max_memory=resolve_limit(config.resources.max_memory),
        progress=progress,
    )


def rank_config(
    expression: Expression,
    config: Any,
    *,
    labels: SampleCategories | None = None,
    relevant_genes: Iterable[str] | None = None,
    sources: KnowledgeSources | None = None,
    similarity: SampleSimilarity | None = None,
    shared: dict[str, Any] | None = None,
    progress: Progress | None = None,
) -> RunResult:
    """Plan, rank, aggregate and explain ``expression`` as the resolved ``config``
    (:class:`~kofs.pipeline.config.RunConfig`) says, from inputs already read: ``labels`` aligned to
    the samples, ``relevant_genes`` (ids), ``sources``, ``similarity`` (a given sample graph,
    used by the graph rankers instead of one built from the data) and ``shared`` (gene-level
    knowledge shared between calls on subsets of the samples: the folds of the honest
    protocol; :class:`kofs.context.Context`). :func:`rank` and :func:`kofs.pipeline.run.run` both
    end here."""
    from kofs.knowledge.evidence import explain
    from kofs.pipeline.config import aggregate_defaults, default_plan
    from kofs.pipeline.plans import built_from, expression_plan, kofs_plan, msfs_plan
    from kofs.pipeline.reseeding import check_folds
    from kofs.sources import SOURCES

    r, a, res = config.ranking, config.aggregation, config.resources
    version, method, aggregate = config.defaults, r.method, a.aggregate
    aggregate_params = {**aggregate_defaults(version, aggregate), **a.aggregate_param}
    cross_fit = check_folds(a.cross_fit)
    markers = r.markers
    categories = labels
    sources = sources or KnowledgeSources()
    counts_top = check_magnitude(expression)
    original, original_labels = expression, categories
    canon = canonicalize(expression, categories)  # every kernel sees genes/samples sorted by id
    if expression.is_chunked and list(expression.samples) != sorted(expression.samples):
        log.warning(
            "%s: the %d cells are not sorted by name; a chunked run keeps the file's order "
            "(sorting would hold the whole matrix in memory). Results can differ from an "
            "in-memory run where kNN distances tie or samples are split into folds; sort the "
            "file for identical results (adata[adata.obs_names.argsort()])",
            expression.source or "matrix",
            expression.n_samples,
        )
    expression, categories = canon.expression, canon.labels
    if similarity is not None:
        similarity = canonical_inputs(RankerInputs(similarity=similarity), canon).similarity
    rel = (
        None
        if relevant_genes is None
        else relevant_gene_ids(
            expression, relevant_genes, path=getattr(relevant_genes, "source", None)
        )
    )
    context = Context(
        expression=expression,
        categories=categories,
        relevant_genes=rel,
        sources=sources,
        seed=res.seed,
        max_memory=resolve_limit(res.max_memory),
        shared={} if shared is None else shared,
        similarity=similarity,
        progress=progress,
    )
    if method != "msfs" and r.msfs_weights is not None:
        log.warning("--msfs-weights is ignored: it weighs the similarities of --method msfs")
    # plans are lazy: knowledge is built inside run_plan, under the thread limit
    if method == "msfs":
        plans = msfs_plan(context, weights=r.msfs_weights)
    elif sources.any() or r.lists is not None:
        plans = kofs_plan(context, r.lists)
        if r.rankers is not None:
            plans += expression_plan(context, r.rankers)
    else:
        sparse = expression.is_sparse or expression.is_chunked
        plan = default_plan(version, sparse=sparse, labels=categories is not None)
        plans = expression_plan(context, r.rankers, default_plan=plan)
    warn_raw_counts(original, counts_top, [p.ranker for p in plans])
    if similarity is not None and not any(
        "similarity" in RANKERS.get(p.ranker).uses for p in plans if p.ranker in RANKERS
    ):
        log.warning(
            "the given cell graph (use_graph) is not used: no ranker of the plan (%s) takes one "
            "(hotspot builds its own cross-fitted graphs); name one that does, e.g. "
            "--rankers morans-i or laplacian",
            ", ".join(p.ranker for p in plans),
        )
    if (
        markers is None
        and categories is not None
        and (expression.is_sparse or expression.is_chunked)
    ):
        markers = "t-test"  # single-cell data with labels: scanpy's rank_genes_groups default
    if markers not in (None, "none") and categories is None:
        raise ParameterError("markers need sample labels (--labels)")
    settings = {
        "markers": None if markers in (None, "none") else markers,
        "method": method,
        "lists": [p.name for p in plans],
        "rankers": [p.ranker for p in plans],
        "aggregate": aggregate,
        "seed": res.seed,
        "params": {k: dict(v) for k, v in r.param.items()},
        "aggregate_params": dict(aggregate_params or {}),
        "relevant_genes": None if rel is None else len(rel),
        "defaults": version,
        "supervision": a.supervision,  # requested; the level used: aggregation.diagnostics
        "bootstrap": a.bootstrap,
        "cross_fit": cross_fit,
    }
    seeded = built_from(context, [p.name for p in plans]) if method == "kofs" else {}
    from kofs._compute.chunked import dask_client

    with dask_client(res.dask_scheduler):
        result = run_plan(
            context,
            plans,
            aggregate=aggregate,
            aggregate_params=aggregate_params,
            params=r.param,
            threads=res.threads,
            settings=settings,
            built_from=seeded,
            supervision=a.supervision,
            bootstrap=a.bootstrap,
            cross_fit=cross_fit,
        )
    tables = None
    if settings["markers"] is not None:
        from kofs.rankers.markers import marker_tables

        assert categories is not None
        t0 = time.perf_counter()
        tables = marker_tables(expression, categories, method=str(settings["markers"]))
        result.timings["markers"] = round(time.perf_counter() - t0, 4)  # type: ignore[index]
    symbols = context.cached(
        "gene_symbols", lambda: source_symbols(expression, sources), gene_level=True
    )
    context.symbols = symbols
    parts = [
        part
        for spec in SOURCES
        if spec.evidence is not None and spec.name in sources
        for part in spec.evidence(context)
    ]
    evidence = explain(parts, expression.genes, result.final.ranks, symbols=symbols)
    result = replace(
        result,
        expression=original,
        final=restore_aggregate(result.final, canon),
        lists=tuple(restore_ranking(r, canon) for r in result.lists),
        evidence=evidence,
        sources=sources,
        symbols=symbols,
        labels=original_labels,
        markers=tables,
    )
    return result


def _label_sample_ids(labels: Any) -> list[str] | None:
    """The sample ids labels carry (a SampleCategories' samples, a Series' index), if any."""
    if isinstance(labels, SampleCategories):
        return list(labels.samples)
    pd = sys.modules.get("pandas")  # a Series can only come from a pandas already loaded
    if (
        pd is not None
        and isinstance(labels, pd.Series)
        and not isinstance(labels.index, pd.RangeIndex)
    ):
        return [str(v) for v in labels.index]
    return None


def source_symbols(expression: Expression, sources: Any) -> dict[str, str] | None:
    """Gene symbols of the matrix's genes from the matrix or the sources that pair ids with
    symbols: GO annotations and interactions (:func:`kofs.io.symbols.gene_symbols`)."""
    from kofs.io.symbols import gene_symbols

    go = sources.get("go") if sources is not None else None
    inter = sources.get("interactions") if sources is not None else None
    return gene_symbols(
        expression,
        go_annotations=getattr(go, "annotations", None),
        interactions=getattr(inter, "interactions", None),
    )


def _anndata_knowledge(
    adata: Any, expression: Expression, labels: Any, use_graph: Any
) -> tuple[SampleCategories | None, SampleSimilarity | None]:
    """Labels named by an obs column and the reused obsp graph (AnnData inputs only); labels
    given as an array-like become :class:`SampleCategories` (:func:`labels_from_values`)."""
    if labels is not None and not isinstance(labels, (str, SampleCategories)):
        labels = labels_from_values(labels, expression.samples)
    if adata is None:
        if isinstance(labels, str) or use_graph:
            what = "labels given as an obs column" if isinstance(labels, str) else "use_graph"
            raise ParameterError(f"{what} needs an AnnData input")
        return labels, None
    from kofs.io.single_cell import labels_from_obs

    if isinstance(labels, str):
        column = labels[4:] if labels.startswith("obs:") else labels
        labels = labels_from_obs(adata, column, samples=expression.samples)
    similarity = (
        anndata_graph(adata, use_graph, expression.samples, expression.source)
        if use_graph
        else None
    )
    return labels, similarity


def labels_from_values(values: Any, samples: Sequence[str]) -> SampleCategories:
    """Sample labels from an array-like (list, ndarray, pandas Series or Categorical).

    A pandas Series with a non-default index is aligned to ``samples`` by that index (every
    sample must be there); anything else is positional and must have one value per sample.
    Missing values (None, NaN, "") are unlabelled samples.
    """
    import pandas as pd

    name = getattr(values, "name", None)
    if isinstance(values, pd.Series) and not isinstance(values.index, pd.RangeIndex):
        index = values.index.astype(str)
        if index.has_duplicates:
            raise ParameterError("labels: the labels' index repeats sample ids")
        known = set(index)
        missing = [s for s in samples if s not in known]
        if missing:
            raise ParameterError(
                f"labels: {len(missing)} of the {len(samples)} samples are not in the labels' "
                f"index (first: {missing[0]!r})"
            )
        values = pd.Series(values.to_numpy(), index=index).loc[list(samples)]
    try:
        arr = np.asarray(values, dtype=object)
    except (TypeError, ValueError):
        raise ParameterError(
            f"labels must be SampleCategories, an obs column name or an array-like, got "
            f"{type(values).__name__}"
        ) from None
    if arr.ndim != 1 or len(arr) != len(samples):
        raise ParameterError(
            f"labels have {arr.size} values but the matrix has {len(samples)} samples "
            "(one label per sample, in row order)"
        )
    text = ["" if pd.isna(v) else str(v) for v in arr]
    name = getattr(values, "name", None)
    return SampleCategories(
        tuple(text), tuple(samples), name=str(name) if name is not None else "label"
    )


def anndata_graph(
    adata: Any, use_graph: str | bool, samples: Sequence[str], source: str | None = None
) -> SampleSimilarity:
    """The cell graph ``adata.obsp[key]`` (``True`` = ``"connectivities"``) as a similarity
    (``source``: the file it was read from, named in errors)."""
    key = "connectivities" if use_graph is True else str(use_graph)
    if key not in adata.obsp:
        known = ", ".join(adata.obsp.keys()) or "none (run scanpy.pp.neighbors first)"
        raise ParameterError(
            f"use_graph: adata.obsp has no {key!r}; obsp keys: {known}", path=source
        )
    return SampleSimilarity(
        sp.csr_matrix(adata.obsp[key], dtype=np.float64),
        tuple(samples),
        name=f"obsp:{key}",
        provenance={"builder": "anndata", "obsp": key},
    )
