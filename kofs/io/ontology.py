"""Gene Ontology OBO reader.

:func:`read_obo` parses an OBO 1.2 file (``go-basic.obo`` or the full ``go.obo``, plain or gzip)
with goatools and returns a frozen :class:`Ontology`: live terms, names, aspects (BP/MF/CC),
parent edges by relation, secondary ids and obsolete terms. Only the relations of
:data:`RELATIONS` are kept; ``has_part``, ``occurs_in`` and the like are dropped because following
them creates cycles. goatools' progress lines are swallowed: nothing is ever printed.

Annotation files (GAF, gene2go, TSV) are read by :mod:`kofs.io.annotations`.
"""

from __future__ import annotations

import codecs
import contextlib
import gzip
import hashlib
import io
import json
import logging
import os
import re
import tempfile
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from kofs.cache import Check, EntryError
from kofs.errors import InputError, ParameterError, checked_keywords
from kofs.io._fsops import (
    check_api_options,
    check_path_argument,
    file_digest,
    refuse_special_input,
)
from kofs.progress import Progress, task
from kofs.resources import check_memory, estimate_obo_file

if TYPE_CHECKING:
    from kofs.cache import Cache

log = logging.getLogger(__name__)

#: Version of what :func:`read_obo` makes of a file: part of the parsed-OBO cache key and of
#: :attr:`Ontology.digest`, so the parsed ontology and every cache keyed on its digest
#: (annotations resolved against it, GO semantics, gene graphs) miss after the reader changes,
#: also on a development checkout whose kofs version stays the same. Bump it with every change
#: to the reader's output (2: a term's id given as an alt_id, or one alt_id of two terms, refused;
#: 3: ``is_obsolete: True``; 4: a [Term] without an id refused, lone-CR line ends read).
OBO_READER_VERSION = 4

__all__ = [
    "Ontology",
    "read_obo",
    "check_obo_complete",
    "RELATIONS",
    "ASPECTS",
    "ROOTS",
    "normalise_aspect",
]

#: Relations kept from the OBO file (parent edges); everything else is ignored.
RELATIONS = ("is_a", "part_of", "regulates", "negatively_regulates", "positively_regulates")
#: OBO namespace -> aspect code.
ASPECTS = {"biological_process": "BP", "molecular_function": "MF", "cellular_component": "CC"}
#: Root term of each aspect.
ROOTS = {"BP": "GO:0008150", "MF": "GO:0003674", "CC": "GO:0005575"}

_ASPECT_ALIASES = {
    "P": "BP", "BP": "BP", "PROCESS": "BP", "BIOLOGICAL_PROCESS": "BP",
    "F": "MF", "MF": "MF", "FUNCTION": "MF", "MOLECULAR_FUNCTION": "MF",
    "C": "CC", "CC": "CC", "COMPONENT": "CC", "CELLULAR_COMPONENT": "CC",
}  # fmt: skip


def normalise_aspect(value: str, *, what: str = "aspect") -> str:
    """``P``/``BP``/``Process``/``biological_process`` -> ``"BP"`` (likewise MF, CC).

    Raises
    ------
    ParameterError
        For any other value.
    """
    code = _ASPECT_ALIASES.get(str(value).strip().upper())
    if code is None:
        raise ParameterError(f"{what} {value!r} is not a GO aspect; use BP, MF or CC")
    return code


@dataclass(frozen=True, eq=False)
class Ontology:
    """A parsed Gene Ontology release.

    Attributes
    ----------
    terms : tuple of str
        Live (non-obsolete) term ids, sorted.
    names : mapping of str to str
        Term id -> name (live terms).
    namespaces : mapping of str to str
        Term id -> aspect ``"BP"``, ``"MF"`` or ``"CC"`` (live terms).
    edges : mapping of str to tuple of (str, str)
        Relation (one of :data:`RELATIONS`) -> ``(child, parent)`` pairs between live terms.
    alt_ids : mapping of str to str
        Secondary id -> primary id.
    obsolete : frozenset of str
        Obsolete term ids.
    data_version, date : str or None
        The header's ``data-version`` and ``date`` lines.
    source : str or None
        Path the ontology was read from.
    digest : str or None
        Identity of the parsed file: the SHA-256 of the file's SHA-256 and
        :data:`OBO_READER_VERSION` (set by :func:`read_obo`; keys the cache of derived data).
    """

    terms: tuple[str, ...]
    names: Mapping[str, str]
    namespaces: Mapping[str, str]
    edges: Mapping[str, tuple[tuple[str, str], ...]]
    alt_ids: Mapping[str, str] = field(default_factory=dict)
    obsolete: frozenset[str] = frozenset()
    data_version: str | None = None
    date: str | None = None
    source: str | None = None
    digest: str | None = None

    def __contains__(self, go_id: object) -> bool:
        return go_id in self.namespaces

    def __repr__(self) -> str:  # not the dataclass's: every term, megabytes of text
        release = self.data_version or self.date
        return (
            f"<Ontology: {len(self.terms):,} terms"
            + (f", release {release}" if release else "")
            + (f", from {self.source}" if self.source else "")
            + ">"
        )

    def primary(self, go_id: str) -> str | None:
        """The live primary id of ``go_id`` (itself, or via ``alt_id``); None if unknown/obsolete."""
        if go_id in self.namespaces:
            return go_id
        alt = self.alt_ids.get(go_id)
        return alt if alt in self.namespaces else None

    def terms_of(self, aspect: str) -> tuple[str, ...]:
        """Sorted live terms of one aspect (``"BP"``, ``"MF"``, ``"CC"`` or an alias)."""
        code = normalise_aspect(aspect)
        return tuple(t for t in self.terms if self.namespaces[t] == code)

    def parent_edges(self, relations: Iterable[str] = ("is_a", "part_of")) -> list[tuple[str, str]]:
        """``(child, parent)`` pairs of the chosen relations."""
        rels = list(relations)
        bad = [r for r in rels if r not in RELATIONS]
        if bad:
            raise ParameterError(
                f"unknown GO relation {bad[0]!r}; use some of {', '.join(RELATIONS)}"
            )
        out: list[tuple[str, str]] = []
        for r in rels:
            out.extend(self.edges.get(r, ()))
        return out


def _header(path: Path) -> dict[str, str]:
    """``data-version`` and ``date`` from the OBO header (lines before the first stanza)."""
    out: dict[str, str] = {}
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if line.startswith("["):
                break
            key, sep, value = line.partition(":")
            if sep and key.strip() in ("data-version", "date"):
                out[key.strip()] = value.strip()
    return out


def check_obo_complete(path: Path, shown: str) -> None:
    """Reject an empty OBO file, or one whose last stanza is cut off (no final newline, or a
    dangling line); also what ``kofs fetch`` checks of a downloaded ontology."""
    with open(path, "rb") as fh:
        fh.seek(0, os.SEEK_END)
        size = fh.tell()
        if size == 0:
            raise InputError("empty OBO file; give a Gene Ontology .obo file", path=shown)
        fh.seek(0)
        head = fh.read(1 << 16)
        try:  # the start is UTF-8 text (a chunk may end inside a character)
            codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
        except UnicodeDecodeError as exc:
            from kofs.io._table import not_utf8

            raise not_utf8(head, exc, shown) from None
        fh.seek(max(0, size - 1))
        if fh.read(1) != b"\n":
            raise InputError(
                "OBO file ends in the middle of a line (truncated download?); fetch it again",
                path=shown,
            )


#: an ``id:`` or ``alt_id:`` line of the user's file: its tag and value (white space around the
#: colon and a ``! comment`` after the value allowed, as :data:`_OBO_REWRITES` reads them)
_ID_LINE = re.compile(rb"(id|alt_id)[ \t]*:[ \t]*([^\s!]+)")


def _refuse_repeated_terms(plain: Path, n_terms: int, shown: str) -> None:
    """Refuse an OBO file defining a term twice, or naming a term's id as another term's
    ``alt_id`` (goatools keeps the last stanza, or the term of the ``alt_id``, silently: the
    other term and its edges vanished): the stanzas are counted first (one pass of
    ``bytes.count`` of the ``plain`` copy goatools read), the lines named only when they
    outnumber the terms read, from the user's file ``shown`` (plain or gzip), so that the
    lines named are its lines."""
    data = plain.read_bytes()
    if data.startswith(b"[Term]") + data.count(b"\n[Term]") <= n_terms:
        return
    with open(shown, "rb") as fh:
        gz = fh.read(2) == b"\x1f\x8b"
    with gzip.open(shown, "rb") if gz else open(shown, "rb") as fh:
        data = fh.read()
    seen: dict[str, int] = {}
    alts: dict[str, tuple[int, str]] = {}  # alt_id -> (its line, the term naming it)
    in_term = False
    go_id = ""
    for number, raw in enumerate(data.splitlines(), start=1):
        line = raw.strip()
        tag = _ID_LINE.match(line) if in_term else None
        if line.startswith(b"["):
            in_term = line == b"[Term]"
            go_id = ""
        elif tag and tag[1] == b"id" and not go_id:
            go_id = tag[2].decode("utf-8", "replace")
            if go_id in seen:
                raise InputError(
                    f"term {go_id} is defined twice (lines {seen[go_id]:,} and {number:,}); "
                    "give a Gene Ontology .obo file with each term once",
                    path=shown,
                )
            seen[go_id] = number
        elif tag and tag[1] == b"alt_id":
            alts[tag[2].decode("utf-8", "replace")] = (number, go_id)
    for alt, (number, owner) in alts.items():
        if alt in seen:
            raise InputError(
                f"term {alt} (line {seen[alt]:,}) is also given as an alt_id of {owner} (line "
                f"{number:,}); a secondary id names no term of its own: give a Gene Ontology "
                ".obo file",
                path=shown,
            )


def _refuse_term_without_id(shown: str) -> None:
    """Refuse an OBO file with a [Term] stanza that has no ``id:`` line, or an empty one
    (goatools read it as a live term named '', with its parents and namespace), naming the
    line of the stanza in the user's file ``shown`` (plain or gzip)."""
    with open(shown, "rb") as fh:
        gz = fh.read(2) == b"\x1f\x8b"
    with gzip.open(shown, "rb") if gz else open(shown, "rb") as fh:
        data = fh.read()
    start = None  # line of the open [Term] stanza still without an id
    for number, raw in enumerate([*data.splitlines(), b"["], start=1):
        line = raw.strip()
        if line.startswith(b"["):
            if start is not None:
                break
            start = number if line == b"[Term]" else None
        elif start is not None and (tag := _ID_LINE.match(line)) and tag[1] == b"id":
            start = None
    else:
        start = None
    where = f" (line {start:,})" if start is not None else ""
    raise InputError(
        f"a [Term] stanza{where} has no id (every term needs an 'id: GO:NNNNNNN' line); give a "
        "Gene Ontology .obo file",
        path=shown,
    )


def _parse(path: Path, shown: str) -> Ontology:
    from goatools.obo_parser import GODag

    check_obo_complete(path, shown)
    sink = io.StringIO()
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            dag = GODag(str(path), optional_attrs={"relationship"}, load_obsolete=True, prt=None)
    except RecursionError:  # goatools computes term depths recursively: an is_a cycle
        _refuse_cycle(_find_cycle(_is_a_edges(path)), "is_a", shown)
        raise InputError(
            "is_a chains are too deep to read (more than ~1,000 levels); give a Gene Ontology "
            ".obo file",
            path=shown,
        ) from None
    except KeyError as exc:
        raise InputError(
            f"OBO file refers to term {exc.args[0]} which it does not define (truncated or "
            "malformed file?); fetch the complete file again",
            path=shown,
        ) from None
    except (AssertionError, ValueError, IndexError, AttributeError, UnicodeDecodeError) as exc:
        raise InputError(
            f"not a readable OBO file ({type(exc).__name__}: {exc}); give a Gene Ontology .obo file",
            path=shown,
        ) from None
    names: dict[str, str] = {}
    namespaces: dict[str, str] = {}
    obsolete: set[str] = set()
    alt_ids: dict[str, str] = {}
    edges: dict[str, list[tuple[str, str]]] = {r: [] for r in RELATIONS}
    records = {rec.item_id: rec for key, rec in dag.items() if key == rec.item_id}
    if "" in records:  # goatools keeps a stanza without an id as the term ''
        _refuse_term_without_id(shown)
    _refuse_repeated_terms(path, len(records), shown)
    for go_id, rec in records.items():
        if rec.is_obsolete:
            obsolete.add(go_id)
            continue
        aspect = ASPECTS.get(rec.namespace)
        if aspect is None and go_id.startswith("GO:"):
            # the term would vanish silently: goatools gives a stanza without a 'namespace:'
            # line the header's default-namespace ('gene_ontology' in GO's own files), or
            # 'default' without one (e.g. 'namespace biological_process', without the colon)
            got = (
                "no 'namespace:' line (is a line of its stanza missing its colon? every line "
                "reads 'tag: value')"
                if rec.namespace == "default"
                else f"namespace {rec.namespace!r} (the header's default-namespace when its "
                "stanza has no 'namespace:' line), not biological_process, molecular_function "
                "or cellular_component"
            )
            raise InputError(f"term {go_id} has {got}; give a Gene Ontology .obo file", path=shown)
        if aspect is None:
            continue  # not a GO term (another ontology merged into the file)
        names[go_id] = rec.name
        namespaces[go_id] = aspect
        for alt in rec.alt_ids:
            if alt_ids.get(alt, go_id) != go_id:
                raise InputError(
                    f"alt_id {alt} is given to two terms, {min(go_id, alt_ids[alt])} and "
                    f"{max(go_id, alt_ids[alt])}; a secondary id stands for one term: give a "
                    "Gene Ontology .obo file",
                    path=shown,
                )
            alt_ids[alt] = go_id
    for go_id in namespaces:
        rec = records[go_id]
        for parent in rec._parents:  # noqa: SLF001 - goatools keeps is_a ids here
            if parent in namespaces:
                edges["is_a"].append((go_id, parent))
        for rel, parents in getattr(rec, "relationship", {}).items():
            if rel not in edges:
                continue  # has_part, occurs_in, ...: never followed
            for p in parents:
                pid = p.item_id if hasattr(p, "item_id") else str(p)
                if pid in namespaces:
                    edges[rel].append((go_id, pid))
    if not namespaces:
        other = _other_ontology_format(path)
        if other is not None:
            raise InputError(
                f"is {other}, not OBO; give the OBO file of the same release (go-basic.obo)",
                path=shown,
            )
        raise InputError(
            "no Gene Ontology terms found (no [Term] stanza with a GO namespace); give a GO .obo file",
            path=shown,
        )
    cycle = _find_cycle([e for r in RELATIONS for e in edges[r]])
    if cycle is not None:
        steps = set(zip(cycle[:-1], cycle[1:], strict=True))
        used = [r for r in RELATIONS if steps.intersection(edges[r])]
        _refuse_cycle(cycle, " and ".join(used), shown)
    hdr = _header(path)
    onto = Ontology(
        terms=tuple(sorted(namespaces)),
        names=names,
        namespaces=namespaces,
        edges={r: tuple(sorted(e)) for r, e in edges.items()},
        alt_ids=alt_ids,
        obsolete=frozenset(obsolete),
        data_version=hdr.get("data-version"),
        date=hdr.get("date"),
        source=shown,
    )
    log.info(
        "%s: %d live GO terms, %d obsolete, %d edges (release %s)",
        shown, len(onto.terms), len(obsolete), sum(len(e) for e in onto.edges.values()),
        onto.data_version or onto.date or "unknown",
    )  # fmt: skip
    return onto


def _other_ontology_format(path: Path) -> str | None:
    """The other serialisation of GO a file holds (GO publishes go-basic.obo, go-basic.json
    and go.owl side by side), from its first bytes; None when it is none of them."""
    with open(path, "rb") as fh:
        head = fh.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    if head.startswith((b"{", b"[")) and (b'"graphs"' in head or b'"nodes"' in head):
        return "an OBO Graphs JSON file (go.json)"
    if head.startswith(b"<") and (b"owl" in head.lower() or b"rdf" in head.lower()):
        return "an OWL (RDF/XML) file (go.owl)"
    if head.startswith((b"Prefix(", b"Ontology(")):
        return "an OWL functional-syntax file"
    return None


def _is_a_edges(path: Path) -> list[tuple[str, str]]:
    """``(child, parent)`` is_a pairs of the [Term] stanzas of a plain OBO file (a plain scan,
    for the message when goatools cannot read the file)."""
    out: list[tuple[str, str]] = []
    term: str | None = None
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if line.startswith("["):
                term = None if line.strip() != "[Term]" else ""
            elif term is not None and line.startswith("id:"):
                term = line[3:].split("!")[0].strip()
            elif term and line.startswith("is_a:"):
                parent = line[5:].split("!")[0].split()
                if parent:
                    out.append((term, parent[0]))
    return out


def _find_cycle(edges: Iterable[tuple[str, str]]) -> list[str] | None:
    """A cycle of the directed graph ``child -> parent`` as its terms in order (the first
    repeated at the end), or None when the graph is acyclic. Iterative (Kahn's algorithm, then
    a walk backwards among the terms it could not order), so any depth is fine."""
    preds: dict[str, list[str]] = {}
    outdeg: dict[str, int] = {}
    for child, parent in edges:
        preds.setdefault(parent, []).append(child)
        preds.setdefault(child, [])
        outdeg[child] = outdeg.get(child, 0) + 1
        outdeg.setdefault(parent, 0)
    # remove terms without parents left, from the roots down; what remains lies on or below
    # a cycle, and each remaining term keeps a remaining parent
    queue = [t for t, d in outdeg.items() if d == 0]
    while queue:
        t = queue.pop()
        for c in preds[t]:
            outdeg[c] -= 1
            if outdeg[c] == 0:
                queue.append(c)
    left = {t for t, d in outdeg.items() if d > 0}
    if not left:
        return None
    parents: dict[str, str] = {}
    for child, parent in edges:
        if child in left and parent in left:
            parents.setdefault(child, parent)
    start = min(left)
    seen: dict[str, int] = {}
    path: list[str] = []
    t = start
    while t not in seen:
        seen[t] = len(path)
        path.append(t)
        t = parents[t]
    return [*path[seen[t] :], t]


def _refuse_cycle(cycle: list[str] | None, relations: str, shown: str) -> None:
    if cycle is None:
        return
    shown_cycle = " -> ".join(cycle if len(cycle) <= 8 else [*cycle[:4], "...", *cycle[-3:]])
    raise InputError(
        f"the {relations} relations form a cycle ({shown_cycle}; {len(cycle) - 1} terms): "
        "an ontology must be acyclic; give an unmodified Gene Ontology .obo file",
        path=shown,
    )


@checked_keywords
def read_obo(
    path: str | os.PathLike,
    *,
    cache: Cache | None = None,
    max_memory: int | None = None,
    progress: Progress | None = None,
) -> Ontology:
    """Read a Gene Ontology OBO file (``.obo`` or ``.obo.gz``).

    Parameters
    ----------
    path : path-like
        go-basic.obo or the full go.obo; gzip is recognised by its magic bytes.
    cache : kofs.cache.Cache, optional
        Keep the parsed ontology there, keyed by the file's SHA-256,
        :data:`OBO_READER_VERSION` and the kofs version; a
        later read of the same file loads it instead of parsing (~0.5 s instead of ~4 s).
    max_memory : int, optional
        Bytes; parsing a file estimated to need more (:func:`kofs.resources.estimate_obo_file`)
        raises :class:`~kofs.errors.ResourceError` before it starts.
    progress : kofs.progress.Progress, optional
        Told when parsing starts and ends (task ``"GO parsing"``; nothing on a cache hit).

    Returns
    -------
    Ontology

    Raises
    ------
    InputError
        The file is missing, empty, truncated, malformed or holds no GO term.
    """
    check_path_argument(path, "read_obo")
    check_api_options("read_obo", cache=cache, progress=progress)
    p = Path(path)
    if p.is_dir():  # was "file not found" for the folder that is there
        raise InputError("is a directory, expected the GO ontology file (--go)", path=p)
    refuse_special_input(p)  # read twice (copied, then its header)
    if not p.is_file():
        raise InputError("GO ontology file not found; check the --go path", path=p)
    digest = obo_digest(file_digest(p)[1])
    if cache is not None:
        hit = cache.get("obo", [digest], check=_check_arrays)
        if hit is not None:
            return _from_arrays(*hit, source=str(p), digest=digest)
    check_memory(
        estimate_obo_file(p) or 0,
        limit=max_memory,
        what=f"parsing the GO ontology {p}",
        suggestion="raise --max-memory (later runs read the parsed ontology from the cache)",
    )
    with task(progress, "GO parsing"):
        onto = replace(_read_obo(p), digest=digest)
    if cache is not None:
        cache.put("obo", [digest], *_to_arrays(onto))
    return onto


def obo_digest(sha256: str) -> str:
    """:attr:`Ontology.digest` of a file of SHA-256 ``sha256`` read by this reader version."""
    text = json.dumps([sha256, OBO_READER_VERSION])
    return hashlib.sha256(text.encode()).hexdigest()


def _to_arrays(onto: Ontology) -> tuple[dict[str, np.ndarray], dict]:
    """Plain arrays of an ontology (for :mod:`kofs.cache`; no object arrays, no pickle)."""
    index = {t: i for i, t in enumerate(onto.terms)}
    arrays = {
        "terms": np.array(onto.terms, dtype=str),
        "names": np.array([onto.names[t] for t in onto.terms], dtype=str),
        "aspects": np.array([onto.namespaces[t] for t in onto.terms], dtype=str),
        "alt_from": np.array(sorted(onto.alt_ids), dtype=str),
        "alt_to": np.array([onto.alt_ids[a] for a in sorted(onto.alt_ids)], dtype=str),
        "obsolete": np.array(sorted(onto.obsolete), dtype=str),
    }
    for r, pairs in onto.edges.items():
        arrays[f"edges:{r}"] = np.array(
            [(index[c], index[q]) for c, q in pairs], dtype=np.int32
        ).reshape(-1, 2)
    return arrays, {"data_version": onto.data_version, "date": onto.date}


def _check_arrays(c: Check) -> None:
    """The invariants of a cached ontology (:func:`_to_arrays`), checked before use."""
    n = len(c.strings("terms"))
    c.strings("names", n)
    aspects = c.strings("aspects", n)
    if aspects.size and not np.isin(aspects, list(ROOTS)).all():
        raise EntryError("array 'aspects' holds an unknown aspect")
    m = len(c.strings("alt_from"))
    c.strings("alt_to", m)
    c.strings("obsolete")
    for r in RELATIONS:
        if f"edges:{r}" in c.arrays:
            c.ints(f"edges:{r}", 0, n, ndim=2)
            if c.arrays[f"edges:{r}"].shape[1:] != (2,):
                raise EntryError(f"array 'edges:{r}' is not a list of pairs")
    c.field("data_version", str, optional=True)
    c.field("date", str, optional=True)


def _from_arrays(arrays: dict, meta: dict, *, source: str, digest: str) -> Ontology:
    terms = tuple(arrays["terms"].tolist())
    edges = {}
    for r in RELATIONS:
        e = arrays.get(f"edges:{r}", np.zeros((0, 2), dtype=np.int32)).tolist()
        edges[r] = tuple((terms[c], terms[q]) for c, q in e)
    return Ontology(
        terms=terms,
        names=dict(zip(terms, arrays["names"].tolist(), strict=True)),
        namespaces=dict(zip(terms, arrays["aspects"].tolist(), strict=True)),
        edges=edges,
        alt_ids=dict(zip(arrays["alt_from"].tolist(), arrays["alt_to"].tolist(), strict=True)),
        obsolete=frozenset(arrays["obsolete"].tolist()),
        data_version=meta.get("data_version"),
        date=meta.get("date"),
        source=source,
        digest=digest,
    )


def _read_obo(p: Path) -> Ontology:
    from kofs.io._open import _decompress_error, _looks_like_text
    from kofs.io._table import not_gzip_message

    with open(p, "rb") as fh:
        head = fh.read(8)
    gz = head[:2] == b"\x1f\x8b"
    if not gz and p.name.lower().endswith(".gz") and not _looks_like_text(p):
        # a damaged gzip header: "is not UTF-8 text (byte 0x8c); save it as UTF-8" said otherwise
        raise InputError(not_gzip_message(p.name, head), path=p)
    with tempfile.TemporaryDirectory(prefix="kofs-obo-") as tmp:
        plain = Path(tmp) / "go.obo"
        try:
            with gzip.open(p, "rb") if gz else open(p, "rb") as src, open(plain, "wb") as dst:
                _copy_kept_relations(src, dst)
        except (OSError, EOFError, zlib.error) as exc:
            if gz:  # the words of every other reader ("gzip file is truncated ...")
                raise _decompress_error(exc, str(p), "gzip") from None
            raise InputError(
                f"corrupt or unreadable file ({exc}); fetch it again", path=p
            ) from None
        return _parse(plain, str(p))


_RELATIONS_KEPT = b"|".join(r.encode() for r in RELATIONS)
#: OBO lines goatools cannot read, rewritten as it reads them (each pattern starts at a line's
#: ``\n``: ``^`` in MULTILINE mode is tried at every character, 4 times slower): white space
#: around a tag's colon other than one space after it (goatools reads ``tag: value``: a tab
#: after ``id:`` lost the term silently); a ``! comment`` after an id (it became part of the
#: id); a stanza header right after the last line of the previous stanza (goatools stopped on
#: an assertion; a blank line is put before every header); ``is_obsolete: True`` (goatools
#: reads ``true`` only: the obsolete term was live); and ``relationship:`` lines of
#: relations not in :data:`RELATIONS` (dropped)
_OBO_REWRITES = (
    (re.compile(rb"\n([A-Za-z][\w-]*)(?:[ \t]+:|:(?! [^ \t]))[ \t]*"), rb"\n\1: "),
    (
        re.compile(
            rb"\n(id|alt_id|namespace|is_obsolete|replaced_by|consider): (\S+)[ \t]+![^\n]*"
        ),
        rb"\n\1: \2",
    ),
    (re.compile(rb"\n\["), b"\n\n["),
    (re.compile(rb"\nis_obsolete: (?:True|TRUE)[ \t]*(?=\r?\n)"), b"\nis_obsolete: true"),
    (re.compile(rb"\nrelationship: (?!(?:" + _RELATIONS_KEPT + rb") )[^\n]*"), b""),
)


def _copy_kept_relations(src, dst) -> None:
    """Copy an OBO file as goatools reads it (:data:`_OBO_REWRITES`; 0.2 s for go-basic).

    The full go.obo has ``has_part``, ``occurs_in``, ... lines; goatools would resolve their
    targets (which may lie outside GO) although kofs never follows them: they are dropped.
    """
    data = b"\n" + src.read()
    if b"\r" in data:  # Windows (CRLF) or old Mac (lone CR) line ends: goatools reads "\n"
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    for pattern, replacement in _OBO_REWRITES:
        data = pattern.sub(replacement, data)
    dst.write(data[1:])
