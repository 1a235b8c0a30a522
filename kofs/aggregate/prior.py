"""The prior's design: knowledge lists and gene-level facts as covariates of P(relevant).

A knowledge list (relevance voting or propagation over GO, pathways, interactions: registry
family ``knowledge``) ranks genes by what is known, not by the samples. It enters the fused
ranking as covariates of the prior probability of relevance (:mod:`kofs.aggregate.posterior`),
whose coefficients are learned from the data evidence:

* ``<list>``: the normal score ``Phi^-1(1 - u)`` of the gene's normalised position u among the
  genes the source covers (mean 0; the prior log-odds is then linear in the same latent score
  as a data list's evidence, :mod:`kofs.aggregate.binormal`); 0 -- no information -- for
  a gene the source does not cover (no annotation, no edge: a NaN score), and for a gene the
  list was built from (a seed) unless a cross-fitted position exists (the gene's position in
  the list rebuilt without it, :mod:`kofs.aggregate.cross_fit`). A seed's membership in the
  known set is prior knowledge, not scored evidence: it is the ``known`` covariate.
* ``<list> covers``: 1 where the source covers the gene (present only when the source covers
  some genes and not others), so that "not annotated" is learned, not assumed to be "below".
* ``known``: 1 for the known relevant genes (``--relevant-genes``).
* any gene-level covariate given by the caller (e.g. ``study bias``, the log number of
  annotations and interactions of a gene: a well-studied gene then earns nothing by itself).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from scipy.special import ndtri

from kofs.aggregate.intervals import block_intervals
from kofs.aggregate.posterior import Prior

__all__ = ["knowledge_prior"]


def _score(u: np.ndarray) -> np.ndarray:
    """``Phi^-1(1 - u)``, u clipped to (1e-9, 1 - 1e-9)."""
    return -ndtri(np.clip(np.asarray(u, dtype=np.float64), 1e-9, 1 - 1e-9))


def knowledge_prior(
    ranks: np.ndarray,
    names: list[str] | tuple[str, ...],
    *,
    knowledge: np.ndarray,
    covered: np.ndarray | None = None,
    built_from: np.ndarray | None = None,
    held_out: tuple[np.ndarray, np.ndarray] | None = None,
    relevant: np.ndarray | None = None,
    covariates: Mapping[str, np.ndarray] | None = None,
) -> Prior:
    """The :class:`~kofs.aggregate.posterior.Prior` of the module docstring.

    Parameters
    ----------
    ranks : ndarray (M, L)
        Ranks of every list (NaN = absent).
    names : list of str
        List names (L).
    knowledge : bool (L,)
        True for the knowledge lists.
    covered : bool (M, L), optional
        Genes each list has knowledge about (finite score); default: present in the list.
    built_from : bool (M, L), optional
        Seeds of each list.
    held_out : (lo, hi) ndarrays (M, L), optional
        Cross-fitted intervals of the seeds (NaN elsewhere).
    relevant : bool (M,), optional
        Known relevant genes.
    covariates : mapping name -> ndarray (M,), optional
        Further gene-level covariates (NaN = unknown: set to the mean).
    """
    R = np.asarray(ranks, dtype=np.float64)
    M, L = R.shape
    present = ~np.isnan(R)
    cov = present if covered is None else (np.asarray(covered, bool) & present)
    columns: list[np.ndarray] = []
    labels: list[str] = []
    groups: list[str] = []
    for j in np.flatnonzero(np.asarray(knowledge, bool)):
        name = names[j]
        c = cov[:, j]
        if not c.any():
            continue
        seeds = np.zeros(M, bool) if built_from is None else np.asarray(built_from[:, j], bool)
        masked = ~c | seeds
        lo, hi = block_intervals(R[:, j : j + 1], masked[:, None])
        mid = 0.5 * (lo[:, 0] + hi[:, 0])
        x = np.where(masked, 0.0, _score(mid))
        if held_out is not None and seeds.any():
            hlo, hhi = held_out[0][:, j], held_out[1][:, j]
            have = seeds & ~np.isnan(hlo)
            if have.any():
                # the rebuilt list ranks every gene; rescale to the covered genes' share
                frac = max(c.mean(), 1.0 / M)
                x[have] = _score(0.5 * (hlo[have] + hhi[have]) / frac)
        columns.append(x)
        labels.append(name)
        groups.append(name)
        if not c.all():
            columns.append(c.astype(np.float64))
            labels.append(f"{name} covers")
            groups.append(name)
    if relevant is not None and np.any(relevant) and not np.all(relevant):
        columns.append(np.asarray(relevant, dtype=np.float64))
        labels.append("known")
        groups.append("known")
    for key, values in (covariates or {}).items():
        v = np.asarray(values, dtype=np.float64)
        if v.shape != (M,):
            raise ValueError(f"covariate {key!r}: {v.shape[0]} values for {M} genes")
        finite = np.isfinite(v)
        if not finite.any():
            continue
        v = np.where(finite, v, v[finite].mean())
        columns.append(v)
        labels.append(str(key))
        groups.append(str(key))
    X = np.column_stack(columns) if columns else np.zeros((M, 0))
    return Prior(X, tuple(labels), tuple(groups))
