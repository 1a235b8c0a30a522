"""``report.html`` of a ranking run: one self-contained, offline page a biologist can read.

Sections: the top genes (symbol, rank, score, each list's rank, evidence); the source weights
(with their intervals when the aggregation gives them); the agreement between the lists
(Spearman heatmap); the top genes across the samples with the label colour bar; the genes
each knowledge source covers; the lists; the provenance (versions, inputs' sha256, releases)
from the run's manifest. Figures are inline PNG (``data:`` addresses), styles inline; the page
loads nothing else. matplotlib is imported only when the page is built.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from kofs._ranks import rank_correlation
from kofs.report.html import Raw, esc, html_table, page, provenance_html

log = logging.getLogger(__name__)

__all__ = ["run_report_html", "write_run_report", "MAX_HEATMAP_SAMPLES"]

#: Largest sample count drawn in the heatmap of the top genes (clustering is quadratic).
MAX_HEATMAP_SAMPLES = 2000
_GENE_PARTS = ("GO neighbours", "interactors")  # evidence parts that list genes
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


def _diagnostics_note(final: Any) -> str:
    """Warnings and the likelihood gain of the weight diagnostics, when the aggregation has
    them."""
    diag = dict(getattr(final, "diagnostics", None) or {})
    out = []
    for key in ("warning", "circular"):
        if isinstance(diag.get(key), str) and diag[key]:
            out.append(f"<p class='note'><b>Warning</b>: {esc(diag[key])}</p>")
    gain = diag.get("loglik_gain")
    if isinstance(gain, (int, float, np.floating)):
        n_boot = diag.get("n_boot")
        out.append(
            f"<p class='note'>Log-likelihood gain of the fitted weights over equal weights: "
            f"{float(gain):.3g} nats"
            + (f"; intervals from {int(n_boot)} bootstrap replicates" if n_boot else "")
            + ".</p>"
        )
    return "".join(out)


def _info_note(info: Mapping[str, Any]) -> str:
    keep = []
    for k, v in info.items():
        if isinstance(v, (bool, int, float, str, np.integer, np.floating)) and k not in (
            _INTERVAL_KEYS
        ):
            keep.append(f"{k} = {v:.6g}" if isinstance(v, (float, np.floating)) else f"{k} = {v}")
    return ("<p class='note'>Aggregation: " + esc("; ".join(keep)) + ".</p>") if keep else ""


def _evidence_parts(text: str) -> dict[str, str]:
    """``"GO: a; b | pathways: c"`` (:func:`kofs.evidence.gene_evidence`) -> {label: text}."""
    out = {}
    for part in text.split(" | "):
        label, sep, rest = part.partition(": ")
        if sep:
            out[label] = rest
    return out


def _top_genes(result, top: int, symbols: Mapping[str, str] | None) -> str:
    final = result.final
    order = final.order()[:top]
    names = list(final.list_names)
    cols = ["rank", *(["symbol"] if symbols else []), "gene", "score"]
    cols += [f"rank: {n}" for n in names]
    rows = []
    for i in order:
        g = final.genes[i]
        row: list[Any] = [_rank_text(final.ranks[i])]
        if symbols:
            row.append(symbols.get(g, ""))
        row += [g, f"{final.scores[i]:.4g}"]
        row += [_rank_text(r) for r in final.list_ranks[i]]
        rows.append(row)
    caption = (
        f"Top {len(order)} of {len(final.genes):,} genes, fused by {final.method}; "
        "'rank: <list>' is the gene's rank in each list (1 = best)"
    )
    return html_table(
        cols, rows, caption=caption, table_id="top-genes", name_columns=("symbol", "gene")
    )


def _evidence(result, top: int, symbols: Mapping[str, str] | None) -> str:
    evidence = result.evidence
    if evidence is None:
        return (
            "<p class='note'>No knowledge source gives evidence (GO terms, pathways, "
            "neighbours) for the genes of this run.</p>"
        )
    final = result.final
    order = final.order()[:top]
    parts = [_evidence_parts(evidence.get(final.genes[i], "")) for i in order]
    labels = list(dict.fromkeys(k for p in parts for k in p))
    cols = ["rank", "gene", *labels]
    rows = []
    for i, p in zip(order, parts, strict=True):
        g = final.genes[i]
        name = (symbols or {}).get(g, g)
        cells = [
            p.get(k, "").replace(",", ", ") if k in _GENE_PARTS else p.get(k, "") for k in labels
        ]
        rows.append([_rank_text(final.ranks[i]), name, *cells])
    return html_table(
        cols,
        rows,
        caption="Knowledge behind the top genes: most relevant GO terms and pathways, "
        "strongest neighbours in the GO similarity graph and the interaction network",
        table_id="evidence",
        text_columns=labels,
        name_columns=("gene",),
    )


def _weights(final) -> str:
    if final.weights is None:
        return f"<p class='note'>The aggregation {esc(final.method)} learns no source weights.</p>"
    intervals = weight_intervals(final)
    cols = ["list", "weight", *(["95% interval"] if intervals else []), ""]
    rows = []
    order = np.argsort(-np.asarray(final.weights), kind="stable")
    for j in order:
        w = float(final.weights[j])
        row: list[Any] = [final.list_names[j], f"{w:.3f}"]
        if intervals:
            lo, hi = intervals[j]
            row.append(Raw(f"<span class='ci'>{lo:.3f} – {hi:.3f}</span>"))
        row.append(Raw(f"<span class='bar' style='width:{max(1, round(200 * w))}px'></span>"))
        rows.append(row)
    note = (
        ""
        if intervals
        else "<p class='note'>The aggregation reported no intervals for the weights.</p>"
    )
    return (
        html_table(
            cols,
            rows,
            caption=f"Source weights π ({final.method}; sum to 1)",
            table_id="weights",
        )
        + note
        + _diagnostics_note(final)
        + _info_note(final.info)
    )


def _coverage(coverage: Sequence[Any], sources: Any = None) -> str:
    if not coverage:
        given = sorted(getattr(sources, "data", None) or {})
        if given:
            return (
                "<p class='note'>No gene-level coverage was recorded for the knowledge sources "
                f"of this run ({esc(', '.join(given))}).</p>"
            )
        return (
            "<p class='note'>No knowledge source: every list was computed from the expression "
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


def _lists(result, symbols: Mapping[str, str] | None, k: int = 5) -> str:
    rows = []
    for r in result.lists:
        top = [(symbols or {}).get(g, g) for g in r.top(k)]
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


def _figure(uri: str, caption: str, fig_id: str) -> str:
    return (
        f"<figure id='{fig_id}'><img src='{uri}' alt='{esc(caption)}'>"
        f"<figcaption>{esc(caption)}</figcaption></figure>"
    )


def _agreement(final) -> str:
    if len(final.list_names) < 2:
        return (
            "<p class='note' id='agreement'>One ranked list: the fused ranking follows it; "
            "there is no agreement between lists to show.</p>"
        )
    from kofs.report.plots import agreement_figure, png_data_uri

    names = ["final", *final.list_names]
    R = np.column_stack([final.ranks, np.asarray(final.list_ranks, dtype=np.float64)])
    R = np.where(np.isnan(R), np.nanmax(R, axis=0, initial=0) + 1, R)  # unranked: tied last
    C = rank_correlation(R)
    uri = png_data_uri(agreement_figure(C, names=names))
    return _figure(
        uri,
        "Spearman rank correlation between the fused ranking ('final') and each list, over all "
        f"{len(final.genes):,} genes. Lists that agree are red, lists that disagree blue.",
        "agreement",
    )


def _heatmap(result, labels, symbols, k: int, max_samples: int) -> str:
    expr = result.expression
    if expr.n_samples > max_samples:
        return (
            f"<p class='note' id='heatmap-skipped'>Heatmap of the top genes skipped: "
            f"{expr.n_samples:,} samples (more than {max_samples:,}).</p>"
        )
    from kofs.report.plots import heatmap_figure, png_data_uri

    order = result.final.order()[:k]
    classes = None if labels is None else list(labels.labels)
    name = getattr(labels, "name", None) or "label"
    X = expr.values[:, order]
    if hasattr(X, "compute"):  # a Dask array
        X = X.compute()
    if hasattr(X, "toarray"):  # a sparse matrix
        X = X.toarray()
    fig = heatmap_figure(
        np.asarray(X, dtype=np.float64),
        genes=[(symbols or {}).get(expr.genes[j], expr.genes[j]) for j in order],
        classes=classes,
        title=f"Top {len(order)} genes of the fused ranking",
        class_name=name,
    )
    caption = (
        f"Expression of the top {len(order)} genes (rows, z-scored per gene, clustered) over the "
        f"{expr.n_samples} samples (columns, clustered)"
        + (f"; the colour bar above gives each sample's {name}." if classes else ".")
    )
    return _figure(png_data_uri(fig), caption, "heatmap")


def run_report_html(
    result: Any,
    *,
    manifest: Mapping[str, Any] | None = None,
    labels: Any = None,
    top: int = 50,
    evidence_genes: int = 25,
    heatmap_genes: int = 40,
    max_heatmap_samples: int = MAX_HEATMAP_SAMPLES,
    title: str = "kofs ranking report",
) -> str:
    """The report page of a run, as one self-contained HTML string.

    Parameters
    ----------
    result : kofs.pipeline.RunResult
    manifest : mapping, optional
        The run's provenance record (``manifest.json``,
        :func:`kofs.outputs.manifest`); without it the page has no provenance section.
    labels : SampleCategories, optional
        Sample labels aligned to ``result.expression.samples`` (colour bar of the heatmap).
    top : int
        Genes in the table of top genes.
    evidence_genes : int
        Genes in the evidence table (at most ``top``).
    heatmap_genes : int
        Genes drawn in the heatmap.
    max_heatmap_samples : int
        Above this sample count the heatmap is skipped (the page says so).
    title : str

    Returns
    -------
    str
    """
    t0 = time.perf_counter()
    final = result.final
    symbols = result.symbols or None
    expr = result.expression
    body = [
        "<nav><a href='#top-genes'>top genes</a><a href='#evidence'>evidence</a>"
        "<a href='#weights'>weights</a>"
        "<a href='#agreement'>agreement</a><a href='#heatmap'>heatmap</a>"
        "<a href='#coverage'>coverage</a><a href='#lists'>lists</a>"
        + ("<a href='#provenance'>provenance</a>" if manifest else "")
        + "</nav>"
    ]
    lab = ""
    if labels is not None:
        counts = {c: int(np.sum(np.asarray(labels.labels) == c)) for c in labels.classes}
        lab = f" Labels '{esc(labels.name or 'label')}': " + ", ".join(
            f"{esc(c)} {n}" for c, n in counts.items()
        )
        lab += "."
    body.append(
        f"<p>{expr.n_samples:,} samples × {expr.n_genes:,} genes; {len(final.list_names)} "
        f"ranked lists fused by <b>{esc(final.method)}</b>.{lab}"
        + (
            f" Gene symbols known for {len(symbols):,} genes; the gene id stays the key."
            if symbols
            else ""
        )
        + "</p>"
    )
    body.append("<h2>Top genes</h2>" + _top_genes(result, top, symbols))
    body.append("<h2>Evidence</h2>" + _evidence(result, min(top, evidence_genes), symbols))
    body.append("<h2>Source weights</h2>" + _weights(final))
    body.append("<h2>Agreement between the lists</h2>" + _agreement(final))
    body.append(
        "<h2>Top genes across the samples</h2>"
        + _heatmap(result, labels, symbols, min(heatmap_genes, expr.n_genes), max_heatmap_samples)
    )
    body.append(
        "<h2>Coverage of the knowledge sources</h2>"
        + _coverage(result.coverage, getattr(result, "sources", None))
    )
    body.append("<h2>Lists</h2>" + _lists(result, symbols))
    if manifest:
        body.append(provenance_html(manifest))
    body.append(
        "<p class='note'>Files beside this page: ranking.tsv (every gene, every list), "
        + ("weights.tsv, " if final.weights is not None else "")
        + "manifest.json (provenance), config.resolved.yaml (<code>kofs run</code> repeats the "
        "run).</p>"
    )
    text = page(title, body)
    log.info("report built in %.2f s", time.perf_counter() - t0)
    return text


def write_run_report(result: Any, path: str | os.PathLike, **kwargs: Any) -> str:
    """Write :func:`run_report_html` to ``path`` atomically; returns the path."""
    from kofs.io.output import atomic_file

    with atomic_file(path) as fh:
        fh.write(run_report_html(result, **kwargs))
    return os.fspath(path)
