"""Gene graphs from graph files that networkx reads: GraphML, GML, Cytoscape SIF and plain
adjacency lists (``--graph FILE``, format from the extension or ``--graph-format``).

List: GRAPH-PROP, relevance propagation (eq. 6.14) over the graph, started like PPI-PROP from
the known relevant genes or the GO / pathway votes. Edge weights come from the edge attribute
``--graph-weight`` (default ``weight``; 1 when absent); a directed GraphML/GML graph keeps its
directions. Node ids are matched to the matrix like every
other source (symbols case-insensitively, Ensembl versions stripped, ``--id-map`` first);
GraphML/GML node attributes ``name``, ``label`` or ``symbol`` are tried as alternative ids.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kofs.context import Context, ListTemplate
from kofs.io.graph_files import GRAPH_FORMATS
from kofs.options import opt
from kofs.sources._common import START, NetworkData, initial_relevance, network_relation
from kofs.sources._spec import SourceSpec
from kofs.types import FeatureRelation, RankerInputs


@dataclass(frozen=True)
class GraphOptions:
    graph: str | None = opt(
        "graph",
        "path",
        help="Gene graph file read by networkx: GraphML, GML, Cytoscape SIF or adjacency list "
        "(gzip ok): the GRAPH-PROP list.",
    )
    graph_format: str = opt(
        "graph_format",
        "choice",
        "auto",
        choices=GRAPH_FORMATS,
        help="Format of --graph (default: from the extension, .graphml .gml .sif .adjlist).",
    )
    graph_weight: str = opt(
        "graph_weight",
        "str",
        "weight",
        help="Edge attribute holding the weight in GraphML/GML (1 when absent).",
    )


def _read(o: GraphOptions) -> NetworkData | None:
    if o.graph is None:
        return None
    from kofs.io.graph_files import read_graph

    return NetworkData(read_graph(o.graph, o.graph_format, weight=o.graph_weight))


def graph_relation(ctx: Context) -> FeatureRelation:
    """The graph matched to the matrix's genes (coverage recorded)."""
    return network_relation(ctx, "graphs", "graph_relation")


def _lists(data: NetworkData) -> list[ListTemplate]:
    return [
        ListTemplate(
            "GRAPH-PROP",
            "relevance-propagation",
            ("graph", START),
            lambda ctx: RankerInputs(
                relation=graph_relation(ctx), functions=initial_relevance(ctx)
            ),
            "relevance propagation over the gene graph of --graph (eq. 6.14)",
            order=105,
        )
    ]


def _evidence(ctx: Context):
    from kofs.knowledge.evidence import EvidenceSource

    return [EvidenceSource(45.0, "graph neighbours", graph_relation(ctx))]


def _releases(data: NetworkData) -> dict[str, Any]:
    i = data.interactions
    return {"graph": {"edges": i.n_edges, "directed": bool(i.is_directed), **dict(i.info)}}


SOURCE = SourceSpec(
    name="graphs",
    summary="gene graph files (GraphML, GML, SIF, adjacency list) via networkx: GRAPH-PROP",
    options=GraphOptions,
    read=_read,
    lists=_lists,
    provides=lambda data: ("graph",),
    evidence=_evidence,
    releases=_releases,
    id_file="graph",
)
