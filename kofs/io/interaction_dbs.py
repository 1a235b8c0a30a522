"""Readers of the interaction databases STRING (``protein.links``, ``protein.aliases``) and
BioGRID (TAB2/TAB3), streamed in chunks. Re-exported by :mod:`kofs.io.interactions`.
"""

from __future__ import annotations

import logging
import os
from typing import Any

import numpy as np
import pandas as pd

from kofs.errors import InputError, ParameterError
from kofs.io._open import head_lines as _head_lines
from kofs.io._open import stream_text as _stream_text
from kofs.io._open import table_errors
from kofs.io.interaction_table import (
    NA_TOKENS,
    Interactions,
    clean_edges,
    parse_weights,
    read_edge_frame,
    strip_taxon,
)

log = logging.getLogger(__name__)

__all__ = ["read_biogrid", "read_string_aliases", "read_string_links", "string_separator"]


# --------------------------------------------------------------------------- STRING


def read_string_aliases(
    path: str | os.PathLike, proteins: set[str] | None = None
) -> dict[str, dict[str, tuple[str, ...]]]:
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
    df = read_edge_frame(
        path,
        sep="\t",
        header=None,
        what="STRING alias file",
        skiprows=1 if has_header else 0,
        on_bad_lines="error",
    )
    if "preferred_name" in first:
        ids, alias, src = df.iloc[:, 0], df.iloc[:, 1], None
    elif df.shape[1] >= 4 and df.iloc[:, 0].str.fullmatch(r"\d+").all():  # v10: taxon, id, ...
        ids, alias, src = df.iloc[:, 1], df.iloc[:, 2], df.iloc[:, 3]
    elif df.shape[1] >= 3:
        ids, alias, src = df.iloc[:, 0], df.iloc[:, 1], df.iloc[:, 2]
    else:
        raise InputError(
            "expected a STRING protein.aliases (id, alias, source) or protein.info"
            " (id, preferred_name, ...) file",
            path=path,
            line=1,
        )
    ids = strip_taxon(ids.str.strip().to_numpy(dtype=object))
    mask = np.ones(len(ids), bool) if proteins is None else np.isin(ids, list(proteins))
    out: dict[str, dict[str, list[str]]] = {}
    kinds = (
        np.full(len(ids), "preferred_name", dtype=object)
        if src is None
        else src.str.strip().to_numpy(dtype=object)
    )
    for i, a, k in zip(
        ids[mask].tolist(),
        alias.to_numpy(dtype=object)[mask].tolist(),
        kinds[mask].tolist(),
        strict=True,
    ):
        for kind in str(k).split():  # v10 lists several sources separated by spaces
            cur = out.setdefault(kind, {}).setdefault(i, [])
            if a not in cur:
                cur.append(a)
    return {k: {i: tuple(v) for i, v in t.items()} for k, t in out.items()}


def string_separator(header: str) -> str:
    """The separator of a STRING links file: a space as STRING writes it, or a tab or a comma
    when it was saved again by a spreadsheet or R."""
    return "\t" if "\t" in header else "," if "," in header else " "


def read_string_links(
    path: str | os.PathLike,
    *,
    min_score: float = 400,
    aliases: str | os.PathLike | None = None,
    **_: Any,
) -> Interactions:
    """Read STRING ``protein.links`` / ``.detailed`` / ``.full`` (space separated as STRING
    writes them; tab or comma separated also).

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
    sep = string_separator(head[0]) if head else " "
    names = {f.strip() for f in head[0].split(sep)} if head else set()
    missing = {"protein1", "protein2", "combined_score"} - names
    if missing:
        raise InputError(f"STRING links file lacks column(s) {sorted(missing)}", path=path, line=1)
    src_parts, dst_parts, score_parts = [], [], []
    n_rows = 0
    with (
        _stream_text(path, what="STRING links file") as fh,
        table_errors(path, "STRING links file"),
    ):
        chunks = pd.read_csv(
            fh,
            sep=sep,
            header=0,
            usecols=["protein1", "protein2", "combined_score"],
            dtype={"protein1": str, "protein2": str},
            chunksize=1_000_000,
        )
        for chunk in chunks:  # streamed: memory follows the kept edges, not the file
            lines = np.arange(n_rows + 2, n_rows + 2 + len(chunk))
            blank = chunk.isna().all(axis=1).to_numpy()  # a line of spaces: no field at all
            if blank.any():
                chunk, lines = chunk[~blank], lines[~blank]
            n_rows += len(chunk)
            raw = chunk["combined_score"]
            if pd.api.types.is_numeric_dtype(raw) and raw.notna().all():
                score = raw.to_numpy(dtype=np.float64)
            else:
                score = parse_weights(raw.astype(object), lines, path, column="combined_score")
            if (score > 1000).any() or (score < 0).any():
                i = int(np.flatnonzero((score > 1000) | (score < 0))[0])
                raise InputError(
                    f"combined_score {score[i]:g} is outside 0..1000",
                    path=path,
                    line=int(lines[i]),
                    column="combined_score",
                )
            keep = score >= float(min_score)
            src_parts.append(chunk["protein1"].to_numpy(dtype=object)[keep])
            dst_parts.append(chunk["protein2"].to_numpy(dtype=object)[keep])
            score_parts.append(score[keep])
    src = strip_taxon(np.concatenate(src_parts)) if src_parts else np.zeros(0, object)
    dst = strip_taxon(np.concatenate(dst_parts)) if dst_parts else np.zeros(0, object)
    kept_scores = np.concatenate(score_parts) if score_parts else np.zeros(0)
    alias_tables = {}
    if aliases is not None:
        alias_tables = read_string_aliases(aliases, proteins=set(src) | set(dst))
    log.info(
        "%s: %d of %d STRING rows have combined_score >= %g", path, len(src), n_rows, min_score
    )
    return clean_edges(
        src,
        dst,
        kept_scores / 1000.0,
        False,
        "",
        path=path,
        namespace="ensembl_protein",
        aliases=alias_tables,
        info={
            "rows": n_rows,
            "rows_below_min_score": n_rows - len(src),
            "min_score": float(min_score),
        },
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
    org = (
        "Organism ID Interactor A"
        if "Organism ID Interactor A" in names
        else "Organism Interactor A"
    )
    need = [
        "Entrez Gene Interactor A",
        "Entrez Gene Interactor B",
        "BioGRID ID Interactor A",
        "BioGRID ID Interactor B",
        "Experimental System",
        "Experimental System Type",
        org,
        org.replace(" A", " B"),
    ]
    missing = [c for c in need if c not in names]
    if missing:
        raise InputError(
            f"not a BioGRID TAB2/TAB3 file: column(s) {missing} missing", path=path, line=1
        )
    use = need + [
        c.format(side)
        for c in _BIOGRID_ALIASES.values()
        for side in "AB"
        if c.format(side) in names
    ]
    parts, n_rows = [], 0
    with _stream_text(path, what="BioGRID file") as fh, table_errors(path, "BioGRID file"):
        for chunk in pd.read_csv(
            fh,
            sep="\t",
            header=0,
            names=names,
            usecols=use,
            dtype=str,
            keep_default_na=False,
            na_filter=False,
            quoting=3,
            chunksize=500_000,
        ):
            n_rows += len(chunk)
            keep = np.ones(len(chunk), bool)
            if taxon is not None:
                t = str(taxon).strip()
                keep &= (chunk[org].str.strip() == t).to_numpy() & (
                    chunk[org.replace(" A", " B")].str.strip() == t
                ).to_numpy()
            if system_type is not None:
                keep &= (
                    chunk["Experimental System Type"].str.strip().str.lower()
                    == str(system_type).lower()
                ).to_numpy()
            parts.append(chunk[keep])
    sub = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=use, dtype=str)
    ids = {}
    for side in "AB":
        ent = sub[f"Entrez Gene Interactor {side}"].str.strip().to_numpy(dtype=object)
        bg = sub[f"BioGRID ID Interactor {side}"].str.strip().to_numpy(dtype=object)
        ids[side] = np.where(
            pd.Series(ent).isin(NA_TOKENS).to_numpy(),
            np.array(["BIOGRID:" + b for b in bg], dtype=object),
            ent,
        )
    aliases: dict[str, dict[str, tuple[str, ...]]] = {}
    for kind, col in _BIOGRID_ALIASES.items():
        if col.format("A") not in sub.columns:
            continue
        table: dict[str, list[str]] = {}
        for side in "AB":
            vals = sub[col.format(side)].str.strip().to_numpy(dtype=object)
            for i, v in zip(ids[side].tolist(), vals.tolist(), strict=True):
                for a in v.split("|"):
                    if a not in NA_TOKENS and a not in table.setdefault(i, []):
                        table[i].append(a)
        aliases[kind] = {k: tuple(v) for k, v in table.items() if v}
    return clean_edges(
        ids["A"],
        ids["B"],
        np.ones(len(sub)),
        False,
        sub["Experimental System"].to_numpy(dtype=object),
        path=path,
        namespace="entrez",
        aliases=aliases,
        info={
            "rows": n_rows,
            "rows_filtered": n_rows - len(sub),
            "taxon": None if taxon is None else str(taxon),
            "system_type": system_type,
        },
    )
