"""Read gene/protein interaction networks into :class:`Interactions` (book: K_INT^FEA).

Formats (``read_interactions(path, fmt="auto")`` sniffs them from the first lines):

``edgelist``
    Generic ``source, target[, weight][, directed]`` table, tab/comma/space separated, with or
    without a header (named columns ``source``/``target``/``weight``/``directed``/``type`` are
    recognised in any order).
``paired``
    Tables whose header pairs id columns: ``entrez_a, entrez_b, symbol_a, symbol_b, score`` (the
    shared STRING files) or ``source_uniprot, target_uniprot, source_genesymbol, ...``
    (OmniPath; ``source_``/``target_`` pairs are directed). The first pair is the primary id,
    the others become aliases used for matching.
``string``
    STRING ``protein.links[.detailed|.full]`` (space separated, ``combined_score`` 0-1000),
    with the ENSP -> gene mapping of a ``protein.aliases`` or ``protein.info`` file.
``biogrid``
    BioGRID TAB2 / TAB3, filtered by taxon and ``Experimental System Type``.
``kgml``
    KEGG KGML relations (see :mod:`kofs.io.pathways`).

Every reader cleans the edges the same way: bad or negative weights are an
:class:`~kofs.errors.InputError` naming the line; self-loops are dropped with a warning; repeated
pairs (both orientations for undirected edges) are merged keeping the largest weight.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kofs.errors import InputError, ParameterError
from kofs.io._open import head_lines as _head_lines
from kofs.io._open import open_text as _open_text
from kofs.io._open import stream_text as _stream_text
from kofs.io._open import table_errors
from kofs.io.ids import guess_namespace

log = logging.getLogger(__name__)

__all__ = [
    "sniff_interactions",
    "Interactions",
    "read_interactions",
    "read_edge_list",
    "read_paired_table",
    "read_string_links",
    "read_string_aliases",
    "read_biogrid",
    "INTERACTION_FORMATS",
]

_TAXON_PREFIX = re.compile(r"^\d+\.(?=[A-Za-z])")
_NA = frozenset({"", "NA", "NaN", "nan", "-", "None", "NULL", "null"})


def _ro(a: np.ndarray) -> np.ndarray:
    a = np.array(a, copy=True)
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class Interactions:
    """An edge table of gene/protein interactions, as read from a file (ids not yet matched).

    Attributes
    ----------
    source, target : ndarray of shape (E,), object (str)
        Endpoint ids in the file's primary id kind (``namespace``).
    weight : ndarray of shape (E,), float64
        Non-negative edge weights (1.0 when the file has none; STRING: combined_score / 1000).
    directed : ndarray of shape (E,), bool
        Per-edge direction flag (undirected edges are stored once).
    type : ndarray of shape (E,), object (str)
        Interaction type ("" when unknown), e.g. ``"PPrel:activation"``, ``"Two-hybrid"``.
    namespace : str or None
        Kind of the primary ids (``"entrez"``, ``"symbol"``, ``"ensembl_protein"``, ...).
    path : str or None
        File read.
    aliases : mapping
        Alternative ids of the nodes: ``{kind: {primary_id: (alt_id, ...)}}``; used by
        :func:`kofs.io.ids.match_gene_ids` to map onto the matrix.
    info : mapping
        Reader counts (rows read, self-loops dropped, duplicates merged, rows filtered, ...).
    """

    source: np.ndarray
    target: np.ndarray
    weight: np.ndarray
    directed: np.ndarray
    type: np.ndarray
    namespace: str | None = None
    path: str | None = None
    aliases: Mapping[str, Mapping[str, tuple[str, ...]]] = field(default_factory=dict)
    info: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        src = _ro(np.asarray(self.source, dtype=object))
        n = src.shape[0]
        arrays = {
            "source": src,
            "target": _ro(np.asarray(self.target, dtype=object)),
            "weight": _ro(np.asarray(self.weight, dtype=np.float64)),
            "directed": _ro(np.broadcast_to(np.asarray(self.directed, dtype=bool), (n,))),
            "type": _ro(np.broadcast_to(np.asarray(self.type, dtype=object), (n,))),
        }
        for k, a in arrays.items():
            if a.shape != (n,):
                raise ValueError(f"Interactions.{k} must have one entry per edge")
            object.__setattr__(self, k, a)
        object.__setattr__(self, "aliases", {k: dict(v) for k, v in dict(self.aliases).items()})
        object.__setattr__(self, "info", dict(self.info))

    @property
    def n_edges(self) -> int:
        return int(self.source.shape[0])

    @property
    def is_directed(self) -> bool:
        """True when at least one edge is directed."""
        return bool(self.directed.any())

    def summary(self) -> dict:
        """Counts for ``kofs sources``: edges, nodes, directed edges, id kind, reader counts."""
        return {
            "path": self.path, "edges": self.n_edges, "nodes": len(self.nodes()),
            "directed_edges": int(self.directed.sum()), "namespace": self.namespace,
            "alias_ids": sorted(self.aliases), **self.info,
        }

    def nodes(self) -> list[str]:
        """Distinct node ids in order of first appearance."""
        return list(dict.fromkeys(np.concatenate([self.source, self.target]).tolist()))


# --------------------------------------------------------------------------- cleaning


def _parse_weights(raw: pd.Series, lines: np.ndarray, path: str, *, column: str) -> np.ndarray:
    """Strings -> float64; non-numeric, NaN, infinite or negative -> InputError with the line."""
    w = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=np.float64)
    bad = ~np.isfinite(w)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"weight {raw.iloc[i]!r} is not a finite number; fix or remove the line",
            path=path, line=int(lines[i]), column=column,
        )
    neg = w < 0
    if neg.any():
        i = int(np.flatnonzero(neg)[0])
        raise InputError(
            f"negative weight {raw.iloc[i]}; interaction weights must be >= 0",
            path=path, line=int(lines[i]), column=column,
        )
    return w


def _finalise(
    src: np.ndarray,
    dst: np.ndarray,
    weight: np.ndarray,
    directed: np.ndarray,
    types: np.ndarray,
    *,
    path: str,
    namespace: str | None = None,
    aliases: Mapping[str, Mapping[str, tuple[str, ...]]] | None = None,
    info: dict | None = None,
    what: str = "interactions",
) -> Interactions:
    """Drop self-loops (warning with count) and merge repeated pairs (max weight, types joined)."""
    info = dict(info or {})
    n = len(src)
    src = np.asarray(src, dtype=object)
    dst = np.asarray(dst, dtype=object)
    directed = np.broadcast_to(np.asarray(directed, dtype=bool), (n,))
    types = np.broadcast_to(np.asarray(types, dtype=object), (n,))
    loops = src == dst
    n_loops = int(loops.sum())
    if n_loops:
        log.warning("%s: dropped %d self-loop(s)", path, n_loops)
        keep = ~loops
        src, dst, weight = src[keep], dst[keep], weight[keep]
        directed, types = directed[keep], types[keep]
    # canonical orientation of undirected edges so that (a, b) and (b, a) merge
    swap = ~directed & (src.astype(str) > dst.astype(str)) if len(src) else np.zeros(0, bool)
    a = np.where(swap, dst, src)
    b = np.where(swap, src, dst)
    df = pd.DataFrame(
        {"a": a, "b": b, "d": directed, "w": weight, "t": types.astype(object)}
    )
    grouped = df.groupby(["a", "b", "d"], sort=False, observed=True)
    n_dup = len(df) - grouped.ngroups
    if n_dup:
        w = grouped["w"].max()
        if df["t"].nunique() > 1:
            t = grouped["t"].agg(lambda s: ";".join(sorted({x for x in s if x})))
        else:
            t = grouped["t"].first()
        out = pd.DataFrame({"w": w, "t": t}).reset_index()
        log.info("%s: merged %d repeated pair(s), keeping the largest weight", path, n_dup)
    else:
        out = df
    info.update({"self_loops_dropped": n_loops, "duplicates_merged": int(n_dup),
                 "edges": int(len(out))})
    if len(out) == 0:
        raise InputError(f"no {what} left after filtering ({info})", path=path)
    a_ids = out["a"].to_numpy(dtype=object)
    b_ids = out["b"].to_numpy(dtype=object)
    if namespace is None:
        namespace = guess_namespace(list(a_ids[:100]) + list(b_ids[:100]))
    return Interactions(
        a_ids, b_ids, out["w"].to_numpy(np.float64), out["d"].to_numpy(bool),
        out["t"].to_numpy(dtype=object), namespace=namespace, path=path,
        aliases=aliases or {}, info=info,
    )


def _read_frame(path: str, *, sep: str, header: int | None, **kwargs: Any) -> pd.DataFrame:
    """pandas.read_csv with ids as strings; a ragged line becomes an InputError with its line."""
    with _open_text(path, what="interaction file") as fh, table_errors(path, "interaction file"):
        return pd.read_csv(
            fh, sep=sep, header=header, dtype=str, keep_default_na=False,
            na_filter=False, **kwargs,
        )


def _strip_taxon(values: np.ndarray) -> np.ndarray:
    """Remove STRING taxon prefixes (``9606.ENSP...`` -> ``ENSP...``), once per distinct id."""
    codes, uniques = pd.factorize(np.asarray(values, dtype=object))
    stripped = np.array([_TAXON_PREFIX.sub("", str(v)) for v in uniques] + [""], dtype=object)
    return stripped[codes]


# --------------------------------------------------------------------------- edge list

_SRC_NAMES = {"source", "src", "from", "node1", "gene1", "gene_1", "protein1", "interactor_a",
              "source_id", "regulator", "tf", "head"}
_DST_NAMES = {"target", "tgt", "to", "node2", "gene2", "gene_2", "protein2", "interactor_b",
              "target_id", "tail"}
_W_NAMES = {"weight", "score", "combined_score", "confidence", "w", "value"}
_DIR_NAMES = {"directed", "is_directed", "direction"}
_TYPE_NAMES = {"type", "interaction", "interaction_type", "relation", "mode"}
_TRUE = {"1", "true", "t", "yes", "y", "directed", "->", "-->"}
_FALSE = {"0", "false", "f", "no", "n", "undirected", "-", "--"}


def _delimiter(first: str) -> str:
    if "\t" in first:
        return "\t"
    if "," in first:
        return ","
    return r"\s+"


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def read_edge_list(
    path: str | os.PathLike, *, directed: bool | None = None, header: bool | None = None, **_: Any
) -> Interactions:
    """Read a generic edge list ``source, target[, weight][, directed]``.

    Parameters
    ----------
    path : path-like
        Tab, comma or whitespace separated text (optionally gzip/bz2/zip compressed).
    directed : bool, optional
        Direction of every edge; default: the ``directed`` column if present, else undirected.
    header : bool, optional
        Whether the first line is a header; default: detected (a line starting with ``#``, a
        non-numeric weight field, or recognised column names).
    """
    path = os.fspath(path)
    head = _head_lines(path, 1)
    if not head:
        raise InputError("interaction file has no rows", path=path)
    sep = _delimiter(head[0])
    df = _read_frame(path, sep=sep, header=None, skip_blank_lines=False)
    if df.shape[1] < 2:
        raise InputError(
            "edge list needs at least two columns (source, target[, weight]) separated by tabs,"
            " commas or spaces", path=path, line=1,
        )
    lines = np.arange(1, len(df) + 1)
    filled = (df.astype(str).apply(lambda c: c.str.strip()) != "").any(axis=1).to_numpy()
    df, lines = df[filled], lines[filled]
    first = [str(x).strip() for x in df.iloc[0]]
    names = [re.sub(r"[\s.\-]+", "_", f.lstrip("#").strip().lower()) for f in first]
    if header is None:
        header = (
            first[0].startswith("#")
            or (len(first) >= 3 and not _is_number(first[2]))
            or (names[0] in _SRC_NAMES and names[1] in _DST_NAMES)
        )
    cols = {"source": 0, "target": 1}
    if df.shape[1] >= 3:
        cols["weight"] = 2
    if df.shape[1] >= 4:
        cols["directed"] = 3
    if header:
        named = {}
        for role, vocab in (("source", _SRC_NAMES), ("target", _DST_NAMES), ("weight", _W_NAMES),
                            ("directed", _DIR_NAMES), ("type", _TYPE_NAMES)):
            hit = [i for i, nm in enumerate(names) if nm in vocab]
            if hit:
                named[role] = hit[0]
        if "source" in named and "target" in named:
            cols = named
        df, lines = df.iloc[1:], lines[1:]
    # drop comment lines
    keep = ~df.iloc[:, 0].astype(str).str.startswith("#").to_numpy()
    df, lines = df[keep], lines[keep]
    if len(df) == 0:
        raise InputError("edge list has no edges", path=path)
    src = df.iloc[:, cols["source"]].astype(str).str.strip().to_numpy(dtype=object)
    dst = df.iloc[:, cols["target"]].astype(str).str.strip().to_numpy(dtype=object)
    empty = (src == "") | (dst == "")
    if empty.any():
        i = int(np.flatnonzero(empty)[0])
        raise InputError("edge with an empty gene id", path=path, line=int(lines[i]))
    if "weight" in cols:
        w = _parse_weights(df.iloc[:, cols["weight"]].str.strip(), lines, path,
                           column=cols["weight"] + 1)
    else:
        w = np.ones(len(df))
    if directed is not None:
        d = np.full(len(df), bool(directed))
    elif "directed" in cols:
        flags = df.iloc[:, cols["directed"]].astype(str).str.strip().str.lower()
        ok = flags.isin(_TRUE | _FALSE).to_numpy()
        if not ok.all():
            i = int(np.flatnonzero(~ok)[0])
            raise InputError(
                f"directed flag {flags.iloc[i]!r} is not one of true/false/1/0/yes/no",
                path=path, line=int(lines[i]), column=cols["directed"] + 1,
            )
        d = flags.isin(_TRUE).to_numpy()
    else:
        d = np.zeros(len(df), bool)
    t = (df.iloc[:, cols["type"]].astype(str).to_numpy(dtype=object) if "type" in cols
         else np.full(len(df), "", dtype=object))
    return _finalise(src, dst, w, d, t, path=path, info={"rows": int(len(df))})


# --------------------------------------------------------------------------- paired tables


def _column_pairs(columns: list[str]) -> list[tuple[str, str, str]]:
    """(stem, col_a, col_b) for ``x_a/x_b``, ``xa/xb`` (no) and ``source_x/target_x`` columns."""
    pairs = []
    low = {c.lower(): c for c in columns}
    for c in columns:
        cl = c.lower()
        if cl.endswith("_a") and cl[:-2] + "_b" in low:
            pairs.append((cl[:-2], c, low[cl[:-2] + "_b"]))
        elif cl.startswith("source_") and "target_" + cl[7:] in low:
            pairs.append((cl[7:], c, low["target_" + cl[7:]]))
    return pairs


def _add_alias(table: dict[str, list[str]], ids: np.ndarray, alts: np.ndarray) -> None:
    for i, a in zip(ids.tolist(), alts.tolist(), strict=True):
        if a in _NA:
            continue
        cur = table.setdefault(i, [])
        if a not in cur:
            cur.append(a)


def read_paired_table(path: str | os.PathLike, *, directed: bool | None = None,
                      **_: Any) -> Interactions:
    """Read a header table with paired id columns (``entrez_a/entrez_b``, ``source_x/target_x``).

    The first pair holds the primary ids; further pairs become ``aliases`` (e.g. the symbols
    beside Entrez ids). Weight: column ``score``/``weight``/``combined_score`` if any, else 1.
    Rows whose primary id is missing (``NA``) are dropped and counted. ``source_``/``target_``
    pairs are directed unless ``directed`` says otherwise; ``_a``/``_b`` pairs are undirected.
    """
    path = os.fspath(path)
    head = _head_lines(path, 1)
    sep = _delimiter(head[0]) if head else "\t"
    df = _read_frame(path, sep=sep, header=0)
    df.columns = [str(c).lstrip("#").strip() for c in df.columns]
    pairs = _column_pairs(list(df.columns))
    if not pairs:
        raise InputError("no paired id columns (x_a/x_b or source_x/target_x) in the header",
                         path=path, line=1)
    lines = np.arange(2, len(df) + 2)
    stem, ca, cb = pairs[0]
    src = _strip_taxon(df[ca].str.strip().to_numpy(dtype=object))
    dst = _strip_taxon(df[cb].str.strip().to_numpy(dtype=object))
    ok = ~(pd.Series(src).isin(_NA).to_numpy() | pd.Series(dst).isin(_NA).to_numpy())
    wcol = next((c for c in df.columns if c.lower() in _W_NAMES), None)
    w = (_parse_weights(df[wcol].str.strip()[ok], lines[ok], path, column=wcol) if wcol
         else np.ones(int(ok.sum())))
    aliases: dict[str, dict[str, tuple[str, ...]]] = {}
    for alt_stem, xa, xb in pairs[1:]:
        table: dict[str, list[str]] = {}
        _add_alias(table, src[ok], df[xa].str.strip().to_numpy(dtype=object)[ok])
        _add_alias(table, dst[ok], df[xb].str.strip().to_numpy(dtype=object)[ok])
        aliases[alt_stem] = {k: tuple(v) for k, v in table.items()}
    if directed is None:
        directed = ca.lower().startswith("source_")
    ns_names = {"entrez": "entrez", "symbol": "symbol", "genesymbol": "symbol",
                "uniprot": "uniprot", "protein": None, "ensembl": "ensembl_gene"}
    return _finalise(
        src[ok], dst[ok], w, np.full(int(ok.sum()), bool(directed)), "",
        path=path, namespace=ns_names.get(stem), aliases=aliases,
        info={"rows": int(len(df)), "rows_missing_id": int((~ok).sum()), "id_columns": [ca, cb]},
    )


# --------------------------------------------------------------------------- STRING


def read_string_aliases(path: str | os.PathLike,
                        proteins: set[str] | None = None) -> dict[str, dict[str, tuple[str, ...]]]:
    """Read a STRING ``protein.aliases`` or ``protein.info`` file into alias tables.

    Returns ``{kind: {ENSP: (alias, ...)}}``: one kind per alias ``source`` column value of an
    aliases file (``Ensembl_HGNC_symbol``, ``Ensembl_EntrezGene``, ``UniProt_AC``, ...), or
    ``{"preferred_name": ...}`` for an info file. Taxon prefixes (``9606.``) are removed;
    ``proteins`` restricts the table to those protein ids.
    """
    path = os.fspath(path)
    head = _head_lines(path, 1)
    if not head:
        raise InputError("STRING alias file is empty", path=path)
    first = head[0].lstrip("#").strip().lower().split("\t")
    has_header = head[0].startswith("#") or any("protein" in f for f in first)
    df = _read_frame(path, sep="\t", header=None, skiprows=1 if has_header else 0,
                     on_bad_lines="error")
    if "preferred_name" in first:
        ids, alias, src = df.iloc[:, 0], df.iloc[:, 1], None
    elif df.shape[1] >= 4 and df.iloc[:, 0].str.fullmatch(r"\d+").all():  # v10: taxon, id, ...
        ids, alias, src = df.iloc[:, 1], df.iloc[:, 2], df.iloc[:, 3]
    elif df.shape[1] >= 3:
        ids, alias, src = df.iloc[:, 0], df.iloc[:, 1], df.iloc[:, 2]
    else:
        raise InputError("expected a STRING protein.aliases (id, alias, source) or protein.info"
                         " (id, preferred_name, ...) file", path=path, line=1)
    ids = _strip_taxon(ids.str.strip().to_numpy(dtype=object))
    mask = np.ones(len(ids), bool) if proteins is None else np.isin(ids, list(proteins))
    out: dict[str, dict[str, list[str]]] = {}
    kinds = (np.full(len(ids), "preferred_name", dtype=object) if src is None
             else src.str.strip().to_numpy(dtype=object))
    for i, a, k in zip(ids[mask].tolist(), alias.to_numpy(dtype=object)[mask].tolist(),
                       kinds[mask].tolist(), strict=True):
        for kind in str(k).split():  # v10 lists several sources separated by spaces
            cur = out.setdefault(kind, {}).setdefault(i, [])
            if a not in cur:
                cur.append(a)
    return {k: {i: tuple(v) for i, v in t.items()} for k, t in out.items()}


def read_string_links(
    path: str | os.PathLike,
    *,
    min_score: float = 400,
    aliases: str | os.PathLike | None = None,
    **_: Any,
) -> Interactions:
    """Read STRING ``protein.links`` / ``.detailed`` / ``.full`` (space separated).

    Parameters
    ----------
    min_score : float, default 400
        Keep pairs with ``combined_score >= min_score`` (0-1000; ``--string-min-score``).
    aliases : path-like, optional
        STRING ``protein.aliases`` or ``protein.info`` file giving gene ids of the proteins;
        without it, the ENSP ids must match the matrix directly.

    Weights are ``combined_score / 1000``; edges are undirected (STRING lists each pair twice,
    merged here).
    """
    path = os.fspath(path)
    if not 0 <= float(min_score) <= 1000:
        raise ParameterError(f"--string-min-score {min_score} is outside 0..1000")
    head = _head_lines(path, 1)
    missing = {"protein1", "protein2", "combined_score"} - set(head[0].split(" ") if head else ())
    if missing:
        raise InputError(f"STRING links file lacks column(s) {sorted(missing)}", path=path,
                         line=1)
    src_parts, dst_parts, score_parts = [], [], []
    n_rows = 0
    with _stream_text(path, what="STRING links file") as fh, table_errors(path, "STRING links file"):
        chunks = pd.read_csv(
            fh, sep=" ", header=0, usecols=["protein1", "protein2", "combined_score"],
            dtype={"protein1": str, "protein2": str}, chunksize=1_000_000,
        )
        for chunk in chunks:  # streamed: memory follows the kept edges, not the file
            lines = np.arange(n_rows + 2, n_rows + 2 + len(chunk))
            n_rows += len(chunk)
            raw = chunk["combined_score"]
            if pd.api.types.is_numeric_dtype(raw) and raw.notna().all():
                score = raw.to_numpy(dtype=np.float64)
            else:
                score = _parse_weights(raw.astype(str), lines, path, column="combined_score")
            if (score > 1000).any() or (score < 0).any():
                i = int(np.flatnonzero((score > 1000) | (score < 0))[0])
                raise InputError(f"combined_score {score[i]:g} is outside 0..1000",
                                 path=path, line=int(lines[i]), column="combined_score")
            keep = score >= float(min_score)
            src_parts.append(chunk["protein1"].to_numpy(dtype=object)[keep])
            dst_parts.append(chunk["protein2"].to_numpy(dtype=object)[keep])
            score_parts.append(score[keep])
    src = _strip_taxon(np.concatenate(src_parts)) if src_parts else np.zeros(0, object)
    dst = _strip_taxon(np.concatenate(dst_parts)) if dst_parts else np.zeros(0, object)
    kept_scores = np.concatenate(score_parts) if score_parts else np.zeros(0)
    alias_tables = {}
    if aliases is not None:
        alias_tables = read_string_aliases(aliases, proteins=set(src) | set(dst))
    log.info("%s: %d of %d STRING rows have combined_score >= %g", path, len(src), n_rows,
             min_score)
    return _finalise(
        src, dst, kept_scores / 1000.0, False, "", path=path, namespace="ensembl_protein",
        aliases=alias_tables,
        info={"rows": n_rows, "rows_below_min_score": n_rows - len(src),
              "min_score": float(min_score)},
    )


# --------------------------------------------------------------------------- BioGRID

_SYSTEM_TYPES = ("physical", "genetic")
_BIOGRID_ALIASES = {
    "symbol": "Official Symbol Interactor {}",
    "systematic_name": "Systematic Name Interactor {}",
    "uniprot": "SWISS-PROT Accessions Interactor {}",
}


def read_biogrid(
    path: str | os.PathLike,
    *,
    taxon: int | str | None = None,
    system_type: str | None = "physical",
    **_: Any,
) -> Interactions:
    """Read BioGRID TAB2 or TAB3 (``#BioGRID Interaction ID`` header).

    Parameters
    ----------
    taxon : int, optional
        Keep interactions whose two interactors both belong to this NCBI taxon (9606 = human);
        None keeps all.
    system_type : {"physical", "genetic", None}, default "physical"
        Filter on ``Experimental System Type``; None keeps both.

    Primary ids are Entrez Gene ids (``BIOGRID:<id>`` when BioGRID gives none); official
    symbols, systematic names and (TAB3) SwissProt accessions become aliases. Edges are
    undirected with weight 1; ``type`` is the ``Experimental System``.
    """
    path = os.fspath(path)
    if system_type is not None and str(system_type).lower() not in _SYSTEM_TYPES:
        raise ParameterError(
            f"BioGRID system type {system_type!r} is not one of physical, genetic (or none)"
        )
    head = _head_lines(path, 1)
    header = [c.strip() for c in head[0].split("\t")] if head else []
    names = [c.lstrip("#").strip() for c in header]
    org = ("Organism ID Interactor A" if "Organism ID Interactor A" in names
           else "Organism Interactor A")
    need = ["Entrez Gene Interactor A", "Entrez Gene Interactor B", "BioGRID ID Interactor A",
            "BioGRID ID Interactor B", "Experimental System", "Experimental System Type", org,
            org.replace(" A", " B")]
    missing = [c for c in need if c not in names]
    if missing:
        raise InputError(f"not a BioGRID TAB2/TAB3 file: column(s) {missing} missing",
                         path=path, line=1)
    use = need + [c.format(side) for c in _BIOGRID_ALIASES.values() for side in "AB"
                  if c.format(side) in names]
    parts, n_rows = [], 0
    with _stream_text(path, what="BioGRID file") as fh, table_errors(path, "BioGRID file"):
        for chunk in pd.read_csv(fh, sep="\t", header=0, names=names, usecols=use, dtype=str,
                                 keep_default_na=False, na_filter=False, quoting=3,
                                 chunksize=500_000):
            n_rows += len(chunk)
            keep = np.ones(len(chunk), bool)
            if taxon is not None:
                t = str(taxon).strip()
                keep &= (chunk[org].str.strip() == t).to_numpy() & (
                    chunk[org.replace(" A", " B")].str.strip() == t).to_numpy()
            if system_type is not None:
                keep &= (chunk["Experimental System Type"].str.strip().str.lower()
                         == str(system_type).lower()).to_numpy()
            parts.append(chunk[keep])
    sub = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=use, dtype=str)
    ids = {}
    for side in "AB":
        ent = sub[f"Entrez Gene Interactor {side}"].str.strip().to_numpy(dtype=object)
        bg = sub[f"BioGRID ID Interactor {side}"].str.strip().to_numpy(dtype=object)
        ids[side] = np.where(pd.Series(ent).isin(_NA).to_numpy(),
                             np.array(["BIOGRID:" + b for b in bg], dtype=object), ent)
    aliases: dict[str, dict[str, tuple[str, ...]]] = {}
    for kind, col in _BIOGRID_ALIASES.items():
        if col.format("A") not in sub.columns:
            continue
        table: dict[str, list[str]] = {}
        for side in "AB":
            vals = sub[col.format(side)].str.strip().to_numpy(dtype=object)
            for i, v in zip(ids[side].tolist(), vals.tolist(), strict=True):
                for a in v.split("|"):
                    if a not in _NA and a not in table.setdefault(i, []):
                        table[i].append(a)
        aliases[kind] = {k: tuple(v) for k, v in table.items() if v}
    return _finalise(
        ids["A"], ids["B"], np.ones(len(sub)), False,
        sub["Experimental System"].to_numpy(dtype=object), path=path, namespace="entrez",
        aliases=aliases,
        info={"rows": n_rows, "rows_filtered": n_rows - len(sub),
              "taxon": None if taxon is None else str(taxon), "system_type": system_type},
    )


# --------------------------------------------------------------------------- dispatch


def _read_kgml_relations(path: str | os.PathLike, **_: Any) -> Interactions:
    from kofs.io.pathways import read_kgml  # local: pathways imports this module

    sets = read_kgml(path)
    if sets.interactions is None:
        raise InputError("KGML file(s) hold no gene-gene relations", path=path)
    return sets.interactions


def _header_fields(line: str) -> list[str]:
    return [f.strip().lstrip("#").strip() for f in re.split(r"\t|,", line)]


_SNIFFERS: tuple[tuple[str, Callable[[Path, list[str]], bool]], ...] = (
    ("kgml", lambda p, h: p.is_dir() or bool(h) and h[0].lstrip().startswith(("<?xml", "<pathway"))),
    ("biogrid", lambda p, h: bool(h) and "Entrez Gene Interactor A" in h[0]),
    ("string", lambda p, h: bool(h) and h[0].split(" ")[:2] == ["protein1", "protein2"]),
    ("paired", lambda p, h: bool(h) and bool(_column_pairs(_header_fields(h[0])))),
    ("edgelist", lambda p, h: True),
)

INTERACTION_FORMATS: dict[str, Callable[..., Interactions]] = {
    "edgelist": read_edge_list,
    "paired": read_paired_table,
    "string": read_string_links,
    "biogrid": read_biogrid,
    "kgml": _read_kgml_relations,
}


def sniff_interactions(path: str | os.PathLike) -> str:
    """Name of the interaction format of ``path`` (a key of :data:`INTERACTION_FORMATS`)."""
    p = Path(path)
    head = [] if p.is_dir() else _head_lines(p, 2)
    return next(name for name, test in _SNIFFERS if test(p, head))


def read_interactions(
    path: str | os.PathLike,
    fmt: str = "auto",
    *,
    string_min_score: float = 400,
    string_aliases: str | os.PathLike | None = None,
    biogrid_taxon: int | str | None = None,
    biogrid_system_type: str | None = "physical",
    directed: bool | None = None,
) -> Interactions:
    """Read an interaction network, dispatching on ``fmt`` (``"auto"`` sniffs the file).

    Parameters
    ----------
    path : path-like
    fmt : {"auto", "edgelist", "paired", "string", "biogrid", "kgml"}
    string_min_score : float, default 400
        STRING ``combined_score`` threshold (0-1000).
    string_aliases : path-like, optional
        STRING ``protein.aliases``/``protein.info`` file for the ENSP -> gene mapping.
    biogrid_taxon : int, optional
        BioGRID organism filter (NCBI taxon id, both interactors).
    biogrid_system_type : {"physical", "genetic", None}, default "physical"
    directed : bool, optional
        Override the direction of edge-list / paired-table edges.
    """
    fmt = sniff_interactions(path) if fmt == "auto" else fmt
    reader = INTERACTION_FORMATS.get(fmt)
    if reader is None:
        raise ParameterError(
            f"interaction format {fmt!r} is unknown; use one of auto, "
            + ", ".join(INTERACTION_FORMATS)
        )
    log.debug("reading %s as %s interactions", path, fmt)
    return reader(
        path, min_score=string_min_score, aliases=string_aliases, taxon=biogrid_taxon,
        system_type=biogrid_system_type, directed=directed,
    )
