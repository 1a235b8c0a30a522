"""Derive the bundled example data set (kofs/data/example/) from ../shared/data/real.

Run from the repository root: ``python data_fetchers/build_example.py [SHARED_REAL_DIR]``.
The output is deterministic (no randomness); PROVENANCE.md in the output folder records what
was taken from which file. Only small derived subsets are written (< 3 MB in all).
"""

from __future__ import annotations

import gzip
import re
import sys
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "kofs" / "data" / "example"
N_VARIABLE = 1200
RELATIONS = ("is_a", "part_of", "regulates", "negatively_regulates", "positively_regulates")


def _write_gz(path: Path, text: str) -> None:
    # mtime=0 keeps the bytes identical between runs
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz:
        gz.write(text.encode())


def choose_genes(expr: pd.DataFrame, cancer: pd.DataFrame) -> pd.DataFrame:
    values = expr.drop(columns=["entrez_id", "symbol", "probe_id"])
    var = values.var(axis=1, ddof=0)
    top = set(var.sort_values(ascending=False, kind="mergesort").index[:N_VARIABLE])
    heme = set(cancer.loc[cancer["oncokb_msk_heme"] == "True", "symbol"])
    keep = [i for i in expr.index if i in top or expr.at[i, "symbol"] in heme]
    return expr.loc[keep]


def obo_subset(obo_text: str, wanted: set[str]) -> tuple[str, int]:
    """Header + every stanza that is an ancestor (over RELATIONS) of a wanted term."""
    header, *stanzas = re.split(r"\n(?=\[Term\]|\[Typedef\])", obo_text)
    terms: dict[str, str] = {}
    parents: dict[str, set[str]] = {}
    alt: dict[str, str] = {}
    typedefs = []
    for st in stanzas:
        if not st.startswith("[Term]"):
            typedefs.append(st)
            continue
        tid = re.search(r"^id: (\S+)", st, re.M).group(1)
        terms[tid] = st
        ps = set(re.findall(r"^is_a: (GO:\d+)", st, re.M))
        ps |= {
            m[1]
            for m in re.findall(r"^relationship: (\S+) (GO:\d+)", st, re.M)
            if m[0] in RELATIONS
        }
        parents[tid] = ps
        for a in re.findall(r"^alt_id: (\S+)", st, re.M):
            alt[a] = tid
    todo = [alt.get(t, t) for t in wanted]
    seen: set[str] = set()
    while todo:
        t = todo.pop()
        if t in seen or t not in terms:
            continue
        seen.add(t)
        todo.extend(parents[t])
    body = "\n".join(terms[t].rstrip("\n") + "\n" for t in sorted(seen))
    return header.rstrip("\n") + "\n\n" + body + "".join("\n" + s for s in typedefs), len(seen)


def main(real: Path) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    expr = pd.read_csv(
        real / "ALL" / "ALL_gene_expr.tsv.gz",
        sep="\t",
        dtype={"entrez_id": str},
        keep_default_na=False,
    )
    cancer = pd.read_csv(real / "cancer" / "cancer_genes_summary.tsv", sep="\t", dtype=str)
    sub = choose_genes(expr, cancer)
    samples = [c for c in expr.columns if c not in ("entrez_id", "symbol", "probe_id")]
    table = sub[["symbol", "entrez_id"] + samples]
    _write_gz(
        OUT / "expression.tsv.gz",
        table.to_csv(sep="\t", index=False, float_format="%.4f", lineterminator="\n"),
    )
    genes = set(sub["symbol"])
    entrez = set(sub["entrez_id"])

    meta = pd.read_csv(real / "ALL" / "ALL_samples.tsv", sep="\t", dtype=str, keep_default_na=False)
    meta[["sample_id", "lineage", "BT_stage", "mol_biol"]].to_csv(
        OUT / "labels.tsv", sep="\t", index=False, lineterminator="\n"
    )

    heme = cancer[(cancer["oncokb_msk_heme"] == "True") & cancer["symbol"].isin(genes)]
    (OUT / "relevant_genes.txt").write_text(
        "# haematological cancer genes (OncoKB MSK-HEME) present in the example matrix\n"
        + "\n".join(sorted(heme["symbol"]))
        + "\n"
    )

    ann = pd.read_csv(
        real / "GO" / "goa_human_entrez_2022-Sep12_from_org.Hs.eg.db.tsv.gz", sep="\t", dtype=str
    )
    ann = ann[ann["entrez_id"].isin(entrez)]
    _write_gz(OUT / "go_annotations.tsv.gz", ann.to_csv(sep="\t", index=False, lineterminator="\n"))
    with gzip.open(real / "GO" / "go-basic_2022-07-01_from_GO.db.obo.gz", "rt") as fh:
        obo, n_terms = obo_subset(fh.read(), set(ann["go_id"]))
    _write_gz(OUT / "go.obo.gz", obo)

    gmt_lines = []
    for line in (real / "KEGG" / "msigdb_c2_cp_kegg_symbols_qusage.gmt").read_text().splitlines():
        name, desc, *members = line.split("\t")
        kept = [g for g in members if g in genes]
        if kept:
            gmt_lines.append("\t".join([name, desc, *kept]))
    (OUT / "kegg.gmt").write_text("\n".join(gmt_lines) + "\n")

    edges = pd.read_csv(real / "PPI" / "string_example_gene_edges.tsv.gz", sep="\t", dtype=str)
    edges = edges[edges["symbol_a"].isin(genes) & edges["symbol_b"].isin(genes)]
    edges[["symbol_a", "symbol_b", "score"]].to_csv(
        OUT / "interactions.tsv", sep="\t", index=False, lineterminator="\n"
    )

    counts = dict(
        genes=len(sub),
        samples=len(samples),
        go_rows=len(ann),
        go_terms=n_terms,
        gene_sets=len(gmt_lines),
        edges=len(edges),
        relevant=len(heme),
    )
    (OUT / "PROVENANCE.md").write_text(PROVENANCE.format(n_var=N_VARIABLE, **counts))
    print(counts)


PROVENANCE = """# Bundled example data (derived; do not edit by hand)

Made by `python data_fetchers/build_example.py` from the real public files in
`shared/data/real` (see that folder's README.md for the packages they were extracted from). All
content is real; nothing is simulated.

| file | derived from | what | licence |
|---|---|---|---|
| `expression.tsv.gz` | `ALL/ALL_gene_expr.tsv.gz` (Bioconductor ALL 1.40.0 via Debian r-bioc-all; Chiaretti et al. 2004/2005, HG-U95Av2, RMA log2) | {genes} genes x {samples} samples: the {n_var} genes of largest variance plus every OncoKB MSK-HEME gene in the matrix; columns `symbol`, `entrez_id`, samples | Artistic-2.0 |
| `labels.tsv` | `ALL/ALL_samples.tsv` | `sample_id`, `lineage` (B/T), `BT_stage`, `mol_biol` | Artistic-2.0 |
| `relevant_genes.txt` | `cancer/cancer_genes_summary.tsv` (OncoKB cancer gene list) | {relevant} haematological cancer genes (MSK-HEME panel) in the matrix | OncoKB terms |
| `go_annotations.tsv.gz` | `GO/goa_human_entrez_2022-Sep12_from_org.Hs.eg.db.tsv.gz` (NCBI gene2go via org.Hs.eg.db 3.16.0) | {go_rows} rows for the example's genes: `entrez_id, symbol, go_id, evidence, aspect` | Artistic-2.0; GO CC BY 4.0 |
| `go.obo.gz` | `GO/go-basic_2022-07-01_from_GO.db.obo.gz` (GO release 2022-07-01) | the {go_terms} terms that are the annotated terms or their ancestors over is_a, part_of, regulates, negatively/positively_regulates; header kept | CC BY 4.0 |
| `kegg.gmt` | `KEGG/msigdb_c2_cp_kegg_symbols_qusage.gmt` (MSigDB c2.cp.kegg via Debian r-bioc-qusage) | {gene_sets} KEGG gene sets restricted to the example's genes | GPL-2+; KEGG terms |
| `interactions.tsv` | `PPI/string_example_gene_edges.tsv.gz` (STRINGdb example subset) | {edges} undirected gene pairs among the example's genes (`symbol_a, symbol_b, score`) | CC BY 4.0 |
"""

if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else REPO.parent / "shared" / "data" / "real")
