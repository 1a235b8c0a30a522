"""Writing an evaluation: ``evaluation.tsv``, ``accuracy.tsv``, figures and ``report.html``.

The HTML page is self-contained apart from the figures it references by relative path in the
same folder (``figures/*.png``); it uses no script and no network resource, so it reads
offline in any browser (``tests/_report_check.py`` checks it). The report also lists the top
genes of the evaluated rankings and the provenance of the evaluation.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from kofs.errors import OutputError, ParameterError
from kofs.evaluate.core import EvaluationResult, agreement
from kofs.evaluate.split import SplitHalfResult
from kofs.io.output import format_float, write_json, write_text
from kofs.io.output_folder import atomic_dir
from kofs.report.html import esc, html_table, page, provenance_html
from kofs.types import Expression

log = logging.getLogger(__name__)

__all__ = ["split_half_glance", "write_evaluation"]


def _tsv(df) -> str:
    lines = ["\t".join(df.columns)]
    for rec in df.itertuples(index=False):
        lines.append(
            "\t".join(
                format_float(v) if isinstance(v, (float, np.floating)) else str(v) for v in rec
            )
        )
    return "\n".join(lines) + "\n"


def _html_table(df, *, caption: str = "", table_id: str | None = None) -> str:
    return html_table(
        [str(c) for c in df.columns],
        df.itertuples(index=False),
        caption=caption,
        table_id=table_id,
        name_columns=("symbol", "gene"),
    )


def write_evaluation(
    result: EvaluationResult,
    outdir: str | Path,
    *,
    expression: Expression,
    labels: Sequence[str],
    heatmap_lists: Sequence[str] | None = None,
    title: str = "kofs evaluation",
    intro: str = "",
    extra_tables: Mapping[str, Any] | None = None,
    gene_tables: Mapping[str, Any] | None = None,
    provenance: Mapping[str, Any] | None = None,
    symbols: Mapping[str, str] | None = None,
    extra_files: Mapping[str, str] | None = None,
    split_half: SplitHalfResult | None = None,
) -> list[str]:
    """Write the tables, figures and report of ``result`` into ``outdir`` (all or nothing; the
    folder's previous content is replaced whole).

    Parameters
    ----------
    result : EvaluationResult
    outdir : path
    expression : Expression
        The evaluated matrix (for the heatmaps).
    labels : sequence of str
        Sample classes (colour bar of the heatmaps).
    heatmap_lists : sequence of str, optional
        Lists drawn as heatmaps (default: the first list).
    title, intro : str
        Heading and a paragraph (plain text) of the report.
    extra_tables : mapping of str to DataFrame, optional
        More tables for the report (e.g. the book's Table 6.5), by caption.
    gene_tables : mapping of str to DataFrame, optional
        The top genes of the evaluated rankings (symbol, ranks, evidence), by caption; shown in
        the report's "Top genes" section.
    provenance : mapping, optional
        A manifest-like record (``kofs_version``, ``environment``, ``inputs`` with sha256,
        ``settings``, ``releases``): the report's provenance section; also written to
        ``evaluation.json``.
    symbols : mapping gene id -> symbol, optional
        Labels of the genes in the heatmaps.
    extra_files : mapping of str to str, optional
        More text files written into the folder, by name.
    split_half : SplitHalfResult, optional
        Written as ``split_half.tsv`` (summary), ``split_half_draws.tsv`` (every draw) and
        ``split_half.md`` (the at-a-glance table), its settings into ``evaluation.json``, and
        a report section.

    Returns
    -------
    list of str
        Written paths.
    """
    import pandas as pd

    from kofs.report.plots import plot_accuracy, plot_agreement, plot_heatmap, plot_weights

    out = Path(outdir)
    if out.exists() and not out.is_dir():
        raise OutputError(
            "is an existing file, not a folder; choose another output folder", path=out
        )
    K = result.settings["hit_top"]
    names = list(result.orders)
    heatmap_lists = list(heatmap_lists or names[:1])
    unknown = [h for h in heatmap_lists if h not in result.orders]
    if unknown:
        raise ParameterError(
            f"heatmap list {unknown[0]!r} is not an evaluated list; choose from {', '.join(names)}"
        )
    symbols = symbols or {}
    figures: list[tuple[str, str]] = []
    with atomic_dir(out) as tmp:
        (tmp / "figures").mkdir()
        write_text(tmp / "evaluation.tsv", _tsv(result.table))
        write_text(tmp / "accuracy.tsv", _tsv(pd.DataFrame(result.accuracy)))
        record = {"settings": result.settings, "notes": result.notes, "weights": result.weights}
        if split_half is not None:
            write_text(tmp / "split_half.tsv", _tsv(split_half.table))
            write_text(tmp / "split_half_draws.tsv", _tsv(split_half.draws))
            write_text(tmp / "split_half.md", _markdown(split_half_glance(split_half)))
            record["split_half"] = split_half.settings
        if provenance:
            record["provenance"] = dict(provenance)
        write_json(tmp / "evaluation.json", record)  # strict JSON (NaN as null), sorted keys
        for i, name in enumerate(heatmap_lists):
            top = result.orders[name][:K]
            stem = tmp / "figures" / f"heatmap_{i + 1}"
            plot_heatmap(
                expression.values[:, top],
                stem,
                genes=[symbols.get(expression.genes[j], expression.genes[j]) for j in top],
                classes=labels,
                title=f"Top {K} genes of {name}",
            )
            figures.append(
                (
                    f"figures/heatmap_{i + 1}.png",
                    f"Top {K} genes of {name} (rows z-scored, clustered) over the "
                    f"{expression.n_samples} samples (clustered); the colour bar above gives "
                    "each sample's class.",
                )
            )
        for c in result.settings["classifiers"]:
            stem = tmp / "figures" / f"accuracy_{c}"
            plot_accuracy(result.accuracy, stem, classifier=c)
            figures.append(
                (
                    f"figures/accuracy_{c}.png",
                    f"Mean cross-validated accuracy ({c}) against the number of top genes.",
                )
            )
        if result.weights:
            plot_weights(result.weights, tmp / "figures" / "weights")
            figures.append(("figures/weights.png", "List weights learned by each aggregation."))
        if len(names) > 1:
            lnames, C = agreement(result)
            plot_agreement(C, tmp / "figures" / "agreement", names=lnames)
            figures.append(
                (
                    "figures/agreement.png",
                    "Spearman rank correlation between the lists over all genes.",
                )
            )
        html = _page(
            result,
            figures,
            title=title,
            intro=intro,
            extra_tables=extra_tables or {},
            gene_tables=gene_tables or {},
            provenance=provenance,
            split_half=split_half,
            extra_files=list(extra_files or ()),
        )
        write_text(tmp / "report.html", html)
        for name, text in (extra_files or {}).items():
            write_text(tmp / name, text)
        written = sorted(str(out / p.relative_to(tmp)) for p in tmp.rglob("*") if p.is_file())
    log.info("evaluation written to %s", out)
    return written


def _page(
    result: EvaluationResult,
    figures,
    *,
    title: str,
    intro: str,
    extra_tables,
    gene_tables,
    provenance,
    split_half: SplitHalfResult | None = None,
    extra_files: Sequence[str] = (),
) -> str:
    s = result.settings
    columns = list(getattr(result.table, "columns", ()))
    protocol_text = (
        "<p class='note'><b>book protocol</b>: genes ranked once on all samples, then "
        f"{s['n_splits']}-fold stratified CV "
        + ("run once" if s["n_repeats"] == 1 else f"repeated {s['n_repeats']} times")
        + (" with sample groups kept together" if s["groups"] else "")
        + " trains and tests the classifier on the top genes (optimistic: selection saw the "
        "test samples). "
        + (
            "<b>honest protocol</b> (columns prefixed 'honest'): the ranking is re-run on the "
            "training samples of every fold. "
            if "honest" in s["protocols"]
            else ""
        )
        + "ACC-k = 1-NN accuracy on the top k genes; "
        # only the columns the table has (no known gene sets: no HIT or Sim_anno column)
        + (
            f"HIT_set = known genes among the top {s['hit_top']}; "
            if any("HIT_" in str(c) for c in columns)
            else ""
        )
        + (
            "Sim_anno_set = summed GO similarity (Lin, best-match average) between the top "
            "genes and the set (Sim_anno_mean = per pair); "
            if any("Sim_anno" in str(c) for c in columns)
            else ""
        )
        + f"RED-{s['red_top']} = mean |Pearson correlation| of the top genes; Residue (lower "
        "better) and JAC-1/JAC-5 (higher better) averaged over "
        f"{s['unsupervised_feature_counts']} top genes.</p>"
    )
    parts = []
    if intro:
        parts += [f"<p>{esc(p)}</p>" for p in intro.split("\n\n") if p.strip()]
    classes = ", ".join(f"{esc(k)}: {v}" for k, v in s["classes"].items())
    parts.append(
        f"<p>{s['n_samples']} samples ({classes}), {s['n_genes']} genes, "
        f"{len(result.orders)} lists.</p>"
    )
    parts.append(
        "<h2>Evaluation</h2>"
        + _html_table(result.table, caption="evaluation.tsv", table_id="evaluation")
        + protocol_text
    )
    if split_half is not None:
        parts.append(_split_half_section(split_half))
    for cap, df in extra_tables.items():
        parts.append(f"<h2>{esc(cap)}</h2>" + _html_table(df))
    if gene_tables:
        parts.append("<h2 id='top-genes'>Top genes</h2>")
        for i, (cap, df) in enumerate(gene_tables.items()):
            parts.append(_html_table(df, caption=cap, table_id=f"top-genes-{i + 1}"))
    parts.append("<h2>Figures</h2>")
    for src, cap in figures:
        alt = esc(cap)
        parts.append(
            f"<figure><img src='{src}' alt='{alt}'><figcaption>{alt} "
            f"(<a href='{src[:-4]}.svg'>SVG</a>)</figcaption></figure>"
        )
    if provenance:
        parts.append(provenance_html(provenance))
    parts.append(
        "<p class='note'>Files: <a href='evaluation.tsv'>evaluation.tsv</a>, "
        "<a href='accuracy.tsv'>accuracy.tsv</a>, <a href='evaluation.json'>evaluation.json</a>"
        + (
            ", <a href='split_half.tsv'>split_half.tsv</a>, "
            "<a href='split_half_draws.tsv'>split_half_draws.tsv</a>, "
            "<a href='split_half.md'>split_half.md</a>"
            if split_half is not None
            else ""
        )
        # the files the caller writes beside the page (kofs reproduce: table65.tsv, .md)
        + "".join(f", <a href='{esc(f)}'>{esc(f)}</a>" for f in extra_files)
        + ".</p>"
    )
    return page(title, parts)


def _markdown(df) -> str:
    rows = [[str(c) for c in df.columns]] + [
        [str(v) for v in r] for r in df.itertuples(index=False)
    ]
    lines = ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join([lines[0], "|" + "---|" * len(df.columns), *lines[1:]]) + "\n"


def split_half_glance(result: SplitHalfResult, *, k: int | None = None):
    """One row per list: held-out genes recovered in every top k (mean ± SD over repeats) and,
    at top ``k`` (default 50 when scored, else the largest), the paired differences against
    the reference and the best data-only list, the null's mean and the p-value."""
    import pandas as pd

    t, s = result.table, result.settings
    ks = s["top"]
    k = k if k is not None else (50 if 50 in ks else ks[-1])

    def pm(mean, sd, signed=False):
        if np.isnan(mean):
            return "not built"
        text = f"{mean:+.1f}" if signed else f"{mean:.1f}"
        return text if np.isnan(sd) else f"{text} ± {sd:.1f}"

    rows = []
    for name in dict.fromkeys(t["list"]):
        sel = t[t["list"] == name].set_index("k")
        row = {"list": name, "kind": sel["kind"].iloc[0]}
        for kk in ks:
            row[f"top {kk}"] = pm(sel.loc[kk, "recovered"], sel.loc[kk, "recovered_sd"])
        at = sel.loc[k]
        if s.get("reference"):
            row[f"vs {s['reference']} (top {k})"] = pm(
                at["diff_reference"], at["diff_reference_sd"], signed=True
            )
        if at["best_data"]:
            row[f"vs best data list (top {k})"] = (
                pm(at["diff_best_data"], at["diff_best_data_sd"], signed=True)
                + f" ({at['best_data']})"
            )
        if s["null_repeats"]:
            row[f"null (top {k})"] = pm(at["null"], at["null_sd"])
            row[f"p null (top {k})"] = "" if np.isnan(at["p_null"]) else f"{at['p_null']:.2g}"
        rows.append(row)
    return pd.DataFrame(rows)


def _split_half_section(result: SplitHalfResult) -> str:
    s = result.settings
    sets = ", ".join(f"{esc(k)} ({v} genes)" for k, v in s["gene_sets"].items()) or "none"
    text = (
        f"<p class='note'>The {s['n_known']} genes of the known set <b>{esc(s['known'])}</b> "
        f"in the matrix are split at random ({s['repeats']} repeats) into {s['n_seed']} seed genes "
        f"and {s['n_held_out']} held-out genes (seed {s['seed']}). Every gene set the lists are "
        f"built from or the aggregations fitted on ({sets}) loses the held-out genes; each "
        "cell is the number of held-out genes in a list's top k, mean ± SD over the repeats. "
        "Differences are paired by repeat. The null replaces every gene of those sets by a "
        f"random gene outside the known set (null draws: {s['null_repeats']}, one random "
        "one-to-one map each); p = (1 + draws recovering at least the list's mean) / (1 + "
        f"draws), conservative, at least {1 / (1 + s['null_repeats']):.2g}. Lists that do not "
        "use the gene sets score the same in the null; a list that cannot be built from random "
        f"seeds is left out of that draw ('not built'). Run time {s['seconds']} s.</p>"
    )
    return (
        "<h2 id='split-half'>Split-half known genes</h2>"
        + _html_table(
            split_half_glance(result),
            caption="split_half.tsv (at a glance)",
            table_id="split-half-table",
        )  # fmt: skip
        + text
    )
