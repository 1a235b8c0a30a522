"""Build the planned lists (parameters and memory checked first, threads capped) and fuse them
(:func:`run_plan`), with the nuisance share of each list and the cross-fit of seeded lists."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from threadpoolctl import threadpool_limits

from kofs._compute.run_cache import kernel_cache
from kofs.context import Context, ListPlan
from kofs.errors import ParameterError
from kofs.pipeline.checks import check_ranker_memory
from kofs.pipeline.result import RunResult
from kofs.pipeline.supervision import aggregate_supervised
from kofs.progress import task
from kofs.rankers import run_ranker
from kofs.registry import AGGREGATORS, DEFAULT_AGGREGATOR, RANKERS, resolve_params, unknown_message
from kofs.types import Ranking

log = logging.getLogger(__name__)


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
        first = sorted(unknown)[0]
        if first in RANKERS.names():  # a ranker kofs has, but no list of this run uses it
            used = sorted({p.ranker for p in plans})
            raise ParameterError(
                f"--param: ranker {first!r} builds no list of this run (its rankers: "
                f"{', '.join(used)}; its lists: {', '.join(names)}); add it with --rankers, or "
                "drop the parameter"
            )
        raise ParameterError("--param: " + unknown_message("list or ranker", first, names))
    per_list = {}
    for plan in plans:  # every parameter is checked before any work starts
        p = {**plan.params, **params.get(plan.ranker, {}), **params.get(plan.name, {})}
        if "n_jobs" in RANKERS.get(plan.ranker).params and "n_jobs" not in p:
            p["n_jobs"] = threads or os.cpu_count() or 1  # --threads also sets worker counts
        resolve_params(f"ranker {plan.ranker!r}", RANKERS.get(plan.ranker).params, p)
        per_list[plan.name] = p
    timings = {} if timings is None else timings
    lists: list[Ranking] = []
    with threadpool_limits(limits=threads), kernel_cache(context.kernels):
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
            _warn_tied(ranking, p)
            lists.append(ranking)
            timings[f"rank:{plan.name}"] = round(time.perf_counter() - t0, 4)
            log.info("list %s built in %.2f s", plan.name, timings[f"rank:{plan.name}"])
    return lists


def _warn_tied(ranking: Ranking, params: Mapping[str, Any]) -> None:
    """One warning for a list whose genes all get the same score: it ranks nothing, and the
    run said nothing of it (a Laplacian score of 2 for every gene when
    ``laplacian.t`` is so small that every heat-kernel edge weight is 0)."""
    import numpy as np

    scores = np.asarray(ranking.scores, dtype=float)
    ranks = np.asarray(ranking.ranks, dtype=float)  # ties as the ranks see them (rounded)
    if len(ranks) > 1 and np.isfinite(scores).all() and ranks.min() == ranks.max():
        given = ", ".join(f"{k}={v}" for k, v in params.items() if k != "n_jobs")
        log.warning(
            "list %s: all its %d genes score %g, so it ranks nothing (its genes all tie in the "
            "fusion)%s",
            ranking.name, len(scores), float(np.median(scores)),
            f"; check its parameters ({given})" if given else "",
        )  # fmt: skip


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
