"""In-memory inputs of :func:`kofs.rank`: labels from an array-like, an obs column or a
Series, and the cell graph of an AnnData (obsp)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

from kofs._compute.blocks import csr_problem
from kofs.errors import InputError, ParameterError, short_repr
from kofs.types import Expression, SampleCategories, SampleSimilarity


def label_sample_ids(labels: Any) -> list[str] | None:
    """The sample ids labels carry (a SampleCategories' samples, a Series' index), if any."""
    if isinstance(labels, SampleCategories):
        return None if labels.by_position else list(labels.samples)
    pd = sys.modules.get("pandas")  # a Series can only come from a pandas already loaded
    if (
        pd is not None
        and isinstance(labels, pd.Series)
        and not isinstance(labels.index, pd.RangeIndex)
    ):
        return [str(v) for v in labels.index]
    return None


def anndata_knowledge(
    adata: Any, expression: Expression, labels: Any, use_graph: Any
) -> tuple[SampleCategories | None, SampleSimilarity | None]:
    """Labels named by an obs column and the reused obsp graph (AnnData inputs only); labels
    given as an array-like become :class:`SampleCategories` (:func:`labels_from_values`)."""
    if labels is not None and not isinstance(labels, (str, SampleCategories)):
        labels = labels_from_values(labels, expression.samples)
    if adata is None:
        if isinstance(labels, str):
            raise ParameterError(
                f"labels={short_repr(labels)}: a string names an obs column of an AnnData "
                "input, and the data is no AnnData; for a labels file pass "
                "kofs.read_labels(path, label_column=...), or give one label per sample"
            )
        if use_graph:
            raise ParameterError("use_graph needs an AnnData input")
        return labels, None
    from kofs.io.single_cell import labels_from_obs

    if isinstance(labels, str):
        column = labels[4:] if labels.startswith("obs:") else labels
        labels = labels_from_obs(adata, column, samples=expression.samples)
    similarity = (
        anndata_graph(adata, use_graph, expression.samples, expression.source)
        if use_graph
        else None
    )
    return labels, similarity


#: Items that are no label (a nested sequence: labels must be flat).
_CONTAINERS = (list, tuple, set, frozenset, dict, np.ndarray)


def labels_from_values(values: Any, samples: Sequence[str]) -> SampleCategories:
    """Sample labels from an array-like (list, ndarray, pandas Series or Categorical).

    A pandas Series with a non-default index is aligned to ``samples`` by that index (every
    sample must be there); anything else is positional and must have one value per sample.
    Missing values (None, NaN, "") are unlabelled samples.
    """
    import pandas as pd

    if isinstance(values, pd.DataFrame):  # was "got an array of shape (n, 1)"
        column = str(values.columns[0]) if len(values.columns) else "COLUMN"
        raise ParameterError(
            f"labels must be one label per sample, got a DataFrame ({values.shape[0]} x "
            f"{values.shape[1]}); give one of its columns, e.g. df[{column!r}]"
        )
    name = getattr(values, "name", None)
    if isinstance(values, pd.Series) and not isinstance(values.index, pd.RangeIndex):
        index = values.index.astype(str)
        if index.has_duplicates:
            raise ParameterError("labels: the labels' index repeats sample ids")
        known = set(index)
        missing = [s for s in samples if s not in known]
        if missing:
            raise ParameterError(
                f"labels: {len(missing)} of the {len(samples)} samples are not in the labels' "
                f"index (first: {missing[0]!r})"
            )
        values = pd.Series(values.to_numpy(), index=index).loc[list(samples)]
    try:
        arr = np.asarray(values, dtype=object)
    except (TypeError, ValueError):
        raise ParameterError(
            f"labels must be SampleCategories, an obs column name or an array-like, got "
            f"{type(values).__name__}"
        ) from None
    # only an object array can hold a nested item (one pass over it: 10^6 cells' labels)
    nested = (
        next((v for v in arr.flat if isinstance(v, _CONTAINERS)), None)
        if arr.dtype == object
        else None
    )
    if arr.ndim != 1 or nested is not None:
        got = (
            f"a {type(values).__name__}"
            if arr.ndim == 0
            else f"an array of shape {arr.shape}"
            if arr.ndim > 1
            else f"an item {nested!r:.40} of type {type(nested).__name__}"
        )
        raise ParameterError(
            f"labels must be a flat sequence of one label per sample (in row order), got {got}"
        )
    if len(arr) != len(samples):
        raise ParameterError(
            f"labels have {arr.size} values but the matrix has {len(samples)} samples "
            "(one label per sample, in row order)"
        )
    text = ["" if pd.isna(v) else str(v) for v in arr]
    from kofs.io.labels import check_label_text

    first: dict[str, int] = {}
    for k, label in enumerate(text):
        first.setdefault(label, k)
    for label, k in first.items():
        check_label_text(label, f"sample {samples[k]}", None)
    name = getattr(values, "name", None)
    return SampleCategories(
        tuple(text), tuple(samples), name=str(name) if name is not None else "label"
    )


def anndata_graph(
    adata: Any, use_graph: str | bool, samples: Sequence[str], source: str | None = None
) -> SampleSimilarity:
    """The cell graph ``adata.obsp[key]`` (``True`` = ``"connectivities"``) as a similarity
    (``source``: the file it was read from, named in errors)."""
    key = "connectivities" if use_graph is True else str(use_graph)
    if key not in adata.obsp:
        known = ", ".join(adata.obsp.keys()) or "none (run scanpy.pp.neighbors first)"
        raise ParameterError(
            f"use_graph: adata.obsp has no {key!r}; obsp keys: {known}", path=source
        )
    where = f"use_graph: adata.obsp[{key!r}]"
    given = adata.obsp[key]
    problem = csr_problem(given) if sp.issparse(given) else None
    if problem:  # before the conversion reads its index arrays
        raise InputError(f"{where} is a malformed sparse matrix ({problem})", path=source)
    try:
        graph = sp.csr_matrix(given, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{where} is not a numeric matrix ({exc})", path=source) from None
    if graph.shape != (len(samples), len(samples)):
        raise InputError(
            f"{where} has shape {graph.shape}, not cells x cells ({len(samples)} x {len(samples)})",
            path=source,
        )
    if graph.nnz and (not np.isfinite(graph.data).all() or graph.data.min() < 0):
        raise InputError(
            f"{where} holds negative, NaN or infinite weights; a cell graph needs finite "
            "weights >= 0 (e.g. scanpy's connectivities)",
            path=source,
        )
    if not graph.count_nonzero():
        raise InputError(
            f"{where} has no edge (every weight is 0); recompute it (scanpy.pp.neighbors) "
            "or drop --use-graph",
            path=source,
        )
    return SampleSimilarity(
        graph,
        tuple(samples),
        name=f"obsp:{key}",
        provenance={"builder": "anndata", "obsp": key},
    )
