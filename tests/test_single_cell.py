"""Single-cell inputs and outputs: AnnData .h5ad, 10x folders and .h5, kofs.rank on AnnData /
DataFrame / arrays, results stored scanpy style, the CLI on single-cell files."""

from __future__ import annotations

import gzip
import re

import numpy as np
import pandas as pd
import pytest
import scipy.io
import scipy.sparse as sp
from click.testing import CliRunner

import kofs
from kofs.cli import main
from kofs.datasets import synthetic_counts
from kofs.errors import InputError, ParameterError
from kofs.io.single_cell import (
    INSTALL_HINT,
    is_single_cell_path,
    read_10x_h5,
    read_10x_mtx,
    read_single_cell,
    require,
)

ad = pytest.importorskip("anndata")
h5py = pytest.importorskip("h5py")


@pytest.fixture(scope="module")
def cells():
    return synthetic_counts(240, 120, n_clusters=3, n_markers=5, seed=4)


def _adata(cells):
    obs = pd.DataFrame({"cell_type": cells.labels()}, index=list(cells.cells))
    var = pd.DataFrame(
        {"gene_symbols": [f"SYM{j}" for j in range(len(cells.genes))]}, index=list(cells.genes)
    )
    a = ad.AnnData(cells.X.copy(), obs=obs, var=var)
    a.layers["double"] = cells.X * 2.0
    return a


def _write_10x_folder(folder, counts, *, gz=True, types=None):
    folder.mkdir()
    n_cells, n_genes = counts.shape
    ids = [f"ENSG{j:011d}" for j in range(n_genes)]
    types = types or ["Gene Expression"] * n_genes
    feats = "".join(f"{i}\tG{j}\t{t}\n" for j, (i, t) in enumerate(zip(ids, types, strict=True)))
    bars = "".join(f"AAAC{i:06d}-1\n" for i in range(n_cells))
    suffix = ".gz" if gz else ""
    opener = gzip.open if gz else open
    with opener(folder / f"matrix.mtx{suffix}", "wb") as fh:
        scipy.io.mmwrite(fh, sp.coo_matrix(counts.T))
    with opener(folder / f"features.tsv{suffix}", "wt") as fh:
        fh.write(feats)
    with opener(folder / f"barcodes.tsv{suffix}", "wt") as fh:
        fh.write(bars)
    return ids


def _write_10x_h5(path, counts):
    csc = sp.csc_matrix(counts.T)  # genes x cells, CSC: the 10x layout
    n_genes, n_cells = csc.shape
    with h5py.File(path, "w") as f:
        g = f.create_group("matrix")
        g["data"] = csc.data.astype(np.int32)
        g["indices"] = csc.indices.astype(np.int64)
        g["indptr"] = csc.indptr.astype(np.int64)
        g["shape"] = np.array([n_genes, n_cells], dtype=np.int32)
        g["barcodes"] = np.array([f"AAAC{i:06d}-1".encode() for i in range(n_cells)])
        ft = g.create_group("features")
        ft["id"] = np.array([f"ENSG{j:011d}".encode() for j in range(n_genes)])
        ft["name"] = np.array([f"G{j}".encode() for j in range(n_genes)])
        ft["feature_type"] = np.array([b"Gene Expression"] * n_genes)


def _raw_counts():
    return synthetic_counts(60, 30, n_clusters=2, n_markers=3, normalize=False, seed=2).X


@pytest.mark.parametrize("gz", [True, False])
def test_read_10x_mtx(tmp_path, gz):
    counts = _raw_counts()
    ids = _write_10x_folder(tmp_path / "f", counts, gz=gz)
    e = read_10x_mtx(tmp_path / "f")
    assert e.is_sparse and e.values.shape == counts.shape
    assert e.genes == tuple(ids) and e.namespace == "ensembl"
    assert e.annotations["symbol"][:2] == ("G0", "G1")
    np.testing.assert_array_equal(e.values.toarray(), counts.toarray())
    assert is_single_cell_path(tmp_path / "f")


def test_10x_keeps_gene_expression_features(tmp_path):
    counts = _raw_counts()
    types = ["Gene Expression"] * 28 + ["Antibody Capture"] * 2
    _write_10x_folder(tmp_path / "f", counts, types=types)
    assert read_10x_mtx(tmp_path / "f").n_genes == 28


@pytest.mark.parametrize(
    "types", [["Antibody Capture"] * 30, ["Antibody Capture"] * 28 + ["CRISPR Guide Capture"] * 2]
)
def test_10x_features_none_of_them_genes_are_refused(tmp_path, types):
    """A 10x folder (or .h5) whose features are all antibodies (a CITE-seq ADT library alone),
    or antibodies and guides, was ranked as if its rows were genes (exit 0, no word): the
    'Gene Expression' filter applied only when that type was among several."""
    _write_10x_folder(tmp_path / "f", _raw_counts(), types=types)
    with pytest.raises(InputError, match="holds no 'Gene Expression' feature \\(its 30") as e:
        read_10x_mtx(tmp_path / "f")
    assert e.value.path == str(tmp_path / "f" / "features.tsv.gz")
    _write_10x_h5(tmp_path / "m.h5", _raw_counts())
    with h5py.File(tmp_path / "m.h5", "a") as f:
        del f["matrix/features/feature_type"]
        f["matrix/features/feature_type"] = np.array([t.encode() for t in types])
    with pytest.raises(InputError, match="holds no 'Gene Expression' feature"):
        read_10x_h5(tmp_path / "m.h5")


@pytest.mark.parametrize("chunk", [None, 100])
def test_an_anndata_with_feature_types_keeps_its_genes(tmp_path, cells, chunk):
    """An AnnData of scanpy.read_10x_h5(gex_only=False) (a CITE-seq run): its antibody rows,
    named in var['feature_types'], were ranked as genes beside the genes without a word, where
    the same 10x file is read with its genes only; an antibody matrix alone was ranked too."""
    a = _adata(cells)
    a.var["feature_types"] = ["Gene Expression"] * 115 + ["Antibody Capture"] * 5
    a.write_h5ad(tmp_path / "a.h5ad")
    e, _ = read_single_cell(tmp_path / "a.h5ad", chunk_size=chunk)
    assert e.genes == tuple(cells.genes[:115])
    if chunk is None:
        res = kofs.rank(a, rankers=["variance"])
        assert len(res.final.genes) == 115 and a.var["kofs_rank"].isna().sum() == 5
    a.var["feature_types"] = "Antibody Capture"
    a.write_h5ad(tmp_path / "b.h5ad")
    with pytest.raises(InputError, match="holds no 'Gene Expression' feature \\(its 120 features"):
        read_single_cell(tmp_path / "b.h5ad", chunk_size=chunk)


@pytest.mark.parametrize("which", ["features", "barcodes"])
def test_10x_comma_separated_or_falsely_gzipped_tsv_is_named(tmp_path, which):
    """A comma-separated features file was read whole, one id per line ('ENSG...,G0,Gene
    Expression' ranked as a gene id, exit 0); a plain file named .gz was "cannot be parsed (Not
    a gzipped file); check its header line and delimiter"."""
    _write_10x_folder(tmp_path / "f", _raw_counts(), gz=False)
    path = tmp_path / "f" / f"{which}.tsv"
    path.write_text(path.read_text().replace("\t", ",") if which == "features" else
                    "".join(line + ",x\n" for line in path.read_text().splitlines()))  # fmt: skip
    with pytest.raises(InputError, match="is not tab-separated: its first line") as e:
        read_10x_mtx(tmp_path / "f")
    assert e.value.path == str(path)
    _write_10x_folder(tmp_path / "g", _raw_counts(), gz=False)
    (tmp_path / "g" / f"{which}.tsv").rename(tmp_path / "g" / f"{which}.tsv.gz")
    with pytest.raises(InputError, match="is named .gz but is not gzip-compressed"):
        read_10x_mtx(tmp_path / "g")


def test_10x_duplicated_feature_id_names_the_features_file(tmp_path):
    """A feature id listed twice was named with the folder, where a barcode listed twice names
    barcodes.tsv."""
    _write_10x_folder(tmp_path / "f", _raw_counts(), gz=False)
    feats = tmp_path / "f" / "features.tsv"
    lines = feats.read_text().splitlines()
    lines[1] = lines[0].split("\t")[0] + "\t" + lines[1].split("\t", 1)[1]
    feats.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match="feature id 'ENSG00000000000' appears twice") as e:
        read_10x_mtx(tmp_path / "f")
    assert e.value.path == str(feats)


@pytest.mark.parametrize("head", [b"", b"\x1f\x8c\x08\x00"])
def test_10x_matrix_named_gz_but_not_gzip_is_named_as_its_tsvs_are(tmp_path, head):
    """A plain matrix.mtx named .gz was "invalid MatrixMarket entries (Not a gzipped file
    (b'%%'))", and one with a damaged gzip header "is not a MatrixMarket file: line 1 must read
    '%%MatrixMarket ...'"; its features and barcodes files say "is named .gz but is not
    gzip-compressed"."""
    _write_10x_folder(tmp_path / "f", _raw_counts(), gz=False)
    mtx = tmp_path / "f" / "matrix.mtx"
    data = mtx.read_bytes() if not head else head + gzip.compress(mtx.read_bytes())[4:]
    mtx.unlink()
    (tmp_path / "f" / "matrix.mtx.gz").write_bytes(data)
    with pytest.raises(InputError, match="is named .gz but is not gzip-compressed") as e:
        read_10x_mtx(tmp_path / "f")
    assert e.value.path == str(tmp_path / "f" / "matrix.mtx.gz")


@pytest.mark.parametrize("which, line", [("features", 4), ("barcodes", 1)])
def test_10x_blank_line_inside_a_tsv_is_refused(tmp_path, which, line):
    """A blank line inside barcodes.tsv (or features.tsv) was skipped by pandas: the ids after
    it were read one place off their matrix columns (rows) or, inserted, silently dropped;
    blank lines at the end stay harmless."""
    _write_10x_folder(tmp_path / "f", _raw_counts(), gz=False)
    path = tmp_path / "f" / f"{which}.tsv"
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[: line - 1] + [""] + lines[line - 1 :]) + "\n")
    with pytest.raises(InputError, match=f"blank line in the 10x {which} file") as e:
        read_10x_mtx(tmp_path / "f")
    assert e.value.path == str(path) and e.value.line == line
    path.write_text("\n".join(lines) + "\n\n\n")
    assert read_10x_mtx(tmp_path / "f").n_samples == 60


def test_prefixed_10x_files_are_read_by_their_matrix(tmp_path):
    """GEO's files of one sample (GSM1_matrix.mtx.gz beside GSM1_features.tsv.gz and
    GSM1_barcodes.tsv.gz; scanpy's read_10x_mtx(prefix=...)): given the matrix, the files of
    its prefix are read, not another sample's in the same folder."""
    counts = _raw_counts()
    _write_10x_folder(tmp_path / "f", counts, gz=True)
    for name in ("matrix.mtx.gz", "features.tsv.gz", "barcodes.tsv.gz"):
        (tmp_path / "f" / name).rename(tmp_path / "f" / f"GSM1_{name}")
    _write_10x_folder(tmp_path / "g", counts[:10], gz=True)
    for name in ("matrix.mtx.gz", "features.tsv.gz", "barcodes.tsv.gz"):
        (tmp_path / "g" / name).rename(tmp_path / "f" / f"GSM2_{name}")
    e, _ = read_single_cell(tmp_path / "f" / "GSM1_matrix.mtx.gz")
    np.testing.assert_array_equal(e.values.toarray(), counts.toarray())
    assert read_10x_mtx(tmp_path / "f", prefix="GSM2_").n_samples == 10
    (tmp_path / "f" / "GSM2_barcodes.tsv.gz").unlink()
    with pytest.raises(InputError, match="the same prefix"):
        read_single_cell(tmp_path / "f" / "GSM2_matrix.mtx.gz")


def test_a_mtx_file_not_named_matrix_mtx_is_refused(tmp_path):
    """rank FOLDER/filtered.mtx read FOLDER/matrix.mtx in its place, without a word."""
    counts = _raw_counts()
    _write_10x_folder(tmp_path / "f", counts, gz=False)
    scipy.io.mmwrite(tmp_path / "f" / "filtered.mtx", sp.coo_matrix(counts.T * 2))
    with pytest.raises(InputError, match="its name ends with matrix.mtx\\(.gz\\)") as e:
        read_single_cell(tmp_path / "f" / "filtered.mtx")
    assert e.value.path == str(tmp_path / "f" / "filtered.mtx")
    e, _ = read_single_cell(tmp_path / "f" / "matrix.mtx")
    np.testing.assert_array_equal(e.values.toarray(), counts.toarray())


def test_read_10x_h5(tmp_path):
    counts = _raw_counts()
    _write_10x_h5(tmp_path / "m.h5", counts)
    e = read_10x_h5(tmp_path / "m.h5")
    np.testing.assert_array_equal(e.values.toarray(), counts.toarray())
    assert e.samples[0] == "AAAC000000-1" and e.annotations["symbol"][3] == "G3"


def test_a_10x_v2_h5_of_several_genomes_is_refused(tmp_path):
    """A Cell Ranger v2 .h5 of two genomes (a barnyard run): the first genome's matrix was read
    and the other's genes dropped without a word."""
    csc = sp.csc_matrix(_raw_counts().T)
    with h5py.File(tmp_path / "m.h5", "w") as f:
        for genome in ("hg19", "mm10"):
            g = f.create_group(genome)
            g["data"], g["indices"], g["indptr"] = csc.data, csc.indices, csc.indptr
            g["shape"] = np.array(csc.shape)
            g["barcodes"] = np.array([f"B{i}".encode() for i in range(csc.shape[1])])
            g["genes"] = np.array([f"{genome}_{j}".encode() for j in range(csc.shape[0])])
            g["gene_names"] = g["genes"][()]
    with pytest.raises(InputError, match="holds the matrices of 2 genomes \\(hg19, mm10;"):
        read_10x_h5(tmp_path / "m.h5")
    with h5py.File(tmp_path / "m.h5", "a") as f:
        del f["mm10"]
    assert read_10x_h5(tmp_path / "m.h5").genes[0] == "hg19_0"


def test_a_10x_matrix_declared_symmetric_is_refused(tmp_path):
    """A matrix.mtx whose first line says 'symmetric': with as many features as barcodes its
    entries were mirrored across the diagonal and summed with the others (wrong counts, exit
    0); otherwise scipy's 'axis 0 index 59 exceeds matrix dimension 30', naming no line."""
    for n_cells in (30, 60):
        folder = tmp_path / f"f{n_cells}"
        counts = sp.random(n_cells, 30, density=0.3, format="csr", random_state=1) * 9
        _write_10x_folder(folder, sp.csr_matrix(np.ceil(counts.toarray())), gz=False)
        path = folder / "matrix.mtx"
        path.write_text(path.read_text().replace(" general", " symmetric", 1))
        with pytest.raises(InputError, match="is declared 'symmetric' on its first line") as e:
            read_10x_mtx(folder)
        assert (e.value.path, e.value.line) == (str(path), 1)


def test_a_folder_holding_10x_matrices_names_them(tmp_path):
    """Cell Ranger's outs/ folder (or a GEO folder of several samples) given for its matrix:
    'is not a 10x folder' said what it lacked but not that the matrices were inside it."""
    outs = tmp_path / "outs"
    outs.mkdir()
    _write_10x_folder(outs / "filtered_feature_bc_matrix", _raw_counts())
    (outs / "filtered_feature_bc_matrix.h5").write_bytes(b"")
    (outs / "web_summary.html").write_text("")
    with pytest.raises(InputError, match="; it holds filtered_feature_bc_matrix/, "
                       "filtered_feature_bc_matrix.h5: give one of them$"):  # fmt: skip
        read_single_cell(outs)
    for name in ("matrix.mtx.gz", "features.tsv.gz", "barcodes.tsv.gz"):
        (outs / "filtered_feature_bc_matrix" / name).rename(outs / f"GSM1_{name}")
    with pytest.raises(InputError, match="; it holds GSM1_matrix.mtx.gz, filtered_feature"):
        read_single_cell(outs)


def test_bad_10x_inputs(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="is not a 10x folder"):
        read_single_cell(tmp_path / "empty")
    with h5py.File(tmp_path / "x.h5", "w") as f:
        f["a"] = np.arange(3)
    with pytest.raises(InputError, match="not a 10x .h5"):
        read_10x_h5(tmp_path / "x.h5")


def test_an_anndata_of_genes_x_cells_is_refused(tmp_path):
    """An AnnData built genes x cells (sc.read_csv of a genes x cells table without .T): its
    cells were ranked as genes, exit 0. Barcode-like gene ids beside gene-like cell ids say
    so; the right way round, or with ids that tell nothing, it is read."""
    rng = np.random.default_rng(0)
    barcodes = ["".join(rng.choice(list("ACGT"), 16)) + "-1" for _ in range(40)]
    genes = [f"ENSG{j:011d}" for j in range(30)]
    X = sp.random(30, 40, density=0.3, format="csr", random_state=0) * 10
    a = ad.AnnData(X, obs=pd.DataFrame(index=genes), var=pd.DataFrame(index=barcodes))
    with pytest.raises(InputError, match="X looks transposed \\(genes x cells\\): its genes"):
        kofs.rank(a)
    a.write_h5ad(tmp_path / "t.h5ad")
    r = CliRunner().invoke(main, ["rank", str(tmp_path / "t.h5ad"), "-o", str(tmp_path / "o")])
    assert r.exit_code == 2 and "t.h5ad: X looks transposed" in r.stderr, r.stderr
    assert "transpose it (adata = adata.T)" in r.stderr and not (tmp_path / "o").exists()
    e, _ = read_single_cell(_write(tmp_path / "u.h5ad", a.T.copy()))
    assert e.genes[0] == genes[0]
    numbered = ad.AnnData(X.T.tocsr())  # ids 0, 1, ...: nothing to tell
    assert read_single_cell(_write(tmp_path / "n.h5ad", numbered))[0].n_genes == 30


def _write(path, adata):
    adata.write_h5ad(path)
    return path


def test_h5ad_layers_raw_and_labels(tmp_path, cells):
    a = _adata(cells)
    a.raw = a.copy()
    a.write_h5ad(tmp_path / "a.h5ad")
    e, back = read_single_cell(tmp_path / "a.h5ad")
    assert e.is_sparse and e.genes == cells.genes and e.annotations["symbol"][0] == "SYM0"
    e2, _ = read_single_cell(tmp_path / "a.h5ad", layer="double")
    np.testing.assert_allclose(e2.values.toarray(), 2 * cells.X.toarray())
    e3, _ = read_single_cell(tmp_path / "a.h5ad", use_raw=True)
    assert e3.n_genes == len(cells.genes)
    with pytest.raises(ParameterError, match="layer 'nope' not found; layers: double"):
        read_single_cell(tmp_path / "a.h5ad", layer="nope")


@pytest.mark.slow
def test_rank_anndata_stores_results(cells):
    a = _adata(cells)
    res = kofs.rank(a, labels="obs:cell_type", rankers=["fisher", "laplacian"])
    assert {"kofs_rank", "kofs_score", "kofs_rank_fisher", "kofs_score_laplacian"} <= set(a.var)
    assert set(a.uns["kofs_markers"]["names"].dtype.names) == set(res.markers.groups)
    assert a.var["kofs_rank"].min() == 1
    top = a.var.sort_values("kofs_rank").index[:20]
    assert list(top) == res.final.top(20)
    assert len(set(top) & set(cells.marker_genes)) >= 10
    uns = a.uns["kofs"]
    assert set(uns["weights"]) == set(res.final.list_names)
    assert uns["versions"]["anndata"] and uns["params"]["aggregate"] == res.final.method
    with pytest.raises(ParameterError, match="did you mean 'cell_type'"):
        kofs.rank(a, labels="celltype")


def test_a_second_run_on_an_anndata_leaves_nothing_of_the_first(tmp_path, cells):
    """kofs.rank on an AnnData that holds an earlier run (also read back from .h5ad) kept the
    earlier run's list columns (kofs_rank_fisher, ...) and its marker tables
    (uns['kofs_markers']) beside the new run's, as if they belonged to it; columns of the
    user's and of another key stay."""
    from kofs.io.adata_results import store_result

    a = _adata(cells)
    a.var["kofs_note"] = "mine"
    first = kofs.rank(a, labels="cell_type", rankers=["fisher", "variance"])
    store_result(a, first, key="other")
    a.write_h5ad(tmp_path / "a.h5ad")
    b = ad.read_h5ad(tmp_path / "a.h5ad")
    kofs.rank(b, rankers=["variance"], markers="none")
    assert "kofs_rank_fisher" not in b.var and "kofs_rank_variance" in b.var
    assert "kofs_markers" not in b.uns and "other_markers" in b.uns
    assert "other_rank_fisher" in b.var
    kept = {"gene_symbols", "kofs_note", *(c for c in b.var if c.startswith("other_"))}
    assert set(b.var) == kept | set(b.uns["kofs"]["var_columns"])


def test_rank_anndata_reuses_obsp_graph(cells):
    from kofs.knowledge.similarity import similarity_from_array

    a = _adata(cells)
    S, _ = similarity_from_array(cells.X, "knn", k=8)
    a.obsp["connectivities"] = S
    res = kofs.rank(a, rankers=["laplacian"], use_graph=True)
    assert res.lists[0].info["graph"] == "obsp:connectivities"
    expected = kofs.run_ranker(
        "laplacian",
        kofs.Expression(cells.X, cells.genes, cells.cells),
        kofs.RankerInputs(similarity=kofs.SampleSimilarity(S, cells.cells)),
    )
    np.testing.assert_allclose(res.lists[0].scores, expected.scores, rtol=1e-12)
    with pytest.raises(ParameterError, match="obsp has no 'distances'"):
        kofs.rank(a, use_graph="distances")


@pytest.mark.parametrize(
    ("graph", "says"),
    [
        (lambda n: sp.csr_matrix((n, n)), "has no edge"),  # Moran's I divided by 0 (exit 1)
        (lambda n: sp.csr_matrix(-np.ones((n, n))), "holds negative, NaN or infinite"),
        (lambda n: sp.csr_matrix(np.full((n, n), np.nan)), "holds negative, NaN or infinite"),
    ],
)
def test_cli_obsp_graph_is_checked_for_every_ranker(tmp_path, cells, graph, says):
    """A damaged --use-graph graph is one error line naming the file, for morans-i too (it
    took any graph: an empty one was an internal ZeroDivisionError, a NaN one was ranked)."""
    a = _adata(cells)
    a.obsp["g"] = graph(a.n_obs)
    a.write_h5ad(tmp_path / "a.h5ad")
    out = tmp_path / "out"
    args = ["rank", str(tmp_path / "a.h5ad"), "--use-graph", "g", "-o", str(out)]
    for ranker in ("morans-i", "laplacian"):
        r = CliRunner().invoke(main, [*args, "--rankers", ranker])
        assert r.exit_code == 2, (ranker, r.stderr)
        assert r.stderr.count("\n") == 1 and r.stderr.startswith("kofs: error:"), r.stderr
        assert f"a.h5ad: use_graph: adata.obsp['g'] {says}" in r.stderr, r.stderr
        assert not out.exists()


def test_rank_accepts_dataframe_array_and_sparse(cells):
    dense = cells.X.toarray()
    df = pd.DataFrame(dense, index=list(cells.cells), columns=list(cells.genes))
    a = kofs.rank(df, rankers=["variance"])
    assert a.final.genes == cells.genes
    b = kofs.rank(dense, rankers=["variance"])
    assert b.final.genes[0] == "gene000" and b.expression.samples[1] == "sample001"
    c = kofs.rank(cells.X, rankers=["variance"])
    assert c.expression.is_sparse
    np.testing.assert_allclose(a.lists[0].scores, c.lists[0].scores, rtol=1e-12)
    with pytest.raises(InputError, match="hold object values, not real numbers"):
        kofs.rank(df.assign(name="x"))
    with pytest.raises(ParameterError, match="cannot rank a list"):
        kofs.rank([[1, 2], [3, 4]])
    with pytest.raises(ParameterError, match="names an obs column of an AnnData"):
        kofs.rank(df, labels="cell_type")


def test_missing_optional_dependency_names_the_extra(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "anndata", None)  # import anndata -> ImportError
    with pytest.raises(ParameterError) as err:
        require("anndata", "reading an .h5ad file")
    assert INSTALL_HINT in str(err.value)


@pytest.mark.slow
def test_cli_h5ad_and_10x(tmp_path, cells):
    a = _adata(cells)
    a.write_h5ad(tmp_path / "a.h5ad")
    out = tmp_path / "o1"
    r = CliRunner().invoke(
        main, ["rank", str(tmp_path / "a.h5ad"), "--labels", "obs:cell_type", "-o", str(out)]
    )
    assert r.exit_code == 0, r.stderr
    ranking = pd.read_csv(out / "ranking.tsv", sep="\t")
    assert "rank:fisher" in ranking.columns
    assert len(set(ranking["gene"][:20]) & set(cells.marker_genes)) >= 10
    r = CliRunner().invoke(
        main, ["rank", str(tmp_path / "a.h5ad"), "--labels", "obs:typo", "-o", str(tmp_path / "x")]
    )
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and "obs column 'typo'" in r.stderr
    _write_10x_folder(tmp_path / "tenx", _raw_counts())
    r = CliRunner().invoke(
        main, ["rank", str(tmp_path / "tenx"), "--rankers", "variance", "-o", str(tmp_path / "o2")]
    )
    assert r.exit_code == 0, r.stderr
    assert (tmp_path / "o2" / "ranking.tsv").read_text().startswith("gene\t")
    tsv = tmp_path / "m.tsv"
    tsv.write_text("gene\ta\tb\tc\ng1\t1\t2\t3\ng2\t3\t1\t2\n")
    r = CliRunner().invoke(main, ["rank", str(tsv), "--layer", "x", "-o", str(tmp_path / "o3")])
    assert r.exit_code == 2 and "--layer applies to an .h5ad input only" in r.stderr


def test_an_obs_class_of_one_cell_is_warned_of_as_in_a_labels_file(caplog):
    """A labels file's class of one sample gets a warning; an obs column's class of one cell
    got none."""
    import logging

    from kofs.io.single_cell import labels_from_obs

    X = np.arange(24, dtype=float).reshape(6, 4)
    obs = pd.DataFrame({"t": ["a", "a", "b", "b", "c", None]}, index=[f"c{i}" for i in range(6)])
    with caplog.at_level(logging.WARNING, logger="kofs"):
        labels_from_obs(ad.AnnData(X, obs=obs), "t")
    assert "class(es) with a single cell in obs column 't': c;" in caplog.text
    # and its cells without a value (NaN) are said, as a labels file's empty labels are
    assert "1 of 6 cells have no value in obs column 't': they are unlabelled" in caplog.text
    caplog.clear()
    obs["t"] = ["a", "a", "b", "b", "c", "c"]
    with caplog.at_level(logging.WARNING, logger="kofs"):
        labels_from_obs(ad.AnnData(X, obs=obs), "t")
    assert "no value" not in caplog.text


def test_obs_labels_are_read_as_a_labels_file_is(tmp_path):
    """Spaces around an obs value are not part of its class (as in a labels file), and two
    classes that differ only in case or spaces are refused, naming the cells."""
    from kofs.io.single_cell import labels_from_obs

    X = np.arange(24, dtype=float).reshape(6, 4)
    obs = pd.DataFrame({"cell_type": ["a", "a ", " b", "b", None, "a"]},
                       index=[f"c{i}" for i in range(6)])  # fmt: skip
    got = labels_from_obs(ad.AnnData(X, obs=obs), "cell_type")
    assert got.labels == ("a", "a", "b", "b", "", "a")
    obs["cell_type"] = ["a", "A ", "b", "b", "a", "b"]
    path = tmp_path / "a.h5ad"
    ad.AnnData(X, obs=obs).write_h5ad(path)
    r = CliRunner().invoke(main, ["rank", str(path), "--labels", "obs:cell_type", "--rankers",
                                  "variance", "-o", str(tmp_path / "o")])  # fmt: skip
    assert r.exit_code == 2 and r.stderr.count("\n") == 1, r.stderr
    assert (
        f"{path}: labels 'a' (cell c0) and 'A' (cell c1) of obs column 'cell_type' differ only "
        "in case or spaces" in r.stderr
    )


@pytest.mark.parametrize(
    ("values", "needle"),
    [
        ([None] * 6, "obs column 't' has no value for any of its 6 cells (all missing)"),
        (["a"] * 4 + [None] * 2, "all 4 labelled cells are in one class ('a') in obs column 't'"),
    ],
)
def test_an_obs_column_of_no_class_or_one_is_refused(tmp_path, values, needle):
    """A labels file of one class is refused; an obs column of one class, or of missing values
    only, ran an unsupervised ranker with the useless labels, and a supervised one failed with
    "ranker 'fisher' needs at least 2 classes in labels 't', got 0"."""
    X = np.random.default_rng(0).poisson(3, size=(6, 4)).astype(float)
    t = pd.Categorical(values, categories=["a", "b"])  # an all-None object column is unwritable
    obs = pd.DataFrame({"t": t}, index=[f"c{i}" for i in range(6)])
    path = tmp_path / "a.h5ad"
    ad.AnnData(X, obs=obs).write_h5ad(path)
    for rankers in (["--rankers", "variance"], []):
        out = tmp_path / "o"
        r = CliRunner().invoke(
            main, ["rank", str(path), "--labels", "obs:t", *rankers, "-o", str(out)]
        )
        assert r.exit_code == 2 and r.stderr.count("\n") == 1, r.stderr
        assert r.stderr.startswith(f"kofs: error: {path}: {needle}"), r.stderr
        assert not out.exists()


@pytest.mark.parametrize("bad", ["T\tcell", "T\ncell"])
def test_a_label_holding_a_tab_or_a_line_break_is_refused(tmp_path, bad):
    """A class holding a tab or a line break (an obs category, a quoted field of a CSV labels
    file, a Python list) became markers.tsv's group field and split its rows (9 fields, or a
    row across two lines), exit 0; it is refused as an id holding one is."""
    X = np.arange(24, dtype=float).reshape(6, 4)
    cells = [f"c{i}" for i in range(6)]
    obs = pd.DataFrame({"cell_type": [bad, bad, "b", "b", "a", "a"]}, index=cells)
    path = tmp_path / "a.h5ad"
    ad.AnnData(X, obs=obs).write_h5ad(path)
    csv = tmp_path / "labels.csv"
    csv.write_text(
        "cell,type\n" + "".join(f'{c},"{v}"\n' for c, v in zip(cells, obs.cell_type, strict=True))
    )
    shown = repr(bad)
    cases = [(["obs:cell_type"], f"{path}: label {shown} (cell c0) of obs column")]
    if "\t" in bad:  # the labels reader refuses a line break inside a field itself
        cases.append(([str(csv)], f"{csv}: label {shown} (line 2) holds"))
    for labels, says in cases:
        r = CliRunner().invoke(main, ["rank", str(path), "--labels", *labels, "--rankers",
                                      "fisher", "-o", str(tmp_path / "o")])  # fmt: skip
        assert r.exit_code == 2 and r.stderr.count("\n") == 1, r.stderr
        assert says in r.stderr and "holds a tab or a line break" in r.stderr, r.stderr
        assert not (tmp_path / "o").exists()
    with pytest.raises(InputError, match=f"label {re.escape(shown)} \\(sample c0\\) holds a tab"):
        kofs.rank(pd.DataFrame(X, index=cells), labels=list(obs.cell_type), rankers=["fisher"])


def test_file_options_on_single_cell_data_warn_once(tmp_path, cells):
    """--labels obs:COLUMN names its column and keeps the cells without a value: the options
    that read a labels file change nothing, and say so; so do those that read a CSV/TSV
    matrix."""
    _adata(cells).write_h5ad(tmp_path / "a.h5ad")
    args = ["rank", str(tmp_path / "a.h5ad"), "--labels", "obs:cell_type", "--rankers",
            "variance", "--no-report", "-o", str(tmp_path / "o")]  # fmt: skip
    r = CliRunner().invoke(main, [*args, "--label-column", "x", "--missing-labels", "drop"])
    assert r.exit_code == 0, r.stderr
    assert r.stderr.count("--label-column x has no effect: --labels obs:cell_type names") == 1
    assert r.stderr.count("--missing-labels drop has no effect") == 1, r.stderr
    # so do the options that read a CSV/TSV matrix
    r = CliRunner().invoke(main, [*args, "--decimal", ",", "--duplicate-genes", "first"])
    assert r.exit_code == 0, r.stderr
    needle = "--duplicate-genes first, --decimal , have no effect: "
    assert r.stderr.count(needle + f"{tmp_path / 'a.h5ad'} is single-cell data") == 1, r.stderr
    plain = CliRunner().invoke(main, args)
    assert plain.exit_code == 0 and "no effect" not in plain.stderr, plain.stderr


@pytest.mark.slow
def test_run_config_keys_for_single_cell(tmp_path, cells):
    pytest.importorskip("dask")
    a = _adata(cells)
    a.write_h5ad(tmp_path / "a.h5ad")
    cfg = tmp_path / "run.yaml"
    cfg.write_text(
        f"expression: {tmp_path / 'a.h5ad'}\nlabels: obs:cell_type\nchunk_size: 100\n"
        "layer: double\nrankers: variance,fisher\n"
    )
    r = CliRunner().invoke(main, ["run", str(cfg), "-o", str(tmp_path / "out")])
    assert r.exit_code == 0, r.stderr
    resolved = (tmp_path / "out" / "config.resolved.yaml").read_text()
    assert "chunk-size: 100" in resolved and "layer: double" in resolved


def _malformed(kind: str):
    """A 6 x 4 sparse matrix whose index arrays a file could hold but scipy's light check
    lets through."""
    data, indices, indptr = np.ones(4), np.array([0, 1, 2, 3]), np.array([0, 1, 2, 3, 4, 4, 4])
    if kind == "csc index out of range":
        return sp.csc_matrix((np.ones(4), np.array([0, 1, 2, 9]), np.array([0, 1, 2, 3, 4])),
                             shape=(6, 4))  # fmt: skip
    if kind == "csr indptr decreasing":
        return sp.csr_matrix((data, indices, np.array([0, 2, 1, 3, 4, 4, 4])), shape=(6, 4))
    if kind == "csr indptr ends short":  # scipy's check trimmed the last stored values
        m = sp.csr_matrix((6, 4))  # the arrays as a reader sets them, unchecked
        m.data, m.indices, m.indptr = data, indices, np.array([0, 1, 2, 3, 3, 3, 3])
        return m
    if kind == "csr float indices":
        m = sp.csr_matrix((data, indices, indptr), shape=(6, 4))
        m.indices = m.indices.astype(np.float64)
        return m
    raise ValueError(kind)


@pytest.mark.parametrize(
    ("kind", "needle"),
    [
        ("csc index out of range", "indices must be < 6"),
        ("csr indptr decreasing", "X is a malformed sparse matrix"),
        ("csr float indices", "its indices are float64, not integers"),
        ("csr indptr ends short", "index pointer ends at 3 but it holds 4 indices"),
    ],
)
def test_malformed_sparse_matrices_are_refused_before_any_conversion(kind, needle):
    """A CSC matrix with an index out of range crashed the process in its conversion to CSR
    (segmentation fault); a decreasing index pointer or float indices were internal errors."""
    from kofs.io.single_cell import _as_matrix

    X = _malformed(kind)

    with pytest.raises(InputError, match=needle):
        _as_matrix(X, "X", "x.h5ad")
    with pytest.raises(InputError, match="malformed sparse matrix"):
        kofs.Expression(X, [f"g{j}" for j in range(4)], [f"c{i}" for i in range(6)])


def _damage_10x_h5(path, **arrays):
    with h5py.File(path, "a") as f:
        for name, value in arrays.items():
            del f[name]
            f[name] = value


@pytest.mark.parametrize(
    ("damage", "needle"),
    [
        # each was read in silence: the last values dropped, NaN ranked, indices truncated,
        # three genes lost behind a "kept the Gene Expression features" warning
        (lambda g: {"matrix/indptr": g["indptr"][:-1].tolist() + [g["indptr"][-1] - 3]},
         "index pointer ends at"),
        (lambda g: {"matrix/data": np.where(np.arange(g["data"].size) == 4, np.nan, 1.0)},
         "matrix/data holds NaN"),
        (lambda g: {"matrix/indices": g["indices"] + 0.5}, "matrix/indices holds float64"),
        (lambda g: {"matrix/features/feature_type": np.array([b"Gene Expression"] * 28)},
         "features/feature_type has 28 entries"),
    ],
)  # fmt: skip
def test_damaged_10x_h5_arrays_are_refused(tmp_path, damage, needle):
    _write_10x_h5(tmp_path / "m.h5", _raw_counts())
    with h5py.File(tmp_path / "m.h5", "r") as f:
        g = {k: f["matrix"][k][()] for k in ("data", "indices", "indptr")}
    _damage_10x_h5(tmp_path / "m.h5", **damage(g))
    with pytest.raises(InputError, match=needle):
        read_10x_h5(tmp_path / "m.h5")


def test_10x_folder_size_line_is_checked_before_the_entries(tmp_path):
    """A damaged size line (3e9 x 3e9) made the reader allocate 24 GB before the mismatch with
    the features and barcodes was seen; a feature id "NA" was an internal error."""
    counts = _raw_counts()
    _write_10x_folder(tmp_path / "f", counts, gz=False)
    mtx = tmp_path / "f" / "matrix.mtx"
    lines = mtx.read_text().splitlines()
    size = next(i for i, x in enumerate(lines) if not x.startswith("%"))
    lines[size] = "3000000000 3000000000 " + lines[size].split()[2]
    mtx.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match="matrix is 3000000000 x 3000000000 but the 30 features"):
        read_10x_mtx(tmp_path / "f")
    _write_10x_folder(tmp_path / "g", counts, gz=False)
    feats = tmp_path / "g" / "features.tsv"
    feats.write_text("NA" + feats.read_text()[feats.read_text().index("\t") :])
    assert read_10x_mtx(tmp_path / "g").genes[0] == "NA"


def test_a_continuous_obs_column_is_not_labels(tmp_path, cells):
    """Every cell its own class: the Fisher score was infinite for every gene and the genes
    tied (with --markers none), or the error named a group of one cell and no file."""
    a = _adata(cells)
    a.obs["x"] = np.random.default_rng(0).random(a.n_obs)
    a.write_h5ad(tmp_path / "a.h5ad")
    r = CliRunner().invoke(
        main, ["rank", str(tmp_path / "a.h5ad"), "--labels", "obs:x", "--markers", "none",
               "-o", str(tmp_path / "o")],
    )  # fmt: skip
    assert r.exit_code == 2 and not (tmp_path / "o").exists()
    assert f"{tmp_path / 'a.h5ad'}: every one of the {a.n_obs} labelled cells" in r.stderr


@pytest.mark.parametrize("chunk", [None, "3"])
@pytest.mark.parametrize("group", ["var", "obs", "raw/var"])
def test_an_h5ad_whose_var_or_obs_holds_no_index_is_refused(tmp_path, cells, group, chunk):
    """A var (or obs, or raw/var with --use-raw) group without its index (no ``_index``
    attribute, as a group written by another tool): anndata made up ids 0, 1, ... and the genes
    were ranked under numbers, exit 0."""
    a = _adata(cells)
    a.raw = a.copy()
    a.write_h5ad(tmp_path / "a.h5ad")
    with h5py.File(tmp_path / "a.h5ad", "a") as f:
        del f[group]
        f.create_group(group)
    args = ["rank", str(tmp_path / "a.h5ad"), "--no-report", "-o", str(tmp_path / "o")]
    args += ["--use-raw"] if group == "raw/var" else []
    r = CliRunner().invoke(main, args + (["--chunk-size", chunk] if chunk else []))
    what = {"var": "gene ids (var)", "obs": "cell ids (obs)", "raw/var": "raw gene ids (raw/var)"}[
        group
    ]
    assert r.exit_code == 2 and f"a.h5ad: has no {what}" in r.stderr, r.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("chunk", [None, "3"])
@pytest.mark.parametrize("group, noun", [("var", "genes"), ("obs", "cells"), ("raw/var", "genes")])
def test_an_h5ad_whose_var_or_obs_has_no_encoding_type_is_refused(
    tmp_path, cells, group, noun, chunk
):
    """A var (or obs, or raw/var with --use-raw) group holding its ``_index`` but no
    ``encoding-type`` attribute (written by another tool than anndata): anndata reads it as a
    mapping, its ids a column, and the genes were ranked as 0, 1, ... (exit 0)."""
    a = _adata(cells)
    a.raw = a.copy()
    a.write_h5ad(tmp_path / "a.h5ad")
    with h5py.File(tmp_path / "a.h5ad", "a") as f:
        for attr in ("encoding-type", "encoding-version"):
            del f[group].attrs[attr]
    args = ["rank", str(tmp_path / "a.h5ad"), "--no-report", "-o", str(tmp_path / "o")]
    args += ["--use-raw"] if group == "raw/var" else []
    r = CliRunner().invoke(main, args + (["--chunk-size", chunk] if chunk else []))
    says = f"a.h5ad: {group} holds its ids without anndata's encoding-type attribute"
    assert r.exit_code == 2 and says in r.stderr, r.stderr
    assert f"numbers the {noun} 0, 1, ...: write the file again with anndata" in r.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    "name, content, says",
    [
        ("a.h5ad", b"gene,s1,s2\nG1,1,2\n", "is not an AnnData .h5ad file: it is text (a CSV/TSV"),
        ("a.h5ad", b"", "is empty (0 bytes)"),
        (
            "a.h5ad",
            gzip.compress(b"\x89HDF\r\n\x1a\n" + b"\x00" * 64, mtime=0),
            "it is gzip-compressed",
        ),
        ("m.h5", b"gene\ts1\nG1\t1\n", "is not an HDF5 (10x .h5) file: it is text"),
    ],
)
def test_an_h5ad_or_h5_that_is_not_hdf5_says_what_it_is(tmp_path, name, content, says):
    """A CSV, an empty file or a gzipped file named .h5ad: 'cannot read as AnnData .h5ad
    (Unable to synchronously open file (file signature not found))'."""
    (tmp_path / name).write_bytes(content)
    with pytest.raises(InputError, match=re.escape(says)) as e:
        read_single_cell(tmp_path / name)
    assert e.value.path == str(tmp_path / name)


def test_an_h5ad_without_x_names_its_layers(tmp_path, cells):
    """An AnnData whose X is None (only layers): 'X is empty', with no word of the layers."""
    a = _adata(cells)
    ad.AnnData(obs=a.obs, var=a.var, layers={"counts": a.X}).write_h5ad(tmp_path / "a.h5ad")
    with pytest.raises(InputError, match="X is empty .*--layer NAME \\(layers: counts\\)"):
        read_single_cell(tmp_path / "a.h5ad")
    e, _ = read_single_cell(tmp_path / "a.h5ad", layer="counts")
    assert e.n_genes == len(cells.genes)


def test_an_hdf5_user_block_is_still_hdf5(tmp_path):
    """HDF5 may start after a user block (its signature at byte 512, 1024, ...)."""
    with h5py.File(tmp_path / "u.h5", "w", userblock_size=1024) as f:
        f["a"] = np.arange(3)
    with pytest.raises(InputError, match="is not a 10x .h5 matrix"):
        read_single_cell(tmp_path / "u.h5")


def test_an_h5ad_without_var_or_a_looping_link_is_named(tmp_path, cells, monkeypatch):
    """Without its var group the genes were ranked as 0, 1, ...; a path that is a link to
    itself was an internal error (RuntimeError: Symlink loop)."""
    _adata(cells).write_h5ad(tmp_path / "a.h5ad")
    with h5py.File(tmp_path / "a.h5ad", "a") as f:
        del f["var"]
    r = CliRunner().invoke(main, ["rank", str(tmp_path / "a.h5ad"), "-o", str(tmp_path / "o")])
    assert r.exit_code == 2 and "has no gene ids (var)" in r.stderr, r.stderr
    loop = tmp_path / "loop.h5ad"
    loop.symlink_to(loop)
    monkeypatch.chdir(tmp_path)  # a relative path: resolved against the folder
    r = CliRunner().invoke(main, ["rank", "loop.h5ad", "-o", "o"])
    assert r.exit_code == 2 and "a link to nothing (or a loop of links)" in r.stderr, r.stderr


def test_a_features_file_with_a_header_line_is_refused(tmp_path):
    """Its header became a feature (of type 'feature_type', dropped with a warning), and every
    gene was paired with the matrix row of the gene before it."""
    counts = _raw_counts()
    _write_10x_folder(tmp_path / "f", counts, gz=False)
    feats = tmp_path / "f" / "features.tsv"
    body = feats.read_text().splitlines()[:-1]  # as many lines as the matrix has rows
    feats.write_text("gene_id\tgene_name\tfeature_type\n" + "\n".join(body) + "\n")
    with pytest.raises(InputError, match="features.tsv: its first line .* is a header"):
        read_10x_mtx(tmp_path / "f")


def test_an_anndata_named_h5_and_chunks_of_a_10x_folder_are_named(tmp_path, cells):
    """An AnnData saved as .h5 said 'The truth value of an array ... is ambiguous' or "object
    'shape' doesn't exist"; --chunk-size on a 10x folder was ignored in silence."""
    _adata(cells).write_h5ad(tmp_path / "a.h5")
    with pytest.raises(InputError, match="is an AnnData file .* name it .h5ad"):
        read_10x_h5(tmp_path / "a.h5")
    _write_10x_folder(tmp_path / "f", _raw_counts())
    with pytest.raises(ParameterError, match="chunked .* applies to an .h5ad file only"):
        read_single_cell(tmp_path / "f", chunk_size=10)


def test_run_reads_a_config_that_names_its_command(tmp_path):
    rows = ["gene\t" + "\t".join(f"s{j}" for j in range(6))]
    rows += [f"G{i}\t" + "\t".join(str((i * 7 + j) % 5) for j in range(6)) for i in range(12)]
    (tmp_path / "e.tsv").write_text("\n".join(rows) + "\n")
    (tmp_path / "c.yaml").write_text("command: rank\nexpression: e.tsv\nrankers: [variance]\n")
    r = CliRunner().invoke(main, ["run", str(tmp_path / "c.yaml"), "-o", str(tmp_path / "o")])
    assert r.exit_code == 0, r.stderr
    (tmp_path / "d.yaml").write_text("command: evaluate\nexpression: e.tsv\n")
    r = CliRunner().invoke(main, ["run", str(tmp_path / "d.yaml"), "-o", str(tmp_path / "p")])
    assert r.exit_code == 2 and "config key 'command': 'evaluate'" in r.stderr


def test_repeated_raw_gene_ids_name_raw(cells):
    """Gene ids repeated in raw.var (use_raw) were said to be in var_names, with the hint
    adata.var_names_make_unique(), which leaves raw as it is."""
    a = _adata(cells)
    raw = a.copy()
    raw.var_names = ["G", "G", *raw.var_names[2:]]
    a.raw = raw
    with pytest.raises(InputError, match="gene id \\(raw.var_names\\) 'G' appears twice .*"
                       "r = adata.raw.to_adata\\(\\); r.var_names_make_unique\\(\\)"):  # fmt: skip
        kofs.rank(a, use_raw=True, rankers=["variance"])


def test_single_cell_data_stored_dense_say_their_defaults_follow_the_storage(tmp_path, cells):
    """An .h5ad with a dense X got the bulk plan (variance, Laplacian, SPEC) instead of
    hotspot, and with labels no markers.tsv, where the same cells stored sparse get hotspot and
    marker tables: nothing said why. One warning now; none when the rankers or the marker
    tables are named."""
    a = _adata(cells)
    a.X = a.X.toarray()
    a.write_h5ad(tmp_path / "a.h5ad")

    def stderr(*extra):
        args = ["rank", str(tmp_path / "a.h5ad"), "--no-report", "--bootstrap", "0", *extra]
        r = CliRunner().invoke(main, [*args, "-o", str(tmp_path / f"o{len(extra)}")])
        assert r.exit_code == 0, r.stderr
        return r.stderr

    assert stderr("--labels", "obs:cell_type").count(
        "a.h5ad: the matrix is stored dense, and marker tables follow the storage"
    ) == 1  # fmt: skip
    assert "dense (bulk) matrices, not the single-cell one (hotspot); for it store" in stderr()
    for named in (["--rankers", "variance"], ["--labels", "obs:cell_type", "--markers", "none"]):
        assert "stored dense" not in stderr(*named)


def test_a_single_cell_result_counts_cells_not_samples(tmp_path, cells):
    # the repr of a single-cell run's result (and of its matrix, and `kofs sources`) said
    # "700 samples x 765 genes" where the report says cells
    a = _adata(cells)
    res = kofs.rank(a, labels="obs:cell_type", rankers=["fisher"])
    n = len(cells.X.toarray()) if sp.issparse(cells.X) else len(cells.X)
    assert repr(res).startswith(f"<RunResult: {n} cells x ")
    assert repr(res.expression).startswith(f"<Expression: {n} cells x ")
    path = tmp_path / "c.h5ad"
    a.write_h5ad(path)
    r = CliRunner().invoke(main, ["sources", str(path), "--labels", "obs:cell_type"])
    assert r.exit_code == 0, r.output
    assert f"expression: {n} cells x " in r.output and "samples" not in r.output
    bulk = kofs.rank(np.arange(60.0).reshape(6, 10) % 7, rankers=["variance"])
    assert repr(bulk).startswith("<RunResult: 6 samples x 10 genes")
