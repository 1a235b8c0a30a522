"""Hints for files given in the wrong form or to the wrong option: spreadsheets, knowledge
tables of another kind; messages in the command line's words."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from kofs.cli import main
from kofs.datasets.example import example_paths
from kofs.io.sniff import looks_like

EX = example_paths()


def _error(args: list[str], tmp_path: Path) -> str:
    r = CliRunner().invoke(main, ["rank", *args, "-o", str(tmp_path / "out")])
    assert r.exit_code == 2, r.output
    lines = [ln for ln in r.output.splitlines() if ln.startswith("kofs: error:")]
    assert len(lines) == 1, r.output
    return lines[0]


def _xlsx(path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as z:  # the members of a real workbook
        z.writestr("[Content_Types].xml", "<Types/>")
        z.writestr("xl/workbook.xml", "<workbook/>")
        z.writestr("xl/worksheets/sheet1.xml", "<worksheet/>")
    return path


@pytest.mark.parametrize("kind", ["real", "fake", "old"])
def test_a_spreadsheet_is_told_to_be_exported(tmp_path, kind):
    if kind == "real":
        book = _xlsx(tmp_path / "expr.xlsx")
    elif kind == "fake":
        book = tmp_path / "expr.xlsx"
        book.write_bytes(b"\x00\x01binary\x00")
    else:
        book = tmp_path / "expr.xls"
        book.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 64)
    line = _error([str(book)], tmp_path)
    assert "spreadsheet" in line and "export the sheet as TSV or CSV" in line
    line = _error([EX["expression"], "--labels", str(book)], tmp_path)
    assert "export the sheet as TSV or CSV" in line
    line = _error([EX["expression"], "--pathways", str(book)], tmp_path)
    assert "export the sheet as TSV or CSV" in line


@pytest.mark.parametrize(
    "name, content, says",
    [
        ("m.npz", b"PK\x03\x04" + b"\x00" * 40, "is a NumPy array file (.npy/.npz)"),
        ("m.npy", b"\x93NUMPY\x01\x00" + b"\x00" * 40, "is a NumPy array file (.npy/.npz)"),
        ("m.parquet", b"PAR1\x15\x00\x15\x00" + b"\x00" * 40 + b"PAR1", "is a Parquet file"),
        ("m.loom", b"\x89HDF\r\n\x1a\n" + b"\x00" * 40, "is a loom file"),
        ("m.tsv", b"\x89HDF\r\n\x1a\n" + b"\x00" * 40, "is an HDF5 file, not a text table"),
        ("m.h5ad.gz", "gz", "is a gzip-compressed HDF5 file"),
        ("m.zarr", "dir", "is a zarr store"),
    ],
)
def test_a_binary_data_format_is_named(tmp_path, name, content, says):
    """Data in a format kofs does not read was 'a zip archive ...: extract the file from it'
    (.npz), 'a binary file, not a text table' (Parquet, loom, a gzipped .h5ad) or 'not a 10x
    folder' (a zarr store)."""
    import gzip

    path = tmp_path / name
    if content == "dir":
        path.mkdir()
        (path / ".zgroup").write_text("{}")
    elif content == "gz":
        path.write_bytes(gzip.compress(b"\x89HDF\r\n\x1a\n" + b"\x00" * 40))
    else:
        path.write_bytes(content)
    line = _error([str(path)], tmp_path)
    assert line.startswith(f"kofs: error: {path}: {says}"), line


def test_an_h5ad_given_for_a_table_is_not_told_to_be_named_h5ad(tmp_path):
    """--aux cells.h5ad: the message must not ask for the name it has."""
    (tmp_path / "a.h5ad").write_bytes(b"\x89HDF\r\n\x1a\n" + b"\x00" * 40)
    line = _error([EX["expression"], "--aux", str(tmp_path / "a.h5ad")], tmp_path)
    assert "where a text table (CSV/TSV) is read" in line and "named .h5ad" not in line, line


def test_a_10x_folder_given_for_a_table_is_named(tmp_path):
    """kofs.read_expression(a 10x folder) said only 'is a directory, expected a file' (the
    command line's options refuse a folder where a file is read before any reading)."""
    import kofs
    from kofs.errors import InputError

    folder = tmp_path / "filtered_feature_bc_matrix"
    folder.mkdir()
    for name in ("matrix.mtx.gz", "features.tsv.gz", "barcodes.tsv.gz"):
        (folder / name).write_bytes(b"")
    with pytest.raises(InputError, match="is a 10x folder .matrix.mtx, features, barcodes."):
        kofs.read_expression(str(folder))
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="is a directory, expected a file"):
        kofs.read_expression(str(tmp_path / "empty"))


def test_a_gene_list_starting_with_par1_is_text(tmp_path):
    """PAR1 is a gene: a list beginning with it is not a Parquet file."""
    (tmp_path / "g.txt").write_text("PAR1\nTP53\n")
    from kofs.io._table import read_bytes

    assert read_bytes(tmp_path / "g.txt") == b"PAR1\nTP53\n"


def test_knowledge_tables_given_to_the_wrong_option(tmp_path):
    go_tsv = EX["go_annotations"]
    line = _error([EX["expression"], "--pathways", go_tsv], tmp_path)
    assert "looks like a GO annotation table" in line and "--go-annotations" in line
    line = _error([EX["expression"], "--interactions", EX["pathways"]], tmp_path)
    assert "looks like a gene-set (GMT) file" in line and "give it as --pathways" in line
    line = _error(
        [EX["expression"], "--go", EX["go"], "--go-annotations", EX["interactions"]], tmp_path
    )
    assert "looks like an interaction table" in line and "give it as --interactions" in line
    line = _error([EX["expression"], "--go", go_tsv, "--go-annotations", go_tsv], tmp_path)
    assert "not a Gene Ontology OBO file" in line
    assert looks_like(EX["go"]) == "obo" and looks_like(EX["expression"]) == "expression"


def test_a_gene_set_listing_id1_and_id2_keeps_its_own_error(tmp_path):
    # ID1 and ID2 (two human genes) on a GMT line were read as the id1/id2 header of an edge
    # table, and the reader's own message became "give it as --interactions"
    genes = ["ID1", "ID2", "ID3", "SMAD4", "BMP4", "TGFB1"]
    gmt = tmp_path / "sets.gmt"
    gmt.write_text("".join(f"TGFB_SIGNALLING\tna\t{chr(9).join(genes)}\n" for _ in range(2)))
    line = _error([EX["expression"], "--pathways", str(gmt)], tmp_path)
    assert "sets.gmt:2: set id 'TGFB_SIGNALLING' repeats the set of line 1" in line
    assert looks_like(gmt) is None
    edges = tmp_path / "edges.tsv"
    edges.write_text("id1\tid2\tweight\nTP53\tMDM2\t0.9\n")
    assert looks_like(edges) == "interactions"


def test_messages_use_the_command_line_words(tmp_path):
    dup = tmp_path / "dup.tsv"
    dup.write_text("gene\ta\tb\tc\nG1\t1\t2\t3\nG1\t2\t3\t4\nG2\t1\t1\t2\n")
    line = _error([str(dup)], tmp_path)
    assert "--duplicate-genes first, mean or max-variance" in line and "duplicates=" not in line
    gaps = tmp_path / "gaps.tsv"
    gaps.write_text("gene\ta\tb\tc\nG1\t1\t\t3\nG2\t1\t1\t2\n")
    line = _error([str(gaps)], tmp_path)
    assert "--missing-values drop-gene" in line and "missing=" not in line
