"""Read an expression matrix (CSV/TSV, gzip ok, ``"-"`` for stdin) into an :class:`Expression`.

Layout: a header line, then leading identifier columns, then one numeric column per sample
(genes in rows) -- or one row per sample and one numeric column per gene (genes in columns).
The first identifier column holds the row ids unless ``gene_column`` names another one; further
identifier columns (symbol, entrez_id, probe_id, ...) are kept in ``Expression.annotations`` so
that :func:`kofs.io.ids.match_gene_ids` can match knowledge sources on them. See
``docs/formats.md`` for every policy.
"""

from __future__ import annotations

import difflib
import logging
import os
import re
from collections.abc import Iterable, Sequence

import numpy as np

from kofs.errors import InputError, KofsError, ParameterError, checked_keywords
from kofs.io._fsops import check_api_options
from kofs.io._matrix_formats import plain_table
from kofs.io._numeric_table import NUMBER, BadCell, read_columns
from kofs.io._table import (
    MISSING_TOKENS,
    RowsNotChecked,
    TextTable,
    check_column_names,
    display_name,
    quick_scan,
    read_bytes,
    scan_table,
)
from kofs.io.ids import spreadsheet_date
from kofs.types import Expression

log = logging.getLogger(__name__)

__all__ = [
    "read_expression",
    "guess_namespace",
    "DECIMALS",
    "DUPLICATE_POLICIES",
    "MISSING_POLICIES",
]

DUPLICATE_POLICIES = ("error", "first", "mean", "max-variance")
MISSING_POLICIES = ("error", "drop-gene", "impute-mean")
GENES_IN = ("rows", "columns")
#: Largest magnitude accepted for a value; beyond it (and for +-Inf) reading fails.
HUGE = 1e300
_SNIFF_ROWS = 1000
# what a number looks like when sniffing the identifier columns (any Unicode digit, so that a
# column of Arabic-Indic digits is read as numbers and its first cell refused with its line)
_NUMBER_LIKE = re.compile(NUMBER.replace("[0-9]", r"\d"), re.IGNORECASE)
_NUMBER_COMMA = re.compile(NUMBER.replace("[0-9]", r"\d").replace("\\.", ","))
# numbers written in a format kofs does not read by default (named in the error message)
_DECIMAL_COMMA = re.compile(r"[+-]?(?:\d+,\d*|,\d+)(?:[eE][+-]?\d+)?")
_THOUSANDS = re.compile(
    r"[+-]?\d{1,3}(?:(?:,\d{3})+(?:\.\d+)?|(?:\.\d{3})+,\d+|(?:\.\d{3}){2,}"
    r"|(?:[ '\u00a0\u202f]\d{3})+(?:[.,]\d+)?)"
)
_PERCENT = re.compile(r"[+-]?(?:\d+[.,]?\d*|[.,]\d+)\s*%")
DECIMALS = (".", ",")

# normalised column name -> canonical annotation key understood by kofs.io.ids
_CANONICAL = {
    **dict.fromkeys(
        ["entrez", "entrezid", "entrezgene", "entrezgeneid", "ncbigeneid", "ncbigene"], "entrez"
    ),
    **dict.fromkeys(
        ["symbol", "genesymbol", "hgncsymbol", "hugosymbol", "genename", "symbols"], "symbol"
    ),
    **dict.fromkeys(["ensembl", "ensemblid", "ensemblgeneid", "ensemblgene", "ensg"], "ensembl"),
    **dict.fromkeys(["probe", "probeid", "probeset", "probesetid", "idref"], "probe"),
}
# names of identifier/annotation columns even when their values look numeric
_ID_NAMES = set(_CANONICAL) | {
    "id", "gene", "geneid", "genes", "name", "description", "genetitle", "title", "chr", "chrom",
    "chromosome", "start", "end", "stop", "strand", "length", "genelength", "biotype",
}  # fmt: skip
_GENE_WORDS = {"gene", "genes", "geneid"}
# names of columns of gene identifiers, which never hold fractional numbers (measurements)
_GENE_ID_NAMES = set(_CANONICAL) | _GENE_WORDS | {"id", "name"}
_SAMPLE_WORDS = {"sample", "sampleid", "samples", "samplename", "cell", "cellid", "barcode"}
_ANNOTATION_KEYS = ("entrez", "symbol", "ensembl")
# ids that name genes (Ensembl, Affymetrix/Illumina/Agilent probes, RefSeq, HGNC-like symbols of
# at least two letters) or samples (GEO, TCGA, SRA, cell barcodes, S1/P01/patient_3/ctrl2 ...)
_GENE_ID = re.compile(
    r"ENS[A-Z]*[GTP]\d+(\.\d+)?|\d+(_[a-z])?_at|AFFX-.+|ILMN_\d+|A_\d+_P\d+|[NX][MR]_\d+(\.\d+)?"
    r"|(?i:gene|probe|feature|transcript|protein)[-_. ]?\d+"
    r"|(?=(?:[A-Za-z0-9]*[A-Za-z]){2})[A-Z][A-Za-z0-9]*(?:[-.][A-Za-z0-9]+)*"
)
_SAMPLE_ID = re.compile(
    r"GSM\d+|TCGA-.+|[SDE]RR\d+|[ACGTN]{8,}(-\d+)?"
    r"|(?i:s|smp|sample|p|pt|pat|patient|case|ctrl|control|ctl|donor|subject|rep|replicate"
    r"|cell|mouse|rat|animal|tumou?r|normal|healthy|day|d|t|time)[-_. ]?\d+[A-Za-z]?",
)
# the longer axis is taken for the genes without a warning only when it is clearly longer
_SURE_LONG, _SURE_RATIO = 200, 4
_CONTENT_GUESSED = {"id", "gene", "geneid", "genes", "name"}
_DIGITS = re.compile(r"\d+")
_ENSEMBL_GENE = re.compile(r"ENS[A-Z]*G\d+(\.\d+)?")


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def guess_namespace(ids: Sequence[str], column: str | None = None) -> str:
    """Identifier type of ``ids``: from a telling column name, else ``"entrez"`` if every id is
    all digits, ``"ensembl"`` if every id is an Ensembl gene id, else ``"symbol"``."""
    canon = _CANONICAL.get(_norm(column)) if column else None
    if canon:
        return canon
    s = [str(i) for i in ids]
    if s and all(_DIGITS.fullmatch(i) for i in s):
        return "entrez"
    if s and all(_ENSEMBL_GENE.fullmatch(i) for i in s):
        return "ensembl"
    return "symbol"


def _choice(value, allowed: Iterable, what: str) -> None:
    allowed = tuple(allowed)
    if value not in allowed:
        raise ParameterError(f"{what}={value!r} is not one of {', '.join(map(repr, allowed))}")


def _find_column(header: Sequence[str], wanted: str, *, path: str, option: str) -> int:
    if wanted in header:
        return header.index(wanted)
    lower = [h.lower() for h in header]
    if lower.count(wanted.lower()) == 1:
        return lower.index(wanted.lower())
    close = difflib.get_close_matches(wanted, [h for h in header if h], n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    shown = ", ".join(repr(h) for h in header[:8]) + (", ..." if len(header) > 8 else "")
    raise ParameterError(
        f"{option} {wanted!r} is not a column; {hint}columns are {shown}", path=path
    )


def _number_like(text: str) -> bool:
    """A number, also in a format needing an option (``1,5``, ``1,234``, ``5%``)."""
    return any(rx.fullmatch(text) for rx in (_NUMBER_LIKE, _NUMBER_COMMA, _THOUSANDS, _PERCENT))


def _mostly_text(values: Sequence[str]) -> bool:
    v = [t for t in (x.strip() for x in values) if t not in MISSING_TOKENS]
    if not v:
        return False
    return sum(not _number_like(t) for t in v) / len(v) > 0.5


def _number_hint(text: str, decimal: str) -> str:
    """What to do about a cell that is not a number in the expected format."""
    t = text.strip()
    if any(c.isdigit() and not c.isascii() for c in t):
        return "write numbers with the digits 0-9 (this one has other digits)"
    if _PERCENT.fullmatch(t):
        return "percentages are not read: write plain numbers (12% as 0.12 or 12)"
    if decimal == "." and _DECIMAL_COMMA.fullmatch(t):
        return (
            (
                "the comma is a decimal comma or a thousands separator: "
                if _THOUSANDS.fullmatch(t)
                else "the file uses a decimal comma: "
            )
            + "read decimal commas with --decimal , (the delimiter must then be a tab or a "
            "semicolon), write thousands without separators"
        )
    if _THOUSANDS.fullmatch(t):
        return (
            "the number has thousands separators, which are not read: write numbers without "
            "them (1234.5, not 1,234.5 or 1.234,5)"
        )
    if decimal == "," and re.fullmatch(NUMBER, t, flags=re.IGNORECASE):
        return "a decimal point in a file read with --decimal ,: use one decimal mark throughout"
    return (
        "use a dot as decimal separator (or --decimal , for decimal commas) and NA for "
        "missing values"
    )


def _measurements(values: Sequence[str]) -> str | None:
    """The first value of a column of numbers that are not all integers (a sample's
    measurements, not gene ids such as Entrez's), else None."""
    v = [t for t in (x.strip() for x in values) if t not in MISSING_TOKENS]
    if not v or _mostly_text(v):
        return None
    try:
        numbers = [float(t) for t in v]
    except ValueError:
        return None
    return v[0] if any(not x.is_integer() for x in numbers) else None


def _id_column_count(table: TextTable, gene_idx: int | None) -> int:
    n_cols = len(table.header)
    head = table.head(_SNIFF_ROWS, min(n_cols, max(64, (gene_idx or 0) + 1)))
    if gene_idx is not None and (first := _measurements(head[gene_idx])) is not None:
        raise ParameterError(
            f"gene_column {table.header[gene_idx]!r} holds numbers such as {first} (a "
            "sample's values?), not gene ids; name the column of gene ids",
            path=table.path,
        )
    k = 1
    while k < n_cols:
        if k == len(head):
            head = table.head(_SNIFF_ROWS, n_cols)
        name = table.header[k]
        if _norm(name) in _GENE_ID_NAMES and (first := _measurements(head[k])) is not None:
            raise InputError(
                f"column {name!r} is named like gene identifiers but holds numbers such as "
                f"{first} (a sample's values?)"
                + (
                    ": the header has one name fewer than the rows, so each name stands one "
                    "column to the right of its values (R's write.table layout, row names "
                    "first); add the missing name to the header"
                    if table.row_names
                    else "; check the header"
                ),
                path=table.path,
                line=table.header_line,
            )
        if (gene_idx is not None and k <= gene_idx) or _norm(name) in _ID_NAMES:
            k += 1
        elif _mostly_text(head[k]):
            k += 1
        else:
            break
    if k == n_cols:
        raise InputError(
            f"no numeric columns found: all {k} columns look like identifiers; an expression "
            "matrix needs one numeric column per sample (or per gene)"
            + (
                "; check the delimiter: fields must be separated by tabs or commas"
                if k == 1
                else ""
            ),
            path=table.path,
        )
    return k


def _parse(
    table: TextTable, n_id: int, decimal: str = ".", threads: int | None = None
) -> tuple[list[list[str]], np.ndarray, tuple[int, int, str] | None]:
    """(identifier columns, values of shape (rows, numeric columns), the first cell beyond
    +-1e300 as (row, column, text) or None). The values are stored so that the samples x
    genes matrix of the likely orientation (genes along the longer axis) is C-contiguous."""
    order = "F" if table.n_rows >= len(table.header) - n_id else "C"
    try:
        ids, values = read_columns(table, n_id, decimal=decimal, threads=threads, order=order)
    except BadCell as bad:
        raise InputError(
            f"non-numeric value {bad.text!r} where a number is expected; "
            + _number_hint(bad.text, decimal),
            path=table.path,
            line=int(table.line_numbers[bad.row]),
            column=table.header[bad.column] or bad.column + 1,
        ) from None
    # +-Inf and |x| > 1e300 (their squares overflow); fmax/fmin skip NaN and need no temporary
    huge = None
    if np.fmax.reduce(values, axis=None) > HUGE or np.fmin.reduce(values, axis=None) < -HUGE:
        row, col = np.argwhere((values > HUGE) | (values < -HUGE))[0]  # first in file order
        huge = (int(row), n_id + int(col), table.cell(int(row), n_id + int(col)).strip())
    return ids, values, huge


def _scan_and_parse(path, data, fmt, fixed_ids, gene_column, decimal, threads):
    """(table, number of id columns, index of the gene column or None, parsed columns): a
    quick scan first (plain files), the full scan when the parser meets a row the quick scan
    did not check (or a blank row)."""
    name = display_name(path)
    quick = quick_scan(path, data) if fmt is None else None
    for table in (quick, None):
        if table is None:
            table = scan_table(path, unique_columns=False, data=data)
        try:
            if decimal == "," and table.sep == "," and b'"' not in table.data:
                raise ParameterError(
                    "--decimal , needs a tab- or semicolon-delimited file (or "
                    'quoted numbers such as "1,5"), but this one is comma-delimited',
                    path=name,
                )
            gene_idx = None
            if gene_column is not None:
                gene_idx = _find_column(table.header, gene_column, path=name, option="gene_column")
            if fixed_ids is not None and (gene_idx is None or gene_idx < fixed_ids):
                n_id = fixed_ids  # GCT / series matrix: the format says which columns are metadata
            else:
                n_id = _id_column_count(table, gene_idx)
            parsed = _parse(table, n_id, decimal, threads)
        except (RowsNotChecked, KofsError):
            if table.checked:
                raise
            continue  # the full scan reports the file's first problem (a ragged row first)
        if table.checked or not _blank_rows(parsed[0], parsed[1]):
            return table, n_id, gene_idx, parsed
    raise AssertionError("unreachable")  # the full scan's table is checked


def _blank_rows(ids: list[list[str]], values: np.ndarray) -> bool:
    """Whether a row has no id and no value (a line of delimiters only, which
    :func:`~kofs.io._table.scan_table` skips as blank)."""
    if not ids:
        return False
    empty = np.ones(values.shape[0], dtype=bool)
    for col in ids:
        empty &= np.fromiter((not v.strip() for v in col), dtype=bool, count=len(col))
    return bool(empty.any()) and bool(np.isnan(values[empty]).all(axis=1).any())


class _Layout:
    """Gene-major view of the parsed table with file positions for messages."""

    def __init__(self, line_numbers: np.ndarray, genes_in: str, n_id: int) -> None:
        self.line_numbers, self.genes_in, self.n_id = line_numbers, genes_in, n_id

    def gene_where(self, i: int) -> str:
        if self.genes_in == "rows":
            return f"line {self.line_numbers[i]}"
        return f"column {self.n_id + i + 1} of the header"

    def first_cell(self, mask: np.ndarray, positions: np.ndarray, genes, samples):
        """(gene, sample, line, column) of the first True cell of a genes x samples mask in file
        order; ``positions`` (increasing) are the genes' original rows/columns."""
        if self.genes_in == "rows":
            g, s = np.argwhere(mask)[0]
            return int(g), int(s), int(self.line_numbers[positions[g]]), samples[s]
        s, g = np.argwhere(mask.T)[0]
        return int(g), int(s), int(self.line_numbers[s]), genes[g]


def _orientation(genes_in, gene_column, sample_ids, row_ids, col_ids, path, id_names) -> str:
    if genes_in is not None:
        if genes_in == "columns" and gene_column is not None:
            raise ParameterError(
                "--gene-column only applies when genes are rows; drop it or use --genes-in rows",
                path=path,
            )
        return genes_in
    if gene_column is not None:
        return "rows"
    if sample_ids is not None:
        wanted = {str(s) for s in sample_ids}
        in_cols = sum(c in wanted for c in col_ids)
        in_rows = sum(r in wanted for r in row_ids)
        if in_cols != in_rows:
            log.info(
                "%s: samples are the %s (they match the labels)",
                path,
                "columns" if in_cols > in_rows else "rows",
            )
            return "rows" if in_cols > in_rows else "columns"
        # aligning the labels reports the mismatch; no warning line before that error
        log.info("%s: no axis matches the labels' sample ids; guessing the orientation", path)
    first = _norm(id_names[0]) if id_names else ""
    if any(_norm(h) in _CANONICAL or _norm(h) in _GENE_WORDS for h in id_names):
        log.info("%s: genes are the rows (named by the id column %r)", path, id_names[0])
        return "rows"
    if first in _SAMPLE_WORDS:
        log.info("%s: samples are the rows (id column %r)", path, id_names[0])
        return "columns"
    vote = _id_vote(row_ids) - _id_vote(col_ids)
    if abs(vote) >= 0.5:
        genes_in = "rows" if vote > 0 else "columns"
        log.info(
            "%s: genes are the %s (their ids look like gene ids, the others like sample ids)",
            path,
            genes_in,
        )
        return genes_in
    genes_in = "rows" if len(row_ids) >= len(col_ids) else "columns"
    long, short = max(len(row_ids), len(col_ids)), min(len(row_ids), len(col_ids))
    if long >= _SURE_LONG and long >= _SURE_RATIO * short:
        log.info("%s: genes are the %s (the longer axis)", path, genes_in)
    else:
        log.warning(
            "%s: guessed that genes are the %s (%d %s x %d %s: the longer axis); if not, "
            "use --genes-in %s",
            path,
            genes_in,
            len(row_ids),
            "rows",
            len(col_ids),
            "columns",
            "columns" if genes_in == "rows" else "rows",
        )
    return genes_in


def _id_vote(ids: Sequence[str]) -> float:
    """How gene-like (+1) or sample-like (-1) a list of ids looks, on average."""
    ids = [str(i).strip() for i in ids[:_SNIFF_ROWS] if str(i).strip()]
    if not ids:
        return 0.0
    sample = sum(bool(_SAMPLE_ID.fullmatch(i)) for i in ids)
    gene = sum(bool(_GENE_ID.fullmatch(i)) for i in ids if not _SAMPLE_ID.fullmatch(i))
    return (gene - sample) / len(ids)


def _check_samples(samples: list[str], layout: _Layout, path: str) -> None:
    seen: dict[str, int] = {}
    for j, s in enumerate(samples):
        where = (
            f"line {layout.line_numbers[j]}"
            if layout.genes_in == "columns"
            else f"column {layout.n_id + j + 1} of the header"
        )
        if s == "":
            raise InputError(f"sample id missing at {where}; every sample needs an id", path=path)
        if s in seen:
            raise InputError(
                f"sample id {s!r} appears twice ({seen[s]} and {where}); sample ids must be unique",
                path=path,
            )
        seen[s] = where


def _apply_missing(G, genes, ann, positions, samples, layout, missing, path):
    nan = np.isnan(G)
    if not nan.any():
        return G, genes, ann, positions
    empty = np.flatnonzero(nan.all(axis=0))
    if empty.size and G.shape[0] > 1:
        s = int(empty[0])
        where = (
            f"column {layout.n_id + s + 1} of the header"
            if layout.genes_in == "rows"
            else f"line {layout.line_numbers[s]}"
        )
        raise InputError(
            f"sample {samples[s]!r} ({where}) has no value for any gene ({empty.size} such "
            "samples); the columns may be shifted or the sample is empty: remove it from the file",
            path=path,
        )
    if missing == "error":
        g, s, line, col = layout.first_cell(nan, positions, genes, samples)
        raise InputError(
            f"missing value (empty/NA) for gene {genes[g]!r}, sample {samples[s]!r} "
            f"({int(nan.sum())} missing in all); fill it in, or use --missing-values drop-gene "
            "or --missing-values impute-mean",
            path=path,
            line=line,
            column=col,
        )
    per_gene = nan.sum(axis=1)
    drop = per_gene == G.shape[1] if missing == "impute-mean" else per_gene > 0
    if missing == "impute-mean":
        fill = np.flatnonzero(nan.any(axis=1) & ~drop)
        if fill.size:
            means = np.nanmean(G[fill], axis=1)
            rows, cols = np.nonzero(nan[fill])
            G = G.copy()
            G[fill[rows], cols] = means[rows]
            log.warning(
                "%s: imputed %d missing values of %d genes with the gene's mean",
                path,
                int(nan[fill].sum()),
                fill.size,
            )
    if drop.any():
        log.warning(
            "%s: dropped %d genes with %s values (e.g. %s)",
            path,
            int(drop.sum()),
            "only missing" if missing == "impute-mean" else "missing",
            ", ".join(genes[i] for i in np.flatnonzero(drop)[:3]),
        )
        keep = np.flatnonzero(~drop)
        G, genes, positions = G[keep], [genes[i] for i in keep], positions[keep]
        ann = {k: [v[i] for i in keep] for k, v in ann.items()}
    return G, genes, ann, positions


def _apply_duplicates(G, genes, ann, positions, layout, duplicates, path):
    index: dict[str, int] = {}
    codes = np.fromiter(
        (index.setdefault(g, len(index)) for g in genes), dtype=np.int64, count=len(genes)
    )
    if len(index) == len(genes):
        return G, genes, ann
    dup = np.ones(len(genes), dtype=bool)
    dup[np.unique(codes, return_index=True)[1]] = False  # later occurrences of an id
    if duplicates == "error":
        j = int(np.flatnonzero(dup)[0])
        i = int(np.flatnonzero(codes == codes[j])[0])
        n_ids = len(set(codes[dup].tolist()))
        raise InputError(
            f"gene id {genes[j]!r} appears twice ({layout.gene_where(positions[i])} and "
            f"{layout.gene_where(positions[j])}; {n_ids} repeated ids in all); use "
            "--duplicate-genes first, mean or max-variance",
            path=path,
        )
    n = G.shape[0]
    if duplicates == "mean":
        import scipy.sparse as sp

        ind = sp.csr_matrix((np.ones(n), (codes, np.arange(n))), shape=(len(index), n))
        counts = np.bincount(codes).astype(np.float64)
        out = np.asarray(ind @ G) / counts[:, None]
        rep = np.flatnonzero(~dup)
    else:
        key = -np.var(G, axis=1) if duplicates == "max-variance" else np.zeros(n)
        order = np.lexsort((np.arange(n), key, codes))
        first = np.r_[True, codes[order][1:] != codes[order][:-1]]
        rep = order[first]  # one row per code, in code (= first occurrence) order
        out = G[rep]
    log.warning("%s: %d repeated gene ids merged (duplicates=%r)", path, int(dup.sum()), duplicates)
    return out, [genes[i] for i in rep], {k: [v[i] for i in rep] for k, v in ann.items()}


def _check_id_names(names: Sequence[str], path: str, line: int) -> None:
    """Identifier columns have distinct names: a name given twice (``symbol`` over both the
    symbols and the Entrez ids) would make one column stand for the other."""
    seen: dict[str, int] = {}
    for k, n in enumerate(names):
        if n and _norm(n) in seen:
            raise InputError(
                f"identifier column name {n!r} appears twice (columns {seen[_norm(n)] + 1} and "
                f"{k + 1} of the header); name each column after what it holds "
                "(e.g. symbol, entrez_id)",
                path=path,
                line=line,
            )
        seen.setdefault(_norm(n), k)


def _annotations(ids: list[list[str]], header, gene_idx: int, n_id: int) -> dict[str, list[str]]:
    ann: dict[str, list[str]] = {}
    canon: dict[str, list[str]] = {}
    for k in range(n_id):
        if k == gene_idx:
            continue
        name = header[k] or f"column{k + 1}"
        values = [v.strip() for v in ids[k]]
        ann[name] = values
        key = _CANONICAL.get(_norm(name))
        key = key if key in _ANNOTATION_KEYS else None
        if key is None and _norm(name) in _CONTENT_GUESSED:
            present = [v for v in values if v]
            guess = guess_namespace(present) if present else "symbol"
            key = guess if guess != "symbol" else None
        if key and key not in canon:
            canon[key] = values
    for key, values in canon.items():
        ann.setdefault(key, values)
    return ann


def _warn_numeric_header(names: list[str], shown: str) -> None:
    """Warn when every column name of the header is a number written with a decimal point or
    an exponent (``7.868``): a file without a header line, whose first row of values was taken
    for the ids (names like ``0.5`` or ``1e-3``, doses or times, are possible, so not an error)."""
    if not names or not all(
        ("." in n or "e" in n.lower()) and _NUMBER_LIKE.fullmatch(n) for n in names
    ):
        return
    log.warning(
        "%s: every column name of the header is a number (%s): if the file has no header line, "
        "its first row of values was read as the ids; add a header line",
        shown,
        ", ".join(names[:3]) + (", ..." if len(names) > 3 else ""),
    )


@checked_keywords
def read_expression(
    path: str | os.PathLike,
    *,
    genes_in: str | None = None,
    gene_column: str | None = None,
    sample_ids: Sequence[str] | None = None,
    duplicates: str = "error",
    missing: str = "error",
    decimal: str = ".",
    threads: int | None = None,
) -> Expression:
    """Read an expression matrix into an :class:`~kofs.types.Expression` (samples x genes).

    Parameters
    ----------
    path : str or path-like
        CSV or TSV file, optionally gzip-compressed, or ``"-"`` for stdin.
    genes_in : {None, "rows", "columns"}
        Axis of the genes. None: ``"rows"`` when ``gene_column`` is given; else the axis whose
        ids do *not* match ``sample_ids``; else by the name of the first id column (gene-like:
        rows; ``sample``/``sample_id``/``cell``/``barcode``: columns); else the longer axis
        (rows on a tie).
    gene_column : str, optional
        Identifier column holding the gene ids (default: the first column). The other leading
        identifier columns become ``annotations``.
    sample_ids : sequence of str, optional
        Sample ids of a labels file, used only to decide the orientation.
    duplicates : {"error", "first", "mean", "max-variance"}, default "error"
        Repeated gene ids: fail naming both positions; keep the first; average them; keep the
        one of largest variance across samples.
    missing : {"error", "drop-gene", "impute-mean"}, default "error"
        Empty/NA cells: fail naming the cell; drop genes with any missing value; replace by the
        gene's mean over its other samples (genes missing everywhere are dropped).
    decimal : {".", ","}, default "."
        Decimal mark of the numbers. With ``","`` (``1,23``) the delimiter must be a tab or a
        semicolon. Thousands separators and ``%`` are never read (the error says so).
    threads : int, optional
        1: parse in the calling thread; None (default) or more: pyarrow's thread pool (one
        thread per core).

    Returns
    -------
    Expression
        ``values`` of shape (n_samples, n_genes), float64; ``namespace`` guessed from the gene
        ids (see :func:`guess_namespace`); ``source`` the path.

    Raises
    ------
    InputError
        Unreadable or malformed file, non-numeric/+-Inf/|x| > 1e300 values, missing values or
        duplicate gene ids under the ``"error"`` policies, duplicate sample ids, fewer than
        2 samples or no gene.
    ParameterError
        Unknown policy or orientation, unknown ``gene_column``.
    """
    check_column_names(gene_column=gene_column)
    check_api_options("read_expression", threads=threads)
    if sample_ids is not None and (
        isinstance(sample_ids, (str, bytes)) or not isinstance(sample_ids, Iterable)
    ):
        raise ParameterError(
            "read_expression: sample_ids must be a sequence of sample ids (e.g. "
            f"kofs.read_labels(...).samples) or None, got {sample_ids!r:.40}"
        )
    if genes_in is not None:
        _choice(genes_in, GENES_IN, "genes_in")
    _choice(duplicates, DUPLICATE_POLICIES, "duplicates")
    _choice(missing, MISSING_POLICIES, "missing")
    _choice(decimal, DECIMALS, "decimal")
    name = display_name(path)
    data, fmt, fixed_ids = plain_table(read_bytes(path), name)
    if fmt is not None and genes_in is None:
        genes_in = "rows"  # GCT and series matrices put genes in rows
    table, n_id, gene_idx, (ids, values, huge) = _scan_and_parse(
        path, data, fmt, fixed_ids, gene_column, decimal, threads
    )
    del data
    header, line_numbers, header_line = table.header, table.line_numbers, table.header_line
    del table  # the raw text is no longer needed
    row_col = 0 if gene_idx is None else gene_idx
    row_ids = [v.strip() for v in ids[row_col]]
    col_ids = list(header[n_id:])
    if fmt is None:
        _warn_numeric_header(col_ids, name)
    genes_in = _orientation(
        genes_in, gene_column, sample_ids, row_ids, col_ids, name, header[:n_id]
    )
    layout = _Layout(line_numbers, genes_in, n_id)
    if genes_in == "rows":
        _check_id_names(header[:n_id], name, header_line)
        G, genes, samples = values, row_ids, col_ids
        ann = _annotations(ids, header, row_col, n_id)
        id_name = header[row_col]
    else:
        G, genes, samples = values.T, col_ids, row_ids
        ann, id_name = {}, None
        if n_id > 1:
            log.warning(
                "%s: genes are columns; ignoring the extra id columns %s",
                name,
                ", ".join(repr(h) for h in header[1:n_id]),
            )
    del values
    _check_samples(samples, layout, name)
    if len(samples) < 2:
        raise InputError(
            f"has {len(samples)} sample(s); at least 2 are needed (wrong orientation? "
            "set genes_in / --genes-in)",
            path=name,
        )
    if huge is not None:
        row, col, text = huge
        raise InputError(
            f"value {text} for gene {genes[row if genes_in == 'rows' else col - n_id]!r} is "
            "infinite or beyond +-1e300; check the file (log-transform or fix overflowed values)",
            path=name,
            line=int(line_numbers[row]),
            column=header[col] or col + 1,
        )

    positions = np.arange(len(genes))
    no_id = np.array([g in MISSING_TOKENS for g in genes], dtype=bool)
    if no_id.any():
        log.warning(
            "%s: dropped %d genes without an id (first at %s)",
            name,
            int(no_id.sum()),
            layout.gene_where(int(np.flatnonzero(no_id)[0])),
        )
        positions = np.flatnonzero(~no_id)
        G, genes = G[positions], [genes[i] for i in positions]
        ann = {k: [v[i] for i in positions] for k, v in ann.items()}
    dates = [i for i, g in enumerate(genes) if spreadsheet_date(g)]
    if dates:
        log.warning(
            "%s: %d gene id(s) look like dates a spreadsheet made of gene symbols (%r at %s: "
            "SEPTIN1/SEPT1, MARCHF1/MARCH1, DELEC1/DEC1 ...); they match no knowledge source: "
            "fix them where the file was exported, importing the column as text",
            name, len(dates), genes[dates[0]], layout.gene_where(int(positions[dates[0]])),
        )  # fmt: skip
    G, genes, ann, positions = _apply_missing(
        G, genes, ann, positions, samples, layout, missing, name
    )
    G, genes, ann = _apply_duplicates(G, genes, ann, positions, layout, duplicates, name)
    if len(genes) < 1:
        raise InputError("has no usable gene left after the missing-value policy", path=name)
    namespace = guess_namespace(genes, id_name)
    log.info("%s: %d samples x %d genes (%s ids)", name, len(samples), len(genes), namespace)
    return Expression(G.T, genes, samples, namespace=namespace, annotations=ann, source=name)
