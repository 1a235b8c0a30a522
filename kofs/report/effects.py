"""Direction and size of a gene's difference between sample groups, for the genes a person reads
(the top of a ranking): which group expresses it most, by how much, in how many samples.

Only the given genes' columns are read (a chunked matrix computes those columns only), so the
cost does not grow with the genome. The scale is read from those columns: values with a
negative entry or none above :data:`LOG_MAX` are taken as log-scale, and the effect is the
difference of group means (a log fold change); otherwise the effect is the ratio of group means
(a fold change). Sparse (single-cell) matrices also give the fraction of samples with a
non-zero value in each group.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = ["GeneEffect", "LOG_MAX", "columns", "gene_effects", "is_log_scale"]

#: Largest value of a matrix taken as log-scale expression.
LOG_MAX = 30.0


@dataclass(frozen=True)
class GeneEffect:
    """How one gene differs between the groups.

    Attributes
    ----------
    group : str
        The group of highest mean.
    versus : str
        The other group (two groups), or ``"the rest"``.
    effect : float
        Difference of means (``log_scale``) or ratio of means, ``group`` over ``versus``.
    log_scale : bool
    mean : float
        Mean in ``group``.
    mean_versus : float
    detected : float or None
        Fraction of ``group``'s samples with a non-zero value (sparse matrices), else None.
    detected_versus : float or None
    """

    group: str
    versus: str
    effect: float
    log_scale: bool
    mean: float
    mean_versus: float
    detected: float | None = None
    detected_versus: float | None = None

    def text(self, unit: str = "samples") -> str:
        """E.g. ``"higher in B (+2.31 log)"``, ``"highest in NK (x5.2)"``."""
        word = "higher" if self.versus != "the rest" else "highest"
        size = f"{self.effect:+.2f} log" if self.log_scale else f"×{self.effect:.3g}"
        return f"{word} in {self.group} ({size})"


def columns(values: Any, idx: Sequence[int]) -> np.ndarray:
    """The columns ``idx`` of a dense, sparse or chunked matrix as a dense float array."""
    X = values[:, np.asarray(idx, dtype=np.int64)]
    if hasattr(X, "compute"):  # a Dask array
        X = X.compute()
    if sp.issparse(X):
        X = X.toarray()
    return np.asarray(X, dtype=np.float64)


def is_log_scale(X: np.ndarray) -> bool:
    """Whether values look like log-scale expression (a negative value, or none above
    :data:`LOG_MAX`)."""
    finite = X[np.isfinite(X)]
    return bool(finite.size == 0 or finite.min() < 0 or finite.max() <= LOG_MAX)


def gene_effects(
    X: np.ndarray, labels: Sequence[str], *, sparse: bool = False
) -> list[GeneEffect | None]:
    """The :class:`GeneEffect` of each column of ``X`` (samples x genes) between the groups of
    ``labels`` (one per sample; empty = unlabelled); None for a column without values in two
    groups."""
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(labels, dtype=object)
    groups = sorted({str(v) for v in y if v not in ("", None)})
    if len(groups) < 2:
        return [None] * X.shape[1]
    log = is_log_scale(X)
    masks = [y == g for g in groups]
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.vstack([np.nanmean(X[m], axis=0) for m in masks])  # groups x genes
    out: list[GeneEffect | None] = []
    for j in range(X.shape[1]):
        mj = means[:, j]
        if np.sum(np.isfinite(mj)) < 2:
            out.append(None)
            continue
        best = int(np.nanargmax(mj))
        if len(groups) == 2:
            other_mask, versus = masks[1 - best], groups[1 - best]
            other = mj[1 - best]
        else:
            other_mask, versus = ~masks[best] & (y != ""), "the rest"
            other = float(np.nanmean(X[other_mask, j]))
        a = float(mj[best])
        if log:
            effect = a - other
        else:
            effect = a / other if other > 0 else float("inf")
        det = det_v = None
        if sparse:
            det = float(np.mean(X[masks[best], j] != 0))
            det_v = float(np.mean(X[other_mask, j] != 0))
        out.append(GeneEffect(groups[best], versus, effect, log, a, float(other), det, det_v))
    return out


def marker_fold_changes(markers: Any, genes: Sequence[str], effects: Sequence[Any]) -> list:
    """markers.tsv's ``logfoldchange`` (scanpy's: log2 of the ratio of the group's and the
    rest's mean of expm1 of the values) of each gene of ``genes`` in the group of its effect
    (:func:`gene_effects`), None where there is no marker table (``markers`` None) or the table
    lacks the gene or group. The report and ``RunResult.top()`` give it beside (the report: in
    place of) the difference of mean log values, so that they and markers.tsv give the same
    number for one gene and group."""
    if markers is None:
        return [None] * len(genes)
    groups = {g: k for k, g in enumerate(markers.groups)}
    at = {g: k for k, g in enumerate(markers.genes)}
    out: list[float | None] = []
    for gene, eff in zip(genes, effects, strict=True):
        k = groups.get(eff.group) if eff is not None else None
        j = at.get(gene)
        ok = k is not None and j is not None and eff.versus in ("the rest", *markers.groups)
        out.append(float(markers.logfoldchanges[k, j]) if ok and len(markers.groups) > 1 else None)
    return out
