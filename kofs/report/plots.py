"""Figures of the reports (matplotlib's Agg canvas; no pyplot global state).

* :func:`heatmap_figure` — the top genes of a list over clustered samples with class colour
  bars (as book Fig. 6.7).
* :func:`accuracy_figure` — accuracy against the number of genes, one line per list.
* :func:`weights_figure` — the list weights of each aggregation (bar chart).
* :func:`agreement_figure` — Spearman correlation between the lists (heatmap).

Each ``*_figure`` returns a :class:`~matplotlib.figure.Figure`; :func:`save_figure` writes it
as ``<stem>.png`` and ``<stem>.svg`` (the evaluation's ``figures/``; the run report draws
its own figures without matplotlib, :mod:`kofs.report.figures`). The ``plot_*`` functions
draw and save in one call. This module imports matplotlib; import it only
when drawing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from scipy.cluster.hierarchy import leaves_list, linkage

__all__ = [
    "accuracy_figure",
    "agreement_figure",
    "heatmap_figure",
    "plot_accuracy",
    "plot_agreement",
    "plot_heatmap",
    "plot_weights",
    "save_figure",
    "weights_figure",
]

_PALETTE = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#666666"]


def _colour(i: int, n: int):
    """Distinct colours: the palette up to 8 lists, tab20 beyond."""
    if n <= len(_PALETTE):
        return _PALETTE[i]
    from matplotlib import colormaps

    return colormaps["tab20"](i % 20)


def save_figure(fig: Figure, stem: str | Path) -> list[str]:
    """Write ``<stem>.png`` (120 dpi) and ``<stem>.svg``; returns both paths.

    Control characters in any text of the figure (a gene, class or list name) are drawn
    escaped (``\\x0c``, :func:`kofs.errors.printable`): XML 1.0 forbids them, so the SVG would
    not be well-formed.
    """
    FigureCanvasAgg(fig)
    _printable_texts(fig)
    stem = Path(stem)
    paths = []
    for ext in ("png", "svg"):
        path = stem.with_suffix(f".{ext}")
        fig.savefig(path, dpi=120 if ext == "png" else None, bbox_inches="tight")
        paths.append(str(path))
    return paths


def _printable_texts(fig: Figure) -> None:
    """Escape control characters in every text of ``fig``: titles, legends, labels and the
    tick labels (kept by the axes' fixed formatters and drawn anew at each save)."""
    from matplotlib.text import Text
    from matplotlib.ticker import FuncFormatter

    from kofs.errors import printable

    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if any(printable(t.get_text()) != t.get_text() for t in axis.get_ticklabels()):
                fmt = axis.get_major_formatter()
                axis.set_major_formatter(FuncFormatter(lambda x, pos, f=fmt: printable(f(x, pos))))
    for text in fig.findobj(Text):
        shown = text.get_text()
        if printable(shown) != shown:
            text.set_text(printable(shown))


def _cluster_order(M: np.ndarray) -> np.ndarray:
    """Leaf order of average-linkage clustering of the rows of M (correlation distance)."""
    if M.shape[0] < 3:
        return np.arange(M.shape[0])
    Z = M - M.mean(axis=1, keepdims=True)
    norm = np.linalg.norm(Z, axis=1)
    if np.any(norm == 0):
        return leaves_list(linkage(M, method="average", metric="euclidean"))
    return leaves_list(linkage(M, method="average", metric="correlation"))


def heatmap_figure(
    X_top: np.ndarray,
    *,
    genes: Sequence[str],
    classes: Sequence[str] | None,
    title: str,
    class_name: str = "class",
) -> Figure:
    """Heatmap of the top genes (rows, z-scored) over hierarchically clustered samples.

    Parameters
    ----------
    X_top : ndarray of shape (n_samples, k)
        Expression of the top k genes, in list order.
    genes : sequence of str, length k
        Row labels (symbols where known).
    classes : sequence of str, length n_samples, or None
        Sample classes shown as a colour bar above the heatmap (None: no bar).
    title : str
    class_name : str
        Name of the classes (label of the colour bar and its legend).
    """
    X = np.asarray(X_top, dtype=np.float64)
    sd = X.std(axis=0)
    Z = (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    cols = _cluster_order(Z)  # samples
    rows = _cluster_order(Z.T)  # genes
    k = X.shape[1]
    fig = Figure(figsize=(min(14.0, max(6.0, 0.05 * X.shape[0] + 3)), max(4.0, 0.16 * k + 1.5)))
    gs = fig.add_gridspec(
        2, 2, height_ratios=[1, max(8, k / 2)], width_ratios=[40, 1], hspace=0.03, wspace=0.03
    )
    ax = fig.add_subplot(gs[1, 0])
    ax_cb = fig.add_subplot(gs[1, 1])
    if classes is not None:
        classes = np.asarray(classes, dtype=object)
        levels = list(dict.fromkeys(sorted(classes)))
        lookup = {c: i for i, c in enumerate(levels)}
        codes = np.array([lookup[c] for c in classes])
        ax_bar = fig.add_subplot(gs[0, 0], sharex=ax)
        cmap_cls = ListedColormap([_colour(i, len(levels)) for i in range(len(levels))])
        ax_bar.imshow(
            codes[cols][None, :],
            aspect="auto",
            cmap=cmap_cls,
            vmin=-0.5,
            vmax=len(levels) - 0.5,
            interpolation="nearest",
        )
        ax_bar.set_yticks([0], [class_name])
        ax_bar.tick_params(axis="x", bottom=False, labelbottom=False)
        ax_bar.set_title(title)
        handles = [Patch(color=cmap_cls(i), label=lv) for i, lv in enumerate(levels)]
        # outside the axes, right of the colour bar: it never covers the heatmap however many
        # classes (save_figure's tight bounding box keeps it in the image)
        fig.legend(
            handles=handles,
            loc="upper left",
            bbox_to_anchor=(1.0, 0.98),
            title=f"sample {class_name}",
            fontsize=8,
            ncol=1 + len(levels) // 25,
        )
    else:
        ax.set_title(title)
    im = ax.imshow(
        np.clip(Z[np.ix_(cols, rows)].T, -3, 3),
        aspect="auto",
        cmap="RdBu_r",
        vmin=-3,
        vmax=3,
        interpolation="nearest",
    )
    ax.set_yticks(range(k), [genes[i] for i in rows], fontsize=max(4, min(9, 400 // max(k, 1))))
    ax.set_xticks([])
    ax.set_xlabel(f"{X.shape[0]} samples (clustered)")
    fig.colorbar(im, cax=ax_cb, label="z-score")
    return fig


def plot_heatmap(
    X_top: np.ndarray,
    stem: str | Path,
    *,
    genes: Sequence[str],
    classes: Sequence[str] | None,
    title: str,
) -> list[str]:
    """:func:`heatmap_figure` saved as ``<stem>.png`` and ``<stem>.svg``."""
    return save_figure(heatmap_figure(X_top, genes=genes, classes=classes, title=title), stem)


def plot_accuracy(
    rows: Sequence[Mapping], stem: str | Path, *, classifier: str = "1nn"
) -> list[str]:
    """:func:`accuracy_figure` saved as ``<stem>.png`` and ``<stem>.svg``."""
    return save_figure(accuracy_figure(rows, classifier=classifier), stem)


def accuracy_figure(rows: Sequence[Mapping], *, classifier: str = "1nn") -> Figure:
    """Mean accuracy against the number of top genes, one line per (list, protocol).

    ``rows`` are the records of :func:`kofs.evaluate.protocols.accuracy_curves`; the book
    protocol is drawn solid, the honest one dashed.
    """
    sel = [r for r in rows if r["classifier"] == classifier]
    lists = list(dict.fromkeys(r["list"] for r in sel))
    fig = Figure(figsize=(10, 5.5))
    ax = fig.add_subplot(1, 1, 1)
    for i, name in enumerate(lists):
        color = _colour(i, len(lists))
        marker = "osD^v<>p*h"[i % 10]
        for protocol, style in (("book", "-"), ("honest", "--")):
            pts = sorted(
                (r["k"], r["accuracy"])
                for r in sel
                if r["list"] == name and r["protocol"] == protocol
            )
            if pts:
                ks, acc = zip(*pts, strict=False)
                ax.plot(
                    ks,
                    acc,
                    style,
                    marker=marker,
                    color=color,
                    markersize=4,
                    label=f"{name} ({protocol})",
                )
    ax.set_xlabel("number of top genes")
    ax.set_ylabel(f"mean CV accuracy ({classifier})")
    ax.set_title(
        f"Accuracy against number of genes ({classifier})\nsolid: book protocol (ranked on all "
        "samples), dashed: honest (re-ranked in each training fold)",
        fontsize=10,
    )
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig


def plot_weights(weights: Mapping[str, Mapping[str, float]], stem: str | Path) -> list[str]:
    """:func:`weights_figure` saved as ``<stem>.png`` and ``<stem>.svg``."""
    return save_figure(weights_figure(weights), stem)


def weights_figure(weights: Mapping[str, Mapping[str, float]]) -> Figure:
    """Grouped bars of the list weights: one group per list, one bar per aggregation."""
    aggs = list(weights)
    lists = list(dict.fromkeys(n for w in weights.values() for n in w))
    fig = Figure(figsize=(max(6, 0.8 * len(lists) + 2), 4.5))
    ax = fig.add_subplot(1, 1, 1)
    width = 0.8 / max(1, len(aggs))
    x = np.arange(len(lists))
    for j, agg in enumerate(aggs):
        vals = [weights[agg].get(n, 0.0) for n in lists]
        ax.bar(
            x + (j - (len(aggs) - 1) / 2) * width,
            vals,
            width,
            label=agg,
            color=_PALETTE[j % len(_PALETTE)],
        )
    ax.set_xticks(x, lists, rotation=35, ha="right")
    ax.set_ylabel("list weight")
    ax.set_ylim(0, 1)
    ax.set_title("List weights of each aggregation")
    ax.legend()
    ax.grid(axis="y", alpha=0.3)
    return fig


def plot_agreement(C: np.ndarray, stem: str | Path, *, names: Sequence[str]) -> list[str]:
    """:func:`agreement_figure` saved as ``<stem>.png`` and ``<stem>.svg``."""
    return save_figure(agreement_figure(C, names=names), stem)


def agreement_figure(C: np.ndarray, *, names: Sequence[str]) -> Figure:
    """Heatmap of the Spearman correlation between lists (values printed in the cells)."""
    C = np.asarray(C, dtype=np.float64)
    L = len(names)
    fig = Figure(figsize=(max(5, 0.6 * L + 2.5), max(4, 0.6 * L + 1.5)))
    ax = fig.add_subplot(1, 1, 1)
    im = ax.imshow(C, cmap="RdBu_r", vmin=-1, vmax=1)
    ax.set_xticks(range(L), names, rotation=45, ha="right", fontsize=8)
    ax.set_yticks(range(L), names, fontsize=8)
    for i in range(L):
        for j in range(L):
            if np.isfinite(C[i, j]):
                ax.text(
                    j,
                    i,
                    f"{C[i, j]:.2f}",
                    ha="center",
                    va="center",
                    fontsize=6,
                    color="white" if abs(C[i, j]) > 0.6 else "black",
                )
    fig.colorbar(im, ax=ax, label="Spearman ρ over all genes")
    ax.set_title("Agreement between ranked lists")
    return fig
