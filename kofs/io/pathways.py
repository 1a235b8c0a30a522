"""Read pathway / gene-set files into :class:`GeneSets` (book: K_FUN^FEA and, for KGML
relations, K_INT^FEA).

Formats (``read_pathways(path, fmt="auto")`` sniffs them):

``gmt``
    MSigDB GMT: ``set_id<TAB>description<TAB>gene<TAB>gene...``. Lines without genes are skipped
    with a warning; a repeated set id is an error; a field in double quotes (R's
    ``write.table``) loses one layer of them.
``gmx``
    GSEA GMX (``*.gmx``): one gene set per column, row 1 the set ids, row 2 the descriptions,
    then the genes; blank cells pad the shorter columns. Read like a GMT.
``kegg_link``
    KEGG REST ``link`` output, ``hsa:5230<TAB>path:hsa00010`` (either column order); set names
    from an optional ``list/pathway`` file (``path:hsa00010<TAB>Glycolysis / ...``).
``kegg_table``
    One pathway per row with comma lists: ``pathway_id, [msigdb_name,] ..., entrez_ids, symbols``
    (the shared ``kegg_hsa_pathways_*.tsv``).
``kegg_gene2pathway``
    Long table ``pathway_id, entrez_id[, symbol]`` (the shared ``kegg_hsa_gene2pathway_*``).
``kgml``
    KEGG KGML XML (a file or a directory of ``*.xml``): gene entries (several ids per entry),
    group entries (complexes) and relations, returned as directed typed gene-gene edges in
    :attr:`GeneSets.interactions`.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable
from typing import Any

from kofs.errors import InputError, checked_keywords, short_repr
from kofs.io._fsops import check_path_argument
from kofs.io._open import open_text as _open_text
from kofs.io.gene_sets import GeneSets, strip_org
from kofs.io.ids import guess_namespace
from kofs.io.kgml import read_kgml
from kofs.io.sniff import FormatTest, format_reader, is_kgml, name_suffix, sniff_format

log = logging.getLogger(__name__)

__all__ = [
    "sniff_pathways",
    "PATHWAY_FORMATS",
    "read_pathways",
    "read_gmt",
    "read_gmx",
    "read_kegg_link",
    "read_kegg_table",
    "read_kegg_gene2pathway",
]

# --------------------------------------------------------------------------- GMT

#: a gene with its weight, as Enrichr's libraries write them (``CD74,1.0``)
_WEIGHTED = re.compile(r"^(.*?\S)\s*,\s*[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$")


def _unquote(field: str) -> str:
    """``field`` stripped, without one layer of enclosing double quotes (``"TP53"`` -> ``TP53``,
    as R's ``write.table`` quotes every field); a lone or unmatched quote is kept."""
    field = field.strip()
    if len(field) >= 2 and field[0] == field[-1] == '"':
        return field[1:-1].strip()
    return field


def _warn_genes_as_descriptions(
    path: str, second: list[tuple[int, str, str]], members: list[list[str]]
) -> None:
    """One warning when the second field of most lines is a gene of the file's sets (not a
    part of its own set id, as a transcription factor's targets named after it): a GMT written
    without its description column, whose first gene of every set is then read as the
    description and lost."""
    genes = {g.upper() for m in members for g in m}
    hits = [
        (line, d) for line, sid, d in second if d.upper() in genes and d.upper() not in sid.upper()
    ]
    if len(second) >= 3 and 2 * len(hits) >= len(second):
        line, d = hits[0]
        log.warning(
            "%s: the second field of %d of %d lines is a gene of the file's sets (e.g. %s on "
            "line %d), read as the set's description, not as a member; a GMT line is set "
            "id<TAB>description<TAB>gene<TAB>gene...: if the file has no description column, "
            "add one (e.g. na) after every set id",
            path, len(hits), len(second), short_repr(d), line,
        )  # fmt: skip


def read_gmt(path: str | os.PathLike, **_: Any) -> GeneSets:
    """Read an MSigDB GMT file (one set per line, tab separated).

    Raises
    ------
    InputError
        A line with a single field, or a set id already used on an earlier line.
    """
    path = os.fspath(path)
    ids, descr, members = [], [], []
    seen: dict[str, int] = {}
    empty = n_weighted = 0
    second: list[tuple[int, str, str]] = []  # (line, set id, description) of every set line
    with _open_text(path, what="gene-set file") as fh:
        for lineno, line in enumerate(fh, start=1):
            text = line.rstrip("\r\n")
            if not text.strip() or text.startswith("#"):
                continue
            fields = [_unquote(f) for f in text.split("\t")]
            if len(fields) < 2:
                raise InputError(
                    "GMT line needs set id<TAB>description<TAB>genes...; found no tab",
                    path=path,
                    line=lineno,
                )
            sid = fields[0].strip()
            if not sid:
                raise InputError("GMT line has an empty set id", path=path, line=lineno)
            if sid in seen:
                raise InputError(
                    f"set id {sid!r} repeats the set of line {seen[sid]}; set ids must be unique",
                    path=path,
                    line=lineno,
                )
            seen[sid] = lineno
            genes = [g.strip() for g in fields[2:] if g.strip()]
            spaced = [g for g in genes if len(g.split()) > 1]
            if spaced and 2 * len(spaced) > len(genes):  # each entry would be one 'gene'
                raise InputError(
                    f"the genes of set {sid!r} are separated by spaces ({short_repr(spaced[0])}); "
                    "a GMT line is set id<TAB>description<TAB>gene<TAB>gene...",
                    path=path,
                    line=lineno,
                )
            weighted = [_WEIGHTED.match(g) for g in genes]
            if all(weighted):  # Enrichr's 'GENE,1.0': the weight is no part of the id
                genes = [m[1] for m in weighted if m]
                n_weighted += len(genes)
            second.append((lineno, sid, fields[1].strip()))
            if not genes:
                empty += 1
                continue
            ids.append(sid)
            descr.append(fields[1].strip())
            members.append(genes)
    if empty:
        log.warning("%s: skipped %d gene set(s) without genes", path, empty)
    _warn_genes_as_descriptions(path, second, members)
    if n_weighted:
        log.info(
            "%s: %d genes written GENE,weight (Enrichr's format): weights ignored", path, n_weighted
        )
    if not ids:
        raise InputError("GMT file holds no gene set with genes", path=path)
    ns = guess_namespace(g for m in members for g in m)
    return GeneSets(ids, ids, descr, members, namespace=ns, path=path)


def read_gmx(path: str | os.PathLike, **_: Any) -> GeneSets:
    """Read a GSEA GMX file: one gene set per column (tab separated), row 1 the set ids, row 2
    the descriptions, then the member genes; blank cells pad the shorter columns.

    Fields in double quotes lose one layer of them, as in :func:`read_gmt`; a set without genes
    is skipped with a warning.

    Raises
    ------
    InputError
        Fewer than two rows, a column with genes but no set id, or a set id used by two
        columns.
    """
    path = os.fspath(path)
    rows: list[tuple[int, list[str]]] = []
    with _open_text(path, what="gene-set file") as fh:
        for lineno, line in enumerate(fh, start=1):
            text = line.rstrip("\r\n")
            if text.strip():
                rows.append((lineno, [_unquote(f) for f in text.split("\t")]))
    if len(rows) < 2:
        raise InputError(
            "a GMX file needs a row of set ids, a row of descriptions, then the genes, one set "
            "per column; found fewer than two rows",
            path=path,
        )
    (id_line, ids), (_, descr) = rows[0], rows[1]
    width = max(len(r) for _, r in rows)
    columns: list[list[str]] = [[] for _ in range(width)]
    for _, r in rows[2:]:
        for j, g in enumerate(r):
            if g:
                columns[j].append(g)
    seen: dict[str, int] = {}
    out_ids, out_descr, members = [], [], []
    empty = 0
    for j in range(width):
        sid = ids[j] if j < len(ids) else ""
        if not sid:
            if columns[j] or (j < len(descr) and descr[j]):
                raise InputError(
                    f"column {j + 1} has genes but no set id in row 1",
                    path=path, line=id_line, column=j + 1,
                )  # fmt: skip
            continue
        if sid in seen:
            raise InputError(
                f"set id {sid!r} names columns {seen[sid]} and {j + 1}; set ids must be unique",
                path=path, line=id_line, column=j + 1,
            )  # fmt: skip
        seen[sid] = j + 1
        if not columns[j]:
            empty += 1
            continue
        out_ids.append(sid)
        out_descr.append(descr[j] if j < len(descr) else "")
        members.append(columns[j])
    if empty:
        log.warning("%s: skipped %d gene set(s) without genes", path, empty)
    if not out_ids:
        raise InputError("GMX file holds no gene set with genes", path=path)
    ns = guess_namespace(g for m in members for g in m)
    return GeneSets(out_ids, out_ids, out_descr, members, namespace=ns, path=path)


# --------------------------------------------------------------------------- KEGG link / tables


def _read_kegg_names(path: str | os.PathLike) -> dict[str, str]:
    names: dict[str, str] = {}
    first: dict[str, int] = {}
    with _open_text(path, what="KEGG pathway names file") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            fields = line.rstrip("\r\n").split("\t")
            if len(fields) < 2:
                raise InputError(
                    "KEGG names line needs pathway id<TAB>name", path=path, line=lineno
                )
            pid = fields[0].strip().removeprefix("path:")
            name = re.sub(r" - [^-]+\([^)]*\)$", "", fields[1].strip())
            if names.get(pid, name) != name:  # the last name won, without a word
                raise InputError(
                    f"pathway {pid} has two names: {names[pid]!r} (line {first[pid]}) and "
                    f"{name!r}; keep one",
                    path=path,
                    line=lineno,
                )
            first.setdefault(pid, lineno)
            names[pid] = name
    return names


def read_kegg_link(
    path: str | os.PathLike, *, names: str | os.PathLike | None = None, **_: Any
) -> GeneSets:
    """Read KEGG REST ``link`` output (``hsa:5230<TAB>path:hsa00010``, either order).

    Parameters
    ----------
    names : path-like, optional
        KEGG ``list/pathway/<org>`` output giving the pathway names; the trailing
        `` - Homo sapiens (human)`` is removed from the name (kept in the description).
    """
    path = os.fspath(path)
    sets: dict[str, list[str]] = {}
    with _open_text(path, what="KEGG link file") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            fields = line.strip().split("\t")
            pw = [f for f in fields if f.startswith("path:")]
            genes = [f for f in fields if not f.startswith("path:")]
            if len(fields) != 2 or len(pw) != 1:
                raise InputError(
                    "KEGG link line must be gene<TAB>path:<id> (e.g. hsa:5230<TAB>path:hsa00010)",
                    path=path,
                    line=lineno,
                )
            if not pw[0][5:].strip():  # was a gene set with the id ''
                raise InputError(
                    f"KEGG link line has an empty pathway id ({pw[0]!r}); write path:<id>",
                    path=path,
                    line=lineno,
                )
            sets.setdefault(pw[0][5:], []).append(strip_org(genes[0]))
    if not sets:
        raise InputError("KEGG link file holds no gene-pathway pairs", path=path)
    full = {}
    if names is not None:
        with _open_text(names, what="KEGG pathway names file") as fh:
            full = {
                ln.split("\t")[0].strip().removeprefix("path:"): ln.split("\t", 1)[1].strip()
                for ln in fh
                if "\t" in ln
            }
    short = _read_kegg_names(names) if names is not None else {}
    ids = list(sets)
    members = [sets[i] for i in ids]
    ns = "entrez" if all(g.isdigit() for m in members for g in m) else "kegg"
    return GeneSets(
        ids,
        [short.get(i, i) for i in ids],
        [full.get(i, "") for i in ids],
        members,
        namespace=ns,
        path=path,
    )


def _read_tsv_rows(path: str, required: tuple[str, ...]) -> tuple[list[str], list[list[str]]]:
    with _open_text(path, what="KEGG table") as fh:
        rows = [ln.rstrip("\r\n").split("\t") for ln in fh]
    header = [h.strip() for h in rows[0]]
    missing = [c for c in required if c not in header]
    if missing:
        raise InputError(f"KEGG table lacks column(s) {missing}", path=path, line=1)
    for lineno, r in enumerate(rows[1:], start=2):
        if len(r) != len(header) and any(x.strip() for x in r):
            raise InputError(
                f"row has {len(r)} fields, the header {len(header)}", path=path, line=lineno
            )
        if any(x.strip() for x in r) and not r[header.index("pathway_id")].strip():
            # was a gene set with the id '' (a GMT line without a set id is refused alike)
            raise InputError(
                "the pathway_id is empty; every row needs its pathway's id",
                path=path,
                line=lineno,
                column="pathway_id",
            )
    return header, [r for r in rows[1:] if any(x.strip() for x in r)]


def read_kegg_table(path: str | os.PathLike, **_: Any) -> GeneSets:
    """Read a one-pathway-per-row table with comma lists (``pathway_id, ..., entrez_ids,
    symbols``). Entrez ids are the members; the symbol lists become ``alt_members["symbol"]``
    (they are not paired with the Entrez ids). Names: ``msigdb_name`` when not ``NA``, else
    the pathway id."""
    path = os.fspath(path)
    header, rows = _read_tsv_rows(path, ("pathway_id", "entrez_ids"))
    col = {h: i for i, h in enumerate(header)}

    def split(s: str) -> list[str]:
        return [x.strip() for x in s.split(",") if x.strip() and x.strip() != "NA"]

    ids = [r[col["pathway_id"]].strip() for r in rows]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise InputError(f"pathway id {dup!r} appears twice", path=path)
    names = ids
    if "msigdb_name" in col:
        names = [
            r[col["msigdb_name"]].strip() if r[col["msigdb_name"]].strip() not in ("", "NA") else i
            for r, i in zip(rows, ids, strict=True)
        ]
    members = [split(r[col["entrez_ids"]]) for r in rows]
    alt = {"symbol": [split(r[col["symbols"]]) for r in rows]} if "symbols" in col else {}
    keep = [t for t, m in enumerate(members) if m]
    if len(keep) < len(members):
        log.warning("%s: skipped %d pathway(s) without genes", path, len(members) - len(keep))
    if not keep:
        raise InputError("KEGG table holds no pathway with genes", path=path)
    return GeneSets(
        [ids[t] for t in keep],
        [names[t] for t in keep],
        (),
        [members[t] for t in keep],
        namespace="entrez",
        path=path,
        alt_members={k: [v[t] for t in keep] for k, v in alt.items()},
    )


def read_kegg_gene2pathway(path: str | os.PathLike, **_: Any) -> GeneSets:
    """Read a long ``pathway_id, entrez_id[, symbol]`` table (one gene-pathway pair per row)."""
    path = os.fspath(path)
    header, rows = _read_tsv_rows(path, ("pathway_id", "entrez_id"))
    col = {h: i for i, h in enumerate(header)}
    sets: dict[str, list[str]] = {}
    syms: dict[str, list[str]] = {}
    for r in rows:
        pid = r[col["pathway_id"]].strip()
        gene = r[col["entrez_id"]].strip()
        sets.setdefault(pid, [])
        if gene and gene != "NA":
            sets[pid].append(gene)
        if "symbol" in col and r[col["symbol"]].strip() not in ("", "NA"):
            syms.setdefault(pid, []).append(r[col["symbol"]].strip())
    ids = [i for i in sets if any(sets[i])]
    if not ids:
        raise InputError("KEGG gene-pathway table holds no pairs", path=path)
    alt = {"symbol": [syms.get(i, []) for i in ids]} if "symbol" in col else {}
    return GeneSets(
        ids, ids, (), [sets[i] for i in ids], namespace="entrez", path=path, alt_members=alt
    )


# --------------------------------------------------------------------------- dispatch


def _header(h: list[str]) -> set[str]:
    return {x.strip().lower() for x in h[0].split("\t")} if h else set()


_SNIFFERS: tuple[tuple[str, FormatTest], ...] = (
    ("kgml", is_kgml),
    ("kegg_table", lambda p, h: {"pathway_id", "entrez_ids"} <= _header(h)),
    ("kegg_gene2pathway", lambda p, h: {"pathway_id", "entrez_id"} <= _header(h)),
    (
        "kegg_link",
        lambda p, h: (
            bool(h)
            and len(h[0].split("\t")) == 2
            and any(f.startswith("path:") for f in h[0].split("\t"))
        ),
    ),
    ("gmx", lambda p, h: name_suffix(p) == ".gmx"),
    ("gmt", lambda p, h: True),
)

PATHWAY_FORMATS: dict[str, Callable[..., GeneSets]] = {
    "gmt": read_gmt,
    "gmx": read_gmx,
    "kegg_link": read_kegg_link,
    "kegg_table": read_kegg_table,
    "kegg_gene2pathway": read_kegg_gene2pathway,
    "kgml": read_kgml,
}


def sniff_pathways(path: str | os.PathLike) -> str:
    """Name of the pathway format of ``path`` (a key of :data:`PATHWAY_FORMATS`)."""
    return sniff_format(path, _SNIFFERS)


@checked_keywords
def read_pathways(
    path: str | os.PathLike, fmt: str = "auto", *, names: str | os.PathLike | None = None
) -> GeneSets:
    """Read gene sets / pathways, dispatching on ``fmt`` (``"auto"`` sniffs the file).

    Parameters
    ----------
    path : path-like
        A file, or a directory of KGML files.
    fmt : {"auto", "gmt", "gmx", "kegg_link", "kegg_table", "kegg_gene2pathway", "kgml"}
        ``"auto"``: GMX by the ``.gmx`` extension (``.gz`` etc. skipped), the others by content.
    names : path-like, optional
        KEGG pathway names (``list/pathway`` output) for ``kegg_link``.

    Returns
    -------
    GeneSets
        The sets with their member ids (not yet matched to a matrix).
    """
    check_path_argument(path, "read_pathways")
    fmt = sniff_pathways(path) if fmt == "auto" else fmt
    reader = format_reader(fmt, PATHWAY_FORMATS, "pathway")
    log.debug("reading %s as %s", path, fmt)
    if names is not None and fmt != "kegg_link":
        log.warning(
            "%s: --kegg-names names the pathways of a KEGG link file; this file is %s (its "
            "pathways carry their own names): %s is not read",
            path,
            fmt,
            names,
        )
        names = None
    return reader(path, names=names)
