"""Gene symbols for the matrix's genes, for the tables and figures a person reads.

Gene ids stay the key everywhere; a symbol is only shown beside them. Symbols come, in this
order, from

1. the matrix itself: an extra identifier column read with it whose name says symbol
   (``symbol``, ``gene_symbol``, ``hgnc_symbol``, ...; ``Expression.annotations["symbol"]``);
2. the knowledge sources that pair an id with a symbol: a GO annotation file with a symbol
   column beside its ids (GAF column 3, a TSV with ``entrez_id`` and ``symbol``), and an
   interaction file with symbol aliases (``symbol_a``/``symbol_b`` beside ``entrez_a``/
   ``entrez_b``, a STRING ``protein.info`` file, BioGRID's official symbols).

A source id is looked up by the matrix gene id and then by the matrix's other id columns
(``entrez``, ``ensembl``, ...), all in the canonical form of :func:`kofs.io.ids.normalise_id`. An
id the source pairs with several different symbols gives none (never guessed).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from kofs.io.id_map import MISSING_IDS
from kofs.io.ids import normalise_id
from kofs.types import Expression

log = logging.getLogger(__name__)

__all__ = ["SYMBOL_KINDS", "gene_symbols", "symbol_lookup", "symbols_for"]

#: Alias kinds of a knowledge source that hold gene symbols.
SYMBOL_KINDS = frozenset(
    {"symbol", "genesymbol", "gene_symbol", "preferred_name", "Ensembl_HGNC_symbol", "BioMart_HUGO"}
)


def symbol_lookup(pairs: Iterable[tuple[Sequence[str], Sequence[str]]]) -> dict[str, str]:
    """A table canonical id -> symbol from parallel (id, symbol) arrays.

    Parameters
    ----------
    pairs : iterable of (ids, symbols)
        Parallel sequences; each id is paired with the symbol at the same position. Earlier
        pairs take precedence over later ones for the same id.

    Returns
    -------
    dict of str to str
        Ids (canonical form) paired with exactly one symbol; ids with several different
        symbols, and missing ids or symbols, are left out.
    """
    out: dict[str, str] = {}
    for ids, symbols in pairs:
        seen: dict[str, str] = {}
        ambiguous: set[str] = set()
        for i, s in zip(ids, symbols, strict=True):
            s = str(s).strip()
            key = normalise_id(i)
            if key in MISSING_IDS or s.upper() in MISSING_IDS:
                continue
            prev = seen.setdefault(key, s)
            if prev != s:
                ambiguous.add(key)
        for key, s in seen.items():
            if key not in ambiguous:
                out.setdefault(key, s)
    return out


def symbols_for(
    expression: Expression, lookup: Mapping[str, str], *, wanted: Iterable[str] | None = None
) -> dict[str, str]:
    """Symbols of the matrix genes found in ``lookup`` (by gene id, then by other id columns).

    ``wanted`` restricts the genes looked up (default: all).
    """
    cols = [v for k, v in expression.annotations.items() if k != "symbol"]
    index = expression.gene_index()
    out = {}
    for g in expression.genes if wanted is None else wanted:
        i = index[g]
        for cand in (g, *(c[i] for c in cols)):
            s = lookup.get(normalise_id(cand))
            if s is not None:
                out[g] = s
                break
    return out


def _source_pairs(go_annotations: Any, interactions: Any, keys: set[str]):
    """(ids, symbols) pairs of the sources, rows restricted to the ids in ``keys``."""
    if go_annotations is not None:
        cols = dict(go_annotations.id_columns)
        sym = cols.get("symbol")
        if sym is not None:
            for name, ids in cols.items():
                if name == "symbol":
                    continue
                uniq = np.unique(ids.astype(str))
                hit = np.fromiter((normalise_id(x) in keys for x in uniq), bool, len(uniq))
                mask = np.isin(ids.astype(str), uniq[hit])
                yield ids[mask].tolist(), sym[mask].tolist()
    if interactions is not None:
        aliases = dict(interactions.aliases)
        kinds = [k for k in aliases if k in SYMBOL_KINDS]
        for kind in kinds:
            table = {p: v[0] for p, v in aliases[kind].items() if len(set(v)) == 1}
            if interactions.namespace != "symbol":
                yield list(table), list(table.values())
            for other, alt in aliases.items():
                if other in SYMBOL_KINDS:
                    continue
                ids, syms = [], []
                for p, s in table.items():
                    for a in alt.get(p, ()):
                        ids.append(a)
                        syms.append(s)
                yield ids, syms


def gene_symbols(
    expression: Expression, *, go_annotations: Any = None, interactions: Any = None
) -> dict[str, str] | None:
    """Symbols of the matrix's genes from the matrix or the knowledge sources.

    Parameters
    ----------
    expression : Expression
    go_annotations : kofs.io.annotations.GOAnnotations, optional
        Used when it has a ``symbol`` id column.
    interactions : kofs.io.interaction_table.Interactions, optional
        Used when it has symbol aliases (:data:`SYMBOL_KINDS`).

    Returns
    -------
    dict of str to str, or None
        Gene id -> symbol for the genes with one; None when no symbol differs from its gene
        id (e.g. the matrix's ids are symbols) or none is known.
    """
    out: dict[str, str] = {}
    own = expression.annotations.get("symbol")
    if own is not None:
        out = {g: s.strip() for g, s in zip(expression.genes, own, strict=True) if s.strip()}
        out = {g: s for g, s in out.items() if s.upper() not in MISSING_IDS}
    missing = [g for g in expression.genes if g not in out]
    if expression.namespace == "symbol" and own is None:
        missing = []  # the ids are symbols already
    if missing and (go_annotations is not None or interactions is not None):
        index = expression.gene_index()
        cols = [v for k, v in expression.annotations.items() if k != "symbol"]
        keys = {normalise_id(g) for g in missing}
        keys |= {normalise_id(c[index[g]]) for c in cols for g in missing}
        lookup = symbol_lookup(_source_pairs(go_annotations, interactions, keys))
        found = symbols_for(expression, lookup, wanted=missing)
        if found:
            log.info("gene symbols: %d from the knowledge sources", len(found))
        out.update(found)
    if not out or all(s.upper() == normalise_id(g) for g, s in out.items()):
        return None
    return {g: out[g] for g in expression.genes if g in out}
