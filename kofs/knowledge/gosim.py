"""``kofs gosim`` as a library call: GO semantic similarity between the genes of a list, from
files to a genes x genes TSV (or ``.npz`` / ``.parquet``).

:class:`GosimConfig` declares the settings once (:func:`kofs.options.opt`): the command's options
are generated from it. :func:`gosim_matrix` computes; :func:`run_gosim` computes and writes
(the command's one call).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import IO, Any

from kofs.errors import CoverageError, InputError, ParameterError, checked_keywords, short_repr
from kofs.knowledge.go_semantics import MODES
from kofs.knowledge.go_similarity import COMBINES, MEASURES
from kofs.options import build_known, opt

log = logging.getLogger(__name__)

__all__ = ["GosimConfig", "GeneSimilarityTable", "gosim_matrix", "run_gosim"]


@dataclass(frozen=True)
class GosimConfig:
    """The settings of an all-pairs GO similarity of a gene list."""

    go: str = opt(
        "go",
        "path",
        required=True,
        help="Gene Ontology OBO file (.obo or .obo.gz; go-basic or full go.obo).",
    )
    go_annotations: str = opt(
        "go_annotations",
        "path",
        required=True,
        help="GO annotations: GAF 1.0/2.x, NCBI gene2go or TSV (gene, GO id[, evidence[, aspect]]).",
    )
    genes: str = opt(
        "genes",
        "path",
        required=True,
        stdin=True,
        help="Genes to compare (one id per line, or first column of a CSV/TSV).",
    )
    output: str = opt(
        "output",
        "path",
        required=True,
        short="-o",
        stdin=True,
        folder=True,  # taken as typed: the writer says a folder needs a file name
        help="Output: genes x genes TSV (gene ids as first column and header; gzip-compressed "
        "if named .gz), - for stdout, "
        "or binary by extension: .npz (arrays 'similarity' and 'genes'; numpy.load) or "
        ".parquet. Use .npz for thousands of genes.",
    )
    measure: str = opt(
        "measure",
        "choice",
        "lin",
        choices=MEASURES,
        help="Term similarity: Lin (in [0, 1]) or Resnik (IC of the MICA).",
    )
    combine: str = opt(
        "combine",
        "choice",
        "bma",
        choices=COMBINES,
        help="Gene similarity from term similarities: best-match average, max or average.",
    )
    aspect: str = opt("aspect", "choice", "BP", choices=("BP", "MF", "CC"), help="GO aspect.")
    mode: str = opt(
        "mode",
        "choice",
        "kofs",
        choices=MODES,
        help="kofs definitions, or reproduce R GOSemSim mgeneSim (its term table for the GO "
        "release ships with kofs).",
    )
    gosemsim_version: str | None = opt(
        "gosemsim_version",
        metavar="VERSION",
        help="--mode gosemsim: the GOSemSim version whose term table is used (default: the "
        "newest kofs ships for the GO release; 2.24 for GO 2022-07-01).",
    )
    go_evidence: tuple[str, ...] | None = opt(
        "go_evidence",
        "names",
        metavar="CODES",
        help="Use only these evidence codes (comma-separated, e.g. EXP,IDA,IMP).",
    )
    go_exclude_evidence: tuple[str, ...] | None = opt(
        "go_exclude_evidence",
        "names",
        metavar="CODES",
        help="Drop these evidence codes (comma-separated, e.g. IEA).",
    )
    taxon: str | None = opt(
        "taxon",
        help="NCBI taxon to keep (e.g. 9606): gene2go tax_id or GAF taxon column; an error for "
        "TSV.",
    )
    unknown_terms: str | None = opt(
        "unknown_terms",
        "path",
        stdin=True,
        help="GO ids to give no information content (one per line, # comments); in --mode "
        "gosemsim it replaces the term table kofs ships for the release.",
    )
    max_memory: str | None = opt(
        "max_memory",
        metavar="SIZE",
        help="Memory limit, e.g. 4G (default: 80% of RAM); a gene list whose all-pairs matrix "
        "would exceed it fails early.",
    )
    cache_dir: str | None = opt(
        "cache_dir",
        "path",
        folder=True,
        help="Cache of parsed GO (default: $KOFS_CACHE_DIR, else $XDG_CACHE_HOME/kofs or "
        "~/.cache/kofs).",
    )
    no_cache: bool = opt("no_cache", "bool", False, help="Neither read nor write the GO cache.")
    keep_missing: bool = opt(
        "keep_missing",
        "bool",
        False,
        help="Keep genes without terms in the output (as NA rows/columns) instead of omitting "
        "them.",
    )

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> GosimConfig:
        """Parse and check ``{name: value}`` (dashes or underscores); unknown names fail with a
        did-you-mean hint."""
        return build_known(cls, values, "gosim option")


@dataclass(frozen=True)
class GeneSimilarityTable:
    """An all-pairs gene similarity: ``values[i, j]`` between ``genes[i]`` and ``genes[j]``
    (float32 in kofs mode, float64 in gosemsim mode; NaN rows for genes kept without terms)."""

    genes: list[str]
    values: Any
    info: dict[str, str]

    def __repr__(self) -> str:  # not the dataclass's: every gene id
        return (
            f"<GeneSimilarityTable: {len(self.genes):,} x {len(self.genes):,} genes, "
            f"{getattr(self.values, 'dtype', '?')}>"
        )


def _read_go_ids(path: str) -> list[str]:
    from kofs.io._open import open_text

    # the validated reader: not UTF-8, binary, damaged gzip, a folder: one line naming the file
    with open_text(path, what="the term list") as fh:
        ids = [ln.split("#", 1)[0].strip() for ln in fh]
    ids = [i for i in ids if i]
    bad = [i for i in ids if not i.startswith("GO:")]
    if bad:
        raise InputError(f"{bad[0]!r} is not a GO id (GO:NNNNNNN); one id per line", path=path)
    return ids


def _config(config: GosimConfig | Mapping[str, Any]) -> GosimConfig:
    return config if isinstance(config, GosimConfig) else GosimConfig.from_mapping(config)


@checked_keywords
def gosim_matrix(
    config: GosimConfig | Mapping[str, Any], *, progress: Any = None
) -> GeneSimilarityTable:
    """The GO similarity of the genes of ``config.genes`` (memory checked first; genes without
    a term of the aspect are named in one warning and omitted, or kept as NaN with
    ``keep_missing``).

    Raises
    ------
    InputError, CoverageError, ResourceError, ParameterError
    """
    import numpy as np

    from kofs.cache import open_cache
    from kofs.io.annotations import read_go_annotations
    from kofs.io.genes import read_gene_list
    from kofs.io.ontology import read_obo
    from kofs.knowledge.go import gene_similarity, genes_with_terms
    from kofs.knowledge.go_semantics import go_semantics
    from kofs.resources import check_memory, estimate_go_all_pairs, resolve_limit

    c = _config(config)
    genes = read_gene_list(c.genes)
    dtype = np.float32 if c.mode == "kofs" else np.float64
    limit = resolve_limit(c.max_memory)
    check_memory(
        estimate_go_all_pairs(len(genes), itemsize=np.dtype(dtype).itemsize),
        limit=limit,
        what=f"all-pairs GO similarity of {len(genes)} genes",
        suggestion="give fewer genes (--genes) or split the list",
    )
    cache = open_cache(c.cache_dir, enabled=not c.no_cache)
    ontology = read_obo(c.go, cache=cache, max_memory=limit, progress=progress)
    annotations = read_go_annotations(
        c.go_annotations,
        evidence=",".join(c.go_evidence) if c.go_evidence else None,
        exclude_evidence=",".join(c.go_exclude_evidence) if c.go_exclude_evidence else None,
        taxon=c.taxon,
        taxon_option="--taxon",
        ontology=ontology,
        cache=cache,
        max_memory=limit,
        progress=progress,
    )
    unknown = None if c.unknown_terms is None else _read_go_ids(c.unknown_terms)
    sem = go_semantics(
        ontology, annotations, aspect=c.aspect, mode=c.mode, unknown_terms=unknown,
        gosemsim_version=c.gosemsim_version, cache=cache, max_memory=limit, progress=progress,
    )  # fmt: skip
    with_terms = genes_with_terms(ontology, annotations, genes, semantics=sem)
    if not with_terms:
        shown = ", ".join(short_repr(g, 40) for g in genes[:3])
        raise CoverageError(
            f"none of its {len(genes)} genes (e.g. {shown}) has a {c.aspect.upper()} term in "
            f"the annotations {c.go_annotations}; check the gene id type and the evidence "
            "filters",
            path=c.genes,
        )
    have = set(with_terms)
    missing = [g for g in genes if g not in have]
    if missing:
        shown = ", ".join(missing[:10]) + (", ..." if len(missing) > 10 else "")
        log.warning(
            "%d of %d genes have no %s term (%s): %s", len(missing), len(genes),
            c.aspect.upper(), "written as NA" if c.keep_missing else "omitted", shown,
        )  # fmt: skip
    names = genes if c.keep_missing else with_terms
    values, _ = gene_similarity(
        ontology, annotations, names, measure=c.measure, combine=c.combine, aspect=c.aspect,
        mode=c.mode, semantics=sem, max_memory=limit, progress=progress, dtype=dtype,
    )  # fmt: skip
    info = {"measure": c.measure, "combine": c.combine, "aspect": c.aspect.upper(),
            "mode": c.mode, "go_release": ontology.data_version or "",
            "annotations": str(c.go_annotations)}  # fmt: skip
    return GeneSimilarityTable(list(names), values, info)


#: Suffixes of formats :func:`run_gosim` does not write (a TSV so named would be misread).
_NOT_WRITTEN = (".csv", ".xlsx", ".xls", ".json", ".h5", ".bz2", ".xz", ".zip", ".zst")


def output_format(out: str) -> str:
    """``tsv``, ``tsv.gz`` (gzip-compressed), ``npz`` or ``parquet`` from the output name.

    Raises
    ------
    ParameterError
        A name that promises another format (``.csv``, ``.xlsx``, ``.bz2``, ...): the
        tab-separated text written under it would be misread.
    """
    low = out.lower()
    if low.endswith(".npz"):
        return "npz"
    if low.endswith(".parquet"):
        return "parquet"
    bad = next((x for x in _NOT_WRITTEN if low.endswith(x) or low.endswith(x + ".gz")), None)
    if bad is not None:
        raise ParameterError(
            f"--output {out}: gosim writes no {bad} file; name it .tsv (tab-separated), "
            ".tsv.gz, .npz or .parquet"
        )
    return "tsv.gz" if low.endswith(".gz") else "tsv"


def write_matrix(fh: IO[str], genes: list[str], values: Any) -> None:
    """A genes x genes TSV (gene ids as first column and header; float32 values with 7
    significant digits, float64 with 10; NaN as ``NA``)."""
    import numpy as np

    from kofs.io.output import format_float

    fh.write("gene\t" + "\t".join(genes) + "\n")
    spec = "%.7g" if values.dtype == np.float32 else "%.10g"
    # one %-format per row (formats a whole row in C, ~30 % faster than formatting each value)
    row_format = "\t".join([spec] * values.shape[1])
    for g, row in zip(genes, values, strict=True):
        if np.isnan(row).any():
            text = "\t".join(map(format_float, row.tolist()))
        else:
            text = row_format % tuple(row.tolist())
        fh.write(g + "\t" + text + "\n")


@checked_keywords
def run_gosim(
    config: GosimConfig | Mapping[str, Any],
    *,
    progress: Any = None,
    stdout: IO[str] | None = None,
) -> GeneSimilarityTable:
    """:func:`gosim_matrix`, written to ``config.output`` atomically (``-``: ``stdout``,
    default ``sys.stdout``); the output is checked before any work (not one of the inputs).
    Returns the table."""
    from kofs.io.output import atomic_file, check_output_file, write_similarity_npz

    c = _config(config)
    out = c.output
    fmt = output_format(out)
    check_output_file(out, inputs=[c.genes, c.go, c.go_annotations])
    table = gosim_matrix(c, progress=progress)
    if out == "-":
        stream = stdout or sys.stdout
        write_matrix(stream, table.genes, table.values)
        stream.flush()
    elif fmt == "npz":
        with atomic_file(out, "wb") as fh:
            write_similarity_npz(fh, table.genes, table.values, table.info)
    elif fmt == "parquet":
        import pandas as pd

        df = pd.DataFrame(table.values, columns=list(table.genes))
        df.insert(0, "gene", list(table.genes))
        with atomic_file(out, "wb") as fh:
            df.to_parquet(fh, index=False)
    elif fmt == "tsv.gz":  # as every kofs reader reads a .gz name
        import gzip
        import io

        with atomic_file(out, "wb") as fh, gzip.GzipFile(fileobj=fh, mode="wb", mtime=0) as gz:
            text = io.TextIOWrapper(gz, encoding="utf-8", newline="\n")
            write_matrix(text, table.genes, table.values)
            text.flush()
            text.detach()
    else:
        with atomic_file(out) as fh:
            write_matrix(fh, table.genes, table.values)
    return table
