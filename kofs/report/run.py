"""``report.html`` of a ranking run: one self-contained, offline page a biologist can read.

First the answer: the top genes with the group where they are higher and by how much, and what
the reader must know before reading on (in plain words, with what to do). Then the top genes
(symbol linked to NCBI Gene, direction and effect, the fusion's per-gene statistics such as
the q-value, how many lists agree, each list's rank, evidence); the evidence (GO terms and
pathways linked to AmiGO, KEGG or MSigDB, with size and supporting genes; neighbours); the
list weights in plain words (what a weight means, which supervision, why a list has no say);
the agreement between the lists; the top genes across the samples (or cells); the coverage of
the knowledge sources; the lists; the provenance from the run's manifest.

Styles and figures are inline (tiny PNGs drawn with numpy, legends in HTML beside the figure,
so they never cover it); the page loads nothing. Everything shown is computed from the top
genes and the lists, so the cost does not grow with the genome; matplotlib is not used.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from kofs._compute.ranks import rank_correlation
from kofs.errors import ParameterError, checked_keywords
from kofs.report.effects import marker_fold_changes
from kofs.report.html import (
    Raw,
    esc,
    fmt,
    gene_link,
    html_table,
    page,
    provenance_html,
    term_link,
)

log = logging.getLogger(__name__)

__all__ = ["MAX_HEATMAP_SAMPLES", "run_report_html", "run_title"]

#: Largest sample count drawn in the heatmap of the top genes (clustering is quadratic).
MAX_HEATMAP_SAMPLES = 2000
#: The q-value levels the answer counts genes at: a reader's usual cut and the level of the
#: fusion's notices (``kofs.aggregate.relevance``: "genes at q <= 0.10").
ANSWER_Q_LEVELS = (0.05, 0.10)
_INTERVAL_KEYS = ("weight_ci", "weight_intervals", "weights_ci", "weight_interval")


def _rank_text(r: float) -> str:
    if not np.isfinite(r):
        return "NA"
    return str(int(r)) if r == int(r) else f"{r:g}"


def weight_intervals(final: Any) -> list[tuple[float, float]] | None:
    """The per-list weight intervals an aggregation reports, if any.

    Looked up in ``final.diagnostics`` (when the aggregation has weight diagnostics), then in
    ``final.info``, under ``weight_ci``, ``weight_intervals``, ``weights_ci`` or
    ``weight_interval``: an (L, 2) array, a list of pairs, or a mapping list name -> pair, in
    the order of ``final.list_names``. None otherwise.
    """
    for where in (getattr(final, "diagnostics", None), getattr(final, "info", None)):
        found = dict(where or {})
        for key in _INTERVAL_KEYS:
            v = found.get(key)
            if v is None:
                continue
            if isinstance(v, Mapping):
                v = [v.get(n) for n in final.list_names]
                if any(p is None for p in v):
                    continue
            try:
                a = np.asarray(v, dtype=np.float64)
            except (TypeError, ValueError):
                continue
            if a.shape == (len(final.list_names), 2) and np.isfinite(a).all():
                return [(float(lo), float(hi)) for lo, hi in a]
    return None


def _unit(expression: Any) -> str:
    """What the matrix's rows are: ``"cells"`` or ``"samples"`` (:attr:`kofs.types.Expression.unit`)."""
    return str(getattr(expression, "unit", "samples"))


def _stem(path: str | None) -> str:
    name = os.path.basename(os.path.normpath(path or "")) or "expression"
    for ext in (".gz", ".bz2", ".xz", ".zip", ".tsv", ".csv", ".txt", ".h5ad", ".h5", ".mtx"):
        if name.lower().endswith(ext):
            name = name[: -len(ext)]
    return name or "expression"


def run_title(result: Any, labels: Any = None) -> str:
    """A title saying what was ranked: ``"ALL_gene_expr: genes that separate B and T
    (lineage)"``."""
    stem = _stem(getattr(result.expression, "source", None))
    if labels is not None and labels.n_classes >= 2:
        classes = [c for c in labels.classes if c]
        if len(classes) == 2:
            what = f"genes that separate {classes[0]} and {classes[1]} ({labels.name})"
        else:
            what = f"genes that separate the {len(classes)} groups of {labels.name}"
    else:
        what = "the most informative genes"
    return f"{stem}: {what}"


def _name(gene: str, symbols: Mapping[str, str] | None) -> str:
    return (symbols or {}).get(gene) or gene


def _effects(result: Any, labels: Any, order: np.ndarray) -> list[Any]:
    """The :class:`~kofs.report.effects.GeneEffect` of the genes at ``order`` (None each
    without labels)."""
    if labels is None or len(order) == 0:
        return [None] * len(order)
    from kofs.report.effects import columns, gene_effects

    expr = result.expression
    X = columns(expr.values, order)
    return gene_effects(X, list(labels.labels), sparse=expr.is_sparse or expr.is_chunked)


def _effect_size(eff: Any, lfc: float | None) -> str:
    """The effect as shown: markers.tsv's log2 fold change where it has the gene, else the
    difference of mean log values (``log``) or the ratio of means (``×``)."""
    if lfc is not None and np.isfinite(lfc):
        return f"log2FC {lfc:+.2f}"
    return f"{eff.effect:+.2f} log" if eff.log_scale else f"×{eff.effect:.3g}"


def _short_evidence(evidence: Any, gene: str) -> Raw:
    """The first term of each term source and the neighbour count, linked."""
    parts = evidence.parts(gene) if hasattr(evidence, "parts") else {}
    out = []
    for label, hit in parts.items():
        if isinstance(hit, tuple) and hit:
            t = hit[0]
            out.append(f"{esc(label)}: " + term_link(t.term, t.name))
        elif hit is not None and not isinstance(hit, tuple):
            out.append(f"{esc(label)}: {hit.in_top} of {hit.n_neighbours} in the top")
    if not out and evidence is not None and gene in evidence:
        return Raw(esc(str(evidence[gene])[:160]))
    return Raw("; ".join(out))


def _top_genes(result: Any, top: int, labels: Any, fusion: Any) -> tuple[str, list[Any]]:
    final = result.final
    symbols = result.symbols or None
    order = final.order()[:top]
    effects = _effects(result, labels, order)
    lfcs = marker_fold_changes(
        getattr(result, "markers", None), [result.final.genes[i] for i in order], effects
    )
    L = len(final.list_names)
    unit = _unit(result.expression)
    # (a fusion of lists with a universe larger than their genes: its top 5 % is of the
    # universe, whose genes no list holds below every list)
    m = len(final.genes)
    cut = max(1, int(np.ceil(0.05 * max(m, int(getattr(result, "universe", 0) or 0)))))
    stats = [(k, title) for k, title, _ in _shown(fusion.statistics)]
    cols = ["rank", "gene"]
    if labels is not None:
        cols.append("higher in (effect)")
    cols += [title for _, title in stats]
    cols.append("score")
    if L > 1:
        cols += ["lists agreeing", "rank in each list"]
    if result.evidence is not None:
        cols.append("evidence")
    rows = []
    for i, eff, lfc in zip(order, effects, lfcs, strict=True):
        g = final.genes[i]
        sym = (symbols or {}).get(g)
        row: list[Any] = [_rank_text(final.ranks[i]), gene_link(g, sym)]
        if labels is not None:
            if eff is None:
                row.append("")
            else:
                size = _effect_size(eff, lfc)
                det = (
                    f"; in {100 * eff.detected:.0f}% vs {100 * eff.detected_versus:.0f}% of {unit}"
                    if eff.detected is not None
                    else ""
                )
                vs = "" if eff.versus == "the rest" else f" vs {eff.versus}"
                row.append(f"{eff.group}{vs} ({size}{det})")
        row += [fmt(float(final.statistics[k][i]), 2) for k, _ in stats]
        row.append(fmt(float(final.scores[i])))
        if L > 1:
            lr = final.list_ranks[i]
            row.append(f"{int(np.sum(lr <= cut))} of {L}")
            row.append(
                Raw(
                    "<span class='small'>"
                    + " · ".join(
                        f"{esc(n)} {_rank_text(r)}"
                        for n, r in zip(final.list_names, lr, strict=True)
                    )
                    + "</span>"
                )
            )
        if result.evidence is not None:
            row.append(_short_evidence(result.evidence, g))
        rows.append(row)
    notes = []
    if labels is not None:
        log_scale = next((e.log_scale for e in effects if e is not None), True)
        notes.append(
            "'higher in' is the group of highest mean expression and its difference to the "
            + ("other group" if labels.n_classes == 2 else "rest")
            + (
                " (difference of means: a log fold change on log-scale data)"
                if log_scale
                else " (ratio of means: the fold change)"
            )
        )
        if any(v is not None for v in lfcs):
            notes.append(
                "'log2FC' is markers.tsv's logfoldchange for that gene and group (scanpy's: "
                "log2 of the ratio of the group's and the rest's mean of expm1 of the log "
                "values), not the difference of mean log values ('log', shown where "
                "markers.tsv has no row)"
            )
    for _, title, meaning in _shown(fusion.statistics):
        if meaning:
            notes.append(f"{title}: {meaning}")
    if L > 1:
        notes.append(f"'lists agreeing': lists that rank the gene in their top 5% ({cut:,} genes)")
    caption = (
        f"Top {len(order)} of {m:,} genes"
        + ("; " + "; ".join(notes) if notes else "")
        + ". Gene names link to NCBI Gene."
    )
    table = html_table(
        cols,
        rows,
        caption=caption,
        table_id="top-genes",
        text_columns=("rank in each list", "evidence", "higher in (effect)"),
        name_columns=("gene",),
    )
    return table, effects


def _answer(result: Any, labels: Any, effects: Sequence[Any], fusion: Any, k: int = 5) -> str:
    final = result.final
    symbols = result.symbols or None
    order = final.order()[:k]
    effects = list(effects)[: len(order)]
    order = order[: len(effects)]
    lfcs = marker_fold_changes(
        getattr(result, "markers", None), [result.final.genes[i] for i in order], effects
    )
    items = []
    for i, eff, lfc in zip(order, effects, lfcs, strict=True):
        g = final.genes[i]
        text = str(gene_link(g, (symbols or {}).get(g)))
        if eff is not None:
            text += f" ({esc(eff.group)}, {_effect_size(eff, lfc)})"
        items.append(text)
    expr = result.expression
    unit = _unit(expr)
    return answer_line(
        items, f"Ranked among {expr.n_genes:,} genes of {expr.n_samples:,} {unit}", final, fusion
    )


def answer_line(items: Sequence[str], what: str, final: Any, fusion: Any) -> str:
    """The page's answer: the top genes (``items``, HTML), what was ranked and how, and how
    many genes are at q <= 0.05 and 0.10 where the fusion gives q-values."""
    sig = ""
    if "q_value" in final.statistics:
        # both levels, each named: the fusion's notices speak of q <= 0.10 (the level its
        # checks were benchmarked at), a reader's cut is often 0.05
        qv = np.asarray(final.statistics["q_value"])
        n05, n10 = (int(np.sum(qv <= level)) for level in ANSWER_Q_LEVELS)
        sig = f" {n05:,} genes have a q-value of at most 0.05, {n10:,} of at most 0.10."
    return (
        "<p class='answer' id='answer'><b>Top genes:</b> "
        + ", ".join(items)
        + f". {what} by "
        + esc(fusion.summary)
        + "."
        + sig
        + "</p>"
    )


def _notices(fusion: Any, extra: Sequence[str] = ()) -> str:
    items = [*extra, *fusion.notices]
    if not items:
        return ""
    return (
        "<div class='notice' id='notices'><b>Before you read on</b><ul>"
        + "".join(f"<li>{esc(s)}</li>" for s in items)
        + "</ul></div>"
    )


def _evidence(result: Any, top: int) -> str:
    evidence = result.evidence
    if evidence is None:
        return (
            "<p class='note' id='evidence'>No knowledge source gives evidence (GO terms, "
            "pathways, neighbours) for the genes of this run.</p>"
        )
    final = result.final
    symbols = result.symbols or None
    order = final.order()[:top]
    if not hasattr(evidence, "parts"):  # a plain gene -> text mapping
        rows = [
            [
                _rank_text(final.ranks[i]),
                _name(final.genes[i], symbols),
                evidence.get(final.genes[i], ""),
            ]
            for i in order
        ]
        return html_table(
            ["rank", "gene", "evidence"], rows, table_id="evidence", name_columns=("gene",)
        )
    labels = list(evidence.labels)
    rows = []
    for i in order:
        g = final.genes[i]
        parts = evidence.parts(g)
        cells: list[Any] = [_rank_text(final.ranks[i]), gene_link(g, (symbols or {}).get(g))]
        for label in labels:
            hit = parts.get(label)
            if hit is None:
                cells.append("")
            elif isinstance(hit, tuple):
                cells.append(
                    Raw(
                        "<br>".join(
                            str(term_link(t.term, t.name))
                            + f" <span class='muted'>({esc(t.term) + ', ' if t.name != t.term else ''}"
                            f"{t.in_top} of {t.size} genes in the top {evidence.top}"
                            + (
                                ", with " + ", ".join(esc(_name(s, symbols)) for s in t.support)
                                if t.support
                                else ""
                            )
                            + ")</span>"
                            for t in hit
                        )
                    )
                )
            else:
                cells.append(
                    Raw(
                        ", ".join(str(gene_link(n, (symbols or {}).get(n))) for n in hit.shown)
                        + f" <span class='muted'>({hit.in_top} of {hit.n_neighbours} in the top "
                        f"{evidence.top})</span>"
                    )
                )
        rows.append(cells)
    caption = (
        f"What explains the top genes. Terms: GO terms and pathways over-represented among the "
        f"top {evidence.top} genes (hypergeometric test, BH q ≤ 0.05, at least 5 genes), "
        "ordered by how specific they are once the gene itself is left out; each with its "
        "size and the other top genes it holds. Neighbours: best-ranked first, with how many "
        f"are in the top {evidence.top}."
    )
    return html_table(
        ["rank", "gene", *labels],
        rows,
        caption=caption,
        table_id="evidence",
        text_columns=labels,
        name_columns=("gene",),
    )


def _weights(result: Any, fusion: Any) -> str:
    final = result.final
    intro = "".join(f"<p>{esc(s)}</p>" for s in (fusion.weight_meaning, fusion.supervision) if s)
    if len(final.list_names) == 1:
        one = (
            f"One ranked list ({esc(final.list_names[0])}): the fused ranking is its own, and "
            "there is no other list to weigh it against."
        )
        if final.weights is None:
            return f"<p class='note' id='weights'>{one}</p>"
        intro = f"<p>{one}</p>"
    if final.weights is None:
        return intro + (
            f"<p class='note' id='weights'>The aggregation {esc(final.method)} gives the lists "
            "no weights: each counts the same.</p>"
        )
    intervals = weight_intervals(final)
    rankers = {r.name: r.params.get("ranker", "") for r in result.lists}
    cols = ["list", "ranker", "weight", *(["95% interval"] if intervals else []), ""]
    cols += ["in plain words"]
    rows = []
    for j in np.argsort(-np.asarray(final.weights), kind="stable"):
        name = final.list_names[j]
        w = float(final.weights[j])
        row: list[Any] = [name, rankers.get(name, ""), f"{w:.3f}"]
        if intervals:
            lo, hi = intervals[j]
            row.append(Raw(f"<span class='ci'>{lo:.3f} – {hi:.3f}</span>"))
        row.append(Raw(f"<span class='bar' style='width:{max(1, round(160 * w))}px'></span>"))
        words = [s for s in (fusion.reliability.get(name), fusion.list_notes.get(name)) if s]
        row.append("; ".join(dict.fromkeys(words)))
        rows.append(row)
    table = html_table(
        cols,
        rows,
        caption=f"List weights ({final.method}; they sum to 1)",
        table_id="weights",
        text_columns=("in plain words",),
        name_columns=("list", "ranker"),
    )
    note = (
        ""
        if intervals
        else "<p class='note'>The aggregation reported no intervals for the weights.</p>"
    )
    return intro + table + note + _details(final)


def _details(final: Any) -> str:
    """The aggregation's own numbers, folded away (for the specialist)."""
    facts = []
    diag = dict(getattr(final, "diagnostics", None) or {})
    gain = diag.get("loglik_gain")
    if isinstance(gain, (int, float, np.floating)):
        n_boot = diag.get("n_boot")
        facts.append(
            f"log-likelihood gain of the fitted weights over equal weights: {float(gain):.3g} nats"
            + (f"; intervals from {int(n_boot)} bootstrap replicates" if n_boot else "")
        )
    for key in ("warning", "circular"):
        if isinstance(diag.get(key), str) and diag[key]:
            facts.append(f"{key}: {diag[key]}")
    for k, v in final.info.items():
        if isinstance(v, (bool, int, float, str, np.integer, np.floating)) and k not in (
            _INTERVAL_KEYS
        ):
            facts.append(f"{k} = {fmt(v, 4) if isinstance(v, (float, np.floating)) else v}")
    if not facts:
        return ""
    return (
        "<details class='small'><summary>The aggregation's own numbers</summary><ul>"
        + "".join(f"<li>{esc(f)}</li>" for f in facts)
        + "</ul></details>"
    )


def _coverage(coverage: Sequence[Any], sources: Any = None) -> str:
    if not coverage:
        given = sorted(getattr(sources, "data", None) or {})
        if given:
            return (
                "<p class='note' id='coverage'>No gene-level coverage was recorded for the knowledge sources "
                f"of this run ({esc(', '.join(given))}).</p>"
            )
        return (
            "<p class='note' id='coverage'>No knowledge source: every list was computed from the expression "
            "matrix (and the labels).</p>"
        )
    rows = [
        (
            c.source,
            c.input_genes,
            c.matched,
            f"{100 * c.fraction:.1f}%",
            c.dropped,
            c.ambiguous,
            f"{c.matrix_genes_covered:,} / {c.matrix_genes:,}",
            c.id_column or "",
        )
        for c in coverage
    ]
    return html_table(
        [
            "source",
            "source genes",
            "matched",
            "matched %",
            "dropped",
            "ambiguous",
            "matrix genes covered",
            "matched on",
        ],
        rows,
        caption="Genes of each knowledge source found in the matrix",
        table_id="coverage",
        text_columns=("source",),
    )


def _lists(result: Any, k: int = 5) -> str:
    symbols = result.symbols or None
    rows = []
    for r in result.lists:
        top = [_name(g, symbols) for g in r.top(k)]
        rows.append(
            (
                r.name,
                r.params.get("ranker", ""),
                "higher" if r.higher_is_better else "lower",
                ", ".join(top),
            )
        )
    return html_table(
        ["list", "ranker", "better score", f"top {k} genes"],
        rows,
        caption="The ranked lists",
        table_id="lists",
        text_columns=(f"top {k} genes",),
        name_columns=("list", "ranker", "better score"),
    )


def _agreement(final: Any) -> str:
    if len(final.list_names) < 2:
        return (
            "<p class='note' id='agreement'>One ranked list: the fused ranking follows it; "
            "there is no agreement between lists to show.</p>"
        )
    from kofs.report.figures import agreement_html

    names = ["fused", *final.list_names]
    R = np.column_stack([final.ranks, np.asarray(final.list_ranks, dtype=np.float64)])
    R = np.where(np.isnan(R), np.nanmax(R, axis=0, initial=0) + 1, R)  # unranked: tied last
    C = rank_correlation(R)
    return (
        f"<figure id='agreement'>{agreement_html(C, names)}<figcaption>Spearman rank "
        f"correlation between the fused ranking and each list over all {len(final.genes):,} "
        "genes (columns numbered as the rows): red where lists agree, blue where they "
        "disagree.</figcaption></figure>"
    )


def _heatmap(result: Any, labels: Any, k: int, max_samples: int) -> str:
    expr = result.expression
    unit = _unit(expr)
    if expr.n_samples > max_samples:
        return (
            f"<p class='note' id='heatmap'>Heatmap of the top genes skipped: "
            f"{expr.n_samples:,} {unit} (more than {max_samples:,}).</p>"
        )
    from kofs.report.effects import columns
    from kofs.report.figures import heatmap_html

    symbols = result.symbols or None
    order = result.final.order()[:k]
    classes = None if labels is None else list(labels.labels)
    name = getattr(labels, "name", None) or "label"
    body = heatmap_html(
        columns(expr.values, order),
        genes=[_name(expr.genes[j], symbols) for j in order],
        classes=classes,
        class_name=name,
        unit=unit,
    )
    caption = (
        f"Expression of the top {len(order)} genes (rows, z-scored per gene, clustered) across "
        f"the {expr.n_samples:,} {unit} (columns, clustered)"
        + (f"; the bar above gives each one's {name}." if classes else ".")
    )
    return f"<figure id='heatmap'>{body}<figcaption>{esc(caption)}</figcaption></figure>"


def _check_report_arguments(result, labels, *counts) -> None:
    """:func:`run_report_html`'s arguments have the documented types (a ParameterError naming
    the argument, not an AttributeError from inside the page)."""
    from kofs.types import AggregateRanking, Expression, SampleCategories, count_argument

    # a RunResult, known by what the page reads (kofs.pipeline is a layer above this one)
    if not isinstance(getattr(result, "final", None), AggregateRanking) or not isinstance(
        getattr(result, "expression", None), Expression
    ):
        raise ParameterError(
            "run_report_html: result must be a kofs RunResult (what kofs.rank and kofs.run "
            f"return), got {result!r:.40} of type {type(result).__name__}"
        )
    if labels is not None and not isinstance(labels, SampleCategories):
        raise ParameterError(
            f"run_report_html: labels must be kofs.SampleCategories or None, got a "
            f"{type(labels).__name__}"
        )
    names = ("top", "evidence_genes", "heatmap_genes", "max_heatmap_samples")
    for name, value in zip(names, counts, strict=True):
        count_argument(value, f"run_report_html: {name}")


@checked_keywords
def run_report_html(
    result: Any,
    *,
    manifest: Mapping[str, Any] | None = None,
    labels: Any = None,
    top: int = 50,
    evidence_genes: int = 25,
    heatmap_genes: int = 40,
    max_heatmap_samples: int = MAX_HEATMAP_SAMPLES,
    title: str | None = None,
    notices: Sequence[str] = (),
) -> str:
    """The report page of a run, as one self-contained HTML string.

    The page opens with the answer (the top genes, with the group where they are higher and
    by how much) and anything the reader must know first (``notices`` and the fusion's own,
    :mod:`kofs.report.fusion`); then the top genes, their evidence, the list weights in plain
    words, the agreement of the lists, the heatmap, the coverage of the knowledge sources,
    the lists and the provenance. Its cost grows with ``top`` and the number of lists, not
    with the genome: only the top genes' columns of the matrix are read.

    Parameters
    ----------
    result : kofs.pipeline.result.RunResult
    manifest : mapping, optional
        The run's provenance record (``manifest.json``,
        :func:`kofs.pipeline.write.manifest`); without it the page has no provenance section.
    labels : SampleCategories, optional
        Sample labels aligned to ``result.expression.samples`` (effects, colour bar); default
        ``result.labels``.
    top : int
        Genes in the table of top genes.
    evidence_genes : int
        Genes in the evidence table (at most ``top``).
    heatmap_genes : int
        Genes drawn in the heatmap.
    max_heatmap_samples : int
        Above this sample count the heatmap is skipped (the page says so).
    title : str, optional
        Default: what was ranked (:func:`run_title`).
    notices : sequence of str
        Sentences shown before the results (warnings of the run, in plain words).

    Returns
    -------
    str
    """
    from kofs.report.figures import CSS as FIGURE_CSS
    from kofs.report.fusion import describe_fusion

    _check_report_arguments(result, labels, top, evidence_genes, heatmap_genes, max_heatmap_samples)
    t0 = time.perf_counter()
    final = result.final
    if labels is None:
        labels = getattr(result, "labels", None)
    if labels is not None and len(set(labels.labels) - {""}) < 2:
        labels = None
    symbols = result.symbols or None
    expr = result.expression
    unit = _unit(expr)
    fusion = describe_fusion(final, unit=unit)
    title = title or run_title(result, labels)
    top_table, effects = _top_genes(result, top, labels, fusion)
    body = [_answer(result, labels, effects, fusion), _notices(fusion, notices)]
    body.append(
        "<nav><a href='#top-genes'>top genes</a><a href='#evidence'>evidence</a>"
        "<a href='#weights'>weights</a>"
        "<a href='#agreement'>agreement</a><a href='#heatmap'>heatmap</a>"
        "<a href='#coverage'>coverage</a><a href='#lists'>lists</a>"
        + ("<a href='#provenance'>provenance</a>" if manifest else "")
        + "</nav>"
    )
    lab = ""
    if labels is not None:
        counts = {c: int(np.sum(np.asarray(labels.labels) == c)) for c in labels.classes if c}
        lab = f" Labels '{esc(labels.name or 'label')}': " + ", ".join(
            f"{esc(c)} {n:,}" for c, n in counts.items()
        )
        lab += "."
    body.append(
        f"<p>{expr.n_samples:,} {unit} × {expr.n_genes:,} genes; "
        + esc(fusion.summary)
        + f".{lab}"
        + (
            f" Gene symbols known for {len(symbols):,} genes; the gene id stays the key."
            if symbols
            else ""
        )
        + "</p>"
    )
    body.append("<h2>Top genes</h2>" + top_table)
    body.append("<h2>Evidence</h2>" + _evidence(result, min(top, evidence_genes)))
    body.append("<h2>List weights</h2>" + _weights(result, fusion))
    body.append("<h2>Agreement between the lists</h2>" + _agreement(final))
    body.append(
        f"<h2>Top genes across the {unit}</h2>"
        + _heatmap(result, labels, min(heatmap_genes, expr.n_genes), max_heatmap_samples)
    )
    body.append(
        "<h2>Coverage of the knowledge sources</h2>"
        + _coverage(result.coverage, getattr(result, "sources", None))
    )
    body.append("<h2>Lists</h2>" + _lists(result))
    if manifest:
        body.append(provenance_html(manifest, unit=unit))
    markers = getattr(result, "markers", None)
    body.append(
        "<p class='note'>Files beside this page: ranking.tsv (every gene, every list), "
        + ("weights.tsv, " if final.weights is not None else "")
        + (
            f"markers.tsv (marker tables, {esc(markers.method)}: each of the "
            f"{len(markers.groups):,} groups of {esc(markers.groupby)} against the rest), "
            if markers is not None
            else ""
        )
        + "manifest.json (provenance), config.resolved.yaml (<code>kofs run</code> repeats the "
        "run).</p>"
    )
    text = page(title, body, css=FIGURE_CSS)
    log.info("report built in %.2f s", time.perf_counter() - t0)
    return text


def _shown(statistics: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """The per-gene statistics of the top-genes table: the first three (q-value, local fdr,
    P(relevant)), and whether a gene changes in every table where DE tables' genes also
    change in some alone (``replicated``)."""
    return statistics[:3] + [s for s in statistics[3:] if s[0] == "replicated"]
