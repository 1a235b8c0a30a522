"""GO semantic similarity: all-pairs Lin-BMA on the ALL genes, and R GOSemSim vs kofs.

1. All-pairs Lin-BMA (kofs mode, BP) for the 8,562 ALL genes (Entrez ids of the ALL matrix,
   shared org.Hs.eg.db TSV annotations): wall time of the similarity step and of the whole
   child process (reading OBO + annotations included), and the child's peak RSS.
   Targets: < 30 s, < 4 GB.
2. R GOSemSim 2.24 ``mgeneSim(measure="Lin", combine="BMA")`` on a 300-gene subset, timed inside
   Rscript (``godata()`` excluded), vs kofs ``mode="gosemsim"`` on the same genes: speed ratio
   per gene pair (R time / kofs time) and the largest absolute difference of the two matrices
   (target 0: kofs reproduces GOSemSim to its 3 printed decimals).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from _util import REAL, run_child

ROOT = Path(__file__).resolve().parents[1]
OBO = REAL / "GO" / "go-basic_2022-07-01_from_GO.db.obo.gz"
ANN = REAL / "GO" / "goa_human_entrez_2022-Sep12_from_org.Hs.eg.db.tsv.gz"
N_SUBSET = 300

_ALL_PAIRS = f"""
import time, pandas as pd
t0 = time.perf_counter()
from kofs.io.ontology import read_obo
from kofs.io.annotations import read_go_annotations
from kofs.knowledge.go import gene_similarity
onto = read_obo({str(OBO)!r})
ann = read_go_annotations({str(ANN)!r})
genes = pd.read_csv({str(REAL / "ALL" / "ALL_gene_expr.tsv.gz")!r}, sep="\\t",
                    usecols=["entrez_id"], dtype=str)["entrez_id"].tolist()
t1 = time.perf_counter()
s, kept = gene_similarity(onto, ann, genes, measure="lin", combine="bma", aspect="BP")
t2 = time.perf_counter()
print(t2 - t1, t2 - t0, len(genes), len(kept))
"""

_R = """
suppressPackageStartupMessages({library(GOSemSim); library(org.Hs.eg.db)})
args <- commandArgs(TRUE)
genes <- readLines(args[1])
d <- godata("org.Hs.eg.db", ont = "BP")
t <- system.time(s <- mgeneSim(genes, semData = d, measure = "Lin", combine = "BMA", verbose = FALSE))
write.table(cbind(gene = rownames(s), as.data.frame(s, check.names = FALSE)), args[2],
            sep = "\\t", quote = FALSE, row.names = FALSE, na = "NA")
cat(t[["elapsed"]], "\\n")
"""


def _subset_genes() -> list[str]:
    genes = pd.read_csv(REAL / "ALL" / "ALL_gene_expr.tsv.gz", sep="\t", usecols=["entrez_id"],
                        dtype=str)["entrez_id"].tolist()  # fmt: skip
    rng = np.random.default_rng(0)
    return sorted(rng.choice(genes, N_SUBSET, replace=False).tolist(), key=int)


def _versus_r() -> list[dict]:
    from kofs.io.annotations import read_go_annotations
    from kofs.io.ontology import read_obo
    from kofs.knowledge.go import gene_similarity
    from kofs.knowledge.go_semantics import go_semantics

    if shutil.which("Rscript") is None:
        return []
    genes = _subset_genes()
    with tempfile.TemporaryDirectory(prefix="kofs-bench-gosim-") as tmp:
        gfile, out, script = Path(tmp) / "genes.txt", Path(tmp) / "r.tsv", Path(tmp) / "run.R"
        gfile.write_text("\n".join(genes) + "\n")
        script.write_text(_R)
        proc = subprocess.run(["Rscript", str(script), str(gfile), str(out)],
                              capture_output=True, text=True)  # fmt: skip
        if proc.returncode != 0 and "there is no package called" in proc.stderr:
            return []  # R without GOSemSim / org.Hs.eg.db: nothing to compare with
        if proc.returncode != 0:
            raise RuntimeError(f"Rscript failed: {proc.stderr.strip()[-500:]}")
        r_seconds = float(proc.stdout.split()[-1])
        ref = pd.read_csv(out, sep="\t", index_col=0, dtype=str)
    onto, ann = read_obo(OBO), read_go_annotations(ANN)
    t0 = time.perf_counter()
    # the GOSemSim 2.24 term table of GO 2022-07-01 ships with kofs and is picked by release
    sem = go_semantics(onto, ann, aspect="BP", mode="gosemsim")
    s, kept = gene_similarity(onto, ann, genes, measure="lin", mode="gosemsim", semantics=sem)
    ours = time.perf_counter() - t0
    pos = [genes.index(g) for g in ref.index]
    same_genes = kept == list(ref.index)
    diff = float(np.nanmax(np.abs(s[np.ix_(pos, pos)] - ref.to_numpy(dtype=float))))
    n_pairs = len(kept) * (len(kept) + 1) / 2
    return [
        {"benchmark": f"GOSemSim mgeneSim Lin-BMA, {len(kept)} genes (R)", "value": r_seconds,
         "unit": "s", "target": None, "note": f"{1e3 * r_seconds / n_pairs:.3f} ms/pair"},
        {"benchmark": f"kofs gosemsim mode, same {len(kept)} genes (IC included)", "value": ours,
         "unit": "s", "target": None, "note": f"{1e3 * ours / n_pairs:.4f} ms/pair"},
        {"benchmark": "speed ratio per pair R / kofs", "value": r_seconds / ours, "unit": "x",
         "target": None, "note": "higher = kofs faster"},
        {"benchmark": "max |kofs - GOSemSim| (3-decimal values)", "value": diff, "unit": "",
         "target": 0.0, "note": "same genes kept" if same_genes else "GENE SETS DIFFER"},
    ]  # fmt: skip


_HUMAN = f"""
import gzip, os, tempfile, time
import numpy as np
from kofs.io.ontology import read_obo
from kofs.io.annotations import read_go_annotations
from kofs.io.output import write_similarity_npz
from kofs.knowledge.go import gene_similarity, genes_with_terms
from kofs.knowledge.go_semantics import go_semantics
onto = read_obo({str(OBO)!r})
ann = read_go_annotations({str(ANN)!r}, ontology=onto)
genes = sorted({{g for g, a in zip(ann.gene_ids(), ann.aspect) if a == "BP"}}, key=int)
sem = go_semantics(onto, ann)
genes = genes_with_terms(onto, ann, genes, semantics=sem)
t0 = time.perf_counter()
s, kept = gene_similarity(onto, ann, genes, semantics=sem, dtype=np.float32)
t1 = time.perf_counter()
with tempfile.TemporaryDirectory(prefix="kofs-bench-") as tmp:
    with open(os.path.join(tmp, "sim.npz"), "wb") as fh:
        write_similarity_npz(fh, kept, s)
    size = os.path.getsize(os.path.join(tmp, "sim.npz"))
t2 = time.perf_counter()
print(t1 - t0, t2 - t1, size / 2**30, len(kept))
"""


def run() -> list[dict]:
    wall, rss, out = run_child(_ALL_PAIRS)
    sim_s, total_s, n, kept = out.split()[-4:]
    rows = [
        {"benchmark": f"all-pairs Lin-BMA BP, {n} ALL genes ({kept} with terms)",
         "value": float(sim_s), "unit": "s", "target": 30.0, "note": "similarity step"},
        {"benchmark": "  same, whole process incl. reading OBO + annotations",
         "value": float(total_s), "unit": "s", "target": None, "note": f"child wall {wall:.1f} s"},
        {"benchmark": "  peak RSS", "value": rss, "unit": "MB", "target": 4096.0, "note": ""},
    ]  # fmt: skip
    wall, rss, out = run_child(_HUMAN)
    sim_s, write_s, gb, n = out.split()[-4:]
    rows += [
        {"benchmark": f"all-pairs Lin-BMA BP, {n} human genes (float32)", "value": float(sim_s),
         "unit": "s", "target": None, "note": "similarity step (kofs gosim -o sim.npz)"},
        {"benchmark": "  writing sim.npz", "value": float(write_s), "unit": "s", "target": None,
         "note": f"{float(gb):.2f} GB"},
        {"benchmark": "  peak RSS", "value": rss, "unit": "MB", "target": None,
         "note": f"child wall {wall:.1f} s"},
    ]  # fmt: skip
    return rows + _versus_r()
