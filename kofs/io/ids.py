"""Gene identifier harmonisation: map a source's gene ids onto the expression matrix's genes,
once, at the edge, with a coverage report.

The matrix's own ids and every extra id column it was read with (``Expression.annotations``,
e.g. ``symbol`` and ``entrez``) are candidates; the column matching the most source ids wins.
Symbols match case-insensitively; Ensembl versions (``ENSG... .12``) are ignored.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass

from kofs.errors import CoverageError
from kofs.types import Expression

log = logging.getLogger(__name__)

_ENSEMBL_VERSION = re.compile(r"^(ENS[A-Z]*[GTP]\d+)\.\d+$")
LOW_COVERAGE = 0.05


def normalise_id(gene_id: str) -> str:
    """Canonical form used for matching: stripped, upper-case, Ensembl version removed."""
    g = str(gene_id).strip().upper()
    m = _ENSEMBL_VERSION.match(g)
    return m.group(1) if m else g


@dataclass(frozen=True)
class CoverageReport:
    """How a knowledge source's genes map onto the matrix's genes."""

    source: str
    input_genes: int
    matched: int
    dropped: int
    ambiguous: int
    matrix_genes: int
    matrix_genes_covered: int
    id_column: str | None

    @property
    def fraction(self) -> float:
        """Fraction of the source's genes found in the matrix."""
        return self.matched / self.input_genes if self.input_genes else 0.0

    def as_dict(self) -> dict:
        return {**asdict(self), "fraction": round(self.fraction, 6)}

    def line(self) -> str:
        return (
            f"{self.source}: {self.input_genes} genes, {self.matched} matched "
            f"({100 * self.fraction:.1f}%), {self.dropped} dropped, {self.ambiguous} ambiguous; "
            f"covers {self.matrix_genes_covered}/{self.matrix_genes} matrix genes"
            + (f" via {self.id_column}" if self.id_column else "")
        )


def _candidate_columns(expression: Expression) -> dict[str, tuple[str, ...]]:
    cols = {"gene": expression.genes}
    cols.update(expression.annotations)
    return cols


def match_gene_ids(
    source_ids: Iterable[str],
    expression: Expression,
    *,
    source: str,
    id_map: Mapping[str, str] | None = None,
    path: str | None = None,
    require: bool = True,
) -> tuple[dict[str, int], CoverageReport]:
    """Map source gene ids to column indices of ``expression``.

    Parameters
    ----------
    source_ids : iterable of str
        Gene ids as the source writes them (duplicates allowed).
    expression : Expression
    source : str
        Name of the source for messages and the report.
    id_map : mapping, optional
        User table source id -> matrix id (``--id-map``), applied first.
    path : str, optional
        File of the source, named in errors.
    require : bool
        Raise :class:`CoverageError` when nothing matches.

    Returns
    -------
    mapping : dict
        source id -> matrix gene index, for every source id that maps to exactly one gene.
    report : CoverageReport
    """
    ids = list(dict.fromkeys(str(s) for s in source_ids))
    norm_map = {normalise_id(k): v for k, v in (id_map or {}).items()}
    best: tuple[int, str | None, dict[str, int], int] = (-1, None, {}, 0)
    for col, values in _candidate_columns(expression).items():
        index: dict[str, list[int]] = {}
        for i, v in enumerate(values):
            if v and v.upper() not in ("NA", "NAN", ""):
                index.setdefault(normalise_id(v), []).append(i)
        mapping: dict[str, int] = {}
        ambiguous = 0
        for s in ids:
            key = normalise_id(s)
            key = normalise_id(norm_map.get(key, key)) if norm_map else key
            hits = index.get(key)
            if not hits:
                continue
            if len(hits) > 1:
                ambiguous += 1
                continue
            mapping[s] = hits[0]
        if len(mapping) > best[0]:
            best = (len(mapping), col, mapping, ambiguous)
    n_match, col, mapping, ambiguous = best
    report = CoverageReport(
        source=source,
        input_genes=len(ids),
        matched=n_match,
        dropped=len(ids) - n_match - ambiguous,
        ambiguous=ambiguous,
        matrix_genes=expression.n_genes,
        matrix_genes_covered=len(set(mapping.values())),
        id_column=col,
    )
    if require and n_match == 0:
        example = ", ".join(ids[:3])
        raise CoverageError(
            f"{source}: none of its {len(ids)} gene ids (e.g. {example}) matches the expression "
            f"matrix's genes (e.g. {', '.join(expression.genes[:3])}); give an id table with "
            "--id-map or use the same identifier type",
            path=path,
        )
    if ids and report.fraction < LOW_COVERAGE:
        log.warning("low gene overlap: %s", report.line())
    else:
        log.info("%s", report.line())
    return mapping, report
