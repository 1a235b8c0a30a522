"""Regenerate the scanpy golden files beside this script (run from the repository root with
scanpy 1.11.5 installed: ``PYTHONPATH=. python tests/data/single_cell/make_scanpy_golden.py``).

The counts scanpy's count flavours need are recovered from the file's log-normalised ``X``
by kofs (``kofs._compute.counts.counts_view``: whole numbers, checked).
"""

import anndata as ad
import numpy as np
import pandas as pd
import scanpy as sc
import scipy.sparse as sp

from kofs._compute.counts import counts_view

if not hasattr(sp.csr_array, "getnnz"):  # scanpy 1.11.5 with scipy >= 1.17
    sp.csr_array.getnnz = lambda self, axis=None: self._getnnz(axis=axis)

HERE = "tests/data/single_cell/"
a = ad.read_h5ad(HERE + "pbmc68k_reduced_raw.h5ad")
X = sp.csr_matrix(a.X, dtype=np.float64)
c = ad.AnnData(
    sp.csr_matrix(counts_view(X).X), obs=a.obs.copy(), var=pd.DataFrame(index=a.var_names)
)
hvg = sc.experimental.pp.highly_variable_genes
pr = hvg(c, flavor="pearson_residuals", n_top_genes=100, inplace=False)["residual_variances"]
sv = sc.pp.highly_variable_genes(c, flavor="seurat_v3", n_top_genes=100, inplace=False)
mi = sc.metrics.morans_i(a.obsp["connectivities"], X.T.toarray())
pd.DataFrame(
    {
        "gene": a.var_names,
        "residual_variances": pr.to_numpy(),
        "variances_norm": sv["variances_norm"].to_numpy(),
        "morans_i": mi,
    }
).to_csv(HERE + "pbmc68k_reduced_scanpy_genes.tsv.gz", sep="\t", index=False, float_format="%.10g")
b = ad.AnnData(X, obs=a.obs.copy(), var=pd.DataFrame(index=a.var_names))
rows = []
for method in ("t-test", "wilcoxon"):
    sc.tl.rank_genes_groups(b, "bulk_labels", method=method, use_raw=False)
    df = sc.get.rank_genes_groups_df(b, group=None).groupby("group", observed=True).head(50)
    df["method"] = method
    rows.append(df)
cols = ["method", "group", "names", "scores", "logfoldchanges", "pvals", "pvals_adj"]
pd.concat(rows)[cols].to_csv(
    HERE + "pbmc68k_reduced_scanpy_markers.tsv.gz", sep="\t", index=False, float_format="%.10g"
)
