"""kofs.io.matrix_market: the MatrixMarket coordinate reader equals scipy.io.mmread on valid
files (every field and symmetry scipy writes, plain and gzip) and reads them from any block
size of the streaming checks."""

from __future__ import annotations

import gzip
import re

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from kofs.errors import InputError
from kofs.io import matrix_market
from kofs.io.matrix_market import read_coordinate


def _random(seed, shape=(40, 25), density=0.2, integer=False):
    A = sp.random(*shape, density=density, format="coo", random_state=seed)
    if integer:
        A.data = np.ceil(A.data * 50)
    else:
        A.data = (A.data - 0.5) * 10.0 ** np.random.default_rng(seed).integers(-5, 5, A.nnz)
    return A


@pytest.mark.parametrize("field", ["real", "integer", "pattern"])
@pytest.mark.parametrize("gz", [False, True])
def test_equals_scipy_on_valid_files(tmp_path, field, gz):
    A = _random(1, integer=field != "real")
    path = tmp_path / "m.mtx"
    scipy.io.mmwrite(path, A, field=field)
    if gz:
        path.with_suffix(".mtx.gz").write_bytes(gzip.compress(path.read_bytes()))
        path = path.with_suffix(".mtx.gz")
    ours = read_coordinate(path)
    theirs = scipy.io.mmread(path)
    np.testing.assert_array_equal(ours.toarray(), theirs.toarray())


def test_symmetric_file_is_mirrored(tmp_path):
    A = _random(2, shape=(30, 30))
    S = (A + A.T).tocoo()
    path = tmp_path / "s.mtx"
    scipy.io.mmwrite(path, S, symmetry="symmetric")
    assert "symmetric" in path.read_text().splitlines()[0]
    np.testing.assert_array_equal(read_coordinate(path).toarray(), S.toarray())


@pytest.mark.parametrize("block", [1, 3, 64])
def test_any_block_size(tmp_path, monkeypatch, block):
    monkeypatch.setattr(matrix_market, "BLOCK", block)
    A = _random(3, shape=(12, 9))
    scipy.io.mmwrite(tmp_path / "m.mtx", A)
    np.testing.assert_array_equal(read_coordinate(tmp_path / "m.mtx").toarray(), A.toarray())


def test_empty_matrix_and_bad_headers(tmp_path):
    (tmp_path / "e.mtx").write_text("%%MatrixMarket matrix coordinate real general\n4 3 0\n")
    assert read_coordinate(tmp_path / "e.mtx").shape == (4, 3)
    for text, message in [
        ("hello\n1 1 1\n", r"e.mtx:1: is not a MatrixMarket file"),
        ("%%MatrixMarket matrix coordinate complex general\n1 1 1\n", "field 'complex'"),
        ("%%MatrixMarket matrix coordinate real general\n% only comments\n", "before its size"),
        ("%%MatrixMarket matrix coordinate real general\n3 x 1\n", r"e.mtx:2: size line"),
    ]:
        (tmp_path / "e.mtx").write_text(text)
        with pytest.raises(InputError, match=message):
            read_coordinate(tmp_path / "e.mtx")


_INDEX = re.compile(rb"-?[0-9]{1,18}")
_REAL = re.compile(rb"-?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


def _strict(text: bytes) -> np.ndarray | None:
    """A slow reference reader: the dense matrix, or None where the file is not well formed."""
    lines = text.split(b"\n")
    banner = lines[0].split()
    field = banner[3].decode()
    k = 1
    while lines[k].startswith(b"%"):
        k += 1
    n_rows, n_cols, entries = (int(t) for t in lines[k].split())
    width = 2 if field == "pattern" else 3
    out = np.zeros((n_rows, n_cols))
    seen = 0
    for line in lines[k + 1 :]:
        tokens = [t for t in re.split(rb"[ \t\r]+", line) if t]  # MatrixMarket blanks only
        if not tokens:
            continue
        if len(tokens) != width:
            return None
        value_ok = _REAL if field == "real" else _INDEX
        if not all(_INDEX.fullmatch(t) for t in tokens[:2]):
            return None
        if width == 3 and not value_ok.fullmatch(tokens[2]):
            return None
        i, j = int(tokens[0]), int(tokens[1])
        if not (1 <= i <= n_rows and 1 <= j <= n_cols):
            return None
        out[i - 1, j - 1] += float(tokens[2]) if width == 3 else 1.0
        seen += 1
    return out if seen == entries else None


def _message(path, monkeypatch, compiled: bool) -> str:
    from kofs._compute import numba_kernels

    monkeypatch.setattr(numba_kernels, "AVAILABLE", compiled)
    with pytest.raises(InputError) as refused:
        read_coordinate(path)
    return str(refused.value)


@pytest.mark.parametrize("field", ["real", "integer", "pattern"])
def test_damaged_files_are_refused_or_read_exactly(tmp_path, monkeypatch, field):
    # byte-level damage (the kinds a bad copy or a bad writer makes) against a strict reference
    # reader: a file the reference refuses is an InputError, one it accepts is read exactly;
    # the compiled check (numba) and its NumPy fallback give the same message
    from kofs._compute import numba_kernels

    compiled = numba_kernels.AVAILABLE
    rng = np.random.default_rng(7)
    A = _random(5, shape=(9, 7), density=0.3, integer=field != "real")
    path = tmp_path / "m.mtx"
    scipy.io.mmwrite(path, A, field=field)
    good = path.read_bytes()
    head = good.split(b"\n")
    k = 1 + next(i for i, line in enumerate(head[1:]) if not line.startswith(b"%"))
    body = sum(len(line) + 1 for line in head[: k + 1])  # damage after the size line
    alphabet = b"0123456789+-.eE \t\n\x00x"
    outcomes = {"refused": 0, "read": 0}
    for _ in range(150):
        data = bytearray(good)
        for _ in range(int(rng.integers(1, 4))):
            at = int(rng.integers(body, len(data)))
            byte = alphabet[int(rng.integers(len(alphabet)))]
            action = rng.integers(3)
            if action == 0:
                data[at] = byte
            elif action == 1:
                data.insert(at, byte)
            else:
                del data[at]
        if rng.random() < 0.2:
            data = data.rstrip(b"\n")
        path.write_bytes(bytes(data))
        expected = _strict(bytes(data))
        if expected is None:
            fallback = _message(path, monkeypatch, False)
            if compiled:
                assert _message(path, monkeypatch, True) == fallback
            outcomes["refused"] += 1
        else:
            for flag in {compiled, False}:
                monkeypatch.setattr(numba_kernels, "AVAILABLE", flag)
                np.testing.assert_array_equal(read_coordinate(path).toarray(), expected)
            outcomes["read"] += 1
    assert outcomes["refused"] > 20 and outcomes["read"] > 5, outcomes


@pytest.mark.parametrize("gz", [False, True])
def test_a_size_line_declaring_more_entries_than_the_file_holds(tmp_path, gz):
    """30 x 40 with 999,999,999,999 entries and none written: the reader allocated for them
    and the run ended in "out of memory; use a sparser graph", naming no file."""
    text = b"%%MatrixMarket matrix coordinate integer general\n30 40 999999999999\n"
    path = tmp_path / ("m.mtx.gz" if gz else "m.mtx")
    path.write_bytes(gzip.compress(text) if gz else text)
    with pytest.raises(InputError, match="declares 999999999999 entries, more than its"):
        read_coordinate(path)
