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

import gzip
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from kofs.context import Context, ListTemplate
from kofs.errors import InputError
from kofs.options import opt
from kofs.sources._common import initial_relevance
from kofs.sources._spec import SourceSpec
from kofs.types import FeatureRelation, RankerInputs

log = logging.getLogger(__name__)

FORMATS = ("auto", "graphml", "gml", "sif", "adjlist")
_EXTENSIONS = {
    ".graphml": "graphml",
    ".xml": "graphml",
    ".gml": "gml",
    ".sif": "sif",
    ".adj": "adjlist",
    ".adjlist": "adjlist",
}
_ALIAS_ATTRIBUTES = ("name", "label", "symbol")


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
        choices=FORMATS,
        help="Format of --graph (default: from the extension, .graphml .gml .sif .adjlist).",
    )
    graph_weight: str = opt(
        "graph_weight",
        "str",
        "weight",
        help="Edge attribute holding the weight in GraphML/GML (1 when absent).",
    )


@dataclass(frozen=True)
class GraphData:
    """The graph's edges as an interaction table."""

    interactions: Any
    ignore_direction: bool = False


def graph_format(path: str, given: str = "auto") -> str:
    """The format of ``path``: ``given``, else from its extension (``.gz`` ignored)."""
    if given != "auto":
        return given
    name = path[:-3] if path.endswith(".gz") else path
    fmt = _EXTENSIONS.get(Path(name).suffix.lower())
    if fmt is None:
        raise InputError(
            "cannot tell the graph format from the file name; give --graph-format "
            f"({', '.join(FORMATS[1:])})",
            path=path,
        )
    return fmt


def _read_bytes(path: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
        return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data
    except FileNotFoundError:
        raise InputError("graph file not found", path=path) from None
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise InputError(f"cannot read the graph file: {exc}", path=path) from None


def _networkx_graph(path: str, fmt: str) -> Any:
    """A networkx graph from a GraphML, GML or adjacency-list file."""
    import io

    import networkx as nx

    data = _read_bytes(path)
    if fmt == "graphml" and (b"<!ENTITY" in data or b"<!DOCTYPE" in data):
        raise InputError("XML entity declarations are not allowed in a graph file", path=path)
    try:
        if fmt == "graphml":
            return nx.read_graphml(io.BytesIO(data))
        text = data.decode("utf-8-sig")
        if fmt == "gml":
            return nx.parse_gml(text.splitlines(), label="label")
        lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
        return nx.parse_adjlist(lines)
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text", path=path) from None
    except Exception as exc:  # noqa: BLE001 - networkx/expat raise many kinds for bad files
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(f"not a valid {fmt.upper()} graph: {text[:120]}", path=path) from None


def _sif_edges(path: str) -> tuple[list[str], list[str]]:
    """Cytoscape SIF: ``source <type> target [target ...]`` per line (tabs, else spaces)."""
    text = _read_bytes(path)
    try:
        lines = text.decode("utf-8-sig").splitlines()
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text", path=path) from None
    src: list[str] = []
    dst: list[str] = []
    for k, line in enumerate(lines, start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = [f.strip() for f in (line.split("\t") if "\t" in line else line.split())]
        fields = [f for f in fields if f]
        if len(fields) == 1:
            continue  # a node without edges
        if len(fields) == 2:
            raise InputError(
                "a SIF line needs a source, an interaction type and a target", path=path, line=k
            )
        for t in fields[2:]:
            src.append(fields[0])
            dst.append(t)
    return src, dst


def read_graph(path: str, fmt: str = "auto", *, weight: str = "weight") -> Any:
    """The edges of a graph file as :class:`~kofs.io.interaction_table.Interactions`."""
    from kofs.io.ids import guess_namespace
    from kofs.io.interaction_table import clean_edges

    path = os.fspath(path)
    fmt = graph_format(path, fmt)
    aliases: dict[str, dict[str, tuple[str, ...]]] = {}
    if fmt == "sif":
        src, dst = _sif_edges(path)
        w = np.ones(len(src))
        directed = False
    else:
        g = _networkx_graph(path, fmt)
        directed = bool(g.is_directed())
        edges = list(g.edges(data=True))
        src = [str(a) for a, _, _ in edges]
        dst = [str(b) for _, b, _ in edges]
        try:
            w = np.array([float(d.get(weight, 1.0)) for _, _, d in edges], dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError(f"edge attribute {weight!r} holds a non-number", path=path) from None
        for attr in _ALIAS_ATTRIBUTES:
            alt = {str(n): (str(d[attr]),) for n, d in g.nodes(data=True) if d.get(attr)}
            if alt:
                kind = guess_namespace(v[0] for v in alt.values()) or "symbol"
                aliases.setdefault(kind, {}).update(alt)
    if not src:
        raise InputError(f"the {fmt.upper()} graph has no edges", path=path)
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise InputError(f"edge weights ({weight!r}) must be finite and non-negative", path=path)
    inter = clean_edges(
        np.asarray(src, dtype=object),
        np.asarray(dst, dtype=object),
        w,
        np.full(len(src), directed),
        np.full(len(src), "", dtype=object),
        path=path,
        namespace=guess_namespace(src + dst),
        aliases=aliases,
        info={"format": fmt, "edges read": len(src)},
        what="graph",
    )
    log.info("%s: %d edges (%s%s)", path, inter.n_edges, fmt, ", directed" if directed else "")
    return inter


def _read(o: GraphOptions) -> GraphData | None:
    if o.graph is None:
        return None
    return GraphData(read_graph(o.graph, o.graph_format, weight=o.graph_weight))


def graph_relation(ctx: Context) -> FeatureRelation:
    """The graph matched to the matrix's genes (coverage recorded)."""
    from kofs.knowledge.network import interactions_to_relation

    d = ctx.source("graphs")
    return ctx.cached(
        "graph_relation",
        lambda: ctx.record(
            interactions_to_relation(d.interactions, ctx.expression, id_map=ctx.sources.id_map)
        ),
        gene_level=True,
    )


def _lists(data: GraphData) -> list[ListTemplate]:
    return [
        ListTemplate(
            "GRAPH-PROP",
            "relevance-propagation",
            ("graph",),
            lambda ctx: RankerInputs(
                relation=graph_relation(ctx), functions=initial_relevance(ctx)
            ),
            "relevance propagation over the gene graph of --graph (eq. 6.14)",
            order=105,
        )
    ]


def _evidence(ctx: Context):
    from kofs.evidence import EvidenceSource

    return [EvidenceSource(45.0, "graph neighbours", graph_relation(ctx))]


def _releases(data: GraphData) -> dict[str, Any]:
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
)
