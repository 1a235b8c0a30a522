"""What order invariance and the input checks cost (issue 15), at gene scale.

Timed on a 300 x 60,000 matrix (samples x genes) and a 60,000-gene ranking: sorting the matrix
into canonical order (:func:`kofs._compute.canonical.canonicalize`, a copy), ranking scores as printed
(:func:`kofs._compute.ranks.average_ranks`), the constancy test of every gene
(:func:`kofs._compute.matrix.constant_genes`), and the memory estimate of a 64 MB (uncompressed) BGZF
file (block walk) versus a one-member gzip file (sampled decompression).
"""

from __future__ import annotations

import gzip
import struct
import tempfile
import zlib
from pathlib import Path

import numpy as np
from _util import timed

N, M = 300, 60_000


def _bgzf(data: bytes, block: int = 65_280) -> bytes:
    out = []
    for i in range(0, len(data) + 1, block):
        chunk = data[i : i + block]
        c = zlib.compressobj(6, zlib.DEFLATED, -15)
        cdata = c.compress(chunk) + c.flush()
        head = b"\x1f\x8b\x08\x04" + b"\x00" * 4 + b"\x00\xff" + struct.pack("<H", 6)
        head += b"BC" + struct.pack("<HH", 2, 18 + len(cdata) + 8 - 1)
        out.append(head + cdata + struct.pack("<II", zlib.crc32(chunk), len(chunk)))
    return b"".join(out)


def run() -> list[dict]:
    from kofs._compute.canonical import canonicalize
    from kofs._compute.matrix import constant_genes
    from kofs._compute.ranks import average_ranks
    from kofs.resources import estimate_expression_file
    from kofs.types import Expression

    rng = np.random.default_rng(0)
    genes = [f"G{i}" for i in rng.permutation(M)]
    samples = [f"S{i}" for i in rng.permutation(N)]
    X = rng.normal(size=(N, M))
    expr = Expression(X, genes, samples)
    rows = []
    t, _ = timed(canonicalize, expr, repeat=3)
    rows.append({"benchmark": f"canonical order of a {N} x {M} matrix", "value": t, "unit": "s"})
    s = rng.normal(size=M)
    t, _ = timed(average_ranks, s, higher_is_better=True, repeat=3)
    rows.append({"benchmark": f"ranks on printed values, {M} scores", "value": t, "unit": "s"})
    t, _ = timed(constant_genes, X, repeat=3)
    rows.append({"benchmark": f"constant-gene test, {N} x {M}", "value": t, "unit": "s"})
    text = b"".join(
        ("\t".join(f"{v:.4f}" for v in rng.normal(size=100)) + "\n").encode() for _ in range(90_000)
    )[: 64 << 20]
    with tempfile.TemporaryDirectory() as d:
        b, g = Path(d) / "x.bgz", Path(d) / "x.gz"
        b.write_bytes(_bgzf(text))
        g.write_bytes(gzip.compress(text, 1))
        for path, what in ((b, "BGZF"), (g, "gzip")):
            t, est = timed(estimate_expression_file, path, repeat=3)
            rows.append(
                {
                    "benchmark": f"read estimate of a {len(text) >> 20} MB {what} file",
                    "value": t,
                    "unit": "s",
                    "note": f"estimate {est / 4 / len(text):.3f} x the true size",
                }
            )
    return rows
