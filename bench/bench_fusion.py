"""Planted-truth benchmark of the default fusion (``posterior``): weights, intervals, FDR,
precision against the best single list, knowledge that does and does not predict relevance.

Every scenario is simulated by :func:`kofs.datasets.planted.planted_lists` (independent of the
aggregator: lists of graded quality, random and reversed lists, lists that share part of their
noise (with and without relevant genes: data lists computed from one matrix share noise),
near copies of a random list (99.5 % of their noise shared), heavy-tailed noise, partial top-k lists, knowledge lists with and without signal and with
annotation bias) over several seeds, and fused by the default path
(:func:`kofs.aggregate.aggregate` with the default aggregator, the study-bias covariate given
as ``kofs rank`` gives it). Printed per scenario (means over seeds):

* ``prec@k`` of the fused list and of the best single data list (k = number of relevant genes);
* ``FDP`` and ``power`` of the genes with q <= 0.10, and how many there are (the FDP with its
  Monte-Carlo standard error over the seeds);
* ``noise w``: the weight of the random and reversed lists together;
* ``order``: share of seeds where the informative lists' weights (each list's share of the
  fused evidence) follow their true quality; ``order μ``: the same of their fitted separations
  (the reliability a reader is shown; a partial list's weight is smaller than its separation's
  share, since it tells about its top genes only); ``order mean w``: whether the weights
  averaged over the seeds follow the true quality (1 / 0: a bias check, which the sampling
  error of single seeds does not fail); ``misorder in CI``: share of the seeds with misordered
  weights in which every misordered pair's 95 % weight intervals overlap (the run reports the
  order as uncertain);
* ``cover``: share of informative lists whose 95 % interval of mu covers the true mu (normal
  noise only: the binormal model's parameter), with its binomial standard error over the
  intervals (10 seeds give 30 intervals per scenario: SE ~0.04 at 0.95);
* ``moved``: genes of the fused top 50 that change when knowledge is added (for null
  knowledge: what knowledge that does not predict relevance moves);
* RRA's ``prec@k`` and discoveries at q <= 0.10 (the tool a user would pick instead);
* seconds per fusion.

Run: ``python bench/bench_fusion.py [--seeds N] [--quick]``; the timing row
``python bench/bench_fusion.py --timing`` fuses 10 lists x 50,000 genes;
``python bench/bench_fusion.py --matrices`` runs ``kofs rank`` (the whole default path) on
simulated matrices -- pure noise with and without labels, a sparse and a dense labelled
association, two groups without labels -- against a t-test with Benjamini-Hochberg;
``python bench/bench_fusion.py --tables`` fuses simulated tables of p-values (``kofs aggregate``'s
calibrated reading, and ``--ranks-only``'s) against Benjamini-Hochberg on one table;
``python bench/bench_fusion.py --stress`` runs scenarios outside the benchmark (20 and 40
random lists, reversed lists, random lists sharing noise, 30 % and 10 relevant genes, weak
lists, top-k lists sharing noise: where the model holds and where it breaks);
``python bench/bench_fusion.py --real-tables`` runs two DE tools on the same real ALL samples
(random halves of one group, and a real contrast) against Benjamini-Hochberg.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np

from kofs.aggregate import aggregate
from kofs.datasets.planted import DataList, KnowledgeList, PlantedLists, planted_lists
from kofs.types import Ranking

RANDOM = tuple(DataList(f"random{k + 1}", 0.0) for k in range(6))
GRADED = (DataList("good", 2.0), DataList("fair", 1.4), DataList("weak", 0.8))


@dataclass(frozen=True)
class Scenario:
    name: str
    data: tuple[DataList, ...]
    knowledge: tuple[KnowledgeList, ...] = ()
    bias_relevance: float = 0.0
    compare_without_knowledge: bool = False


SCENARIOS = (
    Scenario("graded + 6 random + reversed", (*GRADED, *RANDOM, DataList("reversed", -1.5))),
    Scenario(
        "correlated lists sharing false positives",
        (
            *GRADED,
            DataList("shared-a", 0.8, shared=0.6, group="fp"),
            DataList("shared-b", 0.8, shared=0.6, group="fp"),
            *RANDOM[:3],
        ),
    ),
    Scenario("heavy-tailed noise (t3)", tuple(DataList(d.name, d.mu, noise="t3") for d in GRADED)),
    Scenario(
        "partial top-300 lists",
        (DataList("good", 2.0, top=300), DataList("fair", 1.4, top=300), *GRADED[2:], *RANDOM[:3]),
    ),
    Scenario(
        "informative knowledge + annotation bias",
        (*GRADED, *RANDOM[:3]),
        (KnowledgeList("GO-vote", 1.0, bias=1.0), KnowledgeList("PPI-prop", 0.0, bias=1.0)),
        bias_relevance=0.3,
        compare_without_knowledge=True,
    ),
    Scenario(
        "informative lists sharing noise",
        tuple(
            DataList(name, mu, shared=0.3, group="noise")
            for name, mu in (("good", 2.0), ("fair", 1.4), ("weak", 0.8))
        ),
    ),
    Scenario(
        "lists sharing noise, no signal",
        tuple(DataList(f"shared{k + 1}", 0.0, shared=0.3, group="noise") for k in range(4)),
    ),
    Scenario(
        "near copies of a random list, no signal",
        (
            DataList("copy-a", 0.0, shared=0.995, group="copy"),
            DataList("copy-b", 0.0, shared=0.995, group="copy"),
            DataList("random1", 0.0),
        ),
    ),
    Scenario(
        "knowledge that does not predict relevance",
        (*GRADED, *RANDOM[:3]),
        (KnowledgeList("GO-vote", 0.0, bias=1.5), KnowledgeList("PPI-prop", 0.0, bias=1.0)),
        compare_without_knowledge=True,
    ),
)


def _truth(planted: PlantedLists, genes) -> np.ndarray:
    return np.fromiter((g in planted.relevant for g in genes), bool, len(genes))


def _prec(order, truth, k) -> float:
    return float(truth[order[:k]].mean())


def _run(s: Scenario, seed: int, n_genes: int, n_relevant: int) -> dict:
    pl = planted_lists(
        n_genes,
        n_relevant,
        data=s.data,
        knowledge=s.knowledge,
        bias_relevance=s.bias_relevance,
        seed=seed,
    )
    cov = {"study bias": dict(zip(pl.genes, pl.study_bias, strict=True))} if s.knowledge else None
    t0 = time.perf_counter()
    fused = aggregate(pl.rankings, covariates=cov, seed=seed)
    seconds = time.perf_counter() - t0
    truth = _truth(pl, fused.genes)
    k = int(truth.sum())
    order = fused.order()
    best = 0.0
    names = list(fused.list_names)
    data_names = [d.name for d in s.data]
    for r in pl.rankings:
        if r.name in data_names:
            t = _truth(pl, r.genes)
            best = max(best, _prec(r.order(), t, k))
    q = fused.statistics.get("q_value")
    sel = q <= 0.10 if q is not None else np.zeros(len(truth), bool)
    w = dict(zip(names, fused.weights, strict=True))
    noise = sum(w[d.name] for d in s.data if d.mu <= 0)
    informative = [d for d in s.data if d.mu > 0 and d.detect == 1.0]
    ws = [w[d.name] for d in informative]
    mus = [d.mu for d in informative]
    fitted = [fused.info["mu"][names.index(d.name)] for d in informative]

    def in_order(v: list[float]) -> bool:
        return all(
            (v[i] > v[j]) == (mus[i] > mus[j])
            for i in range(len(v))
            for j in range(len(v))
            if mus[i] != mus[j]
        )

    # a misordered pair of weights whose 95 % intervals overlap: the order the run reports as
    # uncertain (sampling error the interval owns), not a bias of the fit
    wci = fused.diagnostics.get("weight_ci")
    misordered = [
        (i, j) for i in range(len(ws)) for j in range(len(ws)) if mus[i] > mus[j] and ws[i] <= ws[j]
    ]
    within = np.nan
    if misordered and wci is not None:
        at = [names.index(d.name) for d in informative]
        within = float(all(wci[at[i]][0] <= wci[at[j]][1] for i, j in misordered))
    cover = []
    ci = fused.diagnostics.get("mu_ci")
    if ci is not None:
        for d in informative:
            if d.noise == "normal" and d.shared == 0 and not d.top:
                lo, hi = ci[names.index(d.name)]
                cover.append(lo <= d.mu <= hi)
    moved = np.nan
    if s.compare_without_knowledge:
        data_only = aggregate(
            [r for r in pl.rankings if r.name in data_names], seed=seed, params={"resamples": 0}
        )
        moved = 50 - len(set(fused.top(50)) & set(data_only.top(50)))
    rra = aggregate([r for r in pl.rankings if r.name in data_names], "rra")
    rt = _truth(pl, rra.genes)
    return {
        "prec": _prec(order, truth, k),
        "best": best,
        "n_sel": int(sel.sum()),
        "fdp": float((~truth[sel]).mean()) if sel.any() else 0.0,
        "power": float(truth[sel].sum() / max(k, 1)),
        "noise_w": noise,
        "order": float(in_order(ws)) if len(informative) > 1 else np.nan,
        "order_mu": float(in_order(fitted)) if len(informative) > 1 else np.nan,
        "misorder_ci": within,
        "weights": ws,
        "true_mu": mus,
        "cover": float(np.mean(cover)) if cover else np.nan,
        "n_cover": len(cover),
        "moved": moved,
        "rra_prec": _prec(rra.order(), rt, k),
        "rra_sel": int((rra.statistics["q_value"] <= 0.10).sum()),
        "seconds": seconds,
    }


COLUMNS = (
    ("prec", "prec@k", "{:.2f}"),
    ("best", "best list", "{:.2f}"),
    ("n_sel", "q<=.1", "{:.0f}"),
    ("fdp", "FDP", "{:.3f}"),
    ("power", "power", "{:.2f}"),
    ("noise_w", "noise w", "{:.3f}"),
    ("order", "order", "{:.2f}"),
    ("order_mu", "order μ", "{:.2f}"),
    ("order_mean", "order mean w", "{:.0f}"),
    ("misorder_ci", "misorder in CI", "{:.2f}"),
    ("cover", "cover", "{:.2f}"),
    ("moved", "moved", "{:.1f}"),
    ("rra_prec", "RRA prec", "{:.2f}"),
    ("rra_sel", "RRA q<=.1", "{:.0f}"),
    ("seconds", "s", "{:.2f}"),
)


def _monte_carlo_se(key: str, rows: list[dict]) -> float:
    """The Monte-Carlo standard error printed beside a column's mean: the FDP's over the seeds
    (SD / sqrt(seeds)), the coverage's over the pooled intervals (binomial); NaN for others."""
    if key == "fdp" and len(rows) > 1:
        return float(np.std([r["fdp"] for r in rows], ddof=1) / np.sqrt(len(rows)))
    if key == "cover":
        n = sum(r["n_cover"] for r in rows)
        if n:
            p = sum(r["cover"] * r["n_cover"] for r in rows if r["n_cover"]) / n
            return float(np.sqrt(p * (1 - p) / n))
    return np.nan


def _order_of_means(rows: list[dict]) -> None:
    """Whether the informative lists' weights averaged over the seeds follow their true
    quality (1 / 0, set on every row; NaN with fewer than two informative lists): a fit biased
    towards the wrong list fails it, sampling error of single seeds does not."""
    mus = rows[0]["true_mu"]
    value = np.nan
    if len(mus) > 1:
        mean = np.mean([r["weights"] for r in rows], axis=0)
        value = float(
            all(
                (mean[i] > mean[j]) == (mus[i] > mus[j])
                for i in range(len(mus))
                for j in range(len(mus))
                if mus[i] != mus[j]
            )
        )
    for r in rows:
        r["order_mean"] = value


def table(seeds: int, n_genes: int, n_relevant: int) -> list[str]:
    lines = [
        f"planted lists: {n_genes} genes, {n_relevant} relevant, {seeds} seeds per scenario "
        "(means; FDP: mean false discovery proportion of q <= 0.10; ± Monte-Carlo SE)",
        "| scenario | " + " | ".join(c[1] for c in COLUMNS) + " |",
        "|---|" + "---|" * len(COLUMNS),
    ]
    pooled_fdp = []
    for s in SCENARIOS:
        rows = [_run(s, seed, n_genes, n_relevant) for seed in range(seeds)]
        _order_of_means(rows)
        pooled_fdp += [r["fdp"] for r in rows if r["n_sel"] > 0]
        cells = []
        for key, _, fmt in COLUMNS:
            vals = np.array([r[key] for r in rows], dtype=float)
            cell = "-" if np.all(np.isnan(vals)) else fmt.format(np.nanmean(vals))
            se = _monte_carlo_se(key, rows)
            cells.append(cell if np.isnan(se) else f"{cell} ± {fmt.format(se)}")
        lines.append(f"| {s.name} | " + " | ".join(cells) + " |")
        print(lines[-1], flush=True)
    se = np.std(pooled_fdp) / np.sqrt(max(len(pooled_fdp), 1))
    lines.append(
        f"mean FDP over every run with discoveries: {np.mean(pooled_fdp):.3f} (SE {se:.3f})"
    )
    return lines


def _signed_tables(genes: int, tables: int, shared: float, seed: int) -> list[Ranking]:
    """``tables`` DE tables (two-sided p-values with their effects' signs, as
    ``kofs.aggregate_lists`` reads a DESeq2 table) sharing ``shared`` of their noise; 5 % of
    the genes shifted by Gamma(2, 1.5) SD, up or down."""
    from scipy.stats import norm

    rng = np.random.default_rng(seed)
    ids = tuple(f"G{i}" for i in range(genes))
    shift = rng.gamma(2.0, 1.5, genes) * np.where(rng.random(genes) < 0.5, -1.0, 1.0)
    shift *= np.arange(genes) < genes // 20
    common = rng.normal(size=genes)
    out = []
    for k in range(tables):
        z = shift + np.sqrt(shared) * common + np.sqrt(1 - shared) * rng.normal(size=genes)
        out.append(
            Ranking(
                f"table{k}",
                ids,
                2 * norm.sf(np.abs(z)),
                False,
                info={"null": {"distribution": "p"}, "effect_signs": np.sign(z)},
            )
        )
    return out


def _best_time(lists: list[Ranking], params: dict, repeat: int) -> tuple[float, float]:
    """The best wall and CPU seconds of ``repeat`` fusions of ``lists``."""
    best = cpu = np.inf
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        aggregate(lists, params=params)
        best = min(best, time.perf_counter() - t0)
        cpu = min(cpu, time.process_time() - c0)
    return best, cpu


def timing(repeat: int = 3) -> list[str]:
    """Wall time (best of ``repeat``) and the process's CPU time over all its threads (best
    of ``repeat``: on a shared machine the CPU time varies less with the other load)."""
    pl = planted_lists(50_000, 1_500, seed=0)
    tables = _signed_tables(50_000, 10, 0.6, seed=0)
    out = []
    for lists, kind in ((list(pl.rankings), "lists"), (tables, "signed DE tables")):
        for params, label in (({}, "with intervals (default)"), ({"resamples": 0}, "fit only")):
            best, cpu = _best_time(lists, params, repeat)
            out.append(
                f"10 {kind} x 50,000 genes, posterior {label}: {best:.2f} s wall, {cpu:.2f} s "
                f"CPU (best of {repeat})"
            )
            print(out[-1], flush=True)
    return out


@dataclass(frozen=True)
class MatrixScenario:
    name: str
    samples: int
    genes: int
    moved: int = 0  # genes shifted in the first half of the samples
    shift: float = 0.0  # by this many SDs
    labels: str = "none"  # "none", "groups" (the halves), "random" (a random half)


MATRIX_SCENARIOS = (
    MatrixScenario("pure noise, no labels", 60, 3000),
    MatrixScenario("pure noise, random labels", 60, 3000, labels="random"),
    MatrixScenario("sparse: 30 of 5,000 genes by 2 SD, labels", 20, 5000, 30, 2.0, "groups"),
    MatrixScenario("dense: 300 of 5,000 genes by 1 SD, labels", 20, 5000, 300, 1.0, "groups"),
    MatrixScenario("two groups in 150 of 3,000 genes by 1.5 SD, no labels", 60, 3000, 150, 1.5),
)


def _matrix_run(s: MatrixScenario, seed: int) -> dict:
    """One ``kofs.rank`` of a simulated matrix (default plan) against the tool a user would
    pick instead: with labels a per-gene t-test with Benjamini-Hochberg at 0.10."""
    from scipy.stats import false_discovery_control, ttest_ind

    from kofs.pipeline.rank import rank
    from kofs.types import Expression, SampleCategories

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(s.samples, s.genes))
    half = s.samples // 2
    X[:half, : s.moved] += s.shift
    names = tuple(f"s{j}" for j in range(s.samples))
    genes = tuple(f"g{i:05d}" for i in range(s.genes))
    groups = np.arange(s.samples) < half
    if s.labels == "random":
        groups = rng.permutation(groups)
    labels = None
    if s.labels != "none":
        labels = SampleCategories(samples=names, labels=tuple("ab"[int(g)] for g in groups))
    truth = np.arange(s.genes) < s.moved
    result = rank(Expression(values=X, genes=genes, samples=names), labels=labels)
    fused = result.final
    q = fused.statistics.get("q_value")
    index = np.array([int(g[1:]) for g in fused.genes])
    sel = np.zeros(s.genes, bool)
    if q is not None:
        sel[index[q <= 0.10]] = True
    test = fused.diagnostics.get("signal_test") or {}
    row = {
        "calls": int(sel.sum()),
        "fdp": float((~truth[sel]).mean()) if sel.any() else 0.0,
        "power": float(truth[sel].sum() / s.moved) if s.moved else np.nan,
        "signal_p": float(test.get("p_value", np.nan)),
        "t_calls": np.nan,
        "t_fdp": np.nan,
        "t_power": np.nan,
    }
    if labels is not None:
        p = ttest_ind(X[groups], X[~groups], axis=0).pvalue
        t_sel = false_discovery_control(p) <= 0.10
        row.update(
            t_calls=int(t_sel.sum()),
            t_fdp=float((~truth[t_sel]).mean()) if t_sel.any() else 0.0,
            t_power=float(truth[t_sel].sum() / s.moved) if s.moved else np.nan,
        )
    return row


def _scenario_table(title, columns, scenarios, run, keys, seeds, cell) -> list[str]:
    """A markdown table of the mean of ``run(scenario, seed)[key]`` over the seeds, one row
    per scenario (each printed as it is done), formatted by ``cell(key, values)``."""
    lines = [title, "| scenario | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    for s in scenarios:
        rows = [run(s, seed) for seed in range(seeds)]
        cells = [cell(k, np.array([r[k] for r in rows], dtype=float)) for k in keys]
        lines.append(f"| {s.name} | " + " | ".join(cells) + " |")
        print(lines[-1], flush=True)
    return lines


def matrix_table(seeds: int) -> list[str]:
    """Calls at q <= 0.10 of ``kofs rank`` on simulated matrices (its whole default path: the
    plan's lists, the signal tests, the fusion), with the t-test + BH a user would run."""

    def cell(k: str, v: np.ndarray) -> str:
        if np.all(np.isnan(v)):
            return "-"
        if k == "signal_p":
            return f"{np.nanmedian(v):.2g}"
        return f"{np.nanmean(v):.{1 if k in ('calls', 't_calls') else 2}f}"

    return _scenario_table(
        f"kofs rank on simulated matrices, {seeds} seeds (means; signal p: median p-value of the "
        "sample-structure / label test; t-test: Benjamini-Hochberg q <= 0.10)",
        ["calls", "FDP", "power", "signal p", "t-test calls", "t-test FDP", "t-test power"],
        MATRIX_SCENARIOS,
        _matrix_run,
        ("calls", "fdp", "power", "signal_p", "t_calls", "t_fdp", "t_power"),
        seeds,
        cell,
    )


@dataclass(frozen=True)
class TableScenario:
    """Two-sided p-value tables of ``tables`` tools whose z-scores share ``shared`` of their
    noise (``extra``: rankings beside them, informative ones of separation 1.5, random ones)."""

    name: str
    tables: int
    shared: float
    informative: int = 0
    random: int = 0
    #: the relevant genes go up (``"up"``) or up and down at random (``"both"``)
    directions: str = "up"
    #: their shift: 3 SD (``"fixed"``) or Gamma(2, 1.5) SD, mean 3 (``"varying"``)
    effect: str = "fixed"
    #: the last table's contrast is the other way round (its fold changes negated)
    reversed: bool = False


TABLE_SCENARIOS = (
    TableScenario("one table", 1, 0.0),
    TableScenario("two independent tables", 2, 0.0),
    TableScenario("two tables sharing 60 % of their noise", 2, 0.6),
    TableScenario("two near copies (97 %)", 2, 0.97),
    TableScenario("one table, an informative ranking, four random ones", 1, 0.0, 1, 4),
    TableScenario("two tables sharing 60 %, genes up and down", 2, 0.6, directions="both"),
    TableScenario(
        "two tables sharing 60 %, effects of varying size, up and down",
        2,
        0.6,
        directions="both",
        effect="varying",
    ),
    TableScenario(
        "three tools on one data set (80 %), one contrast reversed",
        3,
        0.8,
        directions="both",
        reversed=True,
    ),
)


def _table_run(s: TableScenario, seed: int, genes: int = 4000, relevant: int = 200) -> dict:
    """``kofs.aggregate_lists`` of simulated DE tables (z shifted by 3 SD for the relevant
    genes, or as the scenario says; two-sided p-values and fold changes), read through their
    p-values and directions (signed z-scores) and as rankings."""
    import pandas as pd
    from scipy.stats import false_discovery_control, norm

    from kofs.pipeline.user_lists import aggregate_lists

    rng = np.random.default_rng(seed)
    truth = np.arange(genes) < relevant
    ids = [f"G{i}" for i in range(genes)]
    common = rng.normal(size=genes)
    shift = np.full(genes, 3.0) if s.effect == "fixed" else rng.gamma(2.0, 1.5, size=genes)
    if s.directions == "both":
        shift *= np.where(rng.random(genes) < 0.5, -1.0, 1.0)
    lists: dict[str, object] = {}
    first_p = None
    for k in range(s.tables):
        z = (
            shift * truth
            + np.sqrt(s.shared) * common
            + np.sqrt(1 - s.shared) * rng.normal(size=genes)
        )
        p = 2 * norm.sf(np.abs(z))
        first_p = p if first_p is None else first_p
        fold = -z / 3 if (s.reversed and k == s.tables - 1) else z / 3
        lists[f"table{k}"] = pd.DataFrame(
            {"baseMean": 100.0, "log2FoldChange": fold, "pvalue": p, "padj": p}, index=ids
        )
    for k in range(s.informative):
        lists[f"ranking{k}"] = pd.Series(rng.normal(size=genes) + 1.5 * truth, index=ids)
    for k in range(s.random):
        lists[f"random{k}"] = pd.Series(rng.normal(size=genes), index=ids)
    unsigned = {  # the tables without their fold changes: read through their p-values alone
        k: v[["pvalue"]] if isinstance(v, pd.DataFrame) else list(v.sort_values().index[::-1])
        for k, v in lists.items()
    }
    row = {}
    for key, given, ranks_only in (("p", lists, False), ("u", unsigned, False), ("r", lists, True)):
        # the rankings beside (as gene ids in rank order without the tables' fold changes)
        direction = "desc" if (s.informative or s.random) and key != "u" else None
        column = "pvalue" if key == "u" else None
        final = aggregate_lists(
            given, direction=direction, ranks_only=ranks_only, score_column=column
        ).final
        q = final.statistics.get("q_value")
        sel = np.zeros(genes, bool)
        if q is not None:
            sel[[int(g[1:]) for g in np.asarray(final.genes)[q <= 0.10]]] = True
        row[f"{key}_calls"] = int(sel.sum())
        row[f"{key}_fdp"] = float((~truth[sel]).mean()) if sel.any() else 0.0
    bh = false_discovery_control(first_p) <= 0.10
    row["bh_calls"], row["bh_fdp"] = int(bh.sum()), float((~truth[bh]).mean()) if bh.any() else 0.0
    return row


def tables_table(seeds: int) -> list[str]:
    """Calls at q <= 0.10 of ``kofs aggregate`` on simulated p-value tables: the default
    (with fold changes: signed z-scores), through their p-values alone (the tables without
    their fold changes) and as rankings (``--ranks-only``), with Benjamini-Hochberg on the
    first table."""
    return _scenario_table(
        f"kofs aggregate on simulated p-value tables (4,000 genes, 200 shifted by 3 SD), {seeds} "
        "seeds (means; BH: Benjamini-Hochberg q <= 0.10 on the first table)",
        [
            "calls",
            "FDP",
            "p-values alone calls",
            "p-values alone FDP",
            "ranks-only calls",
            "ranks-only FDP",
            "BH calls",
            "BH FDP",
        ],
        TABLE_SCENARIOS,
        _table_run,
        ("p_calls", "p_fdp", "u_calls", "u_fdp", "r_calls", "r_fdp", "bh_calls", "bh_fdp"),
        seeds,
        lambda k, v: f"{v.mean():.1f}" if k.endswith("calls") else f"{v.mean():.3f}",
    )


#: (name, lists, shared noise, top-k (0: full), universe given) of the null cases.
NULL_CASES = (
    ("four lists sharing 30 % of their noise", 4, 0.3, 0, False),
    ("four independent random lists", 4, 0.0, 0, False),
    ("three lists sharing 60 % of their noise", 3, 0.6, 0, False),
    ("two random top-100 lists, universe 3,000", 2, 0.0, 100, True),
    ("two random top-100 lists, no universe (their union)", 2, 0.0, 100, False),
    ("three random top-300 lists, no universe (their union)", 3, 0.0, 300, False),
)


def null_table(seeds: int) -> list[str]:
    """Size of the relevant-class and agreement tests where no gene is relevant: the share of
    seeds with p <= 0.05 (and <= 0.20 for the relevant-class test)."""
    lines = [
        f"tests under the null, {seeds} seeds (3,000 genes, no relevant gene; share of seeds "
        "rejecting)",
        "| lists | relevant-class p <= .05 | relevant-class p <= .20 | agreement p <= .05 | "
        "calls at q <= .10 |",
        "|---|---|---|---|---|",
    ]
    for name, n, shared, top, universe in NULL_CASES:
        data = tuple(
            DataList(f"n{k}", 0.0, shared=shared, group="noise", top=top) for k in range(n)
        )
        rc, ag, calls = [], [], []
        for seed in range(seeds):
            pl = planted_lists(3000, 90, data=data, seed=seed)
            fused = aggregate(
                pl.rankings,
                seed=seed,
                params={"resamples": 0},
                universe=len(pl.genes) if universe else None,
            )
            d = fused.diagnostics
            q = fused.statistics.get("q_value")
            calls.append(0 if q is None else int(np.sum(q <= 0.10)))
            test = d.get("relevant_class_test")
            rc.append(test["p_value"] if test else 1.0)
            ag.append(d["agreement_test"]["p_value"])
        r, a = np.array(rc), np.array(ag)
        lines.append(
            f"| {name} | {np.mean(r <= 0.05):.3f} | {np.mean(r <= 0.2):.2f} | "
            f"{np.mean(a <= 0.05):.3f} | {np.mean(calls):.1f} |"
        )
        print(lines[-1], flush=True)
    return lines


def real_tables_table(splits: int) -> list[str]:
    """Two DE tools (Welch's t-test and the Mann-Whitney test, each a limma-like table with
    its fold change) on the same real samples: random halves of the 42 NEG B-ALL samples of
    the ALL data (nothing differs but chance and the genes' correlation), and BCR/ABL (37)
    against NEG (42). Calls at q <= 0.10 of the default fusion (signed tables), of the same
    tables read through their p-values alone (``kofs aggregate t.tsv:P.Value`` without the
    fold change), both also against the theoretical null (``--aggregate-param
    null=theoretical``; the default reads each table against its empirical null), and of
    Benjamini-Hochberg on each table -- what a user would run instead."""
    import pandas as pd
    from _util import REAL, all_expression
    from scipy.stats import false_discovery_control, mannwhitneyu, ttest_ind

    from kofs.pipeline.user_lists import aggregate_lists

    if not (REAL / "ALL").is_dir():
        return [f"real tables: skipped, {REAL / 'ALL'} is absent (set KOFS_SHARED)"]
    expr = all_expression()
    first: dict[str, int] = {}
    for i, g in enumerate(expr.genes):
        first.setdefault(g, i)  # a symbol's first row
    genes = list(first)
    keep = list(first.values())
    X = np.asarray(expr.values)[:, keep]
    lab = pd.read_csv(REAL / "ALL" / "ALL_samples.tsv", sep="\t", dtype=str)
    group = dict(zip(lab["sample_id"], lab["lineage"] + ":" + lab["mol_biol"], strict=True))
    of = np.array([group[s] for s in expr.samples])
    neg, bcr = np.flatnonzero(of == "B:NEG"), np.flatnonzero(of == "B:BCR/ABL")

    def calls(a: np.ndarray, b: np.ndarray) -> tuple[int, ...]:
        A, B = X[a].T, X[b].T
        fold = A.mean(axis=1) - B.mean(axis=1)
        p = {
            "welch": ttest_ind(A, B, axis=1, equal_var=False).pvalue,
            "mwu": mannwhitneyu(A, B, axis=1).pvalue,
        }
        tables = {
            k: pd.DataFrame(
                {"logFC": fold, "AveExpr": 1.0, "P.Value": v, "adj.P.Val": 1.0}, index=genes
            )
            for k, v in p.items()
        }

        def n(final) -> int:
            return int(np.sum(final.statistics["q_value"] <= 0.10))

        plain = {k: t[["P.Value"]] for k, t in tables.items()}
        theory = {"null": "theoretical"}
        fused = [
            n(aggregate_lists(tables).final),
            n(aggregate_lists(plain, score_column="P.Value").final),
            n(aggregate_lists(tables, aggregate_param=theory).final),
            n(aggregate_lists(plain, score_column="P.Value", aggregate_param=theory).final),
        ]
        bh = [int(np.sum(false_discovery_control(v) <= 0.10)) for v in p.values()]
        return (*fused, *bh)

    rng = np.random.default_rng(0)
    null = np.array(
        [calls(*np.split(rng.permutation(neg), [neg.size // 2])) for _ in range(splits)]
    )
    signal = calls(bcr, neg)
    head = (
        "signed (default)",
        "p-values alone (default)",
        "signed, theoretical null",
        "p-values alone, theoretical null",
        "BH Welch",
        "BH Mann-Whitney",
    )
    out = [
        f"two DE tools on the same ALL samples: {splits} random halves of NEG (no difference) and "
        "BCR/ABL vs NEG; calls at q <= 0.10",
        "| reading | null: halves with calls | null: mean calls | null: most | BCR/ABL vs NEG |",
        "|---|---|---|---|---|",
    ]
    for k, name in enumerate(head):
        out.append(
            f"| {name} | {int(np.sum(null[:, k] > 0))} of {splits} | {null[:, k].mean():.1f} | "
            f"{null[:, k].max()} | {signal[k]} |"
        )
    return out


@dataclass(frozen=True)
class StressScenario:
    name: str
    data: tuple[DataList, ...]
    relevant: int = 90


def _randoms(n: int, **kw) -> tuple[DataList, ...]:
    return tuple(DataList(f"random{k + 1}", 0.0, **kw) for k in range(n))


#: Scenarios outside the planted benchmark (docs/aggregation.md, "Scenarios outside the
#: benchmark"): where the model holds, and where it breaks.
STRESS = (
    StressScenario("three graded lists + 20 random", (*GRADED, *_randoms(20))),
    StressScenario("three graded lists + 40 random", (*GRADED, *_randoms(40))),
    StressScenario("two informative + 20 random", (*GRADED[:2], *_randoms(20))),
    StressScenario(
        "five equal lists (1.5) + five reversed",
        tuple(DataList(f"equal{k + 1}", 1.5) for k in range(5))
        + tuple(DataList(f"reversed{k + 1}", -1.5) for k in range(5)),
    ),
    StressScenario("graded + 10 partial random top-300 lists", (*GRADED, *_randoms(10, top=300))),
    StressScenario(
        "graded + 10 random lists sharing half their noise",
        (*GRADED, *_randoms(10, shared=0.5, group="noise")),
    ),
    StressScenario(
        "graded + 6 random + reversed, 900 relevant (30 %)",
        (*GRADED, *RANDOM, DataList("reversed", -1.5)),
        900,
    ),
    StressScenario(
        "graded + 6 random + reversed, 10 relevant",
        (*GRADED, *RANDOM, DataList("reversed", -1.5)),
        10,
    ),
    StressScenario(
        "graded lists sharing half their noise + 10 random",
        (*(DataList(d.name, d.mu, shared=0.5, group="signal") for d in GRADED), *_randoms(10)),
    ),
    StressScenario(
        "graded + 10 random, every list sharing half its noise (one factor)",
        (
            *(DataList(d.name, d.mu, shared=0.5, group="all") for d in GRADED),
            *_randoms(10, shared=0.5, group="all"),
        ),
    ),
    StressScenario(
        "three weak lists (0.6) + 10 random",
        (*(DataList(f"weak{k + 1}", 0.6) for k in range(3)), *_randoms(10)),
    ),
    StressScenario(
        "graded + 6 random top-300 lists sharing 41 % of their noise",
        (*GRADED, *_randoms(6, shared=0.41, group="noise", top=300)),
    ),
    StressScenario(
        "6 random top-300 lists sharing 41 % of their noise (no signal)",
        _randoms(6, shared=0.41, group="noise", top=300),
    ),
    StressScenario(
        "four tools' top-200 lists of one data set (1.5, 40 % of the noise shared)",
        tuple(DataList(f"tool{k + 1}", 1.5, shared=0.4, group="data", top=200) for k in range(4)),
    ),
)


def stress_table(seeds: int) -> list[str]:
    """Per :data:`STRESS` scenario (3,000 genes; means over ``seeds``): the fused top-k
    precision, the best informative list's (k = relevant genes) and RobustRankAggreg's RRA
    (the tool a user with ranked lists would pick instead), the weight of the random
    and reversed lists, the calls at q <= 0.10 and their FDP, and the seeds where the fused
    list is more than 0.03 below the best list."""
    out = [
        f"stress scenarios: 3000 genes, {seeds} seeds each (means)",
        "| scenario | fused prec@k | best list | RRA prec@k | random/reversed weight | q<=.1 | "
        "FDP | seeds below the best list |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for sc in STRESS:
        informative = [j for j, d in enumerate(sc.data) if d.mu > 0]
        rows = []
        for seed in range(seeds):
            pl = planted_lists(3000, sc.relevant, data=sc.data, seed=seed)
            fused = aggregate(list(pl.rankings), universe=pl.genes)
            truth = _truth(pl, fused.genes)
            k = sc.relevant
            prec = _prec(fused.order(), truth, k)
            best = max(
                (
                    _prec(pl.rankings[j].order(), _truth(pl, pl.rankings[j].genes), k)
                    for j in informative
                ),
                default=np.nan,  # no informative list: precision is chance's
            )
            rra = aggregate(list(pl.rankings), "rra", universe=pl.genes)
            rra_prec = _prec(rra.order(), _truth(pl, rra.genes), k)
            names = [d.name for j, d in enumerate(sc.data) if j not in informative]
            weights = dict(zip(fused.list_names, np.asarray(fused.weights), strict=True))
            calls = np.asarray(fused.statistics["q_value"]) <= 0.10
            fdp = float((calls & ~truth).sum() / max(int(calls.sum()), 1))
            rows.append(
                (
                    prec,
                    best,
                    sum(weights[n] for n in names),
                    calls.sum(),
                    fdp,
                    prec < best - 0.03,
                    rra_prec,
                )
            )
        m = np.mean(np.array(rows, dtype=float), axis=0)
        out.append(
            f"| {sc.name} | {m[0]:.2f} | {m[1]:.2f} | {m[6]:.2f} | {m[2]:.3f} | {m[3]:.1f} | "
            f"{m[4]:.3f} | {int(round(m[5] * seeds))} of {seeds} |"
        )
        print(out[-1], flush=True)
    return out


def run() -> list[dict]:
    """Rows of ``bench/run.py``: the 10-lists x 50,000-genes timing (target < 2 s) and, per
    planted scenario (10 seeds), the mean FDP at q <= 0.10 (target 0.10) and the fused top-k
    precision against the best single list's."""
    best, _ = _best_time(list(planted_lists(50_000, 1_500, seed=0).rankings), {}, 3)
    rows = [
        {
            "benchmark": "posterior fusion, 10 lists x 50,000 genes, with intervals (best of 3)",
            "value": round(best, 2),
            "unit": "s",
            "target": 2.0,
        }
    ]
    for s in SCENARIOS:
        runs = [_run(s, seed, 3000, 90) for seed in range(10)]
        called = [r for r in runs if r["n_sel"] > 0]
        if called:
            rows.append(
                {
                    "benchmark": f"planted: {s.name}, FDP at q <= 0.10 (10 seeds)",
                    "value": round(float(np.mean([r["fdp"] for r in runs])), 3),
                    "unit": "FDP",
                    "target": 0.10,
                    "note": f"{np.mean([r['n_sel'] for r in runs]):.1f} calls",
                }
            )
        rows.append(
            {
                "benchmark": f"planted: {s.name}, top-k precision (10 seeds)",
                "value": round(float(np.mean([r["prec"] for r in runs])), 3),
                "unit": "precision",
                "note": f"best single list {np.mean([r['best'] for r in runs]):.2f}",
            }
        )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, help="seeds per scenario (10; --matrices, --tables: 5)")
    ap.add_argument("--genes", type=int, default=3000)
    ap.add_argument("--relevant", type=int, default=90)
    ap.add_argument("--quick", action="store_true", help="3 seeds")
    ap.add_argument("--timing", action="store_true", help="only the 50,000-gene timing")
    ap.add_argument(
        "--matrices", action="store_true", help="only kofs rank on simulated matrices (5 seeds)"
    )
    ap.add_argument(
        "--tables", action="store_true", help="only kofs aggregate on p-value tables (5 seeds)"
    )
    ap.add_argument(
        "--null",
        action="store_true",
        help="only the tests' size where no gene is relevant (40 seeds)",
    )
    ap.add_argument(
        "--stress",
        action="store_true",
        help="only the scenarios outside the planted benchmark (4 seeds)",
    )
    ap.add_argument(
        "--real-tables",
        action="store_true",
        help="only two DE tools on the same real ALL samples (20 random halves; ../shared)",
    )
    a = ap.parse_args()
    if a.real_tables:
        print("\n".join(real_tables_table(a.seeds or 20)))
        return
    if a.null:
        print("\n".join(null_table(a.seeds or 40)))
        return
    if a.stress:
        stress_table(a.seeds or 4)
        return
    if a.tables:
        print("\n".join(tables_table(a.seeds or 5)))
        return
    if a.timing:
        timing()
        return
    if a.matrices:
        print("\n".join(matrix_table(a.seeds or 5)))
        return
    lines = table(3 if a.quick else a.seeds or 10, a.genes, a.relevant)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
