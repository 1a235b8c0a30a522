"""``report.html`` of ``kofs aggregate``: the fusion of lists a user brought, on one offline page.

The same page as a ranking run's (:mod:`kofs.report.run`) without what needs a matrix (effects,
evidence, heatmap): first the answer (the top genes and how many are at q <= 0.05 and 0.10)
and what the reader must know (the fusion's notices in plain words); then the top genes with
their posterior, local fdr and q-value, how many lists agree and each list's rank; the list
weights with their intervals in plain words; the agreement between the lists; how each list was
read and its coverage of the universe; and the provenance from the run's manifest.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

from kofs.errors import ParameterError, checked_keywords
from kofs.report.html import esc, gene_link, page, provenance_html
from kofs.report.run import (
    _agreement,
    _notices,
    _top_genes,
    _weights,
    answer_line,
)

log = logging.getLogger(__name__)


def _answer(final: Any, fusion: Any, universe: int, k: int = 5) -> str:
    top = [str(gene_link(final.genes[i], None)) for i in final.order()[:k]]
    # (the fusion's summary names the lists: "3 ranked lists fused by posterior")
    what = f"Ranked among {len(final.genes):,} genes"
    if universe > len(final.genes):
        what += f" (of a universe of {universe:,})"
    return answer_line(top, what, final, fusion)


def _sources(result: Any) -> str:
    """How each list was read (:meth:`kofs.io.gene_lists.RankedGeneList.describe`) and its
    coverage of the universe."""
    read = "".join(f"<li>{esc(s.describe())}</li>" for s in result.sources)
    covered = "".join(f"<li>{esc(c.line())}</li>" for c in result.coverage)
    return (
        f"<div id='lists'><p>How each list was read:</p><ul>{read}</ul>"
        + (f"<p>Coverage of the universe:</p><ul>{covered}</ul>" if covered else "")
        + "</div>"
    )


@checked_keywords
def aggregate_report_html(
    result: Any,
    *,
    manifest: Mapping[str, Any] | None = None,
    top: int = 50,
    title: str | None = None,
) -> str:
    """The report page of a fusion of user lists, as one self-contained HTML string.

    Parameters
    ----------
    result : kofs.pipeline.user_lists.ListAggregation
        What :func:`kofs.aggregate_lists` returns.
    manifest : mapping, optional
        The run's provenance record (``manifest.json``); without it the page has no
        provenance section.
    top : int
        Genes in the table of top genes.
    title : str, optional
        Default: "Fused ranking of N lists".

    Returns
    -------
    str
    """
    from kofs.report.figures import CSS as FIGURE_CSS
    from kofs.report.fusion import describe_fusion
    from kofs.types import AggregateRanking, count_argument

    # a ListAggregation, known by what the page reads (kofs.pipeline is a layer above this one)
    if not isinstance(getattr(result, "final", None), AggregateRanking) or not hasattr(
        result, "sources"
    ):
        raise ParameterError(
            "aggregate_report_html: result must be what kofs.aggregate_lists returns, got "
            f"{result!r:.40} of type {type(result).__name__}"
        )
    count_argument(top, "aggregate_report_html: top")
    if manifest is not None and not isinstance(manifest, Mapping):
        raise ParameterError(
            "aggregate_report_html: manifest must be a mapping (manifest.json read as a dict) "
            f"or None, got {manifest!r:.40} of type {type(manifest).__name__}"
        )
    t0 = time.perf_counter()
    final = result.final
    fusion = describe_fusion(final)
    universe = int(getattr(result, "universe", 0) or 0)
    # the ranking run's sections read a run's result: a view of this one without a matrix
    view = SimpleNamespace(
        final=final,
        lists=result.lists,
        symbols=None,
        expression=None,
        evidence=None,
        universe=universe,
    )
    L = len(final.list_names)
    title = title or f"Fused ranking of {L} list{'s' if L != 1 else ''}"
    body = [_answer(final, fusion, universe), _notices(fusion)]
    body.append(
        "<nav><a href='#top-genes'>top genes</a><a href='#weights'>weights</a>"
        "<a href='#agreement'>agreement</a><a href='#lists'>lists</a>"
        + ("<a href='#provenance'>provenance</a>" if manifest else "")
        + "</nav>"
    )
    body.append("<h2>Top genes</h2>" + _top_genes(view, top, None, fusion)[0])
    body.append("<h2>List weights</h2>" + _weights(view, fusion))
    body.append("<h2>Agreement between the lists</h2>" + _agreement(final))
    body.append("<h2>Lists</h2>" + _sources(result))
    if manifest:
        body.append(provenance_html(manifest))
    body.append(
        "<p class='note'>Files beside this page: ranking.tsv (every gene, every list), "
        + ("weights.tsv, " if final.weights is not None else "")
        + "manifest.json (provenance), config.resolved.yaml (<code>kofs run</code> repeats the "
        "run).</p>"
    )
    text = page(title, body, css=FIGURE_CSS)
    log.info("report built in %.2f s", time.perf_counter() - t0)
    return text
