"""Single-cell gene selection against what single-cell users run: scanpy's highly variable
genes (no labels) and ``rank_genes_groups`` (labels).

Run: ``python bench/bench_single_cell_scanpy.py`` (prints the table; also a module of
``python bench/run.py single_cell_scanpy``). Needs the ``bench`` extra (scanpy 1.11.5 -- the
last release for Python 3.11; 1.12 needs 3.12 --, scikit-misc, leidenalg, python-igraph).

Data (in ``KOFS_BENCH_TMP``, default ``bench/.scratch``, kept between runs: generating 20,000
cells takes ~1-2 minutes):

* ``sim-<cells>-<seed>``: :func:`kofs.datasets.splat_counts` (Splatter-like: negative binomial
  counts with mean-dependent dispersion, log-normal library sizes, 8 groups of unequal size,
  ~13 % DE genes, a 100-gene nuisance programme active in a random 20 % of the cells), 15,000
  genes, ``KOFS_BENCH_SC_CELLS`` cells (default 20000; comma-separated for several sizes) and
  seeds ``KOFS_BENCH_SC_SEEDS`` (default 1,2,3), written as scanpy users hold them: ``X``
  log-normalised (``normalize_total`` + ``log1p``), the counts in ``layers["counts"]``, the
  groups in ``obs["group"]``; truth: the DE genes (identity) and the nuisance genes;
* ``indep`` (not run by default): ``bench/_sim_independent.py``, a generator written apart from
  kofs's (two lineages with sub-types, Laplace fold changes up and down, type-specific depth,
  cycle, stress and mitochondrial programmes), 5,000 cells x 8,000 genes, seeds
  ``KOFS_BENCH_SC_SEEDS``; truth: genes whose mean differs between two types by >= 0.5 log2;
* ``pbmc``: the bundled ``pbmc68k_reduced`` (700 PBMCs x 765 genes, log-normalised, FACS
  types in ``obs["bulk_labels"]``); its counts layer recovered from ``X`` (kofs's recovery,
  exact) for scanpy's count flavours; truth: the 10 genes per cell type with the highest
  one-vs-rest AUROC (75 genes), and a truth independent of these cells: the literature
  markers of scanpy's PBMC3k tutorial (``LITERATURE``; ``lit@k``: how many in the top k).

Methods, each a whole process (``python -c`` / the ``kofs`` command; wall time and the
process's peak RSS), run twice in a row (first and second run of a new process):

* scanpy ``highly_variable_genes`` flavours ``seurat``, ``cell_ranger`` (on ``X``),
  ``seurat_v3`` and ``pearson_residuals`` (on the counts layer), each ranking every gene by its
  normalised dispersion / variance;
* ``kofs rank FILE -o OUT`` (the default plan, report included; defaults 5), the graph rankers
  of the previous single-cell plan fused (``--rankers laplacian,spec-phi2,spec-phi3``), and
  single kofs rankers (``--rankers NAME``);
* with labels: ``kofs rank FILE --labels obs:group`` (default labelled plan; marker tables
  written) and scanpy ``rank_genes_groups`` t-test and Wilcoxon, each group's ranking combined
  into one list by every gene's best rank across groups (the "top n per group" users read).

Metrics (computed apart, untimed): precision in the top k (fraction of identity genes: DE genes
/ reference markers), nuisance genes in the top 500, Leiden (igraph, 2 iterations, seed 0) at
resolutions 0.5 / 1 / 2 on the top k genes (scanpy: scale, 50 PCs, 15 neighbours) against the
groups, ARI and NMI, and the kNN label purity of that graph. ``KOFS_BENCH_SC_CASES`` chooses
cases (default ``sim,pbmc``) and ``KOFS_BENCH_SC_METHODS`` methods (comma-separated names of
the table; default all).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _util import run_child, run_kofs  # noqa: E402

ROOT = HERE.parent
PBMC = ROOT / "tests" / "data" / "single_cell" / "pbmc68k_reduced_raw.h5ad"
#: A second truth for PBMC, independent of any statistic computed on these cells: the literature
#: markers of scanpy's PBMC3k tutorial (after Seurat's guided clustering tutorial; 14 of the 17
#: are among pbmc68k_reduced's 765 genes). Reported as counts in the top 20 / 50 / 100.
LITERATURE = ["IL7R", "CD79A", "MS4A1", "CD8A", "CD8B", "LYZ", "CD14", "LGALS3", "S100A8", "GNLY",
              "NKG7", "KLRB1", "FCGR3A", "MS4A7", "FCER1A", "CST3", "PPBP"]  # fmt: skip

# scanpy 1.11.5 calls csr_array.getnnz, which scipy 1.17 removed (scanpy 1.12, which no longer
# does, needs Python 3.12): the bench restores the method before scanpy runs.
SCANPY_SHIM = """
import scipy.sparse as _sp
if not hasattr(_sp.csr_array, "getnnz"):
    _sp.csr_array.getnnz = lambda self, axis=None: self._getnnz(axis=axis)
import warnings; warnings.filterwarnings("ignore")
"""

GENERATE = """
import numpy as np, pandas as pd, scipy.sparse as sp, anndata as ad
from kofs.datasets import splat_counts
d = splat_counts({n}, {m}, seed={seed})
X = d.X
s = np.asarray(X.sum(axis=1)).ravel()
L = sp.diags(np.median(s) / s) @ X
L = sp.csr_matrix(L, dtype=np.float64); L.data = np.log1p(L.data)
a = ad.AnnData(sp.csr_matrix(L, dtype=np.float32),
               obs=pd.DataFrame({{"group": pd.Categorical(d.labels())}}, index=list(d.cells)),
               var=pd.DataFrame({{"de": d.de, "nuisance": d.nuisance}}, index=list(d.genes)))
a.layers["counts"] = sp.csr_matrix(X, dtype=np.float32)
a.write_h5ad({path!r})
"""

GENERATE_INDEPENDENT = """
import sys; sys.path.insert(0, {here!r})
import numpy as np, pandas as pd, scipy.sparse as sp, anndata as ad
from _sim_independent import simulate
X, groups, names, identity, nuisance = simulate({n}, {m}, seed={seed})
s = np.asarray(X.sum(axis=1)).ravel()
L = sp.csr_matrix(sp.diags(np.median(s) / s) @ X, dtype=np.float64); L.data = np.log1p(L.data)
a = ad.AnnData(sp.csr_matrix(L, dtype=np.float32),
               obs=pd.DataFrame({{"group": pd.Categorical(groups)}},
                                index=[f"cell{{i}}" for i in range(X.shape[0])]),
               var=pd.DataFrame({{"de": identity, "nuisance": nuisance}}, index=list(names)))
a.layers["counts"] = X
a.write_h5ad({path!r})
"""

PBMC_PREP = """
import numpy as np, scipy.sparse as sp, anndata as ad
from sklearn.metrics import roc_auc_score
from kofs._compute.counts import counts_view
a = ad.read_h5ad({src!r})
a.layers["counts"] = sp.csr_matrix(counts_view(sp.csr_matrix(a.X, dtype=np.float64)).X, dtype=np.float32)
a.obs["group"] = a.obs["bulk_labels"]
X = a.X.toarray(); y = a.obs["group"].astype(str).to_numpy()
ref = np.zeros(a.n_vars, dtype=bool)
for t in np.unique(y):
    auc = np.array([roc_auc_score(y == t, X[:, j]) for j in range(X.shape[1])])
    ref[np.argsort(-auc, kind="stable")[:10]] = True
a.var["de"] = ref
a.var["nuisance"] = False
a.write_h5ad({path!r})
"""

HVG = (
    SCANPY_SHIM
    + """
import numpy as np, anndata as ad, scanpy as sc
a = ad.read_h5ad({path!r})
if {flavor!r} in ("seurat", "cell_ranger"):
    s = sc.pp.highly_variable_genes(a, flavor={flavor!r}, n_top_genes=min(2000, a.n_vars - 1),
                                    inplace=False)["dispersions_norm"].to_numpy()
elif {flavor!r} == "seurat_v3":
    s = sc.pp.highly_variable_genes(a, flavor="seurat_v3", layer="counts",
                                    n_top_genes=min(2000, a.n_vars - 1),
                                    inplace=False)["variances_norm"].to_numpy()
else:
    s = sc.experimental.pp.highly_variable_genes(
        a, flavor="pearson_residuals", layer="counts", n_top_genes=min(2000, a.n_vars - 1),
        inplace=False)["residual_variances"].to_numpy()
s = np.where(np.isfinite(s), s, -np.inf)
np.save({out!r}, np.lexsort((np.arange(s.size), -s)))
"""
)

RGG = (
    SCANPY_SHIM
    + """
import numpy as np, anndata as ad, scanpy as sc
a = ad.read_h5ad({path!r})
sc.tl.rank_genes_groups(a, "group", method={method!r}, use_raw=False)
names = a.uns["rank_genes_groups"]["names"]
best = np.full(a.n_vars, np.inf); top = np.full(a.n_vars, -np.inf)
index = {{g: i for i, g in enumerate(a.var_names)}}
scores = a.uns["rank_genes_groups"]["scores"]
for grp in names.dtype.names:
    cols = np.array([index[g] for g in names[grp]])
    best[cols] = np.minimum(best[cols], np.arange(cols.size))
    top[cols] = np.maximum(top[cols], scores[grp])
np.save({out!r}, np.lexsort((np.arange(a.n_vars), -top, best)))
"""
)

EVAL = (
    SCANPY_SHIM
    + """
import json, numpy as np, anndata as ad, scanpy as sc
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score
a = ad.read_h5ad({path!r})
de = a.var["de"].to_numpy(); nu = a.var["nuisance"].to_numpy()
lit = np.isin(np.asarray(a.var_names), {literature!r})
y = a.obs["group"].astype(str).to_numpy()
out = {{}}
for name, f in {orders!r}.items():
    o = np.load(f)
    r = {{f"p@{{k}}": float(de[o[:k]].mean()) for k in {ks!r}}}
    r["nuisance@500"] = int(nu[o[:500]].sum())
    if lit.any():
        r.update({{f"lit@{{k}}": int(lit[o[:k]].sum()) for k in (20, 50, 100)}})
    b = a[:, np.sort(o[:{k_cluster}])].copy()
    sc.pp.scale(b, max_value=10)
    sc.tl.pca(b, n_comps=min(50, {k_cluster} - 1), random_state=0)
    sc.pp.neighbors(b, n_neighbors=15, random_state=0)
    D = b.obsp["distances"].tocsr()
    r["purity"] = float(np.mean([np.mean(y[D.indices[D.indptr[i]:D.indptr[i + 1]]] == y[i])
                                for i in range(b.n_obs)]))
    for res in (0.5, 1.0, 2.0):
        sc.tl.leiden(b, resolution=res, flavor="igraph", n_iterations=2, random_state=0,
                     key_added="leiden")
        r[f"ARI{{res:g}}"] = adjusted_rand_score(y, b.obs["leiden"])
        r[f"NMI{{res:g}}"] = normalized_mutual_info_score(y, b.obs["leiden"])
    out[name] = r
print(json.dumps(out))
"""
)

KOFS_ORDER = """
import numpy as np, pandas as pd, anndata as ad
names = list(ad.read_h5ad({path!r}, backed="r").var_names)
t = pd.read_csv({ranking!r}, sep="\\t")
index = {{g: i for i, g in enumerate(names)}}
np.save({out!r}, np.array([index[g] for g in t.sort_values("rank", kind="stable")["gene"]]))
"""


def _scratch() -> Path:
    path = Path(os.environ.get("KOFS_BENCH_TMP", HERE / ".scratch"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def _env_list(name: str, default: str) -> list[str]:
    return [v for v in os.environ.get(name, default).split(",") if v]


def _datasets() -> list[tuple[str, Path, dict]]:
    """(name, .h5ad path, facts) of the cases, generated when missing."""
    out = []
    cases = _env_list("KOFS_BENCH_SC_CASES", "sim,pbmc")
    if "sim" in cases:
        for n in map(int, _env_list("KOFS_BENCH_SC_CELLS", "20000")):
            for seed in map(int, _env_list("KOFS_BENCH_SC_SEEDS", "1,2,3")):
                path = _scratch() / f"splat_{n}x15000_seed{seed}.h5ad"
                if not path.exists():
                    run_child(GENERATE.format(n=n, m=15000, seed=seed, path=str(path)))
                out.append(
                    (
                        f"sim {n // 1000}k seed {seed}",
                        path,
                        {"k": (200, 500, 1000, 2000), "cluster": 500},
                    )
                )
    if "indep" in cases:
        # bench/_sim_independent.py: a generator written apart from kofs's (cell-type
        # hierarchy, Laplace fold changes, type-specific depth, cycle/stress/mitochondrial)
        for seed in map(int, _env_list("KOFS_BENCH_SC_SEEDS", "1,2,3")):
            path = _scratch() / f"independent_5000x8000_seed{seed}.h5ad"
            if not path.exists():
                run_child(GENERATE_INDEPENDENT.format(here=str(HERE), n=5000, m=8000, seed=seed,
                                                      path=str(path)))  # fmt: skip
            out.append(
                (
                    f"independent 5k seed {seed}",
                    path,
                    {"k": (100, 200, 500), "cluster": 500},
                )
            )
    if "pbmc" in cases:
        path = _scratch() / "pbmc68k_reduced_counts.h5ad"
        if not path.exists():
            run_child(PBMC_PREP.format(src=str(PBMC), path=str(path)))
        facts = {"k": (50, 100), "cluster": 100, "literature": LITERATURE}
        out.append(("pbmc68k_reduced", path, facts))
    return out


def _kofs(args: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one ``kofs`` process."""
    return run_kofs(args, env={"PYTHONPATH": str(ROOT), **(env or {})})


#: (table name, kind, arguments): kind "hvg" (scanpy flavour), "rgg" (rank_genes_groups
#: method), "kofs" (``kofs rank`` arguments after the file), "kofs-cold" (``kofs rank`` with
#: ``NUMBA_CACHE_DIR`` a new empty folder: the first run compiles kofs's kernels and caches
#: them, the second loads them).
METHODS: list[tuple[str, str, object]] = [
    ("scanpy seurat", "hvg", "seurat"),
    ("scanpy cell_ranger", "hvg", "cell_ranger"),
    ("scanpy seurat_v3", "hvg", "seurat_v3"),
    ("scanpy pearson_residuals", "hvg", "pearson_residuals"),
    ("kofs default (defaults 5)", "kofs", []),
    ("kofs default, empty kernel cache first", "kofs-cold", []),
    (
        "kofs laplacian + spec-phi2 + spec-phi3 fused",
        "kofs",
        ["--rankers", "laplacian,spec-phi2,spec-phi3"],
    ),
    ("kofs pearson-residuals", "kofs", ["--rankers", "pearson-residuals"]),
    ("kofs deviance", "kofs", ["--rankers", "deviance"]),
    ("kofs seurat-v3", "kofs", ["--rankers", "seurat-v3"]),
    ("kofs morans-i", "kofs", ["--rankers", "morans-i"]),
    (
        "kofs hotspot, nuisance kept",
        "kofs",
        ["--rankers", "hotspot", "--param", "hotspot.programmes=keep"],
    ),
    ("scanpy rank_genes_groups t-test", "rgg", "t-test"),
    ("scanpy rank_genes_groups wilcoxon", "rgg", "wilcoxon"),
    ("kofs default with labels", "kofs", ["--labels", "obs:group"]),
]


def _run_method(
    kind: str, spec, path: Path, order: Path, tmp: Path, env: dict | None = None
) -> tuple[float, float]:
    if kind == "hvg":
        wall, peak, _ = run_child(HVG.format(path=str(path), flavor=spec, out=str(order)))
        return wall, peak
    if kind == "rgg":
        wall, peak, _ = run_child(RGG.format(path=str(path), method=spec, out=str(order)))
        return wall, peak
    out = tmp / "kofs-out"
    shutil.rmtree(out, ignore_errors=True)
    args = ["rank", str(path), "-o", str(out), "--threads", "2", *spec]
    wall, peak = _kofs(args, env=env)
    run_child(KOFS_ORDER.format(path=str(path), ranking=str(out / "ranking.tsv"), out=str(order)))
    return wall, peak


def measure() -> list[dict]:
    """Every method on every case: one row per (case, method)."""
    wanted = set(_env_list("KOFS_BENCH_SC_METHODS", ",".join(m[0] for m in METHODS)))
    rows = []
    for case, path, facts in _datasets():
        with tempfile.TemporaryDirectory(dir=_scratch()) as tmp_s:
            tmp = Path(tmp_s)
            orders, times = {}, {}
            for name, kind, spec in METHODS:
                if name not in wanted:
                    continue
                order = tmp / f"{len(orders)}.npy"
                env = None
                if kind == "kofs-cold":
                    env = {"NUMBA_CACHE_DIR": str(tmp / f"numba-{len(orders)}")}
                first = _run_method(kind, spec, path, order, tmp, env)
                second = _run_method(kind, spec, path, order, tmp, env)
                orders[name], times[name] = str(order), (first, second)
                print(f"# {case}: {name} {first[0]:.1f} s / {second[0]:.1f} s", file=sys.stderr,
                      flush=True)  # fmt: skip
            _, _, out = run_child(EVAL.format(path=str(path), orders=orders, ks=facts["k"],
                                              k_cluster=facts["cluster"],
                                              literature=facts.get("literature", [])))  # fmt: skip
            metrics = json.loads(out.splitlines()[-1])
        for name, m in metrics.items():
            (t1, p1), (t2, p2) = times[name]
            rows.append({"case": case, "method": name, **m, "first_s": t1, "second_s": t2,
                         "peak_mb": max(p1, p2)})  # fmt: skip
        (_scratch() / "bench_single_cell_scanpy.json").write_text(json.dumps(rows, indent=1))
    return rows


def _cell(value) -> str:
    if value is None:
        return ""
    return f"{value:.3g}" if isinstance(value, float) else str(value)


def table(rows: list[dict]) -> str:
    """The rows as a Markdown table (one column per metric of any row)."""
    keys: list[str] = []
    for r in rows:
        keys += [k for k in r if k not in ("case", "method") and k not in keys]
    head = "| case | method | " + " | ".join(keys) + " |\n|" + "---|" * (len(keys) + 2) + "\n"
    body = "".join(
        f"| {r['case']} | {r['method']} | " + " | ".join(_cell(r.get(k)) for k in keys) + " |\n"
        for r in rows
    )
    return head + body


def run() -> list[dict]:
    """Rows for bench/run.py: precision at 500 and time per case and method."""
    out = []
    for r in measure():
        p = r.get("p@500", r.get("p@50"))
        out.append({"benchmark": f"{r['case']}: {r['method']} precision@500 (pbmc: @50)",
                    "value": p, "unit": "frac", "target": None,
                    "note": f"ARI {r['ARI0.5']:.2f}/{r['ARI1']:.2f}/{r['ARI2']:.2f}, "
                            f"{r['first_s']:.1f} s / {r['second_s']:.1f} s, "
                            f"{r['peak_mb']:.0f} MB"})  # fmt: skip
    return out


if __name__ == "__main__":
    print(table(measure()))
