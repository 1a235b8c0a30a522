"""Knowledge rankers (book ch. 6.3.2): relevance voting over gene functions (eq. 6.15) and
relevance propagation over a gene relation (eq. 6.14).

They rank genes by knowledge only; the expression matrix is used by the shared runner alone
(zero-variance genes go last). Kernels: :mod:`kofs.knowledge.propagation`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kofs.errors import ParameterError
from kofs.knowledge.propagation import DEFAULT_LAMBDA, relevance_propagation, relevance_vote
from kofs.registry import Param, ranker
from kofs.types import FeatureFunctions, RankerInputs

REF = "Zhao & Liu 2012, Spectral Feature Selection for Data Mining, ch. 6.3.2"
RELEVANCE_HINT = (
    "set the term relevance first: kofs.knowledge.functions.learn_relevance(functions, "
    "relevant_genes) (--relevant-genes), learn_relevance_from_data(functions, expression) "
    "or with_relevance(functions, values)"
)


def _votes(ranker_name: str, functions: FeatureFunctions, average: bool) -> np.ndarray:
    if functions.relevance is None:
        raise ParameterError(
            f"ranker {ranker_name!r}: functions {functions.name!r} have no term relevance; "
            + RELEVANCE_HINT
        )
    return relevance_vote(functions.incidence, functions.relevance, average=average)


@ranker(
    "relevance-vote",
    higher_is_better=True,
    summary="Relevance voting: sum of the relevance of a gene's functions (eq. 6.15)",
    reference=REF + ", eq. 6.15",
    family="knowledge",
    requires=("functions",),
    params={
        "average": Param(
            False, bool, "divide the vote by the gene's number of terms (book: sum, False)"
        ),
    },
)
def relevance_vote_ranker(
    X: np.ndarray, inputs: RankerInputs, *, seed: int, average: bool = False
) -> tuple[np.ndarray, dict[str, Any]]:
    """GO-REL-VOTE. Genes without any term get NaN (no knowledge, ranked last)."""
    r = _votes("relevance-vote", inputs.functions, average)
    return r, {"n_genes_without_terms": int(np.isnan(r).sum())}


@ranker(
    "relevance-propagation",
    higher_is_better=True,
    summary="Relevance propagation of function votes over a gene graph (eq. 6.14)",
    reference=REF + ", eq. 6.14",
    family="knowledge",
    requires=("relation", "functions"),
    params={
        "lam": Param(
            DEFAULT_LAMBDA,
            float,
            "decay lambda in [0, 1) (book: none given; ours 0.5)",
            low=0.0,
            high=1.0,
            closed="left",
        ),
        "average": Param(False, bool, "initial relevance = mean instead of sum of term relevance"),
        "solver": Param(
            "iterative",
            str,
            "fixed point r <- r0 + lambda P r, geometric rate lambda "
            "('iterative', default: fast on any graph) or sparse LU ('direct'; fill-in "
            "makes it slow on dense similarity graphs)",
            choices=("direct", "iterative"),
        ),
    },
)
def relevance_propagation_ranker(
    X: np.ndarray,
    inputs: RankerInputs,
    *,
    seed: int,
    lam: float = DEFAULT_LAMBDA,
    average: bool = False,
    solver: str = "iterative",
) -> tuple[np.ndarray, dict[str, Any]]:
    """GO-REL-PROP / PPI-PROP: r* = (I - lam D^-1 S)^-1 r, r = relevance votes (0 without terms).

    Genes with neither a term nor an edge get NaN (no knowledge, ranked last).
    """
    r0 = _votes("relevance-propagation", inputs.functions, average)
    no_terms = np.isnan(r0)
    r = relevance_propagation(
        inputs.relation.matrix, np.where(no_terms, 0.0, r0), lam=lam, solver=solver
    )
    W = inputs.relation.matrix
    linked = (np.diff(W.indptr) > 0) | (np.diff(W.tocsc().indptr) > 0)
    unknown = no_terms & ~linked
    r[unknown] = np.nan
    return r, {
        "n_genes_without_knowledge": int(unknown.sum()),
        "directed": inputs.relation.directed,
    }
