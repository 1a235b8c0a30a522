"""A single-cell count simulator written apart from :func:`kofs.datasets.splat_counts`, so that
the single-cell benchmark has data whose shape no kofs default was chosen on.

How it differs from the Splatter-like generator: cell types form a hierarchy (two lineages,
each with sub-types; a gene can mark a lineage, a type, or a pair of types), fold changes are
drawn from a Laplace (many small, few large), both up and down; baseline means follow a gamma
mixture fitted by eye to 10x data (most genes rare, a tail of high ones); dispersion falls with
the mean as ``0.05 + 1.5 / sqrt(mu)`` times a log-normal gene factor; library sizes are
log-normal with a type-specific depth (some types are larger cells); a cycle programme (G2M-like,
a cell-level intensity) in 15-25 % of cells across types; 13 mitochondrial genes (``MT-``) whose
share rises with a per-cell stress score; a 40-gene immediate-early stress module in 10 % of
cells. Identity truth: genes whose mean differs between types by at least ``min_lfc`` (log2),
set from the drawn means (not from which genes were chosen to change).

``simulate(n_cells, n_genes, seed)`` returns (counts CSR cells x genes, groups, gene names,
identity bool, nuisance bool).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def _types(rng: np.random.Generator, n_types: int) -> tuple[np.ndarray, np.ndarray]:
    """Type proportions (unequal: 2-35 %) and each type's lineage (0 or 1)."""
    w = np.sort(rng.dirichlet(np.full(n_types, 0.9)))[::-1]
    w = np.clip(w, 0.02, None)
    w /= w.sum()
    lineage = (np.arange(n_types) % 2).astype(int)
    rng.shuffle(lineage)
    return w, lineage


def simulate(
    n_cells: int = 5000,
    n_genes: int = 8000,
    seed: int = 1,
    *,
    n_types: int = 7,
    de_share: float = 0.08,
    min_lfc: float = 0.5,
) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    names = np.array([f"Gene{j:05d}" for j in range(n_genes)], dtype=object)
    # baseline expression (share of a cell's counts x 1e4): most genes rare
    rare = rng.random(n_genes) < 0.7
    base = np.where(rare, rng.gamma(0.6, 0.15, n_genes), rng.gamma(1.2, 1.2, n_genes)) + 1e-3
    w, lineage = _types(rng, n_types)
    log_mu = np.tile(np.log(base), (n_types, 1))  # types x genes
    chosen = rng.choice(n_genes, int(de_share * n_genes), replace=False)
    for g in chosen:
        level = rng.random()
        lfc = rng.laplace(0.0, 0.9)
        lfc = np.sign(lfc) * (0.4 + abs(lfc))  # in log2
        if level < 0.25:  # a lineage
            who = lineage == rng.integers(2)
        elif level < 0.45:  # two types
            who = np.isin(np.arange(n_types), rng.choice(n_types, 2, replace=False))
        else:  # one type
            who = np.arange(n_types) == rng.integers(n_types)
        log_mu[who, g] += lfc * np.log(2)
    # nuisance: a cycle programme, a stress module, mitochondrial genes
    rest = np.setdiff1d(np.arange(n_genes), chosen)
    nuisance_genes = rng.choice(rest, 140, replace=False)
    cycle, stress = nuisance_genes[:100], nuisance_genes[100:]
    mito = rng.choice(np.setdiff1d(rest, nuisance_genes), 13, replace=False)
    for j, g in enumerate(mito):
        names[g] = f"MT-G{j}"
    log_mu[:, mito] = np.log(rng.gamma(4.0, 8.0, mito.size))
    groups = rng.choice(n_types, n_cells, p=w)
    depth = (
        np.exp(rng.normal(np.log(4000), 0.45, n_cells))
        * np.exp(rng.normal(0, 0.25, n_types))[groups]
    )
    cyc = (rng.random(n_cells) < rng.uniform(0.15, 0.25)) * rng.uniform(0.5, 1.5, n_cells)
    st = (rng.random(n_cells) < 0.10) * rng.uniform(0.5, 1.5, n_cells)
    mito_up = np.exp(rng.normal(0, 0.3, n_cells) + 0.8 * st)
    disp_gene = np.exp(rng.normal(0, 0.4, n_genes))
    rows, cols, vals = [], [], []
    for start in range(0, n_cells, 2000):
        idx = np.arange(start, min(start + 2000, n_cells))
        lm = log_mu[groups[idx]].copy()
        lm[:, cycle] += np.outer(cyc[idx], rng.uniform(1.0, 2.5, cycle.size))
        lm[:, stress] += np.outer(st[idx], rng.uniform(1.0, 2.5, stress.size))
        lm[:, mito] += np.log(mito_up[idx])[:, None]
        share = np.exp(lm)
        share /= share.sum(axis=1, keepdims=True)
        mu = share * depth[idx, None]
        phi = (0.05 + 1.5 / np.sqrt(np.maximum(mu, 1e-3))) * disp_gene
        phi = np.minimum(phi, 50.0)
        lam = rng.gamma(1.0 / phi, mu * phi)
        c = rng.poisson(lam)
        r, k = np.nonzero(c)
        rows.append(r + start)
        cols.append(k)
        vals.append(c[r, k])
    X = sp.csr_matrix(
        (np.concatenate(vals).astype(np.float32), (np.concatenate(rows), np.concatenate(cols))),
        shape=(n_cells, n_genes),
    )
    # identity: mean (share) differs between two types by >= min_lfc log2, among expressed genes
    share_t = np.exp(log_mu)
    share_t /= share_t.sum(axis=1, keepdims=True)
    spread = (np.log2(share_t).max(axis=0) - np.log2(share_t).min(axis=0)) >= min_lfc
    expressed = (share_t * np.median(depth)).max(axis=0) >= 0.05
    identity = spread & expressed
    identity[mito] = False
    nuisance = np.zeros(n_genes, dtype=bool)
    nuisance[nuisance_genes] = True
    nuisance[mito] = True
    return X, np.array([f"type{t}" for t in groups], dtype=object), names, identity, nuisance
