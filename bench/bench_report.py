"""The run report (report.html of `kofs rank`) and the gene-symbol lookup.

* building report.html of the bundled demo (1,549 genes x 128 samples, 8 lists) in a fresh
  process, matplotlib import included — target under 2 s;
* the same for the ALL matrix (8,562 genes) with KEGG and STRING lists;
* symbols of the 8,562 ALL genes found in the full GO annotation table (348,116 rows) when the
  matrix has no symbol column.
"""

from __future__ import annotations

from _util import REAL, run_child

_DEMO = """
import time
from kofs.example import example_paths
from kofs.io.expression import read_expression
from kofs.io.labels import align_labels, read_labels
from kofs.pipeline import rank
from kofs.sources import read_sources
p = example_paths()
lab = read_labels(p["labels"], label_column="lineage")
expr, lab = align_labels(read_expression(p["expression"], sample_ids=lab.samples), lab)
src = read_sources(go=p["go"], go_annotations=p["go_annotations"], pathways=p["pathways"],
                   interactions=p["interactions"])
res = rank(expr, labels=lab, sources=src)
t0, c0 = time.perf_counter(), time.process_time()
from kofs.report.run import run_report_html
page = run_report_html(res, labels=lab)
print(time.perf_counter() - t0, time.process_time() - c0, len(page))
"""

_ALL = f"""
import time
from kofs.io.expression import read_expression
from kofs.io.labels import align_labels, read_labels
from kofs.pipeline import rank
from kofs.sources import read_sources
R = {str(REAL)!r}
lab = read_labels(R + "/ALL/ALL_samples.tsv", label_column="lineage")
expr, lab = align_labels(read_expression(R + "/ALL/ALL_gene_expr.tsv.gz",
                                         sample_ids=lab.samples), lab)
src = read_sources(pathways=R + "/KEGG/kegg_hsa_pathways_2011-Mar15.tsv",
                   interactions=R + "/PPI/string_example_gene_edges.tsv.gz")
res = rank(expr, labels=lab, sources=src)
t0, c0 = time.perf_counter(), time.process_time()
from kofs.report.run import run_report_html
page = run_report_html(res, labels=lab)
print(time.perf_counter() - t0, time.process_time() - c0, len(page))
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


def run() -> list[dict]:
    rows = []
    _, _, out = run_child(_DEMO)
    secs, cpu, size = out.split()[-3:]
    rows.append(
        {
            "benchmark": "report.html of the demo (fresh process, matplotlib import incl.)",
            "value": float(secs),
            "unit": "s",
            "target": 2.0,
            "note": f"CPU {float(cpu):.2f} s; {int(size) / 1e3:.0f} kB page",
        }
    )
    _, _, out = run_child(_ALL)
    secs, cpu, size = out.split()[-3:]
    rows.append(
        {
            "benchmark": "report.html of ALL 8,562 genes, KEGG + STRING lists",
            "value": float(secs),
            "unit": "s",
            "target": 2.0,
            "note": f"CPU {float(cpu):.2f} s; {int(size) / 1e3:.0f} kB page",
        }
    )
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
