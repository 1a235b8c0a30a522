"""Rank aggregation at gene scale: 10 lists x 50,000 genes through ``kofs.aggregate.aggregate``.

The lists share a latent signal with list-specific noise (so they agree partly, as real rankers
do). Timed: EM (default Newton solver; unsupervised and supervised), the literal EM iteration
(1000 iterations, for reference), Borda, RRA (Bonferroni and exact), and R RobustRankAggreg's
``aggregateRanks(rmat, method = "RRA")`` on the same normalised ranks when ``Rscript`` and the
package are installed. Issue 12: RRA + Stuart on 10 lists x 20,000 genes (target < 1 s), full
and partial (top-2,000) lists through ``kofs.aggregate_lists``, with R's RRA and Stuart on the
same full lists.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
from _util import timed

M, L = 50_000, 10


def _lists():
    from kofs.types import Ranking

    rng = np.random.default_rng(0)
    genes = [f"G{i}" for i in range(M)]
    base = rng.normal(size=M)
    return (
        genes,
        [
            Ranking(
                f"list{j}",
                genes,
                base + rng.normal(scale=0.5 + 0.3 * j, size=M),
                higher_is_better=True,
            )
            for j in range(L)
        ],
        base,
    )


def _r_rra(R: np.ndarray, expected_p: np.ndarray) -> dict | None:
    """Time R's aggregateRanks on the same matrix; None when R or the package is missing."""
    if shutil.which("Rscript") is None:
        return None
    script = """
suppressPackageStartupMessages(library(RobustRankAggreg))
args <- commandArgs(TRUE)
rmat <- as.matrix(read.table(args[1], sep = "\\t"))
rownames(rmat) <- seq_len(nrow(rmat))
t <- system.time(res <- aggregateRanks(rmat = rmat / nrow(rmat), method = "RRA"))[["elapsed"]]
p <- res$Score[order(as.integer(res$Name))]
writeLines(c(sprintf("%.6f", t), sprintf("%.17g", p)), args[2])
"""
    with tempfile.TemporaryDirectory() as tmp:
        src, out, code = Path(tmp, "R.tsv"), Path(tmp, "out.txt"), Path(tmp, "rra.R")
        np.savetxt(src, R, fmt="%.1f", delimiter="\t")
        code.write_text(script)
        proc = subprocess.run(["Rscript", str(code), str(src), str(out)], capture_output=True)
        if proc.returncode != 0:
            return None
        seconds, *p = out.read_text().split()
    p = np.array(p, dtype=float)
    diff = float(np.max(np.abs(p - expected_p) / np.maximum(expected_p, 1e-300)))
    return {
        "benchmark": f"R RobustRankAggreg RRA {L} x {M:,} (reference)",
        "value": float(seconds),
        "unit": "s",
        "target": None,
        "note": f"same ranks; max relative difference to kofs p-values {diff:.1e}",
    }


def _r_rra_stuart(R: np.ndarray, n_genes: int) -> list[dict]:
    """R's RRA and Stuart on the same ranks (seconds, as measured inside R)."""
    if shutil.which("Rscript") is None:
        return []
    script = """
suppressPackageStartupMessages(library(RobustRankAggreg))
args <- commandArgs(TRUE)
rmat <- as.matrix(read.table(args[1], sep = "\\t")) / as.numeric(args[3])
rownames(rmat) <- seq_len(nrow(rmat))
a <- system.time(aggregateRanks(rmat = rmat, method = "RRA"))[["elapsed"]]
b <- system.time(aggregateRanks(rmat = rmat, method = "stuart"))[["elapsed"]]
writeLines(sprintf("%.6f", c(a, b)), args[2])
"""
    with tempfile.TemporaryDirectory() as tmp:
        src, out, code = Path(tmp, "R.tsv"), Path(tmp, "out.txt"), Path(tmp, "rs.R")
        np.savetxt(src, R, fmt="%.1f", delimiter="\t")
        code.write_text(script)
        proc = subprocess.run(
            ["Rscript", str(code), str(src), str(out), str(n_genes)], capture_output=True
        )
        if proc.returncode != 0:
            return []
        rra, stuart = (float(x) for x in out.read_text().split())
    L = R.shape[1]
    return [
        {
            "benchmark": f"R RobustRankAggreg RRA {L} x {n_genes:,} (reference)",
            "value": rra,
            "unit": "s",
            "target": None,
            "note": "aggregateRanks(rmat, method = 'RRA')",
        },
        {
            "benchmark": f"R RobustRankAggreg stuart {L} x {n_genes:,} (reference)",
            "value": stuart,
            "unit": "s",
            "target": None,
            "note": "aggregateRanks(rmat, method = 'stuart')",
        },
    ]


def _rra_stuart_rows() -> list[dict]:
    """Issue 12's target: RRA + Stuart on 10 lists x 20,000 genes in < 1 s."""
    from kofs.aggregate import aggregate
    from kofs.aggregate.partial import partial_rank_matrix
    from kofs.pipeline.user_lists import aggregate_lists
    from kofs.types import Ranking

    m, n_lists = 20_000, 10
    rng = np.random.default_rng(12)
    genes = [f"G{i}" for i in range(m)]
    base = rng.normal(size=m)
    lists = [
        Ranking(f"list{j}", genes, base + rng.normal(scale=1.0 + 0.2 * j, size=m), True)
        for j in range(n_lists)
    ]
    tops = {r.name: r.top(2000) for r in lists}
    rows = []
    seconds, _ = timed(lambda: (aggregate(lists, "rra"), aggregate(lists, "stuart")), repeat=3)
    rows.append(
        {
            "benchmark": f"RRA + Stuart {n_lists} x {m:,} (full lists)",
            "value": seconds,
            "unit": "s",
            "target": 1.0,
            "note": "issue 12; aggregate(lists, 'rra') then 'stuart'",
        }
    )
    seconds, _ = timed(
        lambda: (
            aggregate_lists(tops, aggregate="rra", universe=m),
            aggregate_lists(tops, aggregate="stuart", universe=m),
        ),
        repeat=3,
    )
    rows.append(
        {
            "benchmark": f"RRA + Stuart {n_lists} top-2,000 lists, N = {m:,}",
            "value": seconds,
            "unit": "s",
            "target": 1.0,
            "note": "aggregate_lists: harmonisation included",
        }
    )
    _, R = partial_rank_matrix(lists)
    return rows + _r_rra_stuart(R, m)


def run() -> list[dict]:
    from kofs.aggregate import aggregate
    from kofs.aggregate.partial import partial_rank_matrix
    from kofs.aggregate.rra import rra_pvalues

    genes, lists, base = _lists()
    relevant = [genes[i] for i in np.argsort(-base)[:200]]
    rows = []

    def row(name, fn, target, note_fn=lambda out: ""):
        seconds, out = timed(fn, repeat=3)
        rows.append(
            {
                "benchmark": name,
                "value": seconds,
                "unit": "s",
                "target": target,
                "note": note_fn(out),
            }
        )
        return out

    def em_note(out):
        return (
            f"iterations {out.info['iterations']}, converged {out.info['converged']}, "
            f"max weight {out.weights.max():.3f}"
        )

    row(
        f"EM (newton) {L} lists x {M:,} genes",
        lambda: aggregate(lists, "em", bootstrap=0),
        1.0,
        em_note,
    )
    row(
        f"EM (newton) supervised |G| = 200, {L} x {M:,}",
        lambda: aggregate(lists, "em", relevant_genes=relevant, bootstrap=0),
        1.0,
        em_note,
    )
    row(
        f"EM (newton) + 200 bootstrap replicates, {L} x {M:,}",
        lambda: aggregate(lists, "em", bootstrap=200),
        None,
        em_note,
    )

    def rel_note(out):
        d = out.diagnostics
        return (
            f"gain {d.get('loglik_gain', 0):.1f} nats, identified {d.get('identified')}, "
            f"max weight {out.weights.max():.3f}"
        )

    row(
        f"reliability (fit + diagnostics, no bootstrap) {L} x {M:,}",
        lambda: aggregate(lists, "reliability", bootstrap=0),
        1.0,
        rel_note,
    )
    row(
        f"reliability + 200 bootstrap replicates {L} x {M:,}",
        lambda: aggregate(lists, "reliability", bootstrap=200),
        2.0,
        rel_note,
    )
    seconds, out = timed(lambda: aggregate(lists, "em", params={"solver": "em"}, bootstrap=0))
    rows.append(
        {
            "benchmark": f"EM (literal iteration) {L} x {M:,}",
            "value": seconds,
            "unit": "s",
            "target": None,
            "note": "reference only: " + em_note(out),
        }
    )
    row(f"Borda {L} x {M:,}", lambda: aggregate(lists, "borda"), 1.0)
    row(f"RRA {L} x {M:,}", lambda: aggregate(lists, "rra"), 1.0)
    row(
        f"RRA exact p-value {L} x {M:,}",
        lambda: aggregate(lists, "rra", params={"exact": True}),
        2.0,
    )
    _, R = partial_rank_matrix(lists)
    r_row = _r_rra(R, rra_pvalues(R / M))
    if r_row is not None:
        rows.append(r_row)
    return rows + _rra_stuart_rows()
