"""The one place that knows the whole flow: plan -> convert -> rank -> aggregate.

:func:`rank` is the Python entry point behind ``kofs rank``; it takes already-read objects
(see :mod:`kofs.io`) and returns a :class:`RunResult`. Writing files is the caller's business
(:func:`kofs.io.output.write_run`).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from kofs.aggregate import aggregate as aggregate_lists
from kofs.errors import InputError, ParameterError
from kofs.io.ids import CoverageReport, match_gene_ids
from kofs.rankers import applicable, run_ranker
from kofs.registry import RANKERS, resolve_params, unknown_message
from kofs.resources import check_memory, estimate_ranker, resolve_limit
from kofs.types import (
    AggregateRanking,
    Expression,
    RankerInputs,
    Ranking,
    SampleCategories,
    SampleSimilarity,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ListPlan:
    """One ranked list to build: a ranker applied to some internal knowledge.

    Attributes
    ----------
    name : str
        Name of the list in the outputs (``"fisher"``, ``"GO-MAH"``, ...).
    ranker : str
        Registry name of the ranker.
    build_inputs : callable
        ``build_inputs(context) -> RankerInputs``; called lazily, so lists not chosen cost nothing.
    params : mapping
        Ranker parameters.
    sources : tuple of str
        Knowledge sources the list depends on (for the summary and the manifest).
    """

    name: str
    ranker: str
    build_inputs: Callable[[Context], RankerInputs]
    params: Mapping[str, Any] = field(default_factory=dict)
    sources: tuple[str, ...] = ("expression",)


@dataclass
class Context:
    """What the plan's builders may use: the matrix, the user's knowledge, a cache."""

    expression: Expression
    categories: SampleCategories | None = None
    relevant_genes: tuple[str, ...] | None = None
    seed: int = 0
    cache: dict[str, Any] = field(default_factory=dict)
    coverage: list[CoverageReport] = field(default_factory=list)
    max_memory: int | None = None  # bytes; None = no check (kofs.resources)
    similarity: SampleSimilarity | None = None  # a given sample graph (e.g. AnnData obsp)

    def cached(self, key: str, build: Callable[[], Any]) -> Any:
        """Build a piece of internal knowledge once per run."""
        if key not in self.cache:
            t0 = time.perf_counter()
            self.cache[key] = build()
            log.info("built %s in %.2f s", key, time.perf_counter() - t0)
        return self.cache[key]


@dataclass(frozen=True)
class RunResult:
    """Everything a run produced."""

    expression: Expression
    final: AggregateRanking
    lists: tuple[Ranking, ...]
    coverage: tuple[CoverageReport, ...]
    timings: Mapping[str, float]
    settings: Mapping[str, Any]
    evidence: Mapping[str, str] | None = None


def expression_plan(context: Context, rankers: Sequence[str] | None = None) -> list[ListPlan]:
    """Lists from single-source rankers on the expression data (and labels if given).

    With ``rankers=None`` every registered ranker in the default plan whose required knowledge
    is available runs (supervised ones only with labels).
    """
    base = RankerInputs(categories=context.categories, similarity=context.similarity)
    names = [s.name for s in RANKERS if s.in_default_plan] if rankers is None else list(rankers)
    plans = []
    for name in names:
        spec = RANKERS.get(name)
        # a ranker asked for by name always runs (the runner explains what it lacks)
        if rankers is None and not applicable(spec, base):
            continue
        plans.append(
            ListPlan(
                name=name,
                ranker=name,
                build_inputs=lambda ctx, b=base: b,
                sources=("expression", *(("labels",) if spec.supervised else ())),
            )
        )
    return plans


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


def check_magnitude(expression: Expression) -> None:
    """Refuse values whose squares would overflow the rankers' statistics (InputError)."""
    X = expression.values
    if expression.is_chunked:
        return  # values are read chunk by chunk; the chunked reductions see them
    if sp.issparse(X):
        X = X.data if X.nnz else np.zeros(1)
    if X.size == 0 or np.isnan(X).all():
        return
    top = max(abs(float(np.nanmax(X))), abs(float(np.nanmin(X))))
    if top > MAX_ABS_VALUE:
        raise InputError(
            f"values as large as {top:.3g}: beyond {MAX_ABS_VALUE:g} their squares "
            "overflow the statistics; log-transform or rescale the data",
            path=expression.source,
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
    nnz = context.expression.values.nnz if context.expression.is_sparse else None
    if context.expression.is_chunked and spec.sparse:
        nnz = 0  # reduced chunk by chunk: only the graph and per-gene vectors are held
    need = estimate_ranker(
        plan.ranker,
        n,
        m,
        params=full,
        given_similarity=given,
        nnz=nnz,
        sparse_capable=spec.sparse,
    )
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


def run_plan(
    context: Context,
    plans: Sequence[ListPlan],
    *,
    aggregate: str = "em",
    aggregate_params: Mapping[str, Any] | None = None,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    threads: int | None = None,
    settings: Mapping[str, Any] | None = None,
) -> RunResult:
    """Build every planned list and aggregate them."""
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
    timings: dict[str, float] = {}
    lists: list[Ranking] = []
    with threadpool_limits(limits=threads):
        for plan in plans:
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
        t0 = time.perf_counter()
        final = aggregate_lists(
            lists, aggregate, relevant_genes=context.relevant_genes, params=aggregate_params
        )
        timings["aggregate"] = round(time.perf_counter() - t0, 4)
    return RunResult(
        expression=context.expression,
        final=final,
        lists=tuple(lists),
        coverage=tuple(context.coverage),
        timings=timings,
        settings=dict(settings or {}),
    )


def rank(
    expression: Any,
    *,
    labels: SampleCategories | str | None = None,
    sources: Any = None,
    method: str = "kofs",
    lists: Sequence[str] | None = None,
    rankers: Sequence[str] | None = None,
    aggregate: str = "em",
    relevant_genes: Iterable[str] | None = None,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    aggregate_params: Mapping[str, Any] | None = None,
    msfs_weights: Sequence[float] | None = None,
    seed: int = 0,
    threads: int | None = None,
    max_memory: int | None = None,
    layer: str | None = None,
    use_raw: bool = False,
    use_graph: str | bool | None = None,
    key_added: str = "kofs",
    dask_scheduler: str | None = None,
) -> RunResult:
    """Rank the genes of ``expression`` with every list the inputs allow and fuse the lists.

    Parameters
    ----------
    expression : Expression, pandas.DataFrame, ndarray, scipy.sparse matrix or AnnData
        The matrix, samples (cells) as rows (see :func:`kofs.io.convert.as_expression`): a
        DataFrame has samples as rows and genes as numeric columns; an array or sparse matrix
        gets ids ``sample0..``/``gene0..``; a sparse matrix or an AnnData's sparse ``X`` stays
        sparse. With an AnnData the result is also stored in it, scanpy style:
        ``adata.var["kofs_rank"]``, ``["kofs_score"]``, ``["kofs_rank_<list>"]``,
        ``["kofs_score_<list>"]`` and ``adata.uns["kofs"]`` (weights, settings, versions).
    labels : SampleCategories or str, optional
        Aligned to ``expression.samples`` (see :func:`kofs.io.labels.align_labels`); enables the
        supervised rankers and the Fisher list. With an AnnData, a string names an ``obs``
        column (``"cell_type"`` or ``"obs:cell_type"``).
    sources : kofs.plans.KnowledgeSources, optional
        GO, pathways, interactions, auxiliary data. With any source the plan is the KOFS list
        catalogue (book Table 6.3: SPEC, Fisher, Pathway-FILT, GO-REL-VOTE, GO-MAH, ...);
        without, every default single-source ranker the inputs allow.
    method : {"kofs", "msfs"}
        ``"msfs"``: one list, SPEC on the combined sample similarities (book Alg. 9).
    lists : sequence of str, optional
        Catalogue lists to build (default: all the sources allow).
    rankers : sequence of str, optional
        Single-source rankers by registry name (added to the knowledge lists).
    aggregate : str
        Aggregator name (``"em"``, ``"borda"``, ...).
    relevant_genes : iterable of str, optional
        Known-relevant genes G: supervised EM (KOFS_Prob-SUP), term relevance M_rel/M_all,
        GO-CAN-MAH and the start of relevance propagation.
    params : mapping, optional
        ``{ranker_or_list_name: {param: value}}``.
    aggregate_params : mapping, optional
    msfs_weights : sequence of float, optional
        MSFS similarity weights (default equal).
    seed : int
    threads : int, optional
        Cap on BLAS/OpenMP threads.
    max_memory : int, optional
        Memory limit in bytes for the big steps (:mod:`kofs.resources`); default 80 % of the
        total RAM. A step estimated above it raises ``ResourceError`` before it starts.
    layer : str, optional
        AnnData only: rank ``adata.layers[layer]`` instead of ``X``.
    use_raw : bool
        AnnData only: rank ``adata.raw.X``.
    use_graph : str or bool, optional
        AnnData only: reuse the cell graph ``adata.obsp[use_graph]`` (``True`` =
        ``"connectivities"``, as made by ``scanpy.pp.neighbors``) as the sample similarity of
        the graph rankers instead of building a kNN graph.
    key_added : str
        AnnData only: prefix of the ``var`` columns and key of ``uns`` written.
    dask_scheduler : str, optional
        Address of a ``dask.distributed`` scheduler (``tcp://host:8786``) on which the chunked
        computations of a dask-array matrix run; default: Dask's local scheduler.

    Returns
    -------
    RunResult
    """
    from kofs.evidence import gene_evidence
    from kofs.io.convert import as_expression
    from kofs.plans import KnowledgeSources, kofs_plan, msfs_plan

    if method not in ("kofs", "msfs"):
        raise ParameterError(f"method must be 'kofs' or 'msfs', got {method!r}")
    expression, adata = as_expression(expression, layer=layer, use_raw=use_raw)
    labels, similarity = _anndata_knowledge(adata, expression, labels, use_graph)
    sources = sources or KnowledgeSources()
    check_magnitude(expression)
    rel = (
        None
        if relevant_genes is None
        else relevant_gene_ids(
            expression, relevant_genes, path=getattr(relevant_genes, "source", None)
        )
    )
    context = Context(
        expression=expression,
        categories=labels,
        relevant_genes=rel,
        seed=seed,
        max_memory=resolve_limit(max_memory),
        similarity=similarity,
    )
    # plans are lazy: knowledge is built inside run_plan, under the thread limit
    if method == "msfs":
        plans = msfs_plan(context, sources, weights=msfs_weights)
    elif sources.any() or lists is not None:
        plans = kofs_plan(context, sources, lists)
        if rankers is not None:
            plans += expression_plan(context, rankers)
    else:
        plans = expression_plan(context, rankers)
    settings = {
        "method": method,
        "lists": [p.name for p in plans],
        "rankers": [p.ranker for p in plans],
        "aggregate": aggregate,
        "seed": seed,
        "params": {k: dict(v) for k, v in (params or {}).items()},
        "aggregate_params": dict(aggregate_params or {}),
        "relevant_genes": None if rel is None else len(rel),
    }
    from kofs._chunked import dask_client

    with dask_client(dask_scheduler):
        result = run_plan(
            context,
            plans,
            aggregate=aggregate,
            aggregate_params=aggregate_params,
            params=params,
            threads=threads,
            settings=settings,
        )
    evidence = gene_evidence(context.cache, expression.genes)
    result = replace(result, evidence=evidence)
    if adata is not None:
        from kofs.io.adata_results import store_result

        store_result(adata, result, key=key_added)
    return result


def _anndata_knowledge(adata, expression: Expression, labels, use_graph):
    """Labels named by an obs column and the reused obsp graph (AnnData inputs only)."""
    if adata is None:
        if isinstance(labels, str) or use_graph:
            what = "labels given as an obs column" if isinstance(labels, str) else "use_graph"
            raise ParameterError(f"{what} needs an AnnData input")
        return labels, None
    from kofs.io.single_cell import labels_from_obs

    if isinstance(labels, str):
        column = labels[4:] if labels.startswith("obs:") else labels
        labels = labels_from_obs(adata, column, samples=expression.samples)
    similarity = None
    if use_graph:
        key = "connectivities" if use_graph is True else str(use_graph)
        if key not in adata.obsp:
            known = ", ".join(adata.obsp.keys()) or "none (run scanpy.pp.neighbors first)"
            raise ParameterError(f"use_graph: adata.obsp has no {key!r}; obsp keys: {known}")
        similarity = SampleSimilarity(
            sp.csr_matrix(adata.obsp[key], dtype=np.float64),
            expression.samples,
            name=f"obsp:{key}",
            provenance={"builder": "anndata", "obsp": key},
        )
    return labels, similarity
