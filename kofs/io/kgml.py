"""KEGG KGML reader: pathway members and typed, directed gene-gene relations.

:func:`read_kgml` reads one KGML file or a directory of ``*.xml``; XML declaring entities is
refused. Re-exported by :mod:`kofs.io.pathways` (format ``kgml``).
"""

from __future__ import annotations

import logging
import os
import pyexpat
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np

from kofs.errors import InputError
from kofs.io._open import open_text as _open_text
from kofs.io.gene_sets import GeneSets, strip_org
from kofs.io.interaction_table import clean_edges

log = logging.getLogger(__name__)

__all__ = ["read_kgml"]


def _check_xml_safe(data: bytes, path: str) -> None:
    """Refuse entity declarations and external entities (defusedxml's default policy)."""

    def refuse(*_args: Any) -> None:
        raise InputError(
            "XML declares entities, which kofs refuses to expand (unsafe XML)", path=path
        )

    parser = pyexpat.ParserCreate()
    parser.EntityDeclHandler = refuse
    parser.UnparsedEntityDeclHandler = refuse
    parser.ExternalEntityRefHandler = refuse
    try:
        parser.Parse(data, True)
    except pyexpat.ExpatError as exc:
        raise InputError(
            f"malformed XML: {pyexpat.errors.messages[exc.code]}", path=path, line=exc.lineno
        ) from None


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
            ids = [strip_org(x) for x in e.get("name", "").split() if x and x != "undefined"]
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
        inter = clean_edges(
            src, dst, np.ones(len(src)), True, typ, path=path, namespace=ns, what="KGML relations"
        )
    return GeneSets(ids, titles, titles, members, namespace=ns, path=path, interactions=inter)
