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
``sif``
    Cytoscape simple interaction format (``*.sif``, recognised by the extension):
    ``node relType node [node ...]`` per line, tab separated (else spaces); one line may list
    several targets. Undirected, weight 1, type = the relation type.
``kgml``
    KEGG KGML relations (see :mod:`kofs.io.pathways`).

Every reader cleans the edges the same way: bad or negative weights are an
:class:`~kofs.errors.InputError` naming the line; self-loops are dropped with a warning; repeated
pairs (both orientations for undirected edges) are merged keeping the largest weight.
"""

from __future__ import annotations

import logging
import numbers
import os
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from kofs.errors import InputError, ParameterError, checked_keywords, short_repr
from kofs.io._fsops import check_path_argument
from kofs.io._open import head_lines as _head_lines
from kofs.io._table import is_number
from kofs.io.interaction_dbs import read_biogrid, read_string_links, string_separator
from kofs.io.interaction_table import (
    NA_TOKENS,
    Interactions,
    clean_edges,
    parse_weights,
    read_edge_frame,
    strip_taxon,
)
from kofs.io.kgml import read_kgml
from kofs.io.sniff import FormatTest, format_reader, is_kgml, name_suffix, sniff_format

log = logging.getLogger(__name__)

__all__ = [
    "sniff_interactions",
    "read_interactions",
    "read_edge_list",
    "read_paired_table",
    "INTERACTION_FORMATS",
]


# --------------------------------------------------------------------------- edge list

_SRC_NAMES = {
    "source",
    "src",
    "from",
    "node1",
    "gene1",
    "gene_1",
    "protein1",
    "interactor_a",
    "source_id",
    "regulator",
    "tf",
    "head",
}
_DST_NAMES = {
    "target",
    "tgt",
    "to",
    "node2",
    "gene2",
    "gene_2",
    "protein2",
    "interactor_b",
    "target_id",
    "tail",
}
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


def _fields(text: str, sep: str) -> int:
    return len(text.split()) if sep == r"\s+" else len(text.split(sep))


def _leading_comments(path: str, sep: str) -> int:
    """How many lines open the file before its header or first edge: blank lines and ``#``
    lines that do not split into as many fields as the first edge line (a ``#source<TAB>target``
    header does, and is kept); pandas takes its width from the first line it reads."""
    from kofs.io._open import stream_text

    comments: list[tuple[int, int]] = []  # (0-based line, fields) of '#' lines before the data
    with stream_text(path, what="interaction file") as fh:
        for i, line in enumerate(fh):
            text = line.strip()
            if not text:
                continue
            if text.startswith("#"):
                comments.append((i, _fields(text, sep)))
                continue
            width = _fields(text, sep)
            return next((j for j, w in reversed(comments) if w == width), i)
    return 0


def _stripped(df: pd.DataFrame) -> pd.DataFrame:
    """The frame's cells as stripped text."""
    return df.astype(str).apply(lambda c: c.str.strip())


def _spaced_short_rows(cells: pd.DataFrame) -> int | None:
    """The 0-based row of a tab-separated frame (its :func:`_stripped` cells) whose line used
    spaces between columns (a cell holding white space beside an empty cell; comment lines
    aside), or None."""
    short = (cells == "").any(axis=1).to_numpy()
    if not short.any():
        return None
    rows = cells[short]
    spaced = rows.apply(lambda c: c.str.contains(r"\s", regex=True)).any(axis=1).to_numpy()
    spaced &= ~rows.iloc[:, 0].str.startswith("#").to_numpy()
    hit = np.flatnonzero(short)[spaced]
    return int(hit[0]) if hit.size else None


def _whitespace_is_consistent(path: str) -> bool:
    """Every non-blank, non-comment line splits into the same number (>= 2) of fields at white
    space: reading the file as whitespace-separated is unambiguous."""
    from kofs.io._open import stream_text

    widths: set[int] = set()
    with stream_text(path, what="interaction file") as fh:
        for line in fh:
            fields = line.split()
            if fields and not fields[0].startswith("#"):
                widths.add(len(fields))
                if len(widths) > 1:
                    return False
    return len(widths) == 1 and min(widths) >= 2


def read_edge_list(
    path: str | os.PathLike, *, directed: bool | None = None, header: bool | None = None, **_: Any
) -> Interactions:
    """Read a generic edge list ``source, target[, weight][, directed]``.

    Parameters
    ----------
    path : path-like
        Tab, comma or whitespace separated text (optionally gzip/bz2/zip compressed). A
        tab-separated file some of whose lines separate columns with spaces is read as
        whitespace-separated when every line then splits into as many columns; otherwise the
        first such line is an error.
    directed : bool, optional
        Direction of every edge; default: the ``directed`` column if present, else undirected.
    header : bool, optional
        Whether the first line is a header; default: detected (a line starting with ``#``, a
        non-numeric weight field, or recognised column names).
    """
    path = os.fspath(path)
    head = _head_lines(path, 50)
    if not head:
        raise InputError("interaction file has no rows", path=path)
    # the delimiter of the data, not of a comment line above it
    sep = _delimiter(next((h for h in head if not h.lstrip().startswith("#")), head[0]))
    skip = _leading_comments(path, sep)
    df = read_edge_frame(path, sep=sep, header=None, skip_blank_lines=False, skiprows=skip)
    cells = _stripped(df)
    if sep == "\t" and df.shape[1] >= 2:
        mixed = _spaced_short_rows(cells)
        if mixed is not None:
            if not _whitespace_is_consistent(path):
                raise InputError(
                    "this line separates columns with spaces where other lines use tabs, and "
                    "the lines do not split into the same number of columns at white space; "
                    "separate every line's columns with tabs",
                    path=path,
                    line=skip + mixed + 1,
                )
            log.info(
                "%s: some lines separate columns with tabs, others with spaces (line %d): read "
                "as whitespace-separated",
                path, skip + mixed + 1,
            )  # fmt: skip
            sep = r"\s+"
            df = read_edge_frame(path, sep=sep, header=None, skip_blank_lines=False, skiprows=skip)
            cells = _stripped(df)
    if df.shape[1] < 2:
        raise InputError(
            "edge list needs at least two columns (source, target[, weight]) separated by tabs,"
            " commas or spaces",
            path=path,
            line=1,
        )
    lines = np.arange(skip + 1, skip + len(df) + 1)
    filled = (cells != "").any(axis=1).to_numpy()
    df, lines = df[filled], lines[filled]
    first = [str(x).strip() for x in df.iloc[0]]
    names = [re.sub(r"[\s.\-]+", "_", f.lstrip("#").strip().lower()) for f in first]
    if header is None:
        header = (
            first[0].startswith("#")
            or (len(first) >= 3 and not is_number(first[2]))
            or (names[0] in _SRC_NAMES and names[1] in _DST_NAMES)
        )
    cols = {"source": 0, "target": 1}
    if df.shape[1] >= 3:
        cols["weight"] = 2
    if df.shape[1] >= 4:
        cols["directed"] = 3
    if header:
        named = {}
        for role, vocab in (
            ("source", _SRC_NAMES),
            ("target", _DST_NAMES),
            ("weight", _W_NAMES),
            ("directed", _DIR_NAMES),
            ("type", _TYPE_NAMES),
        ):
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
    prefixed = pd.Series(np.concatenate([src, dst])).str.match(r"\d+\.[A-Za-z]")
    if prefixed.all():  # STRING's ids (9606.ENSP...), as the STRING and paired readers read them
        src, dst = strip_taxon(src), strip_taxon(dst)
    if "weight" in cols:
        w = parse_weights(
            df.iloc[:, cols["weight"]].str.strip(), lines, path, column=cols["weight"] + 1
        )
    else:
        w = np.ones(len(df))
    if directed is not None:
        d = np.full(len(df), bool(directed))
    elif "directed" in cols:
        d = _direction_flags(df.iloc[:, cols["directed"]], lines, path, cols["directed"] + 1)
    else:
        d = np.zeros(len(df), bool)
    t = (
        df.iloc[:, cols["type"]].astype(str).to_numpy(dtype=object)
        if "type" in cols
        else np.full(len(df), "", dtype=object)
    )
    return clean_edges(src, dst, w, d, t, path=path, info={"rows": int(len(df))})


def _direction_flags(column: pd.Series, lines: np.ndarray, path: str, number: int) -> np.ndarray:
    """A ``directed`` column's flags as booleans; a flag that is not true/false/1/0/yes/no is an
    InputError naming its line and column (``number``, 1-based)."""
    flags = column.astype(str).str.strip().str.lower()
    ok = flags.isin(_TRUE | _FALSE).to_numpy()
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        raise InputError(
            f"directed flag {flags.iloc[i]!r} is not one of true/false/1/0/yes/no",
            path=path,
            line=int(lines[i]),
            column=number,
        )
    return flags.isin(_TRUE).to_numpy()


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
        if a in NA_TOKENS:
            continue
        cur = table.setdefault(i, [])
        if a not in cur:
            cur.append(a)


def read_paired_table(
    path: str | os.PathLike, *, directed: bool | None = None, **_: Any
) -> Interactions:
    """Read a header table with paired id columns (``entrez_a/entrez_b``, ``source_x/target_x``).

    The first pair holds the primary ids; further pairs become ``aliases`` (e.g. the symbols
    beside Entrez ids). Weight: column ``score``/``weight``/``combined_score`` if any, else 1.
    Rows whose primary id is missing (``NA``, empty, or a line cut short) are dropped, counted
    and warned of (with the first one's line). ``source_``/``target_`` pairs are directed
    unless ``directed`` says otherwise; ``_a``/``_b`` pairs are undirected;
    a ``directed``/``is_directed`` column (OmniPath's) gives each edge's direction instead.
    """
    path = os.fspath(path)
    head = _head_lines(path, 1)
    sep = _delimiter(head[0]) if head else "\t"
    df = read_edge_frame(path, sep=sep, header=0)
    df.columns = [str(c).lstrip("#").strip() for c in df.columns]
    pairs = _column_pairs(list(df.columns))
    if not pairs:
        raise InputError(
            "no paired id columns (x_a/x_b or source_x/target_x) in the header", path=path, line=1
        )
    lines = np.arange(2, len(df) + 2)
    stem, ca, cb = pairs[0]
    src = strip_taxon(df[ca].str.strip().to_numpy(dtype=object))
    dst = strip_taxon(df[cb].str.strip().to_numpy(dtype=object))
    ok = ~(pd.Series(src).isin(NA_TOKENS).to_numpy() | pd.Series(dst).isin(NA_TOKENS).to_numpy())
    if not ok.all():  # they were dropped without a word (a line cut short among them)
        log.warning(
            "%s: dropped %d row(s) without an id in %s or %s (NA, empty, or a line with fewer "
            "fields than the header; e.g. line %d)",
            path, int((~ok).sum()), ca, cb, int(lines[~ok][0]),
        )  # fmt: skip
    wcol = next((c for c in df.columns if c.lower() in _W_NAMES), None)
    w = (
        parse_weights(df[wcol].str.strip()[ok], lines[ok], path, column=wcol)
        if wcol
        else np.ones(int(ok.sum()))
    )
    aliases: dict[str, dict[str, tuple[str, ...]]] = {}
    for alt_stem, xa, xb in pairs[1:]:
        table: dict[str, list[str]] = {}
        _add_alias(table, src[ok], df[xa].str.strip().to_numpy(dtype=object)[ok])
        _add_alias(table, dst[ok], df[xb].str.strip().to_numpy(dtype=object)[ok])
        aliases[alt_stem] = {k: tuple(v) for k, v in table.items()}
    dcol = next((c for c in df.columns if c.lower() in _DIR_NAMES), None)
    if directed is not None:
        flags = np.full(int(ok.sum()), bool(directed))
    elif dcol is not None:  # OmniPath's is_directed: 0 for its undirected edges
        flags = _direction_flags(df[dcol][ok], lines[ok], path, list(df.columns).index(dcol) + 1)
    else:
        flags = np.full(int(ok.sum()), ca.lower().startswith("source_"))
    ns_names = {
        "entrez": "entrez",
        "symbol": "symbol",
        "genesymbol": "symbol",
        "uniprot": "uniprot",
        "protein": None,
        "ensembl": "ensembl_gene",
    }
    return clean_edges(
        src[ok],
        dst[ok],
        w,
        flags,
        "",
        path=path,
        namespace=ns_names.get(stem),
        aliases=aliases,
        info={"rows": int(len(df)), "rows_missing_id": int((~ok).sum()), "id_columns": [ca, cb]},
    )


# --------------------------------------------------------------------------- dispatch


def _read_kgml_relations(path: str | os.PathLike, **_: Any) -> Interactions:
    sets = read_kgml(path)
    if sets.interactions is None:
        raise InputError("KGML file(s) hold no gene-gene relations", path=path)
    return sets.interactions


def _read_sif(path: str | os.PathLike, **_: Any) -> Interactions:
    from kofs.io.graph_files import read_graph

    return read_graph(path, "sif")


def _header_fields(line: str) -> list[str]:
    return [f.strip().lstrip("#").strip() for f in re.split(r"\t|,", line)]


def _is_string_links(head: list[str]) -> bool:
    """STRING's ``protein.links`` header: space separated as STRING writes it, or tab or comma
    separated (re-saved by a spreadsheet or R) with STRING's whole-number combined_score >= 2
    on the first row (a 0-1 score of that header is an edge list's weight)."""
    if not head:
        return False
    if head[0].split(" ")[:2] == ["protein1", "protein2"]:
        return True
    sep = string_separator(head[0])
    names = [f.strip() for f in head[0].split(sep)]
    if names[:2] != ["protein1", "protein2"] or "combined_score" not in names or len(head) < 2:
        return False
    row = head[1].split(sep)
    score = row[names.index("combined_score")].strip() if len(row) == len(names) else ""
    return score.isdigit() and int(score) >= 2


_SNIFFERS: tuple[tuple[str, FormatTest], ...] = (
    ("kgml", is_kgml),
    ("sif", lambda p, h: name_suffix(p) == ".sif"),
    ("biogrid", lambda p, h: bool(h) and "Entrez Gene Interactor A" in h[0]),
    ("string", lambda p, h: _is_string_links(h)),
    ("paired", lambda p, h: bool(h) and bool(_column_pairs(_header_fields(h[0])))),
    ("edgelist", lambda p, h: True),
)

INTERACTION_FORMATS: dict[str, Callable[..., Interactions]] = {
    "edgelist": read_edge_list,
    "paired": read_paired_table,
    "string": read_string_links,
    "biogrid": read_biogrid,
    "kgml": _read_kgml_relations,
    "sif": _read_sif,
}


def sniff_interactions(path: str | os.PathLike) -> str:
    """Name of the interaction format of ``path`` (a key of :data:`INTERACTION_FORMATS`)."""
    return sniff_format(path, _SNIFFERS)


def _warn_other_format(
    path: str | os.PathLike, fmt: str, aliases: Any, taxon: Any, system_type: str | None
) -> None:
    """The options of one interaction format given for a file of another: one warning each
    (they changed nothing)."""
    from kofs.options import warn_no_effect

    if aliases is not None and fmt != "string":
        warn_no_effect(
            [f"--string-aliases {aliases}"],
            f"{path} is read as {fmt}, not as a STRING protein.links file (whose protein ids "
            "the aliases map to genes)",
        )
    biogrid = [f"--biogrid-taxon {taxon}"] if taxon is not None else []
    if system_type != "physical":
        biogrid.append(f"--biogrid-system-type {system_type or 'all'}")
    if fmt != "biogrid":
        warn_no_effect(biogrid, f"{path} is read as {fmt}, not as a BioGRID TAB2/TAB3 file")


@checked_keywords
def read_interactions(
    path: str | os.PathLike,
    fmt: str = "auto",
    *,
    string_min_score: float | None = None,
    string_aliases: str | os.PathLike | None = None,
    biogrid_taxon: int | str | None = None,
    biogrid_system_type: str | None = "physical",
    directed: bool | None = None,
) -> Interactions:
    """Read an interaction network, dispatching on ``fmt`` (``"auto"`` sniffs the file).

    Parameters
    ----------
    path : path-like
    fmt : {"auto", "edgelist", "paired", "string", "biogrid", "kgml", "sif"}
        ``"auto"``: SIF by the ``.sif`` extension (``.gz`` etc. skipped), the others by content.
    string_min_score : float, optional
        STRING ``combined_score`` threshold (0-1000; default 400, STRING's "medium
        confidence"). It applies to STRING ``protein.links`` files only: given for another
        format (e.g. a STRING-derived edge list whose ``score`` is already 0-1) it has no
        effect and one warning says so (use ``min_weight`` of the converter,
        ``--interaction-min-weight``, to drop light edges of any format).
    string_aliases : path-like, optional
        STRING ``protein.aliases``/``protein.info`` file for the ENSP -> gene mapping.
    biogrid_taxon : int, optional
        BioGRID organism filter (NCBI taxon id, both interactors).
    biogrid_system_type : {"physical", "genetic", None}, default "physical"
    directed : bool, optional
        Override the direction of edge-list / paired-table edges.

    Returns
    -------
    Interactions
        The edge table (ids not yet matched to a matrix).
    """
    check_path_argument(path, "read_interactions")
    # the command line's ranges and choices (a text was a TypeError, -5 or 5000 kept all or
    # none of the edges, "yes" read as directed)
    if string_min_score is not None and (
        isinstance(string_min_score, bool)
        or not isinstance(string_min_score, numbers.Real)
        or not 0 <= string_min_score <= 1000
    ):
        raise ParameterError(
            f"read_interactions: string_min_score must be a STRING combined_score in "
            f"[0, 1000], got {short_repr(string_min_score, 40)}"
        )
    if biogrid_system_type not in ("physical", "genetic", None):  # read_biogrid's words
        raise ParameterError(
            f"BioGRID system type {short_repr(biogrid_system_type, 40)} is not one of "
            "physical, genetic (or none)"
        )
    if directed not in (None, True, False):
        raise ParameterError(
            f"read_interactions: directed must be True, False or None, got "
            f"{short_repr(directed, 40)}"
        )
    fmt = sniff_interactions(path) if fmt == "auto" else fmt
    reader = format_reader(fmt, INTERACTION_FORMATS, "interaction")
    log.debug("reading %s as %s interactions", path, fmt)
    if string_min_score is not None and fmt != "string":
        log.warning(
            "--string-min-score %g is ignored: %s is read as %s, not as a STRING protein.links "
            "file with combined_score; to drop light edges use --interaction-min-weight "
            "(e.g. %g for a 0-1 score)",
            string_min_score, path, fmt, string_min_score / 1000,
        )  # fmt: skip
    _warn_other_format(path, fmt, string_aliases, biogrid_taxon, biogrid_system_type)
    return reader(
        path,
        min_score=400 if string_min_score is None else string_min_score,
        aliases=string_aliases,
        taxon=biogrid_taxon,
        system_type=biogrid_system_type,
        directed=directed,
    )
