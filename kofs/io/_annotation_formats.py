"""Line parsers of the GO annotation formats (GAF 1.0/2.x, NCBI gene2go, simple TSV), used by
:func:`kofs.io.annotations.read_go_annotations`. Files are streamed (plain, gzip, bzip2 or
zip); a truncated or corrupt compressed file is an :class:`~kofs.errors.InputError`.
"""

from __future__ import annotations

import csv
import logging
import re
from pathlib import Path

from kofs.errors import InputError, ParameterError
from kofs.io._open import stream_text
from kofs.io.ontology import normalise_aspect

log = logging.getLogger(__name__)

_GO_ID = re.compile(r"^GO:\d{7}$")
_TSV_ID_NAMES = {"entrez_id": "entrez", "entrezid": "entrez", "gene_id": "entrez", "geneid": "entrez",
                 "entrez": "entrez", "symbol": "symbol", "gene_symbol": "symbol",
                 "uniprot": "uniprot", "uniprot_id": "uniprot", "ensembl": "ensembl",
                 "ensembl_id": "ensembl", "gene": "gene",
                 "gene_stable_id": "ensembl", "gene_name": "symbol"}  # fmt: skip
_TSV_GO_NAMES = ("go_id", "go", "goid", "go_term", "term", "go_term_accession", "go_accession")
_TSV_EVIDENCE_NAMES = ("evidence", "evidence_code", "code", "go_term_evidence_code",
                       "go_evidence_code")  # fmt: skip
_TSV_ASPECT_NAMES = ("aspect", "ontology", "category", "namespace", "ont", "go_domain", "go_aspect")
#: a qualifier column (GAF's column 4, QuickGO's QUALIFIER): its NOT rows say the gene does
#: *not* have the term, and are dropped as the GAF reader drops them
_TSV_QUALIFIER_NAMES = ("qualifier", "qualifiers", "go_qualifier")


def _open(path: Path):
    """Stream the file (plain, gzip, bzip2 or zip); decompression errors become InputError."""
    return stream_text(path, what="GO annotation file")


def sniff_annotation_format(path: Path) -> str:
    with _open(path) as fh:
        for line in fh:
            if line.startswith(("!gaf-version", "!gpa-version", "!gpad-version")):
                return "gaf"  # (read_gaf refuses a GPAD file, naming it)
            if line.startswith("#tax_id") or line.startswith("#Format: tax_id"):
                return "gene2go"
            if line.startswith("!") or not line.strip():
                continue
            f = line.rstrip("\n").rstrip("\r").split("\t")
            if len(f) in GAF_COLUMNS and not _GO_ID.match(f[4].strip()) and _is_tsv_header(f):
                return "tsv"  # a table of 15-17 columns under a header (QuickGO's export)
            if len(f) in GAF_COLUMNS or _is_gpad_row(f):
                return "gaf"
            return "tsv"
    raise InputError("empty annotation file; give a GAF, gene2go or TSV file", path=path)


def _is_tsv_header(first: list[str]) -> bool:
    """The first line is a TSV header naming a GO id column."""
    try:
        return _tsv_layout(first)[0]
    except ValueError:
        return False


#: Columns of a GAF line: 15 (GAF 1.0), 17 (GAF 2.x); 16 when a writer dropped the empty
#: last one. Columns 16-17 (annotation extension, gene product form) are not read.
GAF_COLUMNS = (15, 16, 17)


def _is_gpad_row(f: list[str]) -> bool:
    """A GPAD 1.2/2.0 line: 12 columns, the GO id in column 4, an ECO evidence id in column 6."""
    return len(f) == 12 and bool(_GO_ID.match(f[3].strip())) and f[5].startswith("ECO:")


def _gpad_error(path: Path, lineno: int, version: str | None) -> InputError:
    what = f"a GPAD {version} file" if version else "a GPAD file"
    return InputError(
        f"is {what} (GO's annotation format with ECO evidence ids and no gene symbols, aspect "
        "or taxon), which kofs does not read; give the GAF of the same source and release "
        "(e.g. goa_human.gaf.gz)",
        path=path, line=lineno,
    )  # fmt: skip


#: Version of what the readers of this module make of a file: part of the parsed-annotations
#: cache key and of :attr:`GOAnnotations.digest` (which keys GO semantics), so those caches miss
#: after a reader changes, also on a development checkout whose kofs version stays the same.
#: Bump it with every change to a reader's output (2: GAF 1.0 and 16-column lines; 3: a TSV's
#: qualifier column, NOT rows dropped; 4: the counts of the rows dropped while reading).
READER_VERSION = 4
#: Key of the rows-per-taxon count in a reader's header (moved to ``GOAnnotations.taxa``).
TAXA_KEY = "kofs:taxa"
#: Key of the count of aspect cells that are not a GO aspect, per value, in a reader's header.
BAD_ASPECT_KEY = "kofs:bad-aspects"
#: Key of the count of rows a reader dropped, per reason (``"not"``: NOT-qualified, ``"taxon"``:
#: another taxon than the one asked for, ``"blank"``: no GO id), in a reader's header.
DROPPED_KEY = "kofs:dropped"


def read_gaf(path: Path, taxon: str | None = None) -> tuple[dict, list, list, list, dict]:
    """GAF 1.0/2.x rows; ``taxon`` keeps rows whose (first) taxon, column 13, is
    ``taxon:<taxon>``.

    A line has 15 (GAF 1.0), 16 or 17 (GAF 2.x) columns, whatever the ``!gaf-version``: the
    columns read (2 id, 3 symbol, 4 qualifier, 5 GO id, 7 evidence, 9 aspect, 13 taxon) are
    the same in every version. A GPAD file is refused, naming its format."""
    ids: list[str] = []
    symbols: list[str] = []
    terms: list[str] = []
    evid: list[str] = []
    aspect: list[str] = []
    header: dict[str, str] = {}
    n_not = n_other_taxon = 0
    taxa: dict[str, int] = {}  # rows per (first) taxon, before the --go-taxon filter
    bad: dict[str, int] = {}
    want = None if taxon is None else f"taxon:{taxon}"
    with _open(path) as fh:
        for lineno, line in enumerate(fh, 1):
            if line.startswith("!"):
                key, sep, value = line[1:].partition(":")
                key = key.strip()
                if sep and re.fullmatch(r"[A-Za-z][\w-]*", key) and key not in header \
                        and key.lower() not in ("ftp", "http", "https"):  # fmt: skip
                    header[key] = value.strip()  # gaf-version, date-generated, Generated, ...
                if key in ("gpa-version", "gpad-version"):
                    raise _gpad_error(path, lineno, value.strip() or None)
                continue
            if not line.strip():
                continue
            f = line.rstrip("\n").rstrip("\r").split("\t")
            if len(f) not in GAF_COLUMNS:
                if _is_gpad_row(f):
                    raise _gpad_error(path, lineno, None)
                raise InputError(
                    f"GAF line has {len(f)} tab-separated columns, expected 17 (GAF 2.x) or 15 "
                    "(GAF 1.0); the file is not a GAF or is damaged",
                    path=path, line=lineno,
                )  # fmt: skip
            first = f[12].split("|", 1)[0].strip()
            taxa[first] = taxa.get(first, 0) + 1
            if want is not None and first != want:
                n_other_taxon += 1
                continue
            if _is_not(f[3]):
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
            aspect.append(_aspect_or_blank(f[8], bad))
    if n_not:
        log.info("%s: %d NOT-qualified rows excluded", path, n_not)
    if n_other_taxon:
        log.info("%s: %d rows of other taxa than %s excluded", path, n_other_taxon, taxon)
    header[TAXA_KEY] = {t.removeprefix("taxon:"): n for t, n in taxa.items()}
    header[BAD_ASPECT_KEY] = bad
    header[DROPPED_KEY] = {"taxon": n_other_taxon, "not": n_not}
    return {"db_object_id": ids, "symbol": symbols}, terms, evid, aspect, header


_ASPECT_CACHE: dict[str, str | None] = {}


def _aspect_or_blank(v: str, bad: dict[str, int]) -> str:
    """Aspect code of a file's aspect cell; ``""`` when blank or not an aspect (counted in
    ``bad``, by value)."""
    if v not in _ASPECT_CACHE:
        try:
            _ASPECT_CACHE[v] = normalise_aspect(v) if v.strip() else ""
        except ParameterError:
            _ASPECT_CACHE[v] = None
    code = _ASPECT_CACHE[v]
    if code is None:
        bad[v.strip()] = bad.get(v.strip(), 0) + 1
        return ""
    return code


def read_gene2go(path: Path, taxon: str | None) -> tuple[dict, list, list, list, dict]:
    ids: list[str] = []
    terms: list[str] = []
    evid: list[str] = []
    aspect: list[str] = []
    n_not = n_other_taxon = 0
    taxa: dict[str, int] = {}  # rows per tax_id, before the --go-taxon filter
    bad: dict[str, int] = {}
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
            taxa[f[0]] = taxa.get(f[0], 0) + 1
            if taxon is not None and f[0] != taxon:
                n_other_taxon += 1
                continue
            if f[4].upper().startswith("NOT"):
                n_not += 1
                continue
            if not _GO_ID.match(f[2]):
                raise InputError(
                    f"column 3 holds {f[2]!r}, not a GO id", path=path, line=lineno, column=3
                )
            ids.append(f[1])
            terms.append(f[2])
            evid.append(f[3].upper())
            aspect.append(_aspect_or_blank(f[7], bad))
    if n_not:
        log.info("%s: %d NOT-qualified rows excluded", path, n_not)
    dropped = {"taxon": n_other_taxon, "not": n_not}
    header = {TAXA_KEY: taxa, BAD_ASPECT_KEY: bad, DROPPED_KEY: dropped}
    return {"entrez": ids}, terms, evid, aspect, header


def _is_not(qualifier: str) -> bool:
    """A GAF qualifier cell (``NOT``, ``NOT|enables``) negates its annotation."""
    return "NOT" in (q.strip() for q in qualifier.upper().split("|"))


def _tsv_layout(
    first: list[str],
) -> tuple[bool, dict[str, int], int, int | None, int | None, int | None]:
    """(has_header, id columns, GO column, evidence column, aspect column, qualifier column)
    of a TSV."""
    if len(first) >= 2 and _GO_ID.match(first[1].strip()):
        ids = {"gene": 0}
        ev, asp = (2 if len(first) > 2 else None), (3 if len(first) > 3 else None)
        return False, ids, 1, ev, asp, None
    # Ensembl BioMart names its columns 'Gene stable ID', 'GO term accession', ...
    names = [re.sub(r"[\s.]+", "_", c.strip().lower().lstrip("#").strip()) for c in first]
    go_col = next((i for i, c in enumerate(names) if c in _TSV_GO_NAMES), None)
    if go_col is None:
        raise ValueError("no GO id column")
    ev = next((i for i, c in enumerate(names) if c in _TSV_EVIDENCE_NAMES), None)
    asp = next((i for i, c in enumerate(names) if c in _TSV_ASPECT_NAMES), None)
    qual = next((i for i, c in enumerate(names) if c in _TSV_QUALIFIER_NAMES), None)
    ids = {}
    for i, c in enumerate(names):
        # BioMart's 'GO term name' and 'GO term definition' describe the term, not the gene
        if i not in (go_col, ev, asp, qual) and not c.startswith("go_term_"):
            ids[_TSV_ID_NAMES.get(c, c)] = i
    if not ids:
        raise ValueError("no gene column")
    return True, ids, go_col, ev, asp, qual


def _has_layout(first: list[str]) -> bool:
    """``first`` (a first line's fields) is a TSV's header or first row."""
    try:
        _tsv_layout(first)
    except ValueError:
        return False
    return True


def read_go_tsv(path: Path) -> tuple[dict, list, list, list, dict]:
    cols: dict[str, list[str]] = {}
    terms: list[str] = []
    evid: list[str] = []
    aspect: list[str] = []
    bad: dict[str, int] = {}
    layout = None
    n_blank = n_not = 0
    with _open(path) as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip() or (line.startswith("!")):
                continue
            f = line.rstrip("\n").rstrip("\r").split("\t")
            if layout is None:
                try:
                    layout = _tsv_layout(f)
                except ValueError:
                    if "\ufffd" in line:  # bytes that are no UTF-8 text (read replaced)
                        raise InputError(
                            "is not UTF-8 text; give a GO annotation table (GAF or TSV) saved "
                            "as UTF-8",
                            path=path, line=lineno,
                        ) from None  # fmt: skip
                    if "\t" not in line and _has_layout(next(csv.reader([line]))):
                        raise InputError(  # it read "needs ... a header naming go_id", named
                            "is comma-separated (CSV); a GO annotation table is read with "
                            "tabs between its columns: save it as TSV (tab-separated)",
                            path=path, line=lineno,
                        ) from None  # fmt: skip
                    raise InputError(
                        "annotation TSV needs a gene column and a GO id column (GO:NNNNNNN) as "
                        "the first two columns, or a header naming go_id",
                        path=path, line=lineno,
                    ) from None  # fmt: skip
                has_header, id_idx, go_i, ev_i, asp_i, qual_i = layout
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
            if not go:  # a gene without a GO term (BioMart lists every gene, these blank)
                n_blank += 1
                continue
            if qual_i is not None and _is_not(f[qual_i]):
                n_not += 1
                continue
            if not has_header and ev_i is not None and _is_not(f[ev_i]):
                raise InputError(
                    f"column {ev_i + 1} holds {f[ev_i].strip()!r}, a GAF qualifier, where a "
                    "file without a header has evidence codes; give the file a header naming "
                    "its columns (e.g. gene, go_id, qualifier, evidence), so that NOT rows are "
                    "dropped",
                    path=path, line=lineno, column=ev_i + 1,
                )  # fmt: skip
            if not _GO_ID.match(go):
                raise InputError(
                    f"column {go_i + 1} holds {go!r}, not a GO id (GO:NNNNNNN)",
                    path=path, line=lineno, column=go_i + 1,
                )  # fmt: skip
            for k, i in id_idx.items():
                cols[k].append(f[i].strip())
            terms.append(go)
            evid.append(f[ev_i].strip().upper() if ev_i is not None else "")
            aspect.append(_aspect_or_blank(f[asp_i], bad) if asp_i is not None else "")
    if layout is None:
        raise InputError("empty annotation file; give a GAF, gene2go or TSV file", path=path)
    if n_blank:
        log.info("%s: %d rows without a GO id (genes without a term) skipped", path, n_blank)
    if n_not:
        log.info("%s: %d NOT-qualified rows excluded", path, n_not)
    dropped = {"blank": n_blank, "not": n_not}
    return cols, terms, evid, aspect, {BAD_ASPECT_KEY: bad, DROPPED_KEY: dropped}
