"""Ranked gene lists that users bring: top-k lists, score tables, the usual tools' result
tables, GSEA ``.rnk`` files and GMT gene sets.

One list spec names one file: ``[NAME=]FILE[:COLUMN[:asc|desc|abs]]``. The file is recognised
from its content:

=========================  ========================================================================
file                        ranked by
=========================  ========================================================================
one gene per line           file order (a top-k list); a header word such as ``gene`` is skipped
limma ``topTable``          ``P.Value`` ascending (columns logFC, AveExpr, t, P.Value, adj.P.Val)
DESeq2 ``results``          ``pvalue`` ascending (baseMean, log2FoldChange, pvalue, padj)
edgeR ``topTags``           ``PValue`` ascending (logFC, logCPM, PValue, FDR)
Seurat ``FindMarkers``      ``p_val`` ascending (p_val, avg_log2FC or avg_logFC, pct.1, pct.2,
                            p_val_adj; ``FindAllMarkers``' table of several clusters: one
                            cluster's rows)
scanpy ``rank_genes_groups``  ``pvals`` ascending, signed by ``scores`` (one group's
 (``rank_genes_groups_df``)  ``names, scores, logfoldchanges, pvals, pvals_adj``)
sleuth results              ``pval`` ascending, signed by ``b`` (target_id, pval, qval, b)
MAGeCK gene summary         ``neg|rank`` ascending (negative selection, depletion) by default;
                            ``pos|rank`` with ``mageck_side="pos"`` or ``FILE:pos|rank``
GSEA ``.rnk``               second column descending (GSEA's convention); a header line
                            (its score a word) is skipped
``.gmt`` gene sets          unranked: every gene of a set tied (one list per set; named
                            ``NAME.SET`` when the spec gives a NAME)
other table                 the given ``COLUMN`` and direction; a column named like a p-value,
                            FDR or rank is taken ascending when no direction is given
=========================  ========================================================================

A raw p-value column (plural names such as ``pvals`` too) makes a calibrated list, signed by
the table's log fold change, else a fold change given as a ratio (none negative: up above 1),
else a signed statistic (``t``, ``stat``, ``z``).

Differential-expression tables are ranked by p-value, i.e. by the strength of the evidence in
either direction; to rank up- or down-regulated genes first give the fold-change or statistic
column with a direction (``de.csv:log2FoldChange:desc``). ``abs`` ranks by absolute value,
largest first. Values that are missing (``NA``) keep their gene in the list, tied at its bottom.

Statistics are checked at the door: a p-value or FDR column (``pvalue``, ``padj``,
``P.Value``, ``adj.P.Val``, ``PValue``, ``FDR``, ``neg|p-value``, ``neg|fdr``, any column named
like a p-value, q-value or FDR that ranks a list; not a log-transformed one such as
``neg_log10_p``) must hold numbers in [0, 1] (a ``P.Value`` column holding t statistics is
refused); a fold-change column (``log2FoldChange``, ``logFC``,
``lfc``, ...) finite numbers; the other numeric columns of the recognised tools numbers.
Missing values (``NA``, ``NaN``, ``NULL``, ``N/A``, ``None``, empty) are accepted there. A gene
id that is missing -- an empty cell, or one of those tokens in the gene column or in a
one-gene-per-line list -- is refused with its line: dropping it silently would move the genes
after it up. Row names that are only row numbers (``1, 2, 3, ...``, as R writes a table whose
rows have no names) are refused as gene ids.

The gene column is a column named like a gene symbol (``symbol``, ``gene_symbol``,
``Gene.symbol``, ``gene_name``, ...), else like a gene id (``gene``, ``gene_id``, ``id``,
``ensembl_gene_id``, ...), else the first column (R's row names); ``gene_column`` overrides it.
Repeated ids (several probes of one gene; ids equal up to case or an Ensembl version) keep their
best-ranked row. Every problem raises a :class:`~kofs.errors.KofsError` naming the file.
"""

from __future__ import annotations

import difflib
import logging
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from kofs.errors import InputError, ParameterError, checked_keywords
from kofs.io._fsops import check_path_argument, closed_folder
from kofs.io._table import (
    MISSING_TOKENS,
    check_column_names,
    display_name,
    is_delimited,
    is_number,
    read_bytes,
    read_table,
    unquote,
)
from kofs.io.ids import normalise_id
from kofs.types import Ranking

log = logging.getLogger(__name__)

__all__ = [
    "DIRECTIONS",
    "ListSpec",
    "RankedGeneList",
    "list_from_frame",
    "list_from_ids",
    "list_from_scores",
    "named_lists",
    "parse_list_spec",
    "read_ranked_lists",
]

#: Directions of a score column: smallest first, largest first, largest absolute value first.
DIRECTIONS = ("asc", "desc", "abs")
MAGECK_SIDES = ("neg", "pos")

_SYMBOL_COLUMNS = (
    "symbol", "gene_symbol", "gene.symbol", "genesymbol", "hgnc_symbol", "gene_name",
    "genename", "external_gene_name", "hugo_symbol",
)  # fmt: skip
_ID_COLUMNS = (
    "gene", "genes", "gene_id", "geneid", "gene.id", "id", "ensembl", "ensembl_id",
    "ensembl_gene_id", "entrez", "entrez_id", "entrezid", "name", "names", "feature",
    "feature_id",
)  # fmt: skip
_HEADER_WORDS = set(_SYMBOL_COLUMNS) | set(_ID_COLUMNS)
#: A log-transformed p-value (``neg_log10_p``, ``log10_pvalue``, ``-log10 p``, ``mlog10_q``) is
#: not a p-value: its numbers are not in [0, 1] and ``-log10`` runs the other way.
_NOT_LOGGED = r"^(?!(?:.*[^a-z])?(?:neg|minus|m|n)?log(?:10|2|e)?[|._ -])"
_ASCENDING_NAMES = re.compile(
    _NOT_LOGGED + r"(.*[|._ ])?(p|pvals?|pvalues?|p[._ -]?values?|padj|p[._]adj|adj[._]p[._]vals?|"
    r"p[._]?vals?[._]adj|fdr|q|qvals?|qvalues?|q[._ -]?values?|rank)$",
    re.IGNORECASE,
)
_SUFFIXES = (".gz", ".tsv", ".csv", ".txt", ".tab", ".rnk", ".gmt", ".list")


@dataclass(frozen=True)
class ListSpec:
    """A parsed list argument ``[NAME=]FILE[:COLUMN[:DIRECTION]]``."""

    path: str
    name: str | None = None
    column: str | None = None
    direction: str | None = None


def parse_list_spec(text: str, *, base: str | os.PathLike | None = None) -> ListSpec:
    """Split ``[NAME=]FILE[:COLUMN[:asc|desc|abs]]`` (an existing file name always wins).

    Parameters
    ----------
    text : str
    base : path, optional
        Folder that relative file names are relative to (a config file's folder); the
        returned path is joined to it. Default: the working folder.

    Raises
    ------
    InputError
        No interpretation names an existing file.
    """
    text = str(text)
    empty = "an empty list was given; give [NAME=]FILE, FILE:COLUMN or FILE:COLUMN:asc|desc|abs"
    if not text.strip():  # was ": file not found"
        raise InputError(empty)

    def where(p: str) -> str:
        if p.startswith("~"):  # as a shell would (a config's lists are not expanded by one)
            p = os.path.expanduser(p)
        return p if base is None or p == "-" or os.path.isabs(p) else os.path.join(base, p)

    def exists(p: str) -> bool:
        return bool(p) and os.path.exists(where(p))

    name = None
    if "=" in text and not exists(text):
        head, _, rest = text.partition("=")
        if head and "/" not in head and os.sep not in head:
            name, text = head.strip(), rest
            if not text.strip():
                raise InputError(f"{name}=: {empty}")
    if text == "-" or exists(text):
        return ListSpec(where(text), name)
    parts = text.rsplit(":", 2)
    if len(parts) == 3 and parts[2].lower() in DIRECTIONS and exists(parts[0]):
        return ListSpec(where(parts[0]), name, parts[1] or None, parts[2].lower())
    parts2 = text.rsplit(":", 1)
    if len(parts2) == 2 and exists(parts2[0]):
        if parts2[1].lower() in DIRECTIONS:
            return ListSpec(where(parts2[0]), name, None, parts2[1].lower())
        return ListSpec(where(parts2[0]), name, parts2[1] or None)
    # a column whose name holds colons (ranking.tsv's rank:Fisher): the file is the longest
    # existing head, the rest its column (and direction)
    cut = [i for i, c in enumerate(text) if c == ":"]
    for i in reversed(cut):
        if exists(text[:i]):
            column, _, last = text[i + 1 :].rpartition(":")
            if column and last.lower() in DIRECTIONS:
                return ListSpec(where(text[:i]), name, column, last.lower())
            return ListSpec(where(text[:i]), name, text[i + 1 :] or None)
    closed = closed_folder(where(text))
    if closed != where(text):  # os.path.exists cannot look behind a folder closed to the user
        raise InputError(
            f"cannot be read: {closed} may not be entered (permission denied)", path=where(text)
        )
    raise InputError(
        "file not found; give FILE, FILE:COLUMN or FILE:COLUMN:asc|desc|abs", path=where(text)
    )


@dataclass(frozen=True, eq=False)
class RankedGeneList:
    """One list as read from a file, before harmonisation with the other lists.

    Attributes
    ----------
    name : str
    genes : tuple of str
        Distinct genes (by canonical id) in file order, as the file writes them.
    scores : ndarray of shape (n,)
        Native values (NaN = missing, tied at the bottom of the list).
    higher_is_better : bool
    kind : str
        What the file was recognised as (``"DESeq2 results"``, ``"top-k list"``, ...).
    ranked_by : str
        How the list is ordered, for the summary (``"pvalue ascending"``, ``"file order"``).
    path : str
    gene_column : str or None
    n_rows : int
        Rows (or lines) with a gene id.
    n_repeated : int
        Rows dropped because their gene appeared in a better-ranked row.
    options_used : frozenset of str
        The reading options (``gene_column``, ``column``, ``direction``, ``mageck_side``) that
        decided how this list was read; an option no list used had no effect (a warning).
    p_values : bool
        The list is ranked by raw p-values (``pvalue``, ``P.Value``, ``PValue``, ``neg|p-value``,
        a column named like a p-value, ascending; not adjusted ones: FDR, padj and q-values
        are not uniform under the null): its ranking records them as its scores' null
        (:mod:`kofs.aggregate.nulls`), which the ``posterior`` fusion reads.
    signs : ndarray or None
        For a list of two-sided p-values: each gene's direction of change (+1, -1, 0; NaN
        unknown), the sign of ``sign_column`` (the tool's fold change, or a signed statistic).
        The ``posterior`` fusion then reads the table's signed z-scores
        (:mod:`kofs.aggregate.signed`).
    sign_column : str or None
    from_z : bool
        The scores are the p-values of a column of z-scores (:func:`_z_as_p_values`), not the
        file's values.
    """

    name: str
    genes: tuple[str, ...]
    scores: np.ndarray
    higher_is_better: bool
    kind: str
    ranked_by: str
    path: str
    gene_column: str | None = None
    n_rows: int = 0
    n_repeated: int = 0
    options_used: frozenset[str] = frozenset()
    p_values: bool = False
    signs: np.ndarray | None = None
    sign_column: str | None = None
    from_z: bool = False

    def describe(self) -> str:
        """One line for summaries: ``name: kind (path), N genes, ranked by ...``."""
        extra = f", {self.n_repeated} repeated ids merged" if self.n_repeated else ""
        if self.sign_column is not None:
            extra += f", directions from {self.sign_column}"
        return (
            f"{self.name}: {self.kind} ({self.path}), {len(self.genes)} genes, "
            f"ranked by {self.ranked_by}{extra}"
        )

    def ranking(self) -> Ranking:
        """The list as a :class:`~kofs.types.Ranking` (ranks 1 = best, ties averaged)."""
        return Ranking(
            self.name,
            self.genes,
            self.scores,
            self.higher_is_better,
            params={
                "kind": self.kind,
                "ranked_by": self.ranked_by,
                "path": self.path,
                "absent": ABSENT_BELOW if self.kind in SHORT_LISTS else ABSENT_MISSING,
            },
            info=self._info(),
        )

    def _info(self) -> dict[str, Any]:
        """The ranking's known null (raw p-values) and, with it, the effects' signs."""
        if not self.p_values:
            return {}
        if self.signs is None:
            return {"null": {"distribution": "p"}}
        return {"null": {"distribution": "p"}, "effect_signs": self.signs}


#: What a gene a list lacks means, by the kind of list: a top-k list or a gene set names only
#: its top (a lacking gene lies below it); a tool's table lists every gene the tool tested (a
#: lacking gene was not tested: no information). Read by ``posterior`` (docs/aggregation.md).
ABSENT_BELOW, ABSENT_MISSING = "below", "missing"
SHORT_LISTS = frozenset({"top-k list", "GMT gene set"})


def _stem(path: str) -> str:
    name = Path(path).name if path != "-" else "stdin"
    changed = True
    while changed:
        changed = False
        for suffix in _SUFFIXES:
            if name.lower().endswith(suffix) and len(name) > len(suffix):
                name, changed = name[: -len(suffix)], True
    return name


_BREAKS_ROWS = re.compile(r"[\t\n\r]")


def _best_row_index(
    genes: list[str], scores: np.ndarray, higher_is_better: bool, path: str
) -> list[int]:
    """The rows of :func:`_best_rows`: each distinct gene's best-ranked row, in file order."""
    broken = next((k for k, g in enumerate(genes) if _BREAKS_ROWS.search(g)), None)
    if broken is not None:  # ranking.tsv is tab-separated: the id would shift its columns
        raise InputError(
            f"gene id {genes[broken]!r} (entry {broken + 1}) holds a tab or a line break, which "
            "no gene id has; check the table's quoting, or fix the id",
            path=path,
        )
    key = -scores if higher_is_better else scores
    order = np.lexsort((np.arange(len(genes)), np.where(np.isnan(key), 0, key), np.isnan(key)))
    keep: dict[str, int] = {}
    for i in order.tolist():
        keep.setdefault(normalise_id(genes[i]), i)
    rows = sorted(keep.values())
    if not rows:
        raise InputError("the list holds no gene ids", path=path)
    return rows


def _best_rows(genes: list[str], scores: np.ndarray, higher_is_better: bool, path: str):
    """Distinct genes (canonical id) keeping each one's best-ranked row, in file order."""
    rows = _best_row_index(genes, scores, higher_is_better, path)
    return (
        tuple(genes[i] for i in rows),
        np.asarray(scores, dtype=np.float64)[rows],
        len(genes) - len(rows),
    )


_P_LIKE = re.compile(
    _NOT_LOGGED + r"(.*[|._ ])?(p|p[._]?vals?|p[._ -]?values?|padj|p[._]adj|adj[._]p[._]vals?|"
    r"p[._]?vals?[._]adj|fdr|q|q[._]?vals?|q[._ -]?values?)$",
    re.IGNORECASE,
)
#: Raw p-value columns (uniform under the null), not adjusted ones.
_RAW_P = re.compile(_NOT_LOGGED + r"(.*[|._ ])?(p|p[._]?vals?|p[._ -]?values?)$", re.IGNORECASE)
_FC_LIKE = re.compile(
    r"^(.*[|._ ])?(log2?fc|log2?[._ ]?fold[._ ]?changes?|lfc|fold[._ ]?changes?|fc|"
    r"log2?\(fold[._ ]?change\))$",
    re.IGNORECASE,
)
#: A column of z-scores (N(0, 1) for a gene where nothing changed): read as p-values, two-sided
#: with their signs by default (:func:`_z_as_p_values`).
_Z_LIKE = re.compile(r"^(.*[|._ ])?(z|zscore|z[._ -]score|z[._ -]?value|zval)$", re.IGNORECASE)
# other numeric columns of the recognised tools' tables
_TOOL_NUMBERS = {
    "DESeq2 results": ("baseMean", "lfcSE", "stat"),
    "edgeR topTags": ("logCPM", "LR", "F"),
    "limma topTable": ("AveExpr", "t", "B"),
    "Seurat FindMarkers": ("pct.1", "pct.2"),
    "MAGeCK gene summary": ("num", "neg|score", "pos|score", "neg|rank", "pos|rank"),
}


def _missing_id(value: str) -> bool:
    return value in MISSING_TOKENS


def _refuse_missing_ids(
    genes: Sequence[str], lines: Sequence[int], path: str, what: str, other: str | None = None
) -> None:
    """A gene id that is empty or a missing-value token: an error naming its line (and
    ``other``, a column of ids without gaps, when there is one)."""
    bad = [i for i, g in enumerate(genes) if _missing_id(g)]
    if not bad:
        return
    i = bad[0]
    token = "empty" if not genes[i] else repr(genes[i])
    more = f" ({len(bad)} such rows)" if len(bad) > 1 else ""
    instead = (
        f", or read the ids of column {other!r} (--gene-column {other}, the gene column of "
        "every table)"
        if other
        else ""
    )
    raise InputError(
        f"{what} is {token}: a missing gene id{more}; write the real id or remove the row"
        f"{instead} (kofs does not drop it silently: the genes after it would move up)",
        path=path,
        line=lines[i] if i < len(lines) else None,
    )


def _row_numbers(genes: Sequence[str]) -> bool:
    """Whether the ids are just 1, 2, 3, ..., n (the row names R gives unnamed rows)."""
    return len(genes) > 1 and all(g == str(k + 1) for k, g in enumerate(genes))


def _refuse_scores_as_ids(genes: Sequence[str], name: str, path: str, hint: str) -> None:
    """The gene column taken by default (the first: no column is named like gene ids) must
    not be a statistic: a table written without its gene ids (R's ``write.csv(...,
    row.names = FALSE)`` of DESeq2 results) had its baseMean values ranked as gene ids. A
    column named like a statistic, or of numbers not all whole (Entrez ids are), is refused."""
    statistic = bool(_P_LIKE.match(name.strip()) or _FC_LIKE.match(name.strip())) or any(
        name.strip() in columns for columns in _TOOL_NUMBERS.values()
    )
    fractional = all(is_number(g) for g in genes) and any(
        not re.fullmatch(r"[+-]?\d+", g.strip()) for g in genes
    )
    if statistic or fractional:
        shown = name.strip() or "(row names)"
        raise InputError(
            f"has no gene ids: no column is named like them, and the first column {shown!r} "
            f"holds {'a statistic' if statistic else 'numbers'} (e.g. {genes[0]!r}){hint}; "
            "write the table with its gene ids (R: row.names = TRUE, or the ids as a column "
            "named 'gene'), or name the gene column (--gene-column)",
            path=path,
        )


def _refuse_several_groups(
    header: list[str], columns: list[list[str]], used: tuple[int, ...], path: str
) -> None:
    """A long table of several groups' markers (scanpy's ``rank_genes_groups_df`` of every
    group, a ``group`` or ``cluster`` column): its genes repeat once per group, and merging
    them would rank the genes of all groups as one list."""
    for k, h in enumerate(header):
        if k in used or h.strip().lower() not in ("group", "cluster", "groups", "contrast"):
            continue
        values = sorted({str(v).strip() for v in columns[k]})
        if len(values) > 1:
            shown = ", ".join(map(repr, values[:4])) + (", ..." if len(values) > 4 else "")
            raise InputError(
                f"holds the tables of {len(values)} groups (column {h!r}: {shown}); give one "
                "group's rows as a list (e.g. scanpy.get.rank_genes_groups_df(adata, "
                "group=...), or in R subset(markers, cluster == ...) of Seurat's "
                "FindAllMarkers)",
                path=path,
            )


#: How far above 1 a p-value may lie from the rounding of its computation (and is read as 1).
P_ROUNDING = 1e-9


def _check_statistic(
    values: np.ndarray, column: str, path: str, lines: Sequence[int], texts: Sequence[str],
    hint: str = "",
) -> None:  # fmt: skip
    """p-value/FDR columns in [0, 1], fold changes finite (NaN = missing is accepted), rank
    columns of MAGeCK (``neg|rank``, ``pos|rank``) whole numbers from 1, none missing."""
    if re.fullmatch(r"(neg|pos)\|rank", column.strip()):
        bad = np.flatnonzero(~(values >= 1) | (values != np.floor(values)))
        what = "a rank (a whole number from 1)"
    elif _P_LIKE.match(column.strip()):
        # 1 + 2.2e-16 is 1 (R's fisher.test, a two-sided 2 * P computed in floats): P_ROUNDING
        bad = np.flatnonzero(~np.isnan(values) & ((values < 0) | (values > 1 + P_ROUNDING)))
        what = "a p-value, q-value or FDR in [0, 1]"
    elif _FC_LIKE.match(column.strip()):
        bad = np.flatnonzero(np.isinf(values))
        what = "a finite fold change"
    else:
        return
    if bad.size:
        i = int(bad[0])
        more = f" ({bad.size} such values)" if bad.size > 1 else ""
        raise InputError(
            f"column {column!r} holds {texts[i]!r}, not {what}{more}; check that the column "
            f"holds what its name says{hint}",
            path=path,
            line=lines[i] if i < len(lines) else None,
        )


def _numbers(
    values: Sequence[str], column: str, path: str, lines: Sequence[int], hint: str = ""
) -> np.ndarray:
    missing = set(MISSING_TOKENS)
    try:  # the fast path: every cell a number or a missing-value token
        return np.array(["nan" if v in missing else v for v in values], dtype=np.float64)
    except ValueError:
        pass
    out = np.empty(len(values))
    for i, v in enumerate(values):
        if v in MISSING_TOKENS:
            out[i] = np.nan
            continue
        try:
            out[i] = float(v)
        except ValueError:
            line = lines[i] if i < len(lines) else None
            raise InputError(
                f"column {column!r} holds {v!r}, not a number{_format_hint(v)}{hint}",
                path=path,
                line=line,
            ) from None
    return out


def _format_hint(text: str) -> str:
    """Why a cell that reads as a number to a person is not one to kofs: a spreadsheet's
    decimal comma or thousands separators, a p-value written as a bound (``<1e-300``)."""
    t = text.strip()
    if re.fullmatch(r"[<>]=?\s*\S+", t) and is_number(t.lstrip("<>=").strip()):
        return " but a bound; write the number itself (e.g. 1e-300 for <1e-300)"
    if re.fullmatch(r"[+-]?\d+,\d+", t):
        ambiguous = re.fullmatch(r"[+-]?[1-9]\d{0,2},\d{3}", t)
        what = "a decimal comma or a thousands separator" if ambiguous else "a decimal comma"
    elif re.fullmatch(r"[+-]?\d{1,3}([,.'\s]\d{3})+([.,]\d+)?", t):
        what = "thousands separators"
    else:
        return ""
    return (
        f" ({what}?); write numbers with a decimal point and no thousands separators "
        "(0.05, 1234.5), e.g. save the spreadsheet as CSV with '.' as decimal mark"
    )


def _find_column(header: list[str], column: str, path: str) -> int:
    lower = [h.lower() for h in header]
    if column in header:
        return header.index(column)
    if column.lower() in lower:
        return lower.index(column.lower())
    head, _, last = column.rpartition(":")
    if head and head.lower() in lower:  # FILE:score:sideways, a direction mistyped
        raise ParameterError(
            f"direction {last!r} after column {head!r}: give asc, desc or abs "
            f"(FILE:{head}:asc|desc|abs)",
            path=path,
        )
    close = difflib.get_close_matches(column, header, n=1, cutoff=0.5)
    hint = f"did you mean {close[0]!r}? " if close else ""
    raise ParameterError(
        f"column {column!r} not found; {hint}columns are {', '.join(map(repr, header))}",
        path=path,
    )


def _gene_column(
    header: list[str],
    gene_column: str | None,
    path: str,
    columns: Sequence[Sequence[object]] | None = None,
) -> int:
    """The gene column: ``gene_column``, else the first of the symbol names, then of the id
    names, in the names' order (``gene`` before ``id`` before ``feature``: Cuffdiff's
    ``test_id, gene_id, gene``, Ballgown's ``feature, id``), skipping a column of one value in
    every row (Ballgown's ``feature``: ``gene``), else the first column."""
    if gene_column is not None:
        return _find_column(header, gene_column, path)
    lower = [h.strip().lower() for h in header]
    for names in (_SYMBOL_COLUMNS, _ID_COLUMNS):
        for name in names:
            if name in lower:
                i = lower.index(name)
                if columns is None or len(columns[i]) < 3 or len(set(columns[i])) > 1:
                    return i
    return 0


def _recognise(cols: set[str], mageck_side: str) -> tuple[str, str, str] | None:
    """(kind, column, direction) of a known tool's table, or None."""
    if {"baseMean", "log2FoldChange", "pvalue"} <= cols:
        return "DESeq2 results", "pvalue", "asc"
    if {"logFC", "logCPM", "PValue"} <= cols:
        return "edgeR topTags", "PValue", "asc"
    if {"logFC", "P.Value", "adj.P.Val"} <= cols:
        return "limma topTable", "P.Value", "asc"
    if {"neg|rank", "pos|rank"} <= cols:
        return "MAGeCK gene summary", f"{mageck_side}|rank", "asc"
    if {"p_val", "p_val_adj"} <= cols and cols & {"avg_log2FC", "avg_logFC"}:
        return "Seurat FindMarkers", "p_val", "asc"
    if {"names", "scores", "logfoldchanges", "pvals"} <= cols:
        return "scanpy rank_genes_groups", "pvals", "asc"
    if {"target_id", "pval", "qval"} <= cols:
        return "sleuth results", "pval", "asc"
    return None


def _guess_direction(column: str, path: str) -> str:
    if _ASCENDING_NAMES.match(column.strip()):
        return "asc"
    if path.startswith("<list "):  # a DataFrame or Series of the Python API has no FILE spec
        raise ParameterError(
            f"cannot guess the direction of column {column!r}; give direction='desc' (largest "
            "first), 'asc' (smallest first) or 'abs' (largest |value| first)",
            path=path,
        )
    raise ParameterError(
        f"cannot guess the direction of column {column!r}; write {display_name(path)}:"
        f"{column}:desc (largest first), :asc (smallest first) or :abs (largest |value| first)",
        path=path,
    )


def _scored(values: np.ndarray, direction: str) -> tuple[np.ndarray, bool]:
    if direction == "abs":
        return np.abs(values), True
    return values, direction == "desc"


def _read_plain(path: str, name: str, lines: list[tuple[int, str]]) -> RankedGeneList:
    genes: list[str] = []
    for k, (lineno, ln) in enumerate(lines):
        ln = unquote(ln.split(" #")[0].split("\t#")[0])
        if len(ln.split()) > 1:
            raise InputError(
                f"{ln!r} has several words; write one gene id per line", path=path, line=lineno
            )
        if k == 0 and ln.lower() in _HEADER_WORDS:
            continue
        if _missing_id(ln):
            raise InputError(
                f"{ln!r} is a missing-value token, not a gene id; write the real id or remove "
                "the line (kofs does not drop it silently: the genes after it would move up)",
                path=path,
                line=lineno,
            )
        genes.append(ln)
    if not genes:
        raise InputError("the list holds no gene ids", path=path)
    scores = np.arange(1.0, len(genes) + 1.0)
    kept, values, repeated = _best_rows(genes, scores, False, path)
    return RankedGeneList(
        name, kept, values, False, "top-k list", "file order", path, None, len(genes), repeated
    )


def _read_gmt(path: str) -> list[RankedGeneList]:
    from kofs.io.pathways import read_gmt

    sets = read_gmt(path)
    out = []
    for sid, members in zip(sets.ids, sets.members, strict=True):
        genes = list(members)
        kept, values, repeated = _best_rows(genes, np.zeros(len(genes)), True, path)
        out.append(
            RankedGeneList(
                sid,
                kept,
                values,
                True,
                "GMT gene set",
                "nothing (an unranked set: its genes tie)",
                path,
                None,
                len(genes),
                repeated,
            )  # fmt: skip
        )
    return out


def _read_rnk(path: str, name: str, raw: bytes, spec: ListSpec) -> RankedGeneList:
    if spec.column:  # it was ignored: the list was ranked by the score column regardless
        raise ParameterError(
            f"a .rnk file has one score column (its second), not {spec.column!r}: give the file "
            "alone, or FILE:asc|desc|abs",
            path=path,
        )
    df = read_table(path, comment="#", header=False, data=raw)
    if df.shape[1] < 2:
        raise InputError("a .rnk file needs two columns: gene and score", path=path)
    lines = df.attrs.get("lines", ())
    first = str(df.iloc[0, 1]).strip()
    if re.match(r"[A-Za-z_]", first) and not is_number(first) and not _missing_id(first):
        # a header line (``gene<TAB>score``, as R's write.table writes one), which GSEA reads
        # past: its score is a word, not a number
        df, lines = df.iloc[1:], lines[1:]
        if len(df) == 0:
            raise InputError("has a header line but no genes", path=path)
    genes = [str(g).strip() for g in df.iloc[:, 0].tolist()]
    _refuse_missing_ids(genes, lines, path, "the gene id (column 1)")
    values = _numbers(df.iloc[:, 1].tolist(), "score", path, lines)
    direction = spec.direction or "desc"
    scores, hib = _scored(values, direction)
    kept, kept_scores, repeated = _best_rows(genes, scores, hib, path)
    return RankedGeneList(
        name, kept, kept_scores, hib, "GSEA .rnk", f"score {_words(direction)}", path,
        None, len(genes), repeated,
    )  # fmt: skip


def _words(direction: str) -> str:
    return {"asc": "ascending", "desc": "descending", "abs": "absolute value, largest first"}[
        direction
    ]


def _refuse_data_as_header(header: list[str], gene_column: str | None, path: str) -> None:
    """A table's first line names its columns: one whose every field but the gene id is a
    number is a row of data (a table written without its header, e.g. R's ``col.names =
    FALSE``, or a RobustRankAggreg user's ``gene<TAB>score`` file); read as a header, its gene
    would be lost and a number would name the score column. A gene column named as one
    (``gene``, ``symbol``, ..., ``gene_column``, or R's empty row-names name) makes the line a
    header, whose other columns may be numbers (time points, doses)."""
    gi = _gene_column(header, gene_column, path)
    first = header[gi].strip()
    if gene_column is not None or not first or first.lower() in _HEADER_WORDS:
        return
    rest = [h for k, h in enumerate(header) if k != gi]
    if rest and all(is_number(h) for h in rest):
        shown = ", ".join(map(repr, header[:4])) + (", ..." if len(header) > 4 else "")
        raise InputError(
            f"its first line ({shown}) is data, not column names (its fields after the gene "
            "id are numbers): a table without a header line? add one (e.g. gene<TAB>score) "
            "and name the score column and its direction (FILE:score:asc|desc|abs), or name "
            "a gene<TAB>score file .rnk (ranked by score, descending)",
            path=path,
        )


def _gmt_like(raw: bytes) -> bool:
    """Whether tab-separated lines of 3 fields or more and of different lengths (gene sets:
    name, description, genes) make up the content, as in a GMT file named otherwise -- not a
    table with a few damaged rows (most of its rows as long as one another)."""
    counts = [ln.count(b"\t") for ln in raw.split(b"\n") if ln.strip()]
    if len(set(counts)) < 2 or min(counts) < 2:
        return False
    common = max(counts.count(c) for c in set(counts))
    return len(counts) < 10 or common < 0.9 * len(counts)


def _read_table(
    path: str,
    name: str,
    raw: bytes,
    spec: ListSpec,
    **reading,
) -> RankedGeneList:
    try:
        df = read_table(path, comment=None, data=raw)
    except InputError as exc:
        if not _gmt_like(raw):
            raise
        raise InputError(
            f"{exc.message}; is it a GMT file of gene sets (set name, description, genes on "
            "each line)? name it .gmt",
            path=exc.path,
            line=exc.line,
        ) from None
    header = [str(h) for h in df.columns]
    if len(df) == 0:
        raise InputError("the table has a header but no rows", path=path)
    lines = df.attrs.get("lines", ())
    if len(header) == 1 and not (spec.column or spec.direction):
        # one column (its rows' delimiters were trailing, e.g. "TP53,"): one gene per line,
        # its first line a gene unless it is a header word
        first = lines[0] - 1 if lines else 1
        # (a quoted field over several lines makes fewer rows than lines: numbers then approximate)
        column = [(first, header[0]), *zip(lines, map(str, df.iloc[:, 0].tolist()), strict=False)]
        return _read_plain(display_name(path), name, column)
    _refuse_data_as_header(header, reading.get("gene_column"), path)
    columns = [df.iloc[:, i].tolist() for i in range(df.shape[1])]
    return _from_columns(
        header,
        columns,
        lines,
        name,
        display_name(path),
        spec,
        row_names=df.attrs.get("row_names", False),
        **reading,
    )


def _from_columns(
    header: list[str],
    columns: list[list[str]],
    lines: Sequence[int],
    name: str,
    path: str,
    spec: ListSpec,
    *,
    gene_column: str | None,
    column: str | None,
    direction: str | None,
    mageck_side: str,
    row_names: bool = False,
) -> RankedGeneList:
    """A list from a table's columns of strings (file or DataFrame); ``row_names``: the file's
    header was one field shorter than its rows (R's layout), so its first column is unnamed."""
    gi = _gene_column(header, gene_column, path, columns)
    # the direction option goes with a column the user names; a recognised tool's default
    # column comes with its own direction (unless the spec gives one)
    known = _recognise(set(header), mageck_side)
    kind = known[0] if known else "table"
    used = {"gene_column"} if gene_column is not None else set()
    if spec.column or column:
        if not spec.column:
            used.add("column")
        if not spec.direction and direction is not None:
            used.add("direction")
        column = spec.column or column
        direction = spec.direction or direction
    elif known is not None:
        column, direction = known[1], spec.direction or known[2]
        if kind == "MAGeCK gene summary":
            used.add("mageck_side")
    elif len(raw := [h for i, h in enumerate(header) if i != gi and _RAW_P.match(h.strip())]) == 1:
        # one raw p-value column (gene, pvalue[, log2FC, padj, ...]): what else would rank them
        column, direction = raw[0], spec.direction or "asc"
    elif len(zs := [h for i, h in enumerate(header) if i != gi and _Z_LIKE.match(h.strip())]) == 1:
        # one z-score column and no p-value column: two-sided, its sign the direction
        column, direction = zs[0], spec.direction or "abs"
    else:
        # RobustRankAggreg's aggregateRanks table (Name, Score: its corrected rho, smallest
        # first) is not taken so unasked: a Name/Score table of another tool may rank the
        # other way
        rra = [h.strip() for h in header] == ["Name", "Score"]
        raise ParameterError(
            "which column ranks the genes? give FILE:COLUMN:asc|desc|abs (columns: "
            f"{', '.join(map(repr, header))})"
            + (f"; RobustRankAggreg's aggregateRanks output: {path}:Score:asc" if rra else ""),
            path=path,
        )
    ci = _find_column(header, column, path)
    column = header[ci]
    if kind == "MAGeCK gene summary" and column[:4] in ("neg|", "pos|"):
        side = "negative" if column.startswith("neg|") else "positive"
        kind = f"MAGeCK gene summary, {side} selection"
    if ci == gi:
        raise ParameterError(f"column {column!r} holds the gene ids, not scores", path=path)
    _refuse_several_groups(header, columns, (gi, ci), path)
    if direction is None:  # (a z-score's default: two-sided)
        direction = "abs" if _Z_LIKE.match(column.strip()) else _guess_direction(column, path)
    elif direction == "desc" and _ASCENDING_NAMES.match(column.strip()):
        log.warning(
            "%s: column %r is ranked descending, as asked: the largest p-values (the least "
            "significant genes) first",
            path, column,
        )  # fmt: skip
    gene_col = header[gi] or "(row names)"
    # R writes a table with row names one field longer than its header: the first field of
    # every row was read as row names (not so an empty first name written in the header, as
    # R's write.csv and DESeq2 exports have)
    hint = ""
    if row_names:
        hint = (
            "; every row has one field more than the header, so its first field was read as "
            "row names: check that no row has an extra field"
        )
    genes = [str(g).strip() for g in columns[gi]]
    # another column of ids without gaps (a symbol column with NA beside the Ensembl ids)
    other = next(
        (
            h
            for k, h in enumerate(header)
            if k not in (gi, ci)
            and h.strip().lower() in _HEADER_WORDS
            and not any(_missing_id(str(v).strip()) for v in columns[k])
        ),
        None,
    )
    _refuse_missing_ids(genes, lines, path, f"the gene id (column {gene_col!r})", other)
    if gene_column is None and len(genes) >= 3 and len(set(genes)) == 1:
        # (every row one id: a column of the feature type, Ballgown's 'gene', not gene ids;
        # its rows were merged into one gene)
        raise InputError(
            f"column {gene_col!r}, read as the gene ids, holds one value ({genes[0]!r}) in "
            f"every row: name the column of gene ids (FILE with --gene-column, "
            "gene_column= in Python)",
            path=path,
        )
    if gene_column is None and header[gi].strip().lower() not in _HEADER_WORDS:
        _refuse_scores_as_ids(genes, header[gi], path, hint)
    if gene_column is None and _row_numbers(genes):
        raise InputError(
            f"the gene column {gene_col!r} holds only row numbers (1, 2, 3, ...), not gene ids"
            f"{hint}; name the gene column (--gene-column), or write the table with its gene "
            "ids (R: write.table(..., row.names = FALSE) after adding them as a column)",
            path=path,
        )
    texts = [str(v).strip() for v in columns[ci]]
    values = _numbers(texts, column, path, lines, hint)
    _check_statistic(values, column, path, lines, texts, hint)
    if _P_LIKE.match(column.strip()):
        values = np.minimum(values, 1.0)  # a p-value a rounding error above 1 (NaN stays)
    if known is not None:  # the tool's other columns: numbers, p-values in [0, 1], ...
        for k, h in enumerate(header):
            if k in (gi, ci) or not (
                _P_LIKE.match(h) or _FC_LIKE.match(h) or h in _TOOL_NUMBERS.get(known[0], ())
            ):
                continue
            other = [str(v).strip() for v in columns[k]]
            numbers = _numbers(other, h, path, lines, hint)
            _check_statistic(numbers, h, path, lines, other, hint)
    z_signs = None
    ranked_by = f"{column} {_words(direction)}"
    from_z = bool(_Z_LIKE.match(column.strip()))
    if from_z:
        values, z_signs, ranked_by = _z_as_p_values(values, direction, column)
        direction = "asc"
    scores, hib = _scored(values, direction)
    if np.isnan(scores).all():
        raise InputError(f"column {column!r} has no numbers", path=path)
    rows = _best_row_index(genes, scores, hib, path)
    p_values = from_z or (direction == "asc" and bool(_RAW_P.match(column)))
    signs, sign_column = None, None
    if z_signs is not None:
        signs, sign_column = z_signs[rows], column
    # (a z column signs itself, or is one-sided: its side is the reading)
    si = _effect_column(header, kind, exclude=(gi, ci)) if p_values and not from_z else None
    if si is not None:  # the effects' signs, for the signed reading of two-sided p-values
        try:
            effect = _numbers([str(v).strip() for v in columns[si]], header[si], path, lines, hint)
        except InputError:  # a text column named like a statistic: no directions
            log.warning(
                "%s: column %r is not numeric, so the table's directions are not used",
                path,
                header[si],
            )
        else:
            direction_of = _effect_signs(effect, header[si])[rows]
            if not (np.abs(direction_of) > 0).any():  # all 0 (ratios 1) or NA: no direction
                # (a sign of 0 reads the gene as unchanged, z = 0, whatever its p-value)
                log.warning(
                    "%s: column %r holds no direction (every number 0, or a ratio of 1, or "
                    "missing), so the table's directions are not used",
                    path,
                    header[si],
                )
            else:
                signs, sign_column = direction_of, header[si]
    return RankedGeneList(
        name, tuple(genes[i] for i in rows), scores[rows], hib, kind,
        ranked_by, path, gene_col, len(genes), len(genes) - len(rows),
        frozenset(used), p_values=p_values, signs=signs, sign_column=sign_column, from_z=from_z,
    )  # fmt: skip


def _z_as_p_values(
    z: np.ndarray, direction: str, column: str
) -> tuple[np.ndarray, np.ndarray | None, str]:
    """A z-score column's p-values, its signs (None: one-sided) and how the list is ranked:
    ``abs`` (the default) two-sided, ``2 Q(|z|)``, each gene's direction the sign of its z (a
    signed table, :mod:`kofs.aggregate.signed`); ``desc`` one-sided for large z, ``Q(z)``;
    ``asc`` one-sided for small z, ``Q(-z)`` (``Q`` the upper normal tail). A z-score is N(0, 1)
    for a gene where nothing changed, so its p-value is calibrated as a test's is: read as a
    ranking alone, a list of z-scores says nothing of how many of its genes are beyond chance."""
    from scipy.special import ndtr

    if direction == "abs":
        return 2.0 * ndtr(-np.abs(z)), np.sign(z), f"{column} as two-sided p-values"
    side = "large" if direction == "desc" else "small"
    p = ndtr(-z) if direction == "desc" else ndtr(z)
    return p, None, f"{column} as one-sided p-values ({side} z first)"


#: The effect column that signs a tool's two-sided p-values.
_TOOL_EFFECT = {
    "DESeq2 results": "log2FoldChange",
    "edgeR topTags": "logFC",
    "limma topTable": "logFC",
    "Seurat FindMarkers": "avg_log2FC",  # Seurat < 4: avg_logFC, found as a fold change
    # the statistic its p-value is of (t or Wilcoxon's z), as scanpy computes them
    "scanpy rank_genes_groups": "scores",
    "sleuth results": "b",  # the Wald test's beta (an LRT table has none: unsigned)
}
#: Signed statistics a table may carry instead of a fold change.
_SIGNED_STAT = re.compile(r"^(.*[|._ ])?(t|stat|statistic|z|z[._ -]?score|wald)$", re.IGNORECASE)


def _effect_column(header: list[str], kind: str, exclude: tuple[int, ...]) -> int | None:
    """The column whose sign is each gene's direction of change: the tool's fold change,
    else the first fold-change-like column, else the first signed statistic (t, stat, z);
    None when the table has none (MAGeCK's p-values are one-sided already)."""
    if kind.startswith("MAGeCK"):
        return None
    named = _TOOL_EFFECT.get(kind)
    if named is not None and named in header:
        return header.index(named)
    fold = [k for k, h in enumerate(header) if k not in exclude and _FC_LIKE.match(h.strip())]
    logged = [k for k in fold if _LOGGED_FC.search(header[k])]
    if logged or fold:  # a log fold change before a ratio (DESeq's foldChange, log2FoldChange)
        return (logged or fold)[0]
    for k, h in enumerate(header):
        if k not in exclude and _SIGNED_STAT.match(h.strip()):
            return k
    return None


#: A fold change named as a logarithm; another fold-change column may hold ratios.
_LOGGED_FC = re.compile(r"log|lfc", re.IGNORECASE)


def _effect_signs(effect: np.ndarray, name: str) -> np.ndarray:
    """Each gene's direction from its effect column: the sign of a log fold change or a
    statistic; a fold change not named as a logarithm whose numbers are none negative is a
    ratio (Ballgown's ``fc``, DESeq's ``foldChange``): up above 1, down below (0: a gene gone)."""
    finite = effect[np.isfinite(effect)]
    ratio = (
        bool(_FC_LIKE.match(name.strip()))
        and not _LOGGED_FC.search(name)
        and finite.size > 0
        and bool((finite >= 0).all())
        and bool((finite > 0).any())
    )
    if ratio:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.sign(np.log(effect))
    return np.sign(effect)


def list_from_scores(
    genes: Sequence[str],
    scores: Sequence[float] | np.ndarray,
    *,
    name: str,
    higher_is_better: bool,
    kind: str,
    ranked_by: str,
    path: str = "<python>",
) -> RankedGeneList:
    """A list from genes and native scores (Python API); ids repeated up to case or an Ensembl
    version keep their best-ranked entry."""
    genes = [str(g).strip() for g in genes]
    values = np.asarray(scores, dtype=np.float64)
    kept, kept_scores, repeated = _best_rows(genes, values, higher_is_better, path)
    return RankedGeneList(
        name, kept, kept_scores, higher_is_better, kind, ranked_by, path, None, len(genes),
        repeated,
    )  # fmt: skip


def list_from_ids(ids: Sequence[object], name: str) -> RankedGeneList:
    """A top-k list from gene ids in rank order (Python API); repeated ids keep the first."""
    path = f"<list {name}>"
    genes = ["" if g is None or g != g else str(g).strip() for g in ids]  # None, NaN: missing
    bad = [k for k, g in enumerate(genes) if _missing_id(g)]
    if bad:
        raise InputError(
            f"item {bad[0] + 1} is {genes[bad[0]] or 'empty'!r}, a missing gene id "
            f"({len(bad)} such items); remove it or write the real id",
            path=path,
        )
    if not genes:
        raise InputError("the list holds no gene ids", path=path)
    kept, values, repeated = _best_rows(genes, np.arange(1.0, len(genes) + 1.0), False, path)
    return RankedGeneList(
        name, kept, values, False, "top-k list", "list order", path, None, len(genes), repeated
    )


def _row_numbers_index(index: Any) -> bool:
    """Whether a DataFrame's index is row numbers, not gene ids: pandas' default 0..n-1 range,
    or integers without a name (the row numbers a filter keeps, ``df[df.padj < 0.05]``).
    Integer ids (Entrez) are read from a named index or a column."""
    import pandas as pd
    from pandas.api.types import is_integer_dtype

    if isinstance(index, pd.RangeIndex):
        return True
    return index.name is None and index.nlevels == 1 and is_integer_dtype(index.dtype)


def _refuse_numbers_as_ids(df: Any, first: str, path: str) -> None:
    """A DataFrame whose gene ids would be its first column by default (its index row
    numbers, no column named like gene ids): that column must hold text, not numbers (a score
    column read as the ids would rank scores, silently)."""
    import pandas as pd
    from pandas.api.types import is_datetime64_any_dtype, is_numeric_dtype

    dtype = df.dtypes.iloc[0]
    if is_numeric_dtype(dtype) or is_datetime64_any_dtype(dtype):
        index = (
            "is a plain 0..n-1 range"
            if isinstance(df.index, pd.RangeIndex)
            else "holds integers and has no name (the row numbers of a filtered table?)"
        )
        raise ParameterError(
            f"no gene ids: the DataFrame's index {index} and its first column {first!r} holds "
            f"numbers ({dtype}), not ids; give the ids as the index (df.set_index('gene')) or "
            "as a text column named like gene ids ('gene', 'symbol', 'gene_id', ...), name an "
            "index of integer ids (df.index.name = 'entrez'), or name their column with "
            "gene_column",
            path=path,
        )


def list_from_frame(
    frame,
    name: str,
    *,
    gene_column: str | None = None,
    column: str | None = None,
    direction: str | None = None,
    mageck_side: str | None = "neg",
) -> RankedGeneList:
    """A list from a :class:`pandas.DataFrame` (Python API).

    The genes are ``gene_column``, else a column named like genes, else the index when it is
    not row numbers (a 0..n-1 range, or integers without a name: the row numbers a filter
    keeps) as in DESeq2/limma results read into Python, else the first column, which must then
    hold text (numbers there are refused: they are scores, not ids).
    A frame with the gene column only is a top-k list in row order; otherwise the score column
    and direction follow the rules of :func:`read_ranked_lists`.
    """
    import pandas as pd

    check_column_names(gene_column=gene_column, column=column)
    df = frame
    if not _row_numbers_index(df.index):
        df = df.reset_index(names=str(df.index.name) if df.index.name is not None else "")
        if gene_column is None and not any(
            str(c).lower() in _SYMBOL_COLUMNS + _ID_COLUMNS for c in df.columns[1:]
        ):
            gene_column = str(df.columns[0])
    header = [str(c) for c in df.columns]
    if len(df) == 0:
        raise InputError(f"list {name!r} is empty")
    path = f"<list {name}>"
    if gene_column is None and header and not any(h.lower() in _HEADER_WORDS for h in header):
        _refuse_numbers_as_ids(df, header[0], path)
    if len(header) == 1:
        return list_from_ids(df.iloc[:, 0].tolist(), name)
    # pandas' missing values (NaN, None, a nullable column's <NA>) are all the missing token
    columns = [[("" if v is None else "NA" if v is pd.NA else repr(v)
                 if isinstance(v, float) else str(v)) for v in df.iloc[:, i].tolist()]
               for i in range(df.shape[1])]  # fmt: skip
    columns = [[("NA" if c == "nan" else c) for c in col] for col in columns]
    return _from_columns(
        header, columns, (), name, path, ListSpec(path), gene_column=gene_column,
        column=column, direction=direction, mageck_side=mageck_side or "neg",
    )  # fmt: skip


@checked_keywords
def read_ranked_lists(
    spec: str | ListSpec,
    *,
    gene_column: str | None = None,
    column: str | None = None,
    direction: str | None = None,
    mageck_side: str | None = "neg",
) -> list[RankedGeneList]:
    """Read the list(s) of one file (a GMT file gives one list per gene set).

    Parameters
    ----------
    spec : str, path-like or ListSpec
        ``[NAME=]FILE[:COLUMN[:asc|desc|abs]]`` (see the module docstring).
    gene_column : str, optional
        Column of the gene ids (default: recognised by name, else the first column).
    column, direction : str, optional
        Score column and direction for tables whose spec names none.
    mageck_side : {"neg", "pos"} or None, default "neg"
        Side of a MAGeCK gene summary: negative (depletion) or positive selection.

    Returns
    -------
    list of RankedGeneList

    Raises
    ------
    InputError
        Missing/empty/unreadable file, no gene ids, a non-numeric score.
    ParameterError
        Unknown column, a direction that cannot be guessed, a bad direction or side.
    """
    if not isinstance(spec, ListSpec):
        check_path_argument(spec, "read_ranked_lists")
        spec = parse_list_spec(os.fspath(spec))
    check_column_names(gene_column=gene_column, column=column)
    path = display_name(spec.path)
    if direction is not None and direction not in DIRECTIONS:
        raise ParameterError(f"direction must be one of {', '.join(DIRECTIONS)}, got {direction!r}")
    mageck_side = mageck_side or "neg"
    if mageck_side not in MAGECK_SIDES:
        raise ParameterError(f"MAGeCK side must be neg or pos, got {mageck_side!r}")
    name = spec.name or _stem(spec.path)
    lower = path.lower().removesuffix(".gz")
    if lower.endswith(".gmt"):
        if spec.column or spec.direction:
            raise ParameterError("a GMT file has no score columns; give just the file", path=path)
        lists = _read_gmt(spec.path)
        return named_lists(lists, spec.name) if spec.name else lists
    raw = read_bytes(spec.path)
    text = raw.decode("utf-8")
    lines = [(i + 1, ln.strip()) for i, ln in enumerate(text.split("\n"))]
    lines = [(i, ln) for i, ln in lines if ln and not ln.startswith("#")]
    if not lines:
        raise InputError("the list is empty (only blank or comment lines)", path=path)
    if lower.endswith(".rnk"):
        return [_read_rnk(spec.path, name, raw, spec)]
    # a header whose first name is empty (R's write.table(..., col.names = NA, quote = FALSE):
    # "\tpvalue") starts with its delimiter, which strip() took away
    first = text.split("\n")[lines[0][0] - 1].lstrip(" ")
    if not is_delimited(lines[0][1]) and not (first[:1] in ("\t", ",", ";") and first.strip()):
        if spec.column or spec.direction:
            raise ParameterError(
                "a one-gene-per-line list has no columns; its order is the ranking", path=path
            )
        return [_read_plain(path, name, lines)]
    return [
        _read_table(
            spec.path,
            name,
            raw,
            spec,
            gene_column=gene_column,
            column=column,
            direction=direction,
            mageck_side=mageck_side,
        )  # fmt: skip
    ]


def named_lists(lists: list[RankedGeneList], name: str) -> list[RankedGeneList]:
    """A file's lists given as ``NAME=FILE``: its one list named NAME, or each of its several
    gene sets ``NAME.SET`` (two GMT files may hold sets of one name)."""
    from dataclasses import replace

    if len(lists) == 1:
        return [replace(lists[0], name=name)]
    return [replace(lst, name=f"{name}.{lst.name}") for lst in lists]
