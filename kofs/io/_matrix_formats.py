"""Expression formats with a preamble, turned into the plain table :mod:`kofs.io.expression` reads.

* **GCT** 1.2 / 1.3 (GenePattern, the Broad's CMap/LINCS): a ``#1.2`` or ``#1.3`` line, a line
  of dimensions (``rows cols`` and, in 1.3, the numbers of row- and column-metadata fields),
  the header (``Name Description S1 ...``; in 1.3 ``id``, the row-metadata names, the samples),
  in 1.3 one line per column-metadata field, then one row per gene.
* **GEO series matrix** (``GSExxx_series_matrix.txt.gz``): ``!Series_...`` and ``!Sample_...``
  metadata lines, then the table between ``!series_matrix_table_begin`` and
  ``!series_matrix_table_end`` (header ``"ID_REF" "GSM..."``).

* **A preamble of ``#`` comment lines** above the header (featureCounts' ``# Program:...``
  line): leading ``#`` lines with another number of fields than the first other line are
  skipped; a ``#`` line as wide as it (``#gene<TAB>S1<TAB>S2``) is the header.

Both put genes in rows. A file cut before its declared end (fewer GCT rows than declared, no
``!series_matrix_table_end``) is an :class:`~kofs.errors.InputError`.
"""

from __future__ import annotations

import logging

from kofs.errors import InputError

log = logging.getLogger(__name__)

__all__ = ["plain_table"]


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def _gct(data: bytes, name: str) -> tuple[bytes, int]:
    lines = _lines(data)
    if lines[0].startswith(b"\xef\xbb\xbf"):
        lines[0] = lines[0][3:]
    version = lines[0].strip().decode("utf-8", "replace")
    if len(lines) < 3:
        raise InputError(f"GCT file ({version}) ends before its header line", path=name, line=2)
    dims = lines[1].replace(b"\t", b" ").split()
    try:
        n_rows, n_cols = int(dims[0]), int(dims[1])
        n_colmeta = int(dims[3]) if version == "#1.3" and len(dims) >= 4 else 0
    except (IndexError, ValueError):
        raise InputError(
            f"GCT file ({version}): line 2 must give the numbers of rows and columns, got "
            f"{lines[1][:60].decode('utf-8', 'replace')!r}",
            path=name,
            line=2,
        ) from None
    body = [i for i in range(2, len(lines)) if lines[i].strip()]
    if not body:
        raise InputError(f"GCT file ({version}) ends before its header line", path=name, line=3)
    header, rows = lines[body[0]], body[1 + n_colmeta :]
    if len(rows) != n_rows:
        raise InputError(
            f"GCT file declares {n_rows} genes on line 2 but has {len(rows)} (cut or edited?); "
            "use the complete file or fix line 2",
            path=name,
        )
    n_fields = header.count(b"\t") + 1
    n_meta = 2 if version == "#1.2" else int(dims[2]) + 1 if len(dims) >= 3 else 1
    if n_fields - n_meta != n_cols:
        raise InputError(
            f"GCT file declares {n_cols} samples on line 2 but its header has "
            f"{n_fields - n_meta}; fix line 2 or the header",
            path=name,
            line=3,
        )
    log.info("%s: GCT %s, %d genes x %d samples", name, version[1:], n_rows, n_cols)
    # preamble lines become blank, so messages keep the file's line numbers
    for i in (0, 1, *body[1 : 1 + n_colmeta]):
        lines[i] = b""
    return b"\n".join(lines), n_meta


def _series_matrix(data: bytes, name: str) -> bytes:
    lines = _lines(data)
    begin = end = None
    for i, ln in enumerate(lines):
        low = ln.strip().lower()
        if low.startswith(b"!series_matrix_table_begin"):
            begin = i
        elif low.startswith(b"!series_matrix_table_end"):
            end = i
            break
    if begin is None:
        raise InputError(
            "GEO series-matrix file has no !series_matrix_table_begin line (metadata only?); "
            "download the series matrix with its data table",
            path=name,
        )
    if end is None:
        raise InputError(
            "GEO series-matrix file has no !series_matrix_table_end line: the file is cut "
            "(incomplete download?); fetch it again",
            path=name,
        )
    n_rows = sum(1 for ln in lines[begin + 1 : end] if ln.strip())
    if n_rows < 2:
        raise InputError(
            "GEO series-matrix table has no data rows (RNA-seq series keep their counts in "
            "the supplementary files); use the series' count table instead",
            path=name,
            line=begin + 2,
        )
    log.info("%s: GEO series matrix, %d rows", name, n_rows - 1)
    # metadata lines become blank, so messages keep the file's line numbers
    return b"\n" * (begin + 1) + b"\n".join(lines[begin + 1 : end]) + b"\n"


def _comment_preamble(data: bytes, name: str) -> bytes:
    """``data`` with its leading ``#`` lines blanked when they are narrower or wider than the
    first other line (comments above the header, as featureCounts writes), else unchanged."""
    lines = _lines(data[: 1 << 20])
    k = 0
    while k < len(lines) and (lines[k].lstrip().startswith(b"#") or not lines[k].strip()):
        k += 1
    if k == len(lines) or k == 0:
        return data
    head = lines[k]
    sep = b"\t" if head.count(b"\t") >= head.count(b",") else b","
    width = head.count(sep)
    comments = [i for i in range(k) if lines[i].strip()]
    if any(lines[i].count(sep) == width for i in comments):
        return data  # a '#' line as wide as the table is its header ('#gene<TAB>S1 ...')
    log.info("%s: skipped %d comment line(s) above the header", name, len(comments))
    # comment lines become blank, so messages keep the file's line numbers
    end = sum(len(ln) + 1 for ln in lines[:k])
    return b"\n" * k + data[end:]


def plain_table(data: bytes, name: str) -> tuple[bytes, str | None, int | None]:
    """The data table of a GCT or GEO series-matrix file, else ``data`` unchanged.

    Returns
    -------
    (bytes, str or None, int or None)
        The table, the format found (``"gct"``, ``"geo-series-matrix"``, or None) and the
        number of leading identifier/metadata columns when the format fixes it (GCT: ``Name``
        and ``Description``, or ``id`` and the row-metadata fields; series matrix: ``ID_REF``).
    """
    head = data[:64].lstrip()
    if head.startswith((b"#1.2", b"#1.3")):
        table, n_meta = _gct(data, name)
        return table, "gct", n_meta
    if head.startswith(b"!") and (
        b"!series_matrix_table_begin" in data[: 1 << 20].lower()
        or head.lower().startswith((b"!series_", b"!sample_"))
    ):
        return _series_matrix(data, name), "geo-series-matrix", 1
    if head.startswith(b"#"):
        return _comment_preamble(data, name), None, None
    return data, None, None
