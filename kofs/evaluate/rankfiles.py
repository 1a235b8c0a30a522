"""Reading the outputs of ``kofs rank`` for evaluation.

A ``ranking.tsv`` (columns ``gene, rank, score`` then ``rank:<list>, score:<list>`` per list,
:func:`kofs.io.output.write_ranking`) gives the final list and every per-source list; an output
folder adds ``weights.tsv`` (EM source weights) and ``config.resolved.yaml`` (the run's options,
which the honest protocol re-runs on each training fold).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from kofs.errors import InputError, KofsError, ParameterError
from kofs.evaluate.config import STDIN_RANKING
from kofs.io._table import open_text
from kofs.io.ids import match_gene_ids
from kofs.types import Expression

log = logging.getLogger(__name__)

__all__ = ["RankFile", "read_rank_output", "ranks_on_matrix"]


@dataclass(frozen=True)
class RankFile:
    """The lists of one ``kofs rank`` output.

    Attributes
    ----------
    label : str
        Name of the output (folder name, or file stem).
    genes : tuple of str
    ranks : dict of str to ndarray
        ``"final"`` and every per-source list -> ranks (1 = best; NaN = not ranked).
    weights : dict of str to float, optional
    config : dict, optional
        The resolved options of the run (``config.resolved.yaml``).
    path : str
    symbols : dict of str to str, optional
        Gene id -> symbol (the ``symbol`` column), when the table has one.
    evidence : dict of str to str, optional
        Gene id -> evidence text (the ``evidence`` column), when the table has one.
    manifest : dict, optional
        The run's provenance (``manifest.json`` of an output folder).
    """

    label: str
    genes: tuple[str, ...]
    ranks: dict[str, np.ndarray]
    weights: dict[str, float] | None = None
    config: dict[str, Any] | None = None
    path: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    symbols: dict[str, str] | None = None
    evidence: dict[str, str] | None = None
    manifest: dict[str, Any] | None = None

    def __repr__(self) -> str:  # not the dataclass's: every gene, rank and config value
        return (
            f"<RankFile {self.label!r}: {len(self.genes):,} genes, lists: "
            f"{', '.join(self.ranks)}" + (f"; from {self.path}" if self.path else "") + ">"
        )


_CUT = "the file is cut (an interrupted copy or write?); use the complete ranking.tsv"


def _check_complete(table: Path) -> None:
    """Refuse a ranking table whose last line is cut or whose rows lack fields."""
    from kofs.io._table import read_bytes

    data = read_bytes(table)
    if not data.endswith(b"\n"):
        raise InputError(
            f"last line has no line end: {_CUT}", path=str(table), line=data.count(b"\n") + 1
        )
    lines = data.split(b"\n")[:-1]
    if not any(line.strip() for line in lines[1:]):
        raise InputError(
            "has a header line but no genes; give the complete ranking.tsv", path=str(table)
        )
    n = lines[0].count(b"\t")
    for i, line in enumerate(lines[1:], start=2):
        k = line.count(b"\t")
        if line.strip() and k != n:
            raise InputError(
                f"has {k + 1} fields but the header has {n + 1}: {_CUT}",
                path=str(table),
                line=i,
            )


def _check_not_cut(ranks: dict[str, np.ndarray], text, table: Path, base: Path) -> None:
    """Refuse a ranking whose ranks (final or of a list) or manifest show missing rows."""
    final = ranks["final"]
    bad = np.flatnonzero(np.isnan(final) & ~text.isin(["NA", ""]).to_numpy())
    if bad.size:
        raise InputError(
            f"rank {text.iloc[int(bad[0])]!r} is not a number; give a ranking.tsv written by "
            "`kofs rank`",
            path=str(table),
            line=int(bad[0]) + 2,
        )
    n = len(final)
    for name, r in ranks.items():
        top = float(np.nanmax(r)) if np.isfinite(r).any() else 0.0
        if top > n + 0.5:
            col = "rank" if name == "final" else f"rank:{name}"
            raise InputError(
                f"lists {n} genes but column {col!r} goes up to {top:g}: {_CUT}",
                path=str(table),
            )
    mfile = base / "manifest.json"
    if table.name == "ranking.tsv" and mfile.is_file():
        import json

        try:
            expected = json.loads(mfile.read_text(encoding="utf-8"))["matrix"]["genes"]
        except (OSError, ValueError, KeyError, TypeError):
            return
        if isinstance(expected, int) and expected != n:
            raise InputError(
                f"lists {n} genes but {mfile.name} records {expected}: {_CUT}", path=str(table)
            )


def read_rank_output(path: str | os.PathLike) -> RankFile:
    """Read a ``ranking.tsv`` or an output folder of ``kofs rank``.

    An output folder must be complete (its marker ``.kofs-complete`` present and matching);
    a file inside an output folder must be what kofs wrote there
    (:mod:`kofs.io.output_folder`).

    Raises
    ------
    InputError
        Missing file, an incomplete or changed output folder (its ``.kofs-complete``), a
        table without the ``gene`` and ``rank`` columns, or a cut table: a last line without
        line end, a row with too few fields, ranks beyond the number of listed genes, or fewer
        genes than the folder's ``manifest.json`` records.
    """
    import pandas as pd

    from kofs.io.output_folder import check_complete, verify_output_file

    if os.fspath(path) == "-":
        raise ParameterError(STDIN_RANKING)
    p = Path(path)
    folder = p if p.is_dir() else None
    table = p / "ranking.tsv" if folder else p
    if not table.is_file():
        where = f"{p} has no ranking.tsv" if folder else "file not found"
        raise InputError(
            f"{where}; give a ranking.tsv or an output folder of `kofs rank`", path=str(p)
        )
    _check_complete(table)
    try:
        df = pd.read_csv(open_text(table), sep="\t", dtype=str, keep_default_na=False, quoting=3)
    except KofsError:
        raise
    except Exception as exc:  # pandas raises many kinds on malformed text
        raise InputError(
            f"cannot read the ranking table: {exc}".splitlines()[0], path=str(table)
        ) from None
    if "gene" not in df.columns or "rank" not in df.columns:
        header = str(df.columns[0]) if len(df.columns) == 1 else ""
        sep = next((c for c in (",", ";") if {"gene", "rank"} <= set(header.split(c))), None)
        if sep is not None:  # re-saved by a spreadsheet as CSV: the columns are there
            raise InputError(
                f"its columns are separated by {sep!r}; a kofs ranking table is tab-separated "
                "(as `kofs rank` writes it): save it as tab-separated text",
                path=str(table),
            )
        raise InputError(
            "not a kofs ranking table: needs the columns 'gene' and 'rank' "
            "(as written by `kofs rank`)",
            path=str(table),
        )

    def num(col: str) -> np.ndarray:
        v = pd.to_numeric(df[col].replace({"NA": None, "": None}), errors="coerce")
        return v.to_numpy(dtype=np.float64)

    ranks = {"final": num("rank")}
    for col in df.columns:
        if col.startswith("rank:"):
            if col == "rank:final":  # it would replace the fused ranking, which is "final"
                raise InputError(
                    "a list is named 'final', the name of the fused ranking; rename the list",
                    path=str(table),
                )
            ranks[col[5:]] = num(col)
    for name, r in ranks.items():
        col = "rank" if name == "final" else f"rank:{name}"
        if len(df) and np.isnan(r).all():  # the genes would be read in file order
            raise InputError(
                f"no gene has a rank (column {col!r} holds only NA or non-numbers); nothing "
                "to evaluate",
                path=str(table),
            )
        low = np.flatnonzero(r < 1)
        if low.size:  # a rank of 0 or below would read the list upside down
            raise InputError(
                f"column {col!r} holds the rank {r[low[0]]:g} (gene {df['gene'].iloc[low[0]]!r}); "
                "ranks start at 1",
                path=str(table),
            )
    _check_not_cut(ranks, df["rank"], table, folder or table.parent)
    # the specific diagnoses of a cut table above; anything else the folder's marker sees
    # (an edited file, a file of the folder missing) here
    if folder:
        check_complete(folder)  # the marker is there, every file of the run has its size
    verify_output_file(table)  # and the table read is byte for byte what kofs wrote
    weights = config = None
    base = folder or table.parent
    wfile = base / "weights.tsv"
    if wfile.is_file() and (folder or table.name == "ranking.tsv"):
        verify_output_file(wfile)
        try:
            w = pd.read_csv(open_text(wfile), sep="\t", dtype={"list": str})
            weights = dict(zip(w["list"].astype(str), w["weight"].astype(float), strict=False))
        except (KeyError, ValueError, UnicodeDecodeError, pd.errors.ParserError) as exc:
            raise InputError(
                f"not a kofs weights table (columns 'list' and 'weight' as `kofs rank` writes "
                f"them): {type(exc).__name__} {exc}".rstrip(),
                path=str(wfile),
            ) from None
    cfile = base / "config.resolved.yaml"
    if cfile.is_file() and (folder or table.name == "ranking.tsv"):
        from kofs.pipeline.yaml_files import load_config

        verify_output_file(cfile)
        config = load_config(cfile)  # keys normalised: label-column -> label_column
    label = (
        folder.name
        if folder
        else (table.parent.name if table.name == "ranking.tsv" else table.stem)
    ) or "ranking"
    genes = tuple(df["gene"].astype(str))
    seen: dict[str, int] = {}
    for i, g in enumerate(genes):
        if g in seen:  # which of its ranks would count is not for kofs to guess
            raise InputError(
                f"gene {g!r} is listed twice (lines {seen[g] + 2} and {i + 2}); a ranking "
                "lists each gene once",
                path=str(table),
            )
        seen[g] = i

    def column(name: str) -> dict[str, str] | None:
        if name not in df.columns:
            return None
        return {g: v for g, v in zip(genes, df[name].astype(str), strict=True) if v}

    manifest = None
    mfile = base / "manifest.json"
    if mfile.is_file() and (folder or table.name == "ranking.tsv"):
        import json

        try:
            manifest = json.loads(mfile.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            log.warning("%s: not readable as JSON; its provenance is left out", mfile)
    log.info("%s: %d genes, %d lists", table, len(df), len(ranks))
    return RankFile(
        label,
        genes,
        ranks,
        weights,
        config,
        str(table),
        symbols=column("symbol"),
        evidence=column("evidence"),
        manifest=manifest if isinstance(manifest, dict) else None,
    )


def ranks_on_matrix(rank_file: RankFile, expression: Expression) -> dict[str, np.ndarray]:
    """Every list's ranks placed on the matrix's genes (genes the list lacks get NaN).

    Raises
    ------
    CoverageError
        No gene of the ranking is in the matrix.
    """
    mapping, report = match_gene_ids(
        list(rank_file.genes), expression, source=f"ranking {rank_file.label}", path=rank_file.path
    )
    if report.dropped:
        log.warning(
            "ranking %s: %d of its genes are not in the matrix (ignored)",
            rank_file.label,
            report.dropped,
        )
    src = list(mapping)
    pos = {g: i for i, g in enumerate(rank_file.genes)}
    src_idx = np.array([pos[g] for g in src], dtype=np.int64)
    dst_idx = np.array([mapping[g] for g in src], dtype=np.int64)
    first: dict[int, str] = {}
    for g, j in zip(src, dst_idx.tolist(), strict=True):
        if j in first:  # TP53 and tp53: the rank written last replaced the other, silently
            raise InputError(
                f"genes {first[j]!r} and {g!r} are one gene of the matrix "
                f"({expression.genes[j]!r}); a ranking lists each gene once",
                path=rank_file.path,
            )
        first[j] = g
    out = {}
    for name, r in rank_file.ranks.items():
        v = np.full(expression.n_genes, np.nan)
        v[dst_idx] = r[src_idx]
        out[name] = v
    return out
