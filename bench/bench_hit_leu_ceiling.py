"""What knowledge can add to HIT_leu on the disjoint B-ALL design, beyond study bias (issue 20).

``python bench/bench_hit_leu_ceiling.py`` (needs ``../shared``; ~1 min): the all-sample run
of ``configs/all_bcell_molbio_disjoint.yaml`` (89 B-lineage samples; knowledge lists built
from the non-haematological cancer genes), and inside the Fisher list's top 5 % (the genes
the data support) how many haematological cancer genes (``leu``, MSK-HEME) the first 50 hold
when that top is ordered by

* the Fisher list itself, and the fused rows of the config (``KOFS_Post``, ``-LAB``);
* the study-bias covariate of the default fusion (log 1 + annotations per gene, the
  covariate :func:`kofs.pipeline.supervision._study_bias` gives the prior): the ordering the
  issue forbids to reward ("being well studied earns nothing by itself");
* each knowledge list, and each knowledge list's residual after its mean in each of ten
  bins of the study bias (what the list says beyond how well studied a gene is, whatever
  the shape of its dependence on it);

with the AUROC of each ordering for ``leu`` inside that top, and of the study bias over all
genes. Prints a table; the figures and their reading are in docs/results-all.md.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import norm, rankdata

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / "configs" / "all_bcell_molbio_disjoint.yaml"
TOP = 0.05
K = 50


def _auroc(score: np.ndarray, positive: np.ndarray) -> float:
    r = rankdata(score)
    n1, n0 = int(positive.sum()), int((~positive).sum())
    return float((r[positive].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def _normal_scores(ranks: np.ndarray) -> np.ndarray:
    """Higher = nearer the top (rank 1)."""
    return norm.isf((rankdata(ranks) - 0.5) / len(ranks))


def measure() -> tuple[str, list[tuple[str, int, float]]] | None:
    """(summary line, rows (ordering, leu in the first K, AUROC inside the top)), or None
    without the shared data."""
    from threadpoolctl import threadpool_limits

    from kofs.context import Context
    from kofs.evaluate.reproduce import _known, _paths, _read_data, read_config
    from kofs.evaluate.rerank import Aggregation, KofsRanking
    from kofs.pipeline.supervision import _study_bias
    from kofs.sources import read_sources

    cfg = read_config(CONFIG)
    resolve = _paths(cfg, CONFIG.parent)
    if not Path(resolve(cfg["expression"])).exists():
        return None
    t0 = time.perf_counter()
    with threadpool_limits(limits=1):
        expr, labels, _ = _read_data(cfg, resolve, str(CONFIG))
        go = {f"go_{k}": v for k, v in (cfg.get("go_settings") or {}).items()}
        sources = read_sources(
            go=resolve(cfg["go"]),
            go_annotations=resolve(cfg["go_annotations"]),
            pathways=resolve(cfg["pathways"]),
            pathway_ids=cfg.get("pathway_ids"),
            go_term_ids=cfg.get("go_term_ids"),
            **go,
        )
        known: dict = {}
        for name, spec in cfg["known_genes"].items():
            known[name] = _known(spec, name, resolve, str(CONFIG), known)
        aggregations = [
            Aggregation("KOFS_Post", "posterior"),
            Aggregation("KOFS_Post-LAB", "posterior", None, {}, "labels"),
        ]
        kofs = KofsRanking(
            sources,
            cfg["lists"],
            aggregations,
            known[cfg["list_relevant_genes"]].genes,
            rename=cfg.get("rename") or {},
            seed=int(cfg.get("seed", 0)),
        )
        results = kofs.run(expr, labels)
        bias_of = _study_bias(Context(expression=expr, sources=sources))
    assert bias_of is not None
    genes = list(expr.genes)
    bias = np.array([bias_of["study bias"][g] for g in genes])
    leu = np.isin(genes, list(known["leu"].genes))
    fisher = np.asarray(results["Fisher score"].ranks, dtype=np.float64)
    n_top = int(round(TOP * len(genes)))
    top = np.argsort(fisher, kind="stable")[:n_top]
    in_top = leu[top]

    def first(score: np.ndarray) -> int:
        """leu genes among the first K of Fisher's top when it is ordered by ``score``."""
        order = top[np.argsort(-score[top], kind="stable")]
        return int(leu[order[:K]].sum())

    rows = [("Fisher score (its own order)", first(-fisher), _auroc(-fisher[top], in_top))]
    for name in ("KOFS_Post", "KOFS_Post-LAB"):
        ranks = np.asarray(results[name].ranks, dtype=np.float64)
        hit = int(leu[np.argsort(ranks, kind="stable")[:K]].sum())
        rows.append((f"{name} (its top {K}, over all genes)", hit, np.nan))
    rows.append(("study bias (forbidden)", first(bias), _auroc(bias[top], in_top)))
    origins = kofs.origins()
    # the study bias's effect on a list inside the top, without assuming its shape: each
    # list's mean normal score in each of ten bins of equal count of the study bias
    edges = np.quantile(bias[top], np.linspace(0, 1, 11)[1:-1])
    design = np.eye(10)[np.searchsorted(edges, bias[top], side="right")]
    for name, (kind, _) in origins.items():
        if kind != "knowledge":
            continue
        z = _normal_scores(np.asarray(results[name].ranks, dtype=np.float64))
        coef, *_ = np.linalg.lstsq(design, z[top], rcond=None)
        resid = np.full(len(genes), -np.inf)
        resid[top] = z[top] - design @ coef
        rows.append((name, first(z), _auroc(z[top], in_top)))
        rows.append((f"{name} beyond study bias", first(resid), _auroc(resid[top], in_top)))
    summary = (
        f"{len(genes)} genes, {int(leu.sum())} leu; Fisher's top {TOP:.0%} = {n_top} genes holding "
        f"{int(in_top.sum())} leu (a random {K} of them: {K * in_top.mean():.1f}); study bias "
        f"AUROC for leu over all genes {_auroc(bias, leu):.3f}; "
        f"{time.perf_counter() - t0:.0f} s"
    )
    return summary, rows


def run() -> list[dict]:
    got = measure()
    if got is None:
        return []
    summary, rows = got
    return [
        {
            "benchmark": f"B-ALL disjoint, Fisher's top {TOP:.0%} ordered by {name}",
            "value": hit,
            "unit": f"leu genes in the first {K}",
            "note": summary.split(";")[0],
        }
        for name, hit, _ in rows
    ]


def main() -> int:
    got = measure()
    if got is None:
        print("needs the shared data (../shared beside the repository or $KOFS_SHARED)")
        return 1
    summary, rows = got
    print(summary)
    print(
        f"\n| ordering of Fisher's top {TOP:.0%} | leu in the first {K} | AUROC (inside the top) |"
    )
    print("|---|---|---|")
    for name, hit, auc in rows:
        print(f"| {name} | {hit} | {'' if np.isnan(auc) else f'{auc:.2f}'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
