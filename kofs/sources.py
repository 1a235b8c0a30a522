"""Read every knowledge source a run is given into a :class:`~kofs.plans.KnowledgeSources`
(no matching to the matrix yet: the converters do that, with coverage reports)."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from kofs.errors import InputError, ParameterError
from kofs.plans import KnowledgeSources

log = logging.getLogger(__name__)


def read_term_relevance(path: str | os.PathLike) -> dict[str, float]:
    """A two-column table ``term``, ``relevance`` (header optional; GO ids or pathway ids)."""
    from kofs.io._table import read_table

    df = read_table(path, comment="#", header=False)
    if df.shape[1] < 2:
        raise InputError("term relevance needs two columns: term id and relevance", path=path)
    lines = df.attrs["lines"]
    out: dict[str, float] = {}
    for k, (term, value) in enumerate(zip(df.iloc[:, 0], df.iloc[:, 1], strict=True)):
        try:
            v = float(value)
        except ValueError:
            if k == 0:  # a header line
                continue
            raise InputError(
                f"relevance {value!r} is not a number", path=path, line=int(lines[k]), column=2
            ) from None
        if not np.isfinite(v):
            raise InputError(
                f"relevance {value!r} is not finite", path=path, line=int(lines[k]), column=2
            )
        out[term] = v
    if not out:
        raise InputError("no term relevance values found", path=path)
    return out


def read_sources(
    *,
    go: str | None = None,
    go_annotations: str | None = None,
    go_evidence: str | None = None,
    go_exclude_evidence: str | None = None,
    go_taxon: str | None = None,
    go_settings: Mapping[str, Any] | None = None,
    pathways: str | None = None,
    pathway_format: str = "auto",
    pathway_ids: Sequence[str] | None = None,
    kegg_names: str | None = None,
    pathway_sizes: tuple[int, int | None] = (5, 500),
    go_term_ids: Sequence[str] | None = None,
    interactions: str | None = None,
    interactions_format: str = "auto",
    string_min_score: float | None = None,
    string_aliases: str | None = None,
    biogrid_taxon: str | None = None,
    biogrid_system_type: str = "physical",
    interaction_min_weight: float = 0.0,
    undirected: bool = False,
    aux: Sequence[str] = (),
    aux_reader: Any = None,
    id_map: str | None = None,
    term_relevance: str | None = None,
    cache: Any = None,
    max_memory: int | None = None,
    progress: Any = None,
) -> KnowledgeSources:
    """Read the knowledge files of a run (each reader raises InputError naming its file).

    Parameters mirror the ``kofs rank`` options of the same names; ``aux_reader`` reads an
    auxiliary matrix (default :func:`kofs.io.expression.read_expression`); ``cache`` (a
    :class:`kofs.cache.Cache`, default none) keeps the parsed GO files and the GO closure and
    information content between runs; ``max_memory`` (bytes) and ``progress`` (a
    :class:`kofs.progress.Progress`) are passed to the GO readers.
    """
    if (go is None) != (go_annotations is None):
        raise ParameterError("GO needs both --go (the OBO ontology) and --go-annotations")
    ontology = annotations = None
    if go is not None:
        from kofs.io.annotations import read_go_annotations
        from kofs.io.ontology import read_obo

        ontology = read_obo(go, cache=cache, max_memory=max_memory, progress=progress)
        annotations = read_go_annotations(
            go_annotations,
            evidence=go_evidence,
            exclude_evidence=go_exclude_evidence,
            taxon=go_taxon,
            ontology=ontology,
            cache=cache,
            max_memory=max_memory,
            progress=progress,
        )
    if go_term_ids and ontology is None:
        raise ParameterError("--go-term-ids needs --go and --go-annotations")
    gene_sets = None
    if pathways is not None:
        from kofs.io.pathways import read_pathways

        gene_sets = read_pathways(pathways, pathway_format, names=kegg_names)
    elif pathway_ids:
        raise ParameterError("--pathway-ids needs --pathways")
    inter = None
    if interactions is not None:
        from kofs.io.interactions import read_interactions

        inter = read_interactions(
            interactions,
            interactions_format,
            string_min_score=string_min_score,
            string_aliases=string_aliases,
            biogrid_taxon=biogrid_taxon,
            biogrid_system_type=None if biogrid_system_type == "all" else biogrid_system_type,
        )
    aux_data = []
    if aux:
        if aux_reader is None:
            from kofs.io.expression import read_expression as aux_reader
        aux_data = [aux_reader(p) for p in aux]
    idmap = None
    if id_map is not None:
        from kofs.io.ids import read_id_map

        idmap = read_id_map(id_map)
    return KnowledgeSources(
        ontology=ontology,
        go_annotations=annotations,
        pathways=gene_sets,
        interactions=inter,
        aux=tuple(aux_data),
        term_relevance=read_term_relevance(term_relevance) if term_relevance else None,
        pathway_ids=tuple(pathway_ids) if pathway_ids else None,
        go_term_ids=tuple(go_term_ids) if go_term_ids else None,
        id_map=idmap,
        go=dict(go_settings or {}),
        pathway_sizes=tuple(pathway_sizes),
        interaction_options={"min_weight": interaction_min_weight, "ignore_direction": undirected},
        cache=cache,
    )


def describe_sources(
    expression: Any,
    sources: KnowledgeSources,
    *,
    labels: Any = None,
    relevant_genes: Sequence[str] | None = None,
    method: str = "kofs",
    max_memory: int | str | None = None,
) -> dict[str, Any]:
    """Convert every source (as a run would) and report the internal knowledge, the coverage of
    each source and the lists the plan would build. Nothing is ranked. ``max_memory`` as in
    :func:`kofs.pipeline.rank`."""
    import scipy.sparse as sp

    from kofs.pipeline import Context, relevant_gene_ids
    from kofs.plans import kofs_plan, msfs_plan
    from kofs.resources import resolve_limit
    from kofs.types import FeatureFunctions, FeatureRelation, SampleSimilarity

    rel = None if relevant_genes is None else relevant_gene_ids(expression, relevant_genes)
    ctx = Context(
        expression=expression,
        categories=labels,
        relevant_genes=rel,
        max_memory=resolve_limit(max_memory),
    )
    plans = msfs_plan(ctx, sources) if method == "msfs" else kofs_plan(ctx, sources)
    for p in plans:
        p.build_inputs(ctx)
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
                    "detail": f"{len(obj.samples)} samples, {nnz} entries",
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
        "expression": {"samples": expression.n_samples, "genes": expression.n_genes},
        "internal_knowledge": kinds,
        "coverage": [{**c.as_dict(), "line": c.line()} for c in ctx.coverage],
        "lists": [{"name": p.name, "ranker": p.ranker, "sources": list(p.sources)} for p in plans],
    }


def source_releases(sources: KnowledgeSources) -> dict[str, Any]:
    """Release information read from the knowledge files' headers (for the manifest)."""
    out: dict[str, Any] = {}
    if sources.ontology is not None:
        o = sources.ontology
        out["go_ontology"] = {"data-version": o.data_version, "date": o.date, "terms": len(o.terms)}
    if sources.go_annotations is not None:
        a = sources.go_annotations
        out["go_annotations"] = {"format": a.fmt, **dict(a.header), "rows": len(a.terms)}
    if sources.pathways is not None:
        out["pathways"] = {
            "sets": len(sources.pathways.ids),
            "namespace": sources.pathways.namespace,
        }
    if sources.interactions is not None:
        i = sources.interactions
        out["interactions"] = {
            "edges": len(i.source),
            "directed": int(np.sum(i.directed)),
            "namespace": i.namespace,
        }
    return out
