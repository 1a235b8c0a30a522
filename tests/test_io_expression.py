"""Tests of kofs.io._table and kofs.io.expression: formats, orientation, policies, errors."""

from __future__ import annotations

import gzip
import io
import logging
import sys

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from kofs.errors import InputError, KofsError, ParameterError
from kofs.io._table import open_text, read_table, scan_table, sniff_delimiter
from kofs.io.expression import guess_namespace, read_expression

TINY = np.array([[1.5, 0.5, 10], [2, 1e-3, 11], [-3.25, 1, 12], [0, 2, 13.5]])


def write(tmp_path, name, text, *, gz=False):
    p = tmp_path / name
    data = text.encode("utf-8") if isinstance(text, str) else text
    p.write_bytes(gzip.compress(data, mtime=0) if gz else data)
    return p


def error(exc_type, func, *args, **kwargs) -> KofsError:
    with pytest.raises(exc_type) as info:
        func(*args, **kwargs)
    assert "\n" not in str(info.value)
    return info.value


# ---------------------------------------------------------------- the bundled tiny fixtures
@pytest.mark.parametrize("name", ["tiny.tsv", "tiny_bom_crlf.csv", "tiny.tsv.gz"])
def test_tiny_fixture_formats(testdata, name):
    e = read_expression(testdata / "io" / name)
    assert e.genes == ("TP53", "BRCA1", "MYC")
    assert e.samples == ("S1", "S2", "S3", "S4")
    np.testing.assert_array_equal(e.values, TINY)
    assert e.namespace == "symbol"
    assert e.annotations == {
        "entrez_id": ("7157", "672", "4609"),
        "entrez": ("7157", "672", "4609"),
    }
    assert e.source.endswith(name)


def test_gene_column_switches_ids(testdata):
    e = read_expression(testdata / "io" / "tiny.tsv", gene_column="entrez_id")
    assert e.genes == ("7157", "672", "4609")
    assert e.namespace == "entrez"
    assert e.annotations == {"symbol": ("TP53", "BRCA1", "MYC")}


def test_unknown_gene_column_did_you_mean(testdata):
    err = error(ParameterError, read_expression, testdata / "io" / "tiny.tsv", gene_column="symbl")
    assert "did you mean 'symbol'" in str(err)


def test_a_gene_column_of_measurements_is_refused(tmp_path):
    """--gene-column naming a sample column made its values the gene ids and dropped the
    sample columns before it, silently. Integer ids (Entrez's) are gene ids."""
    path = tmp_path / "e.tsv"
    path.write_text("gene\tS0\tS1\tS2\nG1\t1.5\t2\t3.25\nG2\t3\t4\t5.5\n")
    err = error(ParameterError, read_expression, path, gene_column="S2")
    assert "'S2' holds numbers such as 3.25" in str(err) and "e.tsv" in str(err)
    path.write_text("gene\tentrez\tS1\tS2\nG1\t7157\t2\t3.25\nG2\t672\t4\t5.5\n")
    assert read_expression(path, gene_column="entrez").genes == ("7157", "672")


def test_not_gzip_and_truncated_gzip(testdata):
    err = error(InputError, read_expression, testdata / "io" / "not_gzip.tsv.gz")
    assert "not gzip" in str(err) and "not_gzip.tsv.gz" in str(err)
    err = error(InputError, read_expression, testdata / "io" / "truncated.tsv.gz")
    assert "truncated" in str(err)


def test_gzip_members_and_damage(tmp_path):
    """ISA-L decompresses; every member is read; damage gets the gzip module's message."""
    text = b"g\ta\tb\nA\t1\t2\nB\t3\t5\nC\t4\t4\n"
    p = tmp_path / "m.tsv.gz"
    p.write_bytes(gzip.compress(text[:12], mtime=0) + gzip.compress(text[12:], mtime=0))
    np.testing.assert_array_equal(read_expression(p).values, [[1, 3, 4], [2, 5, 4]])
    p.write_bytes(gzip.compress(text, mtime=0) + b"junk")
    assert "corrupt gzip" in str(error(InputError, read_expression, p))
    p.write_bytes(gzip.compress(text, mtime=0)[:-12])
    assert "truncated" in str(error(InputError, read_expression, p))


def test_gzip_detected_by_magic_not_extension(tmp_path):
    p = write(tmp_path, "m.txt", "g\ta\tb\nA\t1\t2\nB\t3\t5\nC\t4\t4\n", gz=True)
    e = read_expression(p)
    np.testing.assert_array_equal(e.values, [[1, 3, 4], [2, 5, 4]])


# ---------------------------------------------------------------- file-level errors
def test_missing_file_and_directory(tmp_path):
    assert "not found" in str(error(InputError, read_expression, tmp_path / "nope.tsv"))
    assert "directory" in str(error(InputError, read_expression, tmp_path))


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (b"", "empty"),
        (b"\n \n", "empty"),
        (b"gene\tS1\tS2\n", "no data rows"),
        (b"\x1f\x8b\x08\x00garbage-not-deflate", "gzip"),
        (bytes(range(256)) * 4, "binary"),
        ("gene\tS1\tS2\nCAFÉ\t1\t2\n".encode("latin-1"), "not UTF-8"),
    ],
)
def test_unreadable_content(tmp_path, content, fragment):
    p = tmp_path / "x.tsv"
    p.write_bytes(content)
    err = error(InputError, read_expression, p)
    assert fragment in str(err) and str(p) in str(err)


def test_random_bytes(tmp_path, rng):
    p = tmp_path / "random.tsv"
    p.write_bytes(rng.integers(0, 256, size=4096, dtype=np.uint8).tobytes())
    error(InputError, read_expression, p)


def test_ragged_row_names_line(tmp_path):
    p = write(tmp_path, "r.tsv", "gene\tS1\tS2\nA\t1\t2\nB\t1\nC\t1\t2\n")
    err = error(InputError, read_expression, p)
    assert err.line == 3 and "2 fields" in str(err) and "has 3" in str(err)
    p = write(tmp_path, "r2.csv", "gene,S1,S2\nA,1,2\n\nB,1,2,3\n")
    assert error(InputError, read_expression, p).line == 4


def test_r_style_header_without_rowname_field(tmp_path):
    p = write(tmp_path, "r.tsv", "S1\tS2\nA\t1\t2\nB\t3\t4\nC\t5\t6\n")
    e = read_expression(p)
    assert e.samples == ("S1", "S2") and e.genes == ("A", "B", "C")


def test_header_short_of_one_name_is_not_read_as_row_names(tmp_path):
    """A header that lost one sample name (``gene  entrez_id  S1 S2`` over rows of three
    values) looked like R's row-names layout: every name moved one column right, the
    ``entrez_id`` column took S1's values and each sample another's, silently."""
    p = write(
        tmp_path,
        "cut.tsv",
        "gene\tentrez_id\tS1\tS2\nTP53\t7157\t1.5\t2.25\t3.5\n"
        "MDM2\t4193\t4.5\t5.25\t6.5\nCDK2\t1017\t7.5\t8.25\t9.5\n",
    )
    err = error(InputError, read_expression, p)
    assert "cut.tsv:1" in str(err) and "'entrez_id'" in str(err) and "1.5" in str(err)
    assert "one name fewer" in str(err)
    # a column named like ids holding measurements is refused without the R layout too
    p = write(tmp_path, "m.tsv", "symbol\tgene\tS1\tS2\nA\t0.5\t1\t2\nB\t1.5\t3\t4\n")
    assert "'gene' is named like gene identifiers" in str(error(InputError, read_expression, p))
    # R's layout itself, and integer ids in an id column, still read
    p = write(tmp_path, "r.tsv", "entrez_id\tS1\tS2\nTP53\t7157\t1.5\t2\nMDM2\t4193\t3\t4\n")
    e = read_expression(p)
    assert e.samples == ("S1", "S2") and e.genes == ("TP53", "MDM2")


def test_gene_ids_made_dates_by_a_spreadsheet_warn(tmp_path, caplog):
    """SEPT1 and MARCH1 exported through a spreadsheet read as '1-Sep' and '1-Mar': ids that
    match no knowledge source, silently."""
    p = write(tmp_path, "x.tsv", "gene\tS1\tS2\nTP53\t1\t2\n1-Sep\t3\t4\nMar-02\t5\t7\n")
    with caplog.at_level(logging.WARNING, logger="kofs"):
        e = read_expression(p)
    assert e.genes == ("TP53", "1-Sep", "Mar-02")
    assert "2 gene id(s) look like dates a spreadsheet made" in caplog.text
    assert "'1-Sep' at line 3" in caplog.text


def test_identifier_column_named_twice_is_refused(tmp_path):
    """``symbol  symbol  S1 ...`` over symbols and Entrez ids: the Entrez ids became the
    symbols of the output and matched knowledge as symbols, silently."""
    p = write(tmp_path, "d.tsv", "symbol\tSymbol\tS1\tS2\nTP53\t7157\t1\t2\nMDM2\t4193\t3\t5\n")
    err = error(InputError, read_expression, p)
    assert "d.tsv:1" in str(err) and "'Symbol' appears twice (columns 1 and 2" in str(err)


def test_non_numeric_cell_names_line_column_text(tmp_path):
    p = write(tmp_path, "n.tsv", "gene\tS1\tS2\nA\t1\t2\nB\t1\t2\nC\t3,5\t2\nD\t1\tfoo\n")
    err = error(InputError, read_expression, p)
    assert err.line == 4 and err.column == "S1" and "'3,5'" in str(err)


@pytest.mark.parametrize("bad", ["inf", "-Inf", "1e301", "-2e300", "1e400"])
def test_infinite_or_huge_values(tmp_path, bad):
    p = write(tmp_path, "i.tsv", f"gene\tS1\tS2\nA\t1\t2\nB\t{bad}\t2\nC\t1\t2\n")
    err = error(InputError, read_expression, p)
    assert err.line == 3 and err.column == "S1"


def test_value_at_limit_accepted(tmp_path):
    p = write(tmp_path, "i.tsv", "gene\tS1\tS2\nA\t1e300\t-1e300\nB\t1\t2\nC\t1\t3\n")
    assert read_expression(p).values[0, 0] == 1e300


def test_too_few_samples(tmp_path):
    p = write(tmp_path, "one.tsv", "gene\tS1\nA\t1\nB\t2\n")
    assert "at least 2" in str(error(InputError, read_expression, p, genes_in="rows"))


def test_only_identifier_columns(tmp_path):
    p = write(tmp_path, "ids.tsv", "gene\tsymbol\nA\tx\nB\ty\n")
    assert "no numeric" in str(error(InputError, read_expression, p))


@pytest.mark.parametrize(
    "kwargs",
    [
        {"genes_in": "diagonal"},
        {"duplicates": "last"},
        {"missing": "zero"},
        {"genes_in": "columns", "gene_column": "gene"},
    ],
)
def test_bad_parameters(tmp_path, kwargs):
    p = write(tmp_path, "p.tsv", "gene\tS1\tS2\nA\t1\t2\nB\t2\t3\nC\t1\t1\n")
    error(ParameterError, read_expression, p, **kwargs)


# ---------------------------------------------------------------- orientation
def test_orientation_longer_axis_and_override(tmp_path):
    genes = [f"G{i}" for i in range(5)]
    rows = ["sid\t" + "\t".join(genes)] + [
        f"X{j}\t" + "\t".join(str(j * 10 + i) for i in range(5)) for j in range(3)
    ]
    p = write(tmp_path, "t.tsv", "\n".join(rows) + "\n")
    e = read_expression(p)
    assert e.genes == tuple(genes) and e.samples == ("X0", "X1", "X2")
    assert e.values[1, 2] == 12
    e2 = read_expression(p, genes_in="rows")
    assert e2.genes == ("X0", "X1", "X2") and e2.values.shape == (5, 3)


def test_orientation_from_labels(tmp_path):
    # 2 genes x 3 samples in rows, ids telling nothing: the longer-axis rule alone would call
    # the samples genes
    p = write(tmp_path, "w.tsv", "id\tQa\tQb\tQc\nA\t1\t2\t3\nB\t4\t5\t7\n")
    assert read_expression(p).genes == ("Qa", "Qb", "Qc")
    e = read_expression(p, sample_ids=["Qc", "Qa", "Qb", "Q9"])
    assert e.genes == ("A", "B") and e.samples == ("Qa", "Qb", "Qc")
    # samples as rows, matched by the labels
    q = write(tmp_path, "t.tsv", "id\tA\tB\tC\tD\nP1\t1\t2\t3\t4\nP2\t4\t5\t7\t8\n")
    e = read_expression(q, sample_ids=["P1", "P2"])
    assert e.samples == ("P1", "P2") and e.genes == ("A", "B", "C", "D")


def test_orientation_from_sample_id_header(tmp_path):
    p = write(tmp_path, "s.tsv", "sample_id\tA\tB\nP1\t1\t2\nP2\t3\t4\nP3\t5\t7\n")
    e = read_expression(p)
    assert e.samples == ("P1", "P2", "P3") and e.genes == ("A", "B")


# ---------------------------------------------------------------- id columns and namespace
def test_annotation_columns_canonical_keys(tmp_path):
    text = (
        "probe_id\tGene Symbol\tENTREZ\tdescription\tS1\tS2\n"
        "1_at\tTP53\t7157\ttumor protein\t1\t2\n2_at\tMYC\t4609\toncogene\t3\t4\n"
        "3_at\tKRAS\t3845\tras\t5\t6\n"
    )
    e = read_expression(write(tmp_path, "a.tsv", text))
    assert e.genes == ("1_at", "2_at", "3_at") and e.namespace == "probe"
    assert e.annotations["symbol"] == ("TP53", "MYC", "KRAS")
    assert e.annotations["entrez"] == ("7157", "4609", "3845")
    assert e.annotations["Gene Symbol"] == e.annotations["symbol"]
    assert "description" in e.annotations


@pytest.mark.parametrize(
    ("ids", "expected"),
    [
        (["1", "7157"], "entrez"),
        (["ENSG00000141510", "ENSG00000136997.3"], "ensembl"),
        (["TP53", "7157"], "symbol"),
    ],
)
def test_guess_namespace(ids, expected):
    assert guess_namespace(ids) == expected


# ---------------------------------------------------------------- policies
DUP = "gene\tS1\tS2\tS3\nA\t1\t2\t3\nB\t0\t0\t1\nA\t3\t10\t5\nC\t1\t1\t2\nB\t0\t0\t0\n"


def test_duplicate_genes_error_names_both_lines(tmp_path):
    err = error(InputError, read_expression, write(tmp_path, "d.tsv", DUP))
    assert "'A'" in str(err) and "line 2 and line 4" in str(err) and "2 repeated" in str(err)


@pytest.mark.parametrize(
    ("policy", "a_row", "b_row"),
    [
        ("first", [1, 2, 3], [0, 0, 1]),
        ("mean", [2, 6, 4], [0, 0, 0.5]),
        ("max-variance", [3, 10, 5], [0, 0, 1]),
    ],
)
def test_duplicate_policies(tmp_path, policy, a_row, b_row):
    e = read_expression(write(tmp_path, "d.tsv", DUP), duplicates=policy)
    assert e.genes == ("A", "B", "C")
    np.testing.assert_allclose(e.values[:, 0], a_row)
    np.testing.assert_allclose(e.values[:, 1], b_row)
    np.testing.assert_allclose(e.values[:, 2], [1, 1, 2])


def test_duplicate_samples_always_error(tmp_path):
    p = write(tmp_path, "d.tsv", "gene\tS1\tS2\tS1\nA\t1\t2\t3\nB\t1\t2\t4\nC\t1\t1\t1\n")
    err = error(InputError, read_expression, p, duplicates="mean")
    assert "'S1'" in str(err) and "column 2" in str(err) and "column 4" in str(err)


def test_duplicate_genes_as_columns(tmp_path):
    p = write(tmp_path, "c.tsv", "sample\tA\tB\tA\tNA\nP1\t1\t2\t3\t9\nP2\t5\t6\t9\t9\n")
    err = error(InputError, read_expression, p)
    assert "column 2 of the header and column 4 of the header" in str(err)
    e = read_expression(p, duplicates="mean")
    assert e.genes == ("A", "B") and e.samples == ("P1", "P2")
    np.testing.assert_allclose(e.values, [[2, 2], [7, 6]])


MISS = "gene\tS1\tS2\tS3\nA\t1\t2\t3\nB\t\t4\tNA\nC\tNaN\tNA\t\nD\t1\tnan\t5\n"


def test_missing_error_names_cell(tmp_path):
    err = error(InputError, read_expression, write(tmp_path, "m.tsv", MISS))
    assert err.line == 3 and err.column == "S1" and "'B'" in str(err) and "6 missing" in str(err)


def test_missing_drop_gene(tmp_path):
    e = read_expression(write(tmp_path, "m.tsv", MISS), missing="drop-gene")
    assert e.genes == ("A",)
    assert e.values.shape == (3, 1)


def test_missing_impute_mean(tmp_path, caplog):
    e = read_expression(write(tmp_path, "m.tsv", MISS), missing="impute-mean")
    assert e.genes == ("A", "B", "D")  # C is missing everywhere: dropped
    np.testing.assert_allclose(e.values[:, 1], [4, 4, 4])
    np.testing.assert_allclose(e.values[:, 2], [1, 3, 5])
    assert "only missing" in caplog.text


def test_rows_without_gene_id_dropped(tmp_path, caplog):
    p = write(tmp_path, "g.tsv", "gene\tS1\tS2\nA\t1\t2\nNA\t3\t4\n\t5\t6\nB\t7\t9\nC\t1\t1\n")
    e = read_expression(p)
    assert e.genes == ("A", "B", "C")
    assert "without an id" in caplog.text


def test_missing_error_line_after_dropping_unnamed_rows(tmp_path):
    p = write(tmp_path, "g.tsv", "gene\tS1\tS2\n\t1\t2\nA\t1\t2\nB\t1\tNA\nC\t1\t1\n")
    assert error(InputError, read_expression, p).line == 4


# ---------------------------------------------------------------- stdin and _table helpers
def test_stdin(monkeypatch, testdata):
    data = (testdata / "io" / "tiny.tsv.gz").read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    e = read_expression("-")
    np.testing.assert_array_equal(e.values, TINY)
    assert e.source == "<stdin>"


def test_stdin_empty(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"")))
    assert "<stdin>" in str(error(InputError, read_expression, "-"))


def test_sniff_delimiter():
    assert sniff_delimiter("a\tb,c") == "\t"
    assert sniff_delimiter("a,b,c\td") == ","
    assert sniff_delimiter("gene", "x.csv.gz") == ","
    assert sniff_delimiter("gene", "x.txt") == "\t"


def test_read_table_strings_lines_and_duplicate_columns(tmp_path):
    p = write(tmp_path, "t.csv", '# note\nid,name\n\n1,"a, b"\n2,\n')
    df = read_table(p, comment="#")
    assert df.columns.tolist() == ["id", "name"]
    assert df["name"].tolist() == ["a, b", ""]
    assert df.attrs["lines"] == (4, 5)
    q = write(tmp_path, "d.tsv", "a\tb\ta\n1\t2\t3\n")
    err = error(InputError, read_table, q)
    assert "'a'" in str(err) and "columns 1 and 3" in str(err)
    assert scan_table(q, unique_columns=False).header == ("a", "b", "a")


def test_read_table_without_header(tmp_path):
    p = write(tmp_path, "h.tsv", "# c\nGO:1\tA\n\nGO:2\tB\n")
    df = read_table(p, comment="#", header=False)
    assert df.columns.tolist() == ["1", "2"] and df["2"].tolist() == ["A", "B"]
    assert df.attrs["lines"] == (2, 4)
    q = write(tmp_path, "r.tsv", "GO:1\tA\nGO:2\tB\tC\n")
    assert error(InputError, read_table, q, header=False).line == 2


def test_open_text_normalises(tmp_path):
    p = write(tmp_path, "x.txt", b"\xef\xbb\xbfa\r\nb\rc\n", gz=True)
    with open_text(p) as fh:
        assert fh.read() == "a\nb\nc\n"


# ---------------------------------------------------------------- round trip (property)
@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(
    values=arrays(
        np.float64,
        st.tuples(st.integers(2, 6), st.integers(1, 7)),
        elements=st.floats(-1e300, 1e300, allow_nan=False, allow_subnormal=True),
    ),
    sep=st.sampled_from(["\t", ","]),
    gz=st.booleans(),
)
def test_round_trip(tmp_path, values, sep, gz):
    n_genes, n_samples = values.shape[0], values.shape[1] + 1
    X = np.column_stack([values, np.arange(n_genes, dtype=float)])  # >= 2 samples
    samples = [f"S{j}" for j in range(n_samples)]
    lines = [sep.join(["gene", *samples])]
    lines += [sep.join([f"G{i}", *(repr(float(v)) for v in X[i])]) for i in range(n_genes)]
    p = write(
        tmp_path,
        "rt" + (".tsv" if sep == "\t" else ".csv") + (".gz" if gz else ""),
        "\n".join(lines) + "\n",
        gz=gz,
    )
    e = read_expression(p, genes_in="rows")
    assert e.genes == tuple(f"G{i}" for i in range(n_genes)) and e.samples == tuple(samples)
    np.testing.assert_array_equal(e.values, X.T)


# ---------------------------------------------------------------- real data
def test_real_all_gene_matrix(shared_data):
    path = shared_data / "ALL" / "ALL_gene_expr.tsv.gz"
    e = read_expression(path, gene_column="symbol")
    assert e.values.shape == (128, 8562)
    assert e.namespace == "symbol"
    assert set(e.annotations) == {"entrez_id", "probe_id", "entrez"}
    oracle = pd.read_csv(path, sep="\t", dtype={"entrez_id": str})
    assert e.genes == tuple(oracle["symbol"])
    assert e.samples == tuple(oracle.columns[3:])
    assert e.annotations["entrez"] == tuple(oracle["entrez_id"])
    np.testing.assert_array_equal(e.values, oracle.iloc[:, 3:].to_numpy().T)
    by_entrez = read_expression(path)
    assert by_entrez.namespace == "entrez" and by_entrez.annotations["symbol"] == e.genes


def test_a_header_of_numbers_is_said_to_look_like_data(tmp_path, caplog):
    """A file without a header line: its first row of values becomes the ids; a warning says
    so (names such as doses, "0.5", are possible, so it is not an error), and ids that are
    whole numbers (sample ids such as 01005) are not warned about."""
    rows = "".join(
        f"G{i}\t{i + 0.5:.3f}\t{2 * i + 1.25:.3f}\t{i % 3 + 0.1:.3f}\n" for i in range(8)
    )
    read_expression(write(tmp_path, "nohead.tsv", rows))
    assert "every column name of the header is a number" in caplog.text
    caplog.clear()
    body = "".join(f"G{i}\t{i}\t{i + 1}\t{i % 2}\n" for i in range(8))
    read_expression(write(tmp_path, "ids.tsv", "gene\t01005\t01010\t02020\n" + body))
    assert "header is a number" not in caplog.text


@pytest.mark.parametrize("kind", ["bzip2", "xz", "zip"])
def test_a_file_compressed_otherwise_than_gzip_is_named_by_its_compression(tmp_path, kind):
    import bz2
    import lzma
    import zipfile

    text = b"gene\tS1\tS2\nA\t1\t2\nB\t3\t4\n"
    p = tmp_path / f"m.{kind}"
    if kind == "bzip2":
        p.write_bytes(bz2.compress(text))
    elif kind == "xz":
        p.write_bytes(lzma.compress(text))
    else:
        with zipfile.ZipFile(p, "w") as z:
            z.writestr("m.tsv", text)
    with pytest.raises(InputError) as err:
        read_expression(p)
    assert ("zip archive" if kind == "zip" else f"{kind}-compressed") in str(err.value)
    assert "gzip" in str(err.value)
    # named .gz it was "not gzip-compressed ...: drop the .gz suffix", which still did not read
    gz = p.rename(tmp_path / "m.tsv.gz")
    with pytest.raises(
        InputError, match="is named .gz but is (a zip archive|[a-z0-9]+-compressed)"
    ):
        read_expression(gz)
