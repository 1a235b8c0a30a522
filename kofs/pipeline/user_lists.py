"""Fuse ranked gene lists that users bring (``kofs aggregate``, :func:`aggregate_lists`).

The lists come from files (:mod:`kofs.io.gene_lists`), DataFrames, Series or plain Python
lists; they may differ in length and in gene universe. Their ids are harmonised once, here:
ids equal up to case, an Ensembl version or a database prefix (:func:`kofs.io.ids.normalise_id`)
are one gene, written as the first list that names it writes it (Ensembl versions dropped).
A universe (a number N, or a gene list) sets the N of RRA and Stuart and of the
random-completion model; list genes outside a universe list are dropped and counted. Each
list's coverage (genes read, kept, dropped, shared with the other lists) is reported.
"""

from __future__ import annotations

import difflib
import logging
import os
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from kofs.errors import InputError, ParameterError, short_repr
from kofs.io.gene_lists import (
    DIRECTIONS,
    MAGECK_SIDES,
    ListSpec,
    RankedGeneList,
    list_from_frame,
    list_from_ids,
    list_from_scores,
    parse_list_spec,
    read_ranked_lists,
)
from kofs.io.ids import CoverageReport, guess_namespace, normalise_id
from kofs.options import TOP_MAX, as_mapping, build, opt, options_of
from kofs.registry import DEFAULT_AGGREGATOR
from kofs.types import AggregateRanking, Ranking

log = logging.getLogger(__name__)

__all__ = [
    "AggregateListsConfig",
    "ListAggregation",
    "aggregate_lists",
    "read_aggregate_config",
    "read_universe",
    "resolved_aggregate_config",
    "run_aggregate_config",
]

_ENSEMBL = re.compile(r"^ENS[A-Z]*[GTPE]\d+$")
_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
#: largest universe size (more genes than any genome has, far below integer overflow)
UNIVERSE_MAX = 10**9
LOW_SHARED = 0.05


@dataclass(frozen=True, eq=False)
class ListAggregation:
    """Result of :func:`aggregate_lists`.

    Attributes
    ----------
    final : AggregateRanking
        The fused ranking over the genes of the lists (plus those of a universe list).
    lists : tuple of Ranking
        The harmonised input lists (display ids, universe applied), in input order.
    sources : tuple of RankedGeneList
        The lists as read, with how each was recognised and ranked.
    coverage : tuple of CoverageReport
        One per list; ``matrix_genes`` is the universe size N.
    universe : int
        N.
    settings : mapping
        Method, parameters and reading options used.
    timings : mapping of str to float
        Seconds per step.
    evidence : None
        (No per-gene evidence for user lists; present so that the run writers accept it.)
    """

    final: AggregateRanking
    lists: tuple[Ranking, ...]
    sources: tuple[RankedGeneList, ...]
    coverage: tuple[CoverageReport, ...]
    universe: int
    settings: Mapping[str, Any] = field(default_factory=dict)
    timings: Mapping[str, float] = field(default_factory=dict)
    evidence: Mapping[str, str] | None = None


def _is_path(obj: Any) -> bool:
    return isinstance(obj, (str, os.PathLike, ListSpec))


def _read_one(
    obj: Any, name: str | None, index: int, reading: Mapping[str, Any]
) -> list[RankedGeneList]:
    import pandas as pd

    if isinstance(obj, RankedGeneList):
        return [obj if name is None else replace(obj, name=name)]
    if isinstance(obj, Ranking):
        direction = "descending" if obj.higher_is_better else "ascending"
        return [
            list_from_scores(
                obj.genes,
                obj.scores,
                name=name or obj.name,
                higher_is_better=obj.higher_is_better,
                kind="Ranking",
                ranked_by=f"its scores, {direction}",
            )
        ]
    if _is_path(obj):
        spec = obj if isinstance(obj, ListSpec) else os.fspath(obj)
        lists = read_ranked_lists(spec, **reading)
        if name is not None:
            if len(lists) != 1:
                raise ParameterError(
                    f"{os.fspath(getattr(spec, 'path', spec))} holds {len(lists)} gene sets; "
                    "a name can only be given to a file with one list"
                )
            lists = [replace(lists[0], name=name)]
        return lists
    label = name or f"list{index + 1}"
    if isinstance(obj, pd.DataFrame):
        return [list_from_frame(obj, label, **reading)]
    if isinstance(obj, pd.Series):
        col = str(obj.name) if obj.name is not None else "score"
        if obj.name is not None and name is None:
            label = str(obj.name)
        frame = obj.to_frame(name=col)
        if isinstance(frame.index, pd.RangeIndex):
            raise ParameterError(f"list {label}: a Series needs the gene ids as its index")
        return [list_from_frame(frame, label, **{**reading, "column": col})]
    if isinstance(obj, Iterable) and not isinstance(obj, (bytes, Mapping)):
        return [list_from_ids(list(obj), label)]
    raise ParameterError(
        f"list {label}: expected a file path, a DataFrame, a Series or a list of gene ids, "
        f"got {type(obj).__name__}"
    )


_FLAGS = {
    "gene_column": ("--gene-column", "no list is a table read by its gene column"),
    "column": ("--score-column", "every table names its column or is a recognised tool's"),
    "direction": ("--direction", "it applies to a score column given without a direction"),
    "mageck_side": ("--mageck-side", "no list is a MAGeCK gene summary ranked by its default"),
}


def _warn_unused(reading: Mapping[str, Any], sources: Sequence[RankedGeneList]) -> None:
    """One warning per reading option given but used by no list (it changed nothing)."""
    for key, value in reading.items():
        if value is None or any(key in s.options_used for s in sources):
            continue
        flag, why = _FLAGS[key]
        log.warning("%s %s has no effect: %s", flag, value, why)


def read_universe(universe: Any) -> int | list[str] | None:
    """``None``, a number of genes, or gene ids (a file with one id per line / a column, or an
    iterable). A string of digits that is not a file is a number."""
    if universe is None:
        return None
    if isinstance(universe, (int, np.integer)) and not isinstance(universe, bool):
        if not 1 <= universe <= UNIVERSE_MAX:
            raise ParameterError(
                f"--universe {universe}: a universe size must be a number of genes in "
                f"[1, {UNIVERSE_MAX}]"
            )
        return int(universe)
    if isinstance(universe, (str, os.PathLike)):
        text = os.fspath(universe)
        if _NUMBER.match(text.strip()) and not os.path.exists(text):
            number = float(text)
            if not number.is_integer() or not 1 <= number <= UNIVERSE_MAX:
                raise ParameterError(
                    f"--universe {text.strip()}: a universe size must be a whole number of "
                    f"genes in [1, {UNIVERSE_MAX}]"
                )
            return int(number)
        from kofs.io.genes import read_gene_list

        return list(read_gene_list(text))
    if isinstance(universe, Iterable):
        return [str(g) for g in universe]
    raise ParameterError(f"universe must be a number, a file or gene ids, got {universe!r}")


def _display(gene: str, key: str) -> str:
    return key if _ENSEMBL.match(key) else gene.strip()


def aggregate_lists(
    lists: Sequence[Any] | Mapping[str, Any],
    *,
    aggregate: str = DEFAULT_AGGREGATOR,
    aggregate_param: Mapping[str, Any] | None = None,
    universe: int | str | os.PathLike | Iterable[str] | None = None,
    relevant_genes: str | os.PathLike | Iterable[str] | None = None,
    gene_column: str | None = None,
    column: str | None = None,
    direction: str | None = None,
    mageck_side: str | None = None,
) -> ListAggregation:
    """Read, harmonise and fuse ranked gene lists.

    Parameters
    ----------
    lists : sequence or mapping (name -> list)
        Each a file spec ``[NAME=]FILE[:COLUMN[:asc|desc|abs]]`` or path (a GMT file gives one
        list per gene set), a :class:`pandas.DataFrame` (a gene column or index plus score
        columns; the usual tools' tables are recognised), a :class:`pandas.Series` (index =
        genes, values = scores; give ``direction``), a sequence of gene ids in rank order, a
        :class:`~kofs.types.Ranking` or a :class:`~kofs.io.gene_lists.RankedGeneList`.
    aggregate : str, default "posterior"
        A registered aggregator (``kofs methods``): ``posterior`` (the default everywhere:
        per-gene posterior, local fdr and q-value), ``rra``, ``stuart``, ``em``, ``borda``, ...
    aggregate_param : mapping, optional
        Aggregator parameters (e.g. ``{"exact": True}`` for RRA).

    ``aggregate`` and ``aggregate_param`` are named as ``kofs.rank``'s and the ``aggregate``
    and ``aggregate-param`` keys of both commands.
    universe : int, path or iterable of str, optional
        Gene universe: its size N, or its genes (list genes outside it are dropped). Default:
        the distinct genes of the lists (RobustRankAggreg's default).
    relevant_genes : path or iterable of str, optional
        Known relevant genes (a prior covariate of ``posterior``; supervised EM for ``em``).
    gene_column, column, direction, mageck_side
        Reading options for tables whose spec does not say (see
        :func:`kofs.io.gene_lists.read_ranked_lists`; ``mageck_side`` None means ``"neg"``).
        One given that no list uses (e.g. ``mageck_side`` without a MAGeCK table) costs one
        warning line.

    Returns
    -------
    ListAggregation

    Raises
    ------
    InputError, ParameterError
        Unreadable or empty lists, unknown columns, a direction that cannot be guessed, two
        lists with the same name, a list with no gene in the universe, a universe smaller than
        the lists' genes.
    """
    from kofs.aggregate import aggregate as fuse

    t0 = time.perf_counter()
    if direction is not None and direction not in DIRECTIONS:
        raise ParameterError(f"direction must be one of {', '.join(DIRECTIONS)}, got {direction!r}")
    reading = {
        "gene_column": gene_column,
        "column": column,
        "direction": direction,
        "mageck_side": mageck_side,
    }
    items = list(lists.items()) if isinstance(lists, Mapping) else [(None, x) for x in lists]
    if not items:
        raise ParameterError("give at least one ranked list")
    sources: list[RankedGeneList] = []
    for i, (name, obj) in enumerate(items):
        sources.extend(_read_one(obj, None if name is None else str(name), i, reading))
    _warn_unused(reading, sources)
    seen: dict[str, str] = {}
    for s in sources:
        if s.name in seen:
            raise ParameterError(
                f"two lists are named {s.name!r} ({seen[s.name]} and {s.path}); name them "
                "with NAME=FILE"
            )
        seen[s.name] = s.path
    t_read = time.perf_counter()
    rankings, coverage, N, universe_ids = _harmonise(sources, read_universe(universe))
    relevant = None
    if relevant_genes is not None:
        relevant = _relevant(relevant_genes, rankings, universe_ids)
    final = fuse(
        rankings,
        aggregate,
        relevant_genes=relevant,
        params=aggregate_param,
        universe=N if universe_ids is None else universe_ids,
    )
    t_end = time.perf_counter()
    settings = {
        "aggregate": aggregate,
        "params": dict(aggregate_param or {}),
        "universe": N,
        "universe_genes": universe_ids is not None,
        **{k: v for k, v in reading.items()},
    }
    return ListAggregation(
        final=final,
        lists=tuple(rankings),
        sources=tuple(sources),
        coverage=tuple(coverage),
        universe=N,
        settings=settings,
        timings={"read": t_read - t0, "aggregate": t_end - t_read},
    )


def _harmonise(
    sources: Sequence[RankedGeneList], universe: int | list[str] | None
) -> tuple[list[Ranking], list[CoverageReport], int, list[str] | None]:
    memo: dict[str, str] = {}

    def keys_of(genes: Iterable[str]) -> list[str]:
        out = []
        for g in genes:
            k = memo.get(g)
            if k is None:
                k = memo[g] = normalise_id(g)
            out.append(k)
        return out

    list_keys = [keys_of(s.genes) for s in sources]
    display: dict[str, str] = {}
    counts: dict[str, int] = {}
    for s, keys in zip(sources, list_keys, strict=True):
        for g, k in zip(s.genes, keys, strict=True):
            if k not in display:
                display[k] = _display(g, k)
        for k in set(keys):
            counts[k] = counts.get(k, 0) + 1
    allowed: dict[str, str] | None = None
    if isinstance(universe, list):
        allowed = {}
        for g, key in zip(universe, keys_of(universe), strict=True):
            allowed.setdefault(key, display.get(key, _display(g, key)))
        if not allowed:
            raise InputError("the universe gene list is empty")
    rankings, reports = [], []
    kept_keys: set[str] = set()
    for s, keys in zip(sources, list_keys, strict=True):
        keep = np.array([allowed is None or k in allowed for k in keys], dtype=bool)
        if not keep.any():
            raise InputError(
                f"list {s.name!r}: none of its {len(keys)} genes (e.g. "
                f"{', '.join(s.genes[:3])}) is in the universe; use the same identifier type",
                path=s.path,
            )
        genes = tuple(display[k] for k, ok in zip(keys, keep, strict=True) if ok)
        kept_keys.update(k for k, ok in zip(keys, keep, strict=True) if ok)
        rankings.append(
            Ranking(
                s.name,
                genes,
                np.asarray(s.scores)[keep],
                s.higher_is_better,
                params=dict(s.ranking().params),
            )
        )
        shared = sum(counts[k] > 1 for k, ok in zip(keys, keep, strict=True) if ok)
        if len(sources) > 1 and shared < LOW_SHARED * len(genes):
            log.warning(
                "list %s shares only %d of its %d genes with the other lists; do the lists use "
                "the same identifier type?",
                s.name,
                shared,
                len(genes),
            )
        reports.append(
            CoverageReport(
                source=s.name,
                input_genes=len(keys),
                matched=int(keep.sum()),
                dropped=int((~keep).sum()),
                ambiguous=0,
                matrix_genes=0,  # set below, once N is known
                matrix_genes_covered=int(keep.sum()),
                id_column=s.gene_column,
                source_namespace=guess_namespace(s.genes),
                examples_dropped=tuple(g for g, ok in zip(s.genes, keep, strict=True) if not ok)[
                    :5
                ],
                target="universe",
                shared=int(shared),
            )
        )
    if allowed is not None:
        N = len(allowed)
        universe_ids = list(allowed.values())
    else:
        N = len(kept_keys) if universe is None else int(universe)
        universe_ids = None
    reports = [replace(r, matrix_genes=N) for r in reports]
    for r in reports:
        log.info("%s", r.line())
    return rankings, reports, N, universe_ids


def _relevant(
    relevant_genes: Any, rankings: Sequence[Ranking], universe_ids: list[str] | None
) -> list[str]:
    if isinstance(relevant_genes, (str, os.PathLike)):
        from kofs.io.genes import read_gene_list

        ids = list(read_gene_list(relevant_genes))
    else:
        ids = [str(g) for g in relevant_genes]
    known = {normalise_id(g): g for r in rankings for g in r.genes}
    for g in universe_ids or ():
        known.setdefault(normalise_id(g), g)
    out = [known[k] for k in dict.fromkeys(normalise_id(g) for g in ids) if k in known]
    if len(out) < len(ids):
        log.warning(
            "%d of the %d relevant genes are in no list (ignored)", len(ids) - len(out), len(ids)
        )
    if not out:
        raise ParameterError("none of the relevant genes is among the ranked genes")
    return out


# --- the settings of `kofs aggregate` (one declaration: CLI options, YAML keys, resolved config)


@dataclass(frozen=True)
class AggregateListsConfig:
    """Settings of ``kofs aggregate`` and of a ``kofs run`` config with ``command: aggregate``.

    Declared with :func:`kofs.options.opt` like :class:`kofs.pipeline.config.RunConfig`: the command's
    options, the YAML keys and ``config.resolved.yaml`` are generated from these fields. The
    lists themselves are the command's arguments (``lists:`` in YAML).
    """

    output: str = opt(
        "output",
        "path",
        "kofs-out",
        short="-o",
        folder=True,
        stdin=True,
        help="Output folder, or - to write ranking.tsv to stdout.",
    )
    aggregate: str = opt(
        "aggregate",
        "str",
        DEFAULT_AGGREGATOR,
        help="How the lists are fused (see `kofs methods`); RobustRankAggreg's: rra.",
    )
    aggregate_param: dict[str, Any] = opt(
        "aggregate_param",
        "flat_params",
        {},
        metavar="KEY=VALUE",
        help="Aggregator parameter, e.g. exact=true for RRA (repeatable).",
    )
    relevant_genes: str | None = opt(
        "relevant_genes",
        "path",
        None,
        help="Known relevant genes: they supervise the list weights.",
    )
    universe: str | None = opt(
        "universe",
        "str",
        None,
        metavar="N|FILE",
        help="Gene universe: its size N, or a file of its genes (default: the lists' genes).",
    )
    gene_column: str | None = opt(
        "gene_column", "str", None, help="Gene column of tables (default: symbol/id, else first)."
    )
    score_column: str | None = opt(
        "score_column", "str", None, help="Score column of tables whose LIST names none."
    )
    direction: str | None = opt(
        "direction",
        "choice",
        None,
        choices=DIRECTIONS,
        help="Direction of --score-column: asc (smallest first), desc, abs (largest |value|).",
    )
    mageck_side: str | None = opt(
        "mageck_side",
        "choice",
        None,
        choices=MAGECK_SIDES,
        help="MAGeCK gene summaries: negative (depletion) or positive selection ranks "
        "(default: neg).",
    )
    top: int = opt(
        "top", "int", 10, low=0, high=TOP_MAX, help="Genes shown in the terminal summary."
    )

    @classmethod
    def from_mapping(
        cls, values: Mapping[str, Any], *, where: str | None = None
    ) -> AggregateListsConfig:
        """Parse and check ``{name: value}`` (text, YAML values or Python objects)."""
        known = {o.name for o in options_of(cls)}
        for name in values:
            if name not in known:
                keys = [k.replace("_", "-") for k in sorted(known)]
                close = difflib.get_close_matches(name.replace("_", "-"), keys, n=1)
                hint = f"did you mean {close[0]!r}?" if close else "see `kofs aggregate --help`"
                raise ParameterError(
                    f"unknown aggregate setting {name.replace('_', '-')!r} ({hint})", path=where
                )
        return build(cls, values, where=where)


def _absolute(path: str | None, base: Path) -> str | None:
    if path is None or path == "-" or os.path.isabs(path):
        return path
    return str((base / path).resolve())


def _universe_abs(universe: str | None, base: Path) -> str | None:
    if universe is None or (universe.strip().isdigit() and not (base / universe).exists()):
        return universe
    return _absolute(universe, base)


def run_aggregate_config(
    lists: Sequence[ListSpec | str], config: AggregateListsConfig
) -> ListAggregation:
    """:func:`aggregate_lists` with the settings of ``config`` (what ``kofs aggregate`` runs)."""
    return aggregate_lists(
        list(lists),
        aggregate=config.aggregate,
        aggregate_param=config.aggregate_param,
        universe=config.universe,
        relevant_genes=config.relevant_genes,
        gene_column=config.gene_column,
        column=config.score_column,
        direction=config.direction,
        mageck_side=config.mageck_side,
    )


def resolved_aggregate_config(
    lists: Sequence[ListSpec], config: AggregateListsConfig, *, base: str | os.PathLike = "."
) -> dict[str, Any]:
    """The plain mapping written as ``config.resolved.yaml`` (paths absolute, ``command:
    aggregate``): ``kofs run`` repeats the run with it."""
    root = Path(base)
    entries = []
    for spec in lists:
        entry: dict[str, Any] = {"file": _absolute(spec.path, root)}
        entry.update(
            {k: getattr(spec, k) for k in ("name", "column", "direction") if getattr(spec, k)}
        )
        entries.append(entry)
    values = as_mapping(config)
    values["output"] = _absolute(config.output, root)
    values["relevant_genes"] = _absolute(config.relevant_genes, root)
    values["universe"] = _universe_abs(config.universe, root)
    return {"command": "aggregate", "lists": entries, **values}


def read_aggregate_config(
    path: str | os.PathLike, *, overrides: Mapping[str, Any] | None = None
) -> tuple[list[ListSpec], AggregateListsConfig]:
    """The lists and settings of a YAML config with ``command: aggregate``.

    ``lists`` is a list of ``[NAME=]FILE[:COLUMN[:DIRECTION]]`` texts or mappings with
    ``file``, ``name``, ``column``, ``direction``; relative paths are relative to the config's
    folder. ``overrides`` (e.g. options typed on the command line) replace keys of the file.

    Raises
    ------
    InputError, ParameterError
        Unreadable YAML, unknown keys (did-you-mean), a bad value, missing lists.
    """
    from kofs.pipeline.yaml_files import load_config

    where = os.fspath(path)
    values = load_config(path)
    if values.pop("command", None) != "aggregate":
        raise ParameterError("not an aggregate config (needs 'command: aggregate')", path=where)
    base = Path(path).resolve().parent
    items = values.pop("lists", None)
    if isinstance(items, str):  # one list spec: a list of one, never read letter by letter
        items = [items]
    if not isinstance(items, list) or not items:
        raise ParameterError("config key 'lists' must be a list of files", path=where)
    specs = [_config_spec(item, base, where) for item in items]
    config = AggregateListsConfig.from_mapping(values, where=where)
    config = replace(
        config,
        output=_absolute(config.output, base),
        relevant_genes=_absolute(config.relevant_genes, base),
        universe=_universe_abs(config.universe, base),
    )
    if overrides:
        merged = {**as_mapping(config), **dict(overrides)}
        config = AggregateListsConfig.from_mapping(merged)
    return specs, config


def _config_spec(item: Any, base: Path, where: str) -> ListSpec:
    if isinstance(item, str):
        spec = parse_list_spec(item, base=base)
        return replace(spec, path=_absolute(spec.path, Path.cwd()))
    if isinstance(item, Mapping) and isinstance(item.get("file"), str):
        extra = set(item) - {"file", "name", "column", "direction"}
        if extra:
            raise ParameterError(
                f"config list entry has unknown keys {sorted(extra)}; use file, name, column, "
                "direction",
                path=where,
            )
        for key in ("name", "column"):
            if item.get(key) is not None and not isinstance(item[key], (str, int, float)):
                raise ParameterError(
                    f"config list entry {key} must be a single name, got {short_repr(item[key])}",
                    path=where,
                )
        direction = item.get("direction")
        if direction is not None and direction not in DIRECTIONS:
            raise ParameterError(
                f"config list entry direction must be asc, desc or abs, got {direction!r}",
                path=where,
            )
        name, column = item.get("name"), item.get("column")
        return ListSpec(
            _absolute(os.path.expanduser(item["file"]), base),
            None if name is None else str(name),
            None if column is None else str(column),
            direction,
        )
    raise ParameterError(
        f"config list entry {item!r}: expected FILE[:COLUMN[:DIRECTION]] or a mapping with 'file'",
        path=where,
    )
