"""Gene lists (known relevant genes, ...): one id per line, or a column of a CSV/TSV."""

from __future__ import annotations

import difflib
import logging
import os

from kofs.errors import InputError, ParameterError, checked_keywords
from kofs.io._table import (
    MISSING_TOKENS,
    check_column_names,
    display_name,
    is_delimited,
    is_number,
    read_bytes,
    read_table,
    sniff_delimiter,
    unquote,
)

log = logging.getLogger(__name__)

__all__ = ["GeneList", "read_gene_list"]


class GeneList(list):
    """A list of gene ids that remembers its file (``source``), so that later errors about
    the list (e.g. no overlap with the matrix) can name it."""

    source: str | None = None


#: First lines of a one-column file that are taken as a header, not as a gene.
_HEADER_WORDS = {
    "gene", "genes", "symbol", "gene_symbol", "genesymbol", "hugo_symbol", "entrez", "entrez_id",
    "entrezid", "gene_id", "geneid", "ensembl", "ensembl_id", "ensembl_gene_id", "id", "name",
    "gene_name",
}  # fmt: skip


def _dedup(ids: list[str], name: str) -> GeneList:
    out = GeneList(dict.fromkeys(ids))
    out.source = name
    if len(out) < len(ids):
        # said, as the other readers say theirs (a list meant to hold distinct ids may not)
        n = len(ids) - len(out)
        log.warning("%s: %d repeated gene id%s merged (first kept)", name, n, "s" * (n != 1))
    if not out:
        raise InputError("contains no gene ids (only blank/comment lines or NA)", path=name)
    return out


@checked_keywords
def read_gene_list(path: str | os.PathLike, *, column: str | None = None) -> list[str]:
    """Read a list of gene ids.

    Formats (detected from the first non-comment line): one id per line, optionally under a
    header word such as ``gene`` or ``symbol``; or a CSV/TSV with a header, of which the first
    column (or ``column``) is used. Lines starting with ``#`` and blank lines are skipped; in
    one-id-per-line files a trailing ``# comment`` is removed too. Empty/NA cells are skipped.

    Parameters
    ----------
    path : str or path-like
        File (gzip ok) or ``"-"`` for stdin.
    column : str, optional
        Column to read (case-insensitive), with a did-you-mean error when unknown.

    Returns
    -------
    GeneList
        A list of the ids in file order, duplicates removed (first kept, with a warning that
        counts them); ``.source`` is the file's display name.

    Raises
    ------
    InputError
        Unreadable or empty list; a line with several whitespace-separated words.
    ParameterError
        Unknown ``column``.
    """
    check_column_names(column=column)
    name = display_name(path)
    raw = read_bytes(path)
    text = raw.decode("utf-8")
    lines = [(i + 1, ln.strip()) for i, ln in enumerate(text.split("\n"))]
    lines = [(i, ln) for i, ln in lines if ln and not ln.startswith("#")]
    if not lines:
        raise InputError("contains no gene ids (only blank or comment lines)", path=name)
    if is_delimited(lines[0][1]):
        cells = lines[0][1].strip().split(sniff_delimiter(lines[0][1], path))
        # a first row whose other cells are all numbers is data (a ranked list's gene and
        # score, as in a .rnk), not a header: its gene was lost as a column name
        headerless = len(cells) > 1 and all(is_number(c) for c in cells[1:])
        if headerless and column is not None:
            raise ParameterError(
                f"column {column!r}: the file has no header line (its first row is "
                f"{lines[0][1].strip()!r}); its gene ids are read from the first column",
                path=name,
            )
        df = read_table(path, comment="#", data=raw, header=not headerless)
        header = [str(h) for h in df.columns]
        idx = 0
        if column is not None:
            lower = [h.lower() for h in header]
            if column.lower() not in lower:
                close = difflib.get_close_matches(column, header, n=1, cutoff=0.5)
                hint = f"did you mean {close[0]!r}? " if close else ""
                raise ParameterError(
                    f"column {column!r} not found; {hint}columns are "
                    f"{', '.join(map(repr, header))}",
                    path=name,
                )
            idx = lower.index(column.lower())
        values = [v for v in df.iloc[:, idx].tolist() if v not in MISSING_TOKENS]
        return _dedup(values, name)
    ids = []
    for k, (lineno, ln) in enumerate(lines):
        ln = unquote(ln.split(" #")[0].split("\t#")[0])
        if len(ln.split()) > 1:
            raise InputError(
                f"{ln!r} has several words; write one gene id per line", path=name, line=lineno
            )
        if k == 0 and (ln.lower() in _HEADER_WORDS or (column and ln.lower() == column.lower())):
            log.info("%s: first line %r taken as a header", name, ln)
            continue
        if ln not in MISSING_TOKENS:
            ids.append(ln)
    if column is not None and lines[0][1].lower() != column.lower():
        raise ParameterError(
            f"column {column!r} not found: the file is a plain list whose first "
            f"line is {lines[0][1]!r}",
            path=name,
        )
    return _dedup(ids, name)
