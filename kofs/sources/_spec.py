"""The knowledge-source plug-in contract: :class:`SourceSpec` and the registry :data:`SOURCES`.

A knowledge source (GO, pathways, interactions, graph files, auxiliary data, term relevance,
...) is one module of :mod:`kofs.sources` that defines ``SOURCE = SourceSpec(...)``:

- ``options``: a frozen dataclass whose fields are declared with :func:`kofs.options.opt`; they
  become ``kofs rank`` options, ``kofs run`` keys and a section of :class:`kofs.pipeline.config.RunConfig`;
- ``read(options)``: reads the user's files (raising ``InputError`` naming the file) into a
  data object, or returns None when the source is not given; with ``uses_resources=True`` it
  is called ``read(options, resources)`` with the run's :class:`ReadResources` (the cache of
  parsed files, the memory limit, the progress callback);
- ``lists(data)``: the KOFS catalogue lists (:class:`~kofs.context.ListTemplate`) it
  contributes (``data`` is None when the source is not given: the lists are still listed, so
  asking for one says which option it needs); ``provides(data)``: the names those lists'
  ``needs`` refer to;
- optionally ``msfs`` (its sample similarities for MSFS), ``relevance`` (a starting relevance
  for propagation), ``evidence`` (the terms or gene graph that explain a gene's place,
  :mod:`kofs.knowledge.evidence`), ``releases`` (release information for the manifest) and
  ``id_file`` (the option of its file whose gene ids ``--id-map`` maps to the matrix's), and
  ``narrows(data)``: ``{list: (flag, ids given or None)}`` for options that choose the genes of one of its
  lists only (``--go-term-ids`` for GO-FILT): given while that list is not built, they are
  said to have no effect.

The module is registered by one line in :data:`kofs.sources.SOURCE_MODULES`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kofs.context import Context, ListTemplate
from kofs.types import FeatureFunctions, SampleSimilarity

#: ``evidence(context)`` returns what the source explains genes with
#: (:class:`kofs.knowledge.evidence.EvidenceSource`: a label and a term incidence or a gene graph)
Evidence = Callable[[Context], Sequence[Any]]


def _no_lists(data: Any) -> list[ListTemplate]:
    return []


def _nothing(data: Any) -> tuple[str, ...]:
    return ()


@dataclass(frozen=True)
class ReadResources:
    """What a plug-in's reader may use besides its options: ``cache`` (a
    :class:`kofs.cache.Cache` or None), ``max_memory`` (bytes or None), ``progress`` (a
    :class:`kofs.progress.Progress` or None)."""

    cache: Any = None
    max_memory: int | None = None
    progress: Any = None


@dataclass(frozen=True)
class SourceSpec:
    """Registry entry of a knowledge source (see the module docstring)."""

    name: str
    summary: str
    options: type
    read: Callable[..., Any]  # read(options), or read(options, resources)
    lists: Callable[[Any], Sequence[ListTemplate]] = _no_lists
    provides: Callable[[Any], tuple[str, ...]] = _nothing
    msfs: Callable[[Context], Sequence[SampleSimilarity]] | None = None
    msfs_order: float = 0.0
    relevance: Callable[[Context], FeatureFunctions] | None = None
    relevance_order: float = 0.0
    evidence: Evidence | None = None
    releases: Callable[[Any], dict[str, Any]] | None = None
    uses_resources: bool = False
    id_file: str | None = None
    narrows: Callable[[Any], dict[str, tuple[str, tuple[str, ...] | None]]] | None = None
