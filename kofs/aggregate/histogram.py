"""A rank list's nonparametric relevant class: piecewise-uniform relevant and background
densities over bins of the list's positions (:mod:`kofs.aggregate.envelope` fits them), and the
likelihood ratio of any interval of positions under them."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Envelope", "interval_llr"]


@dataclass(frozen=True)
class Envelope:
    """The fitted histogram classes: bin ``edges`` (u), each list's relevant and background
    bin masses ``rel``, ``bg`` (D, B) and the fraction ``rho`` of relevant genes of their fit;
    ``capped`` marks the lists whose terms are bounded."""

    edges: np.ndarray
    rel: np.ndarray
    bg: np.ndarray
    capped: np.ndarray
    iterations: int
    rho: float

    def log_ratio(self, lo: np.ndarray, hi: np.ndarray, lists: np.ndarray) -> np.ndarray:
        """The histogram class's log likelihood ratio of each interval ``[lo, hi]`` of list
        ``lists`` (arrays of one shape); +inf for a list that is not capped."""
        out = np.full(np.shape(lo), np.inf)
        for j in np.flatnonzero(self.capped):
            at = lists == j
            out[at] = interval_llr(self.edges, self.rel[j], self.bg[j], lo[at], hi[at])
        return out


def _cumulative(mass: np.ndarray, edges: np.ndarray, u: np.ndarray) -> np.ndarray:
    """The mass below u of the piecewise-uniform density with bin masses ``mass``."""
    c = np.concatenate([[0.0], np.cumsum(mass)])
    k = np.clip(np.searchsorted(edges, u, side="right") - 1, 0, len(mass) - 1)
    frac = np.clip((u - edges[k]) / (edges[k + 1] - edges[k]), 0.0, 1.0)
    return c[k] + mass[k] * frac


def interval_llr(edges, rel, bg, lo, hi) -> np.ndarray:
    """log(relevant mass / background mass) of each interval ``[lo, hi]`` of positions."""
    a = _cumulative(rel, edges, hi) - _cumulative(rel, edges, lo)
    b = _cumulative(bg, edges, hi) - _cumulative(bg, edges, lo)
    return np.log(np.maximum(a, 1e-300)) - np.log(np.maximum(b, 1e-300))
