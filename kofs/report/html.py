"""HTML building blocks of the reports: page, tables, links, provenance.

Pages use no script and load nothing from the network, so they read offline in any browser;
links to gene and term pages (NCBI Gene, AmiGO, KEGG, MSigDB) open only when clicked. The
checks of a page (well-formed, nothing loaded from the network, every referenced file present;
its layout in a headless browser) live with the tests (``tests/_report_check.py``).
"""

from __future__ import annotations

import html
import json
import re
import urllib.parse
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

__all__ = [
    "Raw",
    "esc",
    "fmt",
    "gene_link",
    "html_table",
    "link",
    "page",
    "provenance_html",
    "term_link",
]

# Tables take the page's width and wrap their text cells, so nothing overflows a 1,280-px
# window; long tokens (paths, checksums) break anywhere.
CSS = """body{font-family:sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222;
line-height:1.35}h1{font-size:1.6em;margin-bottom:.2em}h2{margin-top:1.6em}
.scroll{max-width:100%}table{border-collapse:collapse;font-size:13px;margin:1em 0;
max-width:100%}td,th{border:1px solid #bbb;padding:3px 6px;text-align:right;
vertical-align:top}td.text{white-space:normal;text-align:left;font-size:12px;min-width:14em}
td.name{text-align:left;white-space:nowrap}th.name{text-align:left}td.long{word-break:break-all;text-align:left}
caption{text-align:left;font-weight:bold;padding:4px 0}th{background:#eee}
td:first-child,th:first-child{text-align:left}img{max-width:100%}
.note{color:#555;font-size:13px}figure{margin:1em 0}figcaption{font-size:13px;color:#444}
.bar{display:inline-block;height:10px;background:#3b75af;vertical-align:middle}
.ci{color:#555}code{font-size:12px}nav a{margin-right:1em}a{color:#1f5fa0}
.answer{font-size:15px;background:#f4f8fb;border-left:4px solid #3b75af;padding:.6em 1em}
.notice{background:#fff6e0;border-left:4px solid #e0a000;padding:.5em 1em;font-size:14px}
.muted{color:#666}.small{font-size:12px}"""


class Raw(str):
    """Text already in HTML (inserted unescaped by :func:`html_table`)."""


def esc(value: Any) -> str:
    """``value`` as escaped HTML text."""
    return html.escape(str(value), quote=True)


def fmt(v: Any, digits: int = 3) -> str:
    """Text of a number: ``digits`` significant digits, never in exponent form between 0.001
    and 10^digits (``0.0642``, ``3.27``, ``4.00``, ``1,234``), else ``1.2e-05``; integers with
    thousands separators; NaN as ``NA``. Other values as text."""
    if isinstance(v, (bool, np.bool_)):
        return str(v)
    if isinstance(v, (int, np.integer)):
        return f"{int(v):,}"
    if isinstance(v, (float, np.floating)):
        x = float(v)
        if np.isnan(x):
            return "NA"
        if x == 0:
            return "0"
        a = abs(x)
        if a >= 10**digits:
            return f"{x:,.0f}"
        if a < 1e-3:
            return f"{x:.{max(digits - 1, 1)}e}"
        exponent = int(np.floor(np.log10(a)))
        if round(a, max(0, digits - 1 - exponent)) >= 10 ** (exponent + 1):
            exponent += 1  # rounds up to the next power of ten: 0.9999 is 1.0, not 1.00
        if a >= 10**digits or round(a, max(0, digits - 1 - exponent)) >= 10**digits:
            return f"{x:,.0f}"
        decimals = max(0, digits - 1 - exponent)
        return f"{x:.{decimals}f}"
    if v is None:
        return ""
    return str(v)


def link(text: str, url: str | None) -> Raw:
    """``text`` as a link opening ``url`` in a new tab (plain text when ``url`` is None)."""
    if not url:
        return Raw(esc(text))
    return Raw(f"<a href='{esc(url)}' target='_blank' rel='noopener'>{esc(text)}</a>")


_ENTREZ = re.compile(r"^\d+$")
_ENSEMBL = re.compile(r"^ENS[A-Z]*G\d+")
_GO = re.compile(r"^GO:\d{7}$")
_KEGG = re.compile(r"^(?:path:)?((?:hsa|mmu|rno|dme|sce|ath|map|ko|ec)\d{5})$")
_MSIGDB = re.compile(r"^(?:KEGG|REACTOME|BIOCARTA|WP|HALLMARK|PID)_[A-Z0-9_]+$")
_REACTOME = re.compile(r"^R-[A-Z]{3}-\d+$")


def gene_url(gene_id: str, symbol: str | None = None) -> str | None:
    """NCBI Gene page of a gene: by Entrez id, else a search for its Ensembl id or symbol."""
    if _ENTREZ.match(gene_id):
        return f"https://www.ncbi.nlm.nih.gov/gene/{gene_id}"
    term = gene_id if _ENSEMBL.match(gene_id) else (symbol or gene_id)
    # percent-encoded here; :func:`link` HTML-escapes the whole URL once
    return f"https://www.ncbi.nlm.nih.gov/gene/?term={urllib.parse.quote(term, safe='')}"


def gene_link(gene_id: str, symbol: str | None = None) -> Raw:
    """The gene's symbol (else id) linked to its NCBI Gene page."""
    return link(symbol or gene_id, gene_url(gene_id, symbol))


def term_url(term: str) -> str | None:
    """A page about a GO term (AmiGO), a KEGG pathway (KEGG), an MSigDB gene set or a
    Reactome pathway; None for other ids."""
    if _GO.match(term):
        return f"https://amigo.geneontology.org/amigo/term/{term}"
    m = _KEGG.match(term)
    if m:
        return f"https://www.kegg.jp/entry/{m.group(1)}"
    if _MSIGDB.match(term):
        return f"https://www.gsea-msigdb.org/gsea/msigdb/human/geneset/{term}.html"
    if _REACTOME.match(term):
        return f"https://reactome.org/content/detail/{term}"
    return None


def term_link(term: str, text: str | None = None) -> Raw:
    """``text`` (default: the id) linked to the term's page (:func:`term_url`)."""
    return link(text or term, term_url(term))


def html_table(
    columns: Sequence[str],
    rows: Iterable[Sequence[Any]],
    *,
    caption: str = "",
    table_id: str | None = None,
    text_columns: Iterable[str] = ("notes", "evidence"),
    name_columns: Iterable[str] = (),
    long_columns: Iterable[str] = (),
) -> str:
    """An HTML table that fits the page (text columns wrap).

    Parameters
    ----------
    columns : sequence of str
    rows : iterable of sequences
        Cells: numbers are formatted by :func:`fmt`, :class:`Raw` cells are inserted as they
        are, anything else is escaped.
    caption : str
    table_id : str, optional
        ``id`` attribute of the table (tests and links find it by this).
    text_columns : iterable of str
        Columns of free text (wrapped, left-aligned).
    name_columns : iterable of str
        Columns of names (left-aligned).
    long_columns : iterable of str
        Columns of long tokens (paths, checksums) that may break anywhere.
    """
    text = {i for i, c in enumerate(columns) if c in set(text_columns)}
    names = {i for i, c in enumerate(columns) if c in set(name_columns)}
    long = {i for i, c in enumerate(columns) if c in set(long_columns)}

    def cell(i: int, v: Any) -> str:
        content = v if isinstance(v, Raw) else esc(fmt(v))
        cls = (
            " class='long'"
            if i in long
            else " class='text'"
            if i in text
            else (" class='name'" if i in names else "")
        )
        return f"<td{cls}>{content}</td>"

    head = "".join(
        f"<th class='name'>{esc(c)}</th>" if i in text | names else f"<th>{esc(c)}</th>"
        for i, c in enumerate(columns)
    )
    body = "".join(
        "<tr>" + "".join(cell(i, v) for i, v in enumerate(rec)) + "</tr>" for rec in rows
    )
    cap = f"<caption>{esc(caption)}</caption>" if caption else ""
    ident = f" id='{esc(table_id)}'" if table_id else ""
    return (
        f"<div class='scroll'><table{ident}>{cap}<thead><tr>{head}</tr></thead>"
        f"<tbody>{body}</tbody></table></div>"
    )


def page(title: str, body: Iterable[str], *, css: str = "") -> str:
    """A complete HTML document (inline CSS, plus ``css``) around the ``body`` parts."""
    parts = [
        "<!DOCTYPE html>",
        "<html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>{esc(title)}</title><style>{CSS}{css}</style></head><body>",
        f"<h1>{esc(title)}</h1>",
        *body,
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def _short(v: Any, n: int = 80) -> str:
    if isinstance(v, (list, tuple)) and all(isinstance(x, (str, int, float)) for x in v):
        text = ", ".join(map(str, v))
    else:
        text = v if isinstance(v, str) else json.dumps(v, default=str, sort_keys=True)
    return text if len(text) <= n else text[: n - 1] + "…"


def provenance_html(
    manifest: Mapping[str, Any], *, heading: str = "Provenance", unit: str = "samples"
) -> str:
    """The provenance of a run from its manifest dict (``manifest.json``).

    Shows the command and main settings, the software versions, every input file with its size
    and sha256, and the knowledge releases read from the files' headers. Missing parts are
    left out. ``unit``: what the matrix's rows are (``"samples"`` or ``"cells"``).
    """
    out = [f"<h2 id='provenance'>{esc(heading)}</h2>"]
    s = dict(manifest.get("settings") or {})
    facts = []
    if manifest.get("command"):
        facts.append(("command", f"kofs {manifest['command']}"))
    for key in ("method", "aggregate", "seed", "protocols", "classifiers", "hit_top"):
        if key in s and s[key] is not None:
            facts.append((key, _short(s[key])))
    if manifest.get("defaults_version"):
        facts.append(("defaults version", str(manifest["defaults_version"])))
    m = manifest.get("matrix")
    if m:
        facts.append(("matrix", f"{m.get('samples'):,} {unit} × {m.get('genes'):,} genes"))
    t = manifest.get("timings_seconds")
    if t:
        # the timed steps only (manifest.json's timings_seconds), not the whole command
        facts.append(
            (
                "time of the lists and the fusion",
                f"{sum(float(v) for v in t.values()):.2f} s (reading the inputs and writing the "
                "outputs not counted)",
            )
        )
    if facts:
        out.append(
            html_table(["setting", "value"], facts, table_id="settings", long_columns=("value",))
        )
    env = dict(manifest.get("environment") or {})
    if manifest.get("kofs_version") and "kofs" not in env:
        env = {"kofs": manifest["kofs_version"], **env}
    if env:
        out.append(
            html_table(
                ["software", "version"],
                [(k, "" if v is None else v) for k, v in env.items()],
                caption="Software",
                table_id="software",
                name_columns=("version",),
            )
        )
    rows = []
    for role, prints in (manifest.get("inputs") or {}).items():
        for fp in prints if isinstance(prints, list) else [prints]:
            if not fp:
                continue
            rows.append(
                (
                    role,
                    fp.get("path", ""),
                    "" if fp.get("bytes") is None else f"{fp['bytes']:,}",
                    Raw(f"<code>{esc(fp.get('sha256') or '')}</code>"),
                )
            )
    if rows:
        out.append(
            html_table(
                ["input", "file", "bytes", "sha256"],
                rows,
                caption="Input files",
                table_id="inputs",
                long_columns=("file", "sha256"),
            )
        )
    rel = manifest.get("releases") or {}
    if rel:
        out.append(
            html_table(
                ["source", "release and contents"],
                [
                    (
                        k,
                        "; ".join(
                            f"{a}: {_short(b, 60)}" for a, b in dict(v).items() if b is not None
                        ),
                    )
                    for k, v in rel.items()
                ],
                caption="Knowledge releases (from the files' headers)",
                table_id="releases",
                text_columns=("release and contents",),
            )
        )
    return "\n".join(out)
