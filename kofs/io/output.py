"""Atomic, deterministic writers: ranking and weight tables, JSON, file fingerprints.

Nothing is half-written: single files go to a temporary file beside the target that is fsync'ed
and renamed over it (:func:`atomic_file`); whole output folders are published in one step by
:mod:`kofs.io.output_folder`. A full disk
(``ENOSPC``) becomes an :class:`~kofs.errors.OutputError` naming the path, and the temporary
files are removed.
"""

from __future__ import annotations

import contextlib
import errno
import importlib.metadata
import io
import json
import logging
import math
import os
import platform
import re
import secrets
import sys
import zipfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import numpy as np

from kofs.errors import InputError, OutputError, ParameterError
from kofs.io._fsops import closed_folder, create_new_file, file_digest
from kofs.types import AggregateRanking, Ranking

log = logging.getLogger(__name__)

#: A lone surrogate: how Python holds a byte of a file name that is not UTF-8 (a Latin-1 name;
#: any non-ASCII name under LC_ALL=C without UTF-8 mode). UTF-8 cannot encode it.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")

__all__ = [
    "write_similarity_npz",
    "read_similarity_npz",
    "RUN_FILES",
    "atomic_file",
    "check_output_dir",
    "environment_info",
    "file_fingerprint",
    "format_float",
    "format_floats",
    "format_ranks",
    "is_write_failure",
    "write_error",
    "write_stdout",
    "write_json",
    "write_text",
    "write_ranking",
    "write_weights",
]

#: Files a run writes into its output folder.
RUN_FILES = ("ranking.tsv", "weights.tsv", "manifest.json", "config.resolved.yaml", "report.html")
_FULL = (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC), errno.EFBIG)


def write_error(exc: OSError, path: str | os.PathLike) -> OutputError:
    """The :class:`OutputError` for a failed write of ``path`` (disk full, or another cause)."""
    if exc.errno in _FULL:
        return OutputError(
            "cannot write (disk full); free space or choose another output location",
            path=os.fspath(path),
        )
    return OutputError(
        f"cannot write ({exc.strerror or exc}); choose another output location",
        path=os.fspath(path),
    )


def is_write_failure(exc: BaseException, tmp: Path) -> bool:
    """An OSError caused by writing our temporary output (not, e.g., a missing input)."""
    if not isinstance(exc, OSError):
        return False
    name = exc.filename
    return exc.errno in _FULL or name is None or str(name).startswith(str(tmp))


def _refuse_special(p: Path) -> None:
    """An existing output that is not a regular file (a device such as /dev/null, a named
    pipe, a socket) would be replaced by the all-or-nothing rename: refused."""
    if p.exists() and not p.is_file():
        raise OutputError(
            "is a device, pipe or socket, not a regular file; give a file name (or - for "
            "standard output)",
            path=p,
        )


def check_output_file(path: str | os.PathLike, *, inputs: Iterable[str | os.PathLike] = ()) -> None:
    """Fail early if one output file cannot be written (``"-"`` is always accepted; missing
    folders are created by :func:`atomic_file`).

    Raises
    ------
    OutputError
        ``path`` is a folder, lies under a file, is not writable, or is one of ``inputs``.
    """
    if os.fspath(path) == "-":
        return
    inputs = list(inputs)  # read twice below (a generator would be empty the second time)
    p = Path(path)
    _check_link(p, p)
    if p.is_dir():
        raise OutputError("is a folder; give a file name for the output", path=p)
    _refuse_special(p)
    probe = p.parent
    while not probe.exists() and probe.parent != probe:
        probe = probe.parent
    if probe.exists() and not probe.is_dir():
        raise OutputError(f"cannot be written: {probe} is a file, not a folder", path=p)
    target = os.path.realpath(p)
    for given in inputs:  # said of the file (the folder's message read "cannot be written: .
        # writing here would overwrite the input file ...; choose another output folder")
        if given is not None and os.fspath(given) != "-" and os.path.realpath(given) == target:
            raise OutputError(
                "is an input of this run: writing it would overwrite the input; choose another "
                "output file name",
                path=p,
            )
    try:
        check_output_dir(p.parent if str(p.parent) else Path("."), inputs=inputs, outputs=(p.name,))
    except OutputError as exc:  # name the file the user gave, not its folder
        raise OutputError(f"cannot be written: {exc.path} {exc.message}", path=p) from None


def check_output_dir(
    outdir: str | os.PathLike,
    *,
    inputs: Iterable[str | os.PathLike] = (),
    outputs: Sequence[str] = RUN_FILES,
) -> None:
    """Fail early if ``outdir`` cannot receive a run's files.

    Parameters
    ----------
    outdir : str or path-like
        Output folder (created later if missing); ``"-"`` (stdout) is always accepted.
    inputs : iterable of path
        Input files of the run; none may be overwritten.
    outputs : sequence of str, default :data:`RUN_FILES`
        File names that will be written into ``outdir``.

    Raises
    ------
    OutputError
        ``outdir`` is an existing file, lies under a file, is not writable, one of its
        output files is one of ``inputs``, or it is (inside) an input that is a folder (e.g.
        a KGML folder, all of whose files are read).
    """
    if os.fspath(outdir) == "-":
        return
    out = Path(outdir)
    try:
        _check_output_dir(out, inputs, outputs)
    except PermissionError:  # a folder on the way that the user may not enter
        raise OutputError(
            f"cannot be reached: {closed_folder(out)} may not be entered (permission denied); "
            "choose another output folder",
            path=out,
        ) from None


def _check_output_dir(
    out: Path, inputs: Iterable[str | os.PathLike], outputs: Sequence[str]
) -> None:
    """:func:`check_output_dir` of a folder path (not ``"-"``)."""
    _check_link(out, out)
    if out.exists() and not out.is_dir():
        raise OutputError(
            "is an existing file, not a folder; choose another output folder", path=out
        )
    probe = out
    while not probe.exists():
        _check_link(probe, out)
        if probe.parent == probe:
            break
        probe = probe.parent
    if probe.exists() and not probe.is_dir():
        raise OutputError(f"cannot be created: {probe} is a file", path=out)
    if not os.access(probe, os.W_OK | os.X_OK):
        raise OutputError(
            f"is not writable ({probe} denies write access); choose another output folder", path=out
        )
    targets = {os.path.realpath(out / name) for name in outputs}
    real_out = Path(os.path.realpath(out))
    for p in inputs:
        if p is None or os.fspath(p) == "-":
            continue
        if os.path.isdir(p):
            folder = Path(os.path.realpath(p))
            if real_out == folder or folder in real_out.parents:
                raise OutputError(
                    f"is inside the input folder {os.fspath(p)} (whose files are "
                    "all read); choose an output folder outside it",
                    path=out,
                )
            continue
        if os.path.realpath(p) in targets:
            raise OutputError(
                f"writing here would overwrite the input file {os.fspath(p)}; "
                "choose another output folder",
                path=out,
            )


def _check_link(p: Path, out: Path) -> None:
    """A symbolic link on the way to ``out`` must lead somewhere (to a folder when it is
    ``out`` itself); the message names the user's path."""
    if not p.is_symlink():
        return
    try:
        target = os.readlink(p)
    except OSError:
        target = "?"
    try:
        p.stat()
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OutputError(
                f"cannot be used: {p} is a symbolic link that loops; remove or fix the link",
                path=out,
            ) from None
        what = "is a symbolic link" if p == out else f"cannot be created: {p} is a symbolic link"
        raise OutputError(
            f"{what} to {target}, which does not exist; fix or remove the link",
            path=out,
        ) from None


def write_stdout(text: str) -> None:
    """Write ``text`` to standard output and flush it.

    Raises
    ------
    OutputError
        Standard output is closed, full or otherwise refuses the data (a closed pipe still
        raises :class:`BrokenPipeError`, which the CLI turns into a quiet exit).
    """
    stream = sys.stdout
    if stream is None or getattr(stream, "closed", False):
        raise OutputError(
            "standard output is closed; redirect it to a file (> ranking.tsv) or write an "
            "output folder (-o DIR)",
            path=None,
        )
    try:
        stream.write(_LONE_SURROGATE.sub("?", text))  # as atomic_file writes them
        stream.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        why = "disk full" if exc.errno in _FULL else (exc.strerror or str(exc))
        raise OutputError(
            f"cannot write to standard output ({why}); redirect it elsewhere or write an "
            "output folder (-o DIR)"
        ) from None


@contextlib.contextmanager
def atomic_file(path: str | os.PathLike, mode: str = "w") -> Iterator[IO]:
    """Open ``path`` for writing all-or-nothing (``mode`` ``"w"``: UTF-8 text with ``\\n``
    line ends, or ``"wb"``).

    Data goes to a hidden temporary file beside ``path``; on success it is flushed, fsync'ed
    and renamed over ``path``; on an exception it is deleted and ``path`` is untouched.
    """
    if mode not in ("w", "wb"):
        raise ParameterError(f"atomic_file mode must be 'w' or 'wb', not {mode!r}")
    target = Path(path)
    if target.is_symlink():  # write where the link leads, keep the link
        target = Path(os.path.realpath(target))
    parent = target.parent
    if target.is_dir():
        raise OutputError("is a folder; give a file name", path=target)
    _refuse_special(target)
    if parent.exists() and not parent.is_dir():
        raise OutputError(f"cannot be created: {parent} is a file, not a folder", path=target)
    if not parent.is_dir():
        raise OutputError(f"folder {parent} does not exist; create it first", path=target)
    fd = None
    for _ in range(100):
        tmp = parent / f".{target.name}.{secrets.token_hex(4)}.tmp"
        try:
            fd = create_new_file(tmp)  # never through a link planted at the temporary name
            break
        except FileExistsError:
            continue
        except OSError as exc:
            raise write_error(exc, target) from None
    if fd is None:
        raise OutputError("cannot create a temporary file", path=target)
    # errors="replace": UTF-8 encodes every character but a lone surrogate, which is how Python
    # holds a byte of a file name that is not UTF-8 (a list named after such a file): "?"
    kwargs = {} if mode == "wb" else {"encoding": "utf-8", "newline": "\n", "errors": "replace"}
    fh = os.fdopen(fd, mode, **kwargs)
    try:
        yield fh
        fh.flush()
        os.fsync(fh.fileno())
        fh.close()
        os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            fh.close()
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if is_write_failure(exc, tmp):
            raise write_error(exc, target) from None
        raise


@contextlib.contextmanager
def _sink(stream_or_path) -> Iterator[IO]:
    if hasattr(stream_or_path, "write"):
        yield stream_or_path
    elif os.fspath(stream_or_path) == "-":
        buf = io.StringIO()
        yield buf
        write_stdout(buf.getvalue())
    else:
        with atomic_file(stream_or_path) as fh:
            yield fh


def format_float(x: float) -> str:
    """Deterministic text of a number: ``%.10g``; NaN as ``NA``; ``Inf``/``-Inf``; no ``-0``."""
    if math.isnan(x):
        return "NA"
    if math.isinf(x):
        return "Inf" if x > 0 else "-Inf"
    return "%.10g" % (x + 0.0)  # noqa: UP031 - %g is the documented format


_PERCENT_G = "%.10g".__mod__  # noqa: UP031 - %g is the documented format
_PERCENT_D = "%d".__mod__


def _fix_non_finite(values: np.ndarray, text: list[str]) -> list[str]:
    """Replace the cells of the non-finite ``values`` by ``NA``, ``Inf``, ``-Inf``."""
    bad = ~np.isfinite(values)
    if bad.any():
        for i in np.flatnonzero(bad).tolist():
            x = values[i]
            text[i] = "NA" if np.isnan(x) else ("Inf" if x > 0 else "-Inf")
    return text


def format_floats(values) -> list[str]:
    """:func:`format_float` of every number of ``values`` (the same text, character for
    character), with the formatting loop in C: ``"%.10g" %`` mapped over the numbers with
    ``-0.0`` turned into ``0.0`` by adding ``0.0`` as :func:`format_float` does, then the
    non-finite cells replaced."""
    with np.errstate(invalid="ignore"):  # signalling NaNs
        a = np.asarray(values, dtype=np.float64).ravel() + 0.0
    return _fix_non_finite(a, list(map(_PERCENT_G, a.tolist())))


def format_ranks(values) -> list[str]:
    """The rank cells of ``values``: integral finite numbers as integers
    (``"%d" %`` of a float is ``str(int(x))``), the others as :func:`format_floats`."""
    a = np.asarray(values, dtype=np.float64).ravel()
    with np.errstate(invalid="ignore"):
        integral = np.isfinite(a) & (a == np.floor(a))
    if integral.all():
        return list(map(_PERCENT_D, a.tolist()))
    text = format_floats(a)
    idx = np.flatnonzero(integral)
    for i, t in zip(idx.tolist(), map(_PERCENT_D, a[idx].tolist()), strict=True):
        text[i] = t
    return text


def _clean(text: str) -> str:
    return " ".join(str(text).replace("\t", " ").split())


def write_ranking(
    stream_or_path,
    final: AggregateRanking | Ranking,
    lists: Sequence[Ranking] = (),
    *,
    evidence: Mapping[str, str] | None = None,
    symbols: Mapping[str, str] | None = None,
) -> None:
    """Write the ranked gene table (TSV).

    Columns: ``gene``, ``symbol`` (when ``symbols`` is given), ``rank``, ``score`` (of
    ``final``), then the per-gene statistics of ``final`` (e.g. ``p_value``, ``q_value`` of
    RRA; :attr:`AggregateRanking.statistics`), then ``rank:<list>`` and ``score:<list>``
    (native score) for every list, then ``evidence`` when given. Rows are sorted by final
    rank, ties by gene id (so the file does not depend on the input's order). Numbers: ranks
    as integers when integral, otherwise
    ``%.10g``; scores and statistics ``%.10g``; NaN as ``NA``. A list that does not contain a
    gene (partial lists) has ``NA`` in both of its cells.

    Parameters
    ----------
    stream_or_path : text stream, path, or ``"-"`` (stdout)
        A path is written atomically.
    final : AggregateRanking or Ranking
    lists : sequence of Ranking
        Per-source rankings over (a subset of) the same genes (any order; matched by id).
    evidence : mapping gene -> str, optional
        Free text per gene (tabs and newlines become spaces; absent genes get an empty cell).
    symbols : mapping gene -> str, optional
        Gene symbol per gene id (absent genes get an empty cell); the id stays the key.

    Raises
    ------
    ParameterError
        A list ranks a gene that ``final`` does not.
    OutputError
        The file cannot be written.
    """
    genes = final.genes
    index = {g: i for i, g in enumerate(genes)}
    order = final.order()
    cols_rank, cols_score, names = [], [], []
    for r in lists:
        if r.genes == genes:
            rank_col, score_col = r.ranks, r.scores
        else:
            missing = [g for g in r.genes if g not in index]
            if missing:
                raise ParameterError(
                    f"list {r.name!r} ranks genes that the final ranking does not "
                    f"(e.g. {', '.join(missing[:3])})"
                )
            rank_col = np.full(len(genes), np.nan)
            score_col = np.full(len(genes), np.nan)
            pos = np.fromiter((index[g] for g in r.genes), dtype=np.int64, count=len(r.genes))
            rank_col[pos] = r.ranks
            score_col[pos] = r.scores
        cols_rank.append(format_ranks(np.asarray(rank_col, dtype=np.float64)[order]))
        cols_score.append(format_floats(np.asarray(score_col, dtype=np.float64)[order]))
        names.append(_clean(r.name))
    stats = dict(getattr(final, "statistics", None) or {})
    head = ["gene", *(["symbol"] if symbols is not None else []), "rank", "score"]
    head += [_clean(k) for k in stats]
    for n in names:
        head += [f"rank:{n}", f"score:{n}"]
    if evidence is not None:
        head.append("evidence")
    ordered = [genes[i] for i in order.tolist()]
    columns: list[list[str]] = [ordered]
    if symbols is not None:
        columns.append([_clean(symbols.get(g, "")) for g in ordered])
    columns.append(format_ranks(np.asarray(final.ranks, dtype=np.float64)[order]))
    columns.append(format_floats(np.asarray(final.scores, dtype=np.float64)[order]))
    columns += [
        format_floats(np.asarray(v, dtype=np.float64).ravel()[order]) for v in stats.values()
    ]
    for cr, cs in zip(cols_rank, cols_score, strict=True):
        columns += [cr, cs]
    if evidence is not None:
        columns.append([_clean(evidence.get(g, "")) for g in ordered])
    out = ["\t".join(head), *map("\t".join, zip(*columns, strict=True))]
    text = "\n".join(out) + "\n"
    with _sink(stream_or_path) as fh:
        fh.write(text)


def write_weights(stream_or_path, aggregate: AggregateRanking) -> None:
    """Write the source weights: a TSV with columns ``list`` and ``weight`` (``%.10g``), then
    ``ci_low``, ``ci_high`` (95 % bootstrap interval) and ``sd`` when the run has them, and
    ``built_from`` (number of known genes the list was seeded from) when any list was, and
    ``seed_scoring`` (how it was scored on them: ``re-seeded K-fold`` = cross-fitted on the held-out
    folds, ``excluded`` = not at all, ``-`` = not seeded) when the aggregator records it.

    Raises
    ------
    ParameterError
        ``aggregate`` has no weights (the method does not learn any).
    """
    if aggregate.weights is None:
        raise ParameterError(f"aggregation {aggregate.method!r} has no source weights to write")
    # AggregateRanking.weights_columns (pandas-free: a bulk run does not load pandas to write)
    cols = aggregate.weights_columns()
    rows = ["\t".join(["list", *cols])]
    for j, n in enumerate(aggregate.list_names):
        row = [_clean(n)]
        for column, values in cols.items():
            v = values[j]
            row.append(str(v) if column in ("built_from", "seed_scoring") else format_float(v))
        rows.append("\t".join(row))
    with _sink(stream_or_path) as fh:
        fh.write("\n".join(rows) + "\n")


def cross_fit_line(cross: dict) -> str:
    """One line saying which lists were built from genes (known genes seeding a list, the gene
    set of a FILT list's similarity) and how each was scored on them
    (``diagnostics["cross_fit"]``)."""
    parts = []
    reseeded = {n: r for n, r in cross.items() if r.get("rule") == "re-seeded"}
    by_k: dict[tuple[int, int], list[str]] = {}
    for n, r in reseeded.items():
        by_k.setdefault((r["folds"], r["seed_genes"]), []).append(n)
    for (k, n_seed), names in by_k.items():
        parts.append(
            f"{', '.join(names)} built from {n_seed} genes, weighted by {k}-fold "
            f"re-seeding (rebuilt from {k - 1}/{k} of them, scored on the held-out fold)"
        )
    for n, r in cross.items():
        if r.get("rule") != "re-seeded":
            why = f" ({r['reason']})" if r.get("reason") else ""
            parts.append(f"{n} built from {r['seed_genes']} genes, never scored on them{why}")
    return "seeded lists: " + "; ".join(parts)


def file_fingerprint(path: str | os.PathLike) -> dict[str, Any]:
    """``{"path", "bytes", "sha256"}`` of a file, hashed in 1 MiB blocks.

    Raises
    ------
    InputError
        The file cannot be read.
    """
    try:
        size, sha = file_digest(path)
    except OSError as exc:
        raise InputError(f"cannot be read for its checksum ({exc.strerror})", path=path) from None
    return {"path": os.fspath(path), "bytes": size, "sha256": sha}


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, Mapping):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (set, frozenset)):
        return sorted((_jsonable(v) for v in obj), key=str)
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _jsonable(obj.tolist())
    if isinstance(obj, np.generic):
        return _jsonable(obj.item())
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, os.PathLike):
        return os.fspath(obj)
    if obj is None or isinstance(obj, (str, int, bool)):
        return obj
    return str(obj)


def write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to the file ``path`` in UTF-8 (not atomically: for files inside a folder
    :func:`kofs.io.output_folder.atomic_dir` replaces whole), a lone surrogate (a byte of a file
    name that is not UTF-8) as ``?``, as :func:`atomic_file` writes it."""
    Path(path).write_text(text, encoding="utf-8", errors="replace")


def write_json(path: str | os.PathLike, obj: Any) -> None:
    """Write ``obj`` as JSON (sorted keys, indent 2, UTF-8, final newline), atomically.

    NumPy scalars/arrays, tuples, sets and paths are converted; NaN and +-Inf become ``null``
    so the file is strict JSON. ``"-"`` writes to stdout.
    """
    text = json.dumps(_jsonable(obj), sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False)
    # a path holding lone surrogates: JSON escapes them as \udcxx (read back: the same path)
    text = _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    with _sink(path) as fh:
        fh.write(text + "\n")


def environment_info() -> dict[str, str | None]:
    """Versions of kofs, Python and the numerical stack, and the platform (for manifests)."""
    from kofs import __version__

    def version(dist: str) -> str | None:
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            return None

    return {
        "kofs": __version__,
        "python": platform.python_version(),
        "numpy": version("numpy"),
        "scipy": version("scipy"),
        "pandas": version("pandas"),
        "sklearn": version("scikit-learn"),
        "goatools": version("goatools"),
        "networkx": version("networkx"),
        "matplotlib": version("matplotlib"),
        "platform": platform.platform(),
    }


def write_similarity_npz(
    stream_or_path, genes: Sequence[str], values: np.ndarray, info: Mapping[str, Any] | None = None
) -> None:
    """A genes x genes similarity as an uncompressed ``.npz`` (no pickle): arrays
    ``similarity`` (n x n, float32 or float64, NaN = no value), ``genes`` (n strings) and one
    0-d string array ``info_<key>`` per ``info`` entry (measure, mode, GO release, ...).

    Read it with :func:`read_similarity_npz`, or ``numpy.load(path)["similarity"]``.
    """
    arrays = {"similarity": np.asarray(values), "genes": np.array(list(genes), dtype=str)}
    for k, v in (info or {}).items():
        arrays[f"info_{k}"] = np.array(str(v))
    if arrays["similarity"].shape != (len(genes), len(genes)):
        raise ValueError("similarity must be genes x genes")
    np.savez(stream_or_path, **arrays)


def read_similarity_npz(path: str | os.PathLike) -> tuple[np.ndarray, list[str], dict[str, str]]:
    """``(similarity, genes, info)`` of a file written by :func:`write_similarity_npz`."""
    try:
        with np.load(path, allow_pickle=False) as z:
            values, genes = z["similarity"], z["genes"].tolist()
            info = {k[5:]: str(z[k]) for k in z.files if k.startswith("info_")}
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
        raise InputError(f"not a kofs similarity .npz file ({exc})", path=path) from None
    return values, genes, info
