"""Classes of inputs that once gave a silent wrong result (issue 15), end to end through the CLI.

Each case ends either in exit 2 with one ``kofs: error:`` line naming the file, or in exit 0
with the correct result (and at most one warning line saying how to override).
"""

from __future__ import annotations

import gzip
import json
import struct
import zlib

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from kofs.cli import main
from kofs.io.expression import read_expression
from kofs.resources import estimate_expression_file

N, M = 10, 12
SAMPLES = [f"S{i}" for i in range(N)]
GENES = [f"GENE{j}" for j in range(M)]


def _said(r) -> str:
    """stderr without the line every writing command ends with (where the files went)."""
    return "".join(ln for ln in r.stderr.splitlines(True) if not ln.startswith("kofs: wrote "))


def _values(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(M, N)).round(3) + 5
    X[:3, : N // 2] += 3
    return X


def _repr(v):
    return repr(float(v))


def _table(X=None, *, sep="\t", head="gene", fmt=_repr, end="", head_end=""):
    X = _values() if X is None else X
    lines = [sep.join([head, *SAMPLES]) + head_end]
    for g, row in zip(GENES, X, strict=True):
        lines.append(sep.join([g, *(fmt(v) for v in row)]) + end)
    return "\n".join(lines) + "\n"


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def one_error(r, path, *fragments):
    assert r.exit_code == 2, (r.exit_code, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kofs: error: "), r.stderr
    assert str(path) in lines[0]
    for f in fragments:
        assert f in lines[0], lines[0]
    return lines[0]


def ranking(out):
    return pd.read_csv(out / "ranking.tsv", sep="\t").set_index("gene")


def rank_ok(path, out, *extra):
    r = invoke("rank", path, "--rankers", "variance", "--top", "0", "-o", out, *extra)
    assert r.exit_code == 0, r.stderr
    return r


# --- 1. trailing delimiters ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("end", "head_end", "sep"),
    [
        ("\t", "", "\t"),
        ("\t", "\t", "\t"),
        ("", "\t", "\t"),
        (",", "", ","),
        ("\t ", "", "\t"),
        ("\t\t", "", "\t"),
        ("", "\t\t", "\t"),
        (",,", ",", ","),
        (';""', "", ";"),
    ],
)
def test_trailing_delimiter_never_shifts_samples(tmp_path, end, head_end, sep):
    p = tmp_path / ("x.csv" if sep == "," else "x.tsv")
    p.write_text(_table(sep=sep, end=end, head_end=head_end))
    e = read_expression(p)
    assert e.samples == tuple(SAMPLES) and e.genes == tuple(GENES)
    np.testing.assert_array_equal(e.values, _values().T)


def test_trailing_delimiter_on_r_layout(tmp_path):
    text = _table(end="\t").splitlines()
    text[0] = text[0].split("\t", 1)[1]  # R's write.table: no header field for the row names
    p = tmp_path / "x.tsv"
    p.write_text("\n".join(text) + "\n")
    e = read_expression(p)
    assert e.samples == tuple(SAMPLES) and e.genes == tuple(GENES)
    np.testing.assert_array_equal(e.values, _values().T)


def test_last_sample_missing_is_not_a_trailing_delimiter(tmp_path):
    text = _table().splitlines()
    text[3] = text[3].rsplit("\t", 1)[0] + "\t"  # the last sample's value is empty
    p = tmp_path / "x.tsv"
    p.write_text("\n".join(text) + "\n")
    e = read_expression(p, missing="impute-mean")
    assert e.samples == tuple(SAMPLES)
    np.testing.assert_array_equal(e.values[:-1, [0, 1, 3]], _values().T[:-1, [0, 1, 3]])


def test_trailing_delimiter_on_some_rows(tmp_path):
    text = _table().splitlines()
    text[2] += "\t"
    p = tmp_path / "x.tsv"
    p.write_text("\n".join(text) + "\n")
    np.testing.assert_array_equal(read_expression(p).values, _values().T)


def test_empty_sample_column_is_refused_whatever_the_policy(tmp_path):
    X = _values().astype(object)
    X[:, 0] = ""
    p = tmp_path / "x.tsv"
    p.write_text(_table(X, fmt=lambda v: v if v == "" else _repr(v)))
    for policy in ("error", "impute-mean", "drop-gene"):
        r = invoke("rank", p, "--missing-values", policy, "-o", tmp_path / "o")
        msg = one_error(r, p, "'S0'", "no value for any gene")
        assert "impute-mean" not in msg


def test_labels_trailing_tab(tmp_path):
    from kofs.io.labels import read_labels

    p = tmp_path / "l.tsv"
    p.write_text("sample\tgroup\nS0\ta\t\nS1\tb\t\n")
    c = read_labels(p)
    assert c.samples == ("S0", "S1") and c.labels == ("a", "b")


# --- 2. nothing to rank ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "fragment"),
    [
        ("constant", "constant"),
        ("zero", "(all values 0)"),
        ("underflow", "underflow"),
        ("noise", "constant"),
    ],
)
def test_matrix_with_nothing_to_rank(tmp_path, kind, fragment):
    X = {
        "constant": np.full((M, N), 7.25),
        "zero": np.zeros((M, N)),
        "underflow": _values() * 1e-200,
        "noise": np.full((M, N), 1.0) + np.tile([0.0, 2.2e-16], (M, N // 2)),
    }[kind]
    p = tmp_path / "x.tsv"
    p.write_text(_table(X))
    one_error(invoke("rank", p, "-o", tmp_path / "o"), p, fragment)
    assert not (tmp_path / "o").exists()


def test_scaled_data_ranks_like_the_original(tmp_path):
    a, b = tmp_path / "a.tsv", tmp_path / "b.tsv"
    a.write_text(_table())
    b.write_text(_table(_values() * 1e-50))
    rank_ok(a, tmp_path / "oa")
    rank_ok(b, tmp_path / "ob")
    ra, rb = ranking(tmp_path / "oa"), ranking(tmp_path / "ob")
    assert ra["rank"].to_dict() == rb["rank"].to_dict()


def test_a_few_constant_genes_go_last(tmp_path):
    X = _values()
    X[4] = 3.0
    X[5] = 1.0 + np.tile([0.0, 1e-15], N // 2)  # float noise around a constant
    p = tmp_path / "x.tsv"
    p.write_text(_table(X))
    rank_ok(p, tmp_path / "o")
    r = ranking(tmp_path / "o")
    assert r.loc["GENE4", "rank"] == r.loc["GENE5", "rank"] == M - 0.5


# --- 3. orientation --------------------------------------------------------------------------


def _panel(head="id", genes=("TP53", "MYC", "KRAS", "EGFR", "CD19"), n=30):
    rng = np.random.default_rng(3)
    samples = [f"S{i + 1}" for i in range(n)]
    rows = [f"{head}\t" + "\t".join(samples)]
    rows += [g + "\t" + "\t".join(f"{v:.3f}" for v in rng.normal(size=n)) for g in genes]
    return "\n".join(rows) + "\n"


def test_small_panel_with_id_column_is_read_with_genes_in_rows(tmp_path):
    p = tmp_path / "panel.tsv"
    p.write_text(_panel())
    r = rank_ok(p, tmp_path / "o")
    assert _said(r) == ""
    assert set(ranking(tmp_path / "o").index) == {"TP53", "MYC", "KRAS", "EGFR", "CD19"}


def test_small_panel_from_labels(tmp_path):
    p = tmp_path / "panel.tsv"
    p.write_text(_panel(genes=("A1", "B2", "C3", "D4", "E5")))
    lab = tmp_path / "l.tsv"
    lab.write_text("sample\tg\n" + "".join(f"S{i + 1}\t{'ab'[i % 2]}\n" for i in range(30)))
    rank_ok(p, tmp_path / "o", "--labels", lab)
    assert len(ranking(tmp_path / "o")) == 5


def test_ambiguous_orientation_warns_once_naming_the_option(tmp_path):
    rng = np.random.default_rng(0)
    cols = [f"Qa{k}" for k in range(8)]
    rows = ["id\t" + "\t".join(cols)]
    rows += [f"Zq{j}\t" + "\t".join(f"{v:.3f}" for v in rng.normal(size=8)) for j in range(5)]
    p = tmp_path / "amb.tsv"
    p.write_text("\n".join(rows) + "\n")
    r = rank_ok(p, tmp_path / "o")
    lines = _said(r).strip().splitlines()
    assert len(lines) == 1 and "WARNING" in lines[0] and "--genes-in rows" in lines[0]
    assert len(ranking(tmp_path / "o")) == 8  # the guess: genes are the longer axis
    r = rank_ok(p, tmp_path / "o2", "--genes-in", "rows")
    assert _said(r) == "" and len(ranking(tmp_path / "o2")) == 5


# --- 4. a cut ranking.tsv --------------------------------------------------------------------


@pytest.fixture
def run_out(tmp_path):
    p = tmp_path / "x.tsv"
    p.write_text(_table())
    lab = tmp_path / "l.tsv"
    lab.write_text(
        "sample\tg\n" + "".join(f"{s}\t{'ab'[i < N // 2]}\n" for i, s in enumerate(SAMPLES))
    )
    out = tmp_path / "run"
    r = invoke("rank", p, "--labels", lab, "--rankers", "variance,fisher,laplacian", "-o", out)
    assert r.exit_code == 0, r.stderr
    return p, lab, out


@pytest.mark.parametrize(
    "cut", ["mid-line", "fewer-fields", "whole-lines", "whole-lines-alone", "header-only"]
)
def test_evaluate_refuses_a_cut_ranking(tmp_path, run_out, cut):
    p, lab, out = run_out
    text = (out / "ranking.tsv").read_text()
    lines = text.splitlines(keepends=True)
    if cut == "mid-line":
        bad = "".join(lines[:6]) + lines[6][:5]
    elif cut == "fewer-fields":
        bad = "".join(lines[:6]) + lines[6].split("\t")[0] + "\n"
    elif cut == "header-only":
        bad = lines[0]
    else:
        bad = "".join(lines[: len(lines) // 2])
    target = out / "ranking.tsv"
    if cut == "whole-lines-alone":  # no manifest beside it: the ranks give it away
        target = tmp_path / "alone.tsv"
    target.write_text(bad)
    r = invoke("evaluate", target, p, "--labels", lab, "--top", "3", "-o", tmp_path / "ev")
    one_error(r, target, "no genes" if cut == "header-only" else "cut")


def test_manifest_gene_count_mismatch(tmp_path, run_out):
    p, lab, out = run_out
    m = json.loads((out / "manifest.json").read_text())
    m["matrix"]["genes"] += 1
    (out / "manifest.json").write_text(json.dumps(m))
    r = invoke("evaluate", out, p, "--labels", lab, "--top", "3", "-o", tmp_path / "ev")
    one_error(r, "ranking.tsv", "manifest.json records")


# --- 5. labels differing only by case/space --------------------------------------------------


@pytest.mark.parametrize("other", ["tumor", "Tumor ", "TUMOR", "Tu mor"])
def test_labels_differing_only_in_case_or_space(tmp_path, other):
    p = tmp_path / "x.tsv"
    p.write_text(_table())
    lab = tmp_path / "l.tsv"
    lab.write_text(
        "sample\tg\n"
        + "".join(
            f'{s}\t"{"Tumor" if i < 3 else other if i < 6 else "Normal"}"\n'
            for i, s in enumerate(SAMPLES)
        )
    )
    r = invoke("rank", p, "--labels", lab, "-o", tmp_path / "o")
    if other.strip() == "Tumor":
        assert r.exit_code == 0, r.stderr  # surrounding spaces are stripped: same label
    else:
        one_error(r, lab, "'Tumor'", repr(other), "differ only in case or spaces")


# --- 6. formats ------------------------------------------------------------------------------


def _reference(tmp_path):
    p = tmp_path / "plain.tsv"
    p.write_text(_table())
    return read_expression(p)


def _same(e, ref, scale=1.0):
    assert e.genes == ref.genes and e.samples == ref.samples
    np.testing.assert_allclose(e.values, ref.values * scale, rtol=1e-12)


def test_gct_12_and_13(tmp_path):
    ref = _reference(tmp_path)
    X = _values()
    body = "".join(
        "\t".join([g, "na", *map(repr, map(float, r))]) + "\n"
        for g, r in zip(GENES, X, strict=True)
    )
    g12 = tmp_path / "x.gct"
    g12.write_text(f"#1.2\n{M}\t{N}\nName\tDescription\t" + "\t".join(SAMPLES) + "\n" + body)
    _same(read_expression(g12), ref)
    body13 = "".join(
        "\t".join([g, str(7000 + k), *map(repr, map(float, r))]) + "\n"
        for k, (g, r) in enumerate(zip(GENES, X, strict=True))
    )  # a numeric row-metadata field (an Entrez id) is not a sample
    g13 = tmp_path / "y.gct"
    g13.write_text(
        f"#1.3\n{M}\t{N}\t1\t2\nid\tpr_gene_id\t" + "\t".join(SAMPLES) + "\n"
        "batch\tna\t" + "\t".join("b" * N) + "\ndose\tna\t" + "\t".join("1" * N) + "\n" + body13
    )
    _same(read_expression(g13), ref)
    rank_ok(g13, tmp_path / "o")
    cut = tmp_path / "cut.gct"
    cut.write_text("\n".join(g12.read_text().splitlines()[:-2]) + "\n")
    one_error(invoke("rank", cut, "-o", tmp_path / "o2"), cut, "declares 12 genes")


def test_geo_series_matrix(tmp_path):
    ref = _reference(tmp_path)
    X = _values()
    q = lambda s: f'"{s}"'  # noqa: E731
    text = (
        '!Series_title\t"A study"\n!Series_geo_accession\t"GSE1"\n'
        + "!Sample_title\t"
        + "\t".join(map(q, SAMPLES))
        + "\n"
        + "!Sample_characteristics_ch1\t"
        + "\t".join(q("tissue: x") for _ in SAMPLES)
        + "\n"
        + "!series_matrix_table_begin\n"
        + '"ID_REF"\t'
        + "\t".join(map(q, SAMPLES))
        + "\n"
        + "".join(
            "\t".join([q(g), *map(repr, map(float, r))]) + "\n"
            for g, r in zip(GENES, X, strict=True)
        )
        + "!series_matrix_table_end\n"
    )
    p = tmp_path / "GSE1_series_matrix.txt.gz"
    p.write_bytes(gzip.compress(text.encode()))
    _same(read_expression(p), ref)
    rank_ok(p, tmp_path / "o")
    cut = tmp_path / "cut_series_matrix.txt"
    cut.write_text(text.replace("!series_matrix_table_end\n", ""))
    one_error(invoke("rank", cut, "-o", tmp_path / "o2"), cut, "series_matrix_table_end")


def test_featurecounts_comment_line_above_the_header(tmp_path):
    """featureCounts writes '# Program:featureCounts ...; Command:...' above its header: the
    comment was read as a one-field header ("has 1 fields but the header has 2; check the
    delimiter (semicolon)"). A '#' header as wide as the table stays the header."""
    ref = _reference(tmp_path)
    X = _values()
    p = tmp_path / "counts.txt"
    p.write_text(
        '# Program:featureCounts v2.0.3; Command:"featureCounts" "-o" "counts.txt"\n'
        + "Geneid\tChr\tStart\tEnd\tStrand\tLength\t"
        + "\t".join(SAMPLES)
        + "\n"
        + "".join(
            "\t".join([g, "chr1;chr1", "10;20", "15;30", "+;+", "17", *map(repr, map(float, r))])
            + "\n"
            for g, r in zip(GENES, X, strict=True)
        )
    )
    _same(read_expression(p), ref)
    rank_ok(p, tmp_path / "o")
    hashed = tmp_path / "hashed.tsv"
    hashed.write_text("#" + _table())
    assert read_expression(hashed).samples == ref.samples


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
def test_utf16_is_decoded(tmp_path, encoding):
    ref = _reference(tmp_path)
    p = tmp_path / "u.txt"
    p.write_bytes(_table().encode(encoding))
    _same(read_expression(p), ref)


@pytest.mark.parametrize("order", ["le", "be"])
def test_binary_with_every_other_byte_nul_is_not_utf16_text(tmp_path, order):
    """Without a byte-order mark, bytes whose every other one is NUL are UTF-16 only when they
    decode to text: a binary file (here 16-bit integers below 256) is refused as binary."""
    rng = np.random.default_rng(0)
    data = rng.integers(1, 256, size=3000).astype("<u2" if order == "le" else ">u2").tobytes()
    p = tmp_path / "b.tsv"
    p.write_bytes(data)
    one_error(invoke("rank", p, "-o", tmp_path / "o"), p, "is a binary file, not a text table")
    text = tmp_path / "t.tsv"  # the same layout holding text is UTF-16, as before
    text.write_bytes(_table().encode(f"utf-16-{order}"))
    rank_ok(text, tmp_path / "t")


def _comma(v):
    return repr(float(v)).replace(".", ",")


@pytest.mark.parametrize(
    ("sep", "fmt", "fragment"),
    [
        ("\t", _comma, "--decimal ,"),
        (";", _comma, "--decimal ,"),
        ("\t", lambda v: f"{float(v) * 1000:,.2f}", "thousands separators"),
        ("\t", lambda v: f"{float(v):.1f}%", "percentages"),
    ],
)
def test_number_formats_are_named(tmp_path, sep, fmt, fragment):
    p = tmp_path / "n.txt"
    p.write_text(_table(sep=sep, fmt=fmt))
    msg = one_error(invoke("rank", p, "-o", tmp_path / "o"), p, fragment)
    assert "no numeric columns" not in msg


@pytest.mark.parametrize("sep", ["\t", ";"])
def test_decimal_comma_is_read_with_the_option(tmp_path, sep):
    ref = _reference(tmp_path)
    p = tmp_path / "n.txt"
    p.write_text(_table(sep=sep, fmt=_comma))
    _same(read_expression(p, decimal=","), ref)
    rank_ok(p, tmp_path / "o", "--decimal", ",")
    q = tmp_path / "dots.tsv"
    q.write_text(_table())
    one_error(invoke("rank", q, "--decimal", ",", "-o", tmp_path / "o2"), q, "decimal point")


def _bgzf(data: bytes, block=1000) -> bytes:
    """A BGZF (bgzip) file: one gzip member per block with the BC extra field, then EOF."""
    out = []
    for i in range(0, len(data) + 1, block):
        chunk = data[i : i + block]
        c = zlib.compressobj(6, zlib.DEFLATED, -15)
        cdata = c.compress(chunk) + c.flush()
        bsize = 18 + len(cdata) + 8
        head = b"\x1f\x8b\x08\x04" + b"\x00" * 4 + b"\x00\xff" + struct.pack("<H", 6)
        head += b"BC" + struct.pack("<HH", 2, bsize - 1)
        out.append(head + cdata + struct.pack("<II", zlib.crc32(chunk), len(chunk)))
    return b"".join(out)


def test_bgzf_and_multi_member_gzip_estimates(tmp_path):
    text = _table().encode() * 40
    b = tmp_path / "x.tsv.bgz"
    b.write_bytes(_bgzf(text))
    assert gzip.decompress(b.read_bytes()) == text
    assert estimate_expression_file(b) == 4 * len(text)
    cat = tmp_path / "cat.tsv.gz"
    cat.write_bytes(gzip.compress(text[:500]) + gzip.compress(text[500:]))
    assert estimate_expression_file(cat) == 4 * len(text)
    one = tmp_path / "one.tsv.gz"
    one.write_bytes(gzip.compress(text))
    assert estimate_expression_file(one) == 4 * len(text)
    small = tmp_path / "small.tsv.bgz"
    small.write_bytes(_bgzf(_table().encode()))
    rank_ok(small, tmp_path / "o", "--max-memory", "1M")


@pytest.mark.parametrize(
    ("gene_ids", "sample_ids"),
    [
        (["TP53", "MYC", "KRAS", "EGFR", "CD19"], [f"S{i}" for i in range(1, 31)]),
        ([f"ENSG0000014151{i}" for i in range(5)], [f"sample_{i}" for i in range(30)]),
        (["7157", "4609", "3845", "1956", "930"], [f"GSM10{i:02d}" for i in range(30)]),
        ([f"20{i}_at" for i in range(5)], [f"TCGA-AB-{i:04d}" for i in range(30)]),
        ([f"gene{i}" for i in range(5)], [f"P{i:02d}" for i in range(30)]),
        ([f"G{i}" for i in range(5)], [f"Patient_{i}" for i in range(30)]),
    ],
)
@pytest.mark.parametrize("layout", ["rows", "columns"])
def test_orientation_from_the_ids(tmp_path, gene_ids, sample_ids, layout):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(len(gene_ids), len(sample_ids)))
    if layout == "rows":
        rows = ["id\t" + "\t".join(sample_ids)]
        rows += [
            g + "\t" + "\t".join(f"{v:.4f}" for v in r) for g, r in zip(gene_ids, X, strict=True)
        ]
    else:
        rows = ["id\t" + "\t".join(gene_ids)]
        rows += [
            s + "\t" + "\t".join(f"{v:.4f}" for v in r)
            for s, r in zip(sample_ids, X.T, strict=True)
        ]
    p = tmp_path / "p.tsv"
    p.write_text("\n".join(rows) + "\n")
    r = rank_ok(p, tmp_path / "o")
    assert _said(r) == ""
    assert set(ranking(tmp_path / "o").index.astype(str)) == set(gene_ids)


def test_decimal_comma_in_quoted_csv(tmp_path):
    ref = _reference(tmp_path)
    p = tmp_path / "q.csv"
    p.write_text(_table(sep=",", fmt=lambda v: '"' + _comma(v) + '"'))
    _same(read_expression(p, decimal=","), ref)
    q = tmp_path / "plain.csv"
    q.write_text(_table(sep=","))
    one_error(invoke("rank", q, "--decimal", ",", "-o", tmp_path / "o"), q, "comma-delimited")
