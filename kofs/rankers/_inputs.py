"""What every ranker adapter needs from its inputs: the labels check and the sample graph.

One place for the checks (and their messages) that the adapters share:

* :func:`labelled` -- the samples that carry a class label and their class codes, with at
  least two classes (``"<who> needs sample labels (--labels)"``,
  ``"<who> needs at least 2 classes in labels 'x', got 1"``);
* :func:`sample_graph` -- the sample similarity a ranker works on: the given one, the label
  graph S^FIS (eq. 2.27) or one built from the data by :mod:`kofs.knowledge.similarity`
  (``"<who> needs a sample similarity (...)"``);
* :func:`graph_storage` -- whether that graph will be dense or sparse, with the single
  dense/kNN threshold :data:`~kofs.knowledge.similarity.AUTO_DENSE_MAX`, and
  :func:`graph_ranker_memory`, the memory estimate of a ranker working on such a graph.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from kofs.errors import ParameterError
from kofs.knowledge.similarity import AUTO_DENSE_MAX, similarity_from_array
from kofs.knowledge.similarity_kernels import fisher_label_similarity, label_codes
from kofs.resources import F8, estimate_dense_similarity, estimate_knn_graph
from kofs.types import RankerInputs

__all__ = [
    "KIND_HINT",
    "graph_ranker_memory",
    "graph_storage",
    "labelled",
    "n_classes",
    "resolve_auto",
    "sample_graph",
]

#: What to give for each knowledge kind, as said in error messages.
KIND_HINT = {
    "categories": "sample labels (--labels)",
    "similarity": "a sample similarity (expression, --aux, GO-MAH, ...)",
    "relation": "a gene relation graph (--interactions, or GO similarity via --go)",
    "functions": "gene functions (--go with --go-annotations, or --pathways)",
}

#: Sample-graph kinds built from the data whose storage is dense (the rest are sparse graphs).
_DENSE_KINDS = frozenset({"rbf", "linear", "polynomial", "cosine"})


def labelled(X: np.ndarray, inputs: RankerInputs, who: str) -> tuple[np.ndarray, np.ndarray]:
    """The labelled samples of ``X`` and their class codes.

    Parameters
    ----------
    X : ndarray of shape (n, m)
    inputs : RankerInputs
        Its ``categories`` are the labels (aligned to the rows of ``X``).
    who : str
        Subject of the error messages, e.g. ``"ranker 'fisher'"`` or
        ``"ranker 'laplacian' with graph='label'"``.

    Returns
    -------
    X_labelled : ndarray of shape (n', m)
        ``X`` itself when every sample is labelled, else its labelled rows.
    codes : ndarray of shape (n',), int
        Class code per labelled sample, ``0..c-1`` in sorted class order.

    Raises
    ------
    ParameterError
        No labels, or fewer than 2 classes among the labelled samples.
    """
    cats = inputs.categories
    if cats is None:
        raise ParameterError(f"{who} needs {KIND_HINT['categories']}")
    codes, classes = label_codes(cats.labels)
    if len(classes) < 2:
        raise ParameterError(
            f"{who} needs at least 2 classes in labels {cats.name!r}, got {len(classes)}"
        )
    keep = codes >= 0
    if np.bincount(codes[keep]).max() < 2:  # every score would be infinite (or undefined)
        raise ParameterError(
            f"{who}: every class of labels {cats.name!r} has a single sample, so the variation "
            "within a class cannot be measured; give classes of 2 samples or more"
        )
    if keep.all():
        return X, codes
    return X[keep], codes[keep]


def n_classes(inputs: RankerInputs) -> int:
    """Number of classes among the labelled samples (0 without labels)."""
    if inputs.categories is None:
        return 0
    return len(label_codes(inputs.categories.labels)[1])


def resolve_auto(kind: str, inputs: RankerInputs, fallback: str) -> str:
    """A ranker's ``"auto"`` sample graph: the given similarity if any, else ``fallback``."""
    if kind != "auto":
        return kind
    return "given" if inputs.similarity is not None else fallback


def sample_graph(
    X: np.ndarray, inputs: RankerInputs, kind: str, who: str, **params: Any
) -> tuple[np.ndarray | sp.csr_matrix, np.ndarray, str, dict[str, Any]]:
    """The sample similarity a ranker works on.

    Parameters
    ----------
    X : ndarray of shape (n, m)
    inputs : RankerInputs
    kind : str
        ``"given"`` (the input similarity), ``"label"`` (S^FIS of the labelled samples, eq.
        2.27) or a builder of :func:`~kofs.knowledge.similarity.similarity_from_array`
        (``"auto"``, ``"rbf"``, ``"knn"``, ...); resolve a ranker-level ``"auto"`` with
        :func:`resolve_auto` first.
    who : str
        Subject of the error messages, e.g. ``"ranker 'laplacian' with graph='given'"``.
    **params
        Builder parameters (``k``, ``delta2``, ``t``, ...); ignored for given and label.

    Returns
    -------
    S : ndarray or CSR matrix of shape (n', n')
    X_used : ndarray of shape (n', m)
        The rows of ``X`` that ``S`` is over (the labelled ones for ``"label"``).
    name : str
        The similarity's name (given), ``"label"`` or the builder kind.
    used : dict
        The builder's parameters as used (empty for given and label).

    Raises
    ------
    ParameterError
        ``"given"`` without a similarity, ``"label"`` without labels or with one class.
    """
    if kind == "given":
        if inputs.similarity is None:
            raise ParameterError(f"{who} needs {KIND_HINT['similarity']}")
        return inputs.similarity.matrix, X, inputs.similarity.name, {}
    if kind == "label":
        Xl, codes = labelled(X, inputs, who)
        return fisher_label_similarity(codes), Xl, "label", {}
    S, used = similarity_from_array(X, kind, **params)
    return S, X, kind, used


def graph_storage(kind: str | None, n_samples: int, given: str | None = None) -> str | None:
    """``"dense"``, ``"sparse"`` or None (no sample graph): how a ranker's graph is stored.

    Parameters
    ----------
    kind : str or None
        The ranker's graph parameter as resolved by its defaults (``"auto"``, ``"given"``,
        ``"label"`` or a builder kind); for ``"auto"`` the given similarity wins.
    n_samples : int
    given : {"dense", "sparse"}, optional
        Storage of the given similarity, if there is one.
    """
    if kind in ("auto", "given") and given is not None:
        return given
    if kind == "auto":
        return "dense" if n_samples <= AUTO_DENSE_MAX else "sparse"
    if kind in _DENSE_KINDS:
        return "dense"
    if kind is None or kind == "given":
        return None
    return "sparse"


def graph_ranker_memory(n_samples: int, n_genes: int, storage: str | None, *, k: int = 10) -> int:
    """Working set of a ranker on an n x m matrix and a sample graph stored as ``storage``.

    About two float64 copies of X; a dense n x n graph adds 3 n x n arrays (kernel,
    normalised copy, eigenvectors), a sparse one :func:`~kofs.resources.estimate_knn_graph`
    with ``k`` neighbours.
    """
    n, m = int(n_samples), int(n_genes)
    need = 2 * F8 * n * m
    if storage == "dense":
        need += estimate_dense_similarity(n, copies=3)
    elif storage == "sparse":
        need += estimate_knn_graph(n, m, k=int(k))
    return need
