"""Tables of p-values cut to their significant genes, on real expression data (issue 20).

Users export a DE table with its significant genes only (``subset(res, padj < 0.1)``,
``topTable(fit, number = 20)``) and fuse it with other studies' whole tables. How
``kofs aggregate`` reads a gene such a table lacks decides the answer: as *untested* (no
information) its few genes' tiny p-values are read as if they were all the study tested, or as
*below its cut* (a p-value above the largest it lists), the study's whole ranking with its tail
censored.

The data are real: the ALL set's B-lineage samples (``../shared``), split at random into three
"studies" of 10 + 10 samples; in each a random half gets 200 genes shifted by 0.5-1.5 of their
SD (up or down; the same genes in every study: the truth), so the noise, the genes'
correlation and their distributions are the data's own, with their imperfect nulls. Each study
gives a Welch t-test table (``gene, pvalue``; with ``--signed`` DESeq2's columns, fold change
included; a cut table keeps its fold changes, read by the signed model as censored below its
cut). Rows: the tables whole; the first study cut at ``padj <= 0.10`` or to its 20 smallest
p-values; the first two, or all three, cut at ``padj <= 0.10``; the three studies' top-200
genes as plain lists of ids (the universe given); and with nothing planted.
Columns: calls at q <= 0.10 and their FDP, top-200 precision of the fused ranking (means over
the seeds, with their range) for the default reading and for ``tested=`` (the cut tables read
as tables of tested genes: the default until the twenty-eighth session), and for RRA (R
RobustRankAggreg's method).

Run: ``python bench/bench_cut_tables.py [--seeds N] [--signed]`` (~3 min for 4 seeds; needs
``../shared``).
"""

from __future__ import annotations

import argparse
import logging
import os
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import false_discovery_control, ttest_ind

REPO = Path(__file__).resolve().parents[1]
PLANTED = 200
STUDIES = 3
PER_GROUP = 10


def _shared() -> Path | None:
    root = Path(os.environ.get("KOFS_SHARED", REPO.parent / "shared")) / "data" / "real" / "ALL"
    return root if (root / "ALL_gene_expr.tsv.gz").is_file() else None


def _b_lineage(root: Path) -> tuple[np.ndarray, np.ndarray]:
    """(genes x B-lineage samples) log expression, one row per symbol, and the symbols."""
    X = pd.read_csv(root / "ALL_gene_expr.tsv.gz", sep="\t")
    samples = pd.read_csv(root / "ALL_samples.tsv", sep="\t", dtype=str)
    X = X.drop_duplicates("symbol").set_index("symbol")
    b = [s for s in samples.loc[samples.lineage == "B", "sample_id"] if s in X.columns]
    return X[b].to_numpy(np.float64), np.asarray(X.index.astype(str))


def studies(M: np.ndarray, genes: np.ndarray, seed: int, planted: int, signed: bool):
    """The three studies' whole tables and the truth (a set of genes)."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(M.shape[1])
    truth = rng.choice(len(genes), planted, replace=False)
    effect = np.zeros(len(genes))
    effect[truth] = (
        rng.uniform(0.5, 1.5, planted) * M[truth].std(axis=1) * rng.choice([-1.0, 1.0], planted)
    )
    tables = {}
    n = 2 * PER_GROUP
    for s in range(STUDIES):
        idx = order[n * s : n * (s + 1)]
        a, b = M[:, idx[:PER_GROUP]], M[:, idx[PER_GROUP:]] + effect[:, None]
        p = np.nan_to_num(ttest_ind(b, a, axis=1, equal_var=False).pvalue, nan=1.0)
        table = pd.DataFrame({"gene": genes, "pvalue": p, "padj": false_discovery_control(p)})
        if signed:
            table.insert(1, "log2FoldChange", b.mean(axis=1) - a.mean(axis=1))
        tables[f"study{s + 1}"] = table
    return tables, set(genes[truth].tolist())


def cut(table: pd.DataFrame, how: str) -> pd.DataFrame | list[str]:
    """``padj``: the rows with padj <= 0.10 (at least 5: else the 5 smallest p-values, as a
    user exports a short list); ``top20``: the 20 smallest p-values; ``ids200``: the genes of
    the 200 smallest p-values, best first, as a plain list of ids (a published top list)."""
    if how == "ids200":
        return table.nsmallest(200, "pvalue")["gene"].tolist()
    if how == "padj":
        kept = table[table.padj <= 0.10]
        return kept if len(kept) >= 5 else table.nsmallest(5, "pvalue")
    return table.nsmallest(20, "pvalue")


def _without_padj(listed: pd.DataFrame | list[str]) -> pd.DataFrame | list[str]:
    return listed if isinstance(listed, list) else listed.drop(columns="padj")


ROWS = (
    ("3 whole tables", (), "", PLANTED),
    ("study 1 cut at padj <= 0.10", (1,), "padj", PLANTED),
    ("study 1 cut to its top 20", (1,), "top20", PLANTED),
    ("studies 1 and 2 cut at padj <= 0.10", (1, 2), "padj", PLANTED),
    ("3 tables cut at padj <= 0.10", (1, 2, 3), "padj", PLANTED),
    ("nothing changed: study 1's top 20 + 2 whole", (1,), "top20", 0),
    ("nothing changed: 3 tables' top 20", (1, 2, 3), "top20", 0),
    ("3 studies' top-200 gene ids", (1, 2, 3), "ids200", PLANTED),
    ("nothing changed: 3 studies' top-200 gene ids", (1, 2, 3), "ids200", 0),
)


def measure(lists, truth, universe, **reading) -> tuple[int, float, float]:
    from kofs import aggregate_lists

    fused = aggregate_lists(lists, universe=universe, **reading).final
    q = fused.statistics["q_value"]  # the default fusion's, or RRA's (Benjamini-Hochberg)
    called = np.asarray(fused.genes)[q <= 0.10]
    fdp = float(np.mean([g not in truth for g in called])) if called.size else 0.0
    top = np.asarray(fused.genes)[fused.order()][:PLANTED]
    precision = float(np.mean([g in truth for g in top])) if truth else float("nan")
    return int(called.size), fdp, precision


def _cell(values: list[tuple[int, float, float]]) -> str:
    calls = [v[0] for v in values]
    fdp = [v[1] for v in values]
    prec = [v[2] for v in values]
    out = f"{np.mean(calls):.0f} ({min(calls)}-{max(calls)}) / {np.mean(fdp):.2f}"
    if not np.isnan(prec).all():
        out += f" / {np.mean(prec):.2f}"
    return out


def table(seeds: int, signed: bool) -> list[tuple[str, dict[str, list]]] | None:
    """Per row of :data:`ROWS` the (calls, FDP, precision) of each seed for the default
    reading, ``tested=`` and RRA (printed as the rows are done); None without the data."""
    root = _shared()
    if root is None:
        return None
    logging.getLogger("kofs").setLevel(logging.ERROR)
    M, genes = _b_lineage(root)
    universe = genes.tolist()
    print(
        f"ALL B-lineage, {len(genes):,} genes, {STUDIES} studies of {PER_GROUP} + {PER_GROUP} "
        f"samples, {seeds} seeds, {'signed' if signed else 'p-value'} tables; cells: "
        "calls at q <= 0.10 (range) / FDP / top-200 precision, means over the seeds\n"
    )
    print("| tables | default | cut tables read as tested genes (`tested=`) | RRA |")
    print("|---|---|---|---|")
    out = []
    for name, which, how, planted in ROWS:
        cells: dict[str, list] = {"default": [], "tested": [], "rra": []}
        for seed in range(seeds):
            tables, truth = studies(M, genes, seed, planted, signed)
            lists = {
                k: _without_padj(cut(t, how) if int(k[-1]) in which else t)
                for k, t in tables.items()
            }
            named = [f"study{j}" for j in which]
            cells["default"].append(measure(lists, truth, universe))
            cells["rra"].append(measure(lists, truth, universe, aggregate="rra"))
            if named and how != "ids200":
                cells["tested"].append(measure(lists, truth, universe, tested=named))
        tested = _cell(cells["tested"]) if cells["tested"] else "-"
        print(
            f"| {name} | {_cell(cells['default'])} | {tested} | {_cell(cells['rra'])} |",
            flush=True,
        )
        out.append((name, cells))
    return out


def run() -> list[dict]:
    """Rows for ``bench/run.py`` (2 seeds): per row of the table, the default reading's mean
    calls' FDP at q <= 0.10 and its top-200 precision."""
    rows = table(2, signed=False)
    if rows is None:
        return []
    out = []
    for name, cells in rows:
        fdp = float(np.mean([v[1] for v in cells["default"]]))
        out.append({"benchmark": f"cut p-value tables: {name}", "value": fdp, "unit": "FDP"})
        prec = [v[2] for v in cells["default"]]
        if not np.isnan(prec).all():
            out.append(
                {
                    "benchmark": f"cut p-value tables: {name}",
                    "value": float(np.mean(prec)),
                    "unit": "top-200 precision",
                }
            )
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--signed", action="store_true", help="tables with fold changes (DESeq2's)")
    args = ap.parse_args()
    if table(args.seeds, args.signed) is None:
        print("needs the shared data (../shared beside the repository or $KOFS_SHARED)")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
