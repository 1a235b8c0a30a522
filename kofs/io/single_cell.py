"""Single-cell inputs: AnnData ``.h5ad``, 10x Genomics MatrixMarket folders and 10x ``.h5``.

Every reader returns an :class:`~kofs.types.Expression` whose ``values`` stay sparse (CSR,
cells x genes) and, for AnnData, the object itself (its ``obs`` holds the cell labels, its
``obsp`` a neighbour graph). The readers use the scverse libraries (anndata, h5py) and
scipy.io; nothing here parses HDF5 by hand.

* ``.h5ad``: ``X``, or a layer (``layer=``), or ``raw.X`` (``use_raw=True``); genes are
  ``var_names``, string columns of ``var`` become gene annotations (``gene_ids`` -> Ensembl,
  ``gene_symbols``/``feature_name``/``symbol`` -> symbol) so knowledge sources can match on them.
  A ``feature_types`` column (``scanpy.read_10x_h5(gex_only=False)``) keeps the "Gene
  Expression" rows only, as in a 10x file.
* 10x MatrixMarket folder (Cell Ranger ``filtered_feature_bc_matrix/``): ``matrix.mtx(.gz)``
  (genes x cells), ``features.tsv(.gz)`` (v3: id, name, type) or ``genes.tsv`` (v2: id, name),
  ``barcodes.tsv(.gz)``.
* 10x ``.h5`` (Cell Ranger v3 ``matrix`` group, or the v2 per-genome group): read with h5py.

10x genes are named by their Ensembl id (unique), with the symbol as an annotation; only
features of type "Gene Expression" are kept when several types are present, and a matrix
without any (antibody capture alone, ...) is refused.

Identities are checked the same way in every format: duplicated cell ids (``obs_names``, 10x
barcodes) or gene ids are refused, naming the file and an example (two cells with one id would
share one label); an empty cell id is refused. In a 10x folder holding a file both plain and
gzipped (``barcodes.tsv`` and ``barcodes.tsv.gz``) the two must hold the same content, else
the folder is refused (which one is current cannot be known); v3 ``features.tsv`` is preferred
to a leftover v2 ``genes.tsv``. Values must be real numbers (integer, float or boolean); a
complex, text or object matrix is refused instead of being cast (which would drop the
imaginary part).
"""

from __future__ import annotations

import logging
import os
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from kofs._compute.blocks import csr_problem
from kofs.errors import InputError, ParameterError
from kofs.io._open import table_errors
from kofs.io.expression import guess_namespace
from kofs.types import Expression, SampleCategories

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "INSTALL_HINT",
    "adata_expression",
    "is_single_cell_path",
    "labels_from_obs",
    "read_10x_h5",
    "read_10x_mtx",
    "read_h5ad",
    "read_h5ad_chunked",
    "read_single_cell",
    "require",
]

log = logging.getLogger(__name__)

INSTALL_HINT = "pip install -e '.[sc]' in the kofs folder"
_SYMBOL_COLUMNS = ("gene_symbols", "gene_symbol", "feature_name", "symbol", "symbols", "gene_name")
_ENSEMBL_COLUMNS = ("gene_ids", "gene_id", "ensembl", "ensembl_id", "feature_id")


def require(module: str, what: str) -> Any:
    """Import an optional dependency of the ``[sc]`` extra, or fail with the install command."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise ParameterError(f"{what} needs the {module} package: {INSTALL_HINT}") from None


_TENX_FILES = (
    ("matrix", ("matrix.mtx.gz", "matrix.mtx")),
    ("features", ("features.tsv.gz", "features.tsv", "genes.tsv.gz", "genes.tsv")),
    ("barcodes", ("barcodes.tsv.gz", "barcodes.tsv")),
)


def _mtx_folder_files(folder: Path, prefix: str = "") -> dict[str, Path] | None:
    """The matrix, features and barcodes files of a 10x folder, each name after ``prefix``
    (GEO's ``GSM123_matrix.mtx.gz`` beside ``GSM123_features.tsv.gz``, as scanpy's
    ``read_10x_mtx(prefix=...)``); None when one is missing."""
    found = {}
    for key, names in _TENX_FILES:
        hit = next(
            (folder / (prefix + n) for n in names if (folder / (prefix + n)).is_file()), None
        )
        if hit is None:
            return None
        found[key] = hit
    return found


def _stream_digest(path: Path) -> str:
    """SHA-256 of a file's content, decompressed when it is gzip."""
    import gzip
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as raw:
        gz = raw.read(2) == b"\x1f\x8b"
    try:
        with gzip.open(path, "rb") if gz else open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block.replace(b"\r\n", b"\n"))
    except (OSError, EOFError) as exc:
        raise InputError(f"cannot be read ({exc})", path=str(path)) from None
    return h.hexdigest()


def _check_twins(folder: Path, files: dict[str, Path]) -> None:
    """A file present both plain and gzipped must hold the same content in both."""
    for chosen in files.values():
        twin = chosen.with_name(chosen.name.removesuffix(".gz"))
        if twin == chosen or not twin.is_file():
            continue
        if _stream_digest(chosen) != _stream_digest(twin):
            raise InputError(
                f"holds both {chosen.name} and {twin.name}, which differ; which one belongs to "
                "the matrix cannot be known: remove the stale one",
                path=str(folder),
            )
        log.info("%s: %s and %s are the same; reading %s", folder, twin.name, chosen.name,
                 chosen.name)  # fmt: skip


def is_single_cell_path(path: str | os.PathLike) -> bool:
    """True for an ``.h5ad``/``.h5`` file or a 10x MatrixMarket folder (or its matrix.mtx)."""
    if os.fspath(path) == "-":
        return False
    p = Path(path)
    if p.is_dir():
        return True
    name = p.name.lower()
    return name.endswith((".h5ad", ".h5", ".hdf5", ".mtx", ".mtx.gz"))


def read_h5ad_chunked(path: str | os.PathLike, *, chunk_size: int = 10000) -> Any:
    """An AnnData whose ``X`` (and layers, ``raw.X``) are dask arrays read lazily from ``path``,
    ``chunk_size`` cells per chunk (``anndata.experimental.read_elem_lazy``); ``obs``, ``var``
    and ``obsp`` are read into memory. Nothing of X is read until a computation needs it."""
    anndata = require("anndata", "reading an .h5ad file")
    h5py = require("h5py", "reading an .h5ad file")
    from anndata.experimental import read_elem_lazy
    from anndata.io import read_elem

    source = os.fspath(path)
    _check_h5ad_groups(path)
    try:
        f = h5py.File(path, "r")
    except OSError as exc:
        raise InputError(f"cannot read as AnnData .h5ad ({exc})", path=source) from None
    try:
        obs, var = read_elem(f["obs"]), read_elem(f["var"])

        def lazy(elem):
            n_genes = _lazy_width(elem, h5py, source)
            return read_elem_lazy(elem, chunks=(int(chunk_size), n_genes))

        kwargs: dict[str, Any] = {"obs": obs, "var": var}
        if "X" in f:
            kwargs["X"] = lazy(f["X"])
        if "layers" in f:
            kwargs["layers"] = {k: lazy(v) for k, v in f["layers"].items()}
        if "obsp" in f:
            kwargs["obsp"] = {k: read_elem(v) for k, v in f["obsp"].items()}
        adata = anndata.AnnData(**kwargs)
        if "raw" in f and "X" in f["raw"]:
            raw_var = read_elem(f["raw"]["var"])
            adata.raw = anndata.AnnData(X=lazy(f["raw"]["X"]), obs=obs, var=raw_var)
    except InputError:
        raise
    except _h5ad_errors() as exc:
        raise InputError(_h5ad_problem(exc), path=source) from None
    return adata


def _lazy_width(elem: Any, h5py: Any, source: str) -> int:
    """The number of genes (columns) of a matrix element of an .h5ad read in chunks of cells:
    a dense 2-D dataset or a CSR group; a CSC group (which cannot be cut into cells without
    reading it whole) and anything else are refused."""
    name = elem.name.lstrip("/") or "X"
    if isinstance(elem, h5py.Dataset):
        if elem.ndim != 2:
            raise InputError(
                f"{name} is {elem.ndim}-dimensional; an expression matrix is 2-D (cells x genes)",
                path=source,
            )
        if not elem.attrs.get("encoding-type"):
            # anndata reads such a plain array whole, but not in chunks
            raise InputError(
                f"{name} is a plain array without anndata's encoding attributes (written by "
                "another tool?), which cannot be read in chunks of cells: drop --chunk-size, "
                "or write the file again with anndata",
                path=source,
            )
        return int(elem.shape[1])
    encoding = elem.attrs.get("encoding-type", "")
    encoding = encoding.decode() if isinstance(encoding, bytes) else str(encoding)
    if encoding == "csc_matrix":
        raise InputError(
            f"{name} is stored column by column (CSC); --chunk-size reads cells in chunks and "
            "needs it by rows (CSR or dense): convert it with .tocsr() and write the file "
            "again, or drop --chunk-size",
            path=source,
        )
    shape = elem.attrs.get("shape")
    if encoding != "csr_matrix" or shape is None or len(shape) != 2:
        raise InputError(
            f"{name} is not a dense or CSR matrix (encoding {encoding or 'none'!r}); cannot read "
            "it in chunks of cells",
            path=source,
        )
    return int(shape[1])


def _h5ad_errors() -> tuple[type[BaseException], ...]:
    """What anndata and h5py raise on a damaged or foreign .h5ad: the usual Python errors and
    anndata's ``IORegistryError`` (an element in an encoding this anndata cannot read)."""
    from anndata._io.specs.registry import IORegistryError

    return (OSError, KeyError, ValueError, TypeError, RuntimeError, IORegistryError)


def _h5ad_problem(exc: BaseException) -> str:
    """The message of a failed .h5ad read, without anndata's multi-line context."""
    text = str(exc).split("\n")[0].strip()
    if type(exc).__name__ == "IORegistryError":
        import anndata

        return (
            f"cannot read as AnnData .h5ad: an element is stored in an encoding anndata "
            f"{anndata.__version__} cannot read ({text.split(' from <')[0]}); write the file "
            "again with anndata, or update anndata"
        )
    return f"cannot read as AnnData .h5ad ({text})"


def read_single_cell(
    path: str | os.PathLike,
    *,
    layer: str | None = None,
    use_raw: bool = False,
    chunk_size: int | None = None,
) -> tuple[Expression, Any]:
    """Read any single-cell input by its kind; returns ``(expression, adata_or_None)``.

    ``chunk_size`` (``.h5ad`` only): keep X on disk as a dask array of that many cells per
    chunk (out-of-core; see :func:`read_h5ad_chunked`)."""
    p = Path(path)
    if not p.exists():
        what = (
            "a link to nothing (or a loop of links)" if p.is_symlink() else "no such file or folder"
        )
        raise InputError(what, path=os.fspath(path))
    name = p.name.lower()
    if (layer is not None or use_raw) and not name.endswith(".h5ad"):
        raise ParameterError("--layer and --use-raw apply to an .h5ad file only", path=str(path))
    if chunk_size is not None and not name.endswith(".h5ad"):  # a 10x folder's too
        raise ParameterError("chunked (Dask) reading applies to an .h5ad file only", path=str(path))
    if p.is_dir() and name.endswith(".zarr"):
        raise InputError(
            "is a zarr store, which kofs does not read: write the AnnData as .h5ad "
            "(anndata.read_zarr(path).write_h5ad(...)) and give that",
            path=str(path),
        )
    if p.is_file() and name.endswith((".mtx", ".mtx.gz")):
        # PREFIXmatrix.mtx(.gz) beside PREFIXfeatures.tsv and PREFIXbarcodes.tsv (GEO's files
        # of one sample); another name would have the folder's matrix.mtx read in its place
        stem = next((m for m in _TENX_FILES[0][1] if p.name.endswith(m)), None)
        prefix = p.name[: -len(stem)] if stem else ""
        if stem is None or _mtx_folder_files(p.parent, prefix) is None:
            raise InputError(
                "a MatrixMarket file is read as part of a 10x folder: its name ends with "
                "matrix.mtx(.gz), and the features.tsv(.gz) (or genes.tsv) and barcodes.tsv(.gz) "
                "beside it have the same prefix (GSM1_matrix.mtx.gz, GSM1_features.tsv.gz, "
                "GSM1_barcodes.tsv.gz); name them so, or give the folder",
                path=str(path),
            )
        return read_10x_mtx(p.parent, prefix=prefix), None
    if p.is_dir():
        return read_10x_mtx(p), None
    if p.is_file():
        _check_hdf5_signature(p)
    if name.endswith(".h5ad"):
        if use_raw:
            _check_h5ad_groups(p, use_raw=True)
        adata = read_h5ad(p) if chunk_size is None else read_h5ad_chunked(p, chunk_size=chunk_size)
        return adata_expression(adata, layer=layer, use_raw=use_raw, source=str(path)), adata
    return read_10x_h5(p), None


def _check_hdf5_signature(path: Path) -> None:
    """An .h5ad or .h5 must be HDF5: an empty file, a text table or a gzipped file named so
    are said to be what they are (HDF5's own message was "Unable to synchronously open file
    (file signature not found)"). HDF5 may place its signature at byte 0, 512, 1024, ..."""
    from kofs.io._table import _HDF5, binary_format_hint

    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
            size = os.fstat(fh.fileno()).st_size
            offset = 512
            while head and not head.startswith(_HDF5) and offset < size:
                fh.seek(offset)
                if fh.read(8) == _HDF5:
                    return
                offset *= 2
    except OSError:
        return  # the reader's own message names the problem
    if head.startswith(_HDF5):
        return
    if not head:
        raise InputError("is empty (0 bytes): the file was not written completely", path=str(path))
    kind = "AnnData .h5ad" if path.name.lower().endswith(".h5ad") else "HDF5 (10x .h5)"
    if head.startswith(b"\x1f\x8b"):
        what = "gzip-compressed: decompress it (gunzip) and give the file it holds"
    elif b"\x00" not in head:
        what = "text (a CSV/TSV table?): give a table under a .csv or .tsv name"
    else:
        what = binary_format_hint(path.name, head) or "in another binary format"
    raise InputError(f"is not an {kind} file: it is {what}", path=str(path))


def read_h5ad(path: str | os.PathLike, *, backed: bool = False) -> Any:
    """An AnnData from an ``.h5ad`` file (``backed=True``: X stays on disk, read lazily)."""
    anndata = require("anndata", "reading an .h5ad file")
    _check_h5ad_groups(path)
    try:
        return anndata.read_h5ad(path, backed="r" if backed else None)
    except _h5ad_errors() as exc:
        raise InputError(_h5ad_problem(exc), path=os.fspath(path)) from None


def _check_h5ad_groups(path: str | os.PathLike, *, use_raw: bool = False) -> None:
    """An .h5ad without its ``var`` or ``obs`` group, or with one that holds no index (no
    ``_index`` attribute naming a dataset of ids, as a group written by another tool), or one
    that holds it without anndata's ``encoding-type`` (which anndata then reads as a mapping,
    its ids a column): anndata makes up ids 0, 1, ... and the genes (or cells) would be ranked
    under numbers. With ``use_raw`` the ``raw/var`` group is checked too."""
    h5py = require("h5py", "reading an .h5ad file")
    try:
        with h5py.File(path, "r") as f:
            groups = [(k, f.get(k)) for k in ("obs", "var")]
            raw = f.get("raw") if use_raw else None
            if isinstance(raw, h5py.Group) and "X" in raw:
                groups.append(("raw/var", raw.get("var")))
            problems = {k: _index_problem(elem, h5py) for k, elem in groups}
    except (OSError, ValueError, RuntimeError):
        return  # not HDF5 at all: anndata's own message says so
    what = {"var": "gene ids (var)", "obs": "cell ids (obs)", "raw/var": "raw gene ids (raw/var)"}
    missing = [k for k, problem in problems.items() if problem == "missing"]
    if missing:
        raise InputError(
            f"has no {' and no '.join(what[k] for k in missing)}: the file is damaged or was "
            "not written by anndata",
            path=os.fspath(path),
        )
    bare = [k for k, problem in problems.items() if problem == "unencoded"]
    if bare:
        raise InputError(
            f"{' and '.join(bare)} {'holds its ids' if len(bare) == 1 else 'hold their ids'} "
            "without anndata's encoding-type attribute (written by another tool?), so anndata "
            "reads them as a column and numbers the "
            f"{' and '.join(dict.fromkeys('cells' if k == 'obs' else 'genes' for k in bare))} "
            "0, 1, ...: write the file again with anndata",
            path=os.fspath(path),
        )


def _index_problem(elem: Any, h5py: Any) -> str | None:
    """What keeps anndata from reading the ids of an .h5ad's ``obs``/``var`` element:
    ``"missing"`` (no element, or a group whose ``_index`` attribute names no dataset of it),
    ``"unencoded"`` (a group with its index but without ``encoding-type``: anndata reads it as
    a mapping), or None. A compound dataset, anndata's format before 0.7, is left to
    anndata."""
    if elem is None:
        return "missing"
    if not isinstance(elem, h5py.Group):
        return None
    key = elem.attrs.get("_index")
    if isinstance(key, bytes):
        key = key.decode(errors="replace")
    if not (isinstance(key, str) and key in elem):
        return "missing"
    return None if elem.attrs.get("encoding-type") is not None else "unencoded"


def _string_columns(frame: pd.DataFrame) -> dict[str, list[str]]:
    import pandas as pd

    out = {}
    for col in frame.columns:
        s = frame[col]
        if (
            s.dtype == object
            or isinstance(s.dtype, pd.CategoricalDtype)
            or pd.api.types.is_string_dtype(s)
        ):
            out[str(col)] = s.astype(str).fillna("").tolist()
    return out


def _gene_annotations(var: pd.DataFrame) -> dict[str, list[str]]:
    ann = _string_columns(var)
    lower = {c.lower(): c for c in ann}
    for key, names in (("symbol", _SYMBOL_COLUMNS), ("ensembl", _ENSEMBL_COLUMNS)):
        hit = next((lower[n] for n in names if n in lower), None)
        if hit is not None and key not in ann:
            ann[key] = ann[hit]
    return ann


def _check_real(dtype: Any, where: str, path: str | None) -> None:
    """Refuse values that are not real numbers (complex, text, objects) before any cast."""
    kind = np.dtype(dtype).kind if dtype is not None else "f"
    if kind not in "biuf":
        what = {"c": "complex numbers", "U": "text", "S": "bytes", "O": "Python objects"}
        raise InputError(
            f"{where} holds {what.get(kind, np.dtype(dtype).name)} ({np.dtype(dtype).name}), "
            "not real numbers; store the expression values as integers or floats",
            path=path,
        )


def _check_ids(ids: list[str], what: str, path: str | None, fix: str) -> None:
    """Ids must be unique and non-empty: the message names an example and its positions."""
    seen: dict[str, int] = {}
    for k, v in enumerate(ids):
        if not v.strip() or v == "nan":
            raise InputError(f"{what} number {k + 1} is empty; every one needs an id", path=path)
        if v in seen:
            raise InputError(
                f"{what} {v!r} appears twice (numbers {seen[v] + 1} and {k + 1}); {fix}",
                path=path,
            )
        seen[v] = k


def _as_matrix(X: Any, where: str, path: str | None) -> Any:
    _check_real(getattr(X, "dtype", None), where, path)
    if sp.issparse(X):
        problem = csr_problem(X)  # before the conversion reads its index arrays
        if problem:
            raise InputError(f"{where} is a malformed sparse matrix ({problem})", path=path)
        return sp.csr_matrix(X, dtype=np.float64)
    if hasattr(X, "chunks") and hasattr(X, "compute"):  # a dask array: kept lazy
        return X
    try:
        A = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{where} is not a numeric matrix ({exc})", path=path) from None
    return A


def adata_expression(
    adata: Any,
    *,
    layer: str | None = None,
    use_raw: bool = False,
    source: str | None = None,
) -> Expression:
    """The :class:`Expression` of an AnnData (cells x genes; sparse X stays sparse).

    Parameters
    ----------
    adata : anndata.AnnData
    layer : str, optional
        Use ``adata.layers[layer]`` instead of ``X``.
    use_raw : bool
        Use ``adata.raw.X`` (genes ``adata.raw.var_names``).
    source : str, optional
        Path for messages.
    """
    if layer is not None and use_raw:
        raise ParameterError("choose either a layer or use_raw, not both", path=source)
    var = adata.var
    if use_raw:
        if adata.raw is None:
            raise InputError("has no raw data (adata.raw is None); drop --use-raw", path=source)
        X, var, where = adata.raw.X, adata.raw.var, "raw.X"
    elif layer is not None:
        if layer not in adata.layers:
            known = ", ".join(adata.layers.keys()) or "none"
            raise ParameterError(f"layer {layer!r} not found; layers: {known}", path=source)
        X, where = adata.layers[layer], f"layer {layer!r}"
    else:
        X, where = adata.X, "X"
    if X is None:
        layers = ", ".join(map(str, adata.layers.keys()))
        hint = (
            f"; rank a layer with --layer NAME (layers: {layers})"
            if layers and where == "X"
            else ""
        )
        raise InputError(
            f"{where} is empty (None: the file stores no matrix there){hint}", path=source
        )
    if hasattr(X, "to_memory"):  # a backed sparse dataset
        X = X.to_memory()
    X = _as_matrix(X, where, source)
    column = next((c for c in ("feature_types", "feature_type") if c in var.columns), None)
    if column is not None:  # scanpy.read_10x_h5(gex_only=False) keeps antibodies, guides, ...
        import pandas as pd

        types = ["" if pd.isna(t) else str(t) for t in var[column]]
        idx = _gene_features(types, source, source, f"drop the var column {column!r}")
        if idx is not None:
            X, var = X[:, idx], var.iloc[idx]
    genes = [str(g) for g in var.index]
    cells = [str(c) for c in adata.obs_names]
    if use_raw:  # adata.var_names_make_unique() leaves raw as it is
        _check_ids(genes, "gene id (raw.var_names)", source,
                   "make them unique in raw: r = adata.raw.to_adata(); "
                   "r.var_names_make_unique(); adata.raw = r")  # fmt: skip
    _check_ids(genes, "gene id (var_names)", source,
               "call adata.var_names_make_unique() first")  # fmt: skip
    _check_ids(cells, "cell id (obs_names)", source,
               "call adata.obs_names_make_unique() first")  # fmt: skip
    if len(cells) < 2:
        raise InputError(f"has {len(cells)} cell(s); at least 2 are needed", path=source)
    if not genes:
        raise InputError(f"{where} has no genes (var is empty)", path=source)
    _check_orientation(genes, cells, where, source)
    _check_finite(X, where, source)
    log.info("%s: %d cells x %d genes (%s)", source or "AnnData", len(cells), len(genes), where)
    return Expression(
        X,
        genes,
        cells,
        namespace=guess_namespace(genes),
        annotations=_gene_annotations(var),
        source=source,
    )


#: How sure the ids must be (:func:`kofs.io.expression._id_vote`: +1 every id gene-like, -1
#: every id sample-like) before an AnnData is called transposed; it has no option to override.
_TRANSPOSED_VOTE = 0.9


def _check_orientation(genes: list[str], cells: list[str], where: str, path: str | None) -> None:
    """An AnnData built genes x cells (``sc.read_csv`` of a genes x cells table without ``.T``,
    ``AnnData(df)`` of such a frame): its var_names look like cell ids (10x barcodes, GSM, ...)
    and its obs_names like gene ids. Its cells would be ranked as genes; refused."""
    from kofs.io.expression import _id_vote

    if _id_vote(genes) <= -_TRANSPOSED_VOTE and _id_vote(cells) >= _TRANSPOSED_VOTE:
        raise InputError(
            f"{where} looks transposed (genes x cells): its genes (var_names {genes[0]!r}, ...) "
            f"look like cell ids and its cells (obs_names {cells[0]!r}, ...) like gene ids; "
            "an AnnData holds cells x genes: transpose it (adata = adata.T) and write it again",
            path=path,
        )


def _check_finite(X: Any, where: str, path: str | None) -> None:
    if hasattr(X, "chunks"):
        return  # dask: checked chunk by chunk (pipeline.check_magnitude's moments pass)
    data = X.data if sp.issparse(X) else X
    if not np.isfinite(data).all():
        raise InputError(f"{where} holds NaN or infinite values; fix or impute them", path=path)


def labels_from_obs(
    adata: Any, column: str, *, samples: tuple[str, ...] | None = None, source: str | None = None
) -> SampleCategories:
    """Cell labels from an ``adata.obs`` column (missing values become unlabelled cells).
    Values are stripped of surrounding spaces, as a labels file's are; two that differ only in
    case or spaces are refused (:func:`kofs.io.labels.check_label_spelling`)."""
    if column not in adata.obs.columns:
        import difflib

        close = difflib.get_close_matches(column, [str(c) for c in adata.obs.columns], n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        shown = ", ".join(map(str, list(adata.obs.columns)[:10])) or "none"
        raise ParameterError(
            f"obs column {column!r} not found{hint}; obs columns: {shown}", path=source
        )
    import pandas as pd

    from kofs.io.labels import check_label_spelling

    values = adata.obs[column]
    labels = ["" if pd.isna(v) else str(v).strip() for v in values]
    cells = [str(c) for c in adata.obs_names]
    of = f" of obs column {column!r}"
    check_label_spelling(labels, lambda i: f"cell {cells[i]}", source, of=of)
    given = [x for x in labels if x]
    # as align_labels refuses a labels file's: the labels were given and taught nothing (an
    # unsupervised run went on with them; a supervised one failed in its first ranker, "ranker
    # 'fisher' needs at least 2 classes in labels 'ct', got 0")
    if not given:
        raise InputError(
            f"obs column {column!r} has no value for any of its {len(labels)} cells (all "
            "missing): choose a column that holds the cells' classes",
            path=source,
        )
    if len(set(given)) < 2:
        raise InputError(
            f"all {len(given)} labelled cells are in one class ({given[0]!r}) in obs column "
            f"{column!r}; supervised methods need at least two classes: choose another column",
            path=source,
        )
    if len(given) > 2 and len(set(given)) == len(given):
        raise InputError(
            f"every one of the {len(given)} labelled cells has its own value in obs column "
            f"{column!r} (a continuous or id column?): labels are classes; choose a "
            "categorical column (e.g. cell types or clusters)",
            path=source,
        )
    if len(given) < len(labels):  # as read_labels says of a labels file's empty labels
        log.warning(
            "%d of %d cells have no value in obs column %r: they are unlabelled (the "
            "supervised lists use the %d labelled cells)",
            len(labels) - len(given),
            len(labels),
            column,
            len(given),
        )
    single = sorted(c for c, n in Counter(given).items() if n == 1)
    if single:  # as align_labels says of a labels file's classes
        log.warning(
            "class(es) with a single cell in obs column %r: %s; per-class statistics are "
            "unreliable",
            column,
            ", ".join(single),
        )
    return SampleCategories(labels, samples or cells, name=column)


def _read_tsv(path: Path, what: str) -> pd.DataFrame:
    """A 10x features or barcodes file, read as every text table is (:func:`kofs.io._table.
    read_bytes`: gzip recognised by its first bytes, a byte-order mark dropped, UTF-8 checked;
    pandas read a file with a byte-order mark or a Latin-1 byte as one of "no rows", and a
    plain file named .gz as "not a gzipped file ... check its delimiter"). Its fields are
    tab-separated: a one-column file whose lines hold commas is refused (its lines were read
    whole as ids)."""
    import io

    import pandas as pd

    from kofs.io._table import read_bytes

    raw = read_bytes(path)
    body = raw.rstrip(b"\n")  # blank lines at the end are harmless
    blank = body.find(b"\n\n")
    if blank >= 0 or body.startswith(b"\n"):
        line = body.count(b"\n", 0, blank) + 2 if blank >= 0 else 1
        raise InputError(
            f"blank line in the {what}, whose lines are the matrix's "
            f"{'rows' if 'features' in what else 'columns'} in order: every id after it would "
            "be read one place off, or the blank taken as an id; remove the line if it is "
            "extra, or restore the id it lost",
            path=str(path),
            line=line,
        )
    with table_errors(path, what):
        # every cell is text: "NA" is a gene id, not a missing value
        table = pd.read_csv(
            io.BytesIO(raw), sep="\t", header=None, dtype=str, keep_default_na=False
        )
    if table.shape[1] == 1 and len(table) and "," in str(table.iloc[0, 0]):
        raise InputError(
            f"{what} is not tab-separated: its first line {str(table.iloc[0, 0])!r} holds "
            "commas, and would be read whole as one id; Cell Ranger writes tab-separated "
            "fields: convert it (e.g. tr ',' '\\t')",
            path=str(path),
        )
    return table


#: A feature type that is a gene (Cell Ranger writes "Gene Expression"; compared in lower case).
_GENE_TYPE = "gene expression"


def _gene_features(
    types: list[str] | None, source: str | None, path: str | None, fix: str
) -> np.ndarray | None:
    """The positions of the 'Gene Expression' features among features of several types (one
    warning names the types), None to keep them all (no types, or genes only); features of no
    gene type at all (an antibody capture library alone, ...) are refused, ``fix`` saying how
    to rank them anyway. A missing type (empty) counts as a gene."""
    if types is None:
        return None
    keep = np.array([t.lower() in (_GENE_TYPE, "", "nan") for t in types])
    if not keep.any():
        # an antibody (ADT), CRISPR guide or peak matrix alone: its rows are no genes
        kinds = ", ".join(sorted(set(types)))
        raise InputError(
            f"holds no 'Gene Expression' feature (its {len(keep)} features are {kinds}); kofs "
            "ranks genes: give the matrix of the gene expression library (or, to rank these "
            f"features as they are, {fix})",
            path=path,
        )
    if keep.all():
        return None
    log.warning(
        "%s: kept the %d 'Gene Expression' features of %d (types: %s)",
        source or "AnnData", int(keep.sum()), len(keep), ", ".join(sorted(set(types))),
    )  # fmt: skip
    return np.flatnonzero(keep)


def _tenx_expression(
    counts: sp.csr_matrix, ids: list[str], names: list[str], types: list[str] | None,
    barcodes: list[str], source: str, barcodes_file: str | None = None,
    features_file: str | None = None,
) -> Expression:  # fmt: skip
    _check_ids(
        barcodes,
        "cell barcode",
        barcodes_file or source,
        "each cell needs its own barcode (a damaged or concatenated barcodes file?)",
    )
    idx = _gene_features(
        types, source, features_file or source, "write Gene Expression in their type column"
    )
    if idx is not None:
        counts = counts[:, idx]
        ids, names = [ids[i] for i in idx], [names[i] for i in idx]
    _check_ids(ids, "feature id", features_file or source, "each feature needs its own id")
    if counts.shape[0] < 2:
        raise InputError(f"has {counts.shape[0]} cell(s); at least 2 are needed", path=source)
    if counts.shape[1] == 0:
        raise InputError("has no features (genes)", path=source)
    log.info("%s: %d cells x %d genes (10x)", source, counts.shape[0], counts.shape[1])
    return Expression(
        counts,
        ids,
        barcodes,
        namespace=guess_namespace(ids),
        annotations={"symbol": names},
        source=source,
    )


#: First fields of a features file's first line that make it a header (Cell Ranger writes none).
_FEATURE_HEADER_IDS = frozenset(
    {"gene_id", "gene_ids", "gene", "genes", "id", "feature_id", "feature", "ensembl_id"}
)


def _matrices_inside(folder: Path, limit: int = 4) -> list[str]:
    """What a folder that is no 10x folder holds that kofs reads (a Cell Ranger ``outs/``
    folder: ``filtered_feature_bc_matrix/`` and ``.h5`` files; GEO's files of several samples:
    ``GSM1_matrix.mtx.gz``), sorted, at most ``limit`` names."""
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return []
    found = []
    for entry in entries:
        name = entry.name
        if entry.is_dir() and _mtx_folder_files(entry) is not None:
            found.append(name + "/")
        elif entry.is_file() and name.lower().endswith((".h5", ".h5ad")):
            found.append(name)
        elif entry.is_file() and name.endswith(_TENX_FILES[0][1]):
            stem = next(m for m in _TENX_FILES[0][1] if name.endswith(m))
            if _mtx_folder_files(folder, name[: -len(stem)]) is not None:
                found.append(name)
    return found[:limit] + (["..."] if len(found) > limit else [])


def read_10x_mtx(folder: str | os.PathLike, prefix: str = "") -> Expression:
    """A Cell Ranger MatrixMarket folder (``matrix.mtx``, ``features.tsv``, ``barcodes.tsv``),
    each file's name after ``prefix`` when given (GEO's ``GSM1_matrix.mtx.gz``, ...)."""
    folder = Path(folder)
    files = _mtx_folder_files(folder, prefix)
    if files is None:
        inner = _matrices_inside(folder) if not prefix else []
        hint = f"; it holds {', '.join(inner)}: give one of them" if inner else ""
        raise InputError(
            f"is not a 10x folder: it needs {prefix}matrix.mtx(.gz), {prefix}features.tsv(.gz) "
            f"(or {prefix}genes.tsv) and {prefix}barcodes.tsv(.gz){hint}",
            path=str(folder),
        )
    _check_twins(folder, files)
    from kofs.io.matrix_market import read_coordinate  # compiled check (numba)

    features = _read_tsv(files["features"], "10x features file")
    barcodes = [str(b) for b in _read_tsv(files["barcodes"], "10x barcodes file")[0].tolist()]
    first = [str(v).strip().lower() for v in features.iloc[0].tolist()] if len(features) else []
    if first and (first[0] in _FEATURE_HEADER_IDS or first[2:3] == ["feature_type"]):
        raise InputError(
            f"its first line ({chr(9).join(map(str, features.iloc[0].tolist()))!r}) is a header; "
            "Cell Ranger writes none, and the matrix's rows are the file's lines: remove it",
            path=str(files["features"]),
        )
    # the size line is checked against the two files before any entry is read
    M = read_coordinate(
        files["matrix"],
        shape=(len(features), len(barcodes)),
        names=f"the {len(features)} features and {len(barcodes)} barcodes (genes x cells)",
        symmetric=False,
    )
    counts = sp.csr_matrix(M.T, dtype=np.float64)
    _check_finite(counts, "matrix", str(files["matrix"]))
    ids = features[0].tolist()
    names = features[1].tolist() if features.shape[1] > 1 else ids
    types = features[2].tolist() if features.shape[1] > 2 else None
    return _tenx_expression(
        counts, ids, names, types, barcodes, str(folder), str(files["barcodes"]),
        str(files["features"]),
    )  # fmt: skip


def _strings(values: np.ndarray) -> list[str]:
    return [v.decode() if isinstance(v, bytes) else str(v) for v in values]


def read_10x_h5(path: str | os.PathLike) -> Expression:
    """A Cell Ranger ``.h5`` matrix (v3 ``matrix`` group, or the v2 per-genome group)."""
    h5py = require("h5py", "reading a 10x .h5 file")
    source = os.fspath(path)
    try:
        with h5py.File(path, "r") as f:
            if "X" in f and ("obs" in f or "var" in f):
                raise InputError(
                    "is an AnnData file (X, obs, var), not a 10x .h5 matrix: name it .h5ad",
                    path=source,
                )
            genomes = [k for k, v in f.items() if isinstance(v, h5py.Group) and "indptr" in v]
            if "matrix" not in f and len(genomes) > 1:  # Cell Ranger v2, several genomes
                raise InputError(
                    f"holds the matrices of {len(genomes)} genomes ({', '.join(genomes)}; a "
                    "Cell Ranger v2 multi-genome file), and kofs reads one matrix: write the "
                    "genome to rank as an .h5ad (scanpy.read_10x_h5(path, genome="
                    f"{genomes[0]!r}).write_h5ad(...)) and give that",
                    path=source,
                )
            group = f["matrix"] if "matrix" in f else next(iter(f.values()), None)
            if not isinstance(group, h5py.Group) or "indptr" not in group:
                raise InputError(
                    "is not a 10x .h5 matrix (no 'matrix' group with data/indices/indptr); an "
                    "AnnData file must end in .h5ad",
                    path=source,
                )
            n_genes, n_cells = (int(v) for v in group["shape"][()])
            # 10x stores genes x cells in CSC: the same arrays are cells x genes in CSR
            _check_real(group["data"].dtype, "matrix/data", source)
            arrays = {k: group[k][()] for k in ("data", "indices", "indptr")}
            for k in ("indices", "indptr"):  # scipy would truncate fractional indices
                if np.asarray(arrays[k]).dtype.kind not in "iu":
                    raise InputError(
                        f"matrix/{k} holds {np.asarray(arrays[k]).dtype.name} values, not "
                        "integers: the file is damaged",
                        path=source,
                    )
            raw = sp.csr_matrix((n_cells, n_genes))  # the arrays as stored, before any check
            raw.data, raw.indices, raw.indptr = (
                np.asarray(arrays["data"], dtype=np.float64),
                np.asarray(arrays["indices"]),
                np.asarray(arrays["indptr"]),
            )
            problem = csr_problem(raw)  # before scipy's constructor, sum_duplicates or slicing
            if problem:
                raise InputError(f"matrix is a malformed sparse matrix ({problem})", path=source)
            counts = sp.csr_matrix((raw.data, raw.indices, raw.indptr), shape=(n_cells, n_genes))
            barcodes = _strings(group["barcodes"][()])
            if "features" in group:
                feat = group["features"]
                ids, names = _strings(feat["id"][()]), _strings(feat["name"][()])
                types = _strings(feat["feature_type"][()]) if "feature_type" in feat else None
            else:  # Cell Ranger v2
                ids, names, types = (
                    _strings(group["genes"][()]),
                    _strings(group["gene_names"][()]),
                    None,
                )
    except InputError:
        raise
    except (OSError, KeyError, ValueError, TypeError, IndexError, RuntimeError) as exc:
        raise InputError(f"cannot read as a 10x .h5 matrix ({exc})", path=source) from None
    if len(barcodes) != n_cells or len(ids) != n_genes or len(names) != n_genes:
        raise InputError(
            f"matrix shape says {n_genes} genes x {n_cells} cells but there are {len(ids)} "
            f"feature ids, {len(names)} names and {len(barcodes)} barcodes",
            path=source,
        )
    if types is not None and len(types) != n_genes:
        raise InputError(
            f"matrix shape says {n_genes} genes but features/feature_type has {len(types)} "
            "entries: the file is damaged",
            path=source,
        )
    counts.sum_duplicates()
    _check_finite(counts, "matrix/data", source)
    return _tenx_expression(counts, ids, names, types, barcodes, source)
