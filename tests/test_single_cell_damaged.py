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


@pytest.mark.parametrize("seed", range(12))
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
