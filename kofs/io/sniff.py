"""Recognising files from their first lines.

Within one option: :func:`sniff_format` picks a reader's format (the first of an ordered list
of tests that accepts the file's first two lines) and :func:`format_reader` looks a format up,
for every reader with ``fmt="auto"`` (interactions, pathways).

Across options: what kind of knowledge table a file looks like, to say so when it was given to
the wrong option (a GO annotation table as ``--pathways``, a STRING file as
``--go-annotations``, ...). :func:`looks_like` reads the first lines only; :func:`wrong_option`
turns a reader's failure into one line naming the option the file belongs to. Used only after a
reader has failed, so a valid file is never second-guessed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

from kofs.errors import InputError, ParameterError

__all__ = [
    "KINDS",
    "format_reader",
    "is_kgml",
    "looks_like",
    "name_suffix",
    "sniff_format",
    "wrong_option",
]

R = TypeVar("R")

#: A format test: the path and its first two non-blank lines (none for a folder).
FormatTest = Callable[[Path, list[str]], bool]


def sniff_format(path: str | os.PathLike, tests: Sequence[tuple[str, FormatTest]]) -> str:
    """The name of the first ``(name, test)`` of ``tests`` that accepts ``path`` (the last
    test should accept anything: the default format)."""
    from kofs.io._open import head_lines

    p = Path(path)
    head = [] if p.is_dir() else head_lines(p, 2)
    return next(name for name, test in tests if test(p, head))


def is_kgml(path: Path, head: list[str]) -> bool:
    """A folder (of KGML files) or an XML file starting like KEGG's KGML."""
    return path.is_dir() or bool(head) and head[0].lstrip().startswith(("<?xml", "<pathway"))


def name_suffix(path: str | os.PathLike) -> str:
    """The lower-case extension of a file's name, a compression suffix (``.gz``, ``.bz2``,
    ``.zip``) skipped: ``sets.gmx.gz`` -> ``.gmx``."""
    p = Path(path)
    if p.suffix.lower() in (".gz", ".bz2", ".zip"):
        p = p.with_suffix("")
    return p.suffix.lower()


def format_reader(fmt: str, readers: Mapping[str, R], what: str) -> R:
    """The reader of format ``fmt``; an unknown one fails naming ``what`` and the formats."""
    reader = readers.get(fmt)
    if reader is None:
        raise ParameterError(
            f"{what} format {fmt!r} is unknown; use one of auto, " + ", ".join(readers)
        )
    return reader


#: kind -> (what it is, the option it belongs to)
KINDS: dict[str, tuple[str, str]] = {
    "obo": ("a Gene Ontology OBO file", "--go"),
    "go_annotations": ("a GO annotation table", "--go-annotations (with --go)"),
    "gmt": ("a gene-set (GMT) file", "--pathways"),
    "interactions": ("an interaction table", "--interactions"),
    "expression": ("an expression matrix", "the EXPRESSION argument"),
}

#: stems of the two end columns of an edge table (protein1, entrez_a, gene_b, ...)
_EDGE_WORDS = frozenset(
    {"protein", "gene", "node", "entrez", "symbol", "ensembl", "uniprot", "id", "interactor",
     "official_symbol", "entrez_gene", "entrez_gene_interactor", "systematic_name", "uniprotkb"}
)  # fmt: skip
_GO_ID = re.compile(r"^GO:\d{7}$")
_NUMBER = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")


def _lines(path: str | os.PathLike, n: int = 30) -> list[str]:
    from kofs.io._open import head_lines

    try:
        return head_lines(path, n)
    except (InputError, OSError, ValueError):
        return []


def _paired_header(head: list[str]) -> bool:
    """A header naming the two ends of an edge: protein1/protein2, entrez_a/entrez_b,
    source/target, interactor a/b, ...

    A stem pair counts only when it starts in the first two columns, where an edge table names
    its ends: further along, a row of gene ids is no header (a GMT line listing ID1 and ID2, two
    human genes, is a gene set, not an ``id1``/``id2`` edge table)."""
    words = [h.strip().strip('"').lower() for h in head]
    if {"source", "target"} <= set(words) or any("interactor" in w for w in words):
        return True
    ends = (("1", "2"), ("_a", "_b"), (" a", " b"), ("a", "b"), ("_1", "_2"))
    for a in words[:2]:
        for x, y in ends:
            stem = a[: -len(x)]
            if a.endswith(x) and stem.rstrip("_ ") in _EDGE_WORDS and stem + y in words:
                return True
    return False


def looks_like(path: str | os.PathLike) -> str | None:
    """The kind (a key of :data:`KINDS`) the first lines of ``path`` look like, or None."""
    lines = _lines(path)
    if not lines or any("\ufffd" in ln for ln in lines):
        return None  # nothing, or not UTF-8 text: the reader's own error says so
    text = "\n".join(lines)
    if lines[0].startswith("format-version:") or "[Term]" in text:
        return "obo"
    if lines[0].lower().startswith("!gaf-version"):
        return "go_annotations"
    rows = [re.split(r"\t|,", ln.rstrip("\n")) for ln in lines if not ln.startswith(("!", "#"))]
    if not rows:
        return None
    cells = [c.strip().strip('"') for r in rows for c in r]
    head = [c.lower() for c in rows[0]]
    go_ids = sum(bool(_GO_ID.match(c)) for c in cells)
    if go_ids >= max(2, len(rows) // 2) or any(h in ("go_id", "go_term", "goid") for h in head):
        return "go_annotations"
    if _paired_header(head):
        return "interactions"
    numeric = [sum(bool(_NUMBER.match(c.strip())) for c in r[1:]) for r in rows[1:]]
    if numeric and min(numeric) >= 5:
        return "expression"
    widths = {len(r) for r in rows}
    if (
        len(widths) > 1
        and min(widths) >= 3
        and not any(_NUMBER.match(c.strip()) for r in rows for c in r[2:])
    ):
        return "gmt"
    return None


def wrong_option(path: str | os.PathLike, expected: str, error: InputError) -> InputError:
    """``error``, or, when ``path`` looks like another kind of table than ``expected`` (a key
    of :data:`KINDS`), one line saying what it looks like and which option takes it. An error
    about another file (an alias table, a names file) is returned as it is."""
    if error.path is not None and os.path.abspath(str(error.path)) != os.path.abspath(path):
        return error
    kind = looks_like(path)
    if kind is None or kind == expected:
        return error
    what, option = KINDS[kind]
    return InputError(
        f"looks like {what}, not {KINDS[expected][0]}: give it as {option}",
        path=os.fspath(path),
    )
