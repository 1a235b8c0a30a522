"""The gene-set container :class:`GeneSets` shared by the pathway readers
(:mod:`kofs.io.pathways`, :mod:`kofs.io.kgml`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from kofs.io.interaction_table import Interactions

__all__ = ["GeneSets", "strip_org"]

_ORG_PREFIX = re.compile(r"^[a-z]{2,4}:")


@dataclass(frozen=True, eq=False)
class GeneSets:
    """Named gene sets (pathways) as read from a file, ids not yet matched to a matrix.

    Attributes
    ----------
    ids : tuple of str
        Set ids (``KEGG_CELL_CYCLE``, ``hsa04110``), unique.
    names, descriptions : tuple of str
        One per set (names default to the ids).
    members : tuple of tuple of str
        Member gene ids of each set (primary id kind, no repeats).
    namespace : str or None
        Kind of the member ids (``"entrez"``, ``"symbol"``, ...).
    path : str or None
        File (or directory) read.
    alt_members : mapping of str to tuple of tuple of str
        The same sets written in other id kinds (e.g. ``{"symbol": ...}``), not paired gene by
        gene with ``members``; a converter uses the kind matching the matrix best.
    interactions : Interactions or None
        Gene-gene relations (KGML only).
    """

    ids: tuple[str, ...]
    names: tuple[str, ...]
    descriptions: tuple[str, ...]
    members: tuple[tuple[str, ...], ...]
    namespace: str | None = None
    path: str | None = None
    alt_members: Mapping[str, tuple[tuple[str, ...], ...]] = field(default_factory=dict)
    interactions: Interactions | None = None

    def __repr__(self) -> str:  # not the dataclass's: every member of every set
        return (
            f"<GeneSets: {len(self.ids):,} sets"
            + (f", ids: {self.namespace}" if self.namespace else "")
            + (f", from {self.path}" if self.path else "")
            + ">"
        )

    def __post_init__(self) -> None:
        def sets(ms):
            return tuple(tuple(dict.fromkeys(str(g) for g in m)) for m in ms)

        object.__setattr__(self, "ids", tuple(str(i) for i in self.ids))
        n = len(self.ids)
        names = tuple(str(x) for x in self.names) or self.ids
        descr = tuple(str(x) for x in self.descriptions) or ("",) * n
        object.__setattr__(self, "names", names)
        object.__setattr__(self, "descriptions", descr)
        object.__setattr__(self, "members", sets(self.members))
        alt = {k: sets(v) for k, v in dict(self.alt_members).items()}
        object.__setattr__(self, "alt_members", alt)
        if len(set(self.ids)) != n:
            raise ValueError("GeneSets: set ids must be unique")
        if any(len(x) != n for x in (names, descr, self.members, *alt.values())):
            raise ValueError("GeneSets: ids, names, descriptions and members differ in length")

    def __len__(self) -> int:
        return len(self.ids)

    def sizes(self) -> np.ndarray:
        """Number of member ids of each set."""
        return np.array([len(m) for m in self.members], dtype=np.int64)

    def genes(self) -> list[str]:
        """Distinct member ids over all sets, in order of first appearance."""
        return list(dict.fromkeys(g for m in self.members for g in m))

    def summary(self) -> dict:
        """Counts for ``kofs sources``: sets, distinct genes, gene-set pairs, id kind, edges."""
        return {
            "path": self.path,
            "sets": len(self),
            "genes": len(self.genes()),
            "pairs": int(self.sizes().sum()),
            "namespace": self.namespace,
            "alt_member_ids": sorted(self.alt_members),
            "relations": 0 if self.interactions is None else self.interactions.n_edges,
        }

    def member_kinds(self) -> dict[str, tuple[tuple[str, ...], ...]]:
        """``{"primary": members, **alt_members}``."""
        return {"primary": self.members, **self.alt_members}


def strip_org(gene: str) -> str:
    """A KEGG gene id without its organism prefix (``hsa:7157`` -> ``7157``), stripped."""
    return _ORG_PREFIX.sub("", gene.strip())
