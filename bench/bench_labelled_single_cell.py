"""Labelled single-cell rankings: the default (Fisher, calibrated by its F test) against
per-group alternatives, in-process (issue 21: "with labels, precision at k at least
``rank_genes_groups`` t-test's").

Run: ``python bench/bench_labelled_single_cell.py`` (prints the table; also a module of
``python bench/run.py labelled_single_cell``; ~1 minute). Needs the ``sc`` extra (anndata) and
scikit-learn (the AUROC truth).

Data:

* ``pbmc``: the bundled ``pbmc68k_reduced`` (700 PBMCs x 765 log-normalised genes, ten FACS
  types of 8-240 cells); truths: the 10 genes per type of highest one-vs-rest AUROC (75 genes;
  the truth of ``bench_single_cell_scanpy.py``) and the 17 literature markers of scanpy's PBMC3k
  tutorial (``lit@k``: how many in the top k; 14 are among the genes);
* ``sim-<seed>``: :func:`kofs.datasets.splat_counts` (5,000 cells x 8,000 genes, 8 groups of
  unequal size, seeds 1 and 2), ``normalize_total`` + ``log1p``
  (:func:`kofs._compute.counts.log_normalised`); truth: the DE genes.

Rankings (every gene, best first):

* ``fisher``: the default labelled list (:mod:`kofs.rankers.classic`);
* ``best rank over groups``: each group's t-test marker list
  (:func:`kofs.rankers.markers.marker_tables`, scanpy's ``rank_genes_groups``), every gene
  at its best rank across the groups -- the "top n per group" users read, and how
  ``bench_single_cell_scanpy.py`` turns scanpy's tables into one list;
* ``max t`` / ``min p`` over the groups (the same tables);
* ``balanced F``: the between-group variance of the *unweighted* group means over the pooled
  within-group variance (every group counts alike, whatever its size);
* ``Welch ANOVA``: Welch's heteroscedastic F;
* ``min lfdr over groups``: each group's two-sided t-test p-values (the marker tables')
  fitted alone by the default fusion (a calibrated list: two-groups model with the
  theoretical null), every gene at its smallest local fdr (an upper bound of P(null in every
  group));
* ``significant markers first``: the best rank over the groups counted among each group's
  markers with q <= 0.05, the other genes after them in Fisher's order (a threshold rule,
  measured for the record, not a candidate default).
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PBMC = ROOT / "tests" / "data" / "single_cell" / "pbmc68k_reduced_raw.h5ad"
LITERATURE = ["IL7R", "CD79A", "MS4A1", "CD8A", "CD8B", "LYZ", "CD14", "LGALS3", "S100A8", "GNLY",
              "NKG7", "KLRB1", "FCGR3A", "MS4A7", "FCER1A", "CST3", "PPBP"]  # fmt: skip
SIM_SEEDS = (1, 2)


def _best_rank(score_rows: np.ndarray, keep: np.ndarray | None = None) -> np.ndarray:
    """Every gene's best 0-based rank over the rows (higher score first); ``keep`` masks
    (row, gene) entries that do not count (inf)."""
    best = np.full(score_rows.shape[1], np.inf)
    for k, s in enumerate(score_rows):
        r = np.empty(s.size)
        r[np.argsort(-s, kind="stable")] = np.arange(s.size)
        if keep is not None:
            r[~keep[k]] = np.inf
        best = np.minimum(best, r)
    return best


def _order(primary: np.ndarray, secondary: np.ndarray | None = None) -> np.ndarray:
    """Genes by increasing ``primary`` (then ``secondary``, then index)."""
    keys = [np.arange(primary.size)]
    if secondary is not None:
        keys.append(secondary)
    keys.append(primary)
    return np.lexsort(keys)


def rankings(X: np.ndarray, y: np.ndarray) -> dict[str, np.ndarray]:
    """Every ranking of the module docstring on a dense log-normalised matrix (cells x genes)."""
    from kofs.aggregate import aggregate
    from kofs.rankers import run_ranker
    from kofs.rankers._inputs import RankerInputs
    from kofs.rankers.markers import marker_tables
    from kofs.types import Expression, Ranking, SampleCategories

    n, m = X.shape
    genes = tuple(f"g{j}" for j in range(m))
    cells = tuple(f"c{i}" for i in range(n))
    expr = Expression(X, genes, cells)
    labels = SampleCategories(tuple(map(str, y)), cells, name="group")
    out: dict[str, np.ndarray] = {}
    fisher = run_ranker("fisher", expr, RankerInputs(categories=labels))
    out["fisher"] = np.asarray(fisher.order())
    f_rank = np.empty(m)
    f_rank[out["fisher"]] = np.arange(m)
    mt = marker_tables(expr, labels, method="t-test")
    T = np.nan_to_num(mt.scores, nan=-np.inf)
    out["best rank over groups"] = _order(_best_rank(T), -T.max(0))
    out["max t"] = _order(-T.max(0))
    pvals = np.nan_to_num(mt.pvals, nan=1.0)  # each group's two-sided Welch p-values
    out["min p"] = _order(pvals.min(0), -T.max(0))
    groups = np.unique(y)
    sizes = np.array([(y == g).sum() for g in groups])
    means = np.array([X[y == g].mean(0) for g in groups])
    within = sum(((X[y == g] - means[i]) ** 2).sum(0) for i, g in enumerate(groups))
    within = within / (n - groups.size)
    with np.errstate(divide="ignore", invalid="ignore"):
        balanced = ((means - means.mean(0)) ** 2).sum(0) / within
        var = np.array([X[y == g].var(0, ddof=1) for g in groups])
        w = sizes[:, None] / var
        mw = (w * means).sum(0) / w.sum(0)
        lam = ((1 - w / w.sum(0)) ** 2 / (sizes[:, None] - 1)).sum(0)
        k = groups.size
        welch = ((w * (means - mw) ** 2).sum(0) / (k - 1)) / (1 + 2 * (k - 2) / (k**2 - 1) * lam)
    out["balanced F"] = _order(-np.nan_to_num(balanced, nan=-np.inf))
    out["Welch ANOVA"] = _order(-np.nan_to_num(welch, nan=-np.inf))
    lfdr = np.ones_like(pvals)
    for i, g in enumerate(mt.groups):
        fit = aggregate(
            [Ranking(g, genes, pvals[i], False, info={"null": {"distribution": "p"}})],
            params={"resamples": 0},
        )
        at = {gene: j for j, gene in enumerate(fit.genes)}
        lfdr[i] = np.asarray(fit.statistics["lfdr"])[[at[gene] for gene in genes]]
    out["min lfdr over groups"] = _order(lfdr.min(0), pvals.min(0))
    significant = np.nan_to_num(mt.pvals_adj, nan=1.0) <= 0.05
    out["significant markers first"] = _order(_best_rank(T, significant), f_rank)
    return out


def _pbmc() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    import anndata as ad
    from sklearn.metrics import roc_auc_score

    a = ad.read_h5ad(PBMC)
    X = a.X.toarray() if hasattr(a.X, "toarray") else np.asarray(a.X)
    y = a.obs["bulk_labels"].astype(str).to_numpy()
    truth = np.zeros(a.n_vars, dtype=bool)
    for t in np.unique(y):
        auc = np.array([roc_auc_score(y == t, X[:, j]) for j in range(X.shape[1])])
        truth[np.argsort(-auc, kind="stable")[:10]] = True
    lit = np.isin(np.asarray(a.var_names), LITERATURE)
    return X.astype(np.float64), y, truth, lit


def _sim(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    import scipy.sparse as sp

    from kofs._compute.counts import counts_view, log_normalised
    from kofs.datasets import splat_counts

    d = splat_counts(5000, 8000, seed=seed)
    X = log_normalised(counts_view(sp.csr_matrix(d.X, dtype=np.float64))).toarray()
    keep = X.std(0) > 0
    return X[:, keep], np.asarray(d.labels()), np.asarray(d.de)[keep]


def measure() -> list[dict]:
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        X, y, truth, lit = _pbmc()
        for name, o in rankings(X, y).items():
            rows.append(
                {
                    "case": "pbmc",
                    "ranking": name,
                    "truth": "AUROC top 10 per type",
                    "p@50": truth[o[:50]].mean(),
                    "p@100": truth[o[:100]].mean(),
                    "lit@20/50/100": "/".join(str(int(lit[o[:k]].sum())) for k in (20, 50, 100)),
                }
            )
        for seed in SIM_SEEDS:
            X, y, de = _sim(seed)
            for name, o in rankings(X, y).items():
                rows.append(
                    {
                        "case": f"sim-{seed}",
                        "ranking": name,
                        "truth": "DE genes",
                        "p@200": de[o[:200]].mean(),
                        "p@500": de[o[:500]].mean(),
                        "p@1000": de[o[:1000]].mean(),
                    }
                )
    return rows


def table(rows: list[dict]) -> str:
    names = list(dict.fromkeys(r["ranking"] for r in rows))
    cases = list(dict.fromkeys(r["case"] for r in rows))
    head = ["ranking"]
    for c in cases:
        head.append(
            f"{c} p@50 / p@100 / lit@20,50,100" if c == "pbmc" else f"{c} p@200 / p@500 / p@1000"
        )
    lines = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    for n in names:
        cells = [n]
        for c in cases:
            r = next(r for r in rows if r["case"] == c and r["ranking"] == n)
            if c == "pbmc":
                cells.append(f"{r['p@50']:.2f} / {r['p@100']:.2f} / {r['lit@20/50/100']}")
            else:
                cells.append(f"{r['p@200']:.2f} / {r['p@500']:.2f} / {r['p@1000']:.2f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def run() -> list[dict]:
    rows = measure()
    out = []
    for r in rows:
        for key in ("p@50", "p@100", "p@500"):
            if key in r:
                out.append(
                    {
                        "benchmark": f"labelled single-cell, {r['case']}, {r['ranking']}, {key}",
                        "value": round(float(r[key]), 3),
                        "unit": "precision",
                        "note": r["truth"],
                    }
                )
    return out


if __name__ == "__main__":
    t = time.perf_counter()
    print(table(measure()))
    print(f"({time.perf_counter() - t:.0f} s)", file=sys.stderr)
