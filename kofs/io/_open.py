"""Streaming opening of (possibly compressed) text files, with every failure an InputError.

:mod:`kofs.io._table` reads a whole table into memory and validates it; the readers here serve
the large knowledge files (GAF, gene2go, STRING, BioGRID, KEGG) that are *streamed*:

* :func:`stream_text` — a text stream over a plain, gzip, bzip2 or one-member zip file
  (recognised by magic bytes); :func:`stream_bytes` — the same as bytes. Decompression errors
  met while reading — a truncated gzip (``EOFError``), corrupt data (``zlib.error``,
  ``OSError``), a damaged zip member — are raised as :class:`~kofs.errors.InputError` naming
  the file, at the moment they happen.
* :func:`open_text` — small files through :func:`kofs.io._table.open_text` (validated UTF-8),
  archives through :func:`stream_text`.
* :func:`head_lines` — the first non-blank lines, for format sniffing.
* :func:`table_errors` — a context manager turning the exceptions of :func:`pandas.read_csv`
  (ragged rows, bad header, duplicate names, no rows) into an InputError with the line when
  pandas names one.
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import io
import os
import re
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from kofs.errors import InputError, KofsError
from kofs.io import _table
from kofs.io._fsops import refuse_special_input

__all__ = [
    "TRUNCATED",
    "head_lines",
    "open_text",
    "stream_bytes",
    "stream_text",
    "table_errors",
]

#: Message of a compressed file that ends early (incomplete download or copy).
TRUNCATED = (
    "gzip file is truncated (compressed data ended before the end-of-stream marker: incomplete"
    " download or copy?); fetch it again"
)


def _decompress_error(exc: BaseException, path: str, kind: str) -> InputError:
    """The InputError for a decompression failure ``exc`` of a ``kind`` ("gzip", ...) file."""
    if isinstance(exc, EOFError):
        return InputError(TRUNCATED.replace("gzip", kind, 1), path=path)
    text = str(exc).splitlines()[0] if str(exc).strip() else type(exc).__name__
    return InputError(f"corrupt {kind} data ({text}); fetch the file again", path=path)


class _GuardedReader(io.RawIOBase):
    """A raw binary reader translating decompression errors into InputError."""

    def __init__(self, raw: IO[bytes], path: str, kind: str) -> None:
        super().__init__()
        self._raw = raw
        self._path = path
        self._kind = kind

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        try:
            data = self._raw.read(len(buffer))
        except (EOFError, OSError, zlib.error, zipfile.BadZipFile) as exc:
            raise _decompress_error(exc, self._path, self._kind) from None
        n = len(data)
        buffer[:n] = data
        return n

    def close(self) -> None:
        if not self.closed:
            self._raw.close()
        super().close()


def stream_text(path: str | os.PathLike, *, what: str = "file") -> IO[str]:
    """Open a text file as a stream, transparently gunzipping / bunzipping / unzipping.

    Parameters
    ----------
    path : path-like
    what : str
        How the file is named in messages (``"STRING links file"``).

    Returns
    -------
    text stream
        UTF-8 (a byte-order mark is dropped, undecodable bytes become U+FFFD), universal
        newlines. Reading it raises :class:`InputError` when the compressed data is truncated
        or corrupt.

    Raises
    ------
    InputError
        As :func:`stream_bytes`.
    """
    guarded = stream_bytes(path, what=what)
    return io.TextIOWrapper(guarded, encoding="utf-8-sig", errors="replace", newline=None)


def stream_bytes(path: str | os.PathLike, *, what: str = "file") -> io.BufferedReader:
    """The decompressed bytes of a plain, gzip, bzip2 or one-member zip file, as a stream;
    reading it raises :class:`InputError` when the compressed data is truncated or corrupt.

    Raises
    ------
    InputError
        Missing file, a directory, an empty file, a damaged zip archive or one with several
        members, an unreadable file.
    """
    p = Path(path)
    name = os.fspath(path)
    if not p.exists():
        raise InputError(f"{what} not found; check the path", path=p)
    if p.is_dir():
        raise InputError(f"{what} is a directory, expected a file", path=p)
    refuse_special_input(p)  # opened twice below (its magic bytes, then its content)
    kind = "plain"
    try:
        with open(p, "rb") as fh:
            magic = fh.read(4)
        if not magic:
            raise InputError(f"{what} is empty", path=p)
        if magic[:2] == b"\x1f\x8b":
            kind = "gzip"
            raw: IO[bytes] = gzip.open(p, "rb")
        elif magic[:3] == b"BZh":
            kind = "bzip2"
            raw = bz2.open(p, "rb")
        elif magic == b"PK\x03\x04":
            kind = "zip"
            zf = zipfile.ZipFile(p)
            members = [n for n in zf.namelist() if not n.endswith("/")]
            office = {"[Content_Types].xml", "mimetype"} & set(members)  # xlsx, ods
            hint = _table.spreadsheet_hint(name if not office else "x.xlsx")
            if hint and (office or len(members) != 1):
                raise InputError(f"{what} {hint}", path=p)
            if len(members) != 1:
                raise InputError(
                    f"zip archive holds {len(members)} files; unzip it and give one file", path=p
                )
            raw = zf.open(members[0])
        else:
            if name.lower().endswith(".gz") and not _looks_like_text(p):
                # a damaged gzip header ("is not UTF-8 text; save it as UTF-8" said otherwise);
                # plain text under a .gz name is read
                raise InputError(_table.not_gzip_message(name, magic), path=p)
            raw = open(p, "rb")  # noqa: SIM115
    except zipfile.BadZipFile as exc:
        hint = _table.spreadsheet_hint(name)
        if hint:
            raise InputError(f"{what} {hint}", path=p) from None
        raise _decompress_error(exc, name, kind) from None
    except OSError as exc:
        raise InputError(f"cannot read {what}: {exc.strerror or exc}", path=p) from None
    return io.BufferedReader(_GuardedReader(raw, name, kind))


def _looks_like_text(path: Path, n: int = 512) -> bool:
    """The first ``n`` bytes of ``path`` are UTF-8 text without NUL bytes (a multi-byte
    character cut at the end is allowed)."""
    import codecs

    with open(path, "rb") as fh:
        head = fh.read(n)
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError:
        return False
    return b"\x00" not in head


def open_text(path: str | os.PathLike, *, what: str = "file") -> IO[str]:
    """Open a whole text file for reading (path or ``"-"``; gzip, bzip2 or one-member zip).

    Plain and gzip files go through :func:`kofs.io._table.open_text` (validated UTF-8, clear
    errors); bzip2 and zip archives are streamed by :func:`stream_text`.
    """
    p = os.fspath(path)
    if p != "-" and Path(p).is_file():
        with open(p, "rb") as fh:
            magic = fh.read(4)
        if magic[:3] == b"BZh" or magic == b"PK\x03\x04":
            return stream_text(p, what=what)
    return _table.open_text(p)


def head_lines(path: str | os.PathLike, n: int = 5) -> list[str]:
    """The first ``n`` non-blank lines of a text file (used for format sniffing)."""
    out: list[str] = []
    with stream_text(path) as fh:
        for line in fh:
            if line.strip():
                out.append(line.rstrip("\r\n"))
                if len(out) >= n:
                    break
    return out


@contextlib.contextmanager
def table_errors(path: str | os.PathLike, what: str, *, line_offset: int = 0) -> Iterator[None]:
    """Turn :func:`pandas.read_csv` failures inside the block into one-line InputErrors.

    Parameters
    ----------
    path : path-like
        File named in the message.
    what : str
        Kind of file (``"BioGRID file"``).
    line_offset : int, default 0
        Added to a line number pandas reports (lines it was told to skip).
    """
    name = os.fspath(path)
    try:
        yield
    except KofsError:
        raise  # already one line (InputError is also a ValueError: keep it from the net below)
    except Exception as exc:
        err = _table_error(exc, name, what, line_offset)
        if err is None:
            raise
        raise err from None


def _table_error(exc: Exception, name: str, what: str, line_offset: int) -> InputError | None:
    """The one-line error for a failure of :func:`pandas.read_csv` (None: not a table error)."""
    import pandas as pd  # already imported by whoever called read_csv

    if isinstance(exc, pd.errors.EmptyDataError):
        return InputError(f"{what} has no rows", path=name)
    if isinstance(exc, pd.errors.ParserError):
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else "parse error"
        m = re.search(r"line (\d+)", first)
        return InputError(
            f"malformed {what}: {first}; check the delimiter and that no row is cut or has "
            "extra fields",
            path=name,
            line=int(m.group(1)) + line_offset if m else None,
        )
    if isinstance(exc, UnicodeError):
        return InputError(f"{what} is not UTF-8 text ({exc.reason}); save it as UTF-8", path=name)
    if isinstance(exc, (EOFError, zlib.error)):
        return _decompress_error(exc, name, "gzip")
    if isinstance(exc, (ValueError, OSError)):
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return InputError(
            f"{what} cannot be parsed ({first}); check its header line and delimiter",
            path=name,
        )
    return None
