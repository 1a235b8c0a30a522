"""In-memory inputs of the Python API -> :class:`~kofs.types.Expression`.

Contract of :func:`as_expression` (what ``kofs.rank`` accepts as its matrix):

* an :class:`~kofs.types.Expression`: used as is;
* a :class:`pandas.DataFrame`: samples as rows and genes as columns (the scikit-learn /
  AnnData orientation), or genes as rows and samples as columns (the orientation of most
  expression tables): genes are taken as the rows when the sample ids of the labels are its
  column names rather than its index, or when its index is named like a gene id column
  (``gene``, ``symbol``, ``entrez_id``, ...); ``genes_in`` says it outright. Ids come from the
  index and the column names; every value column must be numeric;
* a NumPy array, a scipy.sparse matrix or a dask array of shape (n_samples, n_genes) (a NumPy or
  sparse one of shape (n_genes, n_samples) with ``genes_in="rows"``): ids from
  ``genes`` / ``samples`` when given, else ``gene0..`` / ``sample0..`` (zero-padded); a sparse matrix stays
  sparse (CSR), a dask array lazy (chunked over the cells);
* an :class:`anndata.AnnData` (cells x genes): ``X``, a layer or ``raw.X``, see
  :func:`kofs.io.single_cell.adata_expression`.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

from kofs._compute.chunked import is_dask
from kofs.errors import InputError, ParameterError
from kofs.io.expression import guess_namespace
from kofs.types import Expression, first_repeated

__all__ = ["as_expression", "dataframe_genes_in", "is_anndata"]

log = logging.getLogger(__name__)

#: Index names of a DataFrame whose rows are genes.
GENE_INDEX_NAMES = frozenset(
    {"gene", "genes", "gene_id", "geneid", "gene_symbol", "symbol", "entrez", "entrez_id",
     "entrezid", "ensembl", "ensembl_id", "ensembl_gene_id", "probe", "probe_id", "feature",
     "feature_id"}
)  # fmt: skip


def dataframe_genes_in(df: Any, sample_ids: Sequence[str] | None = None) -> str:
    """``"rows"`` when the genes of ``df`` are its rows, else ``"columns"``: the axis that
    holds more of the ``sample_ids`` (of the labels) holds the samples; else an index named
    like a gene id column (:data:`GENE_INDEX_NAMES`) means genes as rows; else samples as
    rows (the documented default)."""
    if sample_ids is not None:
        wanted = {str(v) for v in sample_ids}
        in_rows = sum(str(v) in wanted for v in df.index)
        in_cols = sum(str(v) in wanted for v in df.columns)
        if in_cols != in_rows:
            return "rows" if in_cols > in_rows else "columns"
    name = str(df.index.name or "").strip().lower().replace(" ", "_").replace("-", "_")
    return "rows" if name in GENE_INDEX_NAMES else "columns"


def _real(dtype: Any) -> bool:
    """Whether values of ``dtype`` are real numbers (integers or floats, NumPy's or pandas'
    nullable ones): not text, booleans or complex numbers, whose imaginary part a conversion
    to float would drop."""
    return getattr(dtype, "kind", None) in ("i", "u", "f")


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
    if (twice := first_repeated(ids)) is not None:
        raise InputError(f"{what} ids are not unique ({twice!r} is there twice)")
    return ids


def _frame_ids(labels: Any, what: str, axis: str) -> list[str]:
    """A DataFrame's row or column names (a pandas Index; ``axis``) as ``what`` ids: a missing
    name (None, NaN, ``<NA>``) or an empty one would become the id "None", "nan" or ""
    (refused, naming its position); so is a MultiIndex, whose tuples are no ids."""
    if labels.nlevels > 1:
        attr = "columns" if axis == "columns" else "index"
        raise InputError(
            f"DataFrame: its {attr} (the {what}s) is a MultiIndex of {labels.nlevels} levels; "
            f"give one id per {what}: keep one level (df.{attr} = "
            f"df.{attr}.get_level_values(0)) or join them into one"
        )
    ids = list(map(str, labels))
    missing = np.asarray(labels.isna())
    bad = next((k for k, t in enumerate(ids) if missing[k] or not t.strip()), None)
    if bad is not None:
        one, attr = ("column", "columns") if axis == "columns" else ("row", "index")
        raise InputError(
            f"DataFrame: {one} {bad + 1} (a {what}) is named {labels[bad]!r}, which is no "
            f"{what} id; give every {what} a name (df.{attr} = [...])"
        )
    return ids


def _some_genes(samples: int, genes: int) -> None:
    if genes == 0 or samples == 0:
        raise ParameterError(f"the matrix has {samples} samples x {genes} genes: nothing to rank")


def as_expression(
    data: Any,
    *,
    genes: Sequence[str] | None = None,
    samples: Sequence[str] | None = None,
    layer: str | None = None,
    use_raw: bool = False,
    genes_in: str | None = None,
    sample_ids: Sequence[str] | None = None,
) -> tuple[Expression, Any]:
    """Convert ``data`` (see the module docstring) to an Expression.

    ``genes_in`` (``"rows"`` or ``"columns"``) gives a DataFrame's, array's or sparse matrix's
    orientation (an Expression's and an AnnData's genes are columns); a DataFrame's is by default
    found from ``sample_ids`` (the labels' sample ids) and the index name
    (:func:`dataframe_genes_in`).

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
    if genes_in not in (None, "rows", "columns"):
        raise ParameterError(f"genes_in must be 'rows' or 'columns', got {genes_in!r:.40}")
    fixed = (
        "an AnnData"
        if is_anndata(data)
        else "an Expression"
        if isinstance(data, Expression)
        else None
    )
    if genes_in == "rows" and fixed is not None:
        raise ParameterError(
            f"genes_in='rows' does not apply to {fixed}: its genes are the columns (var) by "
            "definition; leave genes_in out"
        )
    if is_anndata(data):
        from kofs.io.single_cell import adata_expression

        return adata_expression(data, layer=layer, use_raw=use_raw), data
    if layer is not None or use_raw:
        raise ParameterError("layer and use_raw apply to an AnnData only")
    if isinstance(data, Expression):
        # built by hand (its ids are arguments, as genes= and samples= are)
        for what, ids in (("gene", data.genes), ("sample", data.samples)):
            if (twice := first_repeated(ids)) is not None:
                raise ParameterError(f"{what} ids are not unique ({twice!r} is there twice)")
        _some_genes(data.n_samples, data.n_genes)
        return data, None
    pandas = sys.modules.get("pandas")  # a DataFrame exists only once pandas was imported
    if pandas is not None and isinstance(data, pandas.DataFrame):
        bad = [(c, d) for c, d in zip(data.columns, data.dtypes, strict=True) if not _real(d)]
        if bad:
            raise InputError(
                f"DataFrame column(s) {', '.join(str(c) for c, _ in bad[:3])} hold {bad[0][1]} "
                "values, not real numbers: put the ids in the index (e.g. "
                "df.set_index('gene')) and drop the other columns"
            )
        if genes_in is None:
            genes_in = dataframe_genes_in(data, sample_ids)
            if genes_in == "rows":
                log.info("DataFrame: genes are its rows (%d genes x %d samples)", *data.shape)
        if genes_in == "rows":
            data = data.T
        values = data.to_numpy(dtype=np.float64)
        axes = ("rows", "columns") if genes_in == "rows" else ("columns", "rows")
        g = _ids(_frame_ids(data.columns, "gene", axes[0]) if genes is None else genes,
                 values.shape[1], "gene", "gene")  # fmt: skip
        s = _ids(_frame_ids(data.index, "sample", axes[1]) if samples is None else samples,
                 values.shape[0], "sample", "sample")  # fmt: skip
    elif is_dask(data):
        if data.ndim != 2:
            raise InputError(f"expected a 2-D samples x genes matrix, got {data.ndim}-D")
        if genes_in == "rows":
            raise ParameterError(
                "genes_in='rows': a dask array is read as cells x genes, chunked over the cells; "
                "give it transposed (x.T, rechunked over the cells) and leave genes_in out"
            )
        values = data  # chunked over the cells, reduced lazily
        g = _ids(genes, values.shape[1], "gene", "gene")
        s = _ids(samples, values.shape[0], "sample", "sample")
        if len(s) < 2:
            raise InputError(f"the matrix has {len(s)} sample(s); at least 2 are needed")
        return Expression(values, g, s, namespace=guess_namespace(g)), None
    elif sp.issparse(data) or isinstance(data, np.ndarray) or hasattr(data, "__array__"):
        values = data if sp.issparse(data) else np.asarray(data)
        if values.ndim != 2:
            raise InputError(f"expected a 2-D samples x genes matrix, got {values.ndim}-D")
        if genes_in == "rows":  # a genes x samples matrix, as most expression tables are
            values = sp.csr_matrix(values.T) if sp.issparse(values) else values.T
        if not _real(values.dtype):
            raise InputError(f"expected a matrix of real numbers, got dtype {values.dtype}")
        g = _ids(genes, values.shape[1], "gene", "gene")
        s = _ids(samples, values.shape[0], "sample", "sample")
    else:
        raise ParameterError(
            f"cannot rank a {type(data).__name__}: pass a kofs.Expression, a pandas DataFrame "
            "(samples x genes), a NumPy array, a scipy.sparse matrix or an AnnData"
        )
    if len(s) < 2:
        raise InputError(f"the matrix has {len(s)} sample(s); at least 2 are needed")
    _some_genes(len(s), len(g))
    data_values = values.data if sp.issparse(values) else values
    kind = getattr(getattr(data_values, "dtype", None), "kind", "")
    if kind in ("i", "u") and np.size(data_values):
        big = max(abs(int(np.max(data_values))), abs(int(np.min(data_values))))
        if big > 2**53:  # float64 holds every integer up to 2^53 only
            raise InputError(
                f"integers as large as {big} lose their differences as floating-point numbers "
                "(every one above 2^53 is rounded): subtract a baseline or rescale the values"
            )
    if not np.isfinite(np.asarray(data_values, dtype=np.float64)).all():
        raise InputError("the matrix holds NaN or infinite values; impute or drop them first")
    return Expression(values, g, s, namespace=guess_namespace(g)), None
