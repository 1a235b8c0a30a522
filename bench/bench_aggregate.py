"""Rank aggregation at gene scale: 10 lists x 50,000 genes through ``kofs.aggregate.aggregate``.

The lists share a latent signal with list-specific noise (so they agree partly, as real rankers
do). Timed: EM (default Newton solver; unsupervised and supervised), the literal EM iteration
(1000 iterations, for reference), Borda, RRA (Bonferroni and exact), and R RobustRankAggreg's
``aggregateRanks(rmat, method = "RRA")`` on the same normalised ranks when ``Rscript`` and the
package are installed.
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


def run() -> list[dict]:
    from kofs.aggregate import aggregate, rank_matrix
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
    _, R = rank_matrix(lists)
    r_row = _r_rra(R, rra_pvalues(R / M))
    if r_row is not None:
        rows.append(r_row)
    return rows
