"""Null calibration of the default fusion on real data: calls at q <= 0.10 where nothing in the
data relates to the labels (or where the lists share no signal).

``python bench/bench_null_calibration.py`` (needs ``../shared`` or ``$KOFS_SHARED``; seeds
1..10, ~10 min on 2 shared cores), ``--quick`` (seeds 1..3, ~3 min), ``--seeds N``,
``--first S`` (seeds S..S+N-1), ``--cases "NEG halves,gaussian"`` and ``--knowledge none|only``
(a subset), ``--keep DIR`` (keep every run's output folder there), ``--own EXPRESSION LABELS
COLUMN`` (instead, the null cases on your own matrix: true labels, permuted labels, genes
permuted over the samples without labels; data lists only). Each ``kofs rank`` is the command a user
runs (``python -m kofs rank ...`` in a child process, defaults, ``--no-report``); each fusion of
lists is ``kofs.aggregate_lists`` on files, as ``kofs aggregate FILE...`` reads them.

Cases (ALL: 8,562 genes x 128 samples; knowledge = GO 2022 + gene2go, KEGG 2011, STRING
example edges, as docs/results-all.md gives them):

* ``lineage perm``: the B/T lineage labels permuted over the 128 samples (seed s);
* ``subtype perm``: the B-ALL subtypes ALL1/AF4 / BCR/ABL / NEG permuted over their 89 samples;
* ``NEG halves``: the 42 B-lineage NEG samples (one subtype, little structure) split at random
  into two labelled halves of 21;
* ``gaussian``: i.i.d. N(0, 1) values with the ALL genes' names and the true lineage labels;
* ``resampled``: each ALL gene's values permuted independently over the samples (true labels);
* ``lineage true``: the positive control (true B/T labels);

each without and with knowledge. Per run: genes at q <= 0.10 (``ranking.tsv``), the smallest
q-value, whether the fusion's relevant-class test finds a class (p <= 0.05), knowledge hubs
in the fused top 50 (hubs: the 10 % of the matrix's genes with the most GO annotations +
KEGG pathways + STRING partners; a random 50 holds 5), the AUC of the Pathway-FILT list
(SPEC on the samples' similarity over the KEGG genes) for the KEGG genes, and for
comparison the one-way F test
with Benjamini-Hochberg at 0.10 on the same labels. Lists (``kofs aggregate``): two or three
Welch-test tables of disjoint random sample sets of ALL with independently permuted lineage
labels, given as limma-like tables (``logFC, t, P.Value``: signed), as p-value tables
(``gene, pvalue``), as full rankings (one gene per line) and as their top 200 with
``--universe 8562``; and random lists (random rankings, uniform p-values). Prints one table;
figures and their reading are in docs/benchmarks.md ("Null calibration on real data").
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
from _util import REAL  # noqa: E402

ALL = REAL / "ALL"
EXPR = ALL / "ALL_gene_expr.tsv.gz"
SAMPLES = ALL / "ALL_samples.tsv"
KNOWLEDGE = [
    "--go",
    str(REAL / "GO" / "go-basic_2022-07-01_from_GO.db.obo.gz"),
    "--go-annotations",
    str(REAL / "GO" / "goa_human_entrez_2022-Sep12_from_org.Hs.eg.db.tsv.gz"),
    "--pathways",
    str(REAL / "KEGG" / "kegg_hsa_pathways_2011-Mar15.tsv"),
    "--interactions",
    str(REAL / "PPI" / "string_example_gene_edges.tsv.gz"),
]
SUBTYPES = ("ALL1/AF4", "BCR/ABL", "NEG")
Q = 0.10
TOP = 50
KEGG: set[str] = set()


def _data():
    import pandas as pd

    expr = pd.read_csv(EXPR, sep="\t", dtype={"entrez_id": str})
    samples = pd.read_csv(SAMPLES, sep="\t", dtype=str)
    return expr, samples


def _hubs(symbols) -> set[str]:
    """The 10 % of the matrix's genes with the most GO annotations (distinct direct terms),
    KEGG pathways and STRING partners."""
    import pandas as pd

    count = dict.fromkeys(symbols, 0)
    goa = pd.read_csv(KNOWLEDGE[3], sep="\t", usecols=["symbol", "go_id"]).drop_duplicates()
    for g, n in goa.groupby("symbol").size().items():
        if g in count:
            count[g] += int(n)
    kegg = pd.read_csv(KNOWLEDGE[5], sep="\t", usecols=["symbols"])
    for row in kegg["symbols"].dropna():
        for g in set(row.split(",")):
            if g in count:
                count[g] += 1
    ppi = pd.read_csv(KNOWLEDGE[7], sep="\t", usecols=["symbol_a", "symbol_b"])
    for col in ("symbol_a", "symbol_b"):
        for g, n in ppi[col].value_counts().items():
            if g in count:
                count[g] += int(n)
    genes = sorted(count, key=lambda g: -count[g])
    return set(genes[: len(genes) // 10])


def _kegg_genes() -> set[str]:
    import pandas as pd

    kegg = pd.read_csv(KNOWLEDGE[5], sep="\t", usecols=["symbols"])
    return {g for row in kegg["symbols"].dropna() for g in row.split(",")}


def _auc(score: np.ndarray, positive: np.ndarray) -> float:
    from scipy.stats import rankdata

    r = rankdata(score)
    n1, n0 = int(positive.sum()), int((~positive).sum())
    return float((r[positive].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def _bh_calls(p: np.ndarray, q: float = Q) -> int:
    p = np.sort(p[np.isfinite(p)])
    m = len(p)
    ok = np.nonzero(p <= q * np.arange(1, m + 1) / m)[0]
    return 0 if len(ok) == 0 else int(ok[-1] + 1)


def _f_test_p(values: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """One-way ANOVA p-value of every row of ``values`` (genes x samples) over ``labels``."""
    from scipy.stats import f

    groups = [labels == c for c in np.unique(labels)]
    n, k = len(labels), len(groups)
    mean = values.mean(axis=1, keepdims=True)
    between = sum(g.sum() * (values[:, g].mean(axis=1) - mean[:, 0]) ** 2 for g in groups)
    within = sum(
        ((values[:, g] - values[:, g].mean(axis=1, keepdims=True)) ** 2).sum(1) for g in groups
    )
    stat = (between / (k - 1)) / (within / (n - k))
    return f.sf(stat, k - 1, n - k)


def _welch(values: np.ndarray, labels: np.ndarray):
    from scipy.stats import ttest_ind

    a, b = np.unique(labels)
    t, p = ttest_ind(values[:, labels == a], values[:, labels == b], axis=1, equal_var=False)
    lfc = values[:, labels == a].mean(1) - values[:, labels == b].mean(1)
    return t, p, lfc


def _write_matrix(path: Path, symbols, sample_ids, values: np.ndarray) -> None:
    with gzip.open(path, "wt", compresslevel=1) as fh:
        fh.write("symbol\t" + "\t".join(sample_ids) + "\n")
        for g, row in zip(symbols, values, strict=True):
            fh.write(g + "\t" + "\t".join(f"{v:.4f}" for v in row) + "\n")


def _rank(
    expr_path: Path,
    labels_path: Path | None,
    column: str,
    knowledge: bool,
    out: Path,
    gene_column: str | None = "symbol",
) -> tuple[float, dict]:
    """``kofs rank`` as a child process (``labels_path`` None: without labels)."""
    cmd = [sys.executable, "-m", "kofs", "rank", str(expr_path), "--no-report", "-o", str(out)]
    if gene_column is not None:
        cmd += ["--gene-column", gene_column]
    if labels_path is not None:
        cmd += ["--labels", str(labels_path), "--label-column", column, "--missing-labels", "drop"]
    cmd += KNOWLEDGE if knowledge else []
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"kofs rank failed: {proc.stderr.strip()[-2000:]}")
    return wall, _read_run(out)


def _read_run(out: Path) -> dict:
    import pandas as pd

    table = pd.read_csv(out / "ranking.tsv", sep="\t", dtype={"gene": str})
    gene = "symbol" if "symbol" in table.columns else "gene"
    calls = int((table["q_value"] <= Q).sum()) if "q_value" in table.columns else -1
    diag = json.loads((out / "manifest.json").read_text())["aggregation"]["diagnostics"]
    weights = pd.read_csv(out / "weights.tsv", sep="\t", index_col=0)["weight"]
    filt = float("nan")
    if "rank:Pathway-FILT" in table.columns:
        filt = _auc(-table["rank:Pathway-FILT"].to_numpy(float), table[gene].isin(KEGG).to_numpy())
    return {
        "calls": calls,
        "top": list(table[gene].astype(str)[:TOP]),
        "min_q": float(table["q_value"].min()) if "q_value" in table.columns else float("nan"),
        "fisher_weight": next(
            (float(w) for name, w in weights.items() if str(name).lower() == "fisher"), float("nan")
        ),
        "filt_auc": filt,
        "rct_p": (diag.get("relevant_class_test") or {}).get("p_value"),
        "signal_p": (diag.get("signal_test") or {}).get("p_value"),
    }


def _fmt_range(values) -> str:
    values = list(values)
    lo, hi = min(values), max(values)
    return f"{lo:g}" if lo == hi else f"{lo:g}-{hi:g}"


def _found(rows: list[dict]) -> int:
    """Runs whose relevant-class test finds a class (p <= 0.05)."""
    return sum(r["rct_p"] is not None and r["rct_p"] <= 0.05 for r in rows)


def _filt(rows: list[dict]) -> str:
    auc = [r["filt_auc"] for r in rows if np.isfinite(r["filt_auc"])]
    return "-" if not auc else f"{min(auc):.2f}-{max(auc):.2f}"


def rank_cases(
    seeds: list[int],
    work: Path,
    hubs: set[str],
    cases: set[str] | None = None,
    knowledge_runs: tuple[bool, ...] = (False, True),
) -> list[dict]:
    """Every ``kofs rank`` case x seed (``cases``: only these), with and without knowledge
    (``knowledge_runs``)."""
    import pandas as pd

    expr, samples = _data()
    symbols = list(expr["symbol"])
    sample_ids = [c for c in expr.columns if c not in ("entrez_id", "symbol", "probe_id")]
    values = expr[sample_ids].to_numpy(float)
    lineage = samples.set_index("sample_id").loc[sample_ids, "lineage"].to_numpy()
    mol = samples.set_index("sample_id").loc[sample_ids, "mol_biol"].to_numpy()
    bsub = (lineage == "B") & np.isin(mol, SUBTYPES)
    neg = (lineage == "B") & (mol == "NEG")
    rows: list[dict] = []

    def one(case: str, seed: int, expr_path: Path, labels: np.ndarray, vals: np.ndarray):
        if cases is not None and case not in cases:
            return
        lab_path = work / f"labels_{case.replace(' ', '_')}_{seed}.tsv"
        pd.DataFrame({"sample_id": sample_ids, "label": labels}).to_csv(
            lab_path, sep="\t", index=False
        )
        keep = labels != "NA"
        bh = _bh_calls(_f_test_p(vals[:, keep], labels[keep]))
        for knowledge in knowledge_runs:
            out = work / f"{case.replace(' ', '_')}_{seed}_{'kn' if knowledge else 'data'}"
            wall, res = _rank(expr_path, lab_path, "label", knowledge, out)
            res.update(
                case=case,
                seed=seed,
                knowledge=knowledge,
                wall=wall,
                bh=bh,
                hubs=sum(g in hubs for g in res["top"]),
            )
            rows.append(res)
            print(
                f"  {case:14s} seed {seed:2d} {'+kn ' if knowledge else 'data'}: "
                f"{res['calls']:5d} calls (F+BH {bh}), hubs in top {TOP} {res['hubs']:2d}, "
                f"min q {res['min_q']:.3g}, Fisher weight {res['fisher_weight']:.2f}, "
                f"signal p {res['signal_p']}, class p {res['rct_p']}, {wall:.1f} s",
                file=sys.stderr,
                flush=True,
            )

    if seeds and seeds[0] == 1:
        one("lineage true", 0, EXPR, lineage.astype(object), values)
    for seed in seeds:
        rng = np.random.default_rng(seed)
        one("lineage perm", seed, EXPR, rng.permutation(lineage).astype(object), values)
        sub = np.full(len(sample_ids), "NA", dtype=object)
        sub[bsub] = rng.permutation(mol[bsub])
        one("subtype perm", seed, EXPR, sub, values)
        halves = np.full(len(sample_ids), "NA", dtype=object)
        halves[neg] = rng.permutation(np.resize(np.array(["a", "b"], dtype=object), neg.sum()))
        one("NEG halves", seed, EXPR, halves, values)
    for seed in seeds if cases is None or {"gaussian", "resampled"} & cases else ():
        rng = np.random.default_rng(1000 + seed)
        noise = rng.normal(size=values.shape)
        path = work / f"gaussian_{seed}.tsv.gz"
        _write_matrix(path, symbols, sample_ids, noise)
        one("gaussian", seed, path, lineage.astype(object), noise)
        path.unlink()
        resampled = rng.permuted(values, axis=1)
        path = work / f"resampled_{seed}.tsv.gz"
        _write_matrix(path, symbols, sample_ids, resampled)
        one("resampled", seed, path, lineage.astype(object), resampled)
        path.unlink()
    return rows


def own_cases(expr_path: Path, labels_path: Path, column: str, seeds: list[int], work: Path):
    """The null cases on a user's own labelled matrix (``--own``): its true labels (positive
    control), its labels permuted over the labelled samples, and its genes each permuted over
    the samples, ranked without labels (the unsupervised default). Data lists only."""
    import pandas as pd

    sep = "," if ".csv" in expr_path.name.lower() else "\t"
    expr = pd.read_csv(expr_path, sep=sep, index_col=0)
    values = expr.to_numpy(float)
    lab = pd.read_csv(labels_path, sep="," if ".csv" in labels_path.name.lower() else "\t")
    lab = lab.set_index(lab.columns[0])[column].astype(str).reindex(expr.columns.astype(str))
    labels = lab.fillna("NA").to_numpy(dtype=object)
    keep = labels != "NA"
    rows: list[dict] = []

    def one(case: str, seed: int, path: Path, lab_values: np.ndarray | None, vals: np.ndarray):
        lab_path = None
        bh = -1
        if lab_values is not None:
            lab_path = work / f"own_labels_{seed}.tsv"
            pd.DataFrame({"sample_id": expr.columns, "label": lab_values}).to_csv(
                lab_path, sep="\t", index=False
            )
            bh = _bh_calls(_f_test_p(vals[:, keep], lab_values[keep]))
        out = work / f"{case.replace(' ', '_')}_{seed}"
        wall, res = _rank(path, lab_path, "label", False, out, gene_column=None)
        res.update(case=case, seed=seed, knowledge=False, wall=wall, bh=bh, hubs=0)
        rows.append(res)
        print(
            f"  {case:14s} seed {seed:2d}: {res['calls']:5d} calls (F+BH {bh}), "
            f"min q {res['min_q']:.3g}, {wall:.1f} s",
            file=sys.stderr,
            flush=True,
        )

    one("own true", 0, expr_path, labels, values)
    for seed in seeds:
        rng = np.random.default_rng(seed)
        perm = labels.copy()
        perm[keep] = rng.permutation(labels[keep])
        one("own perm", seed, expr_path, perm, values)
        resampled = rng.permuted(values, axis=1)
        path = work / f"own_resampled_{seed}.tsv.gz"
        _write_matrix(path, [str(g) for g in expr.index], list(expr.columns), resampled)
        one("own resampled, no labels", seed, path, None, resampled)
        path.unlink()
    return rows


def own_table(expr_path: Path, labels_path: Path, column: str, seeds: list[int]) -> list[dict]:
    work = Path(tempfile.mkdtemp(prefix="kofs-null-own-"))
    try:
        rows = own_cases(expr_path, labels_path, column, seeds, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"\n{expr_path.name}, labels {column}; seeds {seeds[0]}..{seeds[-1]}\n")
    print(
        "| case | runs | runs with a call | calls at q <= 0.10 (per run) | smallest q "
        "| F test + BH: runs with a call (calls) | wall s |"
    )
    print("|---|---|---|---|---|---|---|")
    for case in ("own perm", "own resampled, no labels", "own true"):
        sel = [r for r in rows if r["case"] == case]
        calls = [r["calls"] for r in sel]
        bh = [r["bh"] for r in sel if r["bh"] >= 0]
        bh_text = "-" if not bh else f"{sum(b > 0 for b in bh)} ({_fmt_range(bh)})"
        print(
            f"| {case} | {len(sel)} | {sum(c > 0 for c in calls)} | {_fmt_range(calls)} | "
            f"{min(r['min_q'] for r in sel):.2g} | {bh_text} | "
            f"{np.median([r['wall'] for r in sel]):.1f} |"
        )
    return rows


def list_cases(seeds: list[int], work: Path) -> list[dict]:
    """``kofs aggregate`` (``kofs.aggregate_lists``) on the tables of disjoint sample sets of
    ALL with independently permuted labels, and on random lists."""
    import pandas as pd

    import kofs

    expr, samples = _data()
    symbols = np.asarray(expr["symbol"])
    sample_ids = [c for c in expr.columns if c not in ("entrez_id", "symbol", "probe_id")]
    values = expr[sample_ids].to_numpy(float)
    lineage = samples.set_index("sample_id").loc[sample_ids, "lineage"].to_numpy()
    m = len(symbols)
    rows: list[dict] = []

    def fuse(case: str, seed: int, files: list, **kw):
        t0 = time.perf_counter()
        res = kofs.aggregate_lists([str(f) for f in files], **kw)
        wall = time.perf_counter() - t0
        frame = res.to_frame(lists=False)
        calls = int((frame["q_value"] <= Q).sum()) if "q_value" in frame.columns else -1
        min_q = float(frame["q_value"].min()) if "q_value" in frame.columns else float("nan")
        diag = dict(res.final.diagnostics or {})
        row = {
            "case": case,
            "seed": seed,
            "calls": calls,
            "min_q": min_q,
            "wall": wall,
            "rct_p": (diag.get("relevant_class_test") or {}).get("p_value"),
            "agree_p": (diag.get("agreement_test") or {}).get("p_value"),
        }
        rows.append(row)
        print(
            f"  {case:28s} seed {seed:2d}: {calls:5d} calls, relevant-class p {row['rct_p']}, "
            f"agreement p {row['agree_p']}, {wall:.1f} s",
            file=sys.stderr,
            flush=True,
        )
        return row

    for seed in seeds:
        rng = np.random.default_rng(2000 + seed)
        for parts in (2, 3):
            order = rng.permutation(len(sample_ids))
            chunks = np.array_split(order, parts)
            tables, pvals, ranks, tops = [], [], [], []
            bh = []
            for j, idx in enumerate(chunks):
                lab = rng.permutation(lineage[idx])
                t, p, lfc = _welch(values[:, idx], lab)
                bh.append(_bh_calls(p))
                base = work / f"half{parts}_{seed}_{j}"
                pd.DataFrame({"gene": symbols, "logFC": lfc, "t": t, "P.Value": p}).to_csv(
                    f"{base}.limma.tsv", sep="\t", index=False
                )
                pd.DataFrame({"gene": symbols, "pvalue": p}).to_csv(
                    f"{base}.p.tsv", sep="\t", index=False
                )
                order_p = symbols[np.argsort(p, kind="stable")]
                Path(f"{base}.rank.txt").write_text("\n".join(order_p) + "\n")
                Path(f"{base}.top200.txt").write_text("\n".join(order_p[:200]) + "\n")
                tables.append(f"{base}.limma.tsv")
                pvals.append(f"{base}.p.tsv")
                ranks.append(f"{base}.rank.txt")
                tops.append(f"{base}.top200.txt")
            name = f"{parts} perm-label studies"
            fuse(f"{name}: limma tables", seed, tables)["bh"] = max(bh)
            fuse(f"{name}: p-value tables", seed, pvals)["bh"] = max(bh)
            fuse(f"{name}: rankings", seed, ranks, universe=m)["bh"] = max(bh)
            fuse(f"{name}: top 200", seed, tops, universe=m)["bh"] = max(bh)
        rand_ranks, rand_p = [], []
        for j in range(3):
            base = work / f"random_{seed}_{j}"
            Path(f"{base}.rank.txt").write_text("\n".join(rng.permutation(symbols)) + "\n")
            pd.DataFrame({"gene": symbols, "pvalue": rng.uniform(size=m)}).to_csv(
                f"{base}.p.tsv", sep="\t", index=False
            )
            rand_ranks.append(f"{base}.rank.txt")
            rand_p.append(f"{base}.p.tsv")
        fuse("3 random rankings", seed, rand_ranks, universe=m)["bh"] = 0
        fuse("3 random p-value tables", seed, rand_p)["bh"] = 0
    return rows


def table(
    seeds: list[int],
    keep: Path | None = None,
    cases: set[str] | None = None,
    knowledge_runs: tuple[bool, ...] = (False, True),
) -> tuple[list[dict], list[dict]]:
    work = Path(tempfile.mkdtemp(prefix="kofs-null-")) if keep is None else keep
    work.mkdir(parents=True, exist_ok=True)
    try:
        expr, _ = _data()
        hubs = _hubs(list(expr["symbol"]))
        KEGG.update(_kegg_genes())
        t0 = time.perf_counter()
        ranks = rank_cases(seeds, work, hubs, cases, knowledge_runs)
        lists = list_cases(seeds, work) if cases is None or "lists" in cases else []
        total = time.perf_counter() - t0
    finally:
        if keep is None:
            shutil.rmtree(work, ignore_errors=True)
    print(f"\nseeds {seeds[0]}..{seeds[-1]}; {total:.0f} s wall in all\n")
    print(
        "| `kofs rank` case | knowledge | runs | runs with a call | calls at q <= 0.10 "
        "(per run) | smallest q | class found | F test + BH calls | hubs in top 50 (random: 5) "
        "| Pathway-FILT AUC for KEGG genes | wall s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    cases = ("lineage perm", "subtype perm", "NEG halves", "gaussian", "resampled", "lineage true")
    for case in cases:
        for knowledge in (False, True):
            sel = [r for r in ranks if r["case"] == case and r["knowledge"] == knowledge]
            if not sel:
                continue
            calls = [r["calls"] for r in sel]
            print(
                f"| {case} | {'GO+KEGG+STRING' if knowledge else 'none'} | {len(sel)} | "
                f"{sum(c > 0 for c in calls)} | {_fmt_range(calls)} (mean "
                f"{np.mean(calls):.1f}) | {min(r['min_q'] for r in sel):.2g} | {_found(sel)} | "
                f"{_fmt_range(r['bh'] for r in sel)} | "
                f"{_fmt_range(r['hubs'] for r in sel)} (mean {np.mean([r['hubs'] for r in sel]):.1f})"
                f" | {_filt(sel)} | {np.median([r['wall'] for r in sel]):.1f} |"
            )
    print()
    print(
        "| `kofs aggregate` lists | runs | runs with a call | calls at q <= 0.10 (per run) | "
        "smallest q | class found | BH on each table | wall s |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for case in dict.fromkeys(r["case"] for r in lists):
        sel = [r for r in lists if r["case"] == case]
        calls = [r["calls"] for r in sel]
        print(
            f"| {case} | {len(sel)} | {sum(c > 0 for c in calls)} | {_fmt_range(calls)} | "
            f"{min(r['min_q'] for r in sel):.2g} | {_found(sel)} | {_fmt_range(r['bh'] for r in sel)} | {np.median([r['wall'] for r in sel]):.1f} |"
        )
    return ranks, lists


def run() -> list[dict]:
    """Rows for ``bench/run.py`` (3 seeds): the largest number of calls of any null run."""
    if not EXPR.exists():
        return []
    ranks, lists = table([1, 2, 3])
    null_ranks = [r for r in ranks if r["case"] != "lineage true"]
    positive = [r["calls"] for r in ranks if r["case"] == "lineage true"]
    return [
        {
            "benchmark": "real null (permuted labels, noise matrices): most calls at q <= 0.10",
            "value": float(max(r["calls"] for r in null_ranks)),
            "unit": "genes",
            "target": 0.0,
        },
        {
            "benchmark": "real null lists (permuted-label studies, random lists): most calls",
            "value": float(max(r["calls"] for r in lists)),
            "unit": "genes",
            "target": 0.0,
        },
        {
            "benchmark": "ALL true lineage (positive control): fewest calls",
            "value": float(min(positive)),
            "unit": "genes",
        },
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--quick", action="store_true", help="seeds 1..3")
    ap.add_argument("--seeds", type=int, default=10, help="seeds 1..N (default 10)")
    ap.add_argument("--first", type=int, default=1, help="first seed (default 1)")
    ap.add_argument(
        "--cases",
        default=None,
        help="only these cases, comma-separated: lineage perm, subtype perm, NEG halves, "
        "gaussian, resampled, lists (default all)",
    )
    ap.add_argument(
        "--knowledge", choices=("both", "none", "only"), default="both", help="runs to make"
    )
    ap.add_argument("--keep", type=Path, default=None, help="keep the runs' folders here")
    ap.add_argument(
        "--own",
        nargs=3,
        metavar=("EXPRESSION", "LABELS", "COLUMN"),
        default=None,
        help="instead: the null cases on your own matrix (genes x samples, first column the "
        "gene ids) and labels (first column the sample ids)",
    )
    args = ap.parse_args(argv)
    n = 3 if args.quick else args.seeds
    if args.own is not None:
        expr_path, labels_path = Path(args.own[0]).resolve(), Path(args.own[1]).resolve()
        column = args.own[2]
        own_table(expr_path, labels_path, column, list(range(args.first, args.first + n)))
        return 0
    if not EXPR.exists():
        print(f"needs the shared real data ({EXPR})", file=sys.stderr)
        return 2
    cases = None if args.cases is None else {c.strip() for c in args.cases.split(",")}
    runs = {"both": (False, True), "none": (False,), "only": (True,)}[args.knowledge]
    table(list(range(args.first, args.first + n)), args.keep, cases, runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
