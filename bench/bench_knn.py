"""Exact vs approximate (pynndescent) sample kNN graph: where does approximate pay off?

Measures the time of both searches on synthetic single-cell data (sparse, ~5 % non-zero) for
growing numbers of cells, and the recall of the approximate graph. The crossover sets
``kofs.knowledge._similarity_kernels.ANN_MIN_SAMPLES``.

Run: ``python bench/bench_knn.py [--genes 5000] [--cells 2000,5000,10000,20000]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from kofs.datasets import synthetic_counts
from kofs.knowledge._similarity_kernels import (
    approximate_knn_squared_distances,
    knn_squared_distances,
)


def run(cells: list[int], genes: int, k: int = 10) -> list[dict]:
    rows = []
    for n in cells:
        X = synthetic_counts(n, genes, density=0.05, seed=0).X
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
        rows.append({"cells": n, "genes": genes, "exact_s": t_exact, "ann_s": t_ann,
                     "recall": recall})  # fmt: skip
        print(f"{n:>8} cells  exact {t_exact:8.2f} s  pynndescent {t_ann:8.2f} s  "
              f"recall {recall:.3f}", flush=True)  # fmt: skip
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--genes", type=int, default=5000)
    ap.add_argument("--cells", default="2000,5000,10000,20000")
    a = ap.parse_args()
    run([int(c) for c in a.cells.split(",")], a.genes)


if __name__ == "__main__":
    main()
