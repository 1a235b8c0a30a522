"""Rankers of the variability of counts beyond their mean-variance relation (single cell).

The variance of a count grows with its mean, so ranking genes by the variance of counts or
log-counts mostly ranks them by expression level. These rankers measure variability against a
count model instead, as scanpy's highly-variable-gene flavours and scry do. They need the UMI
counts, or scanpy's ``normalize_total`` + ``log1p`` of them, which are turned back into counts
(:mod:`kofs._compute.counts`; anything else is refused with one line). Kernels:
:mod:`kofs.rankers._count_kernels`.
"""

from __future__ import annotations

from kofs.registry import Param, ranker

__all__: list[str] = []  # registry adapters only


def _counts(X, name: str, expression):
    from kofs._compute.counts import (
        counts_view,  # the count kernels (numba) load when a ranker runs
    )

    return counts_view(X, who=f"ranker {name!r}", where=expression.source)


def _info(counts) -> dict:
    return {"counts": counts.source}


def _memory(n: int, m: int, p, given) -> int:
    """Counts recovered from log-normalised values: one more copy of X; per-gene vectors."""
    return 2 * 8 * n * m


@ranker(
    "pearson-residuals",
    higher_is_better=True,
    summary="Variance of analytic Pearson residuals of counts (scanpy's pearson_residuals HVG)",
    reference="Lause, Berens & Kobak, Genome Biol 22:258 (2021), eqs. 3-5",
    family="counts",
    sparse=True,
    expression=True,
    counts=True,
    memory=_memory,
    params={
        "theta": Param(
            100.0, float, "overdispersion theta of the null model", low=0, closed="neither"
        ),  # fmt: skip
        "clip": Param(
            None,
            float,
            "clip residuals to [-clip, clip] (default sqrt(n_cells))",
            low=0,
            closed="neither",
        ),  # fmt: skip
    },
)
def _pearson(X, inputs, *, seed, theta, clip, expression):
    counts = _counts(X, "pearson-residuals", expression)
    from kofs.rankers._count_kernels import pearson_residual_variance

    return pearson_residual_variance(counts, theta=theta, clip=clip), _info(counts)


@ranker(
    "deviance",
    higher_is_better=True,
    summary="Binomial deviance of counts against a constant share of each cell (scry)",
    reference="Townes, Hicks, Aryee & Irizarry, Genome Biol 20:295 (2019)",
    family="counts",
    sparse=True,
    expression=True,
    counts=True,
    memory=_memory,
)
def _deviance(X, inputs, *, seed, expression):
    counts = _counts(X, "deviance", expression)
    from kofs.rankers._count_kernels import binomial_deviance

    return binomial_deviance(counts), _info(counts)


@ranker(
    "seurat-v3",
    higher_is_better=True,
    summary="Variance of counts standardised by a loess fit of log variance on log mean",
    reference="Stuart et al., Cell 177:1888 (2019); scanpy flavor='seurat_v3'",
    family="counts",
    sparse=True,
    expression=True,
    counts=True,
    memory=_memory,
    params={
        "span": Param(
            0.3,
            float,
            "loess span (fraction of genes in each local fit)",
            low=0,
            high=1,
            closed="right",
        ),  # fmt: skip
    },
)
def _seurat_v3(X, inputs, *, seed, span, expression):
    counts = _counts(X, "seurat-v3", expression)
    from kofs.rankers._count_kernels import seurat_v3_variance

    return seurat_v3_variance(counts, span=span), _info(counts)
