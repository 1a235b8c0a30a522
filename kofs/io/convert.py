"""In-memory inputs of the Python API -> :class:`~kofs.types.Expression`.

Contract of :func:`as_expression` (what ``kofs.rank`` accepts as its matrix):

* an :class:`~kofs.types.Expression`: used as is;
* a :class:`pandas.DataFrame`: **samples as rows, genes as columns** (the scikit-learn /
  AnnData orientation); the index gives the sample ids, the columns the gene ids; every column
  must be numeric;
* a NumPy array, a scipy.sparse matrix or a dask array of shape (n_samples, n_genes): ids from
  ``genes`` / ``samples`` when given, else ``gene0..`` / ``sample0..`` (zero-padded); a sparse matrix stays
  sparse (CSR), a dask array lazy (chunked over the cells);
* an :class:`anndata.AnnData` (cells x genes): ``X``, a layer or ``raw.X``, see
  :func:`kofs.io.single_cell.adata_expression`.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

from kofs._chunked import is_dask
from kofs.errors import InputError, ParameterError
from kofs.io.expression import guess_namespace
from kofs.types import Expression

__all__ = ["as_expression", "is_anndata"]


def is_anndata(obj: Any) -> bool:
    """True for an ``anndata.AnnData`` (checked without importing anndata)."""
    return any(c.__name__ == "AnnData" for c in type(obj).__mro__) and hasattr(obj, "obs")


def _ids(given: Sequence[str] | None, n: int, prefix: str, what: str) -> list[str]:
    if given is None:  # zero-padded: already in canonical (sorted) order, no permuted copy
        width = len(str(max(n - 1, 0)))
        return [f"{prefix}{i:0{width}d}" for i in range(n)]
    ids = [str(v) for v in given]
    if len(ids) != n:
        raise ParameterError(f"{len(ids)} {what} ids for a matrix with {n} {what}s")
    if len(set(ids)) != n:
        raise InputError(f"{what} ids are not unique")
    return ids


def as_expression(
    data: Any,
    *,
    genes: Sequence[str] | None = None,
    samples: Sequence[str] | None = None,
    layer: str | None = None,
    use_raw: bool = False,
) -> tuple[Expression, Any]:
    """Convert ``data`` (see the module docstring) to an Expression.

    Returns
    -------
    expression : Expression
    adata : anndata.AnnData or None
        The AnnData itself when ``data`` is one (results can be stored back into it).

    Raises
    ------
    InputError
        Non-numeric columns, non-unique ids, fewer than 2 samples, a non-2-D array.
    ParameterError
        ``layer``/``use_raw`` for something that is not an AnnData, ids of the wrong length,
        an unsupported type.
    """
    if is_anndata(data):
        from kofs.io.single_cell import adata_expression

        return adata_expression(data, layer=layer, use_raw=use_raw), data
    if layer is not None or use_raw:
        raise ParameterError("layer and use_raw apply to an AnnData only")
    if isinstance(data, Expression):
        return data, None
    pandas = sys.modules.get("pandas")  # a DataFrame exists only once pandas was imported
    if pandas is not None and isinstance(data, pandas.DataFrame):
        pd = pandas
        bad = [str(c) for c in data.columns if not pd.api.types.is_numeric_dtype(data[c])]
        if bad:
            raise InputError(
                f"DataFrame column(s) {', '.join(bad[:3])} are not numeric; pass samples as "
                "rows and genes as numeric columns (ids in the index and the column names)"
            )
        values = data.to_numpy(dtype=np.float64)
        g = _ids(list(map(str, data.columns)) if genes is None else genes, values.shape[1],
                 "gene", "gene")  # fmt: skip
        s = _ids(list(map(str, data.index)) if samples is None else samples, values.shape[0],
                 "sample", "sample")  # fmt: skip
    elif is_dask(data):
        if data.ndim != 2:
            raise InputError(f"expected a 2-D samples x genes matrix, got {data.ndim}-D")
        values = data  # chunked over the cells, reduced lazily
        g = _ids(genes, values.shape[1], "gene", "gene")
        s = _ids(samples, values.shape[0], "sample", "sample")
        if len(s) < 2:
            raise InputError(f"has {len(s)} sample(s); at least 2 are needed")
        return Expression(values, g, s, namespace=guess_namespace(g)), None
    elif sp.issparse(data) or isinstance(data, np.ndarray) or hasattr(data, "__array__"):
        values = data if sp.issparse(data) else np.asarray(data)
        if values.ndim != 2:
            raise InputError(f"expected a 2-D samples x genes matrix, got {values.ndim}-D")
        if not sp.issparse(values) and not np.issubdtype(values.dtype, np.number):
            raise InputError(f"expected a numeric matrix, got dtype {values.dtype}")
        g = _ids(genes, values.shape[1], "gene", "gene")
        s = _ids(samples, values.shape[0], "sample", "sample")
    else:
        raise ParameterError(
            f"cannot rank a {type(data).__name__}: pass a kofs.Expression, a pandas DataFrame "
            "(samples x genes), a NumPy array, a scipy.sparse matrix or an AnnData"
        )
    if len(s) < 2:
        raise InputError(f"has {len(s)} sample(s); at least 2 are needed")
    data_values = values.data if sp.issparse(values) else values
    if not np.isfinite(np.asarray(data_values, dtype=np.float64)).all():
        raise InputError("the matrix holds NaN or infinite values; impute or drop them first")
    return Expression(values, g, s, namespace=guess_namespace(g)), None
