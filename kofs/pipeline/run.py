"""One library call runs a :class:`~kofs.pipeline.config.RunConfig` end to end.

:func:`run` reads the labels, checks memory, reads and aligns the expression matrix, reads the
known genes and every knowledge source, plans, ranks, aggregates and collects evidence, and
returns a :class:`~kofs.pipeline.result.RunResult` that carries its config. :func:`load_inputs` is the
reading half (``kofs evaluate``'s honest protocol reads once and ranks every fold with
:func:`rank_inputs`); :func:`describe` backs ``kofs sources``. Writing files is
:func:`kofs.pipeline.write.write_result`.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from kofs.errors import checked_keywords
from kofs.pipeline.config import RunConfig, as_config
from kofs.pipeline.rank import rank_config, read_config_sources, relevant_gene_ids
from kofs.pipeline.result import RunResult
from kofs.sources import KnowledgeSources
from kofs.types import Expression, SampleCategories, SampleSimilarity

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunInputs:
    """What a config's files hold, read and aligned.

    Attributes
    ----------
    expression : Expression
    labels : SampleCategories, optional
        Aligned to ``expression.samples``.
    relevant_genes : sequence of str, optional
        As read from the file (a :class:`kofs.io.genes.GeneList` naming it; matched to the
        matrix when ranking).
    sources : KnowledgeSources
    similarity : SampleSimilarity, optional
        A cell graph reused from the AnnData (``use_graph``), aligned to the samples.
    """

    expression: Expression
    labels: SampleCategories | None
    relevant_genes: Sequence[str] | None
    sources: KnowledgeSources
    similarity: SampleSimilarity | None = None


def read_single_cell_data(
    config: RunConfig,
) -> tuple[Expression, SampleCategories | None, SampleSimilarity | None]:
    """An .h5ad / 10x input: the matrix (sparse, or chunked with Dask), labels from a file or
    an ``obs`` column, and the reused ``obsp`` graph (``use_graph``)."""
    from kofs.errors import ParameterError
    from kofs.io.labels import align_labels, read_labels
    from kofs.io.single_cell import labels_from_obs, read_single_cell
    from kofs.options import changed, warn_no_effect
    from kofs.pipeline import warm_kernels as warm

    i = config.inputs
    if i.expression is None:
        raise ParameterError("no expression matrix given (the EXPRESSION argument or key)")
    table = changed(i, ["genes_in", "gene_column", "duplicate_genes", "missing_values", "decimal"])
    warn_no_effect(table, f"{i.expression} is single-cell data, not a CSV/TSV matrix")
    chunk = i.chunk_size or (10000 if config.resources.dask_scheduler else None)
    # the kernels compile on another core while the matrix is read (a new installation's run)
    warm.start(threads=config.resources.threads)
    expr, adata = read_single_cell(
        i.expression, layer=i.layer, use_raw=bool(i.use_raw), chunk_size=chunk
    )
    categories = None
    _warn_label_options(i, obs=bool(i.labels and i.labels.startswith("obs:")))
    if i.labels and i.labels.startswith("obs:"):
        if adata is None:
            raise ParameterError("--labels obs:COLUMN needs an .h5ad input")
        categories = labels_from_obs(adata, i.labels[4:], samples=expr.samples, source=i.expression)
    elif i.labels:
        categories = read_labels(
            i.labels,
            sample_column=i.sample_column,
            label_column=i.label_column,
            missing=i.missing_labels,
        )
        expr, categories = align_labels(
            expr, categories, missing=i.missing_labels, labels_path=i.labels
        )
    graph = None
    if i.use_graph:
        if adata is None:
            raise ParameterError("--use-graph needs an .h5ad input")
        if expr.n_samples != adata.n_obs:
            raise ParameterError("--use-graph cannot be combined with dropping unlabelled cells")
        from kofs.pipeline.anndata import anndata_graph

        graph = anndata_graph(adata, i.use_graph, expr.samples, expr.source)
    return expr, categories, graph


def _warn_dense_plan(config: RunConfig, expr: Expression, *, labels: bool) -> None:
    """Single-cell data stored dense (an .h5ad's dense X) get the defaults of dense (bulk)
    matrices, which are chosen by the storage: without labels the bulk plan instead of
    ``hotspot``, with labels no marker tables. One warning says so and how to get the
    single-cell defaults (when those defaults are in use)."""
    from kofs.pipeline.presets import default_plan
    from kofs.pipeline.rank import knowledge_given

    r = config.ranking
    if expr.is_sparse or expr.is_chunked or r.rankers or r.lists or knowledge_given(config):
        return
    sparse = "store the matrix sparse (adata.X = scipy.sparse.csr_matrix(adata.X))"
    if not labels and default_plan(config.defaults, sparse=True) != default_plan(
        config.defaults, sparse=False
    ):
        log.warning(
            "%s: the matrix is stored dense, and the default plan follows the storage: that "
            "of dense (bulk) matrices, not the single-cell one (%s); for it %s, or name "
            "--rankers",
            expr.source, ", ".join(default_plan(config.defaults, sparse=True)), sparse,
        )  # fmt: skip
    elif labels and r.markers is None:
        log.warning(
            "%s: the matrix is stored dense, and marker tables follow the storage: none for "
            "dense (bulk) matrices, made for sparse single-cell data; give --markers t-test, "
            "or %s",
            expr.source, sparse,
        )  # fmt: skip


def _warn_label_options(inputs: Any, *, obs: bool = False) -> None:
    """One warning for the options that read a labels file given without one (or with
    ``--labels obs:COLUMN``, which names its column and keeps cells without a value)."""
    from kofs.options import changed, warn_no_effect

    if not inputs.labels:
        why = "no --labels file is given"
        warn_no_effect(changed(inputs, ["label_column", "sample_column", "missing_labels"]), why)
    elif obs:
        warn_no_effect(
            changed(inputs, ["label_column", "sample_column"]),
            f"--labels {inputs.labels} names the obs column itself",
        )
        warn_no_effect(
            changed(inputs, ["missing_labels"]),
            "the cells of an obs column without a value stay in the run, unlabelled",
        )


def read_data(config: RunConfig) -> tuple[Expression, SampleCategories | None]:
    """The expression matrix and its labels, aligned (memory checked before reading)."""
    from kofs.io.expression import read_expression
    from kofs.io.labels import align_labels, read_labels
    from kofs.resources import check_memory, estimate_expression_file, resolve_limit

    i = config.inputs
    if i.expression is None:
        from kofs.errors import ParameterError

        raise ParameterError("no expression matrix given (the EXPRESSION argument or key)")
    from kofs.io.single_cell import is_single_cell_path

    if is_single_cell_path(i.expression):
        expr, categories, _ = read_single_cell_data(config)
        return expr, categories
    from kofs.errors import ParameterError

    for name, value in (("layer", i.layer), ("use-graph", i.use_graph),
                        ("chunk-size", i.chunk_size),
                        ("dask-scheduler", config.resources.dask_scheduler)):  # fmt: skip
        if value:
            raise ParameterError(f"--{name} applies to an .h5ad input only")
    if i.use_raw:
        raise ParameterError("--use-raw applies to an .h5ad input only")
    if i.labels and i.labels.startswith("obs:") and not os.path.exists(i.labels):
        raise ParameterError(
            f"--labels {i.labels}: obs:COLUMN reads a column of an AnnData .h5ad's obs, and "
            f"{i.expression} is not an .h5ad; give a labels file (sample id, label) instead"
        )
    _warn_label_options(i)
    categories = None
    if i.labels:
        categories = read_labels(
            i.labels,
            sample_column=i.sample_column,
            label_column=i.label_column,
            missing=i.missing_labels,
        )
    check_memory(
        estimate_expression_file(i.expression) or 0,
        limit=resolve_limit(config.resources.max_memory),
        what=f"reading {i.expression}",
        suggestion="filter the matrix to fewer genes or samples first",
    )
    expr = read_expression(
        i.expression,
        genes_in=i.genes_in,
        gene_column=i.gene_column,
        sample_ids=None if categories is None or categories.by_position else categories.samples,
        duplicates=i.duplicate_genes,
        missing=i.missing_values,
        decimal=i.decimal,
        threads=config.resources.threads,
    )
    if categories is not None:
        expr, categories = align_labels(
            expr, categories, missing=i.missing_labels, labels_path=i.labels
        )
    return expr, categories


def load_inputs(config: RunConfig, *, progress: Any = None) -> RunInputs:
    """Read every file a config names (``progress``: a :class:`kofs.progress.Progress`)."""
    from kofs.io.genes import read_gene_list
    from kofs.io.single_cell import is_single_cell_path

    graph = None
    if config.inputs.expression is not None and is_single_cell_path(config.inputs.expression):
        expr, categories, graph = read_single_cell_data(config)
    else:
        expr, categories = read_data(config)
    rel_path = config.inputs.relevant_genes
    relevant = read_gene_list(rel_path) if rel_path else None
    sources = read_config_sources(config, progress=progress)
    return RunInputs(expr, categories, relevant, sources, graph)


def rank_inputs(
    inputs: RunInputs,
    config: RunConfig,
    *,
    shared: dict[str, Any] | None = None,
    progress: Any = None,
) -> RunResult:
    """Plan, rank and aggregate read inputs as ``config`` says (``shared``: gene-level
    knowledge shared between calls on subsets of the samples; ``progress``: a
    :class:`kofs.progress.Progress`)."""
    result = rank_config(
        inputs.expression,
        config,
        labels=inputs.labels,
        relevant_genes=inputs.relevant_genes,
        sources=inputs.sources,
        similarity=inputs.similarity,
        shared=shared,
        progress=progress,
    )
    return replace(result, config=config)


@checked_keywords
def run(
    config: RunConfig | Mapping[str, Any] | str | os.PathLike, *, progress: Any = None
) -> RunResult:
    """Run a config end to end (read, check memory, align, read sources, plan, rank,
    aggregate, evidence); nothing is written.

    Parameters
    ----------
    config : RunConfig, mapping of options, or path of a YAML config
    progress : kofs.progress.Progress, optional
        Told about GO parsing, information content, similarity blocks and each list.

    Returns
    -------
    RunResult
        With ``config`` set; write it with :func:`kofs.pipeline.write.write_result`.
    """
    from kofs.pipeline.write import check_input_files

    cfg = as_config(config)
    check_input_files(cfg)  # as the CLI: before any work (write_result checksums every input)
    with captured_warnings() as seen:
        inputs = load_inputs(cfg, progress=progress)
        from kofs.io.single_cell import is_single_cell_path

        if is_single_cell_path(cfg.inputs.expression or "-"):
            _warn_dense_plan(cfg, inputs.expression, labels=inputs.labels is not None)
        result = rank_inputs(inputs, cfg, progress=progress)
    return replace(result, warnings=tuple(dict.fromkeys(seen)))


@contextlib.contextmanager
def captured_warnings(logger: str = "kofs") -> Iterator[list[str]]:
    """Collect the messages of the warnings logged under ``logger`` inside the block (they are
    still logged as usual): the report shows them before the results."""
    seen: list[str] = []

    class _Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record.getMessage())

    handler = _Keep(level=logging.WARNING)
    log = logging.getLogger(logger)
    log.addHandler(handler)
    try:
        yield seen
    finally:
        log.removeHandler(handler)


def describe(config: RunConfig | Mapping[str, Any] | str | os.PathLike) -> dict[str, Any]:
    """Convert every source (as a run would) and report the internal knowledge, the coverage
    of each source and the lists the plan would build. Nothing is ranked (``kofs sources``)."""
    import scipy.sparse as sp

    from kofs.context import Context
    from kofs.pipeline.plans import kofs_plan, msfs_plan
    from kofs.resources import resolve_limit
    from kofs.types import FeatureFunctions, FeatureRelation, SampleSimilarity

    cfg = as_config(config)
    inputs = load_inputs(cfg)
    expression, labels = inputs.expression, inputs.labels
    rel = (
        None
        if inputs.relevant_genes is None
        else relevant_gene_ids(
            expression,
            inputs.relevant_genes,
            path=getattr(inputs.relevant_genes, "source", None),
        )
    )
    ctx = Context(
        expression=expression,
        categories=labels,
        relevant_genes=rel,
        sources=inputs.sources,
        max_memory=resolve_limit(cfg.resources.max_memory),
    )
    if cfg.ranking.method == "msfs":
        plans = msfs_plan(ctx, weights=cfg.ranking.msfs_weights)
    else:
        plans = kofs_plan(ctx, cfg.ranking.lists)
    for p in plans:
        p.build_inputs(ctx)
    from kofs.sources import SOURCES

    # what explains genes in a run (a network no list uses, gene sets, ...): converted as a
    # run converts it, so that its coverage is shown and a source matching no gene of the
    # matrix fails here as it fails `kofs rank`, not silently left out
    for spec in SOURCES:
        if spec.evidence is not None and ctx.source(spec.name) is not None:
            spec.evidence(ctx)
    kinds = []
    if labels is not None:
        kinds.append(
            {
                "kind": "SampleCategories",
                "name": labels.name,
                "detail": f"{labels.n_classes} classes: " + ", ".join(labels.classes),
            }
        )
    for key, obj in ctx.cache.items():
        if isinstance(obj, SampleSimilarity):
            nnz = obj.matrix.nnz if sp.issparse(obj.matrix) else obj.matrix.size
            kinds.append(
                {
                    "kind": "SampleSimilarity",
                    "name": obj.name,
                    "detail": f"{len(obj.samples)} {expression.unit}, {nnz} entries",
                }
            )
        elif isinstance(obj, FeatureRelation):
            covered = int((obj.matrix.getnnz(axis=1) > 0).sum())
            kinds.append(
                {
                    "kind": "FeatureRelation",
                    "name": obj.name,
                    "detail": f"{obj.matrix.nnz} edges, {covered} genes with a neighbour",
                }
            )
        elif isinstance(obj, FeatureFunctions):
            covered = int((obj.incidence.getnnz(axis=1) > 0).sum())
            kinds.append(
                {
                    "kind": "FeatureFunctions",
                    "name": f"{obj.name} [{key}]",
                    "detail": f"{len(obj.terms)} terms, {covered} genes annotated, relevance "
                    + ("set" if obj.relevance is not None else "none"),
                }
            )
    return {
        "expression": {
            "samples": expression.n_samples,
            "genes": expression.n_genes,
            "unit": expression.unit,
        },
        "internal_knowledge": kinds,
        "coverage": [{**c.as_dict(), "line": c.line()} for c in ctx.coverage],
        "lists": [{"name": p.name, "ranker": p.ranker, "sources": list(p.sources)} for p in plans],
    }
