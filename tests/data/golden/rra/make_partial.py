"""Write the partial-list inputs of the RRA / Stuart golden tests (run from this folder).

Each ``<case>_lists.tsv`` has the columns ``list``, ``rank`` and ``gene``: every list's genes
in rank order (1 = best), lists of different lengths drawn from different sub-universes, so that
most genes are absent from some lists. ``make_partial.R`` computes RobustRankAggreg's scores.
NumPy seed 20121005.
"""

import numpy as np

rng = np.random.default_rng(20121005)


def make(case: str, n_genes: int, lengths: list[int], n_signal: int, effect: float) -> None:
    genes = np.array([f"{case[0].upper()}{i:04d}" for i in range(n_genes)])
    signal = np.r_[np.full(n_signal, effect), np.zeros(n_genes - n_signal)]
    rows = []
    for j, n in enumerate(lengths):
        measured = rng.choice(n_genes, size=int(0.8 * n_genes), replace=False)
        score = signal[measured] + rng.normal(size=measured.size)
        top = measured[np.argsort(-score, kind="stable")[:n]]
        rows += [(f"L{j}", k + 1, genes[g]) for k, g in enumerate(top)]
    with open(f"{case}_lists.tsv", "w") as fh:
        fh.write("list\trank\tgene\n")
        for name, rank, gene in rows:
            fh.write(f"{name}\t{rank}\t{gene}\n")


# 6 lists of 25..200 genes over 300 genes
make("partial", 300, [40, 90, 150, 25, 200, 60], n_signal=15, effect=2.0)
# 40 short lists over 200 genes: R's alternating Stuart recursion loses its digits
make("many", 200, [int(x) for x in rng.integers(10, 60, 40)], n_signal=10, effect=2.5)
