"""kofs: knowledge-oriented multi-source gene selection.

Quick start::

    import kofs
    labels = kofs.read_labels("labels.tsv", label_column="lineage")
    expr = kofs.read_expression("expression.tsv", sample_ids=labels.samples)
    expr, labels = kofs.align_labels(expr, labels)
    sources = kofs.read_sources(go="go-basic.obo", go_annotations="goa_human.gaf",
                                pathways="kegg.gmt", interactions="string_edges.tsv")
    result = kofs.rank(expr, labels=labels, sources=sources)
    result.top(20), result.weights_frame()  # DataFrames: genes with effects, weights

The public names are loaded on first use, so ``import kofs`` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# ``kofs.aggregate`` is the subpackage (importing it rebinds the name), so the aggregation
# function is exported as ``aggregate_rankings``.
_EXPORTS = {
    # reading
    "read_expression": "kofs.io.expression",
    "read_labels": "kofs.io.labels",
    "align_labels": "kofs.io.labels",
    "read_gene_list": "kofs.io.genes",
    "read_sources": "kofs.sources",
    "read_obo": "kofs.io.ontology",
    "read_go_annotations": "kofs.io.annotations",
    "read_pathways": "kofs.io.pathways",
    "read_interactions": "kofs.io.interactions",
    # running
    "rank": "kofs.pipeline.rank",
    "run": "kofs.pipeline.run",
    "write_result": "kofs.pipeline.write",
    "run_report_html": "kofs.report.run",
    "aggregate_report_html": "kofs.report.aggregate",
    "RunConfig": "kofs.pipeline.config",
    "read_run_config": "kofs.pipeline.config",
    "RunResult": "kofs.pipeline.result",
    "KnowledgeSources": "kofs.sources",
    "run_ranker": "kofs.rankers",
    "aggregate_rankings": "kofs.aggregate",
    "aggregate_lists": "kofs.pipeline.user_lists",
    "ListAggregation": "kofs.pipeline.user_lists",
    "AggregateListsConfig": "kofs.pipeline.user_lists_config",
    "read_ranked_lists": "kofs.io.gene_lists",
    "sample_similarity": "kofs.knowledge.similarity",
    "gene_similarity": "kofs.knowledge.go",
    "example_paths": "kofs.datasets.example",
    "GeneSelector": "kofs.pipeline.selector",
    # types and errors
    "Expression": "kofs.types",
    "SampleCategories": "kofs.types",
    "SampleSimilarity": "kofs.types",
    "FeatureRelation": "kofs.types",
    "FeatureFunctions": "kofs.types",
    "RankerInputs": "kofs.types",
    "Ranking": "kofs.types",
    "AggregateRanking": "kofs.types",
    "KofsError": "kofs.errors",
    "RANKERS": "kofs.rankers",
    "AGGREGATORS": "kofs.aggregate",
}

_ALIASES = {"aggregate_rankings": "aggregate"}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'kofs' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), _ALIASES.get(name, name))
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
