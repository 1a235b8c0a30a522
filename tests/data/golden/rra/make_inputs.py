"""Write the input rank matrices of the RRA golden tests (run from this folder).

Each TSV has a ``gene`` column and one column per list with ranks (1 = best, ties averaged),
what :func:`kofs.aggregate.partial.complete_ranks` produces for full lists.
"""

import numpy as np
from scipy.stats import rankdata


def write(name, genes, ranks, lists):
    with open(f"{name}_ranks.tsv", "w") as fh:
        fh.write("gene\t" + "\t".join(lists) + "\n")
        for g, row in zip(genes, ranks, strict=True):
            fh.write(g + "\t" + "\t".join(repr(float(v)) for v in row) + "\n")


rng = np.random.default_rng(20120224)
# "full": 20 genes x 5 lists, permutations with signal for the first 5 genes, no ties
m, L = 20, 5
signal = np.r_[np.full(5, 2.0), np.zeros(m - 5)]
R = np.column_stack([rankdata(-(signal + rng.normal(size=m))) for _ in range(L)])
write("full", [f"g{i:02d}" for i in range(m)], R, [f"L{j}" for j in range(L)])
# "ties": 30 genes x 4 lists, rounded scores (averaged ties) and a bottom block of 6 genes
# tied in list L3 (a list that misses them)
m, L = 30, 4
signal = np.r_[np.full(6, 1.5), np.zeros(m - 6)]
cols = [rankdata(-np.round(signal + rng.normal(size=m), 0)) for _ in range(3)]
s = signal + rng.normal(size=m)
s[-6:] = -np.inf
cols.append(rankdata(-s))
write("ties", [f"t{i:02d}" for i in range(m)], np.column_stack(cols), [f"L{j}" for j in range(L)])
# "eight": 40 genes x 8 lists (for the exact p-value), no ties
m, L = 40, 8
signal = np.r_[np.full(4, 2.5), np.full(4, 1.0), np.zeros(m - 8)]
R = np.column_stack([rankdata(-(signal + rng.normal(size=m))) for _ in range(L)])
write("eight", [f"e{i:02d}" for i in range(m)], R, [f"L{j}" for j in range(L)])
