"""What a plan is made of: :class:`Context` (the run's data and its per-run cache),
:class:`ListPlan` (one ranked list to build) and :class:`ListTemplate` (a catalogue entry that
becomes a plan when its sources are given)."""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kofs._compute.run_cache import run_store
from kofs.io.ids import CoverageReport
from kofs.types import Expression, RankerInputs, SampleCategories, SampleSimilarity

log = logging.getLogger(__name__)

#: Key part of shared knowledge built from known genes without using them (reused with others).
_ANY_KNOWN = "<any known genes>"


@dataclass
class Context:
    """What the plan's builders may use: the matrix, the user's knowledge, caches.

    Attributes
    ----------
    expression : Expression
    categories : SampleCategories, optional
        Aligned to ``expression.samples``.
    relevant_genes : tuple of str, optional
        Known relevant genes as matrix ids.
    sources : kofs.sources.KnowledgeSources, optional
        The knowledge read from the user's files.
    seed : int
    cache : dict
        Internal knowledge built in this run.
    kernels : dict
        The compute kernels' cache of this run (chunked moments, approximate kNN candidates;
        :mod:`kofs._compute.run_cache`): the store active when the Context is made, else a new
        one; :func:`kofs.pipeline.build.build_lists` makes it active while the lists are built.
    shared : dict
        Internal knowledge that depends on gene ids only, shared between runs on subsets of
        the same samples' genes (the folds of the honest protocol); see :meth:`cached`.
    coverage : list of CoverageReport
    max_memory : int, optional
        Bytes; None = no check (:mod:`kofs.resources`).
    similarity : SampleSimilarity, optional
        A given sample graph (e.g. an AnnData's ``obsp["connectivities"]``) for the graph
        rankers of the expression plan.
    progress : kofs.progress.Progress, optional
        Told about each list and the long knowledge steps; None = silent.
    symbols : mapping of str to str, optional
        Gene id -> symbol (:func:`kofs.pipeline.result.source_symbols`), set before the evidence is
        collected so that neighbours are named by symbol.
    filter_out : frozenset of str
        Genes left out of every similarity built on a gene set (the FILT lists): a fold of
        their cross-fit (:meth:`without_filter_genes`).
    """

    expression: Expression
    categories: SampleCategories | None = None
    relevant_genes: tuple[str, ...] | None = None
    sources: Any = None
    seed: int = 0
    cache: dict[str, Any] = field(default_factory=dict)
    kernels: dict[str, Any] = field(default_factory=run_store, repr=False)
    shared: dict[Any, Any] = field(default_factory=dict)
    coverage: list[CoverageReport] = field(default_factory=list)
    max_memory: int | None = None
    similarity: SampleSimilarity | None = None
    progress: Any = None
    symbols: Mapping[str, str] | None = None
    seeded_keys: set[str] = field(default_factory=set, repr=False)
    filter_out: frozenset[str] = frozenset()
    _building: list[str] = field(default_factory=list, repr=False)

    def cached(
        self,
        key: str,
        build: Callable[[], Any],
        *,
        gene_level: bool = False,
        uses_relevant: bool = False,
    ) -> Any:
        """Build a piece of internal knowledge once per run.

        ``gene_level=True`` marks knowledge that depends on gene ids (and known genes) only,
        never on expression values: it is kept in :attr:`shared` too and reused by later runs
        given the same ``shared`` dict and the same genes (with other known genes too, when
        its builder did not use them: the halves of a split-half evaluation). A reused entry
        built from the known genes is marked as such here as well, so :meth:`reseeded` never
        carries it over (the honest protocol's folds re-run the cross-fit on shared knowledge).

        ``uses_relevant=True`` marks knowledge built from :attr:`relevant_genes` (term
        relevance learned from them, the start of propagation, GO-CAN-MAH's terms). Such a key,
        and every key whose builder used it, is in :attr:`seeded_keys`: :meth:`reseeded` does
        not carry it over to a context with other known genes.
        """
        if key in self.cache:
            if key in self.seeded_keys:
                self.seeded_keys.update(self._building)
            return self.cache[key]
        if uses_relevant:
            self.seeded_keys.update([*self._building, key])
        skey = (key, self.expression.genes, self.relevant_genes)
        # built before from other known genes without using them: the same for these
        any_key = (key, self.expression.genes, _ANY_KNOWN) if self.relevant_genes else None
        hit = self.shared.get(skey) or (self.shared.get(any_key) if any_key else None)
        if gene_level and hit is not None:
            value, seeded = hit
            if seeded:  # built from the known genes: a reseeded context must rebuild it
                self.seeded_keys.update([*self._building, key])
            self.cache[key] = value
            return value
        t0 = time.perf_counter()
        self._building.append(key)
        try:
            self.cache[key] = build()
        finally:
            self._building.pop()
        log.info("built %s in %.2f s", key, time.perf_counter() - t0)
        if gene_level:
            seeded = key in self.seeded_keys
            self.shared[skey] = (self.cache[key], seeded)
            if any_key is not None and not seeded:
                self.shared[any_key] = (self.cache[key], False)
        return self.cache[key]

    def note_relevant_use(self) -> None:
        """Mark the knowledge being built (the :meth:`cached` keys under construction) as
        built from :attr:`relevant_genes`."""
        self.seeded_keys.update(self._building)

    def reseeded(self, relevant_genes: tuple[str, ...]) -> Context:
        """The same run with other known genes (a fold of the cross-fit,
        :mod:`kofs.pipeline.reseeding`): knowledge that does not depend on the known genes is reused,
        the rest (:attr:`seeded_keys`) is built again; nothing is reported on progress."""
        return self._fold(
            relevant_genes=tuple(relevant_genes),
            cache={k: v for k, v in self.cache.items() if k not in self.seeded_keys},
        )

    def without_filter_genes(self, genes: Iterable[str]) -> Context:
        """The same run with ``genes`` left out of every similarity built on a gene set (the
        FILT lists, book eq. 6.10): a fold of their cross-fit (:mod:`kofs.pipeline.reseeding`).
        A gene that helps build a similarity aligns with its leading directions even on noise,
        so such a list is scored on a gene of its set only through a similarity built without
        it. Everything else built is reused."""
        return self._fold(
            relevant_genes=self.relevant_genes,
            cache=dict(self.cache),
            seeded_keys=set(self.seeded_keys),
            filter_out=frozenset(genes),
        )

    def _fold(self, **changes: Any) -> Context:
        """A context of one fold of a cross-fit: this run's data, sources and shared knowledge,
        ``changes`` (known genes, cache, ...), its own coverage and no progress reports."""
        base = {
            "expression": self.expression,
            "categories": self.categories,
            "sources": self.sources,
            "seed": self.seed,
            "shared": self.shared,
            "coverage": [],
            "max_memory": self.max_memory,
            "similarity": self.similarity,
            "progress": None,
            "symbols": self.symbols,
        }
        return Context(**{**base, **changes})

    def set_without_fold(self, key: str, mask: np.ndarray) -> tuple[str, np.ndarray]:
        """The cache key and the genes (bool mask over the matrix's genes) of a similarity built
        on the gene set ``mask``, without :attr:`filter_out`."""
        if not self.filter_out:
            return key, mask
        out = np.isin(np.asarray(self.expression.genes, dtype=object), list(self.filter_out))
        digest = hashlib.sha256("\n".join(sorted(self.filter_out)).encode()).hexdigest()[:16]
        return f"{key} without {digest}", mask & ~out

    def source(self, name: str) -> Any:
        """The data of knowledge source ``name`` (None when not given)."""
        return None if self.sources is None else self.sources.get(name)

    def record(self, result: tuple[Any, CoverageReport]) -> Any:
        """Keep a converter's coverage report (once per source) and return its object."""
        obj, report = result
        if all(r.source != report.source for r in self.coverage):
            self.coverage.append(report)
        return obj


@dataclass(frozen=True)
class ListPlan:
    """One ranked list to build: a ranker applied to some internal knowledge.

    Attributes
    ----------
    name : str
        Name of the list in the outputs (``"fisher"``, ``"GO-MAH"``, ...).
    ranker : str
        Registry name of the ranker.
    build_inputs : callable
        ``build_inputs(context) -> RankerInputs``; called lazily, so lists not chosen cost nothing.
    params : mapping
        Ranker parameters.
    sources : tuple of str
        Knowledge sources the list depends on (for the summary and the manifest).
    """

    name: str
    ranker: str
    build_inputs: Callable[[Context], RankerInputs]
    params: Mapping[str, Any] = field(default_factory=dict)
    sources: tuple[str, ...] = ("expression",)


@dataclass(frozen=True)
class ListTemplate:
    """A list of the KOFS catalogue (book Tables 6.3/6.4).

    Attributes
    ----------
    name : str
    ranker : str
    needs : tuple of str
        What the run must have: ``expression``, ``labels``, ``relevant_genes``, or what a
        knowledge source provides (:attr:`kofs.sources.SourceSpec.provides`).
    build : callable
        ``build(context) -> RankerInputs``.
    summary : str
    order : float
        Position in the catalogue (the book's table order).
    built_on : callable, optional
        ``built_on(context) -> bool mask`` over the matrix's genes: the gene set the list's
        sample similarity is built on (the FILT lists). The fusion scores the list on those
        genes cross-fitted, as a seeded list on its seeds (:mod:`kofs.pipeline.reseeding`).
    """

    name: str
    ranker: str
    needs: tuple[str, ...]
    build: Callable[[Context], RankerInputs]
    summary: str
    order: float = 0.0
    built_on: Callable[[Context], np.ndarray] | None = None
