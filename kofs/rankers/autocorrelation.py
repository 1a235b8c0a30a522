"""Graph autocorrelation rankers: how smooth a gene is on the cell graph (single cell).

* ``hotspot``: Hotspot's local autocorrelation z-score under a count null
  (:func:`~kofs.rankers._autocorrelation_kernels.hotspot_statistic`) on cell graphs built as
  single-cell users build them (:func:`~kofs.knowledge.cell_graph.cell_graph`), with three
  safeguards:

  - **cross-fitting**: the genes are split at random (seeded) into two halves; each half is
    scored on the graph built from the most variable genes of the *other* half. A gene that
    helps build a graph is smoother on it by construction (a rare noisy gene makes the few
    cells expressing it neighbours): on a simulation of 8,000 cells x 15,000 genes, 201 of the
    205 non-identity genes of the top 500 built the graph they were scored on; cross-fitted,
    the top 500 held 74 % identity genes instead of 59 %;
  - **named nuisance programmes** (cell cycle, stress, mitochondrial, ribosomal genes,
    :func:`~kofs.knowledge.programmes.named_programmes`) never build the graph;
  - **identity-independent programmes** found in the data
    (:func:`~kofs.knowledge.programmes.independent_programmes`, among the candidate graph
    genes, on a subsample of cells) are left out of the graph genes with the genes that
    co-vary with them: a programme crossed with the cell groups (a cell-cycle-like activity in
    part of every group) is then no smoother than noise on the graph, and is not rewarded.

  The graph genes are chosen by ``hvg`` (default: the variance of Pearson residuals).
* ``morans-i``: Moran's I of the log-normalised values (scanpy's ``sc.metrics.morans_i``) on
  the given cell graph (``--use-graph``) or one cell graph of the most variable genes.
"""

from __future__ import annotations

from kofs.rankers.classic import SEARCH_PARAM
from kofs.registry import Param, ranker

__all__: list[str] = []  # registry adapters only

#: Scores that may pick the graph genes (count rankers of :mod:`kofs.rankers.counts`).
HVG_SCORES = ("pearson-residuals", "deviance", "seurat-v3")


HOTSPOT_PARAMS: dict[str, Param] = {
    "neighbors": Param(15, int, "neighbours per cell of the kNN graph", low=1),
    "n_top_genes": Param(1000, int, "most variable genes that build the cell graphs", low=2),
    "n_pcs": Param(50, int, "principal components of the cell graph", low=1),
    "hvg": Param(
        "pearson-residuals",
        str,
        "score that picks the graph genes",
        choices=HVG_SCORES,
    ),
    "cross_fit": Param(True, bool, "score each half of the genes on the other half's graph"),
    "programmes": Param(
        "exclude",
        str,
        "nuisance programmes (named and found in the data): exclude from the graph genes, or keep",
        choices=("exclude", "keep"),
    ),
    "search": SEARCH_PARAM,
}


def _hotspot_memory(n: int, m: int, p, given) -> int:
    """The counts (a copy when recovered), the log-normalised graph genes, the graphs."""
    k = p["neighbors"]
    return 2 * 8 * n * m + 8 * n * (p["n_top_genes"] + 4 * p["n_pcs"]) + 2 * 3 * 16 * n * k


@ranker(
    "hotspot",
    higher_is_better=True,
    summary="Hotspot z-score: smoothness on the cell graph beyond a count null (cross-fitted)",
    reference="DeTomaso & Yosef, Cell Systems 12:446 (2021); Lause et al. 2021 (graph genes)",
    family="graph autocorrelation",
    sparse=True,
    expression=True,
    counts=True,
    memory=_hotspot_memory,
    params=HOTSPOT_PARAMS,
)
def _hotspot(X, inputs, *, seed, expression, **p):
    from kofs.rankers._graph_autocorrelation import hotspot_scores

    z, info = hotspot_scores(X, seed=seed, expression=expression, **p)
    # Hotspot's z is N(0, 1) under its null (cross-fitted: each gene scored on a graph built
    # without it); the fusion reads its one-sided p-values (kofs.aggregate.nulls)
    return z, {**info, "null": {"distribution": "normal"}}


@ranker(
    "morans-i",
    higher_is_better=True,
    summary="Moran's I of log-normalised values on the cell graph (scanpy's morans_i)",
    reference="Moran, Biometrika 37:17 (1950); scanpy sc.metrics.morans_i",
    family="graph autocorrelation",
    uses=("similarity",),
    sparse=True,
    expression=True,
    counts=True,
    memory=_hotspot_memory,
    params={k: v for k, v in HOTSPOT_PARAMS.items() if k not in ("cross_fit", "programmes")},
)
def _morans(X, inputs, *, seed, expression, **p):
    from kofs.rankers._graph_autocorrelation import morans_scores

    return morans_scores(X, inputs, seed=seed, expression=expression, **p)
