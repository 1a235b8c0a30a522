"""Gene sets / pathways -> internal knowledge aligned to an expression matrix.

* :func:`genesets_to_functions`: K_FUN^FEA -> K_FUN^{int,FEA}, the genes x sets 0/1 incidence
  used by relevance voting (book eq. 6.15) and the GO/pathway rankers.
* :func:`filter_genes`: the matrix genes of chosen pathways, the filter of Pathway-FILT and
  Leukemia-FILT (book sec. 6, eq. 6.10: the filter defines the sample similarity only; the
  ranking still covers all genes).

Both return ``(result, CoverageReport)``.
"""

from __future__ import annotations

import difflib
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from kofs.errors import CoverageError, ParameterError
from kofs.io.gene_sets import GeneSets
from kofs.io.ids import CoverageReport, match_id_lists
from kofs.types import Expression, FeatureFunctions

log = logging.getLogger(__name__)

__all__ = ["genesets_to_functions", "filter_genes", "incidence_matrix"]


def incidence_matrix(member_index: Sequence[np.ndarray], n_genes: int) -> sp.csr_matrix:
    """Sparse genes x sets 0/1 incidence from the member gene indices of each set.

    Parameters
    ----------
    member_index : sequence of int arrays
        Matrix column indices of the members of each set (repeats allowed, counted once).
    n_genes : int

    Returns
    -------
    csr_matrix of shape (n_genes, len(member_index)), float64, entries 1
    """
    cols = [np.full(len(ix), t, dtype=np.int64) for t, ix in enumerate(member_index)]
    rows = np.concatenate([np.asarray(ix, dtype=np.int64) for ix in member_index] or [[]])
    cols_a = np.concatenate(cols or [np.zeros(0, np.int64)])
    a = sp.csr_matrix(
        (np.ones(len(rows)), (rows.astype(np.int64), cols_a)),
        shape=(n_genes, len(member_index)),
    )
    a.data[:] = 1.0  # repeats were summed: back to 0/1
    return a


def _source_name(gene_sets: GeneSets) -> str:
    return f"pathways {Path(gene_sets.path).name}" if gene_sets.path else "pathways"


def _matched_members(
    gene_sets: GeneSets,
    expression: Expression,
    *,
    id_map: Mapping[str, str] | None,
    subset: Sequence[int] | None = None,
) -> tuple[list[np.ndarray], CoverageReport, str]:
    """Matrix indices of each set's members, using the member id kind matching best."""
    kinds = gene_sets.member_kinds()
    chosen = range(len(gene_sets)) if subset is None else subset
    lists = {k: [g for t in chosen for g in ms[t]] for k, ms in kinds.items()}
    kind, mapping, report = match_id_lists(
        lists, expression, source=_source_name(gene_sets), id_map=id_map, path=gene_sets.path
    )
    members = kinds[kind]
    idx = [
        np.unique(np.fromiter((mapping[g] for g in members[t] if g in mapping), dtype=np.int64))
        for t in chosen
    ]
    return idx, report, kind


def genesets_to_functions(
    gene_sets: GeneSets,
    expression: Expression,
    *,
    min_size: int = 5,
    max_size: int | None = 500,
    id_map: Mapping[str, str] | None = None,
) -> tuple[FeatureFunctions, CoverageReport]:
    """Genes x sets incidence aligned to ``expression`` (K_FUN^{int,FEA}, book Table 6.2).

    Parameters
    ----------
    gene_sets : GeneSets
    expression : Expression
    min_size, max_size : int, default 5 and 500
        Keep sets with ``min_size <= size <= max_size`` where size counts the set's genes
        *found in the matrix* (as GSEA does); ``max_size=None`` has no upper bound.
    id_map : mapping, optional
        User id table source id -> matrix id (``--id-map``).

    Returns
    -------
    functions : FeatureFunctions
        ``incidence`` (m x T, 0/1 CSR) over the kept sets, ``terms`` = set ids, ``term_names``
        = set names, ``relevance`` None.
    report : CoverageReport

    Raises
    ------
    ParameterError
        Bad size bounds, or no set within them.
    CoverageError
        No member gene in the matrix.
    """
    if not isinstance(min_size, (int, np.integer)) or min_size < 1:
        raise ParameterError(f"min_size must be an integer >= 1, got {min_size!r}")
    if max_size is not None and (
        not isinstance(max_size, (int, np.integer)) or max_size < min_size
    ):
        raise ParameterError(
            f"max_size must be an integer >= min_size ({min_size}), got {max_size!r}"
        )
    idx, report, kind = _matched_members(gene_sets, expression, id_map=id_map)
    sizes = np.array([len(ix) for ix in idx])
    keep = sizes >= min_size
    if max_size is not None:
        keep &= sizes <= max_size
    if not keep.any():
        raise ParameterError(
            f"{_source_name(gene_sets)}: no gene set has between {min_size} and {max_size} "
            f"matrix genes (sizes {sizes.min()}..{sizes.max()}); change --pathway-min-size or "
            "--pathway-max-size"
        )
    kept = np.flatnonzero(keep)
    n_small = int((sizes < min_size).sum())
    n_large = int(len(sizes) - keep.sum() - n_small)
    if n_small or n_large:
        log.info(
            "%s: kept %d of %d sets (%d smaller than %d, %d larger than %s genes)",
            _source_name(gene_sets),
            len(kept),
            len(sizes),
            n_small,
            min_size,
            n_large,
            max_size,
        )
    inc = incidence_matrix([idx[t] for t in kept], expression.n_genes)
    functions = FeatureFunctions(
        inc,
        expression.genes,
        [gene_sets.ids[t] for t in kept],
        term_names=[gene_sets.names[t] for t in kept],
        relevance=None,
        name="pathways",
        provenance={
            "source": gene_sets.path,
            "member_ids": kind,
            "min_size": int(min_size),
            "max_size": None if max_size is None else int(max_size),
            "sets_read": len(sizes),
            "sets_kept": len(kept),
            "sets_too_small": n_small,
            "sets_too_large": n_large,
        },
    )
    return functions, report


def _resolve_sets(gene_sets: GeneSets, set_ids: Sequence[str]) -> list[int]:
    by_id = {s: t for t, s in enumerate(gene_sets.ids)}
    by_name = {s.lower(): t for t, s in enumerate(gene_sets.names)}
    by_id_lower = {s.lower(): t for t, s in enumerate(gene_sets.ids)}
    out = []
    for s in set_ids:
        t = by_id.get(s, by_id_lower.get(str(s).lower(), by_name.get(str(s).lower())))
        if t is None:
            close = difflib.get_close_matches(
                str(s), list(dict.fromkeys([*gene_sets.ids, *gene_sets.names])), n=3, cutoff=0.6
            )  # a GMT's names are its ids: each suggested once
            hint = (
                f"; did you mean {', '.join(close)}?"
                if close
                else (f"; known sets include {', '.join(gene_sets.ids[:3])}")
            )
            raise ParameterError(f"gene set {s!r} is not in {_source_name(gene_sets)}{hint}")
        if t not in out:
            out.append(t)
    return out


def filter_genes(
    gene_sets: GeneSets,
    expression: Expression,
    *,
    set_ids: Sequence[str] | None = None,
    id_map: Mapping[str, str] | None = None,
) -> tuple[np.ndarray, CoverageReport]:
    """Matrix genes belonging to the chosen sets (Pathway-FILT / Leukemia-FILT filter).

    Parameters
    ----------
    gene_sets : GeneSets
    expression : Expression
    set_ids : sequence of str, optional
        Set ids or names (case-insensitive), e.g. ``["hsa04662", "KEGG_T_CELL_RECEPTOR_..."]``;
        default all sets.
    id_map : mapping, optional

    Returns
    -------
    genes : ndarray of int64
        Sorted distinct column indices of ``expression``.
    report : CoverageReport
        Coverage of the chosen sets' genes.

    Raises
    ------
    ParameterError
        An unknown set id (with close matches), or an empty ``set_ids``.
    CoverageError
        None of the chosen sets' genes is in the matrix.
    """
    if set_ids is not None and isinstance(set_ids, str):
        set_ids = [set_ids]
    if set_ids is not None and len(set_ids) == 0:
        raise ParameterError("set_ids is empty; name at least one gene set or pass None for all")
    chosen = list(range(len(gene_sets))) if set_ids is None else _resolve_sets(gene_sets, set_ids)
    try:
        idx, report, _ = _matched_members(gene_sets, expression, id_map=id_map, subset=chosen)
    except CoverageError:
        if set_ids is None or len(chosen) == len(gene_sets):
            raise
        kinds = gene_sets.member_kinds()
        lists = {k: [g for ms_t in ms for g in ms_t] for k, ms in kinds.items()}
        _, other, _ = match_id_lists(lists, expression, source="", id_map=id_map, require=False)
        if not other:
            raise  # no set of the file matches: the id types differ, as the message says
        names = ", ".join(gene_sets.ids[t] for t in chosen)
        raise CoverageError(  # it said "use the same identifier type", the file's other sets
            f"{_source_name(gene_sets)}: the chosen gene set(s) {names} hold none of the "
            f"matrix's genes, though the file's other sets hold {len(set(other.values()))} of "
            "them: choose sets with genes of the matrix",
            path=gene_sets.path,
        ) from None
    genes = np.unique(np.concatenate(idx)) if idx else np.zeros(0, np.int64)
    return genes.astype(np.int64), report
