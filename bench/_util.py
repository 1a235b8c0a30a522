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


def run_child(
    code: str, env: dict[str, str] | None = None, finish: str = ""
) -> tuple[float, float, str]:
    """Run ``code`` in a fresh Python (``env``: variables set for it on top of this process's
    environment; ``finish``: code run after the peak RSS is printed, e.g. the ``kofs``
    command's own exit); (wall seconds, the child's own peak RSS in MB, stdout).

    The child reports its peak RSS itself on the last stdout line: ``VmHWM`` of its own
    address space. (``getrusage().ru_maxrss`` would not do: Linux carries it across fork and
    exec, so a child of a large parent reports at least the parent's size.) Memory of the
    child's own worker processes (joblib) is not included.
    """
    probe = (
        "\nimport re as _re\n"
        "print(_re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1))\n"
    )
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", code + probe + finish],
        capture_output=True,
        text=True,
        env=None if env is None else {**os.environ, **env},
    )
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark child failed: {proc.stderr.strip()[-2000:]}")
    *lines, peak = proc.stdout.rstrip("\n").split("\n")
    return wall, int(peak) / 1024.0, "\n".join(lines)


def all_expression():
    """The ALL gene-level matrix (128 samples x 8,562 genes, symbols) as a kofs Expression."""
    import pandas as pd

    from kofs.types import Expression

    df = pd.read_csv(REAL / "ALL" / "ALL_gene_expr.tsv.gz", sep="\t", dtype={"entrez_id": str})
    values = df.drop(columns=["entrez_id", "symbol", "probe_id"])
    return Expression(
        values.to_numpy(dtype=float).T,
        genes=df["symbol"].tolist(),
        samples=list(values.columns),
        namespace="symbol",
        annotations={"entrez": df["entrez_id"].tolist()},
    )


def all_labels(column: str = "lineage"):
    """ALL sample labels aligned to :func:`all_expression` (B/T lineage by default)."""
    import pandas as pd

    from kofs.types import SampleCategories

    df = pd.read_csv(REAL / "ALL" / "ALL_samples.tsv", sep="\t", dtype=str)
    expr = all_expression()
    lab = dict(zip(df["sample_id"], df[column], strict=True))
    return SampleCategories([lab[s] for s in expr.samples], expr.samples, name=column)


def open_text(path: Path):
    return gzip.open(path, "rt") if str(path).endswith(".gz") else open(path)
