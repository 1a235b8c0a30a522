"""Exact vs approximate (faiss inverted file) sample kNN graph: where does approximate pay off?

Measures the time of both searches on synthetic single-cell data (sparse, ~5 % non-zero) for
growing numbers of cells, and the recall of the approximate graph. The crossover sets
``kofs.knowledge.neighbours.ANN_MIN_SAMPLES``.

Run: ``python bench/bench_knn.py [--genes 5000] [--cells 2000,5000,10000,20000]``, or through
``python bench/run.py knn`` (cells from ``KOFS_BENCH_KNN_CELLS``, default 2000,5000,10000).
Same-cluster fraction: share of kNN edges joining cells of the same planted cluster.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from kofs.datasets import synthetic_counts
from kofs.knowledge.neighbours import approximate_knn_squared_distances, knn_squared_distances


def _same_cluster(G, clusters) -> float:
    rows = np.repeat(np.arange(G.shape[0]), np.diff(G.indptr))
    return float(np.mean(clusters[rows] == clusters[G.indices]))


def measure(cells: list[int], genes: int, k: int = 10) -> list[dict]:
    rows = []
    for n in cells:
        data = synthetic_counts(n, genes, density=0.05, seed=0)
        X = data.X
        t0 = time.perf_counter()
        exact = knn_squared_distances(X, k=k)
        t_exact = time.perf_counter() - t0
        approximate_knn_squared_distances(X[:200], k=k, seed=0)  # numba compilation
        t0 = time.perf_counter()
        approx = approximate_knn_squared_distances(X, k=k, seed=0)
        t_ann = time.perf_counter() - t0
        recall = np.mean(
            [
                len(set(exact.indices[exact.indptr[i] : exact.indptr[i + 1]])
                    & set(approx.indices[approx.indptr[i] : approx.indptr[i + 1]])) / k
                for i in range(n)
            ]
        )  # fmt: skip
        same = (_same_cluster(exact, data.clusters), _same_cluster(approx, data.clusters))
        ratio = float(np.sqrt(approx.data).mean() / np.sqrt(exact.data).mean())
        rows.append({"cells": n, "genes": genes, "exact_s": t_exact, "ann_s": t_ann,
                     "recall": recall, "same": same, "ratio": ratio})  # fmt: skip
        print(f"{n:>8} cells  exact {t_exact:8.2f} s  approximate {t_ann:8.2f} s  "
              f"recall {recall:.3f}  same-cluster {same[0]:.3f} / {same[1]:.3f}  "
              f"mean distance ratio {ratio:.3f}", flush=True)  # fmt: skip
    return rows


def run() -> list[dict]:
    cells = os.environ.get("KOFS_BENCH_KNN_CELLS", "2000,5000,10000")
    out = []
    for r in measure([int(c) for c in cells.split(",")], 5000):
        note = (f"approximate/exact time; recall {r['recall']:.2f}, same-cluster "
                f"{r['same'][0]:.2f} exact / {r['same'][1]:.2f} approx., distance ratio "
                f"{r['ratio']:.3f}; exact {r['exact_s']:.1f} s, approx. {r['ann_s']:.1f} s")  # fmt: skip
        out.append({"benchmark": f"kNN k=10, {r['cells']:,} cells x 5,000 genes",
                    "value": r["ann_s"] / r["exact_s"], "unit": "ratio", "note": note})  # fmt: skip
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--genes", type=int, default=5000)
    ap.add_argument("--cells", default="2000,5000,10000,20000")
    a = ap.parse_args()
    measure([int(c) for c in a.cells.split(",")], a.genes)


if __name__ == "__main__":
    main()
