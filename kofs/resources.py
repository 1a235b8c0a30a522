"""Memory limits: estimate the peak memory of the big steps and fail early.

A step that would need more memory than allowed raises :class:`~kofs.errors.ResourceError`
*before* allocating anything, with a one-line message naming the step, the estimate, the limit
and what to do instead (a sparser graph, fewer genes, ...), rather than being killed by the
operating system halfway through a run.

The limit is an explicit argument everywhere (no global state): ``kofs rank --max-memory 4G``
-> :func:`kofs.pipeline.rank` (``max_memory=``) -> the pipeline's ``Context`` -> every check.
Its default, :func:`default_memory_limit`, is 80 % of the machine's total RAM (``MemTotal`` of
``/proc/meminfo``, or the cgroup limit ``/sys/fs/cgroup/memory.max`` when that is lower).

The estimates are upper-bound-ish figures of the dominant arrays of each step (float64 = 8
bytes, CSR = 12 bytes per stored entry plus the row pointers) times the number of such arrays
alive at the same time in the implementation; they are deliberately simple and documented per
function so that a user can predict them.
"""

from __future__ import annotations

import math
import os
import re
import zlib
from pathlib import Path

from kofs.errors import ParameterError, ResourceError

__all__ = [
    "DEFAULT_FRACTION",
    "check_memory",
    "default_memory_limit",
    "estimate_dense_similarity",
    "estimate_expression_file",
    "estimate_go_all_pairs",
    "estimate_go_annotations_file",
    "estimate_go_semantics",
    "estimate_go_similarity",
    "estimate_obo_file",
    "similarity_block_bytes",
    "estimate_knn_graph",
    "estimate_mahalanobis",
    "format_size",
    "parse_size",
    "resolve_limit",
    "total_memory",
]

#: Fraction of the total RAM used as the default limit.
DEFAULT_FRACTION = 0.8

F8 = 8  # bytes per float64
CSR_ENTRY = 12  # float64 value + int32 column index

_UNITS = {"": 1, "B": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
_SIZE = re.compile(
    r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([KMGT]?)(I?B)?\s*$", re.IGNORECASE
)


def parse_size(text: str | int | float, *, option: str = "--max-memory") -> int:
    """Bytes of a size such as ``"4G"``, ``"512M"``, ``"1.5GB"``, ``"2GiB"``, ``"1000000"``.

    Units are binary (``K`` = 1024, ``M`` = 1024**2, ``G`` = 1024**3, ``T`` = 1024**4), with
    or without a trailing ``B``/``iB``, case-insensitive; a bare number is bytes.

    Raises
    ------
    ParameterError
        Not a size, or not positive.
    """
    if isinstance(text, bool):
        raise ParameterError(f"{option} {text!r}: expected a size such as 4G or 512M")
    if isinstance(text, (int, float)):
        value, unit = float(text), ""
    else:
        m = _SIZE.match(str(text))
        if m is None:
            raise ParameterError(
                f"{option} {text!r}: expected a size such as 4G, 512M or 1000000 (bytes)"
            )
        value, unit = float(m.group(1)), m.group(2).upper()
    nbytes = value * _UNITS[unit]
    if not math.isfinite(nbytes) or nbytes < 1:
        raise ParameterError(f"{option} {text!r}: the size must be at least 1 byte")
    return int(nbytes)


def format_size(nbytes: float) -> str:
    """Human-readable binary size: ``"512 B"``, ``"3.2 MB"``, ``"1.50 GB"``."""
    nbytes = float(nbytes)
    if nbytes < 2**10:
        return f"{nbytes:.0f} B"
    if nbytes < 2**20:
        return f"{nbytes / 2**10:.1f} KB"
    if nbytes < 2**30:
        return f"{nbytes / 2**20:.1f} MB"
    return f"{nbytes / 2**30:.2f} GB"


def _meminfo_total(path: Path) -> int | None:
    try:
        for line in path.read_text().splitlines():
            if line.startswith("MemTotal:"):
                parts = line.split()
                return int(parts[1]) * (1024 if parts[-1].lower() == "kb" else 1)
    except (OSError, ValueError, IndexError):
        return None
    return None


def _cgroup_limit(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    if not text.isdigit():
        return None  # "max" = unlimited
    return int(text)


def total_memory(
    *,
    meminfo: str | os.PathLike = "/proc/meminfo",
    cgroup: str | os.PathLike = "/sys/fs/cgroup/memory.max",
) -> int | None:
    """Bytes of RAM available to this process: min(MemTotal, cgroup limit), or None if unknown."""
    found = [v for v in (_meminfo_total(Path(meminfo)), _cgroup_limit(Path(cgroup))) if v]
    if not found:
        try:
            found = [os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")]
        except (ValueError, OSError, AttributeError):
            return None
    return min(found)


def default_memory_limit(**kwargs) -> int | None:
    """80 % of :func:`total_memory` (None when the RAM size cannot be found: no checks)."""
    total = total_memory(**kwargs)
    return None if total is None else int(DEFAULT_FRACTION * total)


def resolve_limit(max_memory: int | str | None) -> int | None:
    """The limit to pass down: ``None`` -> the default, a size string -> bytes."""
    if max_memory is None:
        return default_memory_limit()
    if isinstance(max_memory, str):
        return parse_size(max_memory)
    if isinstance(max_memory, bool) or int(max_memory) < 1:
        raise ParameterError(f"max_memory must be a positive number of bytes, got {max_memory!r}")
    return int(max_memory)


def check_memory(nbytes: float, *, limit: int | None, what: str, suggestion: str) -> None:
    """Raise :class:`ResourceError` when ``nbytes`` exceeds ``limit`` (no check if None).

    The message: ``step WHAT needs ~N GB, above --max-memory M GB; SUGGESTION``.
    """
    if limit is None or nbytes <= limit:
        return
    raise ResourceError(
        f"step {what} needs ~{format_size(nbytes)}, above --max-memory {format_size(limit)}; "
        f"{suggestion}"
    )


# --- estimates --------------------------------------------------------------------------------


_SAMPLE_BYTES = 1 << 20  # compressed bytes decompressed to learn the ratio of a gzip file
_MAX_BGZF_BLOCKS = 1 << 16  # BGZF blocks walked exactly before extrapolating


def _bgzf_size(fh, raw: int) -> int | None:
    """Uncompressed size of a BGZF (bgzip) file: the sum of its blocks' ISIZE fields.

    Each BGZF block is a gzip member whose extra field ``BC`` gives its compressed size, so the
    blocks can be walked by seeking. After ``_MAX_BGZF_BLOCKS`` blocks the rest is
    extrapolated from the ratio so far. None when the file is not BGZF.
    """
    pos = total = blocks = 0
    while pos < raw:
        fh.seek(pos)
        head = fh.read(18)
        if len(head) < 18 or head[:2] != b"\x1f\x8b" or not head[3] & 4:
            return None
        xlen = int.from_bytes(head[10:12], "little")
        extra = head[12:18] + fh.read(max(xlen - 6, 0))
        bsize = None
        k = 0
        while k + 4 <= xlen:
            sub, slen = extra[k : k + 2], int.from_bytes(extra[k + 2 : k + 4], "little")
            if sub == b"BC" and slen == 2:
                bsize = int.from_bytes(extra[k + 4 : k + 6], "little") + 1
                break
            k += 4 + slen
        if bsize is None:
            return None
        fh.seek(pos + bsize - 4)
        total += int.from_bytes(fh.read(4), "little")
        pos += bsize
        blocks += 1
        if blocks >= _MAX_BGZF_BLOCKS and pos < raw:
            return int(total * raw / pos)
    return total


def _sampled_size(fh, raw: int) -> tuple[int, bool, bool]:
    """(estimated uncompressed size, exact?, several members?) by decompressing the first
    compressed megabyte, following member boundaries (``cat a.gz b.gz`` has several)."""
    fh.seek(0)
    data = fh.read(_SAMPLE_BYTES)
    out = used = members = 0
    while data:
        members += 1
        d = zlib.decompressobj(wbits=31)
        try:
            out += len(d.decompress(data))
        except zlib.error:
            break
        if not d.eof:
            used += len(data)
            break
        used += len(data) - len(d.unused_data)
        data = d.unused_data.lstrip(b"\x00")
    if used >= raw:
        return out, True, members > 1
    return int(out * raw / max(used, 1)), False, members > 1


def _gzip_size(path: Path) -> int | None:
    """Uncompressed size of a gzip file.

    A single-member file's trailer (ISIZE, modulo 4 GiB) is exact; the 4 GiB wrap is undone
    with the size extrapolated from decompressing its first megabyte. A BGZF (bgzip) file has
    one member per 64 KiB block, whose sizes are summed; any other multi-member file (ISIZE
    then covers only its last member) is estimated from the first megabyte's ratio.
    """
    try:
        raw = path.stat().st_size
        with open(path, "rb") as fh:
            if fh.read(2) != b"\x1f\x8b":
                return None
            bgzf = _bgzf_size(fh, raw)
            if bgzf is not None:
                return bgzf
            sampled, exact, multi = _sampled_size(fh, raw)
            if exact:
                return sampled
            fh.seek(-4, os.SEEK_END)
            isize = int.from_bytes(fh.read(4), "little")
    except OSError:
        return None
    if multi:
        return sampled
    # one member: ISIZE is exact modulo 4 GiB; choose the wrap nearest the sampled estimate
    wraps = max(round((sampled - isize) / 2**32), 0)
    return isize + wraps * 2**32


def estimate_expression_file(path: str | os.PathLike) -> int | None:
    """Peak memory of reading an expression text file, from its (uncompressed) size.

    The reader holds the decompressed bytes, the split fields and the float64 matrix: about
    4 x the uncompressed size (a cell of ~8 characters becomes 8 bytes of float64). ``None``
    for standard input or an unreadable path (the reader reports those).
    """
    if os.fspath(path) == "-":
        return None
    p = Path(path)
    try:
        size = p.stat().st_size
    except OSError:
        return None
    if not p.is_file():
        return None
    text = _gzip_size(p) or size
    return 4 * text


def estimate_dense_similarity(n_samples: int, *, copies: int = 4) -> int:
    """A dense n x n sample similarity: distances, kernel, and the ranker's normalised copy
    and eigenvectors (``copies`` n x n float64 arrays, default 4)."""
    return copies * F8 * int(n_samples) ** 2


def estimate_knn_graph(
    n_samples: int, n_features: int, *, k: int = 10, block_bytes: int = 64 * 2**20
) -> int:
    """A sparse kNN graph: one block of distances, the n x k neighbours (values, indices, in
    the directed and the symmetrised graph) and a centred copy of the data."""
    n = int(n_samples)
    return min(block_bytes, F8 * n * n) + 4 * CSR_ENTRY * n * int(k) + F8 * n * int(n_features)


def estimate_mahalanobis(
    n_samples: int, n_genes: int, *, nnz: int = 0, method: str = "scalable"
) -> int:
    """GO-MAH / commute-time Mahalanobis similarity (:mod:`kofs.knowledge.mahalanobis`).

    ``"scalable"``: centred copy of X and ``L X'`` (2 n x m), the Laplacian (nnz + m entries,
    twice while symmetrising), the Gram matrix, distances and kernel (3 n x n).
    ``"exact"``: additionally the dense m x m Laplacian, covariance, eigenvectors and
    pseudo-inverse (4 m x m, plus LAPACK workspace ~ 1 m x m).
    """
    n, m = int(n_samples), int(n_genes)
    need = 2 * F8 * n * m + 2 * CSR_ENTRY * (int(nnz) + m) + 3 * F8 * n * n
    if method == "exact":
        need += 5 * F8 * m * m
    return need


def estimate_go_all_pairs(
    n_genes: int, n_terms: int = 0, *, block_genes: int = 1000, itemsize: int = F8
) -> int:
    """All-pairs GO gene similarity (``kofs gosim``), before the ontology is read: the dense
    genes x genes result (``itemsize`` bytes per value: 4 in kofs mode, 8 in gosemsim mode)
    and the term x gene maxima of the kernel (about as large), plus per block the term-term
    similarities of the block's terms (``block_genes`` rows against every term). The kernel
    checks its own, finer estimate once the term sets are known."""
    g = int(n_genes)
    return 2 * int(itemsize) * g * g + F8 * min(g, int(block_genes)) * max(int(n_terms), g)


def _text_size(path: str | os.PathLike) -> int | None:
    """Uncompressed size of a (possibly gzip) file, None if unreadable."""
    p = Path(path)
    try:
        size = p.stat().st_size
    except OSError:
        return None
    return _gzip_size(p) or size


def estimate_obo_file(path: str | os.PathLike) -> int | None:
    """Parsing an OBO file with goatools: ~7 x its uncompressed size (term objects and their
    dictionaries; measured 93 MB for the 17 MB go-basic.obo of 2022). None if unreadable."""
    size = _text_size(path)
    return None if size is None else 7 * size


def _mean_line_length(path: str | os.PathLike, sample: int = 2000) -> float | None:
    """Mean length of the first ``sample`` data lines (not starting with ``!`` or ``#``)."""
    import gzip

    try:
        with open(path, "rb") as fh:
            gz = fh.read(2) == b"\x1f\x8b"
        with gzip.open(path, "rb") if gz else open(path, "rb") as fh:
            lengths = []
            for line in fh:
                if not line.startswith((b"!", b"#")) and line.strip():
                    lengths.append(len(line))
                    if len(lengths) >= sample:
                        break
    except (OSError, EOFError):
        return None
    return sum(lengths) / len(lengths) if lengths else None


#: Bytes per annotation row while reading (Python strings of ~5 fields, the arrays, the
#: resolution against the ontology); measured 330-380 on GAF and TSV files.
ANNOTATION_ROW = 450


def estimate_go_annotations_file(path: str | os.PathLike) -> int | None:
    """Reading GO annotations (GAF, gene2go, TSV): :data:`ANNOTATION_ROW` bytes per row, the
    rows estimated from the uncompressed size and the mean length of the first data lines.
    None if unreadable (the reader reports it)."""
    size, mean = _text_size(path), _mean_line_length(path)
    if size is None or not mean:
        return None
    return int(ANNOTATION_ROW * size / mean)


def estimate_go_semantics(n_terms: int, n_rows: int) -> int:
    """Closure and information content of one GO aspect (:func:`kofs.knowledge.go_semantics.go_semantics`):
    the ancestor closure and its squares while it converges (3 CSR matrices of ~25 entries per
    term; 18 on BP 2022) and the annotation rows' index arrays and incidence (~4 x 8 bytes per
    row)."""
    return 3 * CSR_ENTRY * 25 * int(n_terms) + 4 * F8 * int(n_rows)


def similarity_block_bytes(limit: int | None, default: int = 256 * 2**20) -> int:
    """Working memory per block of the GO similarity kernel: ``default`` (256 MB), smaller
    under a memory limit (an eighth of it, at least 4 MB)."""
    if limit is None:
        return default
    return int(min(default, max(4 * 2**20, limit // 8)))


def estimate_go_similarity(
    n_terms_rows: int,
    n_genes_rows: int,
    n_terms_cols: int | None = None,
    n_genes_cols: int | None = None,
    *,
    itemsize: int = 4,
    exact: bool = False,
    bma: bool = True,
    block_bytes: int = 256 * 2**20,
) -> int:
    """Gene x gene GO similarity by :func:`kofs.knowledge.go_similarity.gene_similarity_blocks`
    (without the caller's output): the dense term x gene maxima ``X`` (row terms x column
    genes) and, for BMA of two different gene lists, ``Y`` (column terms x row genes), each of
    ``itemsize`` bytes per entry (4 in kofs mode, 8 in gosemsim mode, plus two exact float64
    halves of each when ``exact``), and about two blocks of working memory."""
    tr, gr = int(n_terms_rows), int(n_genes_rows)
    symmetric = n_terms_cols is None
    tc = tr if symmetric else int(n_terms_cols)
    gc = gr if n_genes_cols is None else int(n_genes_cols)
    per = itemsize + (2 * F8 if exact else 0)
    need = per * tr * gc
    if bma and not symmetric:
        need += per * tc * gr
    return need + 2 * int(block_bytes)
