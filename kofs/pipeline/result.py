"""The result of a run (:class:`RunResult`: the fused ranking, the lists, the evidence, the
symbols) and the gene symbols it shows."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kofs.io.ids import CoverageReport
from kofs.sources import KnowledgeSources
from kofs.types import AggregateRanking, Expression, Ranking, SampleCategories, count_argument


def _html_escape(text: str) -> str:
    import html

    return html.escape(text)


@dataclass(frozen=True)
class RunResult:
    """Everything a run produced."""

    expression: Expression
    final: AggregateRanking
    lists: tuple[Ranking, ...]
    coverage: tuple[CoverageReport, ...]
    timings: Mapping[str, float]
    settings: Mapping[str, Any]
    #: gene id -> evidence text (a :class:`kofs.knowledge.evidence.GeneEvidence` with the terms and
    #: neighbours behind it), None without knowledge sources
    evidence: Mapping[str, str] | None = None
    sources: KnowledgeSources | None = None
    config: Any = None  # the kofs.pipeline.config.RunConfig of a run started from one
    #: gene id -> symbol, from the matrix or the knowledge sources (None: ids are the symbols)
    symbols: Mapping[str, str] | None = None
    #: the sample labels the run used (aligned to ``expression.samples``)
    labels: SampleCategories | None = None
    #: per-group marker tables (:class:`kofs.rankers.markers.MarkerTables`), with labels
    markers: Any = None
    #: the warnings logged while the run ran (:func:`kofs.pipeline.run.run`), for the report
    warnings: tuple[str, ...] = ()

    def to_frame(self, *, lists: bool = True, evidence: bool = True) -> Any:
        """Every gene as a pandas DataFrame indexed by gene id, best first: ``symbol`` (when
        known), ``rank``, ``score``, the fusion's per-gene statistics (e.g. ``q_value``),
        ``rank:<list>`` and ``score:<list>`` (the list's native score; NaN where the list
        lacks the gene) per list (``lists``) and ``evidence`` (``evidence``, when known) --
        the table of ranking.tsv."""
        df = ranking_frame(self.final, self.lists, self.symbols, lists_too=lists)
        if evidence and self.evidence is not None:
            ev = self.evidence
            df["evidence"] = [ev.get(g, "") for g in df.index]
        return df

    def top(self, n: int = 20) -> Any:
        """The ``n`` best genes (a whole number >= 0) as a pandas DataFrame indexed by gene id: ``symbol`` (when
        known), ``rank``, ``score``, the fusion's per-gene statistics (``q_value``, ...) and,
        with sample labels, ``higher_in`` (the group of highest mean), ``versus`` and
        ``effect`` (difference of group means on log-scale data, else their ratio;
        :mod:`kofs.report.effects`), and with per-group marker tables (single cell)
        ``log2fc``: markers.tsv's ``logfoldchange`` of the gene in its ``higher_in`` group
        (scanpy's log2 fold change, as the report shows it; NaN where the table lacks it)."""
        n = count_argument(n, "top(n): n")
        df = self.final.to_frame(self.symbols, lists=False).iloc[:n].copy()
        labels = self.labels
        if labels is not None and len(set(labels.labels) - {""}) >= 2:
            from kofs.report.effects import columns, gene_effects, marker_fold_changes

            effects: list[Any] = []  # top(0): no rows, the same columns
            if len(df):
                index = self.expression.gene_index()
                effects = gene_effects(
                    columns(self.expression.values, [index[g] for g in df.index]),
                    list(labels.labels),
                    sparse=self.expression.is_sparse or self.expression.is_chunked,
                )
            df["higher_in"] = np.array([e.group if e else "" for e in effects], dtype=object)
            df["versus"] = np.array([e.versus if e else "" for e in effects], dtype=object)
            df["effect"] = np.array([e.effect if e else np.nan for e in effects], dtype=float)
            if self.markers is not None:
                lfcs = marker_fold_changes(self.markers, list(df.index), effects)
                df["log2fc"] = np.array([np.nan if v is None else v for v in lfcs], dtype=float)
        return df

    def weights_frame(self) -> Any:
        """The list weights with their intervals as a DataFrame
        (:meth:`kofs.types.AggregateRanking.weights_frame`)."""
        return self.final.weights_frame()

    def __repr__(self) -> str:
        e, f = self.expression, self.final
        names = [(self.symbols or {}).get(g, g) for g in f.top(5)]
        return (
            f"<RunResult: {e.n_samples:,} {e.unit} x {e.n_genes:,} genes, "
            f"{len(self.lists)} list{'' if len(self.lists) == 1 else 's'} fused by {f.method}; "
            f"top: {', '.join(names)}>"
        )

    def _repr_html_(self) -> str:
        return f"<p>{_html_escape(repr(self))}</p>" + self.top(10).to_html()


def source_symbols(expression: Expression, sources: Any) -> dict[str, str] | None:
    """Gene symbols of the matrix's genes from the matrix or the sources that pair ids with
    symbols: GO annotations and interactions (:func:`kofs.io.symbols.gene_symbols`)."""
    from kofs.io.symbols import gene_symbols

    go = sources.get("go") if sources is not None else None
    inter = sources.get("interactions") if sources is not None else None
    return gene_symbols(
        expression,
        go_annotations=getattr(go, "annotations", None),
        interactions=getattr(inter, "interactions", None),
    )


def ranking_frame(
    final: AggregateRanking,
    lists: Sequence[Ranking],
    symbols: Mapping[str, str] | None = None,
    *,
    lists_too: bool = True,
) -> Any:
    """The fused ranking as ranking.tsv holds it (a pandas DataFrame indexed by gene id, best
    first): :meth:`kofs.types.AggregateRanking.to_frame`, with ``score:<list>`` (the list's
    native score; NaN where the list lacks the gene) after each ``rank:<list>`` of ``lists``
    (with ``lists_too``)."""
    import pandas as pd

    df = final.to_frame(symbols, lists=lists_too)
    if not (lists_too and lists):
        return df
    by_name = {r.name: r for r in lists}
    columns = []
    for c in df.columns:
        columns.append(c)
        r = by_name.get(c[5:]) if c.startswith("rank:") else None
        if r is not None:
            scores = pd.Series(np.asarray(r.scores, dtype=np.float64), index=list(r.genes))
            df[f"score:{r.name}"] = scores.reindex(df.index).to_numpy()
            columns.append(f"score:{r.name}")
    return df[columns]
