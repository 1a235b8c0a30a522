"""Gene Ontology annotation readers: GAF (1.0 and 2.x), NCBI gene2go and a simple TSV.

:func:`read_go_annotations` returns a frozen :class:`GOAnnotations`, one entry per annotation row
(gene, GO id, evidence, aspect) plus every gene id column the file carries (GAF: ``db_object_id``
and ``symbol``; gene2go: ``entrez``; TSV: its own columns, e.g. ``entrez`` and ``symbol``), so the
pipeline can match whichever identifier the expression matrix uses. Rows qualified ``NOT`` are
dropped. :meth:`GOAnnotations.resolved` maps secondary GO ids to primary ones, drops unknown or
obsolete ids (with a warning giving the count) and fills the aspect from the ontology.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from kofs.errors import InputError, ParameterError, checked_keywords, require_instance
from kofs.io._annotation_formats import (
    BAD_ASPECT_KEY,
    DROPPED_KEY,
    READER_VERSION,
    TAXA_KEY,
    read_gaf,
    read_gene2go,
    read_go_tsv,
    sniff_annotation_format,
)
from kofs.io._fsops import check_api_options, check_path_argument, file_digest
from kofs.io.ontology import Ontology
from kofs.progress import Progress, task
from kofs.resources import check_memory, estimate_go_annotations_file

if TYPE_CHECKING:
    from kofs.cache import Cache

log = logging.getLogger(__name__)

__all__ = ["GOAnnotations", "read_go_annotations", "parse_evidence_codes"]

_FORMATS = ("auto", "gaf", "gene2go", "tsv")


def _ro(values: Iterable[str]) -> np.ndarray:
    """A read-only object array (a read-only view of an object ndarray, no copy)."""
    if isinstance(values, np.ndarray) and values.dtype == object and values.ndim == 1:
        a = values.view()
    else:
        a = np.array(list(values), dtype=object)
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class GOAnnotations:
    """Direct GO annotations, one entry per (non-NOT) row of the file.

    Attributes
    ----------
    id_columns : mapping of str to ndarray of object, each of shape (N,)
        Gene id columns of the file, first = the file's main id (GAF ``db_object_id``, gene2go
        ``entrez``, TSV first column).
    terms : ndarray of object, shape (N,)
        GO ids as written (after :meth:`resolved`: live primary ids).
    evidence : ndarray of object, shape (N,)
        Evidence codes (``""`` when the file has none).
    aspect : ndarray of object, shape (N,)
        ``"BP"``, ``"MF"``, ``"CC"`` or ``""`` when unknown.
    header : mapping
        Header lines kept (``gaf-version``, ``date-generated``, ...).
    fmt : str
        ``"gaf"``, ``"gene2go"`` or ``"tsv"``.
    source : str or None
    digest : str or None
        Identity of this exact content, set by :func:`read_go_annotations` from the file's
        SHA-256 and the filters (keys the cache of derived data); :meth:`select` and
        :meth:`resolved` clear it.
    taxa : mapping of str to int
        Rows of each NCBI taxon in the file, before any taxon filter (GAF's taxon column,
        gene2go's ``tax_id``; empty for a TSV, which has none).
    """

    id_columns: Mapping[str, np.ndarray]
    terms: np.ndarray
    evidence: np.ndarray
    aspect: np.ndarray
    header: Mapping[str, str] = field(default_factory=dict)
    fmt: str = "tsv"
    source: str | None = None
    digest: str | None = None
    taxa: Mapping[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        cols = {k: v if isinstance(v, np.ndarray) and not v.flags.writeable else _ro(v)
                for k, v in dict(self.id_columns).items()}  # fmt: skip
        object.__setattr__(self, "id_columns", cols)
        for name in ("terms", "evidence", "aspect"):
            v = getattr(self, name)
            if not isinstance(v, np.ndarray) or v.flags.writeable:
                object.__setattr__(self, name, _ro(v))
        n = len(self.terms)
        if not cols or any(len(c) != n for c in cols.values()) or len(self.evidence) != n \
                or len(self.aspect) != n:  # fmt: skip
            raise ValueError("GOAnnotations: columns differ in length")
        object.__setattr__(self, "header", dict(self.header))
        object.__setattr__(self, "taxa", dict(self.taxa))

    def __len__(self) -> int:
        return len(self.terms)

    @property
    def id_column_names(self) -> tuple[str, ...]:
        """Names of the gene id columns, main id first."""
        return tuple(self.id_columns)

    def gene_ids(self, column: str | None = None) -> np.ndarray:
        """The gene id of every row in ``column`` (default: the main id column)."""
        if column is None:
            column = self.id_column_names[0]
        if column not in self.id_columns:
            raise ParameterError(
                f"annotation id column {column!r} does not exist; use one of "
                f"{', '.join(self.id_column_names)}"
            )
        return self.id_columns[column]

    def select(self, mask: np.ndarray) -> GOAnnotations:
        """The rows where ``mask`` is true."""
        mask = np.asarray(mask, dtype=bool)
        return replace(
            self,
            id_columns={k: v[mask] for k, v in self.id_columns.items()},
            terms=self.terms[mask],
            evidence=self.evidence[mask],
            aspect=self.aspect[mask],
            digest=None,
        )

    def resolved(self, ontology: Ontology) -> GOAnnotations:
        """Map ids onto ``ontology``: alt_id -> primary, aspect from the ontology, drop the rest.

        Rows whose GO id is unknown to the ontology or obsolete are dropped with one warning
        giving their count.
        """
        import pandas as pd

        codes, uniques = pd.factorize(self.terms)
        primary = {t: ontology.primary(t) for t in uniques}
        mapped = np.array([primary[t] or "" for t in uniques] + [""], dtype=object)
        terms = mapped[codes]  # code -1 (none in practice) maps to ""
        keep = terms != ""
        n_alt = sum(1 for t, p in primary.items() if p is not None and p != t)
        if n_alt:
            log.info("%s: %d secondary GO ids mapped to their primary id", self.source, n_alt)
        dropped = int((~keep).sum())
        if dropped:
            bad = sorted(t for t, p in primary.items() if p is None)
            log.warning(
                "%s: %d annotation rows dropped: %d GO ids unknown to or obsolete in the ontology "
                "(e.g. %s)", self.source, dropped, len(bad), ", ".join(bad[:3]),
            )  # fmt: skip
        aspects = np.array([ontology.namespaces.get(t, "") for t in mapped], dtype=object)
        aspect = aspects[codes]
        given = self.aspect.astype(str)
        other = (given != "") & (aspect != "") & (given != aspect.astype(str))
        if other.any():
            i = int(np.flatnonzero(other)[0])
            log.warning(
                "%s: %d annotation rows give an aspect other than their term's namespace in the "
                "ontology (e.g. %s as %s, the ontology says %s); the ontology's is used",
                self.source, int(other.sum()), self.terms[i], given[i], aspect[i],
            )  # fmt: skip
        out = replace(self, terms=terms, aspect=aspect, digest=None)
        return out.select(keep)


def _warn_bad_aspects(path: Path, bad: object) -> None:
    """One warning for the aspect cells that are not a GO aspect (the ontology's is used)."""
    if isinstance(bad, dict) and bad:
        shown = ", ".join(repr(v) for v in sorted(bad, key=lambda v: -bad[v])[:3])
        log.warning(
            "%s: %d annotation rows have an aspect that is not P, F or C (%s); each term's "
            "aspect is taken from the ontology",
            path, sum(bad.values()), shown,
        )  # fmt: skip


def parse_evidence_codes(codes: str | Iterable[str] | None, *, what: str) -> frozenset[str] | None:
    """``"EXP,IDA"`` or an iterable of codes -> frozenset of upper-case codes (None stays None)."""
    if codes is None:
        return None
    if isinstance(codes, str):
        items = codes.split(",")
    elif isinstance(codes, Iterable) and not isinstance(codes, (bytes, Mapping)):
        items = list(codes)
    else:
        raise ParameterError(
            f"{what} {codes!r} is not a comma-separated list of evidence codes (e.g. IEA,ND)"
        )
    out = frozenset(str(c).strip().upper() for c in items if str(c).strip())
    if not out or any(not re.fullmatch(r"[A-Z]{2,4}", c) for c in out):
        raise ParameterError(
            f"{what} {codes!r} is not a comma-separated list of evidence codes (e.g. IEA,ND)"
        )
    return out


@checked_keywords
def read_go_annotations(
    path: str | os.PathLike,
    *,
    fmt: str = "auto",
    evidence: str | Iterable[str] | None = None,
    exclude_evidence: str | Iterable[str] | None = None,
    taxon: str | int | None = None,
    taxon_option: str = "--go-taxon",
    ontology: Ontology | None = None,
    cache: Cache | None = None,
    max_memory: int | None = None,
    progress: Progress | None = None,
) -> GOAnnotations:
    """Read GO annotations (plain or gzip).

    Parameters
    ----------
    path : path-like
    fmt : {"auto", "gaf", "gene2go", "tsv"}, default "auto"
        ``auto`` recognises GAF by ``!gaf-version`` or 15-17 columns and gene2go by its
        ``#tax_id`` header; anything else is read as TSV: gene, GO id[, evidence[, aspect]]
        without header, or any columns with a header naming the GO column ``go_id``
        (evidence/aspect columns recognised by name, all others are gene id columns; ``entrez_id``
        becomes ``entrez``).
    evidence : str or iterable of str, optional
        Keep only these evidence codes (``"EXP,IDA,IMP"``).
    exclude_evidence : str or iterable of str, optional
        Drop these evidence codes (``"IEA"``).
    taxon : str or int, optional
        Keep this NCBI taxon (e.g. 9606): gene2go's ``tax_id`` column, GAF's taxon column
        (``taxon:9606``; a row of an interaction with a second taxon, ``taxon:9606|taxon:10090``,
        is kept when its first taxon matches). TSV files have no taxon column: an error.
    taxon_option : str, default "--go-taxon"
        How messages name ``taxon`` (``"--taxon"`` for ``kofs gosim``).
    ontology : Ontology, optional
        When given, the result is :meth:`GOAnnotations.resolved` against it.
    cache : kofs.cache.Cache, optional
        Keep the parsed file there (keyed by its SHA-256, the format, the taxon, the reader
        version ``kofs.io._annotation_formats.READER_VERSION`` and the kofs version); filters
        and resolution are applied after loading.
    max_memory : int, optional
        Bytes; reading a file estimated to need more
        (:func:`kofs.resources.estimate_go_annotations_file`) raises
        :class:`~kofs.errors.ResourceError` before it starts.
    progress : kofs.progress.Progress, optional
        Told when parsing starts and ends (task ``"GO annotations"``; nothing on a cache hit).

    Returns
    -------
    GOAnnotations

    Raises
    ------
    InputError
        Missing file, wrong column count (with the line), a non-GO id, nothing left.
    ParameterError
        Unknown ``fmt`` or a malformed evidence list.
    """
    check_path_argument(path, "read_go_annotations")
    check_api_options("read_go_annotations", cache=cache, progress=progress)
    if ontology is not None:  # was an AttributeError ('str' object has no attribute 'primary')
        require_instance("read_go_annotations", "ontology", ontology, Ontology, "kofs.read_obo")
    p = Path(path)
    if fmt not in _FORMATS:
        raise ParameterError(
            f"annotation format {fmt!r} is unknown; use one of {', '.join(_FORMATS)}"
        )
    keep_ev = parse_evidence_codes(evidence, what="--go-evidence")
    drop_ev = parse_evidence_codes(exclude_evidence, what="--go-exclude-evidence")
    both = sorted((keep_ev or set()) & (drop_ev or set()))
    if both:  # the rows of such a code were dropped, and the filter said nothing
        raise ParameterError(
            f"--go-evidence and --go-exclude-evidence both name {', '.join(both)}: a code "
            "cannot be kept and dropped; give it to one of them"
        )
    if not p.is_file():
        raise InputError("GO annotation file not found; check the --go-annotations path", path=p)
    kind = sniff_annotation_format(p) if fmt == "auto" else fmt
    tax = None if taxon is None else str(taxon).strip().removeprefix("taxon:")
    if tax is not None and kind == "tsv":
        raise ParameterError(
            f"{taxon_option} {taxon} cannot filter {p}: a TSV annotation file has no taxon "
            f"column (filter the file, or leave {taxon_option} out)"
        )
    sha = file_digest(p)[1]
    key = [sha, kind, tax, READER_VERSION]
    hit = None if cache is None else cache.get("annotations", key, check=_check_arrays)
    if hit is not None:
        ann = _annotations_from_arrays(*hit, source=str(p))
        bad = hit[1].get("bad_aspects") or {}
        dropped = hit[1].get("dropped") or {}
    else:
        check_memory(
            estimate_go_annotations_file(p) or 0,
            limit=max_memory,
            what=f"reading the GO annotations {p}",
            suggestion="use a smaller annotation file (one species, e.g. goa_human.gaf) or "
            "raise --max-memory",
        )
        try:
            with task(progress, "GO annotations"):
                if kind == "gaf":
                    cols, terms, ev, asp, header = read_gaf(p, tax)
                elif kind == "gene2go":
                    cols, terms, ev, asp, header = read_gene2go(p, tax)
                else:
                    cols, terms, ev, asp, header = read_go_tsv(p)
        except (OSError, EOFError) as exc:
            raise InputError(f"cannot read annotation file ({exc})", path=p) from None
        taxa = header.pop(TAXA_KEY, {})
        bad = header.pop(BAD_ASPECT_KEY, {})
        dropped = header.pop(DROPPED_KEY, {})
        ann = GOAnnotations(cols, terms, ev, asp, header=header, fmt=kind, source=str(p), taxa=taxa)
        if cache is not None:
            arrays, meta = _annotations_to_arrays(ann)
            cache.put("annotations", key, arrays, {**meta, "bad_aspects": bad, "dropped": dropped})
    _warn_bad_aspects(p, bad)
    gone = [  # (rows, why), in the order they were dropped
        (dropped.get("taxon", 0), f"of other taxa than {taxon_option} {tax}"),
        (dropped.get("not", 0), "NOT-qualified (they say a gene lacks the term)"),
        (dropped.get("blank", 0), "without a GO id"),
    ]
    if keep_ev is not None or drop_ev is not None:
        e = ann.evidence
        if len(e) and not np.any(e != ""):
            option = "--go-evidence" if keep_ev is not None else "--go-exclude-evidence"
            codes = ",".join(sorted(keep_ev if keep_ev is not None else drop_ev or ()))
            raise ParameterError(
                f"{option} {codes} cannot filter {p}: the file gives no evidence codes (a TSV "
                f"without an evidence column); filter the file, or leave {option} out"
            )
        mask = np.ones(len(e), dtype=bool)
        if keep_ev is not None:
            mask &= np.isin(e, list(keep_ev))
            codes = ",".join(sorted(keep_ev))
            gone.append((int((~mask).sum()), f"dropped by --go-evidence {codes} (other codes)"))
        if drop_ev is not None:
            out = mask & np.isin(e, list(drop_ev))
            codes = ",".join(sorted(drop_ev))
            gone.append((int(out.sum()), f"dropped by --go-exclude-evidence {codes}"))
            mask &= ~out
        ann = ann.select(mask)
    if ontology is not None:
        before = len(ann)
        ann = ann.resolved(ontology)
        gone.append((before - len(ann), "on GO ids unknown to or obsolete in the ontology"))
    filters = [sorted(keep_ev or ()), sorted(drop_ev or ())]
    ann = replace(ann, digest=_digest([*key, *filters, ontology and ontology.digest]))
    if len(ann) == 0:
        raise InputError(_nothing_left(gone, ann.taxa), path=p)
    log.info("%s: %d GO annotation rows (%s)", p, len(ann), kind)
    return ann


def _nothing_left(gone: list[tuple[int, str]], taxa: Mapping[str, int]) -> str:
    """Why no annotation row is left, with the count of the rows each step dropped: ``no
    usable GO annotation left: all 12 rows of the file are NOT-qualified (...)``."""
    total = sum(n for n, _ in gone)  # every row read is dropped by one step: none is left
    gone = [(n, why) for n, why in gone if n]
    if total == 0:
        return "no GO annotation row in the file (nothing but its header); give an annotation file"
    if len(gone) == 1:
        n, why = gone[0]
        text = f"all {total:,} annotation rows of the file are {why}"
    else:
        text = f"of the {total:,} annotation rows of the file, " + ", ".join(
            f"{n:,} {'is' if n == 1 else 'are'} {why}" for n, why in gone
        )
    held = f"; the file holds {taxa_text(taxa)}" if taxa else ""
    return f"no usable GO annotation left: {text}{held}"


def _digest(parts: list) -> str:
    return hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()


def _annotations_to_arrays(ann: GOAnnotations) -> tuple[dict[str, np.ndarray], dict]:
    """Plain string arrays of parsed annotations (for :mod:`kofs.cache`; no pickle)."""
    arrays = {f"id:{k}": np.array(v.tolist(), dtype=str) for k, v in ann.id_columns.items()}
    for name in ("terms", "evidence", "aspect"):
        arrays[name] = np.array(getattr(ann, name).tolist(), dtype=str)
    meta = {
        "columns": list(ann.id_columns),
        "header": dict(ann.header),
        "fmt": ann.fmt,
        "taxa": dict(ann.taxa),
    }
    return arrays, meta


def _check_arrays(c) -> None:
    """The invariants of cached annotations (:func:`_annotations_to_arrays`), before use."""
    from kofs.cache import EntryError

    columns = c.field("columns", list)
    if not columns or not all(isinstance(k, str) for k in columns):
        raise EntryError("field 'columns' is not a list of names")
    n = len(c.strings("terms"))
    for k in columns:
        c.strings(f"id:{k}", n)
    c.strings("evidence", n)
    c.strings("aspect", n)
    c.field("header", dict)
    c.field("fmt", str)
    taxa = c.field("taxa", dict, optional=True) or {}
    if not all(
        isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool)
        for k, v in taxa.items()
    ):
        raise EntryError("field 'taxa' is not a mapping of taxon to count")
    bad = c.field("bad_aspects", dict, optional=True) or {}
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in bad.values()):
        raise EntryError("field 'bad_aspects' is not a mapping of value to count")
    dropped = c.field("dropped", dict, optional=True) or {}
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in dropped.values()):
        raise EntryError("field 'dropped' is not a mapping of reason to count")


def _annotations_from_arrays(arrays: dict, meta: dict, *, source: str) -> GOAnnotations:
    def obj(a: np.ndarray) -> np.ndarray:
        out = a.astype(object) if a.size else np.zeros(0, dtype=object)
        out.setflags(write=False)
        return out

    return GOAnnotations(
        {k: obj(arrays[f"id:{k}"]) for k in meta["columns"]},
        obj(arrays["terms"]),
        obj(arrays["evidence"]),
        obj(arrays["aspect"]),
        header=meta.get("header", {}),
        fmt=meta.get("fmt", "tsv"),
        source=source,
        taxa={str(k): int(v) for k, v in (meta.get("taxa") or {}).items()},
    )


#: Names of common NCBI taxa, for messages.
TAXON_NAMES = {
    "9606": "human",
    "10090": "mouse",
    "10116": "rat",
    "7955": "zebrafish",
    "7227": "fruit fly",
    "6239": "C. elegans",
    "559292": "S. cerevisiae",
    "4932": "S. cerevisiae",
    "284812": "S. pombe",
    "3702": "A. thaliana",
    "9913": "cattle",
    "9823": "pig",
    "9031": "chicken",
    "9544": "rhesus macaque",
    "9615": "dog",
    "8364": "X. tropicalis",
}


def taxa_text(taxa: Mapping[str, int], shown: int = 4) -> str:
    """``"taxon 10090 (mouse, 3,012 rows)"``, the largest first."""
    items = sorted(taxa.items(), key=lambda kv: (-kv[1], kv[0]))
    parts = [
        f"{t} ("
        + (f"{TAXON_NAMES[t]}, " if t in TAXON_NAMES else "")
        + f"{n:,} row{'' if n == 1 else 's'})"
        for t, n in items[:shown]
    ]
    more = f" and {len(items) - shown} more" if len(items) > shown else ""
    return ("taxon " if len(items) == 1 else "taxa ") + ", ".join(parts) + more


def species_mismatch(annotations: GOAnnotations, expression: Any) -> str | None:
    """A warning when the annotations seem to be of another species than the matrix, else None.

    The sign: most of the file's gene symbols that name a matrix gene do so only when case is
    ignored (mouse ``Cd74`` against human ``CD74``, or the reverse), for at least
    :data:`CASE_ONLY_MIN` symbols. The file's taxa are named when it has them.
    """
    column = "symbol" if "symbol" in annotations.id_columns else annotations.id_column_names[0]
    symbols = {str(v) for v in annotations.id_columns[column] if v}
    exact: set[str] = set(expression.genes)
    for values in getattr(expression, "annotations", {}).values():
        exact.update(values)
    upper = {g.upper(): g for g in exact}
    n_exact = sum(1 for v in symbols if v in exact)
    case_only = sorted(v for v in symbols if v not in exact and v.upper() in upper)
    if len(case_only) < CASE_ONLY_MIN or len(case_only) <= n_exact:
        return None
    eg = case_only[0]
    held = f"; the file holds {taxa_text(annotations.taxa)}" if annotations.taxa else ""
    return (
        f"{annotations.source or 'GO annotations'}: {len(case_only):,} of its gene symbols "
        f"match the matrix only when case is ignored (e.g. {eg} = {upper[eg.upper()]}), "
        f"{n_exact:,} match exactly{held}: the annotations seem to be of another species than "
        "the matrix; use annotations of the matrix's species (e.g. goa_human.gaf for a human "
        "matrix)"
    )


#: Fewest case-only symbol matches that suggest another species.
CASE_ONLY_MIN = 20
