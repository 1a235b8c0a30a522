"""A Splatter-like simulation of single-cell counts with groups and a nuisance programme.

The model follows Splatter (Zappia, Phipson & Oshlack 2017, *Genome Biology* 18:174; the
``splatSimulate`` defaults unless said otherwise), written from its paper, not its code:

* gene base means ``Gamma(shape=0.6, rate=0.3)``, a fraction ``0.05`` of them multiplied by an
  expression outlier factor ``LogNormal(4, 0.5)``;
* library sizes ``LogNormal(lib_loc, lib_scale)`` (default median ``e^8.5`` ~ 4,900 UMIs, a
  droplet-like depth; Splatter's default 11 is bulk-like);
* ``n_groups`` groups of unequal size (``group_probs``); each gene is differentially expressed
  (DE) in each group with probability ``de_prob``, by a factor ``LogNormal(0.1, 0.4)``, inverted
  with probability 0.5 (down-regulation);
* a **nuisance programme**: ``nuisance_genes`` genes (chosen among the non-DE genes) multiplied
  by ``LogNormal(log(nuisance_fold), 0.3)`` in a random ``nuisance_fraction`` of the cells,
  independently of the groups (a cell-cycle-like programme that is not cell identity);
* counts ``Poisson(Gamma)``: cell means ``lambda_ij = L_i * m_gj / sum_g m_gj`` with a
  biological coefficient of variation ``BCV_ij = (0.1 + 1 / sqrt(lambda_ij)) * sqrt(60 / chi2_60)``
  (one chi-square draw per gene), i.e. negative binomial counts whose dispersion falls with the
  mean.

Cells are drawn in blocks of rows straight into CSR: the dense ``n x m`` matrix is never held.
Deterministic for a seed (every block has its own child seed).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

__all__ = ["SplatCells", "splat_counts"]

#: Cells drawn per block (a dense block x genes array of means is held at a time).
_BLOCK = 2000


@dataclass(frozen=True)
class SplatCells:
    """A simulated data set.

    Attributes
    ----------
    X : scipy.sparse.csr_matrix of shape (n_cells, n_genes), float64
        Raw counts (non-negative integers).
    groups : ndarray of shape (n_cells,), int
        Group of every cell, 0..n_groups-1.
    de : ndarray of shape (n_genes,), bool
        Genes differentially expressed in at least one group (cell identity).
    nuisance : ndarray of shape (n_genes,), bool
        Genes of the nuisance programme.
    nuisance_cells : ndarray of shape (n_cells,), bool
        Cells in which the nuisance programme is active.
    genes, cells : tuple of str
    """

    X: sp.csr_matrix
    groups: np.ndarray
    de: np.ndarray
    nuisance: np.ndarray
    nuisance_cells: np.ndarray
    genes: tuple[str, ...]
    cells: tuple[str, ...]

    def labels(self) -> list[str]:
        """Group name of every cell (``"group0"``, ...)."""
        return [f"group{g}" for g in self.groups]


def splat_counts(
    n_cells: int,
    n_genes: int,
    *,
    n_groups: int = 8,
    group_probs: tuple[float, ...] | None = None,
    de_prob: float = 0.0173,
    nuisance_genes: int = 100,
    nuisance_fraction: float = 0.2,
    nuisance_fold: float = 3.0,
    de_loc: float = 0.3,
    de_scale: float = 0.6,
    bcv_common: float = 0.1,
    bcv_low: float = 0.3,
    lib_loc: float = 9.0,
    lib_scale: float = 0.45,
    seed: int = 0,
) -> SplatCells:
    """Draw a :class:`SplatCells` (see the module docstring for the model).

    Parameters
    ----------
    n_cells, n_genes : int
    n_groups : int
    group_probs : tuple of float, optional
        Group proportions (default: unequal, from 30 % down to 2 % for 8 groups: a geometric
        series normalised to 1).
    de_prob : float
        Probability that a gene is DE in a given group (0.0173 makes ~13 % of the genes DE in
        at least one of 8 groups).
    nuisance_genes : int
        Genes of the nuisance programme (0: none).
    nuisance_fraction : float
        Fraction of cells in which it is active.
    nuisance_fold : float
        Median fold change of its genes there.
    lib_loc, lib_scale : float
        Log-normal library sizes (mean and sd of the log).
    seed : int
    """
    rng = np.random.default_rng(seed)
    if group_probs is None:
        w = 0.72 ** np.arange(n_groups)
        group_probs = tuple(w / w.sum())
    probs = np.asarray(group_probs, dtype=np.float64)
    probs = probs / probs.sum()
    base = rng.gamma(0.6, 1.0 / 0.3, size=n_genes)
    outlier = rng.random(n_genes) < 0.05
    base[outlier] *= rng.lognormal(4.0, 0.5, size=int(outlier.sum()))
    # per group DE factors (1 where not DE)
    is_de = rng.random((n_groups, n_genes)) < de_prob
    fac = rng.lognormal(de_loc, de_scale, size=(n_groups, n_genes))
    down = rng.random((n_groups, n_genes)) < 0.5
    fac = np.where(down, 1.0 / fac, fac)
    group_means = np.where(is_de, fac, 1.0) * base[None, :]
    de = is_de.any(axis=0)
    nuisance = np.zeros(n_genes, dtype=bool)
    if nuisance_genes > 0:
        pick = rng.choice(np.flatnonzero(~de), size=nuisance_genes, replace=False)
        nuisance[pick] = True
    nuisance_fac = np.ones(n_genes)
    nuisance_fac[nuisance] = rng.lognormal(np.log(nuisance_fold), 0.3, size=int(nuisance.sum()))
    bcv_gene = np.sqrt(60.0 / rng.chisquare(60.0, size=n_genes))
    groups = rng.choice(n_groups, size=n_cells, p=probs)
    active = rng.random(n_cells) < nuisance_fraction
    lib = rng.lognormal(lib_loc, lib_scale, size=n_cells)
    seeds = rng.bit_generator.seed_seq.spawn((n_cells + _BLOCK - 1) // _BLOCK)  # type: ignore[attr-defined]
    blocks = []
    for b, start in enumerate(range(0, n_cells, _BLOCK)):
        stop = min(n_cells, start + _BLOCK)
        r = np.random.default_rng(seeds[b])
        m = group_means[groups[start:stop]]
        m = np.where(active[start:stop, None], m * nuisance_fac[None, :], m)
        lam = m * (lib[start:stop] / m.sum(axis=1))[:, None]
        bcv = (bcv_common + bcv_low / np.sqrt(lam)) * bcv_gene[None, :]
        shape = 1.0 / (bcv * bcv)
        cell_means = r.gamma(shape, lam / shape)
        counts = r.poisson(cell_means).astype(np.float64)
        blocks.append(sp.csr_matrix(counts))
    X = sp.vstack(blocks, format="csr")
    width = len(str(max(n_cells - 1, 0)))
    gwidth = len(str(max(n_genes - 1, 0)))
    return SplatCells(
        X=X,
        groups=groups,
        de=de,
        nuisance=nuisance,
        nuisance_cells=active,
        genes=tuple(f"gene{j:0{gwidth}d}" for j in range(n_genes)),
        cells=tuple(f"cell{i:0{width}d}" for i in range(n_cells)),
    )
