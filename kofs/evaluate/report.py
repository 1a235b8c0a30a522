"""Writing an evaluation: ``evaluation.tsv``, ``accuracy.tsv``, figures and ``report.html``.

The HTML page is self-contained apart from the figures it references by relative path in the
same folder (``figures/*.png``); it uses no script and no network resource, so it reads
offline in any browser. :func:`check_report` validates it (well-formed, every image present).
"""

from __future__ import annotations

import html
import json
import logging
from collections.abc import Mapping, Sequence
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np

from kofs.errors import OutputError, ParameterError
from kofs.evaluate.core import EvaluationResult, agreement
from kofs.evaluate.plots import plot_accuracy, plot_agreement, plot_heatmap, plot_weights
from kofs.io.output import format_float
from kofs.io.output_folder import atomic_dir
from kofs.types import Expression

log = logging.getLogger(__name__)

__all__ = ["write_evaluation", "check_report", "browser_check"]

_CSS = """body{font-family:sans-serif;max-width:1200px;margin:2em auto;color:#222}
.scroll{overflow-x:auto}table{border-collapse:collapse;font-size:13px;margin:1em 0}
td,th{border:1px solid #bbb;padding:3px 6px;text-align:right;white-space:nowrap}
td.text{white-space:normal;min-width:24em;text-align:left;font-size:12px}
th{background:#eee}td:first-child,th:first-child{text-align:left}img{max-width:100%;border:1px solid #ddd;margin:.5em 0}
.note{color:#555;font-size:13px}figure{margin:1em 0}figcaption{font-size:13px;color:#444}"""


def _fmt(v: Any) -> str:
    if isinstance(v, (float, np.floating)):
        return "NA" if np.isnan(v) else (f"{v:.3f}" if abs(v) < 100 else f"{v:.0f}")
    return str(v)


def _tsv(df) -> str:
    lines = ["\t".join(df.columns)]
    for rec in df.itertuples(index=False):
        lines.append(
            "\t".join(
                format_float(v) if isinstance(v, (float, np.floating)) else str(v) for v in rec
            )
        )
    return "\n".join(lines) + "\n"


def _html_table(df, *, caption: str = "") -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    text = {i for i, c in enumerate(df.columns) if c == "notes"}

    def cell(i, v):
        return (
            f"<td class='text'>{html.escape(_fmt(v))}</td>"
            if i in text
            else f"<td>{html.escape(_fmt(v))}</td>"
        )

    body = "".join(
        "<tr>" + "".join(cell(i, v) for i, v in enumerate(rec)) + "</tr>"
        for rec in df.itertuples(index=False)
    )
    cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    return f"<div class='scroll'><table>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"


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
    extra_files: Mapping[str, str] | None = None,
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
    extra_files : mapping of str to str, optional
        More text files written into the folder, by name.

    Returns
    -------
    list of str
        Written paths.
    """
    import pandas as pd

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
    figures: list[tuple[str, str]] = []
    with atomic_dir(out) as tmp:
        (tmp / "figures").mkdir()
        (tmp / "evaluation.tsv").write_text(_tsv(result.table))
        (tmp / "accuracy.tsv").write_text(_tsv(pd.DataFrame(result.accuracy)))
        (tmp / "evaluation.json").write_text(
            json.dumps(
                {"settings": result.settings, "notes": result.notes, "weights": result.weights},
                indent=2,
                default=str,
            )
        )
        for i, name in enumerate(heatmap_lists):
            top = result.orders[name][:K]
            stem = tmp / "figures" / f"heatmap_{i + 1}"
            plot_heatmap(
                expression.values[:, top],
                stem,
                genes=[expression.genes[j] for j in top],
                classes=labels,
                title=f"Top {K} genes of {name}",
            )
            figures.append(
                (
                    f"figures/heatmap_{i + 1}.png",
                    f"Top {K} genes of {name} (rows z-scored, clustered) over the {expression.n_samples} "
                    "samples (clustered); the colour bar above gives each sample's class.",
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
            figures.append(
                ("figures/weights.png", "EM source weights π learned by each aggregation.")
            )
        if len(names) > 1:
            lnames, C = agreement(result)
            plot_agreement(C, tmp / "figures" / "agreement", names=lnames)
            figures.append(
                (
                    "figures/agreement.png",
                    "Spearman rank correlation between the lists over all genes.",
                )
            )
        page = _page(result, figures, title=title, intro=intro, extra_tables=extra_tables or {})
        (tmp / "report.html").write_text(page, encoding="utf-8")
        for name, text in (extra_files or {}).items():
            (tmp / name).write_text(text, encoding="utf-8")
        written = sorted(str(out / p.relative_to(tmp)) for p in tmp.rglob("*") if p.is_file())
    log.info("evaluation written to %s", out)
    return written


def _page(result: EvaluationResult, figures, *, title: str, intro: str, extra_tables) -> str:
    s = result.settings
    protocol_text = (
        "<p class='note'><b>book protocol</b>: genes ranked once on all samples, then "
        f"{s['n_splits']}-fold stratified CV repeated {s['n_repeats']} times"
        + (" with sample groups kept together" if s["groups"] else "")
        + " trains and tests the classifier on the top genes (optimistic: selection saw the test samples). "
        + (
            "<b>honest protocol</b> (columns prefixed 'honest'): the ranking is re-run on the training "
            "samples of every fold. "
            if "honest" in s["protocols"]
            else ""
        )
        + f"ACC-k = 1-NN accuracy on the top k genes; HIT_set = known genes among the top {s['hit_top']}; "
        "Sim_anno_set = summed GO similarity (Lin, best-match average) between the top genes and the set "
        f"(Sim_anno_mean = per pair); RED-{s['red_top']} = mean |Pearson correlation| of the top genes; "
        "Residue (lower better) and JAC-1/JAC-5 (higher better) averaged over "
        f"{s['unsupervised_feature_counts']} top genes.</p>"
    )
    parts = [
        "<!DOCTYPE html>",
        "<html lang='en'><head><meta charset='utf-8'>",
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
    ]
    if intro:
        parts += [f"<p>{html.escape(p)}</p>" for p in intro.split("\n\n") if p.strip()]
    classes = ", ".join(f"{html.escape(str(k))}: {v}" for k, v in s["classes"].items())
    parts.append(
        f"<p>{s['n_samples']} samples ({classes}), {s['n_genes']} genes, "
        f"{len(result.orders)} lists.</p>"
    )
    parts.append(
        "<h2>Evaluation</h2>" + _html_table(result.table, caption="evaluation.tsv") + protocol_text
    )
    for cap, df in extra_tables.items():
        parts.append(f"<h2>{html.escape(cap)}</h2>" + _html_table(df))
    parts.append("<h2>Figures</h2>")
    for src, cap in figures:
        alt = html.escape(cap)
        parts.append(
            f"<figure><img src='{src}' alt='{alt}'><figcaption>{alt} "
            f"(<a href='{src[:-4]}.svg'>SVG</a>)</figcaption></figure>"
        )
    parts.append(
        "<p class='note'>Files: <a href='evaluation.tsv'>evaluation.tsv</a>, "
        "<a href='accuracy.tsv'>accuracy.tsv</a>, <a href='evaluation.json'>evaluation.json</a>.</p>"
    )
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


class _Checker(HTMLParser):
    VOID = {"meta", "img", "br", "hr", "link", "input"}

    def __init__(self):
        super().__init__()
        self.stack: list[str] = []
        self.refs: list[str] = []
        self.errors: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "img":
            self.refs.append(a.get("src", ""))
        if tag == "a" and a.get("href"):
            self.refs.append(a["href"])
        for k in ("src", "href"):
            if a.get(k, "").startswith(("http:", "https:", "//")):
                self.errors.append(f"network reference {a[k]}")
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"unbalanced </{tag}>")
        else:
            self.stack.pop()


def check_report(path: str | Path) -> list[str]:
    """Problems of a report.html: unbalanced tags, network references, missing files."""
    path = Path(path)
    checker = _Checker()
    checker.feed(path.read_text(encoding="utf-8"))
    problems = list(checker.errors)
    if checker.stack:
        problems.append(f"unclosed tags: {checker.stack}")
    for ref in checker.refs:
        if not (path.parent / ref).is_file():
            problems.append(f"missing file {ref}")
    return problems


_BROWSER_PAGE = """<!DOCTYPE html><html><body><iframe id="f" src="report.html"></iframe><script>
const f = document.getElementById("f");
f.onload = () => {
  const d = f.contentDocument;
  const images = [...d.images].map(i => ({src: i.getAttribute("src"), width: i.naturalWidth}));
  document.body.setAttribute("data-kofs", JSON.stringify(
    {title: d.title, tables: d.querySelectorAll("table").length, images: images}));
};
</script></body></html>
"""


def browser_check(
    path: str | Path, *, executable: str | None = None, timeout: float = 60.0
) -> dict | None:
    """Open report.html in headless Chromium and report what it rendered.

    A probe page written beside the report (and removed afterwards) loads it in an iframe and
    records the title, the number of tables and every image's natural width (0 = not loaded).
    Needs ``chromium`` (Debian package) or ``executable``; returns None when none is found.

    Returns
    -------
    dict or None
        ``{"title", "tables", "images": [{"src", "width"}, ...]}``.
    """
    import os
    import shutil
    import subprocess
    import tempfile

    exe = (
        executable
        or shutil.which("chromium")
        or shutil.which("chromium-browser")
        or shutil.which("google-chrome")
    )
    if exe is None:
        return None
    path = Path(path).resolve()
    fd, probe = tempfile.mkstemp(prefix=".kofs-probe-", suffix=".html", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(_BROWSER_PAGE.replace("report.html", path.name))
        with tempfile.TemporaryDirectory() as profile:
            out = subprocess.run(
                [
                    exe,
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--allow-file-access-from-files",
                    f"--user-data-dir={profile}",
                    "--virtual-time-budget=10000",
                    "--dump-dom",
                    Path(probe).as_uri(),
                ],
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
    finally:
        os.unlink(probe)
    marker = 'data-kofs="'
    start = out.stdout.find(marker)
    if start < 0:
        raise OutputError(
            f"the browser did not render the report (exit {out.returncode})", path=path
        )
    raw = out.stdout[start + len(marker) : out.stdout.index('"', start + len(marker))]
    return json.loads(html.unescape(raw))
