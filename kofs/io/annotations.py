"""Gene Ontology annotation readers: GAF 2.x, NCBI gene2go and a simple TSV.

:func:`read_go_annotations` returns a frozen :class:`GOAnnotations`, one entry per annotation row
(gene, GO id, evidence, aspect) plus every gene id column the file carries (GAF: ``db_object_id``
and ``symbol``; gene2go: ``entrez``; TSV: its own columns, e.g. ``entrez`` and ``symbol``), so the
pipeline can match whichever identifier the expression matrix uses. Rows qualified ``NOT`` are
dropped. :meth:`GOAnnotations.resolved` maps secondary GO ids to primary ones, drops unknown or
obsolete ids (with a warning giving the count) and fills the aspect from the ontology.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from kofs.errors import InputError, ParameterError
from kofs.io._open import stream_text
from kofs.io.ontology import Ontology, normalise_aspect

log = logging.getLogger(__name__)

__all__ = ["GOAnnotations", "read_go_annotations", "parse_evidence_codes"]

_GO_ID = re.compile(r"^GO:\d{7}$")
_FORMATS = ("auto", "gaf", "gene2go", "tsv")
_TSV_ID_NAMES = {"entrez_id": "entrez", "entrezid": "entrez", "gene_id": "entrez", "geneid": "entrez",
                 "entrez": "entrez", "symbol": "symbol", "gene_symbol": "symbol",
                 "uniprot": "uniprot", "uniprot_id": "uniprot", "ensembl": "ensembl",
                 "ensembl_id": "ensembl", "gene": "gene"}  # fmt: skip
_TSV_GO_NAMES = ("go_id", "go", "goid", "go_term", "term")
_TSV_EVIDENCE_NAMES = ("evidence", "evidence_code", "code")
_TSV_ASPECT_NAMES = ("aspect", "ontology", "category", "namespace", "ont")


def _ro(values: Iterable[str]) -> np.ndarray:
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
    """

    id_columns: Mapping[str, np.ndarray]
    terms: np.ndarray
    evidence: np.ndarray
    aspect: np.ndarray
    header: Mapping[str, str] = field(default_factory=dict)
    fmt: str = "tsv"
    source: str | None = None

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
        )

    def resolved(self, ontology: Ontology) -> GOAnnotations:
        """Map ids onto ``ontology``: alt_id -> primary, aspect from the ontology, drop the rest.

        Rows whose GO id is unknown to the ontology or obsolete are dropped with one warning
        giving their count.
        """
        primary = {t: ontology.primary(t) for t in set(self.terms)}
        terms = np.array([primary[t] or "" for t in self.terms], dtype=object)
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
        aspect = np.array([ontology.namespaces.get(t, "") for t in terms], dtype=object)
        out = replace(self, terms=terms, aspect=aspect)
        return out.select(keep)


def parse_evidence_codes(codes: str | Iterable[str] | None, *, what: str) -> frozenset[str] | None:
    """``"EXP,IDA"`` or an iterable of codes -> frozenset of upper-case codes (None stays None)."""
    if codes is None:
        return None
    items = codes.split(",") if isinstance(codes, str) else list(codes)
    out = frozenset(str(c).strip().upper() for c in items if str(c).strip())
    if not out or any(not re.fullmatch(r"[A-Z]{2,4}", c) for c in out):
        raise ParameterError(f"{what} {codes!r} is not a comma-separated list of evidence codes (e.g. IEA,ND)")
    return out


def _open(path: Path):
    """Stream the file (plain, gzip, bzip2 or zip); decompression errors become InputError."""
    return stream_text(path, what="GO annotation file")


def _sniff(path: Path) -> str:
    with _open(path) as fh:
        for line in fh:
            if line.startswith("!gaf-version") or line.startswith("!gpa"):
                return "gaf"
            if line.startswith("#tax_id") or line.startswith("#Format: tax_id"):
                return "gene2go"
            if line.startswith("!") or not line.strip():
                continue
            n = len(line.rstrip("\n").split("\t"))
            if n in (15, 17):
                return "gaf"
            return "tsv"
    raise InputError("empty annotation file; give a GAF, gene2go or TSV file", path=path)


def _read_gaf(path: Path) -> tuple[dict, list, list, list, dict]:
    ids: list[str] = []
    symbols: list[str] = []
    terms: list[str] = []
    evid: list[str] = []
    aspect: list[str] = []
    header: dict[str, str] = {}
    expected = 17
    n_not = 0
    with _open(path) as fh:
        for lineno, line in enumerate(fh, 1):
            if line.startswith("!"):
                key, sep, value = line[1:].partition(":")
                key = key.strip()
                if sep and re.fullmatch(r"[A-Za-z][\w-]*", key) and key not in header \
                        and key.lower() not in ("ftp", "http", "https"):  # fmt: skip
                    header[key] = value.strip()  # gaf-version, date-generated, Generated, ...
                    if key == "gaf-version" and value.strip().startswith("1"):
                        expected = 15
                continue
            if not line.strip():
                continue
            f = line.rstrip("\n").rstrip("\r").split("\t")
            if len(f) != expected:
                raise InputError(
                    f"GAF line has {len(f)} tab-separated columns, expected {expected}; "
                    "the file is not GAF 2.x or is damaged",
                    path=path, line=lineno,
                )  # fmt: skip
            if "NOT" in f[3].upper().split("|"):
                n_not += 1
                continue
            if not _GO_ID.match(f[4]):
                raise InputError(
                    f"column 5 holds {f[4]!r}, not a GO id", path=path, line=lineno, column=5
                )
            ids.append(f[1])
            symbols.append(f[2])
            terms.append(f[4])
            evid.append(f[6].upper())
            aspect.append(_aspect_or_blank(f[8]))
    if n_not:
        log.info("%s: %d NOT-qualified rows excluded", path, n_not)
    return {"db_object_id": ids, "symbol": symbols}, terms, evid, aspect, header


_ASPECT_CACHE: dict[str, str] = {}


def _aspect_or_blank(v: str) -> str:
    """Aspect code of a file's aspect cell; ``""`` when blank or not an aspect."""
    code = _ASPECT_CACHE.get(v)
    if code is None:
        try:
            code = normalise_aspect(v) if v.strip() else ""
        except ParameterError:
            code = ""
        _ASPECT_CACHE[v] = code
    return code


def _read_gene2go(path: Path, taxon: str | None) -> tuple[dict, list, list, list, dict]:
    ids: list[str] = []
    terms: list[str] = []
    evid: list[str] = []
    aspect: list[str] = []
    n_not = 0
    with _open(path) as fh:
        for lineno, line in enumerate(fh, 1):
            if line.startswith("#") or not line.strip():
                continue
            f = line.rstrip("\n").split("\t")
            if len(f) != 8:
                raise InputError(
                    f"gene2go line has {len(f)} columns, expected 8 "
                    "(tax_id GeneID GO_ID Evidence Qualifier GO_term PubMed Category)",
                    path=path, line=lineno,
                )  # fmt: skip
            if taxon is not None and f[0] != taxon:
                continue
            if f[4].upper().startswith("NOT"):
                n_not += 1
                continue
            if not _GO_ID.match(f[2]):
                raise InputError(f"column 3 holds {f[2]!r}, not a GO id", path=path, line=lineno, column=3)
            ids.append(f[1])
            terms.append(f[2])
            evid.append(f[3].upper())
            aspect.append(_aspect_or_blank(f[7]))
    if n_not:
        log.info("%s: %d NOT-qualified rows excluded", path, n_not)
    return {"entrez": ids}, terms, evid, aspect, {}


def _tsv_layout(first: list[str]) -> tuple[bool, dict[str, int], int, int | None, int | None]:
    """(has_header, id columns, GO column, evidence column, aspect column) of a TSV."""
    if len(first) >= 2 and _GO_ID.match(first[1].strip()):
        ids = {"gene": 0}
        return False, ids, 1, (2 if len(first) > 2 else None), (3 if len(first) > 3 else None)
    names = [c.strip().lower().lstrip("#") for c in first]
    go_col = next((i for i, c in enumerate(names) if c in _TSV_GO_NAMES), None)
    if go_col is None:
        raise ValueError("no GO id column")
    ev = next((i for i, c in enumerate(names) if c in _TSV_EVIDENCE_NAMES), None)
    asp = next((i for i, c in enumerate(names) if c in _TSV_ASPECT_NAMES), None)
    ids = {}
    for i, c in enumerate(names):
        if i not in (go_col, ev, asp):
            ids[_TSV_ID_NAMES.get(c, c)] = i
    if not ids:
        raise ValueError("no gene column")
    return True, ids, go_col, ev, asp


def _read_tsv(path: Path) -> tuple[dict, list, list, list, dict]:
    cols: dict[str, list[str]] = {}
    terms: list[str] = []
    evid: list[str] = []
    aspect: list[str] = []
    layout = None
    with _open(path) as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip() or (line.startswith("!")):
                continue
            f = line.rstrip("\n").rstrip("\r").split("\t")
            if layout is None:
                try:
                    layout = _tsv_layout(f)
                except ValueError:
                    raise InputError(
                        "annotation TSV needs a gene column and a GO id column (GO:NNNNNNN) as "
                        "the first two columns, or a header naming go_id",
                        path=path, line=lineno,
                    ) from None  # fmt: skip
                has_header, id_idx, go_i, ev_i, asp_i = layout
                cols = {k: [] for k in id_idx}
                width = len(f)
                if has_header:
                    continue
            if len(f) != width:
                raise InputError(
                    f"row has {len(f)} tab-separated columns, the first row has {width}",
                    path=path, line=lineno,
                )  # fmt: skip
            go = f[go_i].strip()
            if not _GO_ID.match(go):
                raise InputError(
                    f"column {go_i + 1} holds {go!r}, not a GO id (GO:NNNNNNN)",
                    path=path, line=lineno, column=go_i + 1,
                )  # fmt: skip
            for k, i in id_idx.items():
                cols[k].append(f[i].strip())
            terms.append(go)
            evid.append(f[ev_i].strip().upper() if ev_i is not None else "")
            aspect.append(_aspect_or_blank(f[asp_i]) if asp_i is not None else "")
    if layout is None:
        raise InputError("empty annotation file; give a GAF, gene2go or TSV file", path=path)
    return cols, terms, evid, aspect, {}


def read_go_annotations(
    path: str | os.PathLike,
    *,
    fmt: str = "auto",
    evidence: str | Iterable[str] | None = None,
    exclude_evidence: str | Iterable[str] | None = None,
    taxon: str | int | None = None,
    ontology: Ontology | None = None,
) -> GOAnnotations:
    """Read GO annotations (plain or gzip).

    Parameters
    ----------
    path : path-like
    fmt : {"auto", "gaf", "gene2go", "tsv"}, default "auto"
        ``auto`` recognises GAF by ``!gaf-version`` or 17 columns and gene2go by its
        ``#tax_id`` header; anything else is read as TSV: gene, GO id[, evidence[, aspect]]
        without header, or any columns with a header naming the GO column ``go_id``
        (evidence/aspect columns recognised by name, all others are gene id columns; ``entrez_id``
        becomes ``entrez``).
    evidence : str or iterable of str, optional
        Keep only these evidence codes (``"EXP,IDA,IMP"``).
    exclude_evidence : str or iterable of str, optional
        Drop these evidence codes (``"IEA"``).
    taxon : str or int, optional
        gene2go only: keep this NCBI taxon (e.g. 9606).
    ontology : Ontology, optional
        When given, the result is :meth:`GOAnnotations.resolved` against it.

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
    p = Path(path)
    if fmt not in _FORMATS:
        raise ParameterError(f"annotation format {fmt!r} is unknown; use one of {', '.join(_FORMATS)}")
    keep_ev = parse_evidence_codes(evidence, what="--go-evidence")
    drop_ev = parse_evidence_codes(exclude_evidence, what="--go-exclude-evidence")
    if not p.is_file():
        raise InputError("GO annotation file not found; check the --go-annotations path", path=p)
    kind = _sniff(p) if fmt == "auto" else fmt
    try:
        if kind == "gaf":
            cols, terms, ev, asp, header = _read_gaf(p)
        elif kind == "gene2go":
            cols, terms, ev, asp, header = _read_gene2go(p, None if taxon is None else str(taxon))
        else:
            cols, terms, ev, asp, header = _read_tsv(p)
    except (OSError, EOFError) as exc:
        raise InputError(f"cannot read annotation file ({exc})", path=p) from None
    ann = GOAnnotations(cols, terms, ev, asp, header=header, fmt=kind, source=str(p))
    n_read = len(ann)
    if keep_ev is not None or drop_ev is not None:
        e = ann.evidence
        mask = np.ones(len(e), dtype=bool)
        if keep_ev is not None:
            mask &= np.isin(e, list(keep_ev))
        if drop_ev is not None:
            mask &= ~np.isin(e, list(drop_ev))
        ann = ann.select(mask)
    if ontology is not None:
        ann = ann.resolved(ontology)
    if len(ann) == 0:
        raise InputError(
            f"no usable GO annotation left ({n_read} rows read); check the evidence/taxon filters "
            "and that the file matches the ontology",
            path=p,
        )
    log.info("%s: %d GO annotation rows (%s)", p, len(ann), kind)
    return ann
