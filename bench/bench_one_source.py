"""Several tools' rankings of one data set, fused by default (docs/aggregation.md, "One data
set, one source").

Each case is a two-group data set of 2,000 genes x 20 + 20 samples (N(0, 1) values; the
first 100 genes up by 1 SD in the second group, or none), ranked by a Welch t-test and a
Mann-Whitney test (-log p: plain rankings, as a user gives them; in the last two cases the
t-test as its top 100 genes only, as a published table gives them, declared as such:
``top_k``), with or without the t-test
ranking of an independent data set of the same genes and effects, and three random rankings.
Every fusion goes through :func:`kofs.aggregate_lists` with the universe given (the path of
``kofs aggregate``). Printed per case (over the seeds): the calls at q <= 0.10 and their false
discovery proportion (range), the top-100 precision and the sources found.

Run: ``python bench/bench_one_source.py [--seeds N]`` (default 6, ~1 min).
"""

from __future__ import annotations

import argparse
import logging

import numpy as np
import pandas as pd
from scipy.stats import mannwhitneyu, ttest_ind

from kofs import aggregate_lists

GENES = 2000
CHANGED = 100
#: (name, changed genes, an independent data set's list, random lists, the t-test's top k: 0
#: a full ranking)
CASES = (
    ("nothing changed", 0, True, 3, 0),
    ("nothing changed, no independent list", 0, False, 3, 0),
    ("100 changed, independent list", CHANGED, True, 3, 0),
    ("100 changed, only the two rankings", CHANGED, False, 0, 0),
    ("nothing changed, the t-test's top 100", 0, True, 3, 100),
    ("100 changed, the t-test's top 100, independent list", CHANGED, True, 3, 100),
)


def lists_of(seed: int, changed: int, second: bool, randoms: int, top: int = 0, n: int = 20):
    """The lists of one case (name -> pandas Series of scores; ``top``: the t-test's top
    genes only) and the truth (bool, by gene)."""
    rng = np.random.default_rng(seed)
    genes = [f"g{i:05d}" for i in range(GENES)]

    def data():
        A, B = rng.normal(size=(n, GENES)), rng.normal(size=(n, GENES))
        B[:, :changed] += 1.0
        return A, B

    A, B = data()
    scores = {
        "t": -np.log(ttest_ind(B, A, axis=0, equal_var=False).pvalue),
        "mann-whitney": -np.log(mannwhitneyu(B, A, axis=0).pvalue),
    }
    if second:
        A, B = data()
        scores["t-study2"] = -np.log(ttest_ind(B, A, axis=0, equal_var=False).pvalue)
    for k in range(randoms):
        scores[f"random{k + 1}"] = rng.normal(size=GENES)
    truth = np.arange(GENES) < changed
    out = {k: pd.Series(v, index=genes) for k, v in scores.items()}
    if top:
        out["t"] = out["t"].nlargest(top)
    return out, truth


def one_run(seed: int, changed: int, second: bool, randoms: int, top: int) -> dict:
    lists, truth = lists_of(seed, changed, second, randoms, top)
    genes = [f"g{i:05d}" for i in range(GENES)]
    # a table cut to its top is declared so (``kofs aggregate --top-k t``)
    fused = aggregate_lists(
        lists, direction="desc", universe=genes, top_k=["t"] if top else None
    ).final
    index = np.array([int(g[1:]) for g in fused.genes])
    q = fused.statistics.get("q_value")
    called = index[q <= 0.10] if q is not None else np.array([], dtype=int)
    top = index[fused.order()[:CHANGED]]
    return {
        "calls": int(called.size),
        "fdp": float((~truth[called]).mean()) if called.size else 0.0,
        "precision": float(truth[top].mean()) if changed else np.nan,
        "sources": fused.diagnostics.get("sources"),
    }


def table(seeds: int) -> list[dict]:
    logging.disable(logging.WARNING)  # each fusion's notices, on stderr, are not the table
    rows = []
    print("| case | calls | FDP | top-100 precision | sources |\n|---|---|---|---|---|")
    for name, changed, second, randoms, top in CASES:
        runs = [one_run(s, changed, second, randoms, top) for s in range(seeds)]
        calls = [r["calls"] for r in runs]
        fdp = [r["fdp"] for r in runs]
        prec = [r["precision"] for r in runs]
        grouped = sum(r["sources"] is not None for r in runs)
        rows.append({"case": name, "calls": calls, "fdp": fdp, "precision": prec})
        precision = "-" if not changed else f"{min(prec):.2f}-{max(prec):.2f}"
        print(
            f"| {name} | {min(calls)}-{max(calls)} | {min(fdp):.2f}-{max(fdp):.2f} | "
            f"{precision} | one source in {grouped} of {seeds} |",
            flush=True,
        )
    return rows


def run() -> list[dict]:
    """Rows for ``bench/run.py``: the most calls where nothing changed, and the largest FDP
    where 100 genes changed and an independent data set's list confirms them."""
    rows = {r["case"]: r for r in table(6)}
    return [
        {
            "benchmark": "one data set's rankings, nothing changed: most calls at q <= 0.10",
            "value": float(max(rows["nothing changed"]["calls"])),
            "unit": "genes",
            "target": 0.0,
        },
        {
            "benchmark": "one data set's rankings + an independent one: largest FDP (6 seeds)",
            "value": float(max(rows["100 changed, independent list"]["fdp"])),
            "unit": "FDP",
        },
        {
            "benchmark": "one data set's top-100 list and ranking + an independent one: "
            "largest FDP (6 seeds)",
            "value": float(max(rows["100 changed, the t-test's top 100, independent list"]["fdp"])),
            "unit": "FDP",
        },
    ]


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=6)
    table(ap.parse_args().seeds)
