"""MatrixMarket coordinate files (the ``matrix.mtx`` of a 10x Genomics folder), validated in full.

The numbers are parsed by :func:`scipy.io.mmread` (fast_matrix_market: compiled, parallel,
exactly rounded), but only after a check of the whole file (a numba loop, or vectorised NumPy
without numba) has proved it well formed:
scipy's parser is not safe on damaged files. With scipy 1.17 it crashed the process (SIGSEGV) on
a value with trailing junk (``2.5`` in an integer file when it ended the file without a
newline; ``1)`` followed by binary bytes), and read ``2.5``, ``2x`` or ``1-2`` in an integer
file as a number. (A pandas-based parser, safe by itself, was 7x slower on real values and not
exactly rounded: measured on 4.8 million entries, 4.3 s against 0.6 s.)

The check streams the (decompressed) file once, in blocks of whole lines:

* the banner ``%%MatrixMarket matrix coordinate <field> <symmetry>`` (fields integer, real,
  double, pattern; symmetries general, symmetric), comment lines, and the size line;
* every non-blank body line holds exactly 3 tokens (2 for ``pattern``) separated by blanks;
* every token is a number of its kind: indices ``-?digits`` (at most 18 digits, no int64
  overflow); ``integer`` values the same; ``real`` values
  ``-?(digits[.digits]|.digits)([eE][+-]?digits)?`` (scipy refuses a leading ``+``).

A failure is one :class:`~kofs.errors.InputError` naming the file and the line; a truncated or
corrupt gzip stream is one too. After parsing, indices are checked against the declared size
and the number of entries against the declared count (scipy's own checks, turned into
InputErrors).
"""

from __future__ import annotations

import io
import os
import re
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from kofs._compute import numba_kernels
from kofs.errors import InputError, KofsError
from kofs.io._open import stream_bytes
from kofs.io._table import not_gzip_message

__all__ = ["read_coordinate"]

_FIELDS = ("integer", "real", "double", "pattern")
_SYMMETRIES = ("general", "symmetric")
#: Bytes read at once by the check (then completed to a whole line).
BLOCK = 1 << 22
#: Longest digit run of an index or integer value: 18 digits fit an int64.
MAX_DIGITS = 18

_DIGIT, _SIGN, _POINT, _EXP, _BLANK, _NEWLINE, _OTHER = range(7)
_CLASS = np.full(256, _OTHER, dtype=np.int8)
for _chars, _cls in (
    (b"0123456789", _DIGIT),
    (b"+-", _SIGN),
    (b".", _POINT),
    (b"eE", _EXP),
    (b" \t\r", _BLANK),
    (b"\n", _NEWLINE),
):
    _CLASS[np.frombuffer(_chars, dtype=np.uint8)] = _cls


def _header(fh, path: str) -> tuple[str, str, int, int, int, int]:
    """(field, symmetry, rows, columns, entries, lines of the header) from the banner, the
    comment lines and the size line."""
    banner = fh.readline().decode("latin-1").split()
    if len(banner) != 5 or banner[0].lower() != "%%matrixmarket" or banner[1].lower() != "matrix":
        raise InputError(
            "is not a MatrixMarket file: line 1 must read "
            "'%%MatrixMarket matrix coordinate <field> <symmetry>'",
            path=path,
            line=1,
        )
    layout, field, symmetry = (t.lower() for t in banner[2:])
    if layout != "coordinate":
        raise InputError(
            f"is a dense MatrixMarket {layout!r} file; 10x matrices are 'coordinate' (sparse)",
            path=path,
            line=1,
        )
    if field not in _FIELDS or symmetry not in _SYMMETRIES:
        raise InputError(
            f"MatrixMarket field {field!r} / symmetry {symmetry!r} not supported (fields: "
            f"{', '.join(_FIELDS)}; symmetries: {', '.join(_SYMMETRIES)})",
            path=path,
            line=1,
        )
    line_no = 1
    while True:
        line = fh.readline()
        line_no += 1
        if not line:
            raise InputError("ends before its size line (rows columns entries)", path=path)
        if line.startswith(b"%") or not line.strip():
            continue
        size = line.split()
        if len(size) != 3 or not all(t.isdigit() and len(t) <= MAX_DIGITS for t in size):
            raise InputError(
                f"size line must be three whole numbers (rows columns entries), got "
                f"{line.decode('latin-1').strip()[:80]!r}",
                path=path,
                line=line_no,
            )
        rows, cols, entries = (int(t) for t in size)
        return field, symmetry, rows, cols, entries, line_no


#: Kinds of problem of a body line, in the order they are reported within one line.
_BAD_BYTE, _BAD_TOKEN, _BAD_COUNT = 0, 1, 2
_MINUS = ord("-")


def _problem_numpy(arr: np.ndarray, width: int, real: bool) -> tuple[int, int, int, int] | None:
    """(line, kind, byte offset, detail) of the first ill-formed line of a block of whole body
    lines (detail: the token's place in its line, or the line's number of tokens), or None.
    Vectorised: token boundaries, then per token the counts and places of signs, points,
    exponent marks and digits."""
    cls = _CLASS[arr]
    newline = cls == _NEWLINE
    sep = (cls == _BLANK) | newline
    line_start = np.concatenate(([0], np.flatnonzero(newline) + 1))

    def line_of(offset: int) -> int:
        return int(np.searchsorted(line_start, offset, side="right")) - 1

    found: list[tuple[int, int, int, int]] = []
    other = np.flatnonzero(cls == _OTHER)
    if other.size:
        found.append((line_of(int(other[0])), _BAD_BYTE, int(other[0]), 0))
    start = ~sep & np.concatenate(([True], sep[:-1]))  # first byte of each token
    starts = np.flatnonzero(start)
    if starts.size:
        token = np.cumsum(start) - 1  # token number of each byte (valid where ~sep)
        tok_line = np.searchsorted(line_start, starts, side="right") - 1
        position = np.arange(starts.size) - np.searchsorted(tok_line, tok_line)
        per_line = np.bincount(tok_line)
        wrong = np.flatnonzero((per_line != 0) & (per_line != width))
        if wrong.size:
            at = int(starts[np.searchsorted(tok_line, wrong[0])])
            found.append((int(wrong[0]), _BAD_COUNT, at, int(per_line[wrong[0]])))

        def count(mask: np.ndarray) -> np.ndarray:
            return np.bincount(token[mask & ~sep], minlength=starts.size)

        is_point, is_exp, is_digit = cls == _POINT, cls == _EXP, cls == _DIGIT
        is_sign = cls == _SIGN
        marks_before = np.cumsum(is_exp) - is_exp  # exponent marks before each byte
        after_exp = ~sep & (marks_before - marks_before[starts][token] > 0)
        prev = np.concatenate(([_BLANK], cls[:-1]))
        nxt = np.concatenate((cls[1:], [_NEWLINE]))
        # signs: first byte of the token ('-' only) or right after the exponent mark, then a
        # digit or a point
        bad_sign = is_sign & ~((start & (arr == _MINUS)) | (prev == _EXP))
        bad_sign |= is_sign & ~((nxt == _DIGIT) | (nxt == _POINT))
        n_point, n_exp = count(is_point), count(is_exp)
        whole = (position < 2) | (not real)  # indices, and the values of an integer file
        bad = count(bad_sign) > 0
        bad |= whole & ((n_point > 0) | (n_exp > 0) | (count(is_digit) > MAX_DIGITS))
        bad |= (n_point > 1) | (n_exp > 1) | (count(is_point & after_exp) > 0)
        bad |= count(is_digit & ~after_exp) == 0  # a mantissa without digits
        bad |= (n_exp > 0) & (count(is_digit & after_exp) == 0)  # an exponent without digits
        first = np.flatnonzero(bad)
        if first.size:
            t = int(first[0])
            found.append((int(tok_line[t]), _BAD_TOKEN, int(starts[t]), int(position[t])))
    return min(found) if found else None


if numba_kernels.AVAILABLE:
    import numba

    @numba.njit(cache=True, nogil=True, inline="always")
    def _bad_token(arr, table, ts, te, whole):  # pragma: no cover
        # the token arr[ts:te] is not -?(D+.?D*|.D+)([eE][+-]?D+)? (whole: -?D{1,18})
        i = ts
        if arr[i] == _MINUS:
            i += 1
        digits = 0
        points = 0
        while i < te:
            c = table[arr[i]]
            if c == _DIGIT:
                digits += 1
            elif c == _POINT:
                points += 1
            else:
                break
            i += 1
        if digits == 0 or points > 1:
            return True
        if whole:
            return i != te or points > 0 or digits > MAX_DIGITS
        if i == te:
            return False
        if table[arr[i]] != _EXP:
            return True
        i += 1
        if i < te and table[arr[i]] == _SIGN:
            i += 1
        exp_digits = 0
        while i < te and table[arr[i]] == _DIGIT:
            exp_digits += 1
            i += 1
        return exp_digits == 0 or i != te

    @numba.njit(cache=True, nogil=True)
    def _problem_compiled(arr, table, width, real):  # pragma: no cover
        # the numpy version's contract, in one pass: a line's bad byte is found before its
        # tokens are judged (a bad byte comes first within a line)
        n = arr.shape[0]
        line = 0
        i = 0
        while i < n:
            j = i
            while j < n:
                c = table[arr[j]]
                if c == _NEWLINE:
                    break
                if c == _OTHER:
                    return line, _BAD_BYTE, j, 0
                j += 1
            tokens = 0
            first = -1
            k = i
            while k < j:
                if table[arr[k]] == _BLANK:
                    k += 1
                    continue
                ts = k
                while k < j and table[arr[k]] != _BLANK:
                    k += 1
                if first < 0:
                    first = ts
                if _bad_token(arr, table, ts, k, tokens < 2 or not real):
                    return line, _BAD_TOKEN, ts, tokens
                tokens += 1
            if tokens != 0 and tokens != width:
                return line, _BAD_COUNT, first, tokens
            line += 1
            i = j + 1
        return -1, 0, 0, 0


def _block_problem(arr: np.ndarray, field: str) -> tuple[int, str] | None:
    """The first ill-formed line of a block of whole body lines, as (byte offset, what is
    wrong), or None; compiled (numba) when available, else vectorised NumPy (same answer)."""
    width, real = (2 if field == "pattern" else 3), field in ("real", "double")
    if numba_kernels.AVAILABLE:
        line, kind, at, detail = _problem_compiled(arr, _CLASS, width, real)
        if line < 0:
            return None
    else:
        found = _problem_numpy(arr, width, real)
        if found is None:
            return None
        line, kind, at, detail = found
    if kind == _BAD_BYTE:
        byte = int(arr[at])
        shown = repr(chr(byte)) if 32 <= byte < 127 else f"byte 0x{byte:02x}"
        return at, f"{shown} cannot be part of a number"
    if kind == _BAD_COUNT:
        return at, f"an entry needs {width} numbers, this line has {detail}"
    token = arr[at : at + 40]
    blank = np.flatnonzero((_CLASS[token] == _BLANK) | (_CLASS[token] == _NEWLINE))
    text = bytes(token[: blank[0] if blank.size else token.size]).decode("latin-1")
    kind_text = "an index" if detail < 2 else f"a MatrixMarket {field} value"
    return at, f"{text!r} is not {kind_text}"


class _NewlineEnded(io.RawIOBase):
    """A byte stream with a final newline added when the file lacks one."""

    def __init__(self, raw) -> None:
        super().__init__()
        self._raw, self._last, self._done = raw, b"\n", False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        data = self._raw.read(len(buffer))
        if data:
            self._last = data[-1:]
        elif not self._done and self._last != b"\n":
            data, self._done = b"\n", True
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        if not self.closed:
            self._raw.close()
        super().close()


def _check(path: str) -> tuple[str, str, int, int, int, bool]:
    """Stream the file once and prove it well formed (see the module docstring); returns the
    header and whether the last byte is a newline."""
    with stream_bytes(path, what="MatrixMarket file") as fh:
        field, symmetry, n_rows, n_cols, entries, line_no = _header(fh, path)
        ends_with_newline = True
        while block := fh.read(BLOCK):
            block += fh.readline()  # whole lines only
            arr = np.frombuffer(block, dtype=np.uint8)
            found = _block_problem(arr, field)
            if found is not None:
                at, what = found
                line = line_no + 1 + int(np.count_nonzero(arr[:at] == 10))
                raise InputError(what, path=path, line=line)
            line_no += int(np.count_nonzero(arr == 10))
            ends_with_newline = block.endswith(b"\n")
    return field, symmetry, n_rows, n_cols, entries, ends_with_newline


def read_coordinate(
    path: str | os.PathLike,
    *,
    shape: tuple[int, int] | None = None,
    names: str = "",
    symmetric: bool = True,
) -> sp.coo_matrix:
    """The matrix of a MatrixMarket coordinate file (plain, gzip, bzip2 or zip), float64.

    ``shape``: the size the file must declare (``names`` says where it comes from, for the
    message), checked on its size line before any entry is read: a damaged size line can
    declare billions of rows, for which the reader would allocate. ``symmetric=False``: a file
    declared ``symmetric`` is refused (a genes x cells matrix is never one: its entries would
    be mirrored across the diagonal).

    Duplicated entries are kept (a CSR conversion sums them, as MatrixMarket readers do); a
    ``symmetric`` file is mirrored; a ``pattern`` file has 1 for every entry.

    Raises
    ------
    InputError
        A damaged or truncated file, a wrong banner or size line, an entry that is not well
        formed numbers, indices out of range, or a number of entries other than the declared
        one.
    """
    import scipy.io

    source = os.fspath(path)
    if not Path(source).is_file():
        raise InputError("MatrixMarket file not found", path=source)
    with open(source, "rb") as fh:
        head = fh.read(8)
    if source.lower().endswith(".gz") and not head.startswith(b"\x1f\x8b"):
        # as a table named .gz (10x barcodes, features); scipy said "Not a gzipped file (b'%%')"
        raise InputError(not_gzip_message(source, head), path=source)
    field, symmetry, n_rows, n_cols, entries, ends_with_newline = _check(source)
    if symmetry != "general" and not symmetric:
        raise InputError(
            f"is declared '{symmetry}' on its first line (its entries would be mirrored across "
            "the diagonal), which a genes x cells matrix cannot be: declare it 'general'",
            path=source,
            line=1,
        )
    if shape is not None and (n_rows, n_cols) != tuple(shape):
        raise InputError(
            f"matrix is {n_rows} x {n_cols} but {names or 'the size given'} "
            f"make{'s' if not names else ''} it {shape[0]} x {shape[1]}",
            path=source,
        )
    with open(source, "rb") as fh:
        magic = fh.read(2)
    plain = magic not in (b"\x1f\x8b", b"BZ", b"PK")
    # an entry takes at least 4 bytes ("1 1" and its line end; 6 with a value); deflate (gzip,
    # zip) packs at most 1032 bytes into one: a size line declaring more entries than the file
    # can hold is damage, which the reader would first allocate for (bzip2 packs too well)
    packing = 1 if plain else (1032 if magic != b"BZ" else None)
    least = 4 if field == "pattern" else 6
    size = os.path.getsize(source)
    if packing is not None and entries * least > size * packing:
        raise InputError(
            f"its size line declares {entries} entries, more than its {size} bytes can hold: "
            "the file is damaged or cut",
            path=source,
        )
    try:
        if plain and ends_with_newline:
            M = scipy.io.mmread(source)  # the parallel reader of the file itself
        else:
            with io.BufferedReader(_NewlineEnded(stream_bytes(source))) as fh:
                M = scipy.io.mmread(fh)
    except KofsError:
        raise
    except (ValueError, OSError, OverflowError) as exc:  # scipy's count and range checks
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        m = re.match(r"Line (\d+): (.*)", text)  # scipy counts the file's lines from 1
        raise InputError(
            m.group(2) if m else f"invalid MatrixMarket entries ({text})",
            path=source,
            line=int(m.group(1)) if m else None,
        ) from None
    M = sp.coo_matrix(M, dtype=np.float64)
    if M.shape != (n_rows, n_cols) or (symmetry == "general" and M.nnz != entries):
        raise InputError(
            f"declares {n_rows} x {n_cols} with {entries} entries, holds {M.shape[0]} x "
            f"{M.shape[1]} with {M.nnz}",
            path=source,
        )
    return M
