"""One robust way to open every text table kofs reads.

* :func:`read_bytes` / :func:`open_text` — a path or ``"-"`` (stdin); gzip is recognised by its
  magic bytes, not by the extension; a UTF-8 byte-order mark is dropped and CRLF / CR line ends
  become LF. Missing, empty, binary, truncated-gzip or non-UTF-8 files raise
  :class:`~kofs.errors.InputError` naming the file.
* :func:`scan_table` — finds the header, sniffs the delimiter (tab or comma), checks that every
  row has as many fields as the header (naming the first ragged line) and records the file line
  of every data row, so readers can point at ``file:line``.
* :func:`quick_scan` — the same for a file that needs none of the scan's edits, from its header
  and first row only; its parser checks the other rows and falls back to :func:`scan_table`
  (:class:`RowsNotChecked`).
* :func:`read_table` — a :class:`pandas.DataFrame` of stripped strings built on the scan.

A header one field shorter than every data row (R's ``write.table`` layout) gets an empty name
for its first column. Trailing delimiters (empty fields at the end of data rows, of the header
or of both) are dropped, so they never shift the columns.
"""

from __future__ import annotations

import csv
import gzip
import io
import logging
import os
import re
import sys
import weakref
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from kofs.errors import InputError, ParameterError
from kofs.io._fsops import check_path_argument, refuse_special_input

if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger(__name__)

__all__ = [
    "MISSING_TOKENS",
    "RowsNotChecked",
    "TextTable",
    "display_name",
    "is_delimited",
    "is_number",
    "open_text",
    "quick_scan",
    "read_bytes",
    "read_table",
    "scan_table",
    "sniff_delimiter",
]

#: Cell texts that mean "missing value" (after stripping spaces).
MISSING_TOKENS = ("", "NA", "N/A", "NaN", "nan", "NAN", "null", "NULL", "None", "#N/A")

_GZIP_MAGIC = b"\x1f\x8b"
_BOM = b"\xef\xbb\xbf"
_SEP_NAMES = {"\t": "tab", ",": "comma", ";": "semicolon"}


def display_name(path: str | os.PathLike) -> str:
    """How a path is named in messages (``"<stdin>"`` for ``"-"``); a
    :class:`~kofs.errors.ParameterError` for what is not a path (``None``, a DataFrame)."""
    check_path_argument(path, "path")
    p = os.fspath(path)
    return "<stdin>" if p == "-" else p


#: The standard-input streams already read (a second input given as ``-`` would find them
#: empty: it is refused with the reason instead).
_STDIN_READ: weakref.WeakSet[Any] = weakref.WeakSet()


def _raw(path: str | os.PathLike) -> bytes:
    p = os.fspath(path)
    if p == "-":
        stream = getattr(sys.stdin, "buffer", sys.stdin)
        if stream is not None:
            if stream in _STDIN_READ:
                raise InputError(
                    "standard input can be read only once, and another input given as - has "
                    "read it; save this one to a file and give its path",
                    path=display_name(p),
                )
            _STDIN_READ.add(stream)
        data = stream.read()
        return data.encode("utf-8") if isinstance(data, str) else data
    refuse_special_input(p, pipes=False)  # a pipe is read once, here; a device never ends
    try:
        with open(p, "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        raise InputError("file not found; check the path", path=p) from None
    except IsADirectoryError:
        if any(n.endswith(("matrix.mtx", "matrix.mtx.gz")) for n in os.listdir(p)):
            raise InputError(
                "is a 10x folder (matrix.mtx, features, barcodes), where a text table (CSV/TSV) "
                "is read: give a table here (single-cell data is read as the EXPRESSION of kofs "
                "rank and run only)",
                path=p,
            ) from None
        raise InputError("is a directory, expected a file", path=p) from None
    except PermissionError:
        raise InputError("permission denied; make the file readable", path=p) from None
    except OSError as exc:
        raise InputError(f"cannot be read ({exc.strerror})", path=p) from None


def _utf16_kind(raw: bytes) -> str | None:
    """``"utf-16"`` (with a byte-order mark), ``"utf-16-le"``/``"-be"`` (text whose every other
    byte is NUL, as Excel's "Unicode text" without a mark), else None."""
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    head = raw[:4096]
    if len(head) >= 8 and len(head) % 2 == 0:
        even, odd = head[0::2], head[1::2]
        if odd.count(0) == len(odd) and even.count(0) == 0:
            return "utf-16-le"
        if even.count(0) == len(even) and odd.count(0) == 0:
            return "utf-16-be"
    return None


#: Control characters that no text table holds (tab, line feed and carriage return aside).
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def _from_utf16(raw: bytes, name: str) -> bytes:
    """UTF-16 text (Excel "Unicode text", PowerShell output) re-encoded as UTF-8. Without a
    byte-order mark only text is taken for UTF-16: bytes whose every other one is NUL but that
    decode to control characters are left as they are (a binary file, refused as such)."""
    kind = _utf16_kind(raw)
    if kind is None:
        return raw
    try:
        text = raw.decode(kind)
    except UnicodeDecodeError as exc:
        raise InputError(
            f"looks like UTF-16 text but cannot be decoded ({exc.reason}); save it as UTF-8",
            path=name,
        ) from None
    if kind != "utf-16" and _CONTROL.search(text):
        return raw
    log.info("%s: decoded from %s", name, kind.upper())
    return text.encode("utf-8")


_SPREADSHEET_SUFFIXES = (".xlsx", ".xlsm", ".xls", ".ods", ".numbers")
_OLE2 = b"\xd0\xcf\x11\xe0"  # the old binary .xls


def spreadsheet_hint(name: str, head: bytes = b"") -> str | None:
    """The message for a spreadsheet given where a text table is read (named .xlsx, .xls,
    .ods, ..., or an old binary .xls by its magic bytes), else None."""
    if name.lower().endswith(_SPREADSHEET_SUFFIXES) or head.startswith(_OLE2):
        return (
            "is a spreadsheet (Excel, LibreOffice), not a text table: export the sheet as "
            "TSV or CSV (File > Save As > Text, tab-delimited, or CSV) and give that file"
        )
    return None


#: Magic bytes of the compressions kofs does not read (it reads plain and gzip text).
_OTHER_COMPRESSIONS = (
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
    (b"PK\x03\x04", "zip"),
)


def not_gzip_message(name: str, head: bytes) -> str:
    """The message for a file named .gz whose first bytes ``head`` are no gzip data."""
    other = compression_hint(name, head)  # "drop the .gz suffix" would not read it
    if other:
        return f"is named .gz but {other}"
    return (
        f"is named .gz but is not gzip-compressed (starts with {head[:8]!r}); compress it with "
        "gzip or drop the .gz suffix"
    )


def compression_hint(name: str, head: bytes) -> str | None:
    """The message for a file compressed in a way kofs does not read (by its magic bytes; a
    zip named as a spreadsheet is left to :func:`spreadsheet_hint`), else None."""
    for magic, kind in _OTHER_COMPRESSIONS:
        if head.startswith(magic) and not (kind == "zip" and spreadsheet_hint(name)):
            what = "a zip archive" if kind == "zip" else f"{kind}-compressed"
            undo = "extract the file from it" if kind == "zip" else "decompress it"
            return f"is {what}; kofs reads plain or gzip-compressed text: {undo} (or gzip it)"
    return None


#: First bytes of the binary formats a user may give for a text table.
_HDF5 = b"\x89HDF\r\n\x1a\n"


def binary_format_hint(name: str, raw: bytes, *, gzipped: bool = False) -> str | None:
    """The message for a binary data format given where a text table is read (by the content
    ``raw``, decompressed when it was ``gzipped``, or an .npz's name), else None: an HDF5 file
    (an AnnData or 10x file misnamed or gzipped, a loom file), Parquet, NumPy's .npy/.npz."""
    lower = name.lower()
    head = raw[:8]
    if head.startswith(_HDF5) and gzipped:
        return (
            "is a gzip-compressed HDF5 file (an AnnData .h5ad or a 10x .h5?): decompress it "
            "(gunzip) and give it named .h5ad or .h5"
        )
    if head.startswith(_HDF5):
        if lower.endswith((".h5ad", ".h5", ".hdf5")):  # single-cell data where a table is read
            return (
                "is an HDF5 file (an AnnData or 10x matrix), where a text table (CSV/TSV) is "
                "read: give a table here (single-cell data is read as the EXPRESSION of kofs "
                "rank and run only)"
            )
        if lower.endswith((".loom", ".loom.gz")):
            return (
                "is a loom file, which kofs does not read: convert it to an AnnData .h5ad "
                "(anndata.io.read_loom(path).write_h5ad(...)) and give that"
            )
        return (
            "is an HDF5 file, not a text table: give an AnnData file named .h5ad or a 10x "
            "matrix named .h5"
        )
    if head.startswith(b"PAR1") and raw.endswith(b"PAR1") and b"\x00" in raw:  # not a gene
        return (
            "is a Parquet file, which kofs does not read: write the table as TSV or CSV "
            "(pandas: df.to_csv(path, sep='\\t'))"
        )
    if head.startswith(b"\x93NUMPY") or (lower.endswith(".npz") and head.startswith(b"PK")):
        return (
            "is a NumPy array file (.npy/.npz), which has no gene or sample ids: write the "
            "matrix as an AnnData .h5ad (with var_names and obs_names) or as a TSV with ids"
        )
    return None


def _gunzip(raw: bytes) -> bytes:
    """gzip data decompressed by ISA-L (2-3x zlib's speed: 0.17 s instead of 0.40 s for the
    49 MB of a 271 x 47,192 matrix), every member of a multi-member or BGZF file; a failure is
    decompressed again by :mod:`gzip`, whose exceptions name what is wrong."""
    from isal import igzip

    try:
        return igzip.decompress(raw)
    except Exception:  # any failure: the standard module says which one
        return gzip.decompress(raw)


def not_utf8(raw: bytes, exc: UnicodeDecodeError, name: str | os.PathLike) -> InputError:
    """The one-line error for bytes that are not UTF-8: the first bad byte and its line."""
    return InputError(
        f"is not UTF-8 text (byte 0x{raw[exc.start]:02x}); save it as UTF-8",
        path=name,
        line=raw.count(b"\n", 0, exc.start) + 1,
    )


def read_bytes(path: str | os.PathLike) -> bytes:
    """The decompressed, validated UTF-8 content of ``path`` as bytes.

    Line ends are normalised to ``\\n`` and a byte-order mark is removed; UTF-16 text (with a
    byte-order mark, or recognised by its NUL bytes) is re-encoded as UTF-8. The content is
    guaranteed to decode as UTF-8 and to contain no NUL byte.

    Raises
    ------
    InputError
        The file is missing, empty, not gzip although named ``.gz``, a truncated or corrupt
        gzip, binary, or not UTF-8 text.
    """
    name = display_name(path)
    raw = _raw(path)
    gzipped = raw.startswith(_GZIP_MAGIC)
    if gzipped:
        try:
            raw = _gunzip(raw)
        except EOFError:
            raise InputError(
                "gzip file is truncated (incomplete download or copy?); fetch it again", path=name
            ) from None
        except (OSError, zlib.error) as exc:
            raise InputError(
                f"corrupt gzip data ({exc}); fetch the file again", path=name
            ) from None
    elif name.lower().endswith(".gz"):
        raise InputError(not_gzip_message(name, raw[:8]), path=name)
    binary = binary_format_hint(name, raw, gzipped=gzipped)
    if binary:
        raise InputError(binary, path=name)
    raw = _from_utf16(raw, name)
    if raw.startswith(_BOM):
        raw = raw[len(_BOM) :]
    if not raw.strip():
        raise InputError("file is empty", path=name)
    compressed = compression_hint(name, raw[:8])
    if compressed:
        raise InputError(compressed, path=name)
    if b"\x00" in raw:
        hint = spreadsheet_hint(name, raw[:8])
        raise InputError(
            hint or "is a binary file, not a text table (it contains NUL bytes)", path=name
        )
    try:
        if not raw.isascii():
            raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise not_utf8(raw, exc, name) from None
    if b"\r" in raw:
        raw = raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    return raw


def open_text(path: str | os.PathLike) -> io.StringIO:
    """Open a text file (path or ``"-"``; gzip allowed) as a text stream of validated UTF-8.

    The whole file is read and checked (see :func:`read_bytes`) before the stream is returned,
    so iteration never fails half-way. Use as a context manager or iterate its lines.
    """
    return io.StringIO(read_bytes(path).decode("utf-8"))


def is_number(text: str) -> bool:
    """Whether ``text`` (a table cell) reads as a number."""
    try:
        float(text.strip().strip('"'))
    except ValueError:
        return False
    return True


def unquote(text: str) -> str:
    """A field without the double quotes around it (``"TP53"`` -> ``TP53``; ``""`` inside is
    one quote), as a CSV reader reads it: the one-id-per-line files that R's ``write.csv`` of
    one column and spreadsheets write quote every id."""
    t = text.strip()
    if len(t) >= 2 and t[0] == t[-1] == '"':
        return t[1:-1].replace('""', '"').strip()
    return t


def is_delimited(line: str) -> bool:
    """Whether ``line`` holds a delimiter :func:`sniff_delimiter` reads (tab, comma,
    semicolon): a table's header, not a line of one gene id."""
    return any(sep in line for sep in _SEP_NAMES)


def sniff_delimiter(header: str, path: str | os.PathLike | None = None) -> str:
    """Tab or comma: whichever occurs more in the header line; a header with neither but with
    semicolons: semicolon; else by extension (comma for ``.csv``), else tab."""
    tabs, commas = header.count("\t"), header.count(",")
    if tabs or commas:
        return "\t" if tabs >= commas else ","
    if header.count(";"):
        return ";"  # European spreadsheets' CSV (decimal commas)
    name = "" if path is None else os.fspath(path).lower()
    if name.endswith(".gz"):
        name = name[:-3]
    return "," if name.endswith(".csv") else "\t"


class RowsNotChecked(ValueError):
    """A row of a table whose rows were not checked (:func:`quick_scan`) has another length
    than the header: scan it with :func:`scan_table`, which names the line."""


@dataclass(frozen=True)
class TextTable:
    """A scanned delimited text table.

    Attributes
    ----------
    path : str
        Name for messages (``"<stdin>"`` for ``"-"``).
    data : bytes
        Normalised UTF-8 content; blank and comment lines are empty.
    sep : str
        ``"\\t"`` or ``","``.
    header : tuple of str
        Stripped column names.
    header_line : int
        1-based line number of the header.
    line_numbers : ndarray of int
        1-based file line of every data row, in order.
    longest_line : int
        Length in bytes of the longest line (0: not measured).
    checked : bool
        Whether every row was checked (:func:`scan_table`); a :func:`quick_scan` checks the
        header and the first data row only.
    row_names : bool
        Whether the header was one field shorter than the rows (R's ``write.table`` layout):
        its first name, empty, was added by the reader (not an empty name in the file).
    """

    path: str
    data: bytes
    sep: str
    header: tuple[str, ...]
    header_line: int
    line_numbers: np.ndarray
    longest_line: int = 0
    checked: bool = True
    row_names: bool = False

    @property
    def n_rows(self) -> int:
        return len(self.line_numbers)

    def body_start(self) -> int:
        """Byte offset of the first line after the header (of the first line without one)."""
        pos = 0
        for _ in range(self.header_line):
            pos = self.data.index(b"\n", pos) + 1
        return pos

    def head(self, n_rows: int, n_cols: int) -> list[list[str]]:
        """The first ``n_cols`` fields of the first ``n_rows`` data rows, as written (quotes
        removed, not stripped): one list per column."""
        data, pos, rows = self.data, self.body_start(), []
        while len(rows) < n_rows and pos < len(data):
            end = data.find(b"\n", pos)
            end = len(data) if end < 0 else end
            if end > pos:
                line = data[pos:end]
                rows.append(_split_fields(line, self.sep, b'"' in line, n_cols))
                if len(rows[-1]) < n_cols:
                    raise RowsNotChecked(f"line of {len(rows[-1])} fields")
            pos = end + 1
        return [[r[k] for r in rows] for k in range(n_cols)]

    def cell(self, row: int, column: int) -> str:
        """The text of one cell (0-based data row and column; quotes removed)."""
        data, pos = self.data, 0
        for _ in range(int(self.line_numbers[row]) - 1):
            pos = data.index(b"\n", pos) + 1
        end = data.find(b"\n", pos)
        line = data[pos : len(data) if end < 0 else end]
        return _split_fields(line, self.sep, b'"' in line)[column]

    def frame(self) -> pd.DataFrame:
        """The data rows as strings (columns named by position ``0..k-1``; no cell becomes
        NaN)."""
        import pandas as pd

        try:
            return pd.read_csv(
                io.BytesIO(self.data),
                sep=self.sep,
                header=None,
                names=list(range(len(self.header))),
                skiprows=self.header_line,
                dtype=str,
                keep_default_na=False,
                na_filter=False,
                skip_blank_lines=True,
                engine="c",
                encoding="utf-8",
            )
        except pd.errors.ParserError as exc:
            detail = (str(exc).strip().splitlines() or ["parse error"])[0]
            raise InputError(
                f'malformed table ({detail}); check for an unclosed quote (") or a damaged line',
                path=self.path,
            ) from None


def _split_fields(line: bytes, sep: str, quoted: bool, limit: int | None = None) -> list[str]:
    """The fields of one line (the first ``limit`` when given)."""
    text = line.decode("utf-8")
    if not quoted:
        return text.split(sep) if limit is None else text.split(sep, limit)[:limit]
    fields = next(csv.reader([text], delimiter=sep))
    return fields if limit is None else fields[:limit]


def _trailing_delimiters(lines, rows, counts, head, sep, quoted, name):
    """Undo trailing delimiters (empty last fields) that would shift columns.

    The real width ``w`` is the header's length without its trailing empty names. Data rows
    longer than ``w`` lose their trailing *empty* fields (tabs or commas at the end of data
    lines, of the header, or of both; one or several). The edit is kept only when it leaves
    every row ``w`` fields long, or every row ``w + 1`` long with a header without trailing
    empty names (R's ``write.table`` layout, which the caller then reads); otherwise nothing
    changes and the caller reports the ragged row.

    ``lines`` is edited in place. Returns (header, n_fields, counts, edited).
    """
    n = len(head)
    w = n
    while w > 1 and head[w - 1] == "":
        w -= 1
    longer = [k for k, c in enumerate(counts) if c > w]
    if not longer:
        if w < n:
            log.info("%s: the header ends with delimiters the data rows lack; ignored", name)
        return head[:w], w, counts, False
    bsep = sep.encode("utf-8")
    new_lines, new_counts = {}, list(counts)
    for k in longer:
        parts = lines[rows[k]].rsplit(bsep, counts[k] - w)
        t = 0  # trailing empty fields
        while t < len(parts) - 1 and not parts[-1 - t].replace(b'"', b"").strip():
            t += 1
        if t:
            new_lines[k] = bsep.join(parts[: len(parts) - t])
            new_counts[k] = counts[k] - t
    if not new_lines:
        return head, n, counts, False
    widths = set(new_counts)
    if widths != {w} and not (widths == {w + 1} and w == n):
        return head, n, counts, False
    for k, line in new_lines.items():
        lines[rows[k]] = line
    log.info(
        "%s: %d data rows end with empty fields (trailing delimiters); ignored",
        name,
        len(new_lines),
    )
    return head[:w], w, new_counts, True


#: The bytes of a row that holds nothing: whitespace, delimiters, quotes of empty fields.
_EMPTY_ROW = b' \t\r\n,;"'


def scan_table(
    path: str | os.PathLike,
    *,
    sep: str | None = None,
    comment: str | None = None,
    header: bool = True,
    unique_columns: bool = True,
    data: bytes | None = None,
) -> TextTable:
    """Read and check a delimited text table (see the module docstring).

    Parameters
    ----------
    path : str or path-like
        File path or ``"-"`` for stdin.
    sep : {"\\t", ",", ";", None}
        Delimiter; sniffed from the header line when None.
    comment : str, optional
        Lines starting with this character are skipped (e.g. ``"#"``).
    header : bool, default True
        Whether the first row names the columns; without one the columns are named
        ``"1"``, ``"2"``, ...
    unique_columns : bool, default True
        Raise on repeated column names.
    data : bytes, optional
        Content already obtained with :func:`read_bytes` (e.g. from stdin, which can be read
        only once); ``path`` then only names the file.

    Raises
    ------
    InputError
        Unreadable file (see :func:`read_bytes`), no data rows, ragged rows, duplicate column
        names.
    """
    name = display_name(path)
    if data is None:
        data = read_bytes(path)
    lines = data.split(b"\n")
    cbyte = comment.encode("utf-8") if comment else None
    keep = []
    cleaned = False
    for i, line in enumerate(lines):
        # a row of delimiters only (",,,,": the empty rows a spreadsheet exports) is blank
        if not line.strip(_EMPTY_ROW) or (cbyte is not None and line.lstrip().startswith(cbyte)):
            if line:
                lines[i] = b""
                cleaned = True
            continue
        keep.append(i)
    if not keep:
        raise InputError("contains no table rows (only blank or comment lines)", path=name)
    directive = re.fullmatch(rb"\s*sep=([\t,;|])\s*", lines[keep[0]])
    if directive and len(keep) > 1:  # Excel's "sep=," line before the header: the delimiter
        sep = sep or directive[1].decode("ascii")
        lines[keep.pop(0)] = b""
        cleaned = True
    first = keep[0]
    head_text = lines[first].decode("utf-8")
    if sep is None:
        sep = sniff_delimiter(head_text, path)
    quoted = b'"' in data
    bsep = sep.encode("utf-8")
    rows = keep[1:] if header else keep
    if header and not rows:
        raise InputError("has a header line but no data rows", path=name, line=first + 1)
    counts = [
        len(_split_fields(lines[i], sep, True)) if quoted and b'"' in lines[i] else
        lines[i].count(bsep) + 1
        for i in rows
    ]  # fmt: skip
    head = [f.strip() for f in _split_fields(lines[first], sep, quoted)] if header else []
    n = len(head) if header else counts[0]
    if header:
        head, n, counts, stripped = _trailing_delimiters(
            lines, rows, counts, head, sep, quoted, name
        )
        cleaned = cleaned or stripped
    row_names = bool(header and counts and len(set(counts)) == 1 and counts[0] == n + 1)
    if row_names:
        head = ["", *head]  # R write.table layout: row names without a header field
        n += 1
        log.debug("%s: header has no name for the first column", name)
    for i, c in zip(rows, counts, strict=True):
        if c != n:
            expected = "the header" if header else f"line {rows[0] + 1}"
            raise InputError(
                f"has {c} fields but {expected} has {n}; check the delimiter "
                f"({_SEP_NAMES.get(sep, repr(sep))}) and that no row is cut or has extra fields",
                path=name,
                line=i + 1,
            )
    if not header:
        head = [str(k + 1) for k in range(n)]
    if unique_columns:
        seen: dict[str, int] = {}
        for k, col in enumerate(head):
            if col in seen:
                raise InputError(
                    f"column name {col!r} appears twice (columns {seen[col] + 1} and {k + 1}); "
                    "rename one of them",
                    path=name,
                    line=first + 1,
                )
            seen[col] = k
    if cleaned:
        data = b"\n".join(lines)
    return TextTable(
        path=name,
        data=data,
        sep=sep,
        header=tuple(head),
        header_line=first + 1 if header else first,
        line_numbers=np.asarray([i + 1 for i in rows], dtype=np.int64),
        longest_line=max(map(len, lines)),
        row_names=row_names,
    )


def quick_scan(path: str | os.PathLike, data: bytes) -> TextTable | None:
    """:func:`scan_table` without its pass over every line, for a file that needs none of its
    edits: no blank line, header and first data row not ending with an empty field (trailing
    delimiters), the first data row as long as the header (or one field longer: R's layout).
    None otherwise. The rows are not checked: a parser that finds a row of another length must
    fall back to :func:`scan_table` (``checked`` is False), which names the line.
    """
    name = display_name(path)
    end = data.find(b"\n")
    if end <= 0 or data.startswith(b"\n") or b"\n\n" in data:
        return None
    header_line = data[:end]
    if not header_line.strip():
        return None
    sep = sniff_delimiter(header_line.decode("utf-8"), path)
    bsep = sep.encode("utf-8")
    quoted = b'"' in data
    head = [f.strip() for f in _split_fields(header_line, sep, quoted)]
    stop = data.find(b"\n", end + 1)
    first = data[end + 1 : len(data) if stop < 0 else stop]
    if not first.strip() or not head[-1]:
        return None
    if not first.rsplit(bsep, 1)[-1].replace(b'"', b"").strip():
        return None  # an empty last field: a trailing delimiter is undone by scan_table
    n_fields = len(_split_fields(first, sep, b'"' in first))
    row_names = n_fields == len(head) + 1
    if row_names:
        head = ["", *head]  # R write.table layout: row names without a header field
    elif n_fields != len(head):
        return None
    n_rows = data.count(b"\n", end + 1) + (0 if data.endswith(b"\n") else 1)
    return TextTable(
        path=name,
        data=data,
        sep=sep,
        header=tuple(head),
        header_line=1,
        line_numbers=np.arange(2, 2 + n_rows, dtype=np.int64),
        checked=False,
        row_names=row_names,
    )


def read_table(
    path: str | os.PathLike | TextTable,
    *,
    sep: str | None = None,
    comment: str | None = None,
    header: bool = True,
    data: bytes | None = None,
) -> pd.DataFrame:
    """Read a CSV/TSV (gzip ok, ``"-"`` for stdin) into a DataFrame of stripped strings.

    Missing cells are empty strings (nothing is turned into NaN). ``df.attrs`` holds
    ``"path"`` (name for messages), ``"lines"`` (tuple: 1-based file line of each row) and
    ``"row_names"`` (:attr:`TextTable.row_names`).

    Parameters
    ----------
    path : str, path-like or TextTable
    sep, comment, header, data
        As in :func:`scan_table`.

    Raises
    ------
    InputError
        See :func:`scan_table`.
    """
    table = (
        path
        if isinstance(path, TextTable)
        else scan_table(path, sep=sep, comment=comment, header=header, data=data)
    )
    df = table.frame()
    if len(df) != table.n_rows:  # the lines were counted field by field, pandas read them
        raise InputError(
            f"malformed table: its {table.n_rows} lines of data read as {len(df)} rows; check "
            'for an unclosed quote (") or a quoted field that spans lines',
            path=table.path,
        )
    df.columns = list(table.header)
    for col in df.columns:
        df[col] = df[col].str.strip()
    df.attrs["path"] = table.path
    df.attrs["lines"] = tuple(table.line_numbers.tolist())
    df.attrs["row_names"] = table.row_names
    return df


def check_column_names(**columns: object) -> None:
    """Column options name a column by its header text: a number (``gene_column=0``) or
    anything else is a :class:`~kofs.errors.ParameterError`, not an AttributeError on it."""
    for option, value in columns.items():
        if value is not None and not isinstance(value, str):
            raise ParameterError(
                f"{option}: name the column by its header text, not a {type(value).__name__} "
                f"({value!r})"
            )
