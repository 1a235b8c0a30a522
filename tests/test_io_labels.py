"""Tests of kofs.io.labels (read_labels, align_labels) and kofs.io.genes (read_gene_list)."""

from __future__ import annotations

import io
import logging
import sys

import numpy as np
import pytest

from kofs.errors import InputError, KofsError, ParameterError
from kofs.io.expression import read_expression
from kofs.io.genes import read_gene_list
from kofs.io.labels import align_labels, read_labels
from kofs.types import Expression, SampleCategories


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def error(exc_type, func, *args, **kwargs) -> KofsError:
    with pytest.raises(exc_type) as info:
        func(*args, **kwargs)
    assert "\n" not in str(info.value)
    return info.value


def expr(samples, n_genes=3):
    values = np.arange(len(samples) * n_genes, dtype=float).reshape(len(samples), n_genes)
    return Expression(values, [f"G{i}" for i in range(n_genes)], samples, source="m.tsv")


# ---------------------------------------------------------------- read_labels
def test_read_labels_fixture(testdata):
    c = read_labels(testdata / "io" / "labels.tsv")
    assert c.samples == ("S1", "S2", "S3", "S4", "S9")
    assert c.labels == ("case", "case", "control", "control", "case")
    assert c.name == "class"
    b = read_labels(testdata / "io" / "labels.tsv", label_column="BATCH")
    assert b.labels[:2] == ("b1", "b2") and b.name == "batch"


def test_sample_column_found_by_name(tmp_path):
    p = write(tmp_path, "l.csv", "group,Sample_ID\nA,x1\nB,x2\n")
    c = read_labels(p)
    assert c.samples == ("x1", "x2") and c.labels == ("A", "B") and c.name == "group"


def test_unknown_column_did_you_mean(testdata):
    err = error(ParameterError, read_labels, testdata / "io" / "labels.tsv", label_column="clas")
    assert "did you mean 'class'" in str(err)
    err = error(
        ParameterError,
        read_labels,
        testdata / "io" / "labels.tsv",
        sample_column="class",
        label_column="class",
    )
    assert "both" in str(err)


def test_duplicate_samples(tmp_path, caplog):
    caplog.set_level(logging.INFO)
    c = read_labels(write(tmp_path, "l.tsv", "s\tl\na\tX\nb\tY\na\tX\n"))
    assert c.samples == ("a", "b") and "repeated" in caplog.text
    err = error(InputError, read_labels, write(tmp_path, "m.tsv", "s\tl\na\tX\nb\tY\na\tZ\n"))
    assert "'a'" in str(err) and "line 2" in str(err) and "line 4" in str(err)


def test_empty_labels_name_lines(tmp_path):
    p = write(tmp_path, "l.tsv", "s\tl\na\tX\nb\t\nc\tNA\nd\tY\n")
    err = error(InputError, read_labels, p)
    assert "line(s) 3, 4" in str(err)
    assert "--missing-labels drop" in str(err)
    p = write(tmp_path, "e.tsv", "s\tl\n\tX\nb\tY\n")
    assert "empty sample id" in str(error(InputError, read_labels, p))


def test_empty_labels_are_unlabelled_samples_under_drop(tmp_path):
    """A sample sheet's column that some samples lack (ALL's sex: 3 NA of 128) was an error
    that told the user to edit the file, even with --missing-labels drop."""
    p = write(tmp_path, "l.tsv", "s\tl\na\tX\nb\t\nc\tNA\nd\tY\n")
    c = read_labels(p, missing="drop")
    assert c.samples == ("a", "d") and c.labels == ("X", "Y")
    e = Expression(np.arange(8.0).reshape(4, 2), ["g1", "g2"], ["a", "b", "c", "d"])
    aligned, lab = align_labels(e, c, missing="drop")
    assert aligned.samples == ("a", "d") and lab.labels == ("X", "Y")
    none = write(tmp_path, "n.tsv", "s\tl\na\tNA\nb\t\n")
    assert "every label in column 'l' is empty" in str(
        error(InputError, read_labels, none, missing="drop")
    )
    with pytest.raises(ParameterError, match="missing='keep'"):
        read_labels(p, missing="keep")


def test_cli_missing_labels_drop_leaves_na_rows_out(tmp_path):
    from click.testing import CliRunner

    from kofs.cli import main

    rng = np.random.default_rng(0)
    rows = ["gene\t" + "\t".join(f"s{j}" for j in range(8))]
    rows += [f"G{i}\t" + "\t".join(f"{v:.4f}" for v in rng.normal(size=8)) for i in range(30)]
    expr = write(tmp_path, "e.tsv", "\n".join(rows) + "\n")
    lab = write(tmp_path, "l.tsv", "sample\tsex\n" + "".join(
        f"s{j}\t{'NA' if j == 3 else 'FM'[j % 2]}\n" for j in range(8)))  # fmt: skip
    args = ["rank", str(expr), "--labels", str(lab), "--rankers", "fisher", "-o"]
    refused = CliRunner().invoke(main, [*args, str(tmp_path / "a")])
    assert refused.exit_code == 2 and "--missing-labels drop" in refused.stderr
    ok = CliRunner().invoke(main, [*args, str(tmp_path / "b"), "--missing-labels", "drop"])
    assert ok.exit_code == 0, ok.stderr
    assert "dropping 1 samples without a label: s3" in ok.stderr


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "empty"),
        ("sample\tlabel\n", "no data rows"),
        ("sample\nA\nB\n", "two columns"),
        ("s\tl\na\tX\nb\tY\tZ\n", "fields"),
    ],
)
def test_label_file_errors(tmp_path, text, fragment):
    assert fragment in str(error(InputError, read_labels, write(tmp_path, "l.tsv", text)))


@pytest.mark.parametrize("other", ["1.0", "01", "1e0", " +1 "])
def test_labels_that_are_the_same_number_are_refused(tmp_path, other):
    # '1' and '1.0' (a class column written by two programs) were two classes
    path = write(tmp_path, "l.tsv", f"sample\tgroup\nA\t1\nB\t{other}\nC\t2\nD\t2\n")
    err = error(InputError, read_labels, path)
    assert f"labels '1' (line 2) and {other.strip()!r} (line 3) are the same number" in str(err)
    ok = write(tmp_path, "ok.tsv", "sample\tgroup\nA\t1\nB\t1\nC\t10\nD\t1.5\n")
    assert sorted(set(read_labels(ok).labels)) == ["1", "1.5", "10"]


# ---------------------------------------------------------------- align_labels
def test_align_orders_and_ignores_extra(testdata, caplog):
    caplog.set_level(logging.INFO)
    e = read_expression(testdata / "io" / "tiny.tsv")
    reordered = SampleCategories(
        ["control", "case", "case", "control", "case"], ["S4", "S1", "S2", "S3", "S9"], name="class"
    )
    e2, c = align_labels(e, reordered)
    assert e2 is e
    assert c.samples == e.samples and c.labels == ("case", "case", "control", "control")
    assert c.name == "class"
    assert "not in the expression matrix" in caplog.text


def test_align_missing_labels(caplog):
    e = expr(["a", "b", "c", "d"])
    c = SampleCategories(["X", "Y", "X"], ["d", "a", "b"])
    err = error(InputError, align_labels, e, c)
    assert "1 of 4 samples" in str(err) and "c" in str(err) and "--missing-labels" in str(err)
    e2, c2 = align_labels(e, c, missing="drop")
    assert e2.samples == ("a", "b", "d") and c2.labels == ("Y", "X", "X")
    np.testing.assert_array_equal(e2.values, e.values[[0, 1, 3]])
    assert "dropping 1 samples" in caplog.text
    error(ParameterError, align_labels, e, c, missing="ignore")


def test_align_no_match_hints_leading_zeros():
    e = expr(["01005", "01010"])
    c = SampleCategories(["B", "T"], ["1005", "1010"])
    err = error(InputError, align_labels, e, c, missing="drop")
    assert "no sample" in str(err) and "leading zeros" in str(err)


def test_align_some_unmatched_hints_leading_zeros(caplog):
    """A spreadsheet drops the leading zeros of some ids only (01005 -> 1005, 12006 stays):
    some samples matched, and the hint was given only when none did."""
    e = expr(["01005", "01010", "12006", "12007"])
    c = SampleCategories(["B", "T", "B", "T"], ["1005", "1010", "12006", "12007"])
    err = error(InputError, align_labels, e, c)
    assert "2 of 4 samples have no label" in str(err)
    assert "2 would match ignoring case/leading zeros" in str(err)
    align_labels(e, c, missing="drop")
    assert "2 would match ignoring case/leading zeros" in caplog.text


def test_numeric_labels_with_mostly_single_classes_hint_a_measurement(caplog):
    """A sample sheet whose first column after the ids is the age: 'age' became the classes
    (ten classes of one sample of 15) with only the generic single-sample warning."""
    e = expr([f"s{i}" for i in range(8)])
    ages = ["15", "19", "30", "30", "38", "48", "52", "52"]
    align_labels(e, SampleCategories(ages, e.samples, name="age"))
    assert "class(es) with a single sample: 15, 19, 38, 48" in caplog.text
    assert "label column 'age' holds numbers and 4 of its 6 classes have one sample" in caplog.text
    caplog.clear()  # numbered classes of several samples each, and text labels: no such hint
    align_labels(e, SampleCategories(["1", "1", "1", "2", "2", "2", "3", "4"], e.samples))
    align_labels(e, SampleCategories(["a", "b", "c", "c", "d", "e", "f", "f"], e.samples))
    assert "single sample" in caplog.text and "holds numbers" not in caplog.text


def test_align_hints_sample_ids_that_are_file_names():
    """featureCounts names its columns after the BAM files (/data/01005.bam): no sample
    matched the labels' 01005, and the message did not say why."""
    e = expr(["/data/01005.bam", "/data/01010.bam", "/data/12006.bam"])
    c = SampleCategories(["B", "T", "B"], ["01005", "01010", "12006"])
    err = error(InputError, align_labels, e, c)
    assert "3 would match without folders and file extensions" in str(err)
    assert "'/data/01005.bam'" in str(err)
    c2 = SampleCategories(["B", "T"], ["S1.CEL", "S2.CEL"])  # the other way round
    err = error(InputError, align_labels, expr(["S1", "S2"]), c2)
    assert "2 would match without folders and file extensions, such as those of 'S1.CEL'" in (
        str(err)
    )


def test_align_single_class_and_class_of_one(caplog):
    e = expr(["a", "b", "c"])
    err = error(
        InputError, align_labels, e, SampleCategories(["X", "X", "X", "Y"], ["a", "b", "c", "z"])
    )
    assert "one class" in str(err)
    _, c = align_labels(e, SampleCategories(["X", "X", "Y"], ["a", "b", "c"]))
    assert c.n_classes == 2 and "single sample: Y" in caplog.text


def test_align_too_few_samples_after_drop():
    e = expr(["a", "b", "c"])
    err = error(InputError, align_labels, e, SampleCategories(["X"], ["a"]), missing="drop")
    assert "at least 2" in str(err)


def test_real_all_labels(shared_data):
    e = read_expression(shared_data / "ALL" / "ALL_gene_expr.tsv.gz", gene_column="symbol")
    c = read_labels(shared_data / "ALL" / "ALL_samples.tsv", label_column="lineage")
    e2, c2 = align_labels(e, c)
    assert e2.n_samples == 128 and c2.classes == ("B", "T")
    assert c2.labels.count("B") == 95 and c2.labels.count("T") == 33
    _, m = align_labels(
        e, read_labels(shared_data / "ALL" / "ALL_samples.tsv", label_column="mol_biol")
    )
    assert m.labels.count("BCR/ABL") == 37


# ---------------------------------------------------------------- read_gene_list
def test_gene_list_fixture(testdata, caplog):
    caplog.set_level(logging.INFO)
    assert read_gene_list(testdata / "io" / "genes.txt") == ["TP53", "MYC"]
    assert "header" in caplog.text and "repeated" in caplog.text


def test_gene_list_plain(tmp_path):
    p = write(tmp_path, "g.txt", "\n  BRCA1 \nNA\r\nTP53\n# x\nBRCA1\n")
    assert read_gene_list(p) == ["BRCA1", "TP53"]


def test_gene_list_table_columns(tmp_path):
    p = write(tmp_path, "g.csv", "# c\nentrez_id,symbol\n7157,TP53\n4609,MYC\n7157,TP53\n,KRAS\n")
    assert read_gene_list(p) == ["7157", "4609"]
    assert read_gene_list(p, column="Symbol") == ["TP53", "MYC", "KRAS"]
    err = error(ParameterError, read_gene_list, p, column="symbl")
    assert "did you mean 'symbol'" in str(err)


def test_gene_list_semicolon_table(tmp_path):
    # a European spreadsheet's CSV (no tab, no comma): its ids, not 'symbol;score' lines
    p = write(tmp_path, "g.csv", "symbol;score\nTP53;0,5\nMYC;1,5\n")
    assert read_gene_list(p) == ["TP53", "MYC"]


def test_gene_list_column_on_plain_list(tmp_path):
    p = write(tmp_path, "g.txt", "TP53\nMYC\n")
    error(ParameterError, read_gene_list, p, column="symbol")
    q = write(tmp_path, "h.txt", "hgnc\nTP53\n")
    assert read_gene_list(q, column="hgnc") == ["TP53"]


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "empty"),
        ("# only\n\n", "no gene ids"),
        ("gene\n", "no gene ids"),
        ("TP53 MYC\n", "one gene id per line"),
    ],
)
def test_gene_list_errors(tmp_path, text, fragment):
    assert fragment in str(error(InputError, read_gene_list, write(tmp_path, "g.txt", text)))


def test_gene_list_stdin(monkeypatch):
    monkeypatch.setattr(
        sys, "stdin", io.TextIOWrapper(io.BytesIO(b"symbol\tscore\nTP53\t1\nMYC\t2\n"))
    )
    assert read_gene_list("-") == ["TP53", "MYC"]


def test_a_labels_file_without_a_header_line_is_said_to_be(tmp_path):
    """Without a header line the first row becomes the header: its sample lacks a label and
    the label column is named after a class; the error says the file may have no header."""
    from kofs.types import Expression

    p = tmp_path / "labels.tsv"
    p.write_text("".join(f"S{j}\t{'a' if j < 3 else 'b'}\n" for j in range(6)))
    expr = Expression(np.arange(12.0).reshape(6, 2), ("g1", "g2"), tuple(f"S{j}" for j in range(6)))
    with pytest.raises(InputError) as err:
        align_labels(expr, read_labels(p), labels_path=p)
    assert "1 of 6 samples have no label (S0)" in str(err.value)
    assert "may have no header line" in str(err.value)
    with_header = tmp_path / "ok.tsv"
    with_header.write_text("sample\tclass\n" + "".join(f"S{j}\tx\n" for j in range(1, 6)))
    with pytest.raises(InputError) as err:
        align_labels(expr, read_labels(with_header), labels_path=with_header)
    assert "header" not in str(err.value)


def test_a_gene_list_table_without_header_keeps_its_first_gene(tmp_path):
    """A gene and score per line (a .rnk saved as .tsv): its first gene was taken for the
    header and lost."""
    p = write(tmp_path, "two.tsv", "TP53\t1\nMDM2\t2\nEGFR\t3\n")
    assert list(read_gene_list(p)) == ["TP53", "MDM2", "EGFR"]
    assert list(read_gene_list(write(tmp_path, "h.tsv", "gene\tscore\nTP53\t1\n"))) == ["TP53"]
    with pytest.raises(ParameterError, match="the file has no header line"):
        read_gene_list(p, column="gene")


# ---------------------------------------------------------------- GSEA .cls (labels by position)


def test_read_cls_by_names_and_by_numbers(tmp_path):
    named = write(
        tmp_path, "p.cls", "6 2 1\n# Tumor Normal\nTumor Tumor Normal Tumor Normal Normal\n"
    )
    c = read_labels(named)
    assert c.by_position and c.samples == tuple(f"#{i}" for i in range(1, 7))
    assert c.labels == ("Tumor", "Tumor", "Normal", "Tumor", "Normal", "Normal")
    # labels that are not the class names are named by order of first appearance (GSEA's rule)
    numbered = write(tmp_path, "n.CLS", "5 2 1\n#ALL\tAML\n1\t1\t0\t0\t1\n")
    assert read_labels(numbered).labels == ("ALL", "ALL", "AML", "AML", "ALL")


def test_cls_labels_follow_the_matrix_columns():
    e = expr(["a", "b", "c", "d"])
    c = SampleCategories(["X", "Y", "X", "Y"], ["#1", "#2", "#3", "#4"], by_position=True)
    e2, c2 = align_labels(e, c, labels_path="p.cls")
    assert e2 is e and c2.samples == e.samples and c2.labels == ("X", "Y", "X", "Y")
    assert not c2.by_position
    short = SampleCategories(["X", "Y", "X"], ["#1", "#2", "#3"], by_position=True)
    err = error(InputError, align_labels, e, short, labels_path="p.cls")
    assert str(err).startswith("p.cls: has 3 labels, one per sample in the matrix's order")
    assert "has 4 samples" in str(err)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("4 2 1\n# A B\nA B A\n", "p.cls:3: line 3 has 3 labels, line 1 says 4 samples"),
        (
            "4 3 1\n# A B C\nA B A B\n",
            "p.cls:1: line 1 says 3 classes, line 2 names 3 and line 3 uses 2",
        ),
        ("4 2\n# A B\nA B A B\n", "p.cls:1: line 1 is '4 2'"),
        ("4 2 1\nA B\nA B A B\n", "p.cls:2: line 2 does not start with '#'"),
        ("4 2 1\n# A B\n", "p.cls: has 2 non-blank lines"),
        ("#numeric\n#age\n1 2 3\n", "p.cls: is a continuous (#numeric) GSEA .cls"),
        ("4 2 1\n# A a\nA a A a\n", "differ only in case"),
    ],
)
def test_cls_errors(tmp_path, text, fragment):
    assert fragment in str(error(InputError, read_labels, write(tmp_path, "p.cls", text)))


def test_cls_refuses_column_options(tmp_path):
    path = write(tmp_path, "p.cls", "2 2 1\n# A B\nA B\n")
    err = error(ParameterError, read_labels, path, label_column="group")
    assert "label column 'group' given for a GSEA .cls" in str(err)


def test_cls_as_labels_on_the_command_line(tmp_path):
    from click.testing import CliRunner

    from kofs.cli import main

    rng = np.random.default_rng(0)
    rows = ["gene\t" + "\t".join(f"s{j}" for j in range(8))]
    rows += [f"G{i}\t" + "\t".join(f"{v:.4f}" for v in rng.normal(size=8)) for i in range(30)]
    expr_path = write(tmp_path, "e.tsv", "\n".join(rows) + "\n")
    cls = write(tmp_path, "p.cls", "8 2 1\n# F M\nF M F M F M F M\n")
    table = write(tmp_path, "l.tsv", "sample\tsex\n" + "".join(
        f"s{j}\t{'FM'[j % 2]}\n" for j in range(8)))  # fmt: skip
    out = {}
    for name, labels in (("cls", cls), ("table", table)):
        args = ["rank", str(expr_path), "--labels", str(labels), "--rankers", "fisher"]
        r = CliRunner().invoke(main, [*args, "-o", str(tmp_path / name)])
        assert r.exit_code == 0, r.stderr
        out[name] = [ln.split("\t")[:2] for ln in (tmp_path / name / "ranking.tsv").open()]
    assert out["cls"] == out["table"]
    short = write(tmp_path, "short.cls", "7 2 1\n# F M\nF M F M F M F\n")
    args = ["rank", str(expr_path), "--labels", str(short), "--rankers", "fisher"]
    r = CliRunner().invoke(main, [*args, "-o", str(tmp_path / "short")])
    assert r.exit_code == 2 and "short.cls: has 7 labels" in r.stderr and "8 samples" in r.stderr
    assert not (tmp_path / "short").exists()


# ---------------------------------------------------------------- ids mangled by R


@pytest.mark.parametrize(
    ("name", "mangled"),
    [("1005-01", "X1005.01"), ("GSM1", "GSM1"), ("a b/c", "a.b.c"), (".5x", "X.5x"),
     (".x", ".x"), ("_a", "X_a"), ("T-ALL", "T.ALL")],
)  # fmt: skip
def test_r_make_names(name, mangled):
    from kofs.io.labels import r_make_names

    assert r_make_names(name) == mangled


def test_ids_mangled_by_r_are_hinted_not_matched():
    """A matrix read in R with check.names=TRUE names sample 1005-01 X1005.01: the error says
    so in its one line (either file mangled), and nothing is matched silently."""
    ids = ["1005-01", "1010-02", "2001-03", "2004-04"]
    c = SampleCategories(["B", "T", "B", "T"], ids)
    err = error(InputError, align_labels, expr(["X" + i.replace("-", ".") for i in ids]), c)
    assert "4 would match after R's make.names" in str(err)
    assert "'1005-01' as 'X1005.01' in the matrix" in str(err)
    back = SampleCategories(["B", "T", "B", "T"], ["X" + i.replace("-", ".") for i in ids])
    err = error(InputError, align_labels, expr(ids), back)
    assert "wrote matrix sample '1005-01' as 'X1005.01' in the labels" in str(err)
    # some samples match, the rest only once mangled: the missing-label error says it too
    part = expr(["1005-01", "1010-02", "X2001.03", "X2004.04"])
    err = error(InputError, align_labels, part, c)
    assert "2 of 4 samples have no label" in str(err) and "2 would match after R's" in str(err)
    plain = error(
        InputError, align_labels, expr(["a1", "a2"]), SampleCategories(["x", "y"], ["b1", "b2"])
    )
    assert "make.names" not in str(plain)


def test_cls_is_refused_where_labels_are_matched_by_sample_id(tmp_path):
    """`kofs evaluate` re-runs of a `kofs rank` output, and reproduce experiments, match labels
    to sample subsets by id: a .cls (no ids) is refused by name, not mis-paired."""
    from click.testing import CliRunner

    from kofs.cli import main
    from kofs.evaluate.rankfiles import read_rank_output
    from kofs.evaluate.reproduce import _read_data
    from kofs.evaluate.reruns import read_reruns

    rng = np.random.default_rng(0)
    rows = ["gene\t" + "\t".join(f"s{j}" for j in range(8))]
    rows += [f"G{i}\t" + "\t".join(f"{v:.4f}" for v in rng.normal(size=8)) for i in range(30)]
    expr_path = write(tmp_path, "e.tsv", "\n".join(rows) + "\n")
    cls = write(tmp_path, "p.cls", "8 2 1\n# F M\nF M F M F M F M\n")
    out = tmp_path / "out"
    args = ["rank", str(expr_path), "--labels", str(cls), "--rankers", "fisher", "-o", str(out)]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.stderr
    err = error(ParameterError, read_reruns, [read_rank_output(out)], "--protocol honest")
    assert "p.cls are a GSEA .cls" in str(err) and "labels table" in str(err)
    cfg = {"labels": str(cls), "expression": str(expr_path)}
    err = error(ParameterError, _read_data, cfg, lambda p: p, "exp.yaml")
    assert "p.cls is a GSEA .cls" in str(err)


def test_obs_column_given_where_a_labels_file_is_read_says_so(tmp_path, monkeypatch):
    """--labels obs:cell_type given to kofs evaluate (which reads a labels file): 'obs:cell_type:
    file not found; check the path'. A file of that name is still read."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ParameterError, match="obs:cell_type: obs:COLUMN names a column of an "
                       "AnnData .h5ad's obs, which kofs rank and kofs run read"):  # fmt: skip
        read_labels("obs:cell_type")
    (tmp_path / "obs:cell_type").write_text("sample\tlabel\nS1\ta\nS2\tb\n")
    assert read_labels("obs:cell_type").labels == ("a", "b")
