"""An independent planted-truth check of the default rank fusion, called as a user calls it.

Run: ``python bench/bench_fusion_check.py`` (10 seeds per scenario, a few minutes on 2 cores),
``--quick`` (3 seeds), ``--seeds N``, ``--scenarios S1,S3``, ``--seed-list 4,7`` (just those
seeds: reproduce one run), ``-v`` (one line per run), ``--reversed independent`` (the reversed
list of S1-S3 negates an independent draw of a quality-1.5 list instead of the fused one's).

The simulator is written from a description of the scenarios alone (not from
``kofs.datasets`` nor ``bench/bench_fusion.py``). Truth: a set of relevant genes, each with an
effect drawn from an exponential distribution (mean 1); every list comes from latent scores
``quality * effect * relevant + noise`` (noise N(0, 1), or t with 3 degrees of freedom), or
from a statistical test of a simulated two-group expression matrix whose relevant genes go up
by their effect (in noise SDs) in the second group. Every scenario is a function of its seed:

  S1  2,000 genes, 3 % relevant; three informative full rankings (quality 3 / 1.5 / 0.7), six
      random rankings, one reversed ranking (scores = -latent of the quality-1.5 list: the
      same list given a second time the wrong way round; ``--reversed independent``: of a
      fresh quality-1.5 draw); pandas Series of scores, ``direction="desc"``.
  S2  S1 at 10,000 genes, 1 % relevant, t3 noise.
  S3  10,000 genes, 1 % relevant; the quality-3 and quality-1.5 lists given only as their
      top-200 and top-500 genes (plain lists of ids), three random top-500 lists, one reversed
      full ranking (Series: -latent of the quality-1.5 list, as in S1); ``universe`` = all
      genes.
  S4  one matrix of 2,000 genes x 20 + 20 samples, 5 % up-regulated: its two-sided t-test and
      Mann-Whitney rankings, the two-sided t-test ranking of a second, independent matrix with
      the same genes and effects, the first matrix's genes by t ascending (a one-sided test
      the wrong way round), six random rankings; all as ordered lists of gene ids (with
      ``universe`` = all genes, as kofs asks of lists it reads as top-k lists).
  S5  S4 given as p-value tables (``gene``, ``pvalue``): the reversed one is the one-sided
      p-value for down-regulation, the six random ones uniform p-values.
  S6  S5 at 10,000 genes, 1 % relevant.
  S7  three independent studies (5,000 genes, 2 % relevant, 30 + 30, 15 + 15 and 8 + 8
      samples), each a two-sided t-test p-value table, and six uniform p-value tables.
  S8  3,000 genes, 3 % relevant; one strong full ranking (quality 3), two weak ones (quality
      0.4) and six random rankings, all as ordered lists of gene ids (``universe`` = all genes):
      a ranking alone says nothing of its quality, so only agreement can show the strong list.
  S9  S8 without the two weak lists: the strong ranking beside random rankings alone.
  S10 S8 with every relevant gene's effect 1 (equal effects: the one-separation model holds;
      added in the thirty-fifth session after an experiment found kofs far below the strong
      list there).

Every list is fused with ``kofs.aggregate_lists(lists, ...)`` and its defaults (``posterior``).
Per run: calls at q <= 0.10 and their false discovery proportion (FDP), the weight share of the
random and reversed lists, the precision of the top k fused genes (k = number of relevant
genes) against the best single input list's, which list has the largest weight, whether kofs
attached a notice to the result, and the time of the fusion. The table gives means over seeds
(FDP with its standard error) and the seeds in which a random or reversed list has the largest
weight; the seeds with FDP > 0.10 or such a weight are listed after it, each scenario's with
the command that reruns them.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

Q_LEVEL = 0.10
SCENARIOS = ("S1", "S2", "S3", "S4", "S5", "S6", "S7", "S8", "S9", "S10")
INDEX = {name: i + 1 for i, name in enumerate(SCENARIOS)}


@dataclass
class Case:
    """One simulated data set: the lists as a user passes them, and the truth."""

    lists: dict[str, object]
    genes: list[str]
    relevant: np.ndarray  # bool, aligned with genes
    noise_lists: list[str]  # random and reversed lists
    reversed_list: str
    kwargs: dict[str, object] = field(default_factory=dict)  # for aggregate_lists
    orders: dict[str, list[str]] = field(default_factory=dict)  # each list's genes, best first


# -- the simulator -----------------------------------------------------------------------------


def _truth(rng: np.random.Generator, n: int, frac: float):
    genes = [f"G{i:05d}" for i in range(n)]
    relevant = np.zeros(n, dtype=bool)
    relevant[rng.choice(n, size=round(frac * n), replace=False)] = True
    effect = np.where(relevant, rng.exponential(1.0, size=n), 0.0)
    return genes, relevant, effect


def _latent(rng, quality, effect, noise="normal"):
    n = effect.size
    eps = rng.standard_t(3, size=n) if noise == "t3" else rng.standard_normal(n)
    return quality * effect + eps


def _order(genes: list[str], score: np.ndarray) -> list[str]:
    """Genes by descending score (ties broken by gene order)."""
    return [genes[i] for i in np.argsort(-score, kind="stable")]


def _score_lists(rng, n, frac, noise, reversed_mode):
    genes, relevant, effect = _truth(rng, n, frac)
    scores = {}
    for name, q in (("inf3", 3.0), ("inf1.5", 1.5), ("inf0.7", 0.7)):
        scores[name] = _latent(rng, q, effect, noise)
    for j in range(6):
        scores[f"random{j + 1}"] = _latent(rng, 0.0, effect, noise)
    if reversed_mode == "copy":
        scores["reversed"] = -scores["inf1.5"]
    else:
        scores["reversed"] = -_latent(rng, 1.5, effect, noise)
    noise_lists = [f"random{j + 1}" for j in range(6)] + ["reversed"]
    return Case(
        lists={k: pd.Series(v, index=genes) for k, v in scores.items()},
        genes=genes,
        relevant=relevant,
        noise_lists=noise_lists,
        reversed_list="reversed",
        kwargs={"direction": "desc"},
        orders={k: _order(genes, v) for k, v in scores.items()},
    )


def s1(seed: int, reversed_mode: str = "copy") -> Case:
    rng = np.random.default_rng([INDEX["S1"], seed])
    return _score_lists(rng, 2_000, 0.03, "normal", reversed_mode)


def s2(seed: int, reversed_mode: str = "copy") -> Case:
    rng = np.random.default_rng([INDEX["S2"], seed])
    return _score_lists(rng, 10_000, 0.01, "t3", reversed_mode)


def s3(seed: int, reversed_mode: str = "copy") -> Case:
    rng = np.random.default_rng([INDEX["S3"], seed])
    genes, relevant, effect = _truth(rng, 10_000, 0.01)
    lat3 = _latent(rng, 3.0, effect)
    lat15 = _latent(rng, 1.5, effect)
    fresh = _latent(rng, 1.5, effect)  # drawn in both modes: the other lists stay the same
    rev = -lat15 if reversed_mode == "copy" else -fresh
    orders = {"inf3_top200": _order(genes, lat3)[:200], "inf1.5_top500": _order(genes, lat15)[:500]}
    for j in range(3):
        orders[f"random{j + 1}_top500"] = _order(genes, rng.standard_normal(len(genes)))[:500]
    orders["reversed"] = _order(genes, rev)
    lists: dict[str, object] = {k: v for k, v in orders.items() if k != "reversed"}
    lists["reversed"] = pd.Series(rev, index=genes)
    return Case(
        lists=lists,
        genes=genes,
        relevant=relevant,
        noise_lists=[f"random{j + 1}_top500" for j in range(3)] + ["reversed"],
        reversed_list="reversed",
        kwargs={"universe": genes, "direction": "desc"},
        orders=orders,
    )


def _matrix(rng, effect, n_per_group):
    """(group 1, group 2): genes x samples, the relevant genes up by ``effect`` in group 2."""
    n = effect.size
    g1 = rng.standard_normal((n, n_per_group))
    g2 = rng.standard_normal((n, n_per_group)) + effect[:, None]
    return g1, g2


def _t_test(g1, g2, alternative="two-sided"):
    t, p = stats.ttest_ind(g2, g1, axis=1, alternative=alternative)
    return np.asarray(t), np.asarray(p)


def _two_groups(seed, scenario, n, frac, as_pvalues):
    rng = np.random.default_rng([INDEX[scenario], seed])
    genes, relevant, effect = _truth(rng, n, frac)
    g1, g2 = _matrix(rng, effect, 20)
    t1, p_t = _t_test(g1, g2)
    p_mw = np.asarray(stats.mannwhitneyu(g2, g1, axis=1, alternative="two-sided").pvalue)
    _, p_t2 = _t_test(*_matrix(rng, effect, 20))
    # the wrong one-sided direction: most negative t first (ascending p for "less")
    _, p_rev = _t_test(g1, g2, alternative="less")
    pvalues = {"t_test": p_t, "mann_whitney": p_mw, "t_test_study2": p_t2, "reversed": p_rev}
    for j in range(6):
        pvalues[f"random{j + 1}"] = rng.uniform(size=n)
    orders = {k: _order(genes, -v) for k, v in pvalues.items()}
    orders["reversed"] = _order(genes, -t1)  # exact where p saturates at 1
    if as_pvalues:
        lists: dict[str, object] = {
            k: pd.DataFrame({"gene": genes, "pvalue": v}) for k, v in pvalues.items()
        }
        kwargs: dict[str, object] = {}
    else:
        lists = dict(orders)
        kwargs = {"universe": genes}
    return Case(
        lists=lists,
        genes=genes,
        relevant=relevant,
        noise_lists=[f"random{j + 1}" for j in range(6)] + ["reversed"],
        reversed_list="reversed",
        kwargs=kwargs,
        orders=orders,
    )


def s4(seed: int, reversed_mode: str = "copy") -> Case:
    return _two_groups(seed, "S4", 2_000, 0.05, as_pvalues=False)


def s5(seed: int, reversed_mode: str = "copy") -> Case:
    return _two_groups(seed, "S5", 2_000, 0.05, as_pvalues=True)


def s6(seed: int, reversed_mode: str = "copy") -> Case:
    return _two_groups(seed, "S6", 10_000, 0.01, as_pvalues=True)


def s7(seed: int, reversed_mode: str = "copy") -> Case:
    rng = np.random.default_rng([INDEX["S7"], seed])
    n = 5_000
    genes, relevant, effect = _truth(rng, n, 0.02)
    pvalues = {}
    for name, size in (("study_30", 30), ("study_15", 15), ("study_8", 8)):
        pvalues[name] = _t_test(*_matrix(rng, effect, size))[1]
    for j in range(6):
        pvalues[f"random{j + 1}"] = rng.uniform(size=n)
    return Case(
        lists={k: pd.DataFrame({"gene": genes, "pvalue": v}) for k, v in pvalues.items()},
        genes=genes,
        relevant=relevant,
        noise_lists=[f"random{j + 1}" for j in range(6)],
        reversed_list="",
        orders={k: _order(genes, -v) for k, v in pvalues.items()},
    )


def _one_strong(seed: int, scenario: str, weak: int, equal: bool = False) -> Case:
    rng = np.random.default_rng([INDEX[scenario], seed])
    genes, relevant, effect = _truth(rng, 3_000, 0.03)
    if equal:
        effect = relevant.astype(float)
    scores = {"strong": _latent(rng, 3.0, effect)}
    for j in range(weak):
        scores[f"weak{j + 1}"] = _latent(rng, 0.4, effect)
    for j in range(6):
        scores[f"random{j + 1}"] = _latent(rng, 0.0, effect)
    orders = {k: _order(genes, v) for k, v in scores.items()}
    return Case(
        lists=dict(orders),
        genes=genes,
        relevant=relevant,
        noise_lists=[f"random{j + 1}" for j in range(6)],
        reversed_list="",
        kwargs={"universe": len(genes)},
        orders=orders,
    )


def s8(seed: int, reversed_mode: str = "copy") -> Case:
    return _one_strong(seed, "S8", weak=2)


def s9(seed: int, reversed_mode: str = "copy") -> Case:
    return _one_strong(seed, "S9", weak=0)


def s10(seed: int, reversed_mode: str = "copy") -> Case:
    return _one_strong(seed, "S10", weak=2, equal=True)


BUILDERS: dict[str, Callable[..., Case]] = {
    "S1": s1,
    "S2": s2,
    "S3": s3,
    "S4": s4,
    "S5": s5,
    "S6": s6,
    "S7": s7,
    "S8": s8,
    "S9": s9,
    "S10": s10,
}

# -- one run -----------------------------------------------------------------------------------


def _precision(order: list[str], relevant: set[str], k: int) -> float:
    return sum(g in relevant for g in order[:k]) / k


def run_one(scenario: str, seed: int, reversed_mode: str = "copy") -> dict:
    import kofs

    case = BUILDERS[scenario](seed, reversed_mode)
    relevant = {g for g, r in zip(case.genes, case.relevant, strict=True) if r}
    k = len(relevant)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = kofs.aggregate_lists(case.lists, **case.kwargs)
    seconds = time.perf_counter() - t0
    final = res.final
    frame = final.to_frame()
    q = frame["q_value"].to_numpy(dtype=float)
    called = [g for g, v in zip(frame.index, q, strict=True) if v <= Q_LEVEL]
    false = sum(g not in relevant for g in called)
    weights = dict(zip(final.list_names, np.asarray(final.weights, dtype=float), strict=True))
    total = sum(weights.values())
    top = max(weights, key=lambda name: weights[name])
    fused_order = frame.sort_values("rank").index.tolist()
    best_name, best = max(
        ((name, _precision(o, relevant, k)) for name, o in case.orders.items()),
        key=lambda item: item[1],
    )
    return {
        "scenario": scenario,
        "seed": seed,
        "calls": len(called),
        "fdp": false / max(len(called), 1),
        "noise_share": sum(weights[n] for n in case.noise_lists) / total if total > 0 else np.nan,
        "prec_fused": _precision(fused_order, relevant, k),
        "prec_best": best,
        "best_list": best_name,
        "top_list": top,
        "top_is_noise": top in case.noise_lists,
        "top_is_reversed": top == case.reversed_list,
        "notice": bool(final.diagnostics.get("notices")),
        "seconds": seconds,
    }


# -- the table ---------------------------------------------------------------------------------


def summarise(rows: list[dict]) -> pd.DataFrame:
    out = []
    for scenario, grp in pd.DataFrame(rows).groupby("scenario", sort=False):
        fdp = grp["fdp"].to_numpy()
        se = fdp.std(ddof=1) / np.sqrt(fdp.size) if fdp.size > 1 else float("nan")
        noise_top = grp.loc[grp["top_is_noise"], "seed"].tolist()
        out.append(
            {
                "scenario": scenario,
                "seeds": len(grp),
                "mean FDP ± SE": f"{fdp.mean():.3f} ± {se:.3f}",
                "mean calls": f"{grp['calls'].mean():.1f}",
                "random+reversed weight": f"{grp['noise_share'].mean():.3f}",
                "prec fused / best": f"{grp['prec_fused'].mean():.3f} / {grp['prec_best'].mean():.3f}",
                "noise list top weight (seeds)": ",".join(map(str, noise_top)) or "-",
                "s / fusion": f"{grp['seconds'].mean():.1f}",
            }
        )
    return pd.DataFrame(out)


def _markdown(df: pd.DataFrame) -> str:
    cols = list(df.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join(lines)


def findings(rows: list[dict], reversed_mode: str) -> list[str]:
    df = pd.DataFrame(rows)
    out = []
    extra = " --reversed independent" if reversed_mode == "independent" else ""
    for scenario, grp in df.groupby("scenario", sort=False):
        bad_fdp = grp[grp["fdp"] > Q_LEVEL]
        noise_top = grp[grp["top_is_noise"]]
        if bad_fdp.empty and noise_top.empty:
            continue
        if not bad_fdp.empty:
            desc = ", ".join(
                f"{s} ({c} calls, FDP {f:.2f})"
                for s, c, f in bad_fdp[["seed", "calls", "fdp"]].itertuples(index=False)
            )
            out.append(f"{scenario}: FDP > {Q_LEVEL:.2f} in seeds {desc}")
        if not noise_top.empty:
            desc = ", ".join(
                f"{s} ({t}{' = the reversed list' if r else ''})"
                for s, t, r in noise_top[["seed", "top_list", "top_is_reversed"]].itertuples(
                    index=False
                )
            )
            out.append(f"{scenario}: a random/reversed list has the largest weight in seeds {desc}")
        seeds = sorted(set(bad_fdp["seed"]) | set(noise_top["seed"]))
        flagged = grp[grp["seed"].isin(seeds)]
        out.append(
            f"  a kofs notice on the result in {int(flagged['notice'].sum())} of these seeds"
        )
        out.append(
            "  rerun: python bench/bench_fusion_check.py "
            f"--scenarios {scenario} --seed-list {','.join(map(str, seeds))} -v{extra}"
        )
    return out


def run() -> list[dict]:
    """Rows of ``bench/run.py``: per scenario (3 seeds), the mean FDP at q <= 0.10 (target
    0.10) and the fused top-k precision against the best single list's."""
    rows: list[dict] = []
    for scenario in SCENARIOS:
        runs = [run_one(scenario, seed) for seed in range(3)]
        fused = float(np.mean([r["prec_fused"] for r in runs]))
        best = float(np.mean([r["prec_best"] for r in runs]))
        rows.append(
            {
                "benchmark": f"independent check {scenario}: FDP at q <= 0.10 (3 seeds)",
                "value": round(float(np.mean([r["fdp"] for r in runs])), 3),
                "unit": "FDP",
                "target": 0.10,
                "note": f"{np.mean([r['calls'] for r in runs]):.1f} calls; "
                f"top-k precision {fused:.3f} (best list {best:.3f})",
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--seeds", type=int, default=10, help="seeds per scenario (0..N-1)")
    ap.add_argument("--quick", action="store_true", help="3 seeds per scenario")
    ap.add_argument("--seed-list", default=None, help="comma-separated seeds (overrides --seeds)")
    ap.add_argument("--scenarios", default=",".join(SCENARIOS), help="e.g. S1,S3")
    ap.add_argument(
        "--reversed",
        choices=("copy", "independent"),
        default="copy",
        help="S1-S3: the reversed list negates the fused 1.5 list, or an independent draw of it",
    )
    ap.add_argument("-v", "--verbose", action="store_true", help="one line per run")
    args = ap.parse_args(argv)
    scenarios = [s.strip().upper() for s in args.scenarios.split(",") if s.strip()]
    unknown = [s for s in scenarios if s not in BUILDERS]
    if unknown:
        ap.error(f"unknown scenario(s) {unknown}; choose from {','.join(SCENARIOS)}")
    if args.seed_list:
        seeds = [int(s) for s in args.seed_list.split(",")]
    else:
        seeds = list(range(3 if args.quick else args.seeds))
    t0 = time.perf_counter()
    rows = []
    for scenario in scenarios:
        for seed in seeds:
            row = run_one(scenario, seed, args.reversed)
            rows.append(row)
            if args.verbose:
                print(
                    f"{scenario} seed {seed}: {row['calls']} calls, FDP {row['fdp']:.3f}, "
                    f"noise weight {row['noise_share']:.3f}, prec {row['prec_fused']:.3f} / "
                    f"{row['prec_best']:.3f} ({row['best_list']}), top weight {row['top_list']}, "
                    f"{row['seconds']:.1f} s{', notice' if row['notice'] else ''}",
                    flush=True,
                )
    print(_markdown(summarise(rows)))
    notes = findings(rows, args.reversed)
    print("\n".join(notes) if notes else "no seed with FDP > 0.10 or a random/reversed list on top")
    print(f"# {time.perf_counter() - t0:.0f} s in all", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
