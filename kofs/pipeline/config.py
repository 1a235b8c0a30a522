"""The run specification: :class:`RunConfig`, the one declared schema of a ``kofs`` run.

A run has sections — inputs, knowledge (one block per knowledge-source plug-in, see
:mod:`kofs.sources`), ranking, aggregation, output, resources — each a frozen dataclass whose
fields carry their :class:`~kofs.options.Option` (name, kind, default, help). Everything else is
generated from these declarations: the options of ``kofs rank``, the YAML keys of ``kofs run``,
``config.resolved.yaml`` and the config recorded in the manifest.

Keys are flat and unique across sections (``go-aspect``, ``aggregate``, ``threads``), so a YAML
config is one mapping, as on the command line. Only ``yaml.safe_load`` semantics are used
(object tags are refused), a key given twice is an error, and relative paths are relative to the
config file's folder.

Defaults are versioned (:mod:`kofs.pipeline.presets`); YAML is read and written by
:mod:`kofs.pipeline.yaml_files`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from kofs.errors import ParameterError, checked_keywords, did_you_mean
from kofs.io._fsops import absolute_path, check_path_argument
from kofs.options import (
    BOOTSTRAP_MAX,
    SEED_MAX,
    THREADS_MAX,
    TOP_MAX,
    Option,
    as_mapping,
    build,
    opt,
    options_of,
)
from kofs.pipeline.presets import DEFAULTS_VERSION, PRESETS, check_version
from kofs.pipeline.yaml_files import key_name, read_yaml
from kofs.registry import DEFAULT_AGGREGATOR


@dataclass(frozen=True)
class InputsConfig:
    """The expression matrix, sample labels, known genes and identifier map."""

    expression: str | None = opt(
        "expression",
        "path",
        help="Expression matrix (CSV/TSV, gzip ok, - for stdin), or single-cell data: an "
        "AnnData .h5ad, a 10x .h5 or a 10x MatrixMarket folder.",
        stdin=True,
        folder=True,
    )
    genes_in: str | None = opt(
        "genes_in",
        "choice",
        choices=("rows", "columns"),
        help="Genes are the rows or the columns of EXPRESSION (default: guessed).",
    )
    gene_column: str | None = opt(
        "gene_column", help="Column holding the gene ids (default: the first id column)."
    )
    duplicate_genes: str = opt(
        "duplicate_genes",
        "choice",
        "error",
        choices=("error", "first", "mean", "max-variance"),
        help="What to do with repeated gene ids.",
    )
    missing_values: str = opt(
        "missing_values",
        "choice",
        "error",
        choices=("error", "drop-gene", "impute-mean"),
        help="What to do with empty/NA cells.",
    )
    decimal: str = opt(
        "decimal",
        "choice",
        ".",
        choices=(".", ","),
        help="Decimal mark of EXPRESSION's numbers (',' for 1,23; needs a tab or ';' delimiter).",
    )
    labels: str | None = opt(
        "labels",
        "path",
        stdin=True,
        help="Sample labels (CSV/TSV: sample id, label; or a GSEA .cls, labels in the matrix's "
        "sample order), or obs:COLUMN for a column of an .h5ad's obs.",
    )
    label_column: str | None = opt(
        "label_column", help="Label column of --labels (default: second column)."
    )
    sample_column: str | None = opt(
        "sample_column", help="Sample-id column of --labels (default: first column)."
    )
    missing_labels: str = opt(
        "missing_labels",
        "choice",
        "error",
        choices=("error", "drop"),
        help="Samples of the matrix without a label (or with an empty or NA one): fail, or drop them.",
    )
    relevant_genes: str | None = opt(
        "relevant_genes",
        "path",
        stdin=True,
        help="Known relevant genes (one per line): they supervise the list weights "
        "(supervision genes), set the relevance of GO terms and pathways, build GO-CAN-MAH "
        "and start relevance propagation.",
    )
    id_map: str | None = opt(
        "id_map",
        "path",
        stdin=True,
        help="Two-column table mapping source gene ids to the matrix's ids.",
    )
    layer: str | None = opt(
        "layer", metavar="NAME", help="AnnData .h5ad: rank adata.layers[NAME] instead of X."
    )
    use_raw: bool = opt(
        "use_raw", "bool", False, help="AnnData .h5ad: rank adata.raw.X (genes of raw.var)."
    )
    use_graph: str | None = opt(
        "use_graph",
        metavar="KEY",
        help="AnnData .h5ad: reuse the cell graph adata.obsp[KEY] (e.g. connectivities) as the "
        "sample similarity of the graph rankers.",
    )
    chunk_size: int | None = opt(
        "chunk_size",
        "int",
        low=2,
        metavar="CELLS",
        help="AnnData .h5ad: keep X on disk and compute chunk by chunk with Dask, CELLS cells "
        "per chunk (out-of-core).",
    )


@dataclass(frozen=True)
class RankingConfig:
    """Which lists are built, and their parameters."""

    method: str = opt(
        "method",
        "choice",
        "kofs",
        choices=("kofs", "msfs"),
        help="kofs: rank per source and aggregate; msfs: SPEC on combined sample similarities.",
    )
    lists: tuple[str, ...] | None = opt(
        "lists",
        "names",
        help="Knowledge lists to build (comma-separated; default: all the inputs allow; see "
        "`kofs sources`).",
    )
    rankers: tuple[str, ...] | None = opt(
        "rankers",
        "names",
        help="Comma-separated ranker names (default: the default plan's rankers the inputs "
        "allow, 'default plan' in `kofs methods`).",
    )
    param: dict[str, dict[str, Any]] = opt(
        "param",
        "params",
        {},
        metavar="NAME.KEY=VALUE",
        help="A ranker or list parameter, e.g. laplacian.k=10 (repeatable).",
    )
    msfs_weights: tuple[float, ...] | None = opt(
        "msfs_weights", "floats", help="MSFS similarity weights, comma-separated (default equal)."
    )
    markers: str | None = opt(
        "markers",
        "choice",
        choices=("t-test", "wilcoxon", "none"),
        help="Per-group marker tables with --labels (each group against the rest, as scanpy's "
        "rank_genes_groups): t-test (Welch), wilcoxon or none. Default: t-test for single-cell "
        "(sparse or chunked) data, else none.",
    )


def _aggregator_names() -> tuple[str, ...]:
    from kofs.aggregate import AGGREGATORS

    return tuple(AGGREGATORS.names())


@dataclass(frozen=True)
class AggregationConfig:
    """How the lists are fused."""

    aggregate: str = opt(
        "aggregate",
        "str",
        DEFAULT_AGGREGATOR,
        help="How the lists are fused (see `kofs methods`; the book's EM: em).",
    )
    aggregate_param: dict[str, Any] = opt(
        "aggregate_param",
        "flat_params",
        {},
        metavar="KEY=VALUE",
        help="Aggregator parameter, e.g. tol=1e-12 (repeatable).",
    )
    supervision: str | None = opt(
        "supervision",
        "choice",
        choices=("none", "genes", "labels"),
        help="What teaches the list weights: none (agreement), genes (--relevant-genes), labels "
        "(each list's cross-validated predictive value). Default: genes with --relevant-genes, "
        "else labels with --labels (posterior only), else none.",
    )
    bootstrap: int = opt(
        "bootstrap",
        "int",
        200,
        low=0,
        high=BOOTSTRAP_MAX,
        help="Bootstrap replicates of the 95% list-weight intervals of em (0 = none; the "
        "posterior fusion's intervals come from its resamples parameter, "
        "--aggregate-param resamples=N).",
    )
    cross_fit: int = opt(
        "cross_fit",
        "int",
        5,
        low=0,
        high=1000,
        metavar="K",
        help="Folds of the cross-fit of lists seeded by --relevant-genes (posterior): each is "
        "rebuilt from K-1 folds of the known genes and scored on the held-out fold; 0 = leave "
        "its seed genes out of its scoring instead.",
    )


@dataclass(frozen=True)
class OutputConfig:
    """Where results go and what the terminal shows."""

    output: str = opt(
        "output",
        "path",
        "kofs-out",
        short="-o",
        folder=True,
        stdin=True,
        help="Output folder, or - to write ranking.tsv to stdout.",
    )
    top: int = opt(
        "top", "int", 10, low=0, high=TOP_MAX, help="Genes shown in the terminal summary."
    )
    no_report: bool = opt(
        "no_report",
        "bool",
        False,
        help="Do not write OUTDIR/report.html (the run's self-contained HTML report).",
    )
    title: str | None = opt(
        "title",
        metavar="TEXT",
        help="Title of report.html (default: the matrix's name and what was ranked).",
    )


@dataclass(frozen=True)
class ResourcesConfig:
    """Randomness, threads and memory."""

    seed: int = opt("seed", "int", 0, low=0, high=SEED_MAX, help="Seed of every random choice.")
    threads: int | None = opt(
        "threads",
        "int",
        low=1,
        high=THREADS_MAX,
        help="Cap on BLAS/worker threads (default: all cores).",
    )
    max_memory: str | None = opt(
        "max_memory",
        metavar="SIZE",
        help="Memory limit of the big steps, e.g. 4G or 512M (default: 80% of RAM); a step "
        "estimated above it fails early.",
    )
    cache_dir: str | None = opt(
        "cache_dir",
        "path",
        folder=True,
        metavar="DIR",
        help="Cache of parsed GO (closure, information content, GO graph) reused by later runs "
        "(default: $KOFS_CACHE_DIR, else $XDG_CACHE_HOME/kofs or ~/.cache/kofs).",
    )
    no_cache: bool = opt("no_cache", "bool", False, help="Neither read nor write the GO cache.")
    dask_scheduler: str | None = opt(
        "dask_scheduler",
        metavar="ADDRESS",
        help="Run the chunked computations on this dask.distributed scheduler (e.g. "
        "tcp://host:8786); implies --chunk-size 10000 unless given.",
    )


#: section name -> its dataclass, in the order of ``--help`` and the docs
SECTIONS: dict[str, type] = {
    "inputs": InputsConfig,
    "ranking": RankingConfig,
    "aggregation": AggregationConfig,
    "output": OutputConfig,
    "resources": ResourcesConfig,
}


def knowledge_sections() -> dict[str, type]:
    """Knowledge-source plug-in name -> the dataclass of its options."""
    from kofs.sources import SOURCES

    return {s.name: s.options for s in SOURCES}


def all_sections() -> dict[str, type]:
    """Every section in order: inputs, knowledge plug-ins, ranking, aggregation, output,
    resources (section names of plug-ins are ``knowledge.NAME``)."""
    out: dict[str, type] = {"inputs": InputsConfig}
    out.update({f"knowledge.{k}": v for k, v in knowledge_sections().items()})
    out.update({k: v for k, v in SECTIONS.items() if k != "inputs"})
    return out


def all_options() -> dict[str, tuple[str, Option]]:
    """Option name -> (section, Option) for every setting of a run."""
    out: dict[str, tuple[str, Option]] = {}
    for section, cls in all_sections().items():
        for o in options_of(cls):
            if o.name in out:
                raise RuntimeError(
                    f"option {o.name!r} declared twice ({out[o.name][0]}, {section})"
                )
            out[o.name] = (section, o)
    return out


@dataclass(frozen=True)
class RunConfig:
    """The full specification of one run.

    Build it with :meth:`from_mapping` (flat keys, as in YAML or ``kofs rank`` options),
    :func:`load_config` (a YAML file) or directly from the section dataclasses. Every value is
    validated when built.

    Attributes
    ----------
    inputs, ranking, aggregation, output, resources : the sections
    knowledge : mapping of plug-in name -> its options dataclass (:mod:`kofs.sources`)
    defaults : str
        Defaults version (:data:`PRESETS`).
    """

    inputs: InputsConfig = field(default_factory=InputsConfig)
    knowledge: Mapping[str, Any] = field(default_factory=dict)
    ranking: RankingConfig = field(default_factory=RankingConfig)
    aggregation: AggregationConfig = field(default_factory=AggregationConfig)
    output: OutputConfig = field(default_factory=OutputConfig)
    resources: ResourcesConfig = field(default_factory=ResourcesConfig)
    defaults: str = DEFAULTS_VERSION

    def __post_init__(self) -> None:
        check_version(self.defaults)
        given = dict(self.knowledge)
        full = {name: given.pop(name, None) or cls() for name, cls in knowledge_sections().items()}
        if given:
            raise ParameterError(f"unknown knowledge source {sorted(given)[0]!r}")
        object.__setattr__(self, "knowledge", full)
        from kofs.registry import unknown_message

        names = _aggregator_names()
        if self.aggregation.aggregate not in names:
            raise ParameterError(
                "--aggregate: "
                + unknown_message("aggregator", self.aggregation.aggregate, list(names))
            )
        self._type_params()
        if self.ranking.rankers:  # checked here, not after the matrix is read
            from kofs.rankers import RANKERS

            for name in self.ranking.rankers:
                if name not in RANKERS:
                    raise ParameterError(
                        "--rankers: " + unknown_message("ranker", name, RANKERS.names())
                    )

    def _type_params(self) -> None:
        """``param`` and ``aggregate_param`` values in the types the run coerces them to
        (``laplacian.k=7`` is the int 7, not the text ``'7'``), so ``config.resolved.yaml`` and
        the manifest say what ran (:func:`kofs.registry.typed_params`)."""
        from kofs.aggregate import AGGREGATORS
        from kofs.pipeline.plans import param_ranker
        from kofs.rankers import RANKERS
        from kofs.registry import typed_params

        r, a = self.ranking, self.aggregation
        param = {}
        for name, given in r.param.items():
            ranker = param_ranker(name)
            spec = RANKERS.get(ranker).params if ranker is not None and ranker in RANKERS else {}
            param[name] = typed_params(spec, given)
        object.__setattr__(self, "ranking", replace(r, param=param))
        agg = typed_params(AGGREGATORS.get(a.aggregate).params, a.aggregate_param)
        object.__setattr__(self, "aggregation", replace(a, aggregate_param=agg))

    # --- construction -----------------------------------------------------------------------

    @classmethod
    def from_mapping(
        cls,
        values: Mapping[str, Any],
        *,
        base: str | os.PathLike | None = None,
        where: str | os.PathLike | None = None,
    ) -> RunConfig:
        """A config from flat keys (dashes or underscores). Paths are made absolute relative
        to ``base`` (default: left as given); ``where`` (the config file) prefixes the
        messages. Unknown keys fail with a did-you-mean hint."""
        if not isinstance(values, Mapping):
            raise ParameterError(
                f"a run config is a mapping of option to value, not a {type(values).__name__}",
                path=where,
            )
        where_s = None if where is None else os.fspath(where)
        flat: dict[str, Any] = {}
        for k, v in values.items():
            name = key_name(k)
            if name in flat:
                raise ParameterError(
                    f"key {k!r} given twice (dash and underscore spellings are the same key)",
                    path=where_s,
                )
            flat[name] = v
        version = str(flat.pop("defaults", DEFAULTS_VERSION))
        check_version(version, where_s)
        known = all_options()
        for name in flat:
            if name not in known:
                raise ParameterError(_unknown_key(name, known), path=where_s)
        preset = {k: v for k, v in PRESETS[version].items() if k in known}
        # a key without a value (YAML's `key:` or `key: null`) is a key not given: the
        # version's default applies
        merged = {**preset, **{k: v for k, v in flat.items() if v is not None}}
        if base is not None:
            merged = absolute_paths(merged, base, where=where_s)
        sections: dict[str, Any] = {}
        knowledge: dict[str, Any] = {}
        for section, scls in all_sections().items():
            part = {o.name: merged[o.name] for o in options_of(scls) if o.name in merged}
            obj = build(scls, part, where=where_s)
            if section.startswith("knowledge."):
                knowledge[section.split(".", 1)[1]] = obj
            else:
                sections[section] = obj
        try:
            return cls(knowledge=knowledge, defaults=version, **sections)
        except ParameterError as exc:
            if where_s is None or exc.path is not None:
                raise
            raise ParameterError(exc.message, path=where_s) from None

    # --- reading ----------------------------------------------------------------------------

    def to_mapping(self) -> dict[str, Any]:
        """Flat ``{name: plain value}`` of every setting, plus ``defaults``."""
        out: dict[str, Any] = {"defaults": self.defaults}
        for section in self._sections():
            out.update(as_mapping(section))
        return out

    def _sections(self) -> Iterator[Any]:
        yield self.inputs
        yield from self.knowledge.values()
        yield self.ranking
        yield self.aggregation
        yield self.output
        yield self.resources

    def get(self, name: str) -> Any:
        """The value of one setting by its flat name."""
        for section in self._sections():
            if any(o.name == name for o in options_of(type(section))):
                return getattr(section, name)
        raise KeyError(name)

    @property
    def default_plan(self) -> tuple[str, ...]:
        """Rankers of the default plan under this config's defaults version."""
        return tuple(PRESETS[self.defaults]["default_plan"])

    def input_paths(self) -> dict[str, str | list[str] | None]:
        """Every file the run reads, by option name (for checksums and output checks)."""
        out: dict[str, Any] = {}
        for section in self._sections():
            for o in options_of(type(section)):
                if o.is_path and o.name not in _NOT_INPUTS:
                    v = getattr(section, o.name)
                    if isinstance(v, str) and v.startswith("obs:"):
                        v = None  # a column of the .h5ad (labels obs:COLUMN), not a file
                    out[o.name] = list(v) if isinstance(v, tuple) else v
        return out


#: path options that name no input of the run: where it writes, and the GO cache (a path, so
#: that a config's relative ``cache-dir`` is relative to the config and ``~`` is expanded)
_NOT_INPUTS = ("output", "cache_dir")


def _unknown_key(name: str, known: Iterable[str]) -> str:
    keys = [k.replace("_", "-") for k in known]
    key = name.replace("_", "-")
    hint = did_you_mean(key, keys, "see `kofs rank --help` for the keys")
    return f"unknown config key {key!r} ({hint}); keys are the long options of kofs rank"


def absolute_paths(
    values: Mapping[str, Any], base: str | os.PathLike, *, where: str | None = None
) -> dict[str, Any]:
    """``values`` (flat option names) with every path made absolute relative to ``base``."""
    known = all_options()
    out = dict(values)
    for name, v in values.items():
        if name in known and known[name][1].is_path and v is not None:
            out[name] = _absolute(known[name][1].parse(v, where=where), Path(base))
    return out


def _absolute(value: Any, base: Path) -> Any:
    if isinstance(value, tuple):
        return tuple(_absolute(v, base) for v in value)
    s = str(value)
    if s == "-" or os.path.isabs(s) or s.startswith("obs:"):  # obs:COLUMN names an obs column
        return s
    try:
        return absolute_path(s, base)
    except (RuntimeError, OSError):  # a symlink loop: its reader names the path and the loop
        return os.path.abspath(base / s)


@checked_keywords
def read_run_config(path: str | os.PathLike) -> RunConfig:
    """A :class:`RunConfig` from a YAML file (relative paths relative to its folder), as
    ``kofs run`` reads it: a ``command: rank`` key is allowed; a ``command: aggregate`` config
    (written by ``kofs aggregate``) is read by
    :func:`kofs.pipeline.user_lists_config.read_aggregate_config`."""
    check_path_argument(path, "read_run_config")
    values = read_yaml(path)
    command = values.pop("command", "rank")
    if command == "aggregate":
        raise ParameterError(
            "a `kofs aggregate` config (command: aggregate): in Python, "
            "kofs.pipeline.user_lists_config.read_aggregate_config(PATH) gives its lists and "
            "settings, and run_aggregate_config(lists, settings) runs it",
            path=path,
        )
    if command != "rank":
        raise ParameterError(
            f"config key 'command': {command!r}; `kofs run` repeats `kofs rank` "
            "(command: rank, or no command key) or `kofs aggregate` (command: aggregate)",
            path=path,
        )
    return RunConfig.from_mapping(values, base=Path(path).resolve().parent, where=path)


def as_config(
    config: RunConfig | Mapping[str, Any] | str | os.PathLike | None = None, /, **overrides: Any
) -> RunConfig:
    """A :class:`RunConfig` from itself, a mapping of options, a YAML file path (its relative
    paths relative to its folder) or nothing (the defaults), with ``overrides`` (options by
    name, dashes or underscores) on top. Every value is checked by its declaration.

    Raises
    ------
    ParameterError
        An unknown key (with a did-you-mean hint), a value its option refuses, or a
        ``defaults`` override of a config already resolved under another version.
    """
    if config is None or isinstance(config, Mapping):
        values: dict[str, Any] = {}
        for k, v in [*(config or {}).items(), *overrides.items()]:
            name = key_name(k)
            if name in values and k not in overrides:
                raise ParameterError(
                    f"key {k!r} given twice (dash and underscore spellings are the same key)"
                )
            values[name] = v
        return RunConfig.from_mapping(values)
    if not isinstance(config, (RunConfig, str, os.PathLike)):
        raise ParameterError(
            f"config: give a RunConfig, a mapping of options or a YAML file's path, not a "
            f"{type(config).__name__}"
        )
    cfg = config if isinstance(config, RunConfig) else read_run_config(config)
    if not overrides:
        return cfg
    given = {key_name(k): v for k, v in overrides.items()}
    if "defaults" in given and str(given["defaults"]) != cfg.defaults:
        raise ParameterError(
            f"defaults {given['defaults']!r}: the config's values were resolved under defaults "
            f"version {cfg.defaults!r}; name the version in the config itself"
        )
    return RunConfig.from_mapping(with_overrides(cfg.to_mapping(), given))


def with_overrides(
    values: Mapping[str, Any],
    overrides: Mapping[str, Any],
    *,
    options: Mapping[str, Option] | None = None,
) -> dict[str, Any]:
    """``values`` (flat option names) with ``overrides`` on top, as the command line goes over
    a config: an option replaces the config's value, except a parameter mapping (``param``,
    ``aggregate-param``), which is merged key by key (``--param laplacian.t=2`` over a
    config's ``param: {laplacian: {k: 10}}`` keeps k, where it had been dropped silently).
    ``options``: name -> declaration (default: those of a ``kofs rank`` run)."""
    known = options if options is not None else {n: o for n, (_, o) in all_options().items()}
    out = dict(values)
    for name, v in overrides.items():
        kind = known[name].kind if name in known else None
        if kind in ("params", "flat_params") and v is not None and out.get(name):
            o = known[name]
            base, new = o.parse(out[name]), o.parse(v)
            if kind == "params":
                out[name] = {t: {**base.get(t, {}), **new.get(t, {})} for t in {**base, **new}}
            else:
                out[name] = {**base, **new}
        else:
            out[name] = v
    return out


def dump_config(config: RunConfig) -> str:
    """YAML text of a resolved config (``kofs run`` repeats the run with it)."""
    return dump_resolved(config.to_mapping())


def dump_resolved(resolved: dict[str, Any]) -> str:
    """YAML text of a resolved ``kofs rank`` or ``kofs aggregate`` config (dash keys, sorted),
    headed by how to repeat the run -- and, where an input was read from standard input
    (``-``), that the same data must be piped in again (the file keeps the ``-``: the run's
    input was a stream, not a file)."""
    plain = {k.replace("_", "-"): v for k, v in sorted(resolved.items())}
    head = "# kofs resolved configuration: `kofs run THIS_FILE` repeats the run\n"
    if _reads_stdin({k: v for k, v in plain.items() if k != "output"}):
        head += (
            "# inputs given as - were read from standard input: pipe the same data into\n"
            "# `kofs run THIS_FILE` to repeat it\n"
        )
    return head + yaml.safe_dump(
        plain, sort_keys=True, default_flow_style=False, allow_unicode=True
    )


def _reads_stdin(value: Any) -> bool:
    if isinstance(value, str):
        return value == "-"
    if isinstance(value, dict):
        return any(_reads_stdin(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_reads_stdin(v) for v in value)
    return False
