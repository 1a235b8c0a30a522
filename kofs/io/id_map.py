"""The user id table (``--id-map``): :class:`IdMap` and :func:`read_id_map`.

Re-exported by :mod:`kofs.io.ids`.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterator, Mapping

from kofs.errors import InputError
from kofs.io._open import open_text as _open_text

log = logging.getLogger(__name__)

__all__ = ["MISSING_IDS", "IdMap", "read_id_map"]

#: Id texts that mean "no id" (upper-cased).
MISSING_IDS = frozenset({"", "NA", "NAN", "NONE", "NULL", "-"})


class IdMap(Mapping[str, str]):
    """A user id table source id -> matrix id (``--id-map``), read by :func:`read_id_map`.

    Attributes
    ----------
    path : str or None
    ambiguous : int
        Source ids listed with several different targets; they are left out (not guessed).
    """

    def __init__(self, mapping: Mapping[str, str], *, path: str | None = None, ambiguous: int = 0):
        self._map = dict(mapping)
        self.path = path
        self.ambiguous = ambiguous

    def __getitem__(self, key: str) -> str:
        return self._map[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._map)

    def __len__(self) -> int:
        return len(self._map)

    def __repr__(self) -> str:
        return f"IdMap({len(self)} ids, ambiguous={self.ambiguous}, path={self.path!r})"


_ID_HEADER_WORDS = frozenset(
    "id ids gene genes gene_id geneid symbol symbols gene_symbol genesymbol hgnc_symbol entrez "
    "entrez_id entrezid entrezgene ncbi_gene ensembl ensembl_id ensembl_gene ensembl_gene_id "
    "uniprot uniprot_id protein protein_id probe probe_id probeset probeset_id source target "
    "from to old new alias string_id string_protein_id".split()
)


def read_id_map(path: str | os.PathLike) -> IdMap:
    """Read a two-column id table: source id -> matrix id (``--id-map``).

    Tab, comma or whitespace separated; a header line is optional (recognised when it starts
    with ``#`` or both its fields are usual column names such as ``symbol``/``entrez_id``);
    extra columns are ignored. Blank lines and ``NA`` targets are skipped. A source id listed
    with two different targets is ambiguous: it is dropped and counted (warning), not guessed.

    Raises
    ------
    InputError
        Missing/empty file, or a line with fewer than two fields (with its line number).
    """
    targets: dict[str, set[str]] = {}
    order: list[str] = []
    with _open_text(path, what="id map") as fh:
        lineno = 0
        for lineno, line in enumerate(fh, start=1):  # noqa: B007
            text = line.strip()
            if not text:
                continue
            if text.startswith("#"):
                continue
            fields = re.split(r"\t|,|\s+", text) if "\t" not in text else text.split("\t")
            fields = [f.strip().strip('"') for f in fields]
            if len(fields) < 2:
                raise InputError(
                    f"id map line has {len(fields)} field(s), expected two (source id, matrix id)"
                    " separated by a tab or comma",
                    path=path,
                    line=lineno,
                )
            if (
                not order
                and not targets
                and all(re.sub(r"[\s.\-]", "_", f.lower()) in _ID_HEADER_WORDS for f in fields[:2])
            ):
                continue  # header
            src, dst = fields[0], fields[1]
            if src.upper() in MISSING_IDS or dst.upper() in MISSING_IDS:
                continue
            if src not in targets:
                targets[src] = set()
                order.append(src)
            targets[src].add(dst)
    if not targets:
        raise InputError("id map holds no id pairs", path=path)
    mapping = {s: next(iter(targets[s])) for s in order if len(targets[s]) == 1}
    ambiguous = len(order) - len(mapping)
    if ambiguous:
        log.warning(
            "id map %s: %d source ids have several targets and are ignored", path, ambiguous
        )
    return IdMap(mapping, path=os.fspath(path), ambiguous=ambiguous)
