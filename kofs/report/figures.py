"""The run report's figures as HTML and tiny inline PNGs, without matplotlib.

* :func:`heatmap_html` — the top genes over the clustered samples: one pixel per (gene, sample)
  in a PNG scaled by the browser, gene names and the class colour bar as HTML beside it, the
  legend as HTML below it (so it can never cover the figure);
* :func:`agreement_html` — the rank correlation between the lists as a coloured table.

Drawing costs what the top genes cost, not what the genome costs. :func:`png_bytes` writes an
RGB array as a PNG with zlib (no imaging library).
"""

from __future__ import annotations

import base64
import struct
import zlib
from collections.abc import Sequence

import numpy as np

from kofs.report.html import Raw, esc

__all__ = [
    "CSS",
    "agreement_html",
    "class_colours",
    "diverging",
    "heatmap_html",
    "png_bytes",
    "png_uri",
]

CSS = """.hm{display:grid;grid-template-columns:9em minmax(0,1fr);column-gap:6px;
margin:.5em 0}.hm img{width:100%;display:block;image-rendering:pixelated;
border:1px solid #ddd;box-sizing:border-box}.hm .rowlab{font-size:11px;text-align:right;
white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.legend{display:flex;flex-wrap:wrap;gap:.3em 1.2em;font-size:12px;margin:.4em 0 0 9.4em;
align-items:center}.sw{display:inline-block;width:12px;height:12px;margin-right:4px;
vertical-align:middle;border:1px solid #999}.grad{display:inline-block;width:120px;
height:12px;vertical-align:middle;border:1px solid #999;margin:0 4px}
table.agree td{text-align:center;font-size:12px;min-width:2.6em}"""

# ColorBrewer RdBu, reversed: blue (low) .. white .. red (high)
_RDBU_R = np.array(
    [
        (5, 48, 97),
        (33, 102, 172),
        (67, 147, 195),
        (146, 197, 222),
        (209, 229, 240),
        (247, 247, 247),
        (253, 219, 199),
        (244, 165, 130),
        (214, 96, 77),
        (178, 24, 43),
        (103, 0, 31),
    ],
    dtype=np.float64,
)
_PALETTE = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#666666"]
_TAB20 = [
    "#1f77b4", "#aec7e8", "#ff7f0e", "#ffbb78", "#2ca02c", "#98df8a", "#d62728", "#ff9896",
    "#9467bd", "#c5b0d5", "#8c564b", "#c49c94", "#e377c2", "#f7b6d2", "#7f7f7f", "#c7c7c7",
    "#bcbd22", "#dbdb8d", "#17becf", "#9edae5",
]  # fmt: skip


def class_colours(n: int) -> list[str]:
    """``n`` distinct colours: an 8-colour palette, tab20 beyond (cycled past 20)."""
    pal = _PALETTE if n <= len(_PALETTE) else _TAB20
    return [pal[i % len(pal)] for i in range(n)]


def diverging(v: np.ndarray, lo: float = -3.0, hi: float = 3.0) -> np.ndarray:
    """RGB (uint8, shape ``v.shape + (3,)``) of values on a blue-white-red scale from ``lo`` to
    ``hi`` (NaN grey)."""
    v = np.asarray(v, dtype=np.float64)
    t = np.clip((np.nan_to_num(v, nan=0.5 * (lo + hi)) - lo) / (hi - lo), 0, 1)
    x = t * (len(_RDBU_R) - 1)
    i = np.minimum(np.floor(x).astype(np.int64), len(_RDBU_R) - 2)
    f = (x - i)[..., None]
    rgb = _RDBU_R[i] * (1 - f) + _RDBU_R[i + 1] * f
    rgb[np.isnan(v)] = 200
    return np.round(rgb).astype(np.uint8)


def _hex_rgb(colour: str) -> tuple[int, int, int]:
    c = colour.lstrip("#")
    return int(c[0:2], 16), int(c[2:4], 16), int(c[4:6], 16)


def png_bytes(rgb: np.ndarray) -> bytes:
    """A PNG (8-bit RGB, no filter, zlib level 6) of an ``(h, w, 3)`` uint8 array."""
    rgb = np.ascontiguousarray(rgb, dtype=np.uint8)
    h, w, _ = rgb.shape
    raw = np.concatenate([np.zeros((h, 1), dtype=np.uint8), rgb.reshape(h, 3 * w)], axis=1)

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw.tobytes(), 6))
        + chunk(b"IEND", b"")
    )


def png_uri(rgb: np.ndarray) -> str:
    """:func:`png_bytes` as a ``data:image/png;base64`` address."""
    return "data:image/png;base64," + base64.b64encode(png_bytes(rgb)).decode("ascii")


def _cluster_order(M: np.ndarray) -> np.ndarray:
    """Leaf order of average-linkage clustering of the rows of M (correlation distance;
    Euclidean when a row is constant)."""
    from scipy.cluster.hierarchy import leaves_list, linkage

    if M.shape[0] < 3:
        return np.arange(M.shape[0])
    centred = M - M.mean(axis=1, keepdims=True)
    metric = "correlation" if np.all(np.linalg.norm(centred, axis=1) > 0) else "euclidean"
    return leaves_list(linkage(M, method="average", metric=metric))


def heatmap_html(
    X_top: np.ndarray,
    *,
    genes: Sequence[str],
    classes: Sequence[str] | None,
    class_name: str = "class",
    unit: str = "samples",
    row_px: int = 13,
) -> str:
    """The top genes (rows, z-scored per gene, clustered) over the samples (columns,
    clustered), with a colour bar of the samples' classes.

    Parameters
    ----------
    X_top : ndarray of shape (n_samples, k)
    genes : sequence of str, length k
        Row names (symbols where known).
    classes : sequence of str, length n_samples, or None
    class_name : str
    unit : str
        ``"samples"`` or ``"cells"``.
    row_px : int
        Height of a gene's row in pixels.
    """
    X = np.asarray(X_top, dtype=np.float64)
    sd = np.nanstd(X, axis=0)
    Z = (X - np.nanmean(X, axis=0)) / np.where(sd > 0, sd, 1.0)
    Z = np.nan_to_num(Z)
    cols = _cluster_order(Z)  # samples
    rows = _cluster_order(Z.T)  # genes
    k = X.shape[1]
    image = png_uri(diverging(Z[np.ix_(cols, rows)].T))
    cells = []
    legend = []
    if classes is not None:
        labels = np.asarray(["" if c is None else str(c) for c in classes], dtype=object)
        levels = sorted(set(labels) - {""})
        colours = dict(zip(levels, class_colours(len(levels)), strict=True))
        bar = np.array([_hex_rgb(colours.get(c, "#ffffff")) for c in labels[cols]], np.uint8)
        cells.append(
            f"<div class='rowlab' style='height:{row_px + 1}px;line-height:{row_px + 1}px'>"
            f"<b>{esc(class_name)}</b></div>"
            f"<img class='plot bar-img' src='{png_uri(bar[None, :, :])}' "
            f"style='height:{row_px + 1}px' alt='{esc(class_name)} of each of the {unit}'>"
        )
        legend += [
            f"<span><span class='sw' style='background:{colours[c]}'></span>{esc(c)}</span>"
            for c in levels
        ]
    names = "".join(
        f"<div style='height:{row_px}px;line-height:{row_px}px'>{esc(genes[i])}</div>" for i in rows
    )
    cells.append(
        f"<div class='rowlab'>{names}</div><img class='plot hm-img' src='{image}' "
        f"style='height:{k * row_px}px' alt='expression of the top {k} genes'>"
    )
    lo, hi = diverging(np.array([-3.0, 3.0]))
    mid = diverging(np.array([0.0]))[0]
    grad = ",".join(f"rgb({r},{g},{b})" for r, g, b in (lo, mid, hi))
    legend.append(
        f"<span>z-score −3<span class='grad' style='background:linear-gradient(to right,"
        f"{grad})'></span>+3</span>"
    )
    legend.append(f"<span class='muted'>{X.shape[0]:,} {esc(unit)}, clustered</span>")
    return f"<div class='hm'>{''.join(cells)}</div><div class='legend'>{''.join(legend)}</div>"


def agreement_html(C: np.ndarray, names: Sequence[str]) -> str:
    """The correlation matrix ``C`` between ``names`` as a table of coloured cells (columns
    numbered like the rows, so the table fits the page however long the names are)."""
    C = np.asarray(C, dtype=np.float64)
    head = "".join(f"<th>{i + 1}</th>" for i in range(len(names)))
    rows = []
    for i, n in enumerate(names):
        cells = []
        for j in range(len(names)):
            v = C[i, j]
            r, g, b = diverging(np.array([v]), -1.0, 1.0)[0]
            ink = "#fff" if np.isfinite(v) and abs(v) > 0.6 else "#000"
            text = "NA" if not np.isfinite(v) else f"{v:.2f}"
            cells.append(f"<td style='background:rgb({r},{g},{b});color:{ink}'>{text}</td>")
        rows.append(f"<tr><th class='name'>{i + 1}. {esc(n)}</th>{''.join(cells)}</tr>")
    return Raw(
        f"<table class='agree' id='agreement-table'><thead><tr><th></th>{head}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )
