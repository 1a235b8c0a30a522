"""The shared streaming opening path (kofs.io._open) and the reader bugs it fixes.

Every damaged compressed file and every pandas parse failure must reach the user as one
one-line :class:`InputError` naming the file (and the line where pandas knows it).
"""

from __future__ import annotations

import bz2
import gzip
import io
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from kofs.errors import InputError
from kofs.io import _open
from kofs.io.annotations import read_go_annotations
from kofs.io.interaction_dbs import read_biogrid
from kofs.io.interactions import read_interactions

DATA = Path(__file__).parent / "data"
TEXT = "".join(f"G{i}\tG{i + 1}\t0.{i % 10}\n" for i in range(3000)).encode()


def _truncated_gzip(data: bytes) -> bytes:
    gz = gzip.compress(data)
    return gz[: len(gz) // 2]


def _one_line(exc: pytest.ExceptionInfo, path: Path) -> str:
    msg = str(exc.value)
    assert "\n" not in msg
    assert str(path) in msg
    return msg


# --------------------------------------------------------------------------- stream_text


@pytest.mark.parametrize("kind", ["plain", "gzip", "bzip2", "zip"])
def test_stream_text_round_trip(tmp_path, kind):
    p = tmp_path / "f.txt"
    if kind == "gzip":
        p.write_bytes(gzip.compress(b"\xef\xbb\xbfa\tb\r\nc\td\n"))
    elif kind == "bzip2":
        p.write_bytes(bz2.compress(b"\xef\xbb\xbfa\tb\r\nc\td\n"))
    elif kind == "zip":
        with zipfile.ZipFile(p, "w") as zf:
            zf.writestr("inner.txt", b"\xef\xbb\xbfa\tb\r\nc\td\n")
    else:
        p.write_bytes(b"\xef\xbb\xbfa\tb\r\nc\td\n")
    with _open.stream_text(p) as fh:
        assert fh.read() == "a\tb\nc\td\n"  # BOM dropped, CRLF -> LF


@pytest.mark.parametrize("compress", [gzip.compress, bz2.compress])
def test_stream_text_truncated_raises_while_reading(tmp_path, compress):
    p = tmp_path / "cut.txt.gz"
    data = compress(TEXT)
    p.write_bytes(data[: len(data) // 2])
    fh = _open.stream_text(p, what="test file")
    with pytest.raises(InputError, match="truncated") as exc:
        fh.read()
    _one_line(exc, p)
    fh.close()


def test_stream_text_corrupt_gzip(tmp_path):
    p = tmp_path / "bad.gz"
    gz = bytearray(gzip.compress(TEXT))
    gz[20:40] = b"\xff" * 20
    p.write_bytes(bytes(gz))
    with pytest.raises(InputError, match="corrupt gzip|truncated") as exc:
        with _open.stream_text(p) as fh:
            fh.read()
    _one_line(exc, p)


def test_stream_text_damaged_zip(tmp_path):
    p = tmp_path / "bad.zip"
    p.write_bytes(b"PK\x03\x04" + b"\x00" * 30)
    with pytest.raises(InputError, match="corrupt zip") as exc:
        _open.stream_text(p)
    _one_line(exc, p)


def test_stream_text_zip_with_two_members(tmp_path):
    p = tmp_path / "two.zip"
    with zipfile.ZipFile(p, "w") as zf:
        zf.writestr("a.txt", "x")
        zf.writestr("b.txt", "y")
    with pytest.raises(InputError, match="holds 2 files"):
        _open.stream_text(p)


def _empty_file(p: Path) -> Path:
    p.write_bytes(b"")
    return p


@pytest.mark.parametrize(
    "make, needle",
    [
        (lambda d: d / "absent.txt", "not found"),
        (lambda d: d, "is a directory"),
        (lambda d: _empty_file(d / "e.txt"), "is empty"),
    ],
)
def test_stream_text_missing_dir_empty(tmp_path, make, needle):
    with pytest.raises(InputError, match=needle):
        _open.stream_text(make(tmp_path))


def test_head_lines_skips_blank_and_stops(tmp_path):
    p = tmp_path / "h.txt.gz"
    p.write_bytes(_truncated_gzip(b"\n\nfirst\n\nsecond\n" + TEXT))
    assert _open.head_lines(p, 2) == ["first", "second"]  # never reads the damaged tail


# --------------------------------------------------------------------------- table_errors


def _parse(text: bytes, **kwargs):
    return pd.read_csv(io.BytesIO(text), sep="\t", dtype=str, **kwargs)


@pytest.mark.parametrize(
    "text, kwargs, needle, line",
    [
        (b"a\tb\n1\t2\n3\t4\t5\n", {"header": 0}, "malformed", 3),
        (b"a\tb\n1\t2\n", {"header": 0, "names": ["x", "x"]}, "cannot be parsed", None),
        (
            b"a\tb\tc\td\n1\t2\t3\n",
            {"header": 0, "names": ["x", "y", "z"], "usecols": ["x", "y"]},
            "cannot be parsed",
            None,
        ),
        (b"", {}, "has no rows", None),
    ],
)
def test_table_errors_translates_pandas(text, kwargs, needle, line):
    with pytest.raises(InputError, match=needle) as exc:
        with _open.table_errors("t.tsv", "test table"):
            _parse(text, **kwargs)
    assert exc.value.line == line
    assert exc.value.path == "t.tsv"
    assert "\n" not in str(exc.value)


def test_table_errors_line_offset():
    with pytest.raises(InputError) as exc:
        with _open.table_errors("t.tsv", "test table", line_offset=10):
            _parse(b"a\tb\n1\t2\n3\t4\t5\n", header=0)
    assert exc.value.line == 13


def test_table_errors_lets_kofs_errors_and_success_through():
    with pytest.raises(InputError, match="mine"):
        with _open.table_errors("t.tsv", "test table"):
            raise InputError("mine")
    with _open.table_errors("t.tsv", "test table"):
        df = _parse(b"a\tb\n1\t2\n", header=0)
    assert df.shape == (1, 2)


# --------------------------------------------------------------------------- the reader bugs


@pytest.mark.parametrize("fixture", ["tiny.gaf", "tiny_annotations.tsv", "tiny_gene2go.tsv"])
def test_go_annotations_truncated_gzip(tmp_path, fixture):
    p = tmp_path / "ann.txt"
    p.write_bytes(_truncated_gzip((DATA / "go" / fixture).read_bytes() * 30))
    with pytest.raises(InputError, match="truncated") as exc:
        read_go_annotations(p)
    _one_line(exc, p)


def test_go_annotations_gzip_still_read(tmp_path):
    plain = read_go_annotations(DATA / "go" / "tiny.gaf")
    p = tmp_path / "ann.gaf.gz"
    p.write_bytes(gzip.compress((DATA / "go" / "tiny.gaf").read_bytes()))
    gz = read_go_annotations(p)
    assert list(gz.terms) == list(plain.terms)
    assert list(gz.gene_ids()) == list(plain.gene_ids())


@pytest.mark.parametrize("fixture", ["string_links.txt", "biogrid_tab2.txt", "edges_header.tsv"])
def test_interactions_truncated_gzip(tmp_path, fixture):
    src = (DATA / "interactions" / fixture).read_bytes()
    head, _, body = src.partition(b"\n")
    p = tmp_path / "net.txt.gz"
    p.write_bytes(_truncated_gzip(head + b"\n" + body * 200))
    with pytest.raises(InputError, match="truncated") as exc:
        read_interactions(p)
    _one_line(exc, p)


def test_biogrid_duplicate_header_names(tmp_path):
    lines = (DATA / "interactions" / "biogrid_tab2.txt").read_text().splitlines()
    head = lines[0].split("\t")
    head[5] = head[6]  # two "Systematic Name Interactor B" columns
    p = tmp_path / "bg.txt"
    p.write_text("\t".join(head) + "\n" + "\n".join(lines[1:]) + "\n")
    with pytest.raises(InputError, match="BioGRID file cannot be parsed") as exc:
        read_biogrid(p)
    _one_line(exc, p)


def test_biogrid_header_one_field_wider_than_the_rows(tmp_path):
    """A trailing header field the rows lack is an empty column: the network is the file's
    without it, edge for edge (BioGRID's columns are read by name)."""
    src = DATA / "interactions" / "biogrid_tab2.txt"
    lines = src.read_text().splitlines()
    p = tmp_path / "bg.txt"
    p.write_text(lines[0] + "\textra\n" + "\n".join(lines[1:]) + "\n")
    got, want = read_biogrid(p), read_biogrid(src)
    assert got.n_edges == want.n_edges > 0
    for field in ("source", "target", "weight", "directed", "type"):
        assert getattr(got, field).tolist() == getattr(want, field).tolist(), field
    assert got.aliases == want.aliases


def test_edge_list_ragged_row_names_line(tmp_path):
    p = tmp_path / "edges.tsv"
    p.write_text("source\ttarget\tweight\nG1\tG2\t0.5\nG2\tG3\t1\tx\n")
    with pytest.raises(InputError, match="malformed interaction file") as exc:
        read_interactions(p)
    assert exc.value.line == 3
    _one_line(exc, p)
