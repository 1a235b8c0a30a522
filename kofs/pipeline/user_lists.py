"""Fuse ranked gene lists that users bring (``kofs aggregate``, :func:`aggregate_lists`).

The lists come from files (:mod:`kofs.io.gene_lists`), DataFrames, Series or plain Python
lists; they may differ in length and in gene universe. Their ids are harmonised once
(:mod:`kofs.pipeline.harmonise`). A universe (a number N, or a gene list) sets the N of RRA and Stuart and of the
random-completion model; list genes outside a universe list are dropped and counted. Each
list's coverage (genes read, kept, dropped, shared with the other lists) is reported.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from kofs.errors import InputError, ParameterError, checked_keywords
from kofs.io._table import check_column_names
from kofs.io.gene_lists import (
    ABSENT_BELOW,
    ABSENT_MISSING,
    DIRECTIONS,
    MAGECK_SIDES,
    SHORT_LISTS,
    ListSpec,
    RankedGeneList,
    list_from_frame,
    list_from_ids,
    list_from_scores,
    named_lists,
    read_ranked_lists,
)
from kofs.io.ids import CoverageReport
from kofs.pipeline.harmonise import harmonise, relevant_in_lists
from kofs.pipeline.result import ranking_frame
from kofs.registry import AGGREGATORS, DEFAULT_AGGREGATOR
from kofs.types import AggregateRanking, Ranking, count_argument

log = logging.getLogger(__name__)

__all__ = ["ListAggregation", "aggregate_lists", "read_universe"]

_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
#: largest universe size (more genes than any genome has, far below integer overflow)
UNIVERSE_MAX = 10**9


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

    def to_frame(self, *, lists: bool = True) -> Any:
        """The fused ranking as ``kofs aggregate`` writes ranking.tsv (a pandas DataFrame
        indexed by gene id, best first): ``rank``, ``score``, the method's per-gene statistics,
        then ``rank:<list>`` and ``score:<list>`` per list (``lists``)."""
        return ranking_frame(self.final, self.lists, lists_too=lists)

    def weights_frame(self) -> Any:
        """The list weights as weights.tsv holds them, heaviest first (the file keeps the
        lists' order; :meth:`kofs.types.AggregateRanking.weights_frame`)."""
        return self.final.weights_frame()

    def top(self, n: int = 20) -> Any:
        """The ``n`` best genes (a whole number >= 0) as a pandas DataFrame indexed by gene
        id: ``rank``, ``score`` and the method's per-gene statistics (``q_value``, ...)."""
        n = count_argument(n, "top(n): n")
        return self.final.to_frame(lists=False).iloc[:n]

    def __repr__(self) -> str:  # not the dataclass's: every list's genes, megabytes of text
        return (
            f"<ListAggregation: {len(self.lists)} list{'s' * (len(self.lists) != 1)} fused by "
            f"{self.final.method} over {self.universe:,} genes; top: "
            f"{', '.join(self.final.top(5))}>"
        )

    def _repr_html_(self) -> str:
        import html

        return f"<p>{html.escape(repr(self))}</p>" + self.top(10).to_html()


def _is_path(obj: Any) -> bool:
    return isinstance(obj, (str, os.PathLike, ListSpec))


def _flat(s: RankedGeneList) -> bool:
    """Whether a scored list ranks nothing: two genes or more, every score the same number (a
    gene set's genes are tied by design, and a missing score ranks its gene below the rest)."""
    if s.kind == "GMT gene set" or len(s.scores) < 2:
        return False
    scores = np.asarray(s.scores, dtype=np.float64)
    return bool(np.isfinite(scores).all() and (scores == scores[0]).all())


def _check_flat(sources: Sequence[RankedGeneList]) -> None:
    """A list whose scores are all equal carries no ranking information: refused when no other
    list does, else a warning naming it (fused, it ties all its genes)."""
    flat = [s for s in sources if _flat(s)]
    for s in flat:
        # (a z-score table's scores are its p-values: all z 0 read as p-values of 1)
        read = f" ({s.ranked_by})" if s.from_z else ""
        what = (
            f"list {s.name!r}: all its {len(s.scores)} scores{read} are "
            f"{float(s.scores[0]):g}, so it carries no ranking information"
        )
        if len(flat) == len(sources):
            raise InputError(
                f"{what}; there is nothing to fuse (check the score column)"
                + ("" if len(sources) == 1 else ": no list ranks its genes"),
                path=s.path,
            )
        log.warning("%s: %s (its genes are all tied in the fusion)", s.path, what)


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
        return lists if name is None else named_lists(lists, name)
    label = name or f"list{index + 1}"
    if isinstance(obj, pd.DataFrame):
        if isinstance(obj.index, pd.MultiIndex) or isinstance(obj.columns, pd.MultiIndex):
            raise ParameterError(
                f"list {label}: a DataFrame with a MultiIndex (rows or columns); give one level "
                "(e.g. df.reset_index()) with a column of gene ids"
            )
        return [list_from_frame(obj, label, **reading)]
    if isinstance(obj, pd.Series):
        col = str(obj.name) if obj.name is not None else "score"
        if obj.name is not None and name is None:
            label = str(obj.name)
        if isinstance(obj.index, pd.MultiIndex):  # was an IndexError from pandas
            raise ParameterError(
                f"list {label}: a Series with a MultiIndex; give one level of gene ids as its "
                "index (e.g. s.droplevel(1))"
            )
        frame = obj.to_frame(name=col)
        if isinstance(frame.index, pd.RangeIndex):
            raise ParameterError(f"list {label}: a Series needs the gene ids as its index")
        return [list_from_frame(frame, label, **{**reading, "column": col})]
    if isinstance(obj, (set, frozenset)):
        # a set's order is its hash order, which changes from one Python process to the next
        raise ParameterError(
            f"list {label}: a set has no order; give the genes best first as a list (or "
            "sorted(...) for an unranked set: then its order is read as the ranking)"
        )
    if isinstance(obj, Iterable) and not isinstance(obj, (bytes, Mapping)):
        items = list(obj)
        odd = next((x for x in items if not isinstance(x, (str, int, np.integer))), None)
        if odd is not None:
            raise ParameterError(
                f"list {label}: gene ids are names (or integer ids), got an item {odd!r:.40} "
                f"of type {type(odd).__name__}"
            )
        return [list_from_ids(items, label)]
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


def _warn_ranks_only(aggregate: str, reads_p_values: bool, rankings: Sequence[Ranking]) -> None:
    """``--ranks-only`` where no p-value would have been read: one warning saying why."""
    from kofs.options import warn_no_effect

    if not reads_p_values:
        warn_no_effect(["--ranks-only"], f"--aggregate {aggregate} reads every list by its ranks")
    elif not any("null" in r.info for r in rankings):
        warn_no_effect(["--ranks-only"], "no list is ranked by raw p-values")


def universe_is_size(text: str, folder: str | os.PathLike | None = None) -> bool:
    """Whether a ``--universe`` text is a number of genes (a number that names no file, in
    ``folder`` when given) rather than a file; a number out of range is still a size, which
    :func:`read_universe` refuses as one."""
    path = text if folder is None else os.path.join(folder, text)
    return bool(_NUMBER.match(text.strip())) and not os.path.exists(path)


def read_universe(universe: Any) -> int | list[str] | None:
    """``None``, a number of genes, or gene ids (a file with one id per line / a column, or an
    iterable). A string of digits that is not a file is a number."""
    if universe is None:
        return None
    if isinstance(universe, (float, np.floating)):  # 20000.0 (a count computed in floats)
        if not float(universe).is_integer():
            raise ParameterError(
                f"universe {universe!r}: a universe size must be a whole number of genes in "
                f"[1, {UNIVERSE_MAX}]"
            )
        universe = int(universe)
    if isinstance(universe, (int, np.integer)) and not isinstance(universe, bool):
        if not 1 <= universe <= UNIVERSE_MAX:
            raise ParameterError(
                f"--universe {universe}: a universe size must be a number of genes in "
                f"[1, {UNIVERSE_MAX}]"
            )
        return int(universe)
    if isinstance(universe, (str, os.PathLike)):
        text = os.fspath(universe)
        if universe_is_size(text):
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


@checked_keywords
def aggregate_lists(
    lists: Sequence[Any] | Mapping[str, Any],
    *,
    aggregate: str = DEFAULT_AGGREGATOR,
    aggregate_param: Mapping[str, Any] | None = None,
    universe: int | str | os.PathLike | Iterable[str] | None = None,
    relevant_genes: str | os.PathLike | Iterable[str] | None = None,
    knowledge: Iterable[str] | None = None,
    top_k: Iterable[str] | None = None,
    tested: Iterable[str] | None = None,
    signal_p: float | None = None,
    ranks_only: bool = False,
    gene_column: str | None = None,
    score_column: str | None = None,
    direction: str | None = None,
    mageck_side: str | None = None,
) -> ListAggregation:
    """Read, harmonise and fuse ranked gene lists.

    Parameters
    ----------
    lists : sequence or mapping (name -> list)
        Each a file spec ``[NAME=]FILE[:COLUMN[:asc|desc|abs]]`` or path (a GMT file gives one
        list per gene set, named ``NAME.SET`` under a mapping's key or a NAME), a :class:`pandas.DataFrame` (a gene column or index plus score
        columns; the usual tools' tables are recognised), a :class:`pandas.Series` (index =
        genes, values = scores; give ``direction``), a sequence of gene ids in rank order, a
        :class:`~kofs.types.Ranking` or a :class:`~kofs.io.gene_lists.RankedGeneList`.
    aggregate : str, default "posterior"
        A registered aggregator (``kofs methods``): ``posterior`` (the default everywhere:
        per-gene posterior, local fdr and q-value), ``rra``, ``stuart``, ``em``, ``borda``, ...
    aggregate_param : mapping, optional
        Aggregator parameters (e.g. ``{"exact": True}`` for RRA). ``aggregate`` and
        ``aggregate_param`` are named as ``kofs.rank``'s and the ``aggregate`` and
        ``aggregate-param`` keys of both commands.
    universe : int, path or iterable of str, optional
        Gene universe: its size N, or its genes (list genes outside it are dropped). Default:
        the distinct genes of the lists (RobustRankAggreg's default).
    relevant_genes : path or iterable of str, optional
        Known relevant genes (a prior covariate of ``posterior``; supervised EM for ``em``).
    knowledge : iterable of str, optional
        Names of lists that rank genes by what is known (a GO-, pathway- or literature-based
        prioritisation), not by data: ``posterior`` uses them as a prior whose strength the
        other lists decide, and a gene such a list lacks is unknown to it, not below it
        (:func:`kofs.aggregate.aggregate`'s ``knowledge``).
    top_k : iterable of str, optional
        Names of scored lists that are the top of a longer ranking (a table exported with only
        its best or significant genes, a tool's top 100 with scores): ``posterior`` observes a
        gene such a list lacks as below it (for a table of p-values: a p-value above the
        largest it lists). By default a gene a table lacks was not tested (missing: no
        information), and one a list of ids (a top-k list) or a gene set lacks is below it; a
        table cut to its top read as a table of tested genes ranks those genes among themselves
        only, so the other lists' agreement with its top reads as a class (docs/lists.md, "What
        a gene a list lacks means"). A table of p-values that shows its cut (p-values that
        stop at 0.5 or below where a test's every gene reaches ~1:
        :func:`cut_p_value_table`) is read so without being named, with a warning. A table
        with effect directions read so keeps them: beside other such tables, the signed model
        reads a gene below its cut as a z-score within the cut's (a censored observation,
        :mod:`kofs.aggregate.signed`).
    tested : iterable of str, optional
        Names of tables of p-values that list every gene their tool tested although their
        p-values look cut (a panel of strongly changed genes): a gene they lack is missing.
    signal_p : float, optional
        The p-value of an outside test that the lists have anything to find (e.g. a global
        test of the experiment they come from); its no-signal probability joins the fusion's
        own tests (``posterior`` only; :func:`kofs.aggregate.aggregate`'s ``signal_test``).
    ranks_only : bool
        Read lists ranked by raw p-values (DESeq2's ``pvalue``, limma's ``P.Value``, edgeR's
        ``PValue``, a column named like a p-value) by their ranks only. By default
        ``posterior`` reads their p-values, whose null is known: how many genes are beyond
        chance is then learned from each such list too (docs/aggregation.md, "Labels: the F
        test's null").
    gene_column, score_column, direction, mageck_side
        Reading options for tables whose spec does not say (see
        :func:`kofs.io.gene_lists.read_ranked_lists`, whose ``column`` is ``score_column``;
        ``mageck_side`` None means ``"neg"``).
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
    if not isinstance(ranks_only, (bool, np.bool_)):
        raise ParameterError(f"ranks_only must be True or False, got {ranks_only!r:.40}")
    check_column_names(gene_column=gene_column, score_column=score_column)
    if direction is not None and direction not in DIRECTIONS:
        raise ParameterError(f"direction must be one of {', '.join(DIRECTIONS)}, got {direction!r}")
    if mageck_side is not None and mageck_side not in MAGECK_SIDES:  # was a no-effect warning
        raise ParameterError(f"mageck_side must be neg or pos, got {mageck_side!r:.40}")
    if signal_p is not None and (
        isinstance(signal_p, (bool, np.bool_))
        or not isinstance(signal_p, (int, float, np.integer, np.floating))
        or not 0 <= signal_p <= 1
    ):  # True was p = 1; a string failed in a message's format (a ValueError)
        raise ParameterError(f"signal_p must be a p-value in [0, 1], got {signal_p!r:.40}")
    spec = AGGREGATORS.get(aggregate)
    if signal_p is not None and not spec.context:
        raise ParameterError(
            f"--signal-p {signal_p:g}: --aggregate {aggregate} does not use an outside test's "
            "p-value; --aggregate posterior does"
        )
    reading = {
        "gene_column": gene_column,
        "column": score_column,
        "direction": direction,
        "mageck_side": mageck_side,
    }
    pandas = sys.modules.get("pandas")  # a DataFrame exists only once pandas was imported
    one_table = pandas is not None and isinstance(lists, (pandas.DataFrame, pandas.Series))
    if _is_path(lists) or one_table:  # one file (a GMT file holds a list per gene set)
        items = [(None, lists)]
    elif isinstance(lists, Mapping):
        items = list(lists.items())
    elif isinstance(lists, Iterable) and not isinstance(lists, bytes):
        items = [(None, x) for x in lists]
    else:
        raise ParameterError(
            "give the ranked lists as a sequence, or a mapping of name to list, not a "
            f"{type(lists).__name__}"
        )
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
                "with NAME=FILE (a GMT file's sets are then named NAME.SET)"
            )
        if s.name == "final":  # ranking.tsv's fused columns are read back under this name
            raise ParameterError(
                f"a list is named 'final' ({s.path}), the name of the fused ranking; name it "
                "otherwise with NAME=FILE"
            )
        seen[s.name] = s.path
    _check_flat(sources)
    t_read = time.perf_counter()
    rankings, coverage, N, universe_ids = harmonise(sources, read_universe(universe))
    if (
        universe is None
        and len(sources) > 1
        and all(s.kind in SHORT_LISTS for s in sources)
        # the same genes once harmonised (ids differing only in case): full rankings
        and len({frozenset(r.genes) for r in rankings}) > 1
    ):
        log.warning(
            "every list is a top-k list or gene set and no universe was given: the universe is "
            "the genes of their union, in which the lists look more complementary than they "
            "are; give --universe (the number of genes measured, or their list)"
        )
    reads_partial = bool(spec.partial_lists and spec.context)
    rankings, cut = _top_k_lists(rankings, top_k, tested, knowledge, detect=reads_partial)
    if (top_k or tested) and not reads_partial:
        lacking = (
            "gives every gene a list lacks the normalised rank 1"
            if spec.partial_lists
            else "places every gene a list lacks in the list's bottom block"
        )
        log.warning(
            "--%s is ignored by --aggregate %s: it %s (posterior alone tells a gene a table "
            "did not test from one below its top)",
            "top-k" if top_k else "tested",
            aggregate,
            lacking,
        )
    for warning in cut:
        log.warning("%s", warning)
    if reads_partial:  # the methods that tell missing from below
        named_tested = {str(k) for k in tested or ()}  # (checked above)
        for warning in _cut_tables([r for r in rankings if r.name not in named_tested]):
            log.warning("%s", warning)
    if ranks_only:
        _warn_ranks_only(aggregate, spec.context, rankings)
        rankings = [
            replace(r, info={k: v for k, v in r.info.items() if k not in ("null", "effect_signs")})
            for r in rankings
        ]
    relevant = None
    if relevant_genes is not None:
        relevant = relevant_in_lists(relevant_genes, rankings, universe_ids)
    final = fuse(
        rankings,
        aggregate,
        relevant_genes=relevant,
        knowledge=knowledge,
        params=aggregate_param,
        universe=N if universe_ids is None else universe_ids,
        signal_test=None
        if signal_p is None
        else {
            "name": "given (--signal-p)",
            "p_value": signal_p,
            "summary": "The given test finds nothing for the lists to find",
        },
    )
    t_end = time.perf_counter()
    settings = {
        "aggregate": aggregate,
        "params": dict(aggregate_param or {}),
        "universe": N,
        "universe_genes": universe_ids is not None,
        "ranks_only": bool(ranks_only),
        "knowledge": [str(k) for k in knowledge or ()],
        "top_k": [str(k) for k in top_k or ()],
        "tested": [str(k) for k in tested or ()],
        "read_as_cut": [r.name for r in rankings if r.params.get("cut_from") == "p-values"],
        "p_value_lists": [r.name for r in rankings if "null" in r.info],
        "signed_lists": [r.name for r in rankings if "effect_signs" in r.info],
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


def _names(option: str, value: Iterable[str] | None, names: list[str]) -> set[str]:
    """The list names of a ``top_k`` / ``tested`` argument, each checked to name a list."""
    if value is None:
        return set()
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise ParameterError(f"{option}: give the names of the lists as a list, got {value!r:.60}")
    chosen = {str(k) for k in value}
    unknown = sorted(chosen - set(names))
    if unknown:
        raise ParameterError(
            f"{option.replace('_', '-')}: no list is named {unknown[0]!r} (the lists: "
            f"{', '.join(names)})"
        )
    return chosen


def _top_k_lists(
    rankings: list[Ranking],
    top_k: Iterable[str] | None,
    tested: Iterable[str] | None,
    knowledge: Iterable[str] | None,
    *,
    detect: bool,
) -> tuple[list[Ranking], list[str]]:
    """The lists with those named in ``top_k`` read as the top of a longer ranking (a gene
    they lack lies below them), checked: each name one list's, none a knowledge list, none
    also ``tested``. With ``detect``, so are the tables of p-values that show their cut
    (:func:`cut_p_value_table`) and are not named ``tested``; returned with a warning per
    such table. A table with effect directions read so keeps them (the signed model reads a
    gene below its cut as censored: :mod:`kofs.aggregate.signed`)."""
    names = [r.name for r in rankings]
    chosen = _names("top_k", top_k, names)
    kept = _names("tested", tested, names)
    known = {str(k) for k in knowledge or ()}
    for other, what in ((known, "knowledge"), (kept, "tested")):
        both = sorted(chosen & other)
        if both:
            why = (
                "a gene a knowledge list lacks is unknown to it, so it cannot also lie below it"
                if what == "knowledge"
                else "a gene a table of tested genes lacks was not tested, so it cannot also lie "
                "below it"
            )
            raise ParameterError(f"{both[0]!r} is named as {what} and as a top-k list: {why}")
    for name in sorted(kept):
        r = rankings[names.index(name)]
        if "null" not in r.info or r.params.get("absent") != ABSENT_MISSING:
            raise ParameterError(
                f"tested: {name!r} is not a table of p-values (--tested names tables of p-values "
                "whose p-values look cut but that list every gene their tool tested)"
            )
    warnings = []
    out = []
    for r in rankings:
        cut_at = None
        if detect and r.name not in chosen | kept | known:
            cut_at = cut_p_value_table(r)
        if r.name in chosen or cut_at is not None:
            params = {**r.params, "absent": ABSENT_BELOW}
            if cut_at is not None:
                params["cut_from"] = "p-values"
                warnings.append(
                    f"{r.name!r} lists {len(r.genes)} genes whose p-values stop at {cut_at:.2g}: "
                    "a table cut to its significant genes (the p-values of a test's every gene "
                    "reach ~1), so a gene it lacks is read as below its cut (a p-value above "
                    f"{cut_at:.2g}). If it lists every gene its tool tested, give --tested "
                    f"{r.name} (Python: tested=)"
                )
            r = replace(r, params=params)
        out.append(r)
    return out, warnings


#: A table of at least CUT_P_GENES p-values that all stop at CUT_P or below is cut, when
#: n tested null genes would all be that small with probability at most CUT_P_LEVEL.
CUT_P, CUT_P_GENES, CUT_P_LEVEL = 0.5, 5, 1e-6


def cut_p_value_table(r: Ranking) -> float | None:
    """The largest p-value of a table of p-values (read as tested genes) that shows it was cut
    to its significant genes, else None. The p-values of a test's every gene reach ~1; ``n``
    null genes all stay at or below ``p_max`` with probability ``p_max^n``: a table of
    :data:`CUT_P_GENES` genes or more whose ``p_max`` is at most :data:`CUT_P` and whose
    ``p_max^n`` is at most :data:`CUT_P_LEVEL` (20 genes at 0.5, 5 at 0.05, 3 at 0.01)."""
    if "null" not in r.info or r.higher_is_better or r.params.get("absent") != ABSENT_MISSING:
        return None
    p = np.asarray(r.scores, dtype=np.float64)
    p = p[np.isfinite(p)]
    if p.size < CUT_P_GENES:
        return None
    top = float(p.max())
    if top > CUT_P or p.size * np.log(max(top, 1e-300)) > np.log(CUT_P_LEVEL):
        return None
    return top


#: A table listing at most this share of the universe is checked for being a ranking's top.
CUT_SHARE = 0.5
#: ... and its genes' mean position (0 = top, 1 = bottom) in a list of nearly every gene at
#: most this: the top of a longer ranking, not a set of tested genes (those spread around 0.5).
CUT_POSITION = 0.1


def _cut_tables(rankings: list[Ranking]) -> list[str]:
    """Warnings for the scored tables read as tables of tested genes (a gene they lack is
    missing) whose genes look like the top of a longer ranking: a table listing at most
    :data:`CUT_SHARE` of the universe whose genes sit, on average, in the top
    :data:`CUT_POSITION` of a list of at least 90 % of the genes. Advice only: the reading
    is the user's to give (``top_k``)."""
    if not rankings:
        return []
    M = max(len(r.genes) for r in rankings)
    full = [r for r in rankings if len(r.genes) >= 0.9 * M]
    positions: dict[str, dict[str, int]] = {}
    out = []
    for r in rankings:
        if r.params.get("absent") != ABSENT_MISSING or len(r.genes) > CUT_SHARE * M:
            continue
        for f in full:
            if f is r:
                continue
            where = positions.get(f.name)
            if where is None:  # each full list's positions once, for every table checked
                where = positions[f.name] = {
                    g: k for k, g in enumerate(np.asarray(f.genes)[f.order()].tolist())
                }
            at = np.array([where[g] for g in r.genes if g in where], dtype=np.float64)
            if at.size < 10:
                continue
            mean = float(at.mean()) / max(len(f.genes) - 1, 1)
            if mean <= CUT_POSITION:
                out.append(
                    f"{r.name!r} lists {len(r.genes)} genes, and they sit at the top of "
                    f"{f.name!r} (their mean position {mean:.2f}, 0 = top): it looks like the "
                    "top of a longer ranking (a table exported with its best genes only), which "
                    "is read as a table of the genes its tool tested (a gene it lacks: no "
                    f"information). If it is cut, give --top-k {r.name} (Python: top_k=) so that "
                    "a gene it lacks lies below it"
                )
                break
    return out
