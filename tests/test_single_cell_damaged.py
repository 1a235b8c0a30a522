"""Damaged single-cell files: malformed sparse arrays, NaN, no genes, random byte damage.

Every case ends in one error line naming the file and exit status 2 (or a normal run), never a
traceback or a crash of the compiled kernels, which index with the CSR arrays unchecked."""

from __future__ import annotations

import os
import random
import shutil

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from click.testing import CliRunner

import kofs
from kofs.cli import main
from kofs.datasets import synthetic_counts
from kofs.errors import InputError
from kofs.io.single_cell import read_10x_h5, read_single_cell

ad = pytest.importorskip("anndata")
h5py = pytest.importorskip("h5py")


def _good_h5ad(path, n=60, m=30):
    d = synthetic_counts(n, m, n_clusters=2, n_markers=3, seed=3)
    obs = pd.DataFrame({"ct": d.labels()}, index=list(d.cells))
    ad.AnnData(d.X, obs=obs, var=pd.DataFrame(index=list(d.genes))).write_h5ad(path)
    return path


def _edit(path, key, change):
    with h5py.File(path, "a") as f:
        values = f["X"][key][()]
        change(values)
        f["X"][key][...] = values


def _cli(args):
    return CliRunner().invoke(main, ["rank", *map(str, args)])


def _refused(result, path, out, match):
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert str(path) in result.stderr and match in result.stderr
    assert not out.exists()


@pytest.mark.parametrize("chunked", [False, True], ids=["in-memory", "chunked"])
def test_column_index_out_of_range(tmp_path, chunked):
    path = _good_h5ad(tmp_path / "a.h5ad")
    _edit(path, "indices", lambda idx: idx.__setitem__(5, 999))
    out = tmp_path / "out"
    extra = ["--chunk-size", "20"] if chunked else []
    _refused(_cli([path, *extra, "-o", out]), path, out, "malformed sparse matrix")


def test_index_pointer_out_of_range(tmp_path):
    path = _good_h5ad(tmp_path / "a.h5ad")
    _edit(path, "indptr", lambda ptr: ptr.__setitem__(2, 10**6))
    with pytest.raises(InputError, match="malformed sparse matrix"):
        read_single_cell(path)
    out = tmp_path / "out"
    r = _cli([path, "--chunk-size", "20", "-o", out])
    _refused(r, path, out, "")
    assert "malformed sparse matrix" in r.stderr or "cannot read the matrix chunk" in r.stderr


def test_nan_in_a_chunked_matrix(tmp_path):
    path = _good_h5ad(tmp_path / "a.h5ad")
    _edit(path, "data", lambda v: v.__setitem__(7, np.nan))
    out = tmp_path / "out"
    _refused(_cli([path, "--chunk-size", "20", "-o", out]), path, out, "1 NaN or infinite")
    _refused(_cli([path, "-o", out]), path, out, "NaN or infinite")


def test_no_genes(tmp_path):
    path = tmp_path / "a.h5ad"
    ad.AnnData(np.zeros((3, 0)), obs=pd.DataFrame(index=["a", "b", "c"])).write_h5ad(path)
    out = tmp_path / "out"
    _refused(_cli([path, "-o", out]), path, out, "has no genes")


def test_10x_h5_malformed_and_inconsistent(tmp_path):
    def write(path, indices, barcodes):
        with h5py.File(path, "w") as f:
            g = f.create_group("matrix")
            g["data"], g["indices"] = np.ones(2), np.array(indices)
            g["indptr"], g["shape"] = np.array([0, 1, 2]), np.array([3, 2])
            g["barcodes"] = np.array(barcodes)
            ft = g.create_group("features")
            ft["id"], ft["name"] = np.array([b"g1", b"g2", b"g3"]), np.array([b"A", b"B", b"C"])

    write(tmp_path / "idx.h5", [0, 5], [b"x", b"y"])
    with pytest.raises(InputError, match=r"malformed sparse matrix \(indices must be < 3\)"):
        read_10x_h5(tmp_path / "idx.h5")
    write(tmp_path / "bc.h5", [0, 2], [b"x"])
    with pytest.raises(InputError, match="2 cells but there are 3 feature ids, 3 names and 1"):
        read_10x_h5(tmp_path / "bc.h5")


def test_python_api_refuses_a_malformed_csr():
    X = sp.csr_matrix(np.eye(4) + 1.0)
    X.indices[3] = 50  # what a buggy writer leaves: the kernels would read out of bounds
    with pytest.raises(ValueError, match="malformed sparse matrix"):
        kofs.rank(X, rankers=["variance"])


def test_sparse_matrix_with_one_stored_value():
    # every stored value 1 (a binary matrix): the genes vary through the implicit zeros
    X = sp.random(60, 40, density=0.3, format="csr", random_state=0)
    X.data[:] = 1.0
    res = kofs.rank(X, rankers=["variance"])
    dense = kofs.rank(X.toarray(), rankers=["variance"])
    assert res.final.top(10) == dense.final.top(10)


# two damaged files in the fast tier, ten more in the full one (24 CLI runs, half through Dask)
@pytest.mark.parametrize(
    "seed", [0, 1, *(pytest.param(s, marks=pytest.mark.slow) for s in range(2, 12))]
)
@pytest.mark.slow
def test_random_byte_damage(tmp_path, seed):
    good = _good_h5ad(tmp_path / "good.h5ad")
    path = tmp_path / "d.h5ad"
    shutil.copy(good, path)
    rng = random.Random(seed)
    with open(path, "r+b") as fh:
        fh.seek(rng.randrange(0, os.path.getsize(path) - 64))
        fh.write(bytes(rng.randrange(256) for _ in range(64)))
    for extra in ([], ["--chunk-size", "20"]):
        out = tmp_path / f"out{len(extra)}"
        r = _cli([path, *extra, "--rankers", "variance,laplacian", "-o", out])
        assert r.exit_code in (0, 2), r.output
        if r.exit_code == 2:
            _refused(r, path, out, "")


def _mtx_folder(tmp_path, body_lines, *, n_genes=3, n_cells=2, field="integer"):
    folder = tmp_path / "tenx"
    folder.mkdir(exist_ok=True)
    head = f"%%MatrixMarket matrix coordinate {field} general\n% written by a test\n"
    entries = body_lines
    (folder / "matrix.mtx").write_bytes(
        head.encode() + f"{n_genes} {n_cells} {len(entries)}\n".encode() + b"\n".join(entries)
    )
    (folder / "features.tsv").write_text(
        "".join(f"ENSG{j:011d}\tG{j}\tGene Expression\n" for j in range(n_genes))
    )
    (folder / "barcodes.tsv").write_text("".join(f"AC{i}-1\n" for i in range(n_cells)))
    return folder


def test_mtx_byte_that_crashed_scipy(tmp_path):
    # scipy 1.17's compiled MatrixMarket parser crashed the process (SIGSEGV) on this value
    folder = _mtx_folder(tmp_path, [b"1 1 4", b"2 2 1)\xf8\x85\x12\x00J", b"3 1 2"])
    with pytest.raises(InputError, match=r"matrix.mtx:5: '\)' cannot be part of a number"):
        read_single_cell(folder)


@pytest.mark.parametrize("block", [4, 7, 1 << 24])
def test_mtx_bad_byte_found_in_any_block(tmp_path, monkeypatch, block):
    from kofs.io import matrix_market

    monkeypatch.setattr(matrix_market, "BLOCK", block)  # lines cut across blocks
    folder = _mtx_folder(tmp_path, [b"1 1 4", b"2 2 1", b"3 1 2.5e+0"], field="real")
    e = read_single_cell(folder)[0]
    np.testing.assert_array_equal(e.values.toarray(), [[4, 0, 2.5], [0, 1, 0]])
    (folder / "matrix.mtx").write_bytes(
        (folder / "matrix.mtx").read_bytes().replace(b"2 2 1", b"2 2 x")
    )
    with pytest.raises(InputError, match=r"matrix.mtx:5: 'x' cannot be part of"):
        read_single_cell(folder)
    # scipy's parser read 2.5 in an integer file as 2, and crashed when it ended the file
    _mtx_folder(tmp_path, [b"1 1 4", b"2 2 1", b"3 1 2.5"])
    with pytest.raises(
        InputError, match=r"matrix.mtx:6: '2.5' is not a MatrixMarket integer value"
    ):
        read_single_cell(folder)


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([b"1 1 4", b"2 2"], r"matrix.mtx:5: an entry needs 3 numbers, this line has 2"),
        ([b"1 1 4", b"2 2 1 7"], r"matrix.mtx:5: an entry needs 3 numbers, this line has 4"),
        ([b"1 1 4", b"2 -- 1"], r"matrix.mtx:5: '--' is not an index"),
        ([b"1 1 4", b"4 2 1"], r"matrix.mtx:5: Row index out of bounds"),
        ([b"1 1 4", b"0 2 1"], r"matrix.mtx:5: Row index out of bounds"),
        ([b"1 1 4", b"1 3 1"], r"matrix.mtx:5: Column index out of bounds"),
        ([b"1 1 4"], r"Truncated file. Expected another 1 lines"),
        ([b"1 1 4", b"2 2 1", b"3 1 1"], r"matrix.mtx:6: Too many lines in file"),
    ],
)
def test_mtx_entries_checked(tmp_path, lines, message):
    folder = _mtx_folder(tmp_path, lines)
    text = (folder / "matrix.mtx").read_bytes()  # the size line says 2 entries:
    (folder / "matrix.mtx").write_bytes(text.replace(f"3 2 {len(lines)}\n".encode(), b"3 2 2\n"))
    with pytest.raises(InputError, match=message):
        read_single_cell(folder)


def test_mtx_damaged_gzip_and_dense_array(tmp_path):
    import gzip

    folder = _mtx_folder(tmp_path, [b"1 1 4", b"2 2 1"])
    data = gzip.compress((folder / "matrix.mtx").read_bytes() * 50)
    (folder / "matrix.mtx").unlink()
    (folder / "matrix.mtx.gz").write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match="gzip file is truncated"):
        read_single_cell(folder)
    (folder / "matrix.mtx.gz").unlink()
    (folder / "matrix.mtx").write_text(
        "%%MatrixMarket matrix array real general\n3 2\n1\n2\n3\n4\n5\n6\n"
    )
    with pytest.raises(InputError, match="dense MatrixMarket 'array' file"):
        read_single_cell(folder)


def test_chunked_reading_of_dense_csc_and_foreign_matrices(tmp_path):
    d = synthetic_counts(40, 20, n_clusters=2, n_markers=3, seed=3)
    obs = pd.DataFrame(index=list(d.cells))
    var = pd.DataFrame(index=list(d.genes))
    dense = tmp_path / "dense.h5ad"
    ad.AnnData(d.X.toarray(), obs=obs, var=var).write_h5ad(dense)
    e, _ = read_single_cell(dense, chunk_size=10)  # a dense X is cut into cells like a CSR one
    assert e.values.shape == (40, 20) and e.values.chunks[0][0] == 10
    csc = tmp_path / "csc.h5ad"
    ad.AnnData(sp.csc_matrix(d.X), obs=obs, var=var).write_h5ad(csc)
    with pytest.raises(InputError, match=r"X is stored column by column \(CSC\)"):
        read_single_cell(csc, chunk_size=10)
    cube = tmp_path / "cube.h5ad"
    shutil.copy(dense, cube)
    with h5py.File(cube, "a") as f:
        attrs = dict(f["X"].attrs)
        del f["X"]
        f["X"] = np.ones((40, 20, 2))
        f["X"].attrs.update(attrs)
    with pytest.raises(InputError, match="X is 3-dimensional"):
        read_single_cell(cube, chunk_size=10)
    foreign = _good_h5ad(tmp_path / "foreign.h5ad")
    with h5py.File(foreign, "a") as f:
        f["X"].attrs["encoding-type"] = "future_matrix"  # written by a newer anndata
    out = tmp_path / "out"
    _refused(_cli([foreign, "-o", out]), foreign, out, "encoding anndata")
    _refused(_cli([foreign, "--chunk-size", "20", "-o", out]), foreign, out, "'future_matrix'")
    _refused(_cli([csc, "--chunk-size", "20", "-o", out]), csc, out, "drop --chunk-size")
    plain = tmp_path / "plain.h5ad"  # a dense X without anndata's attributes (another writer)
    shutil.copy(dense, plain)
    with h5py.File(plain, "a") as f:
        for key in list(f["X"].attrs):
            del f["X"].attrs[key]
    e, _ = read_single_cell(plain)  # read whole: fine
    assert e.values.shape == (40, 20)
    with pytest.raises(InputError, match="plain array without anndata's encoding attributes"):
        read_single_cell(plain, chunk_size=10)
