"""The settings of ``kofs aggregate`` (:class:`AggregateListsConfig`, declared with ``opt()``:
the CLI options, YAML keys and ``config.resolved.yaml`` are generated from it) and the YAML
configs with ``command: aggregate``."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from kofs.aggregate import AGGREGATORS
from kofs.errors import ParameterError, did_you_mean, short_repr
from kofs.io._fsops import absolute_path
from kofs.io.gene_lists import DIRECTIONS, MAGECK_SIDES, ListSpec, parse_list_spec
from kofs.options import TOP_MAX, as_mapping, build, opt, options_of
from kofs.pipeline.user_lists import ListAggregation, aggregate_lists, universe_is_size
from kofs.registry import DEFAULT_AGGREGATOR, typed_params


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
        stdin=True,
        help="Known relevant genes: they supervise the list weights.",
    )
    knowledge: tuple[str, ...] | None = opt(
        "knowledge",
        "names",
        None,
        metavar="NAME,...",
        help="Lists that rank genes by what is known (e.g. a GO or pathway prioritisation), "
        "not by data: posterior uses them as a prior whose strength the other lists decide.",
    )
    top_k: tuple[str, ...] | None = opt(
        "top_k",
        "names",
        None,
        metavar="NAME,...",
        help="Scored lists that are the top of a longer ranking (a table exported with only its "
        "best or significant genes): posterior observes a gene they lack as below them, not as "
        "untested. A table of p-values that stop at 0.5 or below is read so unnamed.",
    )
    tested: tuple[str, ...] | None = opt(
        "tested",
        "names",
        None,
        metavar="NAME,...",
        help="Tables of p-values that list every gene their tool tested although their p-values "
        "look cut (all small): a gene they lack is untested, not below them.",
    )
    signal_p: float | None = opt(
        "signal_p",
        "float",
        None,
        metavar="P",
        low=0.0,
        high=1.0,
        help="p-value of an outside test that the lists have anything to find (posterior).",
    )
    ranks_only: bool = opt(
        "ranks_only",
        "bool",
        False,
        help="Read lists ranked by raw p-values by their ranks only (default: posterior reads "
        "the p-values, calibrated by their null).",
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
    no_report: bool = opt(
        "no_report",
        "bool",
        False,
        help="Do not write OUTDIR/report.html (the fusion's self-contained HTML report).",
    )

    @classmethod
    def from_mapping(
        cls, values: Mapping[str, Any], *, where: str | None = None
    ) -> AggregateListsConfig:
        """Parse and check ``{name: value}`` (text, YAML values or Python objects); ``where``
        (a config file) prefixes the messages."""
        if not isinstance(values, Mapping):  # was an AttributeError, or a string's letters
            raise ParameterError(
                f"aggregate settings are a mapping of option to value, not a "
                f"{type(values).__name__}",
                path=where,
            )
        known = {o.name for o in options_of(cls)}
        for name in values:
            if name not in known:
                given = str(name).replace("_", "-")
                keys = [k.replace("_", "-") for k in sorted(known)]
                hint = did_you_mean(given, keys, "see `kofs aggregate --help`")
                raise ParameterError(f"unknown aggregate setting {given!r} ({hint})", path=where)
        return build(cls, values, where=where)


def _absolute(path: str | None, base: Path) -> str | None:
    if path is None or path == "-" or os.path.isabs(path):
        return path
    return absolute_path(path, base)


def _universe_abs(universe: str | None, base: Path) -> str | None:
    if universe is None or universe_is_size(universe, base):  # -3 or 1e3 is no file name
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
        knowledge=config.knowledge,
        top_k=config.top_k,
        tested=config.tested,
        signal_p=config.signal_p,
        ranks_only=config.ranks_only,
        gene_column=config.gene_column,
        score_column=config.score_column,
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
    values["knowledge"] = list(config.knowledge) if config.knowledge else None
    values["top_k"] = list(config.top_k) if config.top_k else None
    values["tested"] = list(config.tested) if config.tested else None
    if config.aggregate in AGGREGATORS:  # the values as the run coerced them ("1e3" -> 1000)
        spec = AGGREGATORS.get(config.aggregate)
        values["aggregate_param"] = typed_params(spec.params, config.aggregate_param)
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
    if isinstance(items, list) and not items:
        raise ParameterError("config key 'lists' is empty: give at least one list file", path=where)
    if not isinstance(items, list):
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
        from kofs.pipeline.config import with_overrides

        declared = {o.name: o for o in options_of(AggregateListsConfig)}
        merged = with_overrides(as_mapping(config), dict(overrides), options=declared)
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
