"""Known gene sets for the knowledge-support metrics (HIT, Sim_anno) and their reading.

A set is a gene list file (:func:`kofs.io.genes.read_gene_list`), or a table with a header of
which the rows whose ``where`` column is true are kept (e.g. the ``oncokb_msk_heme`` column of
``shared/data/real/cancer/cancer_genes_summary.tsv`` for haematological cancer genes). The gene
column is ``symbol`` / ``gene`` / ``hugo symbol`` when present, else the first column.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

from kofs.errors import CoverageError, InputError, ParameterError, short_repr
from kofs.io.genes import read_gene_list
from kofs.io.ids import match_gene_ids
from kofs.types import Expression

log = logging.getLogger(__name__)

__all__ = ["KnownGenes", "read_known_genes", "parse_known_spec"]

_GENE_COLUMNS = ("symbol", "gene", "gene_symbol", "hugo symbol", "hugo_symbol")
_TRUE = {"true", "1", "yes", "y", "t"}
# false, and the missing cells of a boolean column (R's NA, pandas' nan, an empty cell)
_FALSE = {"false", "0", "no", "n", "f", "", "na", "nan", "none", "null"}


@dataclass(frozen=True)
class KnownGenes:
    """A named set of known genes (ids as in the source file) and where it came from."""

    name: str
    genes: tuple[str, ...]
    source: str

    def in_matrix(self, expression: Expression) -> tuple[str, ...]:
        """The matrix gene ids of the set (genes absent from the matrix dropped)."""
        mapping, report = match_gene_ids(
            list(self.genes),
            expression,
            source=f"known genes {self.name}",
            path=self.source,
            require=False,
        )
        if not mapping:  # every HIT would be 0 (docs/formats.md: zero overlap is an error)
            raise CoverageError(
                f"known genes {self.name}: none of its {len(self.genes)} gene ids (e.g. "
                f"{', '.join(self.genes[:3])}) is a gene of the expression matrix (e.g. "
                f"{', '.join(expression.genes[:3])}); write the set with the matrix's ids",
                path=self.source,
            )
        if report.dropped or report.ambiguous:
            log.info(
                "known genes %s: %d of %d in the matrix", self.name, report.matched, len(self.genes)
            )
        return tuple(expression.genes[i] for i in sorted(set(mapping.values())))


def read_known_genes(
    name: str,
    path: str | os.PathLike,
    *,
    where: str | None = None,
    gene_column: str | None = None,
) -> KnownGenes:
    """Read one known gene set.

    Parameters
    ----------
    name : str
        Name used in the column headers (``HIT_<name>``).
    path : str or path-like
        Gene list, or a table with a header.
    where : str, optional
        Boolean column of the table; only rows where it is true (True/1/yes) are kept.
    gene_column : str, optional
        Column with the gene ids (default: a symbol-like column, else the first).

    Returns
    -------
    KnownGenes
    """
    path = str(path)
    if path != "-" and not os.path.isfile(path):  # "-": standard input, read as the others
        raise InputError(f"known-gene file for {name!r} not found; check the path", path=path)
    if where is None and gene_column is None:
        genes = read_gene_list(path)
    else:
        from kofs.io._table import read_table

        # the project's table reader: encodings, gzip, ragged rows and empty files are
        # refused with the file and line named, as every other table of kofs
        df = read_table(path)
        lower = {c.lower(): c for c in df.columns}

        def missing(column: str) -> ParameterError:
            return ParameterError(
                f"known genes {name!r}: no column {column!r}; the header (first line) names "
                f"{', '.join(repr(c) for c in df.columns)}",
                path=path,
            )

        if where is not None:
            if where.lower() not in lower:
                raise missing(where)
            flags = df[lower[where.lower()]].str.lower()
            odd = flags[~flags.isin(_TRUE | _FALSE)]
            if len(odd):  # a column of text or scores kept only its "yes" rows, silently
                line = df.attrs["lines"][flags.index.get_loc(odd.index[0])]
                raise InputError(
                    f"known genes {name!r}: column {where!r} holds "
                    f"{short_repr(df.loc[odd.index[0], lower[where.lower()]])} ({len(odd)} such "
                    "rows), not true or false; name a column of True/False (1/0, yes/no)",
                    path=path,
                    line=line,
                )
            df = df[flags.isin(_TRUE)]
        col = (
            gene_column.lower()
            if gene_column
            else next((c for c in _GENE_COLUMNS if c in lower), None)
        )
        if gene_column and col not in lower:
            raise missing(gene_column)
        series = df[lower[col]] if col else df.iloc[:, 0]
        blank = series[series.str.strip() == ""] if len(series) else series
        if len(blank):  # was dropped without a word (a known gene lost from HIT and Sim_anno)
            line = df.attrs["lines"][df.index.get_loc(blank.index[0])]
            raise InputError(
                f"known genes {name!r}: the gene id (column {series.name!r}) is empty "
                f"({len(blank)} such rows); write the gene's id or remove the row",
                path=path,
                line=line,
            )
        genes = list(dict.fromkeys(series))
    if not genes:
        raise InputError(
            f"known gene set {name!r} is empty" + (f" (no row with {where} true)" if where else ""),
            path=path,
        )
    return KnownGenes(name, tuple(genes), path)


def parse_known_spec(spec: str) -> KnownGenes:
    """Parse ``NAME=FILE`` or ``NAME=FILE:COLUMN`` (keep the rows where COLUMN is true)."""
    if "=" not in spec or not spec.split("=", 1)[0].strip():
        raise ParameterError(f"--known-genes {spec!r}: expected NAME=FILE or NAME=FILE:COLUMN")
    name, rest = (s.strip() for s in spec.split("=", 1))
    where = None
    if not os.path.isfile(rest) and ":" in rest:
        rest, where = rest.rsplit(":", 1)
    return read_known_genes(name, rest, where=where)
