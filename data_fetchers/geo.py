"""GEO series matrix (``geo GSEnnnn``) -> expression TSV + sample annotation TSV.

The series matrix ``GSEnnnn[-GPLmmm]_series_matrix.txt.gz`` is fetched from the GEO FTP site
(no checksum published) and parsed by :func:`parse_series_matrix`:

* the table between ``!series_matrix_table_begin`` and ``!series_matrix_table_end`` becomes
  ``<GSE>.expression.tsv.gz``: genes (probes) in rows, first column ``ID_REF``, one column per
  GSM sample; ``null``/``NA``/empty cells stay empty (missing). The probe ids are kept as they
  are: mapping probes to genes (a GPL annotation table, or an annotation column added to the
  TSV) is the user's step.
* ``!Sample_geo_accession``, ``!Sample_title``, ``!Sample_source_name_ch1``,
  ``!Sample_organism_ch1``, ``!Sample_platform_id`` and every ``!Sample_characteristics_ch1``
  line become ``<GSE>.samples.tsv``: column ``sample_id`` then one column per field; a
  characteristic ``key: value`` goes to column ``key`` (values of a repeated key joined by
  ``"; "``), one without a key to ``characteristics_ch1``.
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from kofs.errors import InputError

from ._cache import is_cached
from ._registry import FetchContext, Remote, SourceParam, SourceSpec, derive, register

__all__ = ["parse_series_matrix", "series_matrix_name"]

_FIELDS = {
    "!Sample_title": "title",
    "!Sample_source_name_ch1": "source_name_ch1",
    "!Sample_organism_ch1": "organism_ch1",
    "!Sample_platform_id": "platform_id",
}
_MISSING = {"", "null", "na", "nan"}
_KEY = re.compile(r"^\s*([^:]{1,80}?)\s*:\s*(.*)$")


def _cells(line: str) -> list[str]:
    out = []
    for c in line.rstrip("\r\n").split("\t"):
        c = c.strip()
        if len(c) >= 2 and c[0] == c[-1] == '"':
            c = c[1:-1]
        out.append(c.replace("\t", " ").replace("\n", " "))
    return out


def _open(path: Path):
    if path.name.endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace")


def _sample_table(meta: dict[str, list[list[str]]], samples: list[str], path: Path) -> list[str]:
    n = len(samples)
    columns: dict[str, list[str]] = {}
    for tag, col in _FIELDS.items():
        for values in meta.get(tag, [])[:1]:
            columns[col] = values
    for values in meta.get("!Sample_characteristics_ch1", []):
        for i, v in enumerate(values):
            if not v:
                continue
            m = _KEY.match(v)
            key, val = (m.group(1), m.group(2)) if m else ("characteristics_ch1", v)
            cells = columns.setdefault(key, [""] * n)
            cells[i] = f"{cells[i]}; {val}" if cells[i] else val
    for col, values in columns.items():
        if len(values) != n:
            raise InputError(
                f"sample field {col!r} has {len(values)} values for {n} samples; "
                "the series matrix is damaged, fetch it again with --force",
                path=path,
            )
    header = ["sample_id", *columns]
    rows = ["\t".join(header)]
    rows += ["\t".join([s, *(columns[c][i] for c in columns)]) for i, s in enumerate(samples)]
    return rows


def parse_series_matrix(path: Path, expression_out: Path, samples_out: Path) -> tuple[int, int]:
    """Split a GEO series matrix into an expression TSV (gzip) and a samples TSV.

    Parameters
    ----------
    path
        ``*_series_matrix.txt[.gz]``.
    expression_out
        Written as gzip (``mtime=0``): ``ID_REF`` then one column per sample.
    samples_out
        Plain TSV, one row per sample (see the module docstring for the columns).

    Returns
    -------
    (n_rows, n_samples)

    Raises
    ------
    InputError
        No table, a truncated table, a ragged row, sample ids that disagree with
        ``!Sample_geo_accession``, or an empty table (data only in supplementary files).
    """
    meta: dict[str, list[list[str]]] = {}
    n_rows, samples, ended = 0, None, False
    with (
        _open(path) as src,
        open(expression_out, "wb") as raw,
        gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as out,
    ):
        lineno = 0
        for line in src:
            lineno += 1
            if line.startswith("!series_matrix_table_begin"):
                header_line = src.readline()
                lineno += 1
                header = _cells(header_line)
                if len(header) < 2:
                    raise InputError(
                        "no table header after !series_matrix_table_begin", path=path, line=lineno
                    )
                samples = header[1:]
                accessions = meta.get("!Sample_geo_accession", [[]])[0]
                if accessions and accessions != samples:
                    raise InputError(
                        "table columns differ from !Sample_geo_accession; the file "
                        "is damaged, fetch it again with --force",
                        path=path,
                        line=lineno,
                    )
                out.write(("\t".join(["ID_REF", *samples]) + "\n").encode())
                for row in src:
                    lineno += 1
                    if row.startswith("!series_matrix_table_end"):
                        ended = True
                        break
                    if not row.strip():
                        continue
                    cells = _cells(row)
                    if len(cells) != len(header):
                        raise InputError(
                            f"row has {len(cells)} fields, the header {len(header)}",
                            path=path,
                            line=lineno,
                        )
                    vals = ["" if c.lower() in _MISSING else c for c in cells[1:]]
                    out.write(("\t".join([cells[0], *vals]) + "\n").encode())
                    n_rows += 1
                break
            if line.startswith("!Sample_"):
                cells = _cells(line)
                meta.setdefault(cells[0], []).append(cells[1:])
    if samples is None:
        raise InputError("no !series_matrix_table_begin: not a GEO series matrix", path=path)
    if not ended:
        raise InputError(
            "the table has no !series_matrix_table_end line: the file is truncated; "
            "fetch it again with --force",
            path=path,
        )
    if n_rows == 0:
        raise InputError(
            "the series matrix has no expression rows (GEO keeps this series' data "
            "in supplementary files; download those from the series page)",
            path=path,
        )
    samples_out.write_text("\n".join(_sample_table(meta, samples, path)) + "\n")
    return n_rows, len(samples)


def series_matrix_name(v: Mapping[str, str]) -> str:
    """``GSE2604_series_matrix.txt.gz`` or ``GSE2604-GPL96_series_matrix.txt.gz``."""
    stem = v["accession"] + (f"-{v['platform']}" if v["platform"] else "")
    return f"{stem}_series_matrix.txt.gz"


def _files(v: Mapping[str, str]) -> list[Remote]:
    acc = v["accession"]
    stub = acc[:-3] + "nnn" if len(acc) > 6 else "GSEnnn"
    name = series_matrix_name(v)
    return [Remote(f"{stub}/{acc}/matrix/{name}", name)]


def _post(ctx: FetchContext) -> list[Path]:
    raw = next(iter(ctx.files.values()))
    stem = raw.name.removesuffix("_series_matrix.txt.gz")
    expr = ctx.folder / f"{stem}.expression.tsv.gz"
    samples = ctx.folder / f"{stem}.samples.tsv"
    if not ctx.fresh and is_cached(expr) and is_cached(samples):
        return [expr, samples]
    ctx = replace(ctx, fresh=True)
    tmp_samples = ctx.folder / f".{samples.name}.tmp"

    def write(tmp: Path) -> None:
        parse_series_matrix(raw, tmp, tmp_samples)

    try:
        derive(ctx, expr, [raw], write, how="table of the series matrix (kofs data_fetchers.geo)")
        derive(
            ctx,
            samples,
            [raw],
            lambda t: tmp_samples.replace(t),
            how="!Sample_* lines of the series matrix (kofs data_fetchers.geo)",
        )
    finally:
        tmp_samples.unlink(missing_ok=True)
    return [expr, samples]


register(
    SourceSpec(
        name="geo",
        description="GEO series matrix -> expression TSV (probes x samples) + samples TSV",
        base="https://ftp.ncbi.nlm.nih.gov/geo/series",
        files=_files,
        release=lambda v: v["accession"] + (f"-{v['platform']}" if v["platform"] else ""),
        params=(
            SourceParam(
                "accession",
                "GEO series accession",
                required=True,
                pattern=r"GSE\d+",
                example="GSE2604",
            ),
            SourceParam(
                "platform",
                "platform of a multi-platform series (GPLnnn)",
                pattern=r"GPL\d+",
                example="GPL96",
            ),
        ),
        positional="accession",
        post=_post,
        not_found_hint="check the accession; a series on several platforms has one matrix per "
        "platform: give --platform GPLnnn (listed in the series' matrix/ folder)",
    )
)
