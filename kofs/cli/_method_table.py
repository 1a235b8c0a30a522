"""A table of every registered method, read from the registries (for ``kofs methods`` and
docs/methods.md)."""

from __future__ import annotations

import kofs.aggregate  # noqa: F401  (registers aggregators)
import kofs.rankers  # noqa: F401  (registers rankers)
from kofs.pipeline.config import AggregationConfig
from kofs.pipeline.presets import DEFAULTS_VERSION, default_plan
from kofs.registry import AGGREGATORS, RANKERS

KIND_LABEL = {
    "categories": "labels",
    "similarity": "sample similarity",
    "relation": "gene graph",
    "functions": "gene functions",
}


def default_plan_membership(name: str, version: str = DEFAULTS_VERSION) -> str:
    """Where ranker ``name`` is in the default plan of defaults ``version``: ``yes`` (dense and
    sparse matrices), ``dense only``, ``sparse only`` (sparse or chunked, as single-cell counts)
    or ``no``; with or without labels (``fisher`` is the plan of sparse data with labels)."""
    dense = {r for labels in (False, True) for r in default_plan(version, labels=labels)}
    sparse = {
        r for labels in (False, True) for r in default_plan(version, sparse=True, labels=labels)
    }
    if name in dense:
        return "yes" if name in sparse else "dense only"
    return "sparse only" if name in sparse else "no"


def method_rows(*, with_params: bool = False) -> list[dict[str, str]]:
    """One row per ranker and aggregator; ``default`` follows the newest defaults version
    (:func:`default_plan_membership`, as docs/methods.md says it)."""
    default_aggregator = AggregationConfig().aggregate
    rows = []
    for s in RANKERS:
        needs = ", ".join(KIND_LABEL[k] for k in sorted(s.requires))
        if s.requires_one_of:
            alt = " or ".join(KIND_LABEL[k] for k in sorted(s.requires_one_of))
            needs = f"{needs}, {alt}" if needs else alt
        needs = needs or "expression only"
        uses = ", ".join(KIND_LABEL[k] for k in sorted(s.uses - s.requires - s.requires_one_of))
        rows.append(
            {
                "name": s.name,
                "kind": "ranker"
                + (" (multivariate)" if s.multivariate else "")
                + (" (sparse/Dask)" if s.sparse else ""),
                "direction": "higher score = more relevant"
                if s.higher_is_better
                else "lower score = more relevant",
                "needs": needs + (f"; can use {uses}" if uses else ""),
                "default": default_plan_membership(s.name),
                "summary": s.summary,
                "reference": s.reference,
                "params": "; ".join(f"{k}={p.default} ({p.help})" for k, p in s.params.items())
                if with_params
                else "",
            }
        )
    for a in AGGREGATORS:
        rows.append(
            {
                "name": a.name,
                "kind": "aggregator" + (" (the book's KOFS method)" if a.book else ""),
                "direction": "higher score = more relevant",
                "needs": "ranked lists"
                + ("; can use relevant genes (supervised)" if a.supports_relevant else ""),
                "default": "yes" if a.name == default_aggregator else "no",
                "summary": a.summary,
                "reference": a.reference,
                "params": "; ".join(f"{k}={p.default} ({p.help})" for k, p in a.params.items())
                if with_params
                else "",
            }
        )
    return rows


def methods_table(*, fmt: str = "text", with_params: bool = False) -> str:
    """Render :func:`method_rows` as text, TSV or a Markdown table."""
    rows = method_rows(with_params=with_params)
    cols = ["name", "kind", "direction", "needs", "default", "summary", "reference"] + (
        ["params"] if with_params else []
    )
    if fmt == "tsv":
        return "\n".join(["\t".join(cols)] + ["\t".join(r[c] for c in cols) for r in rows]) + "\n"
    if fmt == "markdown":
        head = "| " + " | ".join(cols) + " |\n|" + "---|" * len(cols) + "\n"
        return head + "".join(
            "| " + " | ".join(r[c].replace("|", "/") for c in cols) + " |\n" for r in rows
        )
    lines = []
    for r in rows:
        lines.append(f"{r['name']}  [{r['kind']}]  {r['direction']}")
        lines.append(f"    needs: {r['needs']}; in default plan: {r['default']}")
        lines.append(f"    {r['summary']}")
        lines.append(f"    ref: {r['reference']}")
        if with_params and r["params"]:
            lines.append(f"    params: {r['params']}")
    return "\n".join(lines) + "\n"
