"""Re-measure targets 1, 2 and 4 of issue 11 on the real ALL data (docs/results-all.md).

Not a timing benchmark (``bench/run.py`` does not run it): ``python bench/targets_issue11.py``
builds the lists once per setting, then fuses them with ``em``, ``borda`` and ``reliability``
and prints, for the fused top 20, the genes without support (target 1: in the top 5 % of fewer
than two lists; target 2: in the top 10 % of no data-driven list) and, for target 4, how many of
the fused top 50 change when a reversed copy of the first list and a random list are added.
Takes a few minutes (GO similarity for setting 2). Needs ``KOFS_SHARED`` or ``../shared``.
"""

from __future__ import annotations

import numpy as np
from _util import REAL

from kofs.aggregate import aggregate
from kofs.context import Context
from kofs.io.expression import read_expression
from kofs.io.labels import align_labels, read_labels
from kofs.pipeline.rank import rank
from kofs.pipeline.supervision import aggregate_supervised
from kofs.registry import RANKERS
from kofs.sources import read_sources
from kofs.types import Ranking

METHODS = ("em", "borda", "reliability", "reliability/labels")


def _fuse(lists, method, expr, lab):
    """``reliability/labels``: label supervision (the default of ``kofs rank --labels``)."""
    if method != "reliability/labels":
        return aggregate(lists, method, bootstrap=0)
    ctx = Context(expression=expr, categories=lab, seed=0)
    return aggregate_supervised(ctx, lists, "reliability", supervision="labels", bootstrap=0)


def _data():
    expr = read_expression(str(REAL / "ALL" / "ALL_gene_expr.tsv.gz"), gene_column="symbol")
    lab = read_labels(str(REAL / "ALL" / "ALL_samples.tsv"), label_column="lineage")
    return align_labels(expr, lab)


def _robustness(lists, fused, method, expr, lab):
    base = lists[0]
    rev = Ranking("reversed", base.genes, -np.asarray(base.scores), base.higher_is_better)
    rng = np.random.default_rng(1)
    rnd = Ranking("random", base.genes, rng.normal(size=len(base.genes)), True)
    more = _fuse([*lists, rev, rnd], method, expr, lab)
    return 50 - len(set(fused.top(50)) & set(more.top(50)))


def target_1(expr, lab) -> None:
    rankers = ["variance", "fisher", "laplacian", "spec-phi1", "spec-phi2", "spec-phi3"]
    lists = list(rank(expr, labels=lab, rankers=rankers, aggregate="borda", bootstrap=0).lists)
    M = len(lists[0].genes)
    pos = {g: i for i, g in enumerate(lists[0].genes)}
    for drop in ((), ("spec-phi1",)):
        use = [r for r in lists if r.name not in drop]
        for method in METHODS:
            fused = _fuse(use, method, expr, lab)
            weak = [g for g in fused.top(20) if sum(r.ranks[pos[g]] <= 0.05 * M for r in use) < 2]
            print(
                f"target 1, without {list(drop)}, {method}: {len(weak)} weak {weak}; "
                f"top-50 change {_robustness(use, fused, method, expr, lab)}"
            )


def target_2(expr, lab) -> None:
    sources = read_sources(
        go=str(REAL / "GO" / "go-basic_2022-07-01_from_GO.db.obo.gz"),
        go_annotations=str(REAL / "GO" / "goa_human_entrez_2022-Sep12_from_org.Hs.eg.db.tsv.gz"),
        pathways=str(REAL / "KEGG" / "kegg_hsa_pathways_2011-Mar15.tsv"),
        interactions=str(REAL / "PPI" / "string_interactions_example_STRINGdb.tsv.gz"),
    )
    lists = list(rank(expr, labels=lab, sources=sources, aggregate="borda", bootstrap=0).lists)
    data = [r for r in lists if RANKERS.get(r.params["ranker"]).family != "knowledge"]
    M = len(lists[0].genes)
    pos = {g: i for i, g in enumerate(lists[0].genes)}
    for method in METHODS:
        fused = _fuse(lists, method, expr, lab)
        weak = [g for g in fused.top(20) if not any(r.ranks[pos[g]] <= 0.10 * M for r in data)]
        print(
            f"target 2, {method}: {len(weak)} without data support {weak}; "
            f"top-50 change {_robustness(lists, fused, method, expr, lab)}"
        )


if __name__ == "__main__":
    e, lab = _data()
    target_1(e, lab)
    target_2(e, lab)
