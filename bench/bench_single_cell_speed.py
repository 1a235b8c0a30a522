"""Whole-process time of kofs's default unsupervised single-cell plan against scanpy's
``seurat_v3`` HVG on the same file, side by side and alternating (issue 21's speed target:
kofs at most 2x ``seurat_v3``; kofs's first and second run within 20 % of each other).

Run: ``python bench/bench_single_cell_speed.py`` (prints a table; bench extra: scanpy,
scikit-misc). Every round runs, one after the other:

1. scanpy ``highly_variable_genes(flavor="seurat_v3", layer="counts")`` (as in
   :mod:`bench_single_cell_scanpy`);
2. ``kofs rank FILE -o OUT --threads 2`` with ``NUMBA_CACHE_DIR`` and ``KOFS_CACHE_DIR`` a new
   empty folder: the **first run** of a new installation (kofs's numba kernels are compiled and
   cached);
3. the same command again with those folders: the **second run** (kernels loaded).

Each row: wall seconds, user + system CPU seconds of the process (``getrusage`` of the
children; steadier than wall time on a loaded machine), peak RSS, load average before the run.

``KOFS_BENCH_SC_ROUNDS`` rounds (default 2); the ratio is kofs's time over ``seurat_v3``'s of
the same round. ``KOFS_BENCH_SC_BASE``: the path of another kofs source tree (e.g. an older
commit from ``git archive``) timed in the same rounds as "kofs base" (first and second run,
its own empty cache). Data: the 20,000-cell simulation of seed 1 of
:mod:`bench_single_cell_scanpy` (``KOFS_BENCH_SC_FILE`` for another ``.h5ad`` with the counts in
``layers["counts"]``; generated when missing). The machine's load average is printed with every
row: on a shared machine only ratios within a round mean anything.
"""

from __future__ import annotations

import os
import resource
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _util import run_child, run_kofs  # noqa: E402

ROOT = HERE.parent


def _file() -> Path:
    given = os.environ.get("KOFS_BENCH_SC_FILE")
    if given:
        return Path(given)
    import bench_single_cell_scanpy as scb

    os.environ.setdefault("KOFS_BENCH_SC_SEEDS", "1")
    os.environ.setdefault("KOFS_BENCH_SC_CELLS", "20000")
    os.environ.setdefault("KOFS_BENCH_SC_CASES", "sim")
    return scb._datasets()[0][1]


def _load() -> float:
    return os.getloadavg()[0]


def _cpu() -> float:
    """User + system CPU seconds of the finished child processes so far."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _timed(fn, *args) -> tuple[float, float, float]:
    """(wall, peak MB, CPU seconds) of one child process run by ``fn``."""
    before = _cpu()
    wall, peak = fn(*args)
    return wall, peak, _cpu() - before


def _seurat_v3(path: Path, tmp: Path) -> tuple[float, float]:
    import bench_single_cell_scanpy as scb

    wall, peak, _ = run_child(
        scb.HVG.format(path=str(path), flavor="seurat_v3", out=str(tmp / "order.npy"))
    )
    return wall, peak


def _kofs(tree: Path, path: Path, out: Path, cache: Path) -> tuple[float, float]:
    shutil.rmtree(out, ignore_errors=True)
    env = {"PYTHONPATH": str(tree), "NUMBA_CACHE_DIR": str(cache), "KOFS_CACHE_DIR": str(cache)}
    # the tree first on the path (``python -c`` would put the current folder first), checked
    prelude = (
        f"sys.path.insert(0, {str(tree)!r})\n"
        f"assert __import__('kofs').__file__.startswith({str(tree)!r})\n"
    )
    return run_kofs(["rank", str(path), "-o", str(out), "--threads", "2"], env, prelude)


def measure() -> list[dict]:
    """One row per (round, method): wall seconds, peak RSS, load average before the run."""
    path = _file()
    rounds = int(os.environ.get("KOFS_BENCH_SC_ROUNDS", "2"))
    trees = [("kofs", ROOT)]
    base = os.environ.get("KOFS_BENCH_SC_BASE")
    if base:
        trees.append(("kofs base", Path(base)))
    rows = []
    with tempfile.TemporaryDirectory(prefix="kofs-sc-speed-") as tmp_s:
        tmp = Path(tmp_s)
        for r in range(1, rounds + 1):
            load = _load()
            wall, peak, cpu = _timed(_seurat_v3, path, tmp)
            rows.append({"round": r, "method": "scanpy seurat_v3", "seconds": wall, "cpu": cpu,
                         "peak_mb": peak, "load": load})  # fmt: skip
            ref, ref_cpu = wall, cpu
            for name, tree in trees:
                cache = tmp / f"cache-{name.replace(' ', '-')}-{r}"
                for run in ("first run", "second run"):
                    load = _load()
                    wall, peak, cpu = _timed(_kofs, tree, path, tmp / "out", cache)
                    rows.append({"round": r, "method": f"{name}, {run}", "seconds": wall,
                                 "cpu": cpu, "peak_mb": peak, "load": load, "ratio": wall / ref,
                                 "cpu_ratio": cpu / ref_cpu})  # fmt: skip
                    print(f"# round {r}: {name} {run} {wall:.1f} s (seurat_v3 {ref:.1f} s, "
                          f"load {load:.1f})", file=sys.stderr, flush=True)  # fmt: skip
    return rows


def table(rows: list[dict]) -> str:
    head = (
        "| round | method | wall s | x seurat_v3 | CPU s | CPU x seurat_v3 | peak MB | load |\n"
        "|---|---|---|---|---|---|---|---|\n"
    )
    return head + "".join(
        f"| {r['round']} | {r['method']} | {r['seconds']:.1f} | "
        + (f"{r['ratio']:.2f}" if "ratio" in r else "")
        + f" | {r['cpu']:.1f} | "
        + (f"{r['cpu_ratio']:.2f}" if "cpu_ratio" in r else "")
        + f" | {r['peak_mb']:.0f} | {r['load']:.1f} |\n"
        for r in rows
    )


def run() -> list[dict]:
    """Rows for bench/run.py."""
    return [
        {
            "benchmark": f"single-cell 20k x 15k round {r['round']}: {r['method']}",
            "value": r["seconds"],
            "unit": "s",
            "target": None,
            "note": (f"{r['ratio']:.2f}x seurat_v3; " if "ratio" in r else "")
            + f"load {r['load']:.1f}",
        }  # fmt: skip
        for r in measure()
    ]


if __name__ == "__main__":
    print(table(measure()))
