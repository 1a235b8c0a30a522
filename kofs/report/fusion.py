"""What a fusion's numbers mean, in plain words: the one place that knows each aggregation
method's wording (report.html, the terminal summary and the Python API read it).

:func:`describe_fusion` maps an :class:`~kofs.types.AggregateRanking` (its method, weights,
diagnostics and per-gene statistics) to a :class:`FusionText`. Wording that only one method
needs is one entry of :data:`METHOD_TEXT` (method name -> function adding to the text); all
else is generic and read from the result:

* per-gene statistics (``final.statistics``) are named by :data:`STATISTICS` (``q_value``,
  ``lfdr``, ``posterior``, ``p_value``, ...; unknown ones by their key);
* weight intervals: ``diagnostics["weight_ci"]`` (or the other keys of
  :func:`kofs.report.run.weight_intervals`);
* a plain-words reliability per list: ``diagnostics["list_reliability"]`` (list -> text);
* why a list carries no weight: ``diagnostics["list_notes"]`` (list -> text), else the
  method's entry, else a generic sentence;
* the supervision used: ``diagnostics["supervision"]``;
* notices for the reader: ``diagnostics["notices"]`` (sentences in plain words, each with what
  to do), else the method's entry turns its own diagnostics into such sentences.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["FusionText", "METHOD_TEXT", "STATISTICS", "describe_fusion", "statistic_label"]

#: A per-gene statistic's column title and its meaning (ordered: shown in this order).
STATISTICS: dict[str, tuple[str, str]] = {
    "q_value": ("q-value", "the false discovery rate of a list cut just below this gene"),
    "lfdr": ("local fdr", "the probability that this gene is not relevant"),
    "posterior": ("P(relevant)", "the probability that this gene is relevant"),
    "replicated": (
        "P(changed in every table)",
        "the probability that this gene is relevant and changes in every table, not in some alone",
    ),
    "p_value": ("p-value", "the chance of a rank this good if the lists were unrelated"),
    "stuart_q": ("Stuart p", "Stuart's order-statistics p-value"),
}

#: Below this weight a list is said to carry no weight.
ZERO_WEIGHT = 0.01


def statistic_label(key: str) -> str:
    """The column title of a per-gene statistic."""
    return STATISTICS.get(key, (key.replace("_", " "), ""))[0]


@dataclass
class FusionText:
    """Plain-language text of a fusion.

    Attributes
    ----------
    summary : str
        One sentence: how the lists were fused.
    weight_meaning : str
        What a list's weight means (empty for methods without weights).
    supervision : str
        What the weights were learned from.
    list_notes : dict of str to str
        Per list, why it carries (almost) no weight, or other facts worth a sentence.
    reliability : dict of str to str
        Per list, its reliability in plain words (when the method gives it).
    notices : list of str
        Things the reader must know, in plain words, each with what to do.
    statistics : list of (key, title, meaning)
        The per-gene statistics of the result, in display order.
    """

    summary: str
    weight_meaning: str = ""
    supervision: str = ""
    list_notes: dict[str, str] = field(default_factory=dict)
    reliability: dict[str, str] = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)
    statistics: list[tuple[str, str, str]] = field(default_factory=list)


def _supervision(diag: Mapping[str, Any], unit: str = "samples") -> str:
    level = diag.get("supervision")
    if level == "genes":
        n = len(diag.get("relevant_genes") or ()) or None
        return (
            "Supervised by the known relevant genes"
            + (f" ({n})" if n else "")
            + ": a list weighs more when it ranks them high; a list built from those genes is "
            "judged only on genes it was not built from."
        )
    if level == "labels":
        return (
            "Supervised by the labels: each list's top genes are tested on predicting the "
            f"labels of held-out {unit} (cross-validated)."
        )
    if level == "none":
        return "Unsupervised: a list weighs more when it agrees with the other lists."
    return ""


def _reliability_text(final: Any, text: FusionText) -> None:
    """The label-supervised lists' cross-validated reliability (``posterior``), and why a list
    got little weight from the labels."""
    rule = (final.diagnostics or {}).get("label_reliability") or {}
    values = {k: float(v) for k, v in (rule.get("reliability") or {}).items()}
    if not values:
        return
    p_best = {k: float(v) for k, v in (rule.get("p_best") or {}).items()}
    for name, v in values.items():
        words = f"predicts held-out labels at {v:.2f} on a scale from chance (0) to perfect (1)"
        if name in p_best:
            words += f"; the most predictive list in {100 * p_best[name]:.0f} % of resamples"
        text.reliability.setdefault(name, words)


def _posterior(final: Any, text: FusionText) -> None:
    text.weight_meaning = (
        "A list's weight is its share of how far the fused score (the log-odds that a gene is "
        "relevant) sets the relevant genes apart from the others: data lists give evidence "
        "with the reliability learned from their agreement, knowledge lists tilt the prior as "
        "much as the data show they predict it; the weights sum to 1."
    )
    _reliability_text(final, text)


def _em(final: Any, text: FusionText) -> None:
    text.weight_meaning = (
        "A list's weight π is the probability, in the book's EM model (eqs 6.16-6.19), that a "
        "relevant gene is drawn from that list; the weights sum to 1."
    )
    _reliability_text(final, text)


def _rank_statistic(final: Any, text: FusionText) -> None:
    text.weight_meaning = ""


#: Method name -> function adding the method's own wording to a :class:`FusionText`.
METHOD_TEXT: dict[str, Callable[[Any, FusionText], None]] = {
    "posterior": _posterior,
    "em": _em,
    "borda": _rank_statistic,
    "rra": _rank_statistic,
    "stuart": _rank_statistic,
}


def describe_fusion(final: Any, *, unit: str = "samples") -> FusionText:
    """The plain-language text of a fused ranking (see the module docstring); ``unit``: what
    the matrix's rows are (``"samples"`` or ``"cells"``)."""
    names = list(final.list_names)
    diag = dict(getattr(final, "diagnostics", None) or {})
    n = len(names)
    text = FusionText(
        summary=(
            f"{n} ranked lists fused by {final.method}"
            if n > 1
            else f"one ranked list ({names[0] if names else '?'})"
        ),
        supervision=_supervision(diag, unit),
    )
    stats = dict(getattr(final, "statistics", None) or {})
    known = [k for k in STATISTICS if k in stats]
    text.statistics = [(k, *STATISTICS[k]) for k in known] + [
        (k, statistic_label(k), "") for k in stats if k not in STATISTICS
    ]
    if final.weights is not None and n > 1:
        text.weight_meaning = (
            "A list's weight is its share of the say in the fused ranking; the weights sum to 1."
        )
    add = METHOD_TEXT.get(final.method)
    if add is not None:
        add(final, text)
    if n <= 1 or final.weights is None:
        # one list, or a method without weights (borda, rra, stuart: each list counts the
        # same): nothing was weighed, so nothing supervised the weights
        text.weight_meaning = text.supervision = ""
    for name, words in dict(diag.get("list_reliability") or {}).items():
        text.reliability[name] = str(words)
    for name, note in dict(diag.get("list_notes") or {}).items():
        text.list_notes[name] = str(note)
    if final.weights is not None and n > 1:
        for name, w in zip(names, final.weights, strict=True):
            if float(w) < ZERO_WEIGHT and name not in text.list_notes:
                # a weight shown as 0.000 has no say; one of 0.001-0.009 has a little
                say = (
                    "no say in the fused ranking"
                    if float(w) < 0.0005
                    else f"almost no say in the fused ranking (weight below {ZERO_WEIGHT:g})"
                )
                text.list_notes[name] = say + (
                    "" if name in text.reliability else ": the fusion found no support for it"
                )
    given = diag.get("notices")
    if given:
        text.notices = [str(s) for s in given]
    if diag.get("identified") is False and final.weights is not None and n > 1:
        # the identification test of learned weights (kofs.aggregate.diagnostics): its warning
        # sat folded away under the aggregation's own numbers, below a table of weights that
        # reads as a ranking of the lists
        gain = diag.get("loglik_gain")
        text.notices.append(
            "The list weights are not identified: they fit the lists no better than equal "
            "weights would"
            + (
                f" (a likelihood gain of {float(gain):.2g} nats, within chance)"
                if isinstance(gain, (int, float))
                else ""
            )
            + ", so do not read them as a ranking of the lists. Known genes "
            "(--relevant-genes) can supervise them."
        )
    return text
