"""Gene ids of the lists users bring, harmonised once: ids equal up to case, an Ensembl version
or a database prefix (:func:`kofs.io.ids.normalise_id`) are one gene, written as the first list
that names it writes it (Ensembl versions and a float's ``.0`` dropped); a universe list drops the genes outside it;
each list gets its coverage report."""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from kofs.errors import InputError, ParameterError
from kofs.io.gene_lists import RankedGeneList
from kofs.io.ids import CoverageReport, guess_namespace, normalise_id, spreadsheet_date
from kofs.types import Ranking

log = logging.getLogger(__name__)


_ENSEMBL = re.compile(r"^ENS[A-Z]*[GTPE]\d+$")


LOW_SHARED = 0.05


def _warn_dates(source: RankedGeneList, keys: Sequence[str]) -> None:
    dates = [g for g, k in zip(source.genes, keys, strict=True) if spreadsheet_date(k)]
    if dates:
        log.warning(
            "list %s: %d gene id(s) look like dates a spreadsheet made of gene symbols (e.g. "
            "%s: SEPT2 becomes 2-Sep, MARCH1 1-Mar); restore the symbols (a spreadsheet "
            "keeps them when the column is imported as text)",
            source.name,
            len(dates),
            ", ".join(dates[:3]),
        )


def _display(gene: str, key: str) -> str:
    """The id written for a gene: as its first list writes it, but an Ensembl id without its
    version and an integer id without the float's ``.0`` (``7157.0`` -> ``7157``)."""
    return key if _ENSEMBL.match(key) or (key.isdigit() and "." in gene) else gene.strip()


def harmonise(
    sources: Sequence[RankedGeneList], universe: int | list[str] | None
) -> tuple[list[Ranking], list[CoverageReport], int, list[str] | None]:
    memo: dict[str, str] = {}

    def keys_of(genes: Iterable[str]) -> list[str]:
        out = []
        for g in genes:
            k = memo.get(g)
            if k is None:
                k = memo[g] = normalise_id(g)
            out.append(k)
        return out

    list_keys = [keys_of(s.genes) for s in sources]
    for s, keys in zip(sources, list_keys, strict=True):
        _warn_dates(s, keys)
    display: dict[str, str] = {}
    counts: dict[str, int] = {}
    for s, keys in zip(sources, list_keys, strict=True):
        for g, k in zip(s.genes, keys, strict=True):
            if k not in display:
                display[k] = _display(g, k)
        for k in set(keys):
            counts[k] = counts.get(k, 0) + 1
    allowed: dict[str, str] | None = None
    if isinstance(universe, list):
        allowed = {}
        for g, key in zip(universe, keys_of(universe), strict=True):
            allowed.setdefault(key, display.get(key, _display(g, key)))
        if not allowed:
            raise InputError("the universe gene list is empty")
    rankings, reports = [], []
    kept_keys: set[str] = set()
    sizes = [len(set(keys)) for keys in list_keys]
    for i, (s, keys) in enumerate(zip(sources, list_keys, strict=True)):
        keep = np.array([allowed is None or k in allowed for k in keys], dtype=bool)
        if not keep.any():
            raise InputError(
                f"list {s.name!r}: none of its {len(keys)} genes (e.g. "
                f"{', '.join(s.genes[:3])}) is in the universe; use the same identifier type",
                path=s.path,
            )
        if keep.sum() < 0.5 * keep.size:  # most of the list gone: another id type or universe?
            outside = [g for g, ok in zip(s.genes, keep, strict=True) if not ok]
            log.warning(
                "list %s: %d of its %d genes (e.g. %s) are not in the universe and are dropped; "
                "does the universe use the same identifier type and cover the genes measured?",
                s.name,
                len(outside),
                keep.size,
                ", ".join(outside[:3]),
            )
        genes = tuple(display[k] for k, ok in zip(keys, keep, strict=True) if ok)
        kept_keys.update(k for k, ok in zip(keys, keep, strict=True) if ok)
        whole = s.ranking()
        info = dict(whole.info)
        if "effect_signs" in info:  # per gene: kept with its genes
            info["effect_signs"] = np.asarray(info["effect_signs"])[keep]
        rankings.append(
            Ranking(
                s.name,
                genes,
                np.asarray(s.scores)[keep],
                s.higher_is_better,
                params=dict(whole.params),
                info=info,
            )
        )
        shared = sum(counts[k] > 1 for k, ok in zip(keys, keep, strict=True) if ok)
        # (measured against the shorter side: a full table shares only 200 of its genes with
        # its own top-200 list, all of that list's)
        others = max((n for j, n in enumerate(sizes) if j != i), default=0)
        if len(sources) > 1 and shared < LOW_SHARED * min(len(genes), others):
            log.warning(
                "list %s shares only %d of its %d genes with the other lists; do the lists use "
                "the same identifier type?",
                s.name,
                shared,
                len(genes),
            )
        reports.append(
            CoverageReport(
                source=s.name,
                input_genes=len(keys),
                matched=int(keep.sum()),
                dropped=int((~keep).sum()),
                ambiguous=0,
                matrix_genes=0,  # set below, once N is known
                matrix_genes_covered=int(keep.sum()),
                id_column=s.gene_column,
                source_namespace=guess_namespace(s.genes),
                examples_dropped=tuple(g for g, ok in zip(s.genes, keep, strict=True) if not ok)[
                    :5
                ],
                target="universe",
                shared=int(shared),
            )
        )
    if allowed is not None:
        N = len(allowed)
        universe_ids = list(allowed.values())
    else:
        N = len(kept_keys) if universe is None else int(universe)
        universe_ids = None
    reports = [replace(r, matrix_genes=N) for r in reports]
    for r in reports:
        log.info("%s", r.line())
    return rankings, reports, N, universe_ids


def relevant_in_lists(
    relevant_genes: Any, rankings: Sequence[Ranking], universe_ids: list[str] | None
) -> list[str]:
    if isinstance(relevant_genes, (str, os.PathLike)):
        from kofs.io.genes import read_gene_list

        ids = list(read_gene_list(relevant_genes))
    elif isinstance(relevant_genes, Iterable) and not isinstance(relevant_genes, bytes):
        ids = [str(g) for g in relevant_genes]
    else:
        raise ParameterError(
            f"relevant_genes must be a file or gene ids, got {type(relevant_genes).__name__}"
        )
    known = {normalise_id(g): g for r in rankings for g in r.genes}
    for g in universe_ids or ():
        known.setdefault(normalise_id(g), g)
    out = [known[k] for k in dict.fromkeys(normalise_id(g) for g in ids) if k in known]
    if len(out) < len(ids):
        log.warning(
            "%d of the %d relevant genes are in no list (ignored)", len(ids) - len(out), len(ids)
        )
    if not out:
        if isinstance(relevant_genes, (str, os.PathLike)):
            examples = ", ".join(ids[:3]) + (", ..." if len(ids) > 3 else "")
            raise InputError(
                f"relevant genes: none of its {len(ids)} gene ids (e.g. {examples}) is in any of "
                "the lists; give the genes with the identifiers the lists use",
                path=relevant_genes,
            )
        raise ParameterError("none of the relevant genes is among the ranked genes")
    return out
