"""Cost of publishing an output folder whole (kofs.io.output_folder).

A ``kofs rank``-sized folder at gene scale: ``ranking.tsv`` of 50,000 genes with 20 lists
(rank and score columns), ``weights.tsv``, ``manifest.json``. Timed: writing the files into a
plain folder, and the same through ``atomic_dir`` into an existing output folder (claim and
lock, checksums and fsync of every file, the marker, the ``renameat2`` swap, deleting the
previous run). The difference is what crash safety costs.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import numpy as np
from _util import timed

M, L = 50_000, 20


def _result():
    from kofs.types import AggregateRanking, Ranking

    rng = np.random.default_rng(0)
    genes = [f"G{i}" for i in range(M)]
    lists = [
        Ranking(f"list{j}", genes, rng.normal(size=M), higher_is_better=True) for j in range(L)
    ]
    final = AggregateRanking(
        "em",
        genes,
        rng.normal(size=M),
        tuple(r.name for r in lists),
        np.column_stack([r.ranks for r in lists]),
        weights=np.full(L, 1 / L),
    )
    return final, lists


def _write(folder: Path, final, lists) -> None:
    from kofs.io.output import write_json, write_ranking, write_weights

    write_ranking(folder / "ranking.tsv", final, lists)
    write_weights(folder / "weights.tsv", final)
    write_json(folder / "manifest.json", {"lists": [r.name for r in lists]})


def run() -> list[dict]:
    import time

    from kofs.io.output_folder import atomic_dir

    final, lists = _result()
    base = Path(tempfile.mkdtemp(prefix="kofs-bench-output-"))
    try:
        plain = base / "plain"

        def write_plain():
            shutil.rmtree(plain, ignore_errors=True)
            plain.mkdir()
            _write(plain, final, lists)

        def publish() -> float:
            """Seconds of the publishing step alone (the files are written before)."""
            cm = atomic_dir(base / "OUT")
            tmp = cm.__enter__()
            _write(tmp, final, lists)
            t0 = time.perf_counter()
            cm.__exit__(None, None, None)
            return time.perf_counter() - t0

        publish()  # OUT exists: every timed publish replaces a previous run
        t_plain, _ = timed(write_plain, repeat=3)
        t_pub = min(publish() for _ in range(3))
        size = sum(p.stat().st_size for p in plain.iterdir()) / 1e6
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return [
        {
            "benchmark": f"write a run folder ({M:,} genes x {L} lists, {size:.0f} MB)",
            "value": t_plain,
            "unit": "s",
        },
        {
            "benchmark": "publish it whole: checksums, fsync, marker, swap, old removed",
            "value": t_pub,
            "unit": "s",
            "target": 1.0,
        },
    ]
