"""Shared helpers for benchmarks: timing, peak memory of a child process, data paths."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import time
from pathlib import Path

SHARED = Path(os.environ.get("KOFS_SHARED", Path(__file__).resolve().parents[2] / "shared"))
REAL = SHARED / "data" / "real"


def timed(fn, *args, repeat: int = 1, **kwargs):
    """(best wall seconds over ``repeat`` runs, last result)."""
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn(*args, **kwargs)
        best = min(best, time.perf_counter() - t0)
    return best, out


def run_child(code: str) -> tuple[float, float, str]:
    """Run ``code`` in a fresh Python; (wall seconds, the child's own peak RSS in MB, stdout).

    The child reports its peak RSS itself on the last stdout line, so the figure belongs to
    that child alone.
    """
    probe = "\nimport resource as _r\nprint(_r.getrusage(_r.RUSAGE_SELF).ru_maxrss)\n"
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code + probe], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark child failed: {proc.stderr.strip()[-2000:]}")
    *lines, peak = proc.stdout.rstrip("\n").split("\n")
    return wall, int(peak) / 1024.0, "\n".join(lines)


def all_expression():
    """The ALL gene-level matrix as a kofs Expression (needs ../shared)."""
    from kofs.io.expression import read_expression

    return read_expression(REAL / "ALL" / "ALL_gene_expr.tsv.gz", gene_column="symbol")


def open_text(path: Path):
    return gzip.open(path, "rt") if str(path).endswith(".gz") else open(path)
