"""The entry points of a ranking: :func:`rank` (objects in memory: ``kofs.rank``) and
:func:`rank_config` (a resolved RunConfig; both ``kofs.rank`` and :func:`kofs.pipeline.run.run`
end there): plan -> canonical order -> build and fuse the lists (:mod:`kofs.pipeline.build`)
-> marker tables, symbols, evidence -> :class:`~kofs.pipeline.result.RunResult` in the
caller's order. Writing is :mod:`kofs.pipeline.write`.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from kofs._compute.canonical import (
    canonical_inputs,
    canonicalize,
    restore_aggregate,
    restore_ranking,
)
from kofs._compute.run_cache import kernel_cache
from kofs.context import Context, ListPlan
from kofs.errors import ParameterError, did_you_mean
from kofs.io._fsops import check_api_options
from kofs.io.ids import match_gene_ids
from kofs.pipeline.anndata import anndata_knowledge, label_sample_ids
from kofs.pipeline.build import run_plan
from kofs.pipeline.checks import check_magnitude, warn_raw_counts
from kofs.pipeline.result import RunResult, source_symbols
from kofs.progress import Progress
from kofs.registry import RANKERS
from kofs.resources import resolve_limit
from kofs.sources import KnowledgeSources
from kofs.types import Expression, RankerInputs, SampleCategories, SampleSimilarity

log = logging.getLogger(__name__)


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
    found = sorted(set(mapping.values()))
    if 2 * len(found) > expression.n_genes:
        log.warning(
            "relevant genes: %d of the matrix's %d genes are given as relevant (%s): known "
            "genes that are most of the genes cannot tell relevant from other genes; give the "
            "genes known to matter (not a list of every gene)",
            len(found), expression.n_genes,
            "all of them" if len(found) == expression.n_genes else "more than half",
        )  # fmt: skip
    return tuple(expression.genes[i] for i in found)


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
        ``genes_in``; an array or sparse matrix (genes as rows with ``genes_in="rows"``) gets
        ids ``sample0..``/``gene0..``; a sparse matrix or an AnnData's sparse ``X`` stays
        sparse. With an AnnData the result is also stored in it, scanpy style: ``adata.var["kofs_rank"]``, ``["kofs_score"]``,
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
        ``dask_scheduler``, ``defaults`` (the defaults version), ``genes_in`` (a DataFrame's,
        array's or sparse matrix's orientation) and, with an AnnData, ``layer``, ``use_raw`` and ``use_graph`` (an
        ``obsp`` key; ``True`` = ``"connectivities"``, scanpy's ``pp.neighbors`` graph).

    Returns
    -------
    RunResult
    """
    from kofs.io.convert import as_expression
    from kofs.pipeline.config import all_options, as_config
    from kofs.pipeline.yaml_files import key_name

    check_api_options("rank", progress=progress)
    known = [*all_options(), "defaults"]
    for k in overrides:
        if key_name(k) not in known:
            raise ParameterError(_unknown_keyword(str(k), [*RANK_KEYWORDS, *known]))
    if overrides.get("use_graph") is True:
        overrides["use_graph"] = "connectivities"  # the graph scanpy.pp.neighbors makes
    if isinstance(relevant_genes, (str, os.PathLike)):  # a file: the option itself
        overrides["relevant_genes"], relevant_genes = os.fspath(relevant_genes), None
    elif relevant_genes is not None and not isinstance(relevant_genes, Iterable):
        raise ParameterError(
            "relevant_genes: give gene ids (a list, set or Series) or a file's path, not a "
            f"{type(relevant_genes).__name__}"
        )
    cfg = as_config(config, **overrides)
    i = cfg.inputs
    unused = list(FILE_OPTIONS)
    path = i.labels if labels is None and i.labels and not i.labels.startswith("obs:") else None
    if path is not None:  # the labels file of the options, read as kofs.run reads it
        from kofs.io.labels import align_labels, read_labels

        labels = file_labels = read_labels(
            path,
            sample_column=i.sample_column,
            label_column=i.label_column,
            missing=i.missing_labels,
        )
    else:
        labels = i.labels if labels is None else labels
        unused += ["label_column", "sample_column", "missing_labels"]
    expression, adata = as_expression(
        data,
        layer=i.layer,
        use_raw=i.use_raw,
        genes_in=i.genes_in,
        sample_ids=label_sample_ids(labels),
    )
    if path is not None:
        expression, labels = align_labels(
            expression, file_labels, missing=i.missing_labels, labels_path=path
        )
        if adata is not None and i.use_graph and expression.n_samples != adata.n_obs:
            raise ParameterError("use_graph cannot be combined with dropping unlabelled cells")
    categories, similarity = anndata_knowledge(adata, expression, labels, i.use_graph)
    if relevant_genes is None and i.relevant_genes:
        from kofs.io.genes import read_gene_list

        relevant_genes = read_gene_list(i.relevant_genes)
    if sources is not None and not isinstance(sources, KnowledgeSources):
        raise ParameterError(
            f"sources must be a kofs.sources.KnowledgeSources (kofs.sources.read_sources), got "
            f"a {type(sources).__name__}; knowledge files are options: go=..., pathways=..."
        )
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
    hint = did_you_mean(
        name,
        known,
        "the keywords are " + ", ".join(RANK_KEYWORDS) + " and the options of "
        "kofs.RunConfig, named as in docs/cli.md",
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


def _warn_cross_fit(
    aggregation: Any, aggregate: str, seeded: Mapping[str, Any], *, relevant: bool
) -> None:
    """``--cross-fit`` set when no list is cross-fitted: one warning saying why."""
    from kofs.options import changed, warn_no_effect
    from kofs.registry import AGGREGATORS

    given = changed(aggregation, ["cross_fit"])
    if not seeded:
        warn_no_effect(
            given,
            "it cross-fits the lists seeded by --relevant-genes and the FILT lists, and "
            + ("no list of the run is one" if relevant else "none is given or built"),
        )
    elif not AGGREGATORS.get(aggregate).context:
        warn_no_effect(
            given, f"--aggregate {aggregate} does not cross-fit the seeded lists (posterior does)"
        )


def _warn_bootstrap(aggregation: Any, aggregate: str, supervision: str | None) -> None:
    """``--bootstrap`` set for a fusion that draws no bootstrap: one warning saying why. It
    sets the replicates of em's weight intervals; under supervision by labels, a number above
    :data:`~kofs.pipeline.supervision.RULE_REPLICATES` also adds replicates to the label
    weights (an effect with any fusion)."""
    from kofs.options import changed, warn_no_effect
    from kofs.pipeline.supervision import RULE_REPLICATES
    from kofs.registry import AGGREGATORS

    spec = AGGREGATORS.get(aggregate)
    if spec.diagnose is not None or (
        supervision == "labels" and aggregation.bootstrap > RULE_REPLICATES
    ):
        return
    if "resamples" in spec.params:
        why = (
            f"it sets the replicates of em's weight intervals; --aggregate {aggregate} has "
            "its intervals from its resamples (--aggregate-param resamples=N)"
        )
    else:
        why = f"it sets the replicates of em's weight intervals; --aggregate {aggregate} learns no weights"
    warn_no_effect(changed(aggregation, ["bootstrap"]), why)


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


@kernel_cache()  # one store for the checks, the lists and the markers of this run
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
    from kofs.pipeline.plans import built_from, expression_plan, kofs_plan, msfs_plan
    from kofs.pipeline.presets import aggregate_defaults, default_plan
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
        from kofs.options import changed, warn_no_effect

        warn_no_effect(
            changed(r, ["rankers", "lists"]),
            "--method msfs builds one list, SPEC on the combined sample similarities",
        )
        plans = msfs_plan(context, weights=r.msfs_weights)
    elif sources.any() or r.lists is not None:
        plans = kofs_plan(context, r.lists)
        if r.rankers is not None:
            plans += _beside_catalogue(plans, expression_plan(context, r.rankers))
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
    implicit = markers is None
    if (
        markers is None
        and categories is not None
        and (expression.is_sparse or expression.is_chunked)
    ):
        markers = "t-test"  # single-cell data with labels: scanpy's rank_genes_groups default
    if markers not in (None, "none") and categories is None:
        raise ParameterError("markers need sample labels (--labels)")
    if markers not in (None, "none") and categories is not None:
        from kofs.rankers.markers import marker_groups_problem

        problem = marker_groups_problem(categories)  # before the lists, not after them
        if problem and not implicit:
            raise ParameterError(
                f"{problem} (use --markers none, or merge groups)", path=expression.source
            )
        if problem:  # the single-cell default, not asked for: the run goes on without them
            log.warning("%s: no marker tables are made", problem)
            markers = None
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
    _warn_cross_fit(a, aggregate, seeded, relevant=bool(rel))
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
    _warn_bootstrap(a, aggregate, (result.final.diagnostics or {}).get("supervision"))
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


def _beside_catalogue(catalogue: list[ListPlan], extra: list[ListPlan]) -> list[ListPlan]:
    """The ``--rankers`` lists that are not a catalogue list of the plan again: a ranker that
    takes no sample similarity, run by a catalogue list on the expression and labels alone
    (``--rankers fisher`` beside the catalogue's Fisher), has the same inputs and scores, and a
    second copy would count that evidence twice in an aggregator that does not merge copies
    (``rra``, ``em``, ``borda``); it runs once, with a warning."""
    from kofs.pipeline.plans import DATA_INPUTS

    built = {
        p.ranker: p.name
        for p in catalogue
        if set(p.sources) <= DATA_INPUTS and "similarity" not in RANKERS.get(p.ranker).uses
    }
    out = []
    for p in extra:
        if p.ranker in built:
            log.warning(
                "--rankers %s: the catalogue list %s is that ranker on the same data; it runs "
                "once (as %s)",
                p.ranker, built[p.ranker], built[p.ranker],
            )  # fmt: skip
            continue
        out.append(p)
    return out
