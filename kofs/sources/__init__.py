"""Knowledge sources as plug-ins: what the user's knowledge files are, how they are read, and
which KOFS lists they allow.

Each source is one module defining ``SOURCE`` (:class:`~kofs.sources._spec.SourceSpec`) and is
registered by one line in :data:`SOURCE_MODULES`. :func:`read_sources` reads every source a
run names into a :class:`KnowledgeSources`; :func:`describe_sources` backs ``kofs sources``;
:func:`source_releases` gives the release information of the manifest.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kofs.sources._spec import SourceSpec

#: One line per knowledge source (catalogue and MSFS order come from the specs).
SOURCE_MODULES = (
    "kofs.sources.go",
    "kofs.sources.pathways",
    "kofs.sources.interactions",
    "kofs.sources.graphs",
    "kofs.sources.aux",
    "kofs.sources.term_relevance",
)


class SourceRegistry:
    """Name -> :class:`SourceSpec`, in :data:`SOURCE_MODULES` order."""

    def __init__(self, modules: Sequence[str]) -> None:
        self._modules = tuple(modules)
        self._specs: dict[str, SourceSpec] | None = None

    def _load(self) -> dict[str, SourceSpec]:
        if self._specs is None:
            specs: dict[str, SourceSpec] = {}
            for m in self._modules:
                spec = importlib.import_module(m).SOURCE
                if spec.name in specs:
                    raise RuntimeError(f"knowledge source {spec.name!r} registered twice")
                specs[spec.name] = spec
            self._specs = specs
        return self._specs

    def get(self, name: str) -> SourceSpec:
        from kofs.registry import unknown_message

        try:
            return self._load()[name]
        except KeyError:
            from kofs.errors import ParameterError

            raise ParameterError(unknown_message("knowledge source", name, self._load())) from None

    def names(self) -> list[str]:
        return list(self._load())

    def __iter__(self) -> Iterator[SourceSpec]:
        return iter(self._load().values())

    def __len__(self) -> int:
        return len(self._load())


SOURCES = SourceRegistry(SOURCE_MODULES)


@dataclass(frozen=True)
class KnowledgeSources:
    """Knowledge read from the user's files (not yet aligned to the matrix).

    Attributes
    ----------
    data : mapping
        Source name -> the data its plug-in read (only the sources given).
    id_map : mapping, optional
        The user's identifier table (``--id-map``), used by the converters.
    """

    data: Mapping[str, Any] = field(default_factory=dict)
    id_map: Mapping[str, str] | None = None

    def get(self, name: str) -> Any:
        """What the plug-in ``name`` read (``"go"``, ``"pathways"``, ...), or None when its
        files were not given."""
        return self.data.get(name)

    def __repr__(self) -> str:
        given = ", ".join(self.data) or "none"
        return f"<KnowledgeSources: {given}{'; with an id map' if self.id_map else ''}>"

    def __contains__(self, name: object) -> bool:
        return name in self.data

    def only(self, *names: str) -> KnowledgeSources:
        """The same knowledge restricted to some sources."""
        return KnowledgeSources({k: v for k, v in self.data.items() if k in names}, self.id_map)

    def any(self) -> bool:
        """Whether any given source contributes catalogue lists."""
        return any(SOURCES.get(k).lists(v) for k, v in self.data.items())

    def templates(self) -> list[Any]:
        """The catalogue lists of every source (of an absent source too: asking for one of
        those says which option it needs)."""
        return [t for spec in SOURCES for t in spec.lists(self.data.get(spec.name))]

    def provided(self) -> set[str]:
        """What the given sources provide for the lists' ``needs``."""
        return {p for k, v in self.data.items() for p in SOURCES.get(k).provides(v)}


def read_sources(
    config: Any = None,
    /,
    *,
    cache: Any = None,
    max_memory: int | None = None,
    progress: Any = None,
    **options: Any,
) -> KnowledgeSources:
    """Read the knowledge files of a run (each reader raises InputError naming its file).

    Parameters
    ----------
    config : kofs.pipeline.config.RunConfig or mapping, optional
        Read the sources it names (its knowledge sections and ``id_map``); a mapping holds
        the options by name (as ``**options``).
    cache : kofs.cache.Cache, optional
        Keep parsed GO (ontology, annotations, closure and IC, GO graph) between runs.
    max_memory : int, optional
        Bytes; the GO readers fail early above it.
    progress : kofs.progress.Progress, optional
        Told about GO parsing (and, later in the run, the GO steps).
    **options
        Or the options by name, as on the command line (``go=``, ``go_annotations=``,
        ``pathways=``, ``interactions=``, ``string_min_score=``, ``aux=[...]``, ``id_map=``, ...).

    Returns
    -------
    KnowledgeSources
        What each given source's plug-in read (``.get("go")``, ...), not yet aligned to a
        matrix.
    """
    from kofs.errors import ParameterError
    from kofs.options import build, options_of
    from kofs.registry import unknown_message

    if config is not None:
        if options:
            raise ParameterError("read_sources takes a RunConfig or options, not both")
        if isinstance(config, Mapping):  # the options as one mapping, as kofs.rank's config=
            return read_sources(cache=cache, max_memory=max_memory, progress=progress, **config)
        if not (hasattr(config, "knowledge") and hasattr(config, "inputs")):  # a RunConfig
            raise ParameterError(
                "read_sources takes a RunConfig, a mapping of options or the options by name "
                f"(go=..., pathways=...), not a {type(config).__name__}"
            )
        knowledge, id_map = config.knowledge, config.inputs.id_map
    else:
        given = {k.replace("-", "_"): v for k, v in options.items()}
        id_map = given.pop("id_map", None)
        known = {o.name for spec in SOURCES for o in options_of(spec.options)}
        for k in given:
            if k not in known:
                raise ParameterError(unknown_message("knowledge option", k, sorted(known)))
        knowledge = {spec.name: build(spec.options, given) for spec in SOURCES}
    from kofs.sources._spec import ReadResources

    resources = ReadResources(cache=cache, max_memory=max_memory, progress=progress)
    data = {}
    for spec in SOURCES:
        if spec.uses_resources:
            value = spec.read(knowledge[spec.name], resources)
        else:
            value = spec.read(knowledge[spec.name])
        if value is not None:
            data[spec.name] = value
        else:
            _warn_settings_without_source(spec, knowledge[spec.name])
    if "term_relevance" in data and not any(
        SOURCES.get(name).relevance is not None for name in data
    ):
        from kofs.options import warn_no_effect

        files = ", ".join("--" + s.name.replace("_", "-") for s in SOURCES if s.relevance)
        why = f"it gives the relevance of GO terms and gene sets, and none of {files} is given"
        warn_no_effect([f"--term-relevance {knowledge['term_relevance'].term_relevance}"], why)
    idmap = None
    if id_map is not None:
        from kofs.io.id_map import read_id_map

        idmap = read_id_map(id_map)
        if not any(SOURCES.get(name).id_file for name in data):
            from kofs.options import warn_no_effect

            files = ", ".join("--" + s.id_file.replace("_", "-") for s in SOURCES if s.id_file)
            why = f"it maps the gene ids of {files}, and none is given"
            warn_no_effect([f"--id-map {id_map}"], why)
    return KnowledgeSources(data, idmap)


def _warn_settings_without_source(spec: SourceSpec, options: Any) -> None:
    """One warning when a source that is not given (none of its files) has settings other
    than their defaults: they changed nothing (``--go-taxon 9606`` without ``--go``)."""
    from kofs.options import changed, options_of, warn_no_effect

    opts = options_of(spec.options)
    paths = [o for o in opts if o.kind == "path"]
    if not paths or any(getattr(options, o.name) is not None for o in paths):
        return  # a source that gives no file option, or read None from its files itself
    files = ", ".join(o.flag for o in paths)
    settings = changed(options, [o.name for o in opts if o.kind != "path"])
    warn_no_effect(settings, f"no {spec.name} file is given ({files})")


def source_releases(sources: KnowledgeSources) -> dict[str, Any]:
    """Release information read from the knowledge files' headers (for the manifest)."""
    out: dict[str, Any] = {}
    for name, value in sources.data.items():
        spec = SOURCES.get(name)
        if spec.releases is not None:
            out.update(spec.releases(value))
    return out
