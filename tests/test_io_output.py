"""Tests of kofs.io.output: atomic writes, ranking/weights tables, JSON, fingerprints."""

from __future__ import annotations

import errno
import hashlib
import io
import json
import math
import os
import stat
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kofs.errors import InputError, OutputError, ParameterError
from kofs.io import output
from kofs.io._fsops import closed_folder
from kofs.io.output import (
    atomic_file,
    check_output_dir,
    check_output_file,
    environment_info,
    file_fingerprint,
    format_float,
    format_floats,
    format_ranks,
    write_json,
    write_ranking,
    write_weights,
)
from kofs.io.output_folder import atomic_dir
from kofs.types import AggregateRanking, Ranking

GENES = ("A", "B", "C", "D")


def tiny_result():
    fisher = Ranking("fisher", GENES, [3, 1, np.nan, 2], higher_is_better=True)
    laplacian = Ranking("laplacian", GENES, [0.1, 0.2, 0.3, 0.1], higher_is_better=False)
    final = AggregateRanking(
        "em",
        GENES,
        [0.25, 0.9, 0.25, 1 / 3],
        ("fisher", "laplacian"),
        np.column_stack([fisher.ranks, laplacian.ranks]),
        weights=[0.75, 0.25],
    )
    return final, [fisher, laplacian]


def leftovers(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


# ---------------------------------------------------------------- write_ranking / weights
def test_write_ranking_golden(tmp_path, testdata):
    final, lists = tiny_result()
    evidence = {"B": "GO:1\tx", "A": "pathway\nY"}
    target = tmp_path / "ranking.tsv"
    write_ranking(target, final, lists, evidence=evidence)
    golden = (testdata / "io" / "ranking_golden.tsv").read_text()
    assert target.read_text() == golden
    buf = io.StringIO()
    write_ranking(buf, final, lists[::-1], evidence=evidence)
    assert buf.getvalue().splitlines()[0].split("\t")[3:5] == ["rank:laplacian", "score:laplacian"]
    assert leftovers(tmp_path) == []


def test_write_ranking_stdout_only_table(capsys):
    final, lists = tiny_result()
    write_ranking("-", lists[0], [])
    out = capsys.readouterr()
    assert out.out == "gene\trank\tscore\nA\t1\t3\nD\t2\t2\nB\t3\t1\nC\t4\tNA\n"
    assert out.err == ""


def test_write_ranking_aligns_permuted_lists_and_rejects_others():
    final, lists = tiny_result()
    perm = Ranking("fisher", GENES[::-1], [2, np.nan, 1, 3], higher_is_better=True)
    a, b = io.StringIO(), io.StringIO()
    write_ranking(a, final, [lists[0]])
    write_ranking(b, final, [perm])
    assert a.getvalue() == b.getvalue()
    other = Ranking("x", ("A", "B", "C", "E"), [1, 2, 3, 4], higher_is_better=True)
    with pytest.raises(ParameterError):
        write_ranking(io.StringIO(), final, [other])


def test_write_weights(tmp_path):
    final, _ = tiny_result()
    write_weights(tmp_path / "w.tsv", final)
    assert (tmp_path / "w.tsv").read_text() == "list\tweight\nfisher\t0.75\nlaplacian\t0.25\n"
    borda = AggregateRanking("borda", GENES, [1, 2, 3, 4], ("x",), np.ones((4, 1)))
    with pytest.raises(ParameterError):
        write_weights(tmp_path / "b.tsv", borda)


@pytest.mark.parametrize(
    ("x", "text"),
    [
        (np.nan, "NA"),
        (np.inf, "Inf"),
        (-np.inf, "-Inf"),
        (-0.0, "0"),
        (1e-5, "1e-05"),
        (123456789012.0, "1.23456789e+11"),
        (0.1 + 0.2, "0.3"),
    ],
)
def test_format_float(x, text):
    assert format_float(x) == text


#: Numbers whose text is easy to get wrong: signed zeros, the ends of the float range,
#: subnormals, non-finite values, integers around 1e10 (where %.10g switches to exponents) and
#: beyond 2**53 and 2**63, halves and values next to a rounding boundary of 10 digits.
EDGE_NUMBERS = [
    0.0, -0.0, 1e-300, -1e-300, 5e-324, -5e-324, 2.2250738585072014e-308, 1.7976931348623157e308,
    -1.7976931348623157e308, np.nan, -np.nan, np.inf, -np.inf, 1.0, -1.0, 0.5, 1.5, 2.5, -2.5,
    9999999999.0, 10000000000.0, 99999999995.0, 1e10, 1e16, 2.0**53, 2.0**53 + 2, 2.0**63,
    -(2.0**63), 2.0**64, 1e300, 0.1 + 0.2, 1 / 3, 2 / 3, 1e-5, 1e-4, 0.00012345678905,
    123456789012.0, 1.23456789055, 3.0, 47192.0, 47191.5, 1e-10, 0.99999999995, 0.999999999949,
]  # fmt: skip


def _old_rank(x):
    """The rank cell as the writer formatted it one number at a time before
    :func:`format_ranks`."""
    if math.isfinite(x) and x == int(x):
        return str(int(x))
    return format_float(x)


def test_format_floats_same_text_as_format_float_on_edge_cases():
    assert format_floats(EDGE_NUMBERS) == [format_float(x) for x in EDGE_NUMBERS]
    assert format_ranks(EDGE_NUMBERS) == [_old_rank(x) for x in EDGE_NUMBERS]
    assert format_floats([]) == [] and format_ranks([]) == []
    ints = np.arange(-3, 100_003)
    assert format_ranks(ints) == [str(int(x)) for x in ints.tolist()]
    assert format_ranks(np.array([1.0, 2.0, np.nan])) == ["1", "2", "NA"]


@given(
    st.lists(
        st.one_of(
            st.floats(allow_nan=True, allow_infinity=True),
            st.floats(min_value=-1e12, max_value=1e12).map(round).map(float),
            st.integers(-(10**6), 10**6).map(lambda i: i / 2),
        ),
        max_size=50,
    )
)
def test_format_floats_and_ranks_match_the_scalar_formatters(values):
    assert format_floats(values) == [format_float(x) for x in values]
    assert format_ranks(values) == [_old_rank(x) for x in values]


def test_format_floats_random_bits_match_format_float():
    """Every finite and non-finite float64 class, from random bit patterns."""
    bits = np.random.default_rng(25).integers(0, 2**64, size=200_000, dtype=np.uint64)
    values = bits.view(np.float64)
    assert format_floats(values) == [format_float(x) for x in values.tolist()]
    assert format_ranks(values) == [_old_rank(x) for x in values.tolist()]


# ---------------------------------------------------------------- check_output_dir
def test_check_output_dir(tmp_path, monkeypatch):
    check_output_dir(tmp_path / "new" / "deeper")
    check_output_dir("-")
    f = tmp_path / "file.txt"
    f.write_text("x")
    with pytest.raises(OutputError, match="existing file"):
        check_output_dir(f)
    with pytest.raises(OutputError, match="is a file"):
        check_output_dir(f / "sub")
    out = tmp_path / "out"
    out.mkdir()
    (out / "ranking.tsv").write_text("old")
    with pytest.raises(OutputError, match="overwrite the input"):
        check_output_dir(out, inputs=[out / "ranking.tsv"])
    check_output_dir(out, inputs=[f, "-", None])
    monkeypatch.setattr(output.os, "access", lambda *a, **k: False)
    with pytest.raises(OutputError, match="not writable"):
        check_output_dir(out)


def test_an_output_folder_behind_a_closed_folder_is_named(tmp_path, monkeypatch):
    # /root/x for a user who may not enter /root: lstat of /root/x raises PermissionError
    closed = tmp_path / "closed"
    closed.mkdir()
    real_lstat = output.Path.lstat

    def lstat(self):
        if closed in self.parents:
            raise PermissionError(errno.EACCES, "Permission denied", str(self))
        return real_lstat(self)

    monkeypatch.setattr(output.Path, "lstat", lstat)
    monkeypatch.setattr("kofs.io._fsops.os.access", lambda p, mode: os.fspath(p) != str(closed))
    with pytest.raises(OutputError, match="cannot be reached") as err:
        check_output_dir(closed / "x" / "y")
    assert f"{closed} may not be entered" in str(err.value)
    assert closed_folder(closed / "x" / "y") == str(closed)
    assert closed_folder(tmp_path / "open") == str(tmp_path / "open")


def test_a_device_or_pipe_is_never_replaced_by_an_output_file(tmp_path):
    # the all-or-nothing rename would put a regular file in place of /dev/null or a FIFO
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for target in (fifo, Path("/dev/null")):
        with pytest.raises(OutputError, match="device, pipe or socket"):
            check_output_file(target)
        with pytest.raises(OutputError, match="device, pipe or socket"):
            with atomic_file(target) as fh:
                fh.write("x")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and Path("/dev/null").is_char_device()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]


# ---------------------------------------------------------------- atomic_dir
def test_atomic_dir_creates_and_replaces_whole(tmp_path):
    out = tmp_path / "a" / "out"
    with atomic_dir(out) as tmp:
        assert tmp.parent == out.parent and not out.exists()
        (tmp / "x.txt").write_text("1")
        (tmp / "old.txt").write_text("o")
    assert (out / "x.txt").read_text() == "1"
    with atomic_dir(out) as tmp:
        (tmp / "x.txt").write_text("2")
        (tmp / "sub").mkdir()
        (tmp / "sub" / "y.txt").write_text("3")
    assert (out / "x.txt").read_text() == "2" and not (out / "old.txt").exists()
    assert (out / "sub" / "y.txt").read_text() == "3"
    assert leftovers(out.parent) == []
    (out / "keep.txt").write_text("k")  # a file kofs did not write: never deleted
    with pytest.raises(OutputError, match=r"kofs did not write \(keep.txt\)"):
        with atomic_dir(out):
            pass
    assert (out / "keep.txt").read_text() == "k"


@pytest.mark.parametrize("exc", [RuntimeError("boom"), KeyboardInterrupt()])
def test_atomic_dir_failure_leaves_nothing(tmp_path, exc):
    out = tmp_path / "out"
    with atomic_dir(out) as tmp:
        (tmp / "x.txt").write_text("old")
    with pytest.raises(type(exc)):
        with atomic_dir(out) as tmp:
            (tmp / "x.txt").write_text("new")
            raise exc
    assert (out / "x.txt").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    fresh = tmp_path / "p" / "q" / "fresh"
    with pytest.raises(type(exc)):
        with atomic_dir(fresh):
            raise exc
    assert not (tmp_path / "p").exists()


def test_atomic_dir_disk_full(tmp_path, monkeypatch):
    final, lists = tiny_result()
    out = tmp_path / "out"

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(output.os, "fsync", full)
    with pytest.raises(OutputError) as info:
        with atomic_dir(out) as tmp:
            write_weights(tmp / "weights.tsv", final)
    assert str(info.value).startswith(f"{out / 'weights.tsv'}: cannot write (disk full)")
    assert list(tmp_path.iterdir()) == []


def test_atomic_dir_unrelated_oserror_propagates(tmp_path):
    with pytest.raises(FileNotFoundError):
        with atomic_dir(tmp_path / "out"):
            open(tmp_path / "missing-input.txt")  # noqa: SIM115
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------- atomic_file
def test_atomic_file(tmp_path, monkeypatch):
    p = tmp_path / "f.txt"
    with atomic_file(p) as fh:
        fh.write("a\n")
    assert p.read_bytes() == b"a\n"
    assert oct(p.stat().st_mode & 0o777) == oct(0o666 & ~_umask())
    with pytest.raises(ValueError):
        with atomic_file(p) as fh:
            fh.write("b\n")
            raise ValueError("x")
    assert p.read_bytes() == b"a\n" and leftovers(tmp_path) == []
    with atomic_file(p, "wb") as fh:
        fh.write(b"\x00\x01")
    assert p.read_bytes() == b"\x00\x01"
    monkeypatch.setattr(
        output.os, "fsync", lambda fd: (_ for _ in ()).throw(OSError(errno.ENOSPC, "full"))
    )
    with pytest.raises(OutputError, match="disk full"):
        write_json(p, {"a": 1})
    assert p.read_bytes() == b"\x00\x01" and leftovers(tmp_path) == []
    with pytest.raises(OutputError, match="does not exist"):
        with atomic_file(tmp_path / "no" / "f.txt"):
            pass
    with pytest.raises(ParameterError):
        with atomic_file(p, "a"):
            pass


def _umask() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    return 0o022


# ---------------------------------------------------------------- json, fingerprint, environment
def test_write_json(tmp_path):
    p = tmp_path / "m.json"
    obj = {
        "b": np.float64(1.5),
        "a": (1, np.int64(2)),
        "c": {"z": np.nan, "y": np.array([1.0, np.inf])},
        "d": {3, 1},
        "e": tmp_path,
    }
    write_json(p, obj)
    text = p.read_text()
    assert text.endswith("}\n") and text.index('"a"') < text.index('"b"')
    assert json.loads(text) == {
        "a": [1, 2],
        "b": 1.5,
        "c": {"y": [1.0, None], "z": None},
        "d": [1, 3],
        "e": str(tmp_path),
    }
    write_json(tmp_path / "m2.json", obj)
    assert (tmp_path / "m2.json").read_bytes() == p.read_bytes()


def test_file_fingerprint(tmp_path):
    p = tmp_path / "x.bin"
    data = os.urandom(3 * (1 << 20) + 17)
    p.write_bytes(data)
    fp = file_fingerprint(p)
    assert fp == {"path": str(p), "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    with pytest.raises(InputError):
        file_fingerprint(tmp_path / "missing")


def test_environment_info():
    info = environment_info()
    assert set(info) == {
        "kofs",
        "python",
        "numpy",
        "scipy",
        "pandas",
        "sklearn",
        "goatools",
        "networkx",
        "matplotlib",
        "platform",
    }
    assert info["numpy"] == np.__version__
