"""The default fusion on lists computed from simulated expression data (issue 20).

``bench/bench_fusion.py`` simulates the lists' latent scores directly. Here every list is what
a user brings: a tool's output on a simulated two-group data set. Genes are correlated in
modules (70 % of them, within-module correlation 0.2-0.6), 4 % are changed by half-normal
effects (up or down); each *study* is its own data set with its own sample size. A list is a
Welch t-test's table (p-value and fold change: a signed table), a plain ranking (by -log p,
or by |fold change|) or a top-k list with the universe given, through the public
:func:`kofs.aggregate_lists` (the path of ``kofs aggregate``). Scenarios: independent studies
of different sizes, small studies (3-4 samples per group), unrelated studies beside them,
several tools (t-test, Mann-Whitney, |fold change|) on *one* data set, and two studies of one
lab sharing a batch effect confounded with the groups.

Printed per scenario (means over the seeds): top-|R| precision of the fused list, of the best
and the median input list and of RRA (:func:`kofs.aggregate.rra`, RobustRankAggreg's method:
the tool a user with ranked lists would pick instead); calls at q <= 0.10 and their FDP, for
the fusion and for RRA; seconds per fusion. The simulator was written for the eighteenth
session's sweep, independently of the fusion's model; the findings are in docs/aggregation.md
("Lists computed from expression data").

Run: ``python bench/bench_fusion_expression.py [--seeds N]`` (default 2 seeds, ~3 min).
"""

from __future__ import annotations

import argparse
import time
import zlib
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import false_discovery_control, mannwhitneyu, ttest_ind

from kofs import aggregate_lists

GENES = 5000


@dataclass(frozen=True)
class Study:
    """One data set: ``n`` samples per group; ``tools``: (tool, format) pairs of the lists
    made from it (tool: "t", "mw", "fc"; format: "table", "rank", "top"); ``null``: nothing
    changed; ``lab``: studies of one lab share its batch effect."""

    n: int
    tools: tuple[tuple[str, str], ...] = (("t", "table"),)
    null: bool = False
    lab: int = 0


@dataclass(frozen=True)
class Scenario:
    name: str
    studies: tuple[Study, ...]
    changed: float = 0.04
    batch: float = 1.5  # SD of the batch shift of a lab's modules


def _studies(sizes, fmt="table"):
    return tuple(Study(n, (("t", fmt),)) for n in sizes)


def _tools(fmt: str) -> Study:
    """The t-test, Mann-Whitney and |fold change| lists of one data set of 10 + 10 samples."""
    return Study(10, tuple((tool, fmt) for tool in ("t", "mw", "fc")))


SCENARIOS = (
    Scenario("3 independent studies, signed tables (n 10-20)", _studies((10, 15, 20))),
    Scenario("3 independent studies, rankings", _studies((10, 15, 20), "rank")),
    Scenario("3 independent studies, top-200 lists", _studies((10, 15, 20), "top")),
    Scenario("5 studies of n 3-50, rankings", _studies((3, 5, 10, 25, 50), "rank")),
    Scenario("3 small studies, signed tables (n 3)", _studies((3, 3, 3))),
    Scenario(
        "3 studies + 2 unrelated, signed tables",
        (*_studies((10, 15, 20)), Study(10, null=True), Study(10, null=True)),
    ),
    Scenario("3 tools on one data set, top-200 lists", (_tools("top"),)),
    Scenario("3 tools on one data set, rankings", (_tools("rank"),)),
    Scenario(
        "2 tools' tables + |fold change| ranking, one data set",
        (Study(10, (("t", "table"), ("mw", "table"), ("fc", "rank"))),),
    ),
    Scenario(
        "2 studies of one lab (batch) + 3 clean, signed tables",
        (Study(10, lab=1), Study(12, lab=1), *_studies((10, 10, 10))),
    ),
    Scenario("nothing changed: 3 studies, signed tables", _studies((10, 15, 20)), changed=0.0),
    Scenario(
        "nothing changed: 2 tools on one data set, rankings (n 25)",
        (Study(25, (("t", "rank"), ("mw", "rank")), null=True),),
        changed=0.0,
    ),
)


class World:
    """Genes in modules of correlated expression and the changed genes' effects."""

    def __init__(self, rng: np.random.Generator, changed: float) -> None:
        in_module = rng.random(GENES) < 0.7
        self.module = np.where(in_module, rng.integers(0, int(0.7 * GENES) // 25, GENES), -1)
        n_modules = int(self.module.max()) + 1
        self.rho = rng.uniform(0.2, 0.6, n_modules)
        k = int(round(changed * GENES))
        self.changed = np.zeros(GENES, bool)
        self.changed[rng.choice(GENES, k, replace=False)] = True
        self.delta = np.zeros(GENES)
        self.delta[self.changed] = np.abs(rng.normal(size=k)) * rng.choice([-1.0, 1.0], k)
        batch = np.zeros(GENES)
        for m in rng.choice(n_modules, 6, replace=False):
            batch[self.module == m] = rng.choice([-1.0, 1.0])
        batch[self.changed] = 0.0  # the truth stays the changed genes
        self.batch = batch

    def samples(self, rng: np.random.Generator, n: int, shift: np.ndarray) -> np.ndarray:
        factors = rng.normal(size=(n, len(self.rho)))
        X = rng.normal(size=(n, GENES))
        m = self.module >= 0
        r = np.zeros(GENES)
        r[m] = self.rho[self.module[m]]
        X[:, m] = np.sqrt(r[m]) * factors[:, self.module[m]] + np.sqrt(1 - r[m]) * X[:, m]
        return X + shift


def _lists(s: Scenario, seed: int):
    rng = np.random.default_rng([seed, zlib.crc32(s.name.encode())])
    world = World(rng, s.changed)
    genes = np.array([f"g{i:05d}" for i in range(GENES)])
    lists: dict[str, object] = {}
    for j, study in enumerate(s.studies):
        shift = np.zeros(GENES) if study.null else world.delta.copy()
        if study.lab:
            shift = shift + s.batch * world.batch
        A = world.samples(rng, study.n, 0.0)
        B = world.samples(rng, study.n, shift)
        fc = B.mean(axis=0) - A.mean(axis=0)
        for tool, fmt in study.tools:
            name = f"study{j + 1}-{tool}-{fmt}"
            if tool == "t":
                p = ttest_ind(B, A, axis=0, equal_var=False).pvalue
            elif tool == "mw":
                p = mannwhitneyu(B, A, axis=0).pvalue
            else:
                p = None
            score = np.abs(fc) if p is None else -np.log(np.maximum(p, 1e-300))
            if fmt == "table":
                # as DESeq2 writes it (the columns by which kofs recognises the table)
                lists[name] = pd.DataFrame(
                    {
                        "baseMean": 100.0,
                        "log2FoldChange": fc,
                        "pvalue": p,
                        "padj": false_discovery_control(p),
                    },
                    index=genes,
                )
            elif fmt == "rank":
                lists[name] = pd.Series(score, index=genes)
            else:
                lists[name] = list(genes[np.argsort(-score, kind="stable")[:200]])
    return genes, lists, set(genes[world.changed])


def _precision(order, truth, k) -> float:
    return float(np.mean([g in truth for g in order[:k]]))


def _order(final) -> list[str]:
    return [final.genes[i] for i in final.order()]


def _calls(final, truth) -> tuple[int, float]:
    q = final.statistics.get("q_value")
    if q is None:
        return 0, 0.0
    called = np.asarray(final.genes)[q <= 0.10]
    return int(called.size), float(
        np.mean([g not in truth for g in called])
    ) if called.size else 0.0


def _list_precision(lst, truth, k) -> float:
    if isinstance(lst, pd.DataFrame):
        order = lst.index[np.argsort(lst["pvalue"].to_numpy(), kind="stable")]
    elif isinstance(lst, pd.Series):
        order = lst.index[np.argsort(-lst.to_numpy(), kind="stable")]
    else:
        return float(np.mean([g in truth for g in lst[:k]])) * min(len(lst), k) / k
    return _precision(list(order), truth, k)


def scenario_row(s: Scenario, seeds: int) -> dict:
    acc: dict[str, list[float]] = {}
    for seed in range(seeds):
        genes, lists, truth = _lists(s, seed)
        k = max(len(truth), 200)
        # rankings (Series) are read best first by their scores
        direction = "desc" if any(isinstance(v, pd.Series) for v in lists.values()) else None
        t0 = time.perf_counter()
        fused = aggregate_lists(lists, universe=list(genes), direction=direction)
        seconds = time.perf_counter() - t0
        rra = aggregate_lists(lists, aggregate="rra", universe=list(genes), direction=direction)
        each = [_list_precision(v, truth, k) for v in lists.values()]
        calls, fdp = _calls(fused.final, truth)
        rra_calls, rra_fdp = _calls(rra.final, truth)
        row = {
            "fused": _precision(_order(fused.final), truth, k) if truth else np.nan,
            "best": max(each) if truth else np.nan,
            "median": float(np.median(each)) if truth else np.nan,
            "rra": _precision(_order(rra.final), truth, k) if truth else np.nan,
            "calls": calls,
            "fdp": fdp,
            "rra_calls": rra_calls,
            "rra_fdp": rra_fdp,
            "seconds": seconds,
        }
        for key, value in row.items():
            acc.setdefault(key, []).append(value)
    return {"scenario": s.name, **{k: float(np.mean(v)) for k, v in acc.items()}}


def table(seeds: int) -> list[dict]:
    rows = []
    print(
        "| scenario | fused | best list | median list | RRA | calls (FDP) | RRA calls (FDP) | s |\n"
        "|---|---|---|---|---|---|---|---|",
        flush=True,
    )
    for s in SCENARIOS:
        r = scenario_row(s, seeds)
        rows.append(r)
        print(
            f"| {r['scenario']} | {r['fused']:.2f} | {r['best']:.2f} | {r['median']:.2f} | "
            f"{r['rra']:.2f} | {r['calls']:.0f} ({r['fdp']:.2f}) | {r['rra_calls']:.0f} "
            f"({r['rra_fdp']:.2f}) | {r['seconds']:.1f} |",
            flush=True,
        )
    return rows


def run() -> list[dict]:
    """Rows for ``bench/run.py``: the share of scenarios with a truth where the fused list is
    within 0.02 of the best input list or above, and the mean FDP of the fusion's calls."""
    rows = table(2)
    signal = [r for r in rows if not np.isnan(r["best"])]
    with_calls = [r for r in rows if r["calls"] > 0]
    return [
        {
            "benchmark": "fusion on expression-data lists: scenarios within 0.02 of the best list",
            "value": float(np.mean([r["fused"] >= r["best"] - 0.02 for r in signal])),
            "unit": "share",
        },
        {
            "benchmark": "fusion on expression-data lists: mean FDP of the calls at q <= 0.10",
            "value": float(np.mean([r["fdp"] for r in with_calls])) if with_calls else 0.0,
            "unit": "FDP",
        },
    ]


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seeds", type=int, default=2)
    table(ap.parse_args().seeds)
