"""SPEC: univariate spectral feature selection, ranking functions phi1, phi2, phi3 (book ch. 2).

Kernels live in :mod:`kofs.rankers._spectral_kernels`; this module holds the registry adapters:
choice of the sample similarity, spectral function ``gamma`` and the semi-supervised
combination (eq. 2.28).

References
----------
Zhao & Liu, *Spectral Feature Selection for Data Mining*, 2012, ch. 2 (Algorithm 1, eqs.
2.17-2.19, 2.25-2.28); Zhao & Liu, "Spectral feature selection for supervised and unsupervised
learning", ICML 2007.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import numpy as np

from kofs.errors import ParameterError
from kofs.knowledge.similarity import AUTO_DENSE_MAX
from kofs.knowledge.similarity_kernels import fisher_label_similarity
from kofs.rankers._inputs import (
    graph_ranker_memory,
    graph_storage,
    labelled,
    n_classes,
    resolve_auto,
    sample_graph,
)
from kofs.rankers._spectral_kernels import eigengap_clusters, spec_phi1, spec_phi2, spec_phi3
from kofs.rankers.classic import SEARCH_PARAM
from kofs.registry import Param, ranker
from kofs.types import RankerInputs

__all__: list[str] = []  # registry adapters only; the kernels are in _spectral_kernels

logger = logging.getLogger(__name__)

COMMON_PARAMS: dict[str, Param] = {
    "similarity": Param(
        "auto",
        str,
        "sample similarity S: auto = the given similarity if any, else RBF "
        f"(n <= {AUTO_DENSE_MAX}) / kNN RBF from the data; rbf (2.25); knn (heat-kernel kNN "
        "graph); label (S^FIS, 2.27); given",
        choices=("auto", "rbf", "knn", "label", "given"),
    ),
    "delta": Param(
        None,
        float,
        "RBF width delta (default sqrt(median squared distance / 2)); squared in the kernel, "
        "so within [1e-150, 1e150]",
        low=1e-150,
        high=1e150,
    ),
    "neighbors": Param(
        None,
        int,
        f"kNN graph neighbours (default 5 for knn, 10 for auto above {AUTO_DENSE_MAX} samples)",
        low=1,
    ),
    "gamma": Param(
        "identity",
        str,
        "spectral function: identity gamma(x)=x or power gamma(x)=x^power",
        choices=("identity", "power"),
    ),
    "power": Param(3, int, "exponent of gamma='power'", low=1, high=12),
    "search": SEARCH_PARAM,
    "alpha": Param(
        None,
        float,
        "weight of the supervised term of eq. 2.28 (None = unsupervised only)",
        low=0.0,
        high=1.0,
    ),
}


def _memory(n: int, m: int, p: dict[str, Any], given: str | None) -> int:
    """SPEC's working set: X twice plus its sample graph (see :func:`graph_ranker_memory`)."""
    kind = p["similarity"]
    k = p["neighbors"] or (5 if kind == "knn" else 10)
    return graph_ranker_memory(n, m, graph_storage(kind, n, given), k=k)


def _unsupervised_similarity(X: np.ndarray, inputs: RankerInputs, p: dict[str, Any]):
    kind = resolve_auto(p["similarity"], inputs, "auto")
    params: dict[str, Any] = {}
    if p["delta"] is not None and kind not in ("knn", "given", "label"):
        params["delta2"] = p["delta"] ** 2
    if p["neighbors"] is not None and kind not in ("rbf", "given", "label"):
        params["k"] = p["neighbors"]
    if kind not in ("rbf", "given", "label"):
        params.update(search=p["search"], seed=p["seed"])
    S, Xs, name, used = sample_graph(X, inputs, kind, f"SPEC with similarity={kind!r}", **params)
    return S, Xs, {"similarity": name, **used}


def _run(X: np.ndarray, inputs: RankerInputs, p: dict[str, Any], score: Callable[..., Any]):
    """Unsupervised term, plus the supervised one weighted by ``alpha`` (eq. 2.28)."""
    power = 1 if p["gamma"] == "identity" else p["power"]
    alpha = p["alpha"]
    info: dict[str, Any] = {"power": power}
    total = np.zeros(X.shape[1])
    if alpha is None or alpha < 1:
        S, Xu, used = _unsupervised_similarity(X, inputs, p)
        su, extra = score(Xu, S, power)
        info.update(used, **extra)
        total += (1.0 if alpha is None else 1.0 - alpha) * su
    if alpha is not None and alpha > 0:
        Xl, codes = labelled(X, inputs, "SPEC with alpha (semi-supervised, eq. 2.28)")
        ss, extra = score(Xl, fisher_label_similarity(codes), power)
        info.update({"alpha": alpha, **{f"supervised_{k}": v for k, v in extra.items()}})
        total += alpha * ss
    return total, info


@ranker(
    "spec-phi1",
    higher_is_better=False,
    summary="SPEC phi1: normalized cut of the gene on the sample graph",
    reference="Zhao & Liu 2012 eq. 2.17, Algorithm 1",
    family="spectral",
    uses=("similarity", "categories"),
    sparse=True,
    memory=_memory,
    params=COMMON_PARAMS,
)
def _spec_phi1(X, inputs, *, seed, **p):
    p["seed"] = seed
    return _run(X, inputs, p, lambda Xs, S, r: (spec_phi1(Xs, S, power=r), {}))


@ranker(
    "spec-phi2",
    higher_is_better=False,
    summary="SPEC phi2: phi1 without the trivial eigenvector (= Laplacian Score for gamma = x)",
    reference="Zhao & Liu 2012 eq. 2.18, Algorithm 1",
    family="spectral",
    uses=("similarity", "categories"),
    sparse=True,
    memory=_memory,
    params=COMMON_PARAMS,
)
def _spec_phi2(X, inputs, *, seed, **p):
    p["seed"] = seed
    return _run(X, inputs, p, lambda Xs, S, r: (spec_phi2(Xs, S, power=r), {}))


@ranker(
    "spec-phi3",
    higher_is_better=True,
    summary="SPEC phi3: alignment with the k leading non-trivial eigenvectors",
    reference="Zhao & Liu 2012 eq. 2.19, Algorithm 1",
    family="spectral",
    uses=("similarity", "categories"),
    sparse=True,
    memory=_memory,
    params={
        **COMMON_PARAMS,
        "k": Param(
            None,
            int,
            "number of clusters (default: the number of classes with labels, else estimated by "
            "the eigengap heuristic up to k_max)",
            low=2,
        ),
        "k_max": Param(
            20, int, "largest number of clusters the eigengap heuristic considers", low=2
        ),
    },
)
def _spec_phi3(X, inputs, *, seed, k, k_max, **p):
    p["seed"] = seed
    k_from = "given" if k is not None else "labels"
    if k is None and n_classes(inputs) > 0:
        n = n_classes(inputs)
        k = max(2, n)
        if n >= X.shape[0] > 2:
            raise ParameterError(
                f"spec-phi3: the labels give each of the {X.shape[0]} samples its own class, so "
                "the default k (the number of classes) leaves no clusters; check the labels' "
                f"class column (--label-column) or set --param spec-phi3.k=K (2 <= K < "
                f"{X.shape[0]})"
            )
    elif k is None:
        k_from = "eigengap"

    def score(Xs, S, r):
        s, lam = spec_phi3(Xs, S, k=k, power=r, seed=seed, k_max=k_max)
        used = k if k is not None else min(eigengap_clusters(lam), Xs.shape[0] - 1)
        return s, {
            "k": used,
            "k_from": k_from,
            "eigenvalues": [float(v) for v in lam],
        }

    return _run(X, inputs, p, score)
