"""Gene graphs from graph files that networkx reads: GraphML, GML, Cytoscape SIF and plain
adjacency lists, as an interaction table (:func:`read_graph`; the ``graphs`` knowledge source).

The format comes from the extension (``.gz`` ignored) unless given. Edge weights come from an
edge attribute (default ``weight``; 1 when absent); a directed GraphML/GML graph keeps its
directions. GraphML/GML node attributes ``name``, ``label`` or ``symbol`` become alternative
ids. XML entity declarations are refused.
"""

from __future__ import annotations

import gzip
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kofs.errors import InputError

if TYPE_CHECKING:  # numpy and pandas load when a graph is read (`kofs --help` stays light)
    from kofs.io.interaction_table import Interactions

log = logging.getLogger(__name__)

__all__ = ["GRAPH_FORMATS", "graph_format", "read_graph"]

GRAPH_FORMATS = ("auto", "graphml", "gml", "sif", "adjlist")
_EXTENSIONS = {
    ".graphml": "graphml",
    ".xml": "graphml",
    ".gml": "gml",
    ".sif": "sif",
    ".adj": "adjlist",
    ".adjlist": "adjlist",
}
_ALIAS_ATTRIBUTES = ("name", "label", "symbol")


def graph_format(path: str, given: str = "auto") -> str:
    """The format of ``path``: ``given``, else from its extension (``.gz`` ignored)."""
    if given != "auto":
        return given
    name = path[:-3] if path.endswith(".gz") else path
    fmt = _EXTENSIONS.get(Path(name).suffix.lower())
    if fmt is None:
        raise InputError(
            "cannot tell the graph format from the file name; give --graph-format "
            f"({', '.join(GRAPH_FORMATS[1:])})",
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


def _sif_edges(path: str) -> tuple[list[str], list[str], list[str]]:
    """Cytoscape SIF: ``source <type> target [target ...]`` per line (tabs, else spaces):
    (sources, targets, types)."""
    text = _read_bytes(path)
    try:
        lines = text.decode("utf-8-sig").splitlines()
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text", path=path) from None
    src: list[str] = []
    dst: list[str] = []
    types: list[str] = []
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
            types.append(fields[1])
    return src, dst, types


def read_graph(
    path: str | os.PathLike, fmt: str = "auto", *, weight: str = "weight"
) -> Interactions:
    """The edges of a graph file as :class:`~kofs.io.interaction_table.Interactions`.

    Raises
    ------
    InputError
        The file is missing, unreadable, not of its format, without edges, or its weights are
        not finite non-negative numbers.
    """
    import numpy as np

    from kofs.io.ids import guess_namespace
    from kofs.io.interaction_table import clean_edges
    from kofs.options import warn_no_effect

    path = os.fspath(path)
    fmt = graph_format(path, fmt)
    aliases: dict[str, dict[str, tuple[str, ...]]] = {}
    types: list[str] | None = None
    if fmt == "sif":
        src, dst, types = _sif_edges(path)
        w = np.ones(len(src))
        directed = False
        if weight != "weight":
            why = f"{path} is a SIF file, whose edges carry no attributes: every edge weighs 1"
            warn_no_effect([f"--graph-weight {weight}"], why)
    else:
        g = _networkx_graph(path, fmt)
        directed = bool(g.is_directed())
        edges = list(g.edges(data=True))
        attributes = sorted({str(k) for _, _, d in edges for k in d})
        if weight != "weight" and edges and weight not in attributes:
            have = (
                f"(its edge attributes: {', '.join(attributes)})"
                if attributes
                else "(its edges have none)"
            )
            why = f"no edge of {path} has an attribute {weight!r} {have}: every edge weighs 1"
            warn_no_effect([f"--graph-weight {weight}"], why)
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
        np.asarray(types, dtype=object) if types else np.full(len(src), "", dtype=object),
        path=path,
        namespace=guess_namespace(src + dst),
        aliases=aliases,
        info={"format": fmt, "edges read": len(src)},
        what="graph",
    )
    log.info("%s: %d edges (%s%s)", path, inter.n_edges, fmt, ", directed" if directed else "")
    return inter
