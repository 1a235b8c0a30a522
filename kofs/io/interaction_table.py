"""The interaction edge table and the edge cleaning shared by every interaction reader.

:class:`Interactions` holds an edge table as read from a file (ids not yet matched);
:func:`clean_edges` applies the common cleaning (self-loops dropped with a warning, repeated pairs
merged keeping the largest weight); :func:`parse_weights` checks weights and
:func:`read_edge_frame` reads a whole table with pandas, every failure an
:class:`~kofs.errors.InputError`. The readers are in :mod:`kofs.io.interactions` and
:mod:`kofs.io.interaction_dbs`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from kofs.errors import InputError
from kofs.io._open import open_text as _open_text
from kofs.io._open import table_errors
from kofs.io.ids import guess_namespace

log = logging.getLogger(__name__)

__all__ = [
    "NA_TOKENS",
    "Interactions",
    "clean_edges",
    "parse_weights",
    "read_edge_frame",
    "strip_taxon",
]

_TAXON_PREFIX = re.compile(r"^\d+\.(?=[A-Za-z])")
NA_TOKENS = frozenset({"", "NA", "NaN", "nan", "-", "None", "NULL", "null"})


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
            "path": self.path,
            "edges": self.n_edges,
            "nodes": len(self.nodes()),
            "directed_edges": int(self.directed.sum()),
            "namespace": self.namespace,
            "alias_ids": sorted(self.aliases),
            **self.info,
        }

    def nodes(self) -> list[str]:
        """Distinct node ids in order of first appearance."""
        return list(dict.fromkeys(np.concatenate([self.source, self.target]).tolist()))


# --------------------------------------------------------------------------- cleaning


def parse_weights(raw: pd.Series, lines: np.ndarray, path: str, *, column: str) -> np.ndarray:
    """Strings -> float64; non-numeric, NaN, infinite or negative -> InputError with the line."""
    try:  # exact (round-trip) parsing: pandas < 3 parses a few digits short in to_numeric
        w = np.asarray(raw, dtype=object).astype(np.float64)
    except (TypeError, ValueError):
        w = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=np.float64)
    bad = ~np.isfinite(w)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        value = raw.iloc[i]
        if value.strip() == "" if isinstance(value, str) else pd.isna(value):
            # an empty field or a short line: was "weight 'nan' is not a finite number" (a
            # value the file does not hold) or "weight ''"
            raise InputError(
                "the weight is missing (an empty field, or a line with fewer fields than the "
                "header); give every line its weight, or remove the line",
                path=path,
                line=int(lines[i]),
                column=column,
            )
        raise InputError(
            f"weight {value!r} is not a finite number; fix or remove the line",
            path=path,
            line=int(lines[i]),
            column=column,
        )
    neg = w < 0
    if neg.any():
        i = int(np.flatnonzero(neg)[0])
        raise InputError(
            f"negative weight {raw.iloc[i]}; interaction weights must be >= 0",
            path=path,
            line=int(lines[i]),
            column=column,
        )
    return w


def clean_edges(
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
    df = pd.DataFrame({"a": a, "b": b, "d": directed, "w": weight, "t": types.astype(object)})
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
    info.update(
        {"self_loops_dropped": n_loops, "duplicates_merged": int(n_dup), "edges": int(len(out))}
    )
    if len(out) == 0:
        found = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in info.items())
        raise InputError(f"no {what} left after filtering ({found})", path=path)
    a_ids = out["a"].to_numpy(dtype=object)
    b_ids = out["b"].to_numpy(dtype=object)
    if namespace is None:
        namespace = guess_namespace(list(a_ids[:100]) + list(b_ids[:100]))
    return Interactions(
        a_ids,
        b_ids,
        out["w"].to_numpy(np.float64),
        out["d"].to_numpy(bool),
        out["t"].to_numpy(dtype=object),
        namespace=namespace,
        path=path,
        aliases=aliases or {},
        info=info,
    )


def read_edge_frame(
    path: str, *, sep: str, header: int | None, what: str = "interaction file", **kwargs: Any
) -> pd.DataFrame:
    """pandas.read_csv with ids as strings; a ragged line becomes an InputError with its line
    (``what``: how the file is named in messages)."""
    with _open_text(path, what=what) as fh, table_errors(path, what):
        return pd.read_csv(
            fh,
            sep=sep,
            header=header,
            dtype=str,
            keep_default_na=False,
            na_filter=False,
            **kwargs,
        )


def strip_taxon(values: np.ndarray) -> np.ndarray:
    """Remove STRING taxon prefixes (``9606.ENSP...`` -> ``ENSP...``), once per distinct id."""
    codes, uniques = pd.factorize(np.asarray(values, dtype=object))
    stripped = np.array([_TAXON_PREFIX.sub("", str(v)) for v in uniques] + [""], dtype=object)
    return stripped[codes]
