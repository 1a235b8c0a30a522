"""The unsupervised single-cell default against scanpy's highly variable genes on simulations of
other shapes than the 20,000-cell x 15,000-gene one the plan was chosen on.

Run: ``python bench/bench_single_cell_shapes.py`` (prints a table, ~2-4 min; needs the ``bench``
extra: scanpy, scikit-misc). ``KOFS_BENCH_SHAPES`` picks shapes by number (comma-separated, 1-5).

Each shape is drawn by :func:`kofs.datasets.splat_counts` with settings away from its defaults
(fewer genes, a larger or absent nuisance programme, more or fewer groups, equal groups, weak
DE, wider library sizes, low depth), written as scanpy users hold it (``X`` log-normalised, the
counts in ``layers["counts"]``), ranked by ``kofs rank FILE`` (the default plan, a whole
process) and by scanpy ``highly_variable_genes`` flavours ``seurat_v3`` and
``pearson_residuals`` (on the counts layer) and ``seurat`` (on ``X``). Printed: the DE genes
(identity truth), precision of the top k (k = min(500, DE genes)) and of the top k / 5, and the
nuisance-programme genes in the top k.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

#: name -> splat_counts settings (seeds differ from the plan's bench, 1-3)
SHAPES: dict[str, dict] = {
    "small (3,000 genes, 4,000 cells)": dict(n_cells=4000, n_genes=3000, seed=11),
    "5 groups, 200-gene programme in 30 % of cells": dict(
        n_cells=5000, n_genes=8000, n_groups=5, de_prob=0.03, nuisance_genes=200,
        nuisance_fraction=0.3, seed=12,
    ),
    "12 groups, no programme, wide library sizes": dict(
        n_cells=6000, n_genes=10000, n_groups=12, de_prob=0.01, nuisance_genes=0,
        lib_scale=0.8, seed=13,
    ),
    "3 equal groups, weak DE, programme in 50 %": dict(
        n_cells=3000, n_genes=6000, n_groups=3, group_probs=(0.34, 0.33, 0.33), de_loc=0.1,
        nuisance_fraction=0.5, seed=14,
    ),
    "low depth (median ~1,800 counts)": dict(n_cells=5000, n_genes=8000, lib_loc=7.5, seed=15),
}  # fmt: skip


def _anndata(settings: dict):
    import anndata as ad
    import pandas as pd
    import scipy.sparse as sp

    from kofs.datasets import splat_counts

    d = splat_counts(**settings)
    s = np.asarray(d.X.sum(axis=1)).ravel()
    L = sp.csr_matrix(sp.diags(np.median(s) / s) @ d.X, dtype=np.float64)
    L.data = np.log1p(L.data)
    a = ad.AnnData(
        sp.csr_matrix(L, dtype=np.float32),
        obs=pd.DataFrame({"group": pd.Categorical(d.labels())}, index=list(d.cells)),
        var=pd.DataFrame({"de": d.de, "nuisance": d.nuisance}, index=list(d.genes)),
    )
    a.layers["counts"] = sp.csr_matrix(d.X, dtype=np.float32)
    return a


def _hvg_orders(a) -> dict[str, np.ndarray]:
    import scipy.sparse as sp

    # scanpy 1.11.5 calls csr_array.getnnz, which scipy 1.17 removed (as bench_single_cell_scanpy)
    if not hasattr(sp.csr_array, "getnnz"):
        sp.csr_array.getnnz = lambda self, axis=None: self._getnnz(axis=axis)  # type: ignore[attr-defined]
    import scanpy as sc

    n = min(2000, a.n_vars - 1)
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hvg = sc.pp.highly_variable_genes
        v3 = hvg(a, flavor="seurat_v3", layer="counts", n_top_genes=n, inplace=False)
        out["scanpy seurat_v3"] = v3["variances_norm"].to_numpy()
        pr = sc.experimental.pp.highly_variable_genes(
            a, flavor="pearson_residuals", layer="counts", n_top_genes=n, inplace=False
        )
        out["scanpy pearson_residuals"] = pr["residual_variances"].to_numpy()
        se = hvg(a, flavor="seurat", n_top_genes=n, inplace=False)
        out["scanpy seurat"] = se["dispersions_norm"].to_numpy()
    orders = {}
    for name, v in out.items():
        v = np.where(np.isfinite(v), v, -np.inf)
        orders[name] = np.lexsort((np.arange(v.size), -v))
    return orders


def _kofs_order(path: Path, out: Path, genes: list[str]) -> np.ndarray:
    import pandas as pd

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "kofs", "-q", "rank", str(path), "-o", str(out), "--no-report"]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode:
        raise RuntimeError(f"kofs rank failed: {proc.stderr.strip()[-2000:]}")
    t = pd.read_csv(out / "ranking.tsv", sep="\t").sort_values("rank", kind="stable")
    index = {g: i for i, g in enumerate(genes)}
    return np.array([index[g] for g in t["gene"]])


def measure(names: list[str] | None = None) -> list[dict]:
    """One row per shape and method: ``shape``, ``method``, ``de`` (DE genes), ``k``,
    ``p@k``, ``p@k/5``, ``programme@k``; printed as they come."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names or list(SHAPES):
            a = _anndata(SHAPES[name])
            path = Path(tmp) / "shape.h5ad"
            a.write_h5ad(path)
            de = a.var["de"].to_numpy()
            nu = a.var["nuisance"].to_numpy()
            k = int(min(500, de.sum()))
            orders = {"kofs default": _kofs_order(path, Path(tmp) / "out", list(a.var_names))}
            orders.update(_hvg_orders(a))
            for method, o in orders.items():
                rows.append(
                    {
                        "shape": name,
                        "method": method,
                        "de": int(de.sum()),
                        "k": k,
                        "p@k": float(de[o[:k]].mean()),
                        "p@k/5": float(de[o[: k // 5]].mean()),
                        "programme@k": int(nu[o[:k]].sum()),
                    }
                )
                print(_line(rows[-1]), flush=True)
    return rows


HEADER = (
    "| shape | DE genes | method | precision top k | precision top k/5 | programme genes in top k |\n"
    "|---|---|---|---|---|---|"
)


def _line(r: dict) -> str:
    return (
        f"| {r['shape']} | {r['de']} | {r['method']} (k = {r['k']}) | {r['p@k']:.2f} | "
        f"{r['p@k/5']:.2f} | {r['programme@k']} |"
    )


def run() -> list[dict]:
    """Rows for bench/run.py: precision in the top k per shape and method."""
    return [
        {
            "benchmark": f"shape '{r['shape']}': {r['method']} precision in the top {r['k']}",
            "value": round(r["p@k"], 3),
            "unit": "frac",
            "note": f"top k/5 {r['p@k/5']:.2f}, programme genes in the top k {r['programme@k']}",
        }
        for r in measure()
    ]


def main() -> None:
    chosen = os.environ.get("KOFS_BENCH_SHAPES")
    names = list(SHAPES)
    if chosen:  # by number (1-5) in the table's order
        names = [names[int(k) - 1] for k in chosen.split(",")]
    print(HEADER, flush=True)
    measure(names)


if __name__ == "__main__":
    main()
