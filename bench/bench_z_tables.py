"""Tables of z-scores from several studies: kofs's fusion against Stouffer's method.

A user with one table of z-scores per study (columns ``gene, z``) would otherwise combine them
by **Stouffer's method** -- ``sum_l z_l / sqrt(k)``, or weighted ``sum_l w_l z_l / sqrt(sum_l
w_l^2)`` with ``w_l = sqrt(n_l)`` -- and call genes by Benjamini-Hochberg at 0.10 on its
two-sided p-values; or take the best study alone. This bench simulates such tables with planted
truth (its own simulator, not :mod:`kofs.datasets.planted`), writes each as a TSV file
``gene\\tz`` and fuses them by ``kofs.aggregate_lists(paths)``, exactly as ``kofs aggregate
a.tsv b.tsv c.tsv`` reads them (two-sided p-values, each gene's direction the sign of its z:
the signed model, each table against its empirical null; docs/lists.md).

Simulation: 4,000 genes, 200 relevant (5 %), each up or down at random by an effect of
Gamma(2, 1.25) SD (mean 2.5) in a study of scale 1, ``z = scale * sign * effect + noise``; the
noise N(0, 1) unless the scenario says. Scenarios (three studies unless said):

1. three independent studies of equal quality;
2. graded quality, effect scale 1.0 / 0.6 / 0.3 (sample sizes in ratio 1 : 0.36 : 0.09, the
   weights sqrt(n) 1 / 0.6 / 0.3 known to the user: the optimal weights);
3. one good study and two pure-noise studies (all of one size: the weights equal);
4. one study's contrast reversed (its z negated);
5. two studies sharing 60 % of their noise (same samples, different tools) and one independent;
6. genes in modules: blocks of 50 genes share a N(0, 0.5^2) factor in each study (drawn anew
   per study), added to the unit noise -- a null z spreads sqrt(1.25) = 1.12 and the
   theoretical N(0, 1) is wrong;
7. no relevant gene (three independent null studies): any call is false;
8. studies of different contrasts: each relevant gene's direction in studies 2 and 3 drawn anew
   (unrelated to study 1's);
9. half the relevant genes go the same way in every study, the other half's directions drawn
   anew per study (three quarters agree);
10. 100 relevant genes shared by the studies and 100 more per study that change in that study
    alone (a tissue's or a cohort's own genes): the truth is the 400 genes changed in some
    study, as Fisher's combination reads it.

Methods: ``kofs`` (the default fusion), ``kofs, theoretical null`` (``--aggregate-param
null=theoretical``: each table read against N(0, 1), not its empirical null), ``Stouffer`` (equal weights, BH), ``weighted
Stouffer`` (sqrt(n), BH), ``best study`` (BH on the study of largest scale -- study 1, the
unreversed one; an oracle's choice in scenario 3, where the user cannot know which study is
good), ``Fisher's combination`` (``-2 sum log p`` of the two-sided p-values, chi-square with 2k
degrees of freedom, BH; directions ignored: the tool for studies whose directions need not
agree). Per method, means over the seeds with their standard error: calls at q <= 0.10, FDP
(0 without calls), power, precision of the top k (k = number relevant; kofs's order of the
fused list, the others by |z|). In scenario 7 FDP is the share of seeds with any call.

``--extra`` adds what a careful user of Stouffer's method could do: read its sum against an
empirical null (median, interquartile range), or, for studies of shared samples, divide by the
standard deviation their known correlation gives (Strube 1985; the simulated 0.6).

Run: ``python bench/bench_z_tables.py [--seeds N] [--null-seeds M] [--extra]`` (20 seeds, 100 for
scenario 7: ~2 min).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

GENES = 4000
RELEVANT = 200
MODULE = 50


@dataclass(frozen=True)
class Scenario:
    name: str
    #: effect scale per study (0: a pure-noise study)
    scales: tuple[float, ...] = (1.0, 1.0, 1.0)
    #: sample size per study (relative; Stouffer's weights are its square root)
    sizes: tuple[float, ...] = (1.0, 1.0, 1.0)
    #: share of the noise the first two studies have in common
    shared: float = 0.0
    #: the last study's z negated (its contrast the other way round)
    reversed: bool = False
    #: SD of the module factor added to every gene of a block of 50 in each study
    module_sd: float = 0.0
    relevant: int = RELEVANT
    #: share of the relevant genes whose direction in every study is the first study's (the
    #: others go up or down at random in each study: tables of different contrasts)
    agree: float = 1.0
    #: genes that change in one study alone, per study (a study's own differences), beside the
    #: ``relevant`` ones all studies share; the truth is the genes changed in some study
    own: int = 0


SCENARIOS = (
    Scenario("1 three independent, equal"),
    Scenario("2 graded 1.0 / 0.6 / 0.3", (1.0, 0.6, 0.3), (1.0, 0.36, 0.09)),
    Scenario("3 one good + two noise-only", (1.0, 0.0, 0.0)),
    Scenario("4 one contrast reversed", reversed=True),
    Scenario("5 two sharing 60 % noise + one", shared=0.6),
    Scenario("6 modules of 50 (factor SD 0.5)", module_sd=0.5),
    Scenario("7 no signal (all null)", relevant=0),
    Scenario("8 directions unrelated between studies", agree=0.0),
    Scenario("9 half the genes' directions random", agree=0.5),
    Scenario("10 each study's own 100 genes beside 100 shared", relevant=100, own=100),
)

METHODS = (
    ("kofs", "kofs"),
    ("theory", "kofs, theoretical null"),
    ("stouffer", "Stouffer + BH"),
    ("weighted", "weighted Stouffer + BH"),
    ("best", "best study + BH"),
    ("fisher", "Fisher's combination + BH"),
)

#: with ``--extra``: what a careful user of Stouffer's method could add -- its sum read against
#: an empirical null (centred at the median, scaled by the interquartile range / 1.349), and
#: Strube's (1985) correction for studies whose correlation is known (here: the simulated 0.6
#: of scenario 5; elsewhere it is Stouffer's sum)
EXTRA = (
    ("stouffer_iqr", "Stouffer, empirical null + BH"),
    ("strube", "Stouffer, correlation known + BH"),
)


def simulate(s: Scenario, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(z-scores, studies x genes; truth, genes)."""
    rng = np.random.default_rng(seed)
    truth = np.zeros(GENES, bool)
    truth[rng.choice(GENES, s.relevant, replace=False)] = True
    effect = rng.gamma(2.0, 1.25, GENES) * np.where(rng.random(GENES) < 0.5, -1.0, 1.0)
    effect *= truth
    common = rng.normal(size=GENES)
    own_effect = np.zeros((len(s.scales), GENES))
    if s.own:  # (drawn only here: the other scenarios' draws are unchanged)
        spare = rng.permutation(np.flatnonzero(~truth))[: s.own * len(s.scales)]
        for k, genes in enumerate(np.split(spare, len(s.scales))):
            own_effect[k, genes] = rng.gamma(2.0, 1.25, genes.size) * np.where(
                rng.random(genes.size) < 0.5, -1.0, 1.0
            )
        truth = truth | (own_effect != 0).any(axis=0)
    block = np.arange(GENES) // MODULE
    z = np.empty((len(s.scales), GENES))
    for k, scale in enumerate(s.scales):
        noise = rng.normal(size=GENES)
        if s.shared and k < 2:
            noise = np.sqrt(s.shared) * common + np.sqrt(1 - s.shared) * noise
        if s.module_sd:
            noise = noise + s.module_sd * rng.normal(size=block.max() + 1)[block]
        own = effect
        if s.agree < 1.0 and k > 0:  # each study's own directions for the other genes
            turn = (rng.random(GENES) >= s.agree) & (rng.random(GENES) < 0.5)
            own = np.where(turn, -effect, effect)
        z[k] = scale * (own + own_effect[k]) + noise
    if s.reversed:
        z[-1] = -z[-1]
    return z, truth


def _bh(z: np.ndarray) -> np.ndarray:
    from scipy.stats import false_discovery_control, norm

    return false_discovery_control(2 * norm.sf(np.abs(z))) <= 0.10


def _fisher(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Fisher's combination of the studies' two-sided p-values (directions ignored), called by
    BH at 0.10: its calls and order."""
    from scipy.stats import chi2, false_discovery_control, norm

    stat = -2.0 * (norm.logsf(np.abs(z)) + np.log(2.0)).sum(axis=0)
    p = chi2.sf(stat, 2 * len(z))
    return false_discovery_control(p) <= 0.10, np.argsort(-stat, kind="stable")


def _score(sel: np.ndarray, order: np.ndarray, truth: np.ndarray) -> dict:
    k = int(truth.sum())
    calls = int(sel.sum())
    if k == 0:  # all null: FDP is 1 with any call (the FDR is the chance of any call)
        return {"calls": calls, "fdp": float(calls > 0), "power": np.nan, "prec": np.nan}
    return {
        "calls": calls,
        "fdp": float((~truth[sel]).mean()) if calls else 0.0,
        "power": float(truth[sel].sum() / k),
        "prec": float(truth[order[:k]].mean()),
    }


def _write(z: np.ndarray, workdir: Path) -> list[str]:
    """The z tables as TSV files ``gene\tz``, as a user gives them to ``kofs aggregate``."""
    paths = []
    for k, row in enumerate(z):
        p = workdir / f"study{k + 1}.tsv"
        with open(p, "w") as f:
            f.write("gene\tz\n")
            f.writelines(f"G{i}\t{v:.6g}\n" for i, v in enumerate(row))
        paths.append(str(p))
    return paths


def _kofs(paths: list[str], param: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
    """kofs's calls at q <= 0.10 and its fused order (best first) from the TSV files."""
    import kofs

    final = kofs.aggregate_lists(paths, aggregate_param=param).final
    idx = np.array([int(g[1:]) for g in final.genes])
    sel = np.zeros(GENES, bool)
    q = final.statistics.get("q_value")
    if q is not None:
        sel[idx[np.asarray(q) <= 0.10]] = True
    return sel, idx[np.argsort(final.ranks, kind="stable")]


def run_seed(s: Scenario, seed: int, workdir: Path) -> dict[str, dict]:
    z, truth = simulate(s, seed)
    out = {}
    paths = _write(z, workdir)
    out["kofs"] = _score(*_kofs(paths), truth)
    out["theory"] = _score(*_kofs(paths, {"null": "theoretical"}), truth)
    w = np.sqrt(np.asarray(s.sizes))
    best = int(np.argmax(s.scales))
    stouffer = z.sum(0) / np.sqrt(len(z))
    q1, q3 = np.percentile(stouffer, [25, 75])
    corr = np.eye(len(z))
    corr[0, 1] = corr[1, 0] = s.shared
    for key, comb in (
        ("stouffer", stouffer),
        ("weighted", w @ z / np.sqrt(w @ w)),
        ("best", z[best]),
        ("stouffer_iqr", (stouffer - np.median(stouffer)) / ((q3 - q1) / 1.349)),
        ("strube", z.sum(0) / np.sqrt(corr.sum())),
    ):
        out[key] = _score(_bh(comb), np.argsort(-np.abs(comb), kind="stable"), truth)
    out["fisher"] = _score(*_fisher(z), truth)
    return out


def _cell(v: np.ndarray, digits: int) -> str:
    v = v[~np.isnan(v)]
    if not len(v):
        return "-"
    se = v.std(ddof=1) / np.sqrt(len(v)) if len(v) > 1 else 0.0
    return f"{v.mean():.{digits}f} ± {se:.{digits}f}"


def results(
    seeds: int,
    null_seeds: int,
    verbose: bool = True,
    methods=METHODS,
    only: tuple[int, ...] = (),
) -> dict[str, dict[str, dict]]:
    """Per scenario and method, each measure's values over the seeds (printed as they come);
    ``only``: these scenarios' numbers (all when empty)."""
    out: dict[str, dict[str, dict]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for s in SCENARIOS:
            if only and int(s.name.split()[0]) not in only:
                continue
            t0 = time.perf_counter()
            n = null_seeds if s.relevant == 0 else seeds
            runs = [run_seed(s, seed, Path(tmp)) for seed in range(n)]
            out[s.name] = {
                key: {m: np.array([r[key][m] for r in runs], float) for m in runs[0][key]}
                for key, _ in METHODS + EXTRA
            }
            if not verbose:
                continue
            for key, label in methods:
                print(f"| {s.name} | {label} | {_row(out[s.name][key])}", flush=True)
            if s.relevant:  # seeds whose FDP is over 0.10 (the FDR bounds their mean only)
                for key in ("kofs", "stouffer"):
                    fdp = out[s.name][key]["fdp"]
                    i = int(np.argmax(fdp))
                    print(
                        f"  {key}: FDP > 0.10 in {int(np.sum(fdp > 0.10))} of {n} seeds; "
                        f"worst seed {i}: {runs[i][key]['calls']} calls, FDP {fdp[i]:.3f}",
                        flush=True,
                    )
            else:
                hits = [
                    f"seed {i}: {r['kofs']['calls']}"
                    for i, r in enumerate(runs)
                    if r["kofs"]["calls"]
                ]
                print(f"  kofs calls under the null: {'; '.join(hits) or 'none'}", flush=True)
            print(f"  ({time.perf_counter() - t0:.0f} s)", flush=True)
    return out


def _row(col: dict) -> str:
    return (
        f"{_cell(col['calls'], 1)} | {_cell(col['fdp'], 3)} | {_cell(col['power'], 3)} | "
        f"{_cell(col['prec'], 3)} |"
    )


def table(
    seeds: int, null_seeds: int, extra: bool = False, only: tuple[int, ...] = ()
) -> list[str]:
    methods = METHODS + EXTRA if extra else METHODS
    res = results(seeds, null_seeds, methods=methods, only=only)
    lines = [
        f"z-score tables of 3 studies, {GENES:,} genes, {RELEVANT} relevant (up and down, "
        f"Gamma(2, 1.25) SD); {seeds} seeds ({null_seeds} for scenario 7); mean ± SE; "
        "calls at q <= 0.10 (scenario 7: FDP = share of seeds with a call)",
        "| scenario | method | calls | FDP | power | prec@k |",
        "|---|---|---|---|---|---|",
    ]
    for s in SCENARIOS:
        for key, label in methods:
            if s.name in res:
                lines.append(f"| {s.name} | {label} | {_row(res[s.name][key])}")
    return lines


def run() -> list[dict]:
    """Rows for ``bench/run.py`` (3 seeds, 20 without signal): kofs's mean calls and FDP per
    scenario, Stouffer's beside them in the note."""
    rows = []
    for name, r in results(3, 20, verbose=False).items():
        k, st = r["kofs"], r["stouffer"]
        note = f"Stouffer + BH {st['calls'].mean():.1f} calls, FDP {st['fdp'].mean():.3f}"
        rows.append(
            {
                "benchmark": f"z tables {name}: kofs calls",
                "value": float(k["calls"].mean()),
                "unit": "calls",
                "note": note,
            }
        )
        rows.append(
            {
                "benchmark": f"z tables {name}: kofs FDP",
                "value": float(k["fdp"].mean()),
                "unit": "FDP",
            }
        )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=20, help="seeds per scenario (20)")
    ap.add_argument(
        "--null-seeds", type=int, help="seeds of scenario 7, no signal (default: 5 x --seeds)"
    )
    ap.add_argument(
        "--extra",
        action="store_true",
        help="also Stouffer against an empirical null, and with the studies' correlation known",
    )
    ap.add_argument(
        "--only", type=int, nargs="+", default=(), help="only these scenarios (numbers)"
    )
    a = ap.parse_args()
    lines = table(a.seeds, a.null_seeds or 5 * a.seeds, a.extra, tuple(a.only))
    print()
    print("\n".join(lines))


if __name__ == "__main__":
    main()
