"""Read pathway / gene-set files into :class:`GeneSets` (book: K_FUN^FEA and, for KGML
relations, K_INT^FEA).

Formats (``read_pathways(path, fmt="auto")`` sniffs them):

``gmt``
    MSigDB GMT: ``set_id<TAB>description<TAB>gene<TAB>gene...``. Lines without genes are skipped
    with a warning; a repeated set id is an error.
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
import pyexpat
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from kofs.errors import InputError, ParameterError
from kofs.io.ids import _head_lines, _open_text, guess_namespace
from kofs.io.interactions import Interactions, _finalise

log = logging.getLogger(__name__)

__all__ = [
    "sniff_pathways",
    "GeneSets",
    "PATHWAY_FORMATS",
    "read_pathways",
    "read_gmt",
    "read_kegg_link",
    "read_kegg_table",
    "read_kegg_gene2pathway",
    "read_kgml",
]

_ORG_PREFIX = re.compile(r"^[a-z]{2,4}:")


@dataclass(frozen=True, eq=False)
class GeneSets:
    """Named gene sets (pathways) as read from a file, ids not yet matched to a matrix.

    Attributes
    ----------
    ids : tuple of str
        Set ids (``KEGG_CELL_CYCLE``, ``hsa04110``), unique.
    names, descriptions : tuple of str
        One per set (names default to the ids).
    members : tuple of tuple of str
        Member gene ids of each set (primary id kind, no repeats).
    namespace : str or None
        Kind of the member ids (``"entrez"``, ``"symbol"``, ...).
    path : str or None
        File (or directory) read.
    alt_members : mapping of str to tuple of tuple of str
        The same sets written in other id kinds (e.g. ``{"symbol": ...}``), not paired gene by
        gene with ``members``; a converter uses the kind matching the matrix best.
    interactions : Interactions or None
        Gene-gene relations (KGML only).
    """

    ids: tuple[str, ...]
    names: tuple[str, ...]
    descriptions: tuple[str, ...]
    members: tuple[tuple[str, ...], ...]
    namespace: str | None = None
    path: str | None = None
    alt_members: Mapping[str, tuple[tuple[str, ...], ...]] = field(default_factory=dict)
    interactions: Interactions | None = None

    def __post_init__(self) -> None:
        def sets(ms):
            return tuple(tuple(dict.fromkeys(str(g) for g in m)) for m in ms)

        object.__setattr__(self, "ids", tuple(str(i) for i in self.ids))
        n = len(self.ids)
        names = tuple(str(x) for x in self.names) or self.ids
        descr = tuple(str(x) for x in self.descriptions) or ("",) * n
        object.__setattr__(self, "names", names)
        object.__setattr__(self, "descriptions", descr)
        object.__setattr__(self, "members", sets(self.members))
        alt = {k: sets(v) for k, v in dict(self.alt_members).items()}
        object.__setattr__(self, "alt_members", alt)
        if len(set(self.ids)) != n:
            raise ValueError("GeneSets: set ids must be unique")
        if any(len(x) != n for x in (names, descr, self.members, *alt.values())):
            raise ValueError("GeneSets: ids, names, descriptions and members differ in length")

    def __len__(self) -> int:
        return len(self.ids)

    def sizes(self) -> np.ndarray:
        """Number of member ids of each set."""
        return np.array([len(m) for m in self.members], dtype=np.int64)

    def genes(self) -> list[str]:
        """Distinct member ids over all sets, in order of first appearance."""
        return list(dict.fromkeys(g for m in self.members for g in m))

    def summary(self) -> dict:
        """Counts for ``kofs sources``: sets, distinct genes, gene-set pairs, id kind, edges."""
        return {
            "path": self.path, "sets": len(self), "genes": len(self.genes()),
            "pairs": int(self.sizes().sum()), "namespace": self.namespace,
            "alt_member_ids": sorted(self.alt_members),
            "relations": 0 if self.interactions is None else self.interactions.n_edges,
        }

    def member_kinds(self) -> dict[str, tuple[tuple[str, ...], ...]]:
        """``{"primary": members, **alt_members}``."""
        return {"primary": self.members, **self.alt_members}


# --------------------------------------------------------------------------- GMT


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
    empty = 0
    with _open_text(path, what="gene-set file") as fh:
        for lineno, line in enumerate(fh, start=1):
            text = line.rstrip("\r\n")
            if not text.strip() or text.startswith("#"):
                continue
            fields = text.split("\t")
            if len(fields) < 2:
                raise InputError(
                    "GMT line needs set id<TAB>description<TAB>genes...; found no tab",
                    path=path, line=lineno,
                )
            sid = fields[0].strip()
            if not sid:
                raise InputError("GMT line has an empty set id", path=path, line=lineno)
            if sid in seen:
                raise InputError(
                    f"set id {sid!r} repeats the set of line {seen[sid]}; set ids must be unique",
                    path=path, line=lineno,
                )
            seen[sid] = lineno
            genes = [g.strip() for g in fields[2:] if g.strip()]
            if not genes:
                empty += 1
                continue
            ids.append(sid)
            descr.append(fields[1].strip())
            members.append(genes)
    if empty:
        log.warning("%s: skipped %d gene set(s) without genes", path, empty)
    if not ids:
        raise InputError("GMT file holds no gene set with genes", path=path)
    ns = guess_namespace(g for m in members for g in m)
    return GeneSets(ids, ids, descr, members, namespace=ns, path=path)


# --------------------------------------------------------------------------- KEGG link / tables


def _read_kegg_names(path: str | os.PathLike) -> dict[str, str]:
    names: dict[str, str] = {}
    with _open_text(path, what="KEGG pathway names file") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            fields = line.rstrip("\r\n").split("\t")
            if len(fields) < 2:
                raise InputError("KEGG names line needs pathway id<TAB>name", path=path,
                                 line=lineno)
            pid = fields[0].strip().removeprefix("path:")
            names[pid] = re.sub(r" - [^-]+\([^)]*\)$", "", fields[1].strip())
    return names


def _strip_org(gene: str) -> str:
    return _ORG_PREFIX.sub("", gene.strip())


def read_kegg_link(path: str | os.PathLike, *, names: str | os.PathLike | None = None,
                   **_: Any) -> GeneSets:
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
                    path=path, line=lineno,
                )
            sets.setdefault(pw[0][5:], []).append(_strip_org(genes[0]))
    if not sets:
        raise InputError("KEGG link file holds no gene-pathway pairs", path=path)
    full = {}
    if names is not None:
        with _open_text(names, what="KEGG pathway names file") as fh:
            full = {ln.split("\t")[0].strip().removeprefix("path:"): ln.split("\t", 1)[1].strip()
                    for ln in fh if "\t" in ln}
    short = _read_kegg_names(names) if names is not None else {}
    ids = list(sets)
    members = [sets[i] for i in ids]
    ns = "entrez" if all(g.isdigit() for m in members for g in m) else "kegg"
    return GeneSets(ids, [short.get(i, i) for i in ids], [full.get(i, "") for i in ids], members,
                    namespace=ns, path=path)


def _read_tsv_rows(path: str, required: tuple[str, ...]) -> tuple[list[str], list[list[str]]]:
    with _open_text(path, what="KEGG table") as fh:
        rows = [ln.rstrip("\r\n").split("\t") for ln in fh]
    header = [h.strip() for h in rows[0]]
    missing = [c for c in required if c not in header]
    if missing:
        raise InputError(f"KEGG table lacks column(s) {missing}", path=path, line=1)
    for lineno, r in enumerate(rows[1:], start=2):
        if len(r) != len(header) and any(x.strip() for x in r):
            raise InputError(f"row has {len(r)} fields, the header {len(header)}", path=path,
                             line=lineno)
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
        names = [r[col["msigdb_name"]].strip() if r[col["msigdb_name"]].strip() not in ("", "NA")
                 else i for r, i in zip(rows, ids, strict=True)]
    members = [split(r[col["entrez_ids"]]) for r in rows]
    alt = {"symbol": [split(r[col["symbols"]]) for r in rows]} if "symbols" in col else {}
    keep = [t for t, m in enumerate(members) if m]
    if len(keep) < len(members):
        log.warning("%s: skipped %d pathway(s) without genes", path, len(members) - len(keep))
    if not keep:
        raise InputError("KEGG table holds no pathway with genes", path=path)
    return GeneSets([ids[t] for t in keep], [names[t] for t in keep], (),
                    [members[t] for t in keep], namespace="entrez", path=path,
                    alt_members={k: [v[t] for t in keep] for k, v in alt.items()})


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
    return GeneSets(ids, ids, (), [sets[i] for i in ids], namespace="entrez", path=path,
                    alt_members=alt)


# --------------------------------------------------------------------------- KGML


def _check_xml_safe(data: bytes, path: str) -> None:
    """Refuse entity declarations and external entities (defusedxml's default policy)."""

    def refuse(*_args: Any) -> None:
        raise InputError("XML declares entities, which kofs refuses to expand (unsafe XML)",
                         path=path)

    parser = pyexpat.ParserCreate()
    parser.EntityDeclHandler = refuse
    parser.UnparsedEntityDeclHandler = refuse
    parser.ExternalEntityRefHandler = refuse
    try:
        parser.Parse(data, True)
    except pyexpat.ExpatError as exc:
        raise InputError(f"malformed XML: {pyexpat.errors.messages[exc.code]}", path=path,
                         line=exc.lineno) from None


def _parse_kgml(path: str) -> tuple[str, str, list[str], list[tuple]]:
    """One KGML file -> (pathway id, title, member genes, relation edges)."""
    with _open_text(path, what="KGML file") as fh:
        data = fh.read().encode("utf-8")
    _check_xml_safe(data, path)
    root = ET.fromstring(data)
    if root.tag != "pathway":
        raise InputError(f"KGML root element is <{root.tag}>, expected <pathway>", path=path)
    pid = root.get("name", "").removeprefix("path:") or Path(path).stem
    title = root.get("title", pid)
    genes_of: dict[str, list[str]] = {}
    groups: dict[str, list[str]] = {}
    members: list[str] = []
    for e in root.iter("entry"):
        eid, etype = e.get("id", ""), e.get("type", "")
        if etype == "gene":
            ids = [_strip_org(x) for x in e.get("name", "").split() if x and x != "undefined"]
            genes_of[eid] = ids
            members.extend(ids)
        elif etype == "group":
            groups[eid] = [c.get("id", "") for c in e.iter("component")]
    for gid, comps in groups.items():
        genes_of[gid] = [g for c in comps for g in genes_of.get(c, [])]
    edges = []
    skipped = 0
    for r in root.iter("relation"):
        a, b = genes_of.get(r.get("entry1", "")), genes_of.get(r.get("entry2", ""))
        if not a or not b:
            skipped += 1
            continue
        subs = [s.get("name", "") for s in r.iter("subtype") if s.get("name")]
        rtype = r.get("type", "") + (":" + "+".join(subs) if subs else "")
        edges.extend((x, y, rtype) for x in a for y in b)
    if skipped:
        log.debug("%s: %d relation(s) not between gene/group entries skipped", path, skipped)
    return pid, title, members, edges


def read_kgml(path: str | os.PathLike, **_: Any) -> GeneSets:
    """Read one KGML file or every ``*.xml`` of a directory.

    Members of a pathway are the gene ids of its ``gene`` entries (an entry ``hsa:1 hsa:2``
    contributes both; organism prefixes are removed). Relations between gene or group entries
    become directed edges between every gene of ``entry1`` and every gene of ``entry2`` (a
    group stands for all genes of its components), typed ``"<type>:<subtype+subtype>"``
    (e.g. ``"PPrel:activation+phosphorylation"``), weight 1. XML with entity declarations is
    refused.
    """
    path = os.fspath(path)
    p = Path(path)
    files = sorted(p.glob("*.xml")) if p.is_dir() else [p]
    if not files:
        raise InputError("directory holds no KGML *.xml files", path=path)
    ids, titles, members, edges = [], [], [], []
    for f in files:
        pid, title, genes, rel = _parse_kgml(os.fspath(f))
        if pid in ids:
            raise InputError(f"pathway {pid!r} appears in two KGML files", path=f)
        if not genes:
            log.warning("%s: pathway %s has no gene entries; skipped", f, pid)
            continue
        ids.append(pid)
        titles.append(title)
        members.append(genes)
        edges.extend(rel)
    if not ids:
        raise InputError("no KGML pathway with gene entries", path=path)
    ns = "entrez" if all(g.isdigit() for m in members for g in m) else "kegg"
    inter = None
    if edges:
        src, dst, typ = (np.array(x, dtype=object) for x in zip(*edges, strict=True))
        inter = _finalise(src, dst, np.ones(len(src)), True, typ, path=path, namespace=ns,
                          what="KGML relations")
    return GeneSets(ids, titles, titles, members, namespace=ns, path=path, interactions=inter)


# --------------------------------------------------------------------------- dispatch


def _header(h: list[str]) -> set[str]:
    return {x.strip().lower() for x in h[0].split("\t")} if h else set()


_SNIFFERS: tuple[tuple[str, Callable[[Path, list[str]], bool]], ...] = (
    ("kgml", lambda p, h: p.is_dir() or bool(h) and h[0].lstrip().startswith(("<?xml", "<path"))),
    ("kegg_table", lambda p, h: {"pathway_id", "entrez_ids"} <= _header(h)),
    ("kegg_gene2pathway", lambda p, h: {"pathway_id", "entrez_id"} <= _header(h)),
    ("kegg_link", lambda p, h: bool(h) and len(h[0].split("\t")) == 2
     and any(f.startswith("path:") for f in h[0].split("\t"))),
    ("gmt", lambda p, h: True),
)

PATHWAY_FORMATS: dict[str, Callable[..., GeneSets]] = {
    "gmt": read_gmt,
    "kegg_link": read_kegg_link,
    "kegg_table": read_kegg_table,
    "kegg_gene2pathway": read_kegg_gene2pathway,
    "kgml": read_kgml,
}


def sniff_pathways(path: str | os.PathLike) -> str:
    """Name of the pathway format of ``path`` (a key of :data:`PATHWAY_FORMATS`)."""
    p = Path(path)
    head = [] if p.is_dir() else _head_lines(p, 2)
    return next(name for name, test in _SNIFFERS if test(p, head))


def read_pathways(path: str | os.PathLike, fmt: str = "auto", *,
                  names: str | os.PathLike | None = None) -> GeneSets:
    """Read gene sets / pathways, dispatching on ``fmt`` (``"auto"`` sniffs the file).

    Parameters
    ----------
    path : path-like
        A file, or a directory of KGML files.
    fmt : {"auto", "gmt", "kegg_link", "kegg_table", "kegg_gene2pathway", "kgml"}
    names : path-like, optional
        KEGG pathway names (``list/pathway`` output) for ``kegg_link``.
    """
    fmt = sniff_pathways(path) if fmt == "auto" else fmt
    reader = PATHWAY_FORMATS.get(fmt)
    if reader is None:
        raise ParameterError(
            f"pathway format {fmt!r} is unknown; use one of auto, " + ", ".join(PATHWAY_FORMATS)
        )
    log.debug("reading %s as %s", path, fmt)
    return reader(path, names=names)
