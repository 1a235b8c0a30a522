"""Gene identifier harmonisation: map a source's gene ids onto the expression matrix's genes,
once, at the edge, with a coverage report.

The matrix's own ids and every extra id column it was read with (``Expression.annotations``,
e.g. ``symbol`` and ``entrez``) are candidates; so are the source's own alternative id columns
(``aliases``: e.g. the symbols a STRING or KEGG file carries beside its primary ids). The pair
(source id kind, matrix column) matching the most source ids wins. An id that hits several
matrix genes is *ambiguous*: counted, never guessed.

Canonical form used for matching (:func:`normalise_id`): stripped, upper-case (symbols match
case-insensitively), Ensembl versions removed (``ENSG00000141510.17`` -> ``ENSG00000141510``),
UniProt isoform suffixes removed (``P04637-2`` -> ``P04637``), database prefixes removed
(``UniProtKB:P04637``, ``NCBIGene:7157``), whole numbers written as floats read as integers
(``7157.0`` -> ``7157``: an Entrez id column that pandas or R read as floating point).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass

from kofs.errors import CoverageError
from kofs.io.id_map import MISSING_IDS
from kofs.types import Expression

log = logging.getLogger(__name__)

__all__ = [
    "LOW_COVERAGE",
    "CoverageReport",
    "coverage_rows",
    "coverage_table",
    "guess_namespace",
    "match_gene_ids",
    "match_id_lists",
    "normalise_id",
    "spreadsheet_date",
]

_ENSEMBL_VERSION = re.compile(r"^(ENS[A-Z]*[GTPE]\d+)\.\d+$")
_UNIPROT = r"(?:[OPQ][0-9][A-Z0-9]{3}[0-9]|[A-NR-Z][0-9](?:[A-Z][A-Z0-9]{2}[0-9]){1,2})"
_UNIPROT_ISOFORM = re.compile(rf"^({_UNIPROT})-\d+$")
_UNIPROT_ID = re.compile(rf"^{_UNIPROT}$")
# a whole number written as a float: an integer id column that pandas, R or a spreadsheet read
# as floating point (a column with a missing value) writes 7157 as 7157.0
_WHOLE_FLOAT = re.compile(r"^(\d+)\.0+$")
_DB_PREFIX = re.compile(r"^(?:(?:UNIPROTKB|UNIPROT|NCBIGENE|ENTREZ|GENEID|ENSEMBL):)+")
LOW_COVERAGE = 0.05
# a gene symbol a spreadsheet made a date of: SEPT2 -> 2-Sep, MARCH1 -> 1-Mar, DEC1 -> Dec-01
# (Ziemann, Eren & El-Osta 2016, Genome Biology 17:177)
_MONTH = "(?:JAN|FEB|MAR|APR|MAY|JUN|JUL|AUG|SEP|OCT|NOV|DEC)"
_SPREADSHEET_DATE = re.compile(rf"(?i)\d{{1,2}}-{_MONTH}|{_MONTH}-\d{{1,2}}")


def spreadsheet_date(gene_id: str) -> bool:
    """Whether an id is a date a spreadsheet made of a gene symbol (``2-Sep``, ``Dec-01``)."""
    return _SPREADSHEET_DATE.fullmatch(str(gene_id).strip()) is not None


def normalise_id(gene_id: str) -> str:
    """Canonical form used for matching.

    Stripped and upper-cased; ``UniProtKB:``/``NCBIGene:``/``Entrez:``/``Ensembl:`` prefixes,
    Ensembl versions (``.12``) and UniProt isoform suffixes (``-2``) removed; a whole number
    written as a float (``7157.0``: an Entrez id column read as floating point) is the
    integer. HGNC ids (``HGNC:5``) keep their prefix, since the bare number would collide with
    Entrez ids.
    """
    g = _DB_PREFIX.sub("", str(gene_id).strip().upper())
    m = _ENSEMBL_VERSION.match(g) or _UNIPROT_ISOFORM.match(g) or _WHOLE_FLOAT.match(g)
    return m.group(1) if m else g


def guess_namespace(ids: Iterable[str], *, sample: int = 200) -> str | None:
    """Best guess of the identifier type of ``ids`` from (up to) the first ``sample`` ids.

    Returns one of ``"entrez"``, ``"ensembl_gene"``, ``"ensembl_protein"``,
    ``"ensembl_transcript"``, ``"uniprot"``, ``"symbol"`` or None (no ids). A kind is chosen
    when at least 90% of the sampled ids have its shape.
    """
    vals = []
    for g in ids:
        g = normalise_id(g)
        if g not in MISSING_IDS:
            vals.append(g)
        if len(vals) >= sample:
            break
    if not vals:
        return None
    shapes = {
        "entrez": re.compile(r"^\d+$"),
        "ensembl_gene": re.compile(r"^ENS[A-Z]*G\d{6,}$"),
        "ensembl_protein": re.compile(r"^ENS[A-Z]*P\d{6,}$"),
        "ensembl_transcript": re.compile(r"^ENS[A-Z]*T\d{6,}$"),
        "uniprot": _UNIPROT_ID,
    }
    for kind, rx in shapes.items():
        if sum(bool(rx.match(v)) for v in vals) >= 0.9 * len(vals):
            return kind
    return "symbol"


# --------------------------------------------------------------------------- matching


@dataclass(frozen=True)
class CoverageReport:
    """How a knowledge source's genes map onto the matrix's genes.

    Attributes
    ----------
    source : str
    input_genes : int
        Distinct gene ids of the source.
    matched : int
        Source ids mapped to exactly one matrix gene.
    dropped : int
        Source ids with no matrix gene.
    ambiguous : int
        Source ids hitting several matrix genes (counted, not guessed).
    matrix_genes, matrix_genes_covered : int
    id_column : str or None
        The matrix id column used (``"gene"`` = the matrix's own ids, or an annotation column).
    source_namespace : str or None
        The source id kind used (``"primary"`` or one of the source's alias columns).
    examples_dropped : tuple of str
        Up to five unmatched source ids, for messages.
    target : str
        What the source's genes are matched to, for messages: ``"matrix"`` (default) or
        ``"universe"`` (ranked lists of ``kofs aggregate``, where ``matrix_genes`` is N).
    shared : int or None
        Ranked lists only: the list's genes that at least one other list contains.
    """

    source: str
    input_genes: int
    matched: int
    dropped: int
    ambiguous: int
    matrix_genes: int
    matrix_genes_covered: int
    id_column: str | None
    source_namespace: str | None = None
    examples_dropped: tuple[str, ...] = ()
    target: str = "matrix"
    shared: int | None = None

    @property
    def fraction(self) -> float:
        """Fraction of the source's genes found in the matrix."""
        return self.matched / self.input_genes if self.input_genes else 0.0

    def as_dict(self) -> dict:
        d = asdict(self)
        d["examples_dropped"] = list(self.examples_dropped)
        if self.target == "matrix":  # the fields of a matrix source stay as they were
            del d["target"], d["shared"]
        return {**d, "fraction": round(self.fraction, 6)}

    def line(self) -> str:
        via = ""
        if self.id_column:
            via = f" via {self.id_column}"
            if self.source_namespace and self.source_namespace != "primary":
                via += f" (source {self.source_namespace})"
        if self.target != "matrix":
            shared = "" if self.shared is None else f", {self.shared} shared with other lists"
            return (
                f"{self.source}: {self.input_genes} genes, {self.matched} in the "
                f"{self.target} of {self.matrix_genes} ({100 * self.fraction:.1f}%), "
                f"{self.dropped} dropped{shared}"
            )
        return (
            f"{self.source}: {self.input_genes} genes, {self.matched} matched "
            f"({100 * self.fraction:.1f}%), {self.dropped} dropped, {self.ambiguous} ambiguous; "
            f"covers {self.matrix_genes_covered}/{self.matrix_genes} matrix genes" + via
        )


_ROW_KEYS = (
    "source",
    "input_genes",
    "matched",
    "fraction",
    "dropped",
    "ambiguous",
    "matrix_genes_covered",
    "matrix_genes",
    "id_column",
    "source_namespace",
)


def coverage_rows(reports: Sequence[CoverageReport]) -> list[dict]:
    """One flat dict per report (keys of ``kofs sources`` output), in the given order."""
    rows = []
    for r in reports:
        d = r.as_dict()
        rows.append({k: d[k] for k in _ROW_KEYS})
    return rows


def coverage_table(reports: Sequence[CoverageReport]) -> str:
    """A tab-separated table of :func:`coverage_rows` with a header line (``kofs sources``)."""
    lines = ["\t".join(_ROW_KEYS)]
    for row in coverage_rows(reports):
        lines.append("\t".join("" if row[k] is None else str(row[k]) for k in _ROW_KEYS))
    return "\n".join(lines) + "\n"


def _candidate_columns(expression: Expression) -> dict[str, tuple[str, ...]]:
    cols = {"gene": expression.genes}
    cols.update(expression.annotations)
    return cols


def _column_index(values: Sequence[str]) -> dict[str, list[int]]:
    index: dict[str, list[int]] = {}
    for i, v in enumerate(values):
        key = normalise_id(v)
        if key not in MISSING_IDS:
            index.setdefault(key, []).append(i)
    return index


def match_gene_ids(
    source_ids: Iterable[str],
    expression: Expression,
    *,
    source: str,
    id_map: Mapping[str, str] | None = None,
    path: str | None = None,
    require: bool = True,
    aliases: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
) -> tuple[dict[str, int], CoverageReport]:
    """Map source gene ids to column indices of ``expression``.

    Parameters
    ----------
    source_ids : iterable of str
        Gene ids as the source writes them (duplicates allowed).
    expression : Expression
    source : str
        Name of the source for messages and the report.
    id_map : mapping, optional
        User table source id -> matrix id (``--id-map``), applied first (also to aliases).
    path : str, optional
        File of the source, named in errors.
    require : bool
        Raise :class:`CoverageError` when nothing matches.
    aliases : mapping, optional
        Alternative id kinds of the source: ``{kind: {source_id: (alt_id, ...)}}`` (e.g.
        ``{"symbol": {"7157": ("TP53",)}}``). Each kind competes with the primary ids; a source
        id whose alternatives hit several different matrix genes is ambiguous.

    Returns
    -------
    mapping : dict
        source id -> matrix gene index, for every source id that maps to exactly one gene.
    report : CoverageReport
    """
    ids = list(dict.fromkeys(str(s) for s in source_ids))
    keyf = _keyer(id_map)
    kinds: dict[str, dict[str, list[str]]] = {"primary": {s: [keyf(s)] for s in ids}}
    for kind, table in (aliases or {}).items():
        kinds[kind] = {s: [keyf(a) for a in table.get(s, ())] for s in ids if table.get(s)}
    mapping, col, kind, ambiguous = _best_match(kinds, expression)
    return mapping, _report(
        ids, mapping, col, kind, ambiguous, expression, source=source, path=path,
        require=require, id_map=id_map,
    )  # fmt: skip


def match_id_lists(
    lists: Mapping[str, Iterable[str]],
    expression: Expression,
    *,
    source: str,
    id_map: Mapping[str, str] | None = None,
    path: str | None = None,
    require: bool = True,
) -> tuple[str, dict[str, int], CoverageReport]:
    """Match several parallel id lists of one source (e.g. a pathway's Entrez ids and, not
    paired with them, its symbols) and keep the list that matches the most.

    Parameters
    ----------
    lists : mapping of str to iterable of str
        ``{kind: ids}``, e.g. ``{"primary": entrez_ids, "symbol": symbols}``; order breaks ties.
    expression, source, id_map, path, require
        As in :func:`match_gene_ids`.

    Returns
    -------
    kind : str
        The winning list.
    mapping : dict
        Its ids -> matrix gene index (unambiguous hits only).
    report : CoverageReport
    """
    keyf = _keyer(id_map)
    best: tuple[int, str, list[str], dict[str, int], str | None, int] | None = None
    for kind, values in lists.items():
        ids = list(dict.fromkeys(str(s) for s in values))
        mapping, col, _, ambiguous = _best_match({kind: {s: [keyf(s)] for s in ids}}, expression)
        if best is None or len(mapping) > best[0]:
            best = (len(mapping), kind, ids, mapping, col, ambiguous)
    if best is None:
        raise ValueError("match_id_lists needs at least one id list")
    _, kind, ids, mapping, col, ambiguous = best
    report = _report(
        ids, mapping, col, kind, ambiguous, expression, source=source, path=path,
        require=require, id_map=id_map,
    )  # fmt: skip
    return kind, mapping, report


def _keyer(id_map: Mapping[str, str] | None):
    norm_map = {normalise_id(k): normalise_id(v) for k, v in (id_map or {}).items()}

    def key(s: str) -> str:
        k = normalise_id(s)
        return norm_map.get(k, k) if norm_map else k

    return key


def _best_match(
    kinds: Mapping[str, Mapping[str, Sequence[str]]], expression: Expression
) -> tuple[dict[str, int], str | None, str | None, int]:
    """The (matrix column, source kind) pair mapping the most ids; ids hitting several genes
    are ambiguous. Returns (mapping, column, kind, n_ambiguous)."""
    best: tuple[int, str | None, str | None, dict[str, int], int] = (0, None, None, {}, 0)
    first = True
    for col, values in _candidate_columns(expression).items():
        index = _column_index(values)
        for kind, keys in kinds.items():
            mapping: dict[str, int] = {}
            ambiguous = 0
            for s, ks in keys.items():
                hits = {i for k in ks for i in index.get(k, ())}
                if not hits:
                    continue
                if len(hits) > 1:
                    ambiguous += 1
                    continue
                mapping[s] = hits.pop()
            if len(mapping) > best[0] or first:
                best = (len(mapping), col, kind, mapping, ambiguous)
                first = False
    _, col, kind, mapping, ambiguous = best
    if not mapping:
        col = kind = None
    return mapping, col, kind, ambiguous


def _through_id_map(
    ids: list[str],
    expression: Expression,
    *,
    source: str,
    path: str | None,
    id_map: Mapping[str, str],
) -> None:
    """Raise the no-match error of ids read through a user id map (``--id-map``), saying
    whether it renamed some of them or none: the map, not the source file, is then the
    likely fault (an id map of the wrong columns renamed ids that matched the matrix, and the
    source was blamed: "none of its ids (e.g. G11) matches the matrix's genes (e.g. G0, G1,
    G10)"; or it renamed none, and the message said to use one)."""
    norm_map = {normalise_id(k): v for k, v in id_map.items()}
    renamed = [(s, norm_map[normalise_id(s)]) for s in ids if normalise_id(s) in norm_map]
    where = getattr(id_map, "path", None)
    if not renamed:  # the source's ids are at fault, but the map given was not "used"
        raise CoverageError(
            f"{source}: none of its {len(ids)} gene ids (e.g. {', '.join(ids[:3])}) matches "
            f"the expression matrix's genes (e.g. {', '.join(expression.genes[:3])}), and the "
            "id map"
            + (f" {where}" if where else "")
            + " renames none of them (it maps e.g. "
            + ", ".join(f"{a} -> {b}" for a, b in list(id_map.items())[:2])
            + "); use the same identifier type in both, or an id map whose first column holds "
            "the source's ids",
            path=path,
        )
    shown = ", ".join(f"{a} -> {b}" for a, b in renamed[:3])
    raise CoverageError(
        f"{source}: none of its {len(ids)} gene ids matches the expression matrix's genes (e.g. "
        f"{', '.join(expression.genes[:3])}) after the id map"
        + (f" {where}" if where else "")
        + f" renamed {len(renamed)} of them ({shown}); check that the id map's first column "
        "holds the source's ids and its second the matrix's",
        path=path,
    )


def _report(
    ids: list[str],
    mapping: dict[str, int],
    col: str | None,
    kind: str | None,
    ambiguous: int,
    expression: Expression,
    *,
    source: str,
    path: str | None,
    require: bool,
    id_map: Mapping[str, str] | None = None,
) -> CoverageReport:
    n_match = len(mapping)
    report = CoverageReport(
        source=source,
        input_genes=len(ids),
        matched=n_match,
        dropped=len(ids) - n_match - ambiguous,
        ambiguous=ambiguous,
        matrix_genes=expression.n_genes,
        matrix_genes_covered=len(set(mapping.values())),
        id_column=col,
        source_namespace=kind,
        examples_dropped=tuple([s for s in ids if s not in mapping][:5]),
    )
    if require and n_match == 0:
        example = ", ".join(ids[:3])
        if id_map:
            _through_id_map(ids, expression, source=source, path=path, id_map=id_map)
        raise CoverageError(
            f"{source}: none of its {len(ids)} gene ids (e.g. {example}) matches the expression "
            f"matrix's genes (e.g. {', '.join(expression.genes[:3])}); use the same identifier "
            "type in both (kofs rank and run map a knowledge file's ids with --id-map)",
            path=path,
        )
    if ids and report.fraction < LOW_COVERAGE:
        log.warning("low gene overlap: %s", report.line())
    else:
        log.info("%s", report.line())
    return report
