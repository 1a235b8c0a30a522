"""The numbers of a scanned text table, parsed in one multi-threaded pass by pyarrow.

:func:`read_columns` turns a :class:`~kofs.io._table.TextTable` into its leading text columns
and a float64 array of the other columns. pyarrow's CSV reader parses the numbers (fast_float:
every decimal becomes the double nearest to it, as Python's ``float`` and pandas'
``float_precision="round_trip"`` give), splitting the file into blocks parsed by several
threads.

**Grammar.** After stripping spaces and tabs, a numeric cell is either a missing-value token
(:data:`~kofs.io._table.MISSING_TOKENS`, e.g. ``""``, ``NA``, ``NaN``), read as NaN, or a
number of :data:`NUMBER` (ASCII digits only, ``.`` or ``,`` as decimal mark; ``inf``,
``infinity`` and ``nan`` in any case and with a sign; a ``nan`` is a missing value too).
Anything else raises :class:`BadCell` naming the first such cell in file order (row, then
column). The fast path accepts exactly this grammar except ``nan(...)`` forms, which it reads
as NaN: a NaN that is not a missing-value token sends the table through the strict path,
which checks every cell with the grammar (vectorised, RE2) and converts the cells itself.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kofs.io._table import MISSING_TOKENS, RowsNotChecked, TextTable

__all__ = ["NUMBER", "BadCell", "number_pattern", "read_columns"]

#: A number with a decimal point (case-insensitive; ASCII digits only).
NUMBER = r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|infinity|nan)"
#: A table with more columns than this is parsed as one block by one thread: pyarrow's cost
#: per (block, column) then outweighs what threads gain (47,193 columns x 271 rows, 49 MB:
#: 0.9 s as one block on one thread, 1.9 s on two threads, 10.5 s in blocks of 1 MB).
WIDE = 4096
#: Block of a multi-threaded parse (271 x 47,192 genes in rows: 2 MB blocks were faster than
#: 1, 4, 8 or 64 MB ones on 2 cores).
_BLOCK = 2 << 20
_BLANKS = " \t"


def number_pattern(decimal: str = ".") -> str:
    """:data:`NUMBER` with ``decimal`` as the decimal mark."""
    return NUMBER if decimal == "." else NUMBER.replace("\\.", decimal)


class BadCell(ValueError):
    """A numeric cell outside the grammar: ``row`` (0-based data row), ``column`` (0-based
    column of the table) and ``text`` (the cell without surrounding spaces and tabs)."""

    def __init__(self, row: int, column: int, text: str) -> None:
        super().__init__(f"row {row}, column {column}: {text!r}")
        self.row, self.column, self.text = row, column, text


def _options(
    table: TextTable, n_text: int, *, as_text: bool, decimal: str, threads, whole: bool = False
):
    import pyarrow as pa
    import pyarrow.csv as pacsv

    n_cols = len(table.header)
    names = [str(k) for k in range(n_cols)]
    wide = n_cols > WIDE
    block = len(table.data) + 1 if wide or whole else max(_BLOCK, 2 * table.longest_line + 2)
    read = pacsv.ReadOptions(
        column_names=names,
        block_size=min(block, 2**31 - 1),
        use_threads=not wide and (threads is None or threads > 1),
    )
    parse = pacsv.ParseOptions(
        delimiter=table.sep,
        quote_char='"',
        double_quote=True,
        escape_char=False,
        newlines_in_values=False,
        ignore_empty_lines=True,
    )
    convert = pacsv.ConvertOptions(
        column_types={
            name: pa.string() if as_text or k < n_text else pa.float64()
            for k, name in enumerate(names)
        },
        null_values=[] if as_text else list(MISSING_TOKENS),
        strings_can_be_null=not as_text,
        quoted_strings_can_be_null=not as_text,
        decimal_point=decimal,
    )
    return read, parse, convert


def _read(table: TextTable, n_text: int, **kw) -> Any:
    """The parsed table, or None when a numeric cell could not be converted."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    from kofs.errors import InputError

    body = pa.py_buffer(table.data)[table.body_start() :]
    for whole in (False, True):  # a line longer than a block: one block
        read, parse, convert = _options(table, n_text, whole=whole, **kw)
        try:
            return pacsv.read_csv(
                pa.BufferReader(body), read_options=read, parse_options=parse,
                convert_options=convert,
            )  # fmt: skip
        except pa.ArrowInvalid as exc:
            if "conversion error" in str(exc):
                return None
            if "straddl" in str(exc) and not whole:
                continue
            if not table.checked:
                raise RowsNotChecked(str(exc)) from None
            detail = (str(exc).strip().splitlines() or ["parse error"])[0]
            raise InputError(
                f'malformed table ({detail}); check for an unclosed quote (") or a damaged line',
                path=table.path,
            ) from None
    raise AssertionError("unreachable")


def _to_array(columns: Any, n_rows: int, order: str) -> np.ndarray:
    """float64 (n_rows, n_columns) of a table of float64 columns; nulls become NaN."""
    out = np.empty((n_rows, columns.num_columns), dtype=np.float64, order=order)
    if columns.num_columns == 0:
        return out
    pos = 0
    for batch in columns.to_batches():
        k = batch.num_rows
        out[pos : pos + k] = np.asarray(batch.to_tensor(null_to_nan=True, row_major=order == "C"))
        pos += k
    return out


def _strict(
    table: TextTable, n_text: int, *, decimal: str, threads, order: str
) -> tuple[list[list[str]], np.ndarray]:
    """Every cell read as text, the numeric ones checked against the grammar, then converted
    (the slow path)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    raw = _read(table, n_text, as_text=True, decimal=decimal, threads=threads)
    missing_tokens = set(MISSING_TOKENS)
    text = [
        ["" if v in missing_tokens else v for v in raw.column(k).to_pylist()] for k in range(n_text)
    ]
    tokens = pa.array(MISSING_TOKENS, type=pa.string())
    pattern = "^(?:" + number_pattern(decimal) + ")$"
    first: tuple[int, int, str] | None = None
    converted = []
    for k in range(n_text, raw.num_columns):
        cells = pc.utf8_trim(raw.column(k), characters=_BLANKS)
        missing = pc.is_in(cells, value_set=tokens)
        ok = pc.or_(missing, pc.match_substring_regex(cells, pattern, ignore_case=True))
        i = pc.index(ok, False).as_py()
        if i >= 0 and (first is None or i < first[0]):
            first = (i, k, str(cells[i].as_py()))
        if first is None:
            cells = pc.if_else(missing, pa.scalar(None, pa.string()), cells)
            if decimal != ".":
                cells = pc.replace_substring(cells, decimal, ".")
            converted.append(pc.cast(cells, pa.float64()))
    if first is not None:
        raise BadCell(*first)
    names = [str(j) for j in range(len(converted))]
    return text, _to_array(pa.table(converted, names=names), raw.num_rows, order)


def read_columns(
    table: TextTable,
    n_text: int,
    *,
    decimal: str = ".",
    threads: int | None = None,
    order: str = "C",
) -> tuple[list[list[str]], np.ndarray]:
    """The first ``n_text`` columns as text and the others as numbers.

    Parameters
    ----------
    table : TextTable
        A scanned table (:func:`kofs.io._table.scan_table`, or
        :func:`~kofs.io._table.quick_scan` whose rows the parser checks).
    n_text : int
        Number of leading text (identifier) columns.
    decimal : {".", ","}
        Decimal mark of the numbers.
    threads : int, optional
        1: parse in the calling thread; None or more: pyarrow's thread pool.
    order : {"C", "F"}
        Memory order of the returned array.

    Returns
    -------
    text : list of list of str
        One list per text column, cells as written (quotes removed, not stripped; a
        missing-value token is ``""``).
    values : ndarray of shape (n_rows, n_columns - n_text), float64
        NaN for missing-value tokens.

    Raises
    ------
    BadCell
        The first numeric cell outside the grammar, in file order.
    InputError
        The table cannot be parsed (an unclosed quote, a damaged line).
    RowsNotChecked
        A row of another length than the header in a table from
        :func:`~kofs.io._table.quick_scan`.
    """
    kw = {"decimal": decimal, "threads": threads}
    parsed = _read(table, n_text, as_text=False, **kw)
    if parsed is not None:
        text = [["" if v is None else v for v in parsed.column(k).to_pylist()]
                for k in range(n_text)]  # fmt: skip
        numbers = parsed.select(list(range(n_text, parsed.num_columns)))
        nulls = sum(c.null_count for c in numbers.columns)
        values = _to_array(numbers, parsed.num_rows, order)
        del parsed, numbers
        if int(np.count_nonzero(np.isnan(values))) == nulls:
            return text, values
        # a NaN written otherwise than as a missing-value token (-nan, nan(1)): check every cell
        del values
    return _strict(table, n_text, order=order, **kw)
