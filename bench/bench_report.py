"""What report.html adds to a run, and the gene-symbol lookup.

The report is built in a fresh process after the run (everything a run imports is loaded; the
report's own imports, matplotlib among them, are timed), on

* the bundled demo (1,549 genes x 128 samples, GO + KEGG + STRING, 8 lists);
* ALL (8,562 genes x 128 samples) with every source (GO, KEGG, STRING);
* a synthetic 50,000-gene x 200-sample matrix with labels (3 lists) -- issue 25's target:
  report.html adds < 0.5 s to any run of up to 50,000 genes;

and the symbols of the 8,562 ALL genes found in the full GO annotation table.

``python bench/bench_report.py [--compare TREE] [--repeat N]`` prints a table; with
``--compare`` each case also runs with ``PYTHONPATH=TREE`` (e.g. an older checkout), the two
trees alternating, so that the ratio holds on a loaded machine.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from _util import REAL, SHARED, run_child

HERE = Path(__file__).resolve().parent
TREE = HERE.parent

_TIME_REPORT = """
import json, time
t0, c0 = time.perf_counter(), time.process_time()
from kofs.report.run import run_report_html
page = run_report_html(res, labels=res.labels)
print(json.dumps({"wall": time.perf_counter() - t0, "cpu": time.process_time() - c0,
                  "bytes": len(page)}))
"""

_DEMO = """
import kofs
from kofs.datasets.example import example_config
res = kofs.run(example_config())
"""

_ALL = f"""
import kofs
R = {str(REAL)!r}
res = kofs.run({{
    "expression": R + "/ALL/ALL_gene_expr.tsv.gz",
    "labels": R + "/ALL/ALL_samples.tsv", "label_column": "lineage",
    "go": R + "/GO/go-basic_2022-07-01_from_GO.db.obo.gz",
    "go_annotations": R + "/GO/goa_human_entrez_2022-Sep12_from_org.Hs.eg.db.tsv.gz",
    "pathways": R + "/KEGG/msigdb_c2_cp_kegg_symbols_qusage.gmt",
    "interactions": R + "/PPI/string_example_gene_edges.tsv.gz",
}})
"""

_LARGE = """
import numpy as np
import kofs
from kofs.types import Expression, SampleCategories
rng = np.random.default_rng(0)
n, m = 200, 50_000
y = np.array(["a", "b", "c", "d"] * (n // 4))
X = rng.normal(size=(n, m))
X[:, :200] += (y == "a")[:, None] * 2.0
genes = [f"G{j}" for j in range(m)]
samples = [f"s{i}" for i in range(n)]
expr = Expression(X, genes, samples)
lab = SampleCategories(tuple(y), tuple(samples), name="group")
res = kofs.rank(expr, labels=lab, rankers=["fisher", "variance", "laplacian"])
"""

_SYMBOLS = f"""
import time
from kofs.io.annotations import read_go_annotations
from kofs.io.expression import read_expression
from kofs.io.symbols import gene_symbols
from kofs.types import Expression
R = {str(REAL)!r}
e = read_expression(R + "/ALL/ALL_gene_expr.tsv.gz")
bare = Expression(e.values, e.genes, e.samples, namespace=e.namespace,
                  annotations={{"probe_id": e.annotations["probe_id"]}})
go = read_go_annotations(R + "/GO/goa_human_entrez_2022-Sep12_from_org.Hs.eg.db.tsv.gz")
t0, c0 = time.perf_counter(), time.process_time()
s = gene_symbols(bare, go_annotations=go)
print(time.perf_counter() - t0, time.process_time() - c0, len(s))
"""

CASES = [
    ("demo, 1,549 genes, 8 lists", _DEMO),
    ("ALL, 8,562 genes, every source", _ALL),
    ("synthetic, 50,000 genes x 200 samples, 3 lists", _LARGE),
]


def _report_seconds(setup: str, tree: Path) -> dict:
    """Build a run in a fresh process with ``PYTHONPATH=tree``, then time its report."""
    import json

    env = {**os.environ, "PYTHONPATH": str(tree), "KOFS_SHARED": str(SHARED)}
    proc = subprocess.run(
        [sys.executable, "-c", setup + _TIME_REPORT],
        capture_output=True,
        text=True,
        env=env,
        cwd=tree,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark child failed: {proc.stderr.strip()[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def measure(trees: list[Path], repeat: int = 1) -> list[dict]:
    """Rows of report seconds per case and tree (trees alternating inside each repeat)."""
    rows = []
    for label, setup in CASES:
        best: dict[Path, dict] = {}
        for _ in range(repeat):
            for tree in trees:
                got = _report_seconds(setup, tree)
                if tree not in best or got["wall"] < best[tree]["wall"]:
                    best[tree] = got
        for tree in trees:
            got = best[tree]
            rows.append(
                {
                    "benchmark": f"report.html: {label}" + ("" if tree == TREE else f" [{tree}]"),
                    "value": round(got["wall"], 3),
                    "unit": "s",
                    "target": 0.5,
                    "note": f"CPU {got['cpu']:.2f} s; {got['bytes'] / 1e3:.0f} kB page",
                }
            )
    return rows


def run() -> list[dict]:
    rows = measure([TREE])
    _, _, out = run_child(_SYMBOLS)
    secs, cpu, n = out.split()[-3:]
    rows.append(
        {
            "benchmark": "symbols of 8,562 ALL genes from the GO table (348,116 rows)",
            "value": float(secs),
            "unit": "s",
            "note": f"CPU {float(cpu):.2f} s; {n} genes got a symbol",
        }
    )
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--compare", type=Path, default=None, help="another source tree to time")
    ap.add_argument("--repeat", type=int, default=1, help="best of N per case and tree")
    args = ap.parse_args(argv)
    trees = [TREE] + ([args.compare.resolve()] if args.compare else [])
    t0 = time.perf_counter()
    rows = measure(trees, repeat=args.repeat)
    print(f"{'benchmark':<80} {'seconds':>8} {'target':>7}  note")
    for r in rows:
        print(f"{r['benchmark']:<80} {r['value']:>8.3f} {r['target']:>7.2f}  {r['note']}")
    print(f"# {time.perf_counter() - t0:.0f} s in all", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
