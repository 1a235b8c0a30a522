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


#: Runs the ``kofs`` command in a benchmark child (``argv`` set before): through
#: ``kofs.__main__.run``, so that the child's peak RSS can be printed after it, then
#: :data:`_KOFS_END` ends the process as the command does; a kofs tree from before ``run`` and
#: ``_leave`` falls back to ``entry``.
_KOFS_RUN = (
    "try:\n    from kofs.__main__ import _leave, run\n"
    "except ImportError:  # a tree from before run() and _leave()\n"
    "    from kofs.__main__ import entry\n"
    "    _leave = None\n"
    "    def run():\n"
    "        try:\n            entry()\n        except SystemExit as e:\n            return e.code\n"
    "        return 0\n"
)
_KOFS_END = "\nif _leave is not None:\n    _leave(status)\n"


def run_kofs(
    args: list[str], env: dict[str, str] | None = None, prelude: str = ""
) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one ``kofs ARGS`` process (``prelude``: code run
    before kofs is imported, e.g. putting a kofs tree first on the path)."""
    code = (
        "import sys\nsys.argv = ['kofs'] + "
        + repr([str(a) for a in args])
        + "\n"
        + prelude
        + _KOFS_RUN
        + "status = run()\nassert not status, status\n"
    )
    wall, peak, _ = run_child(code, env=env, finish=_KOFS_END)
    return wall, peak


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
