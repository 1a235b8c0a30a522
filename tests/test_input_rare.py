"""Rarer bad inputs (an audit of unusual files and options): each ends in exit 2 with one
``kofs: error:`` line naming the file and what is wrong, nothing written, or, through the
Python API, in kofs's own error class; never a traceback or a silent wrong result."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from kofs.cli import main
from kofs.errors import KofsError

N_GENES, N_SAMPLES = 30, 10


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def one_error(r, path, *fragments) -> str:
    assert r.exit_code == 2, (r.exit_code, r.stderr, r.exception)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kofs: error: "), r.stderr
    assert "Traceback" not in r.stderr
    assert str(path) in lines[0], lines[0]
    for f in fragments:
        assert f in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def base(tmp_path) -> dict[str, Path]:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(N_GENES, N_SAMPLES))
    expr = tmp_path / "expr.tsv"
    expr.write_text(
        "gene\t"
        + "\t".join(f"S{j}" for j in range(N_SAMPLES))
        + "\n"
        + "".join(f"G{i}\t" + "\t".join(f"{v:.4f}" for v in X[i]) + "\n" for i in range(N_GENES))
    )
    labels = tmp_path / "labels.tsv"
    labels.write_text(
        "sample\tclass\n" + "".join(f"S{j}\t{'ab'[j % 2]}\n" for j in range(N_SAMPLES))
    )
    return {"expr": expr, "labels": labels, "dir": tmp_path}


# --- kofs sources converts every source as kofs rank does -----------------------------------


def test_sources_refuses_a_network_matching_no_gene_as_rank_does(base):
    """A network no list uses (no starting relevance for PPI-PROP) still explains genes in a
    run, and `kofs rank` refuses one whose ids match no gene; `kofs sources` (the dry run)
    showed no coverage line and exit 0."""
    edges = base["dir"] / "edges.tsv"
    edges.write_text("source\ttarget\n" + "".join(f"X{i}\tX{i + 1}\n" for i in range(10)))
    for command in ("sources", "rank"):
        r = invoke(command, base["expr"], "--interactions", edges, "-o", base["dir"] / "out")
        if command == "sources":
            r = invoke(command, base["expr"], "--interactions", edges)
        one_error(r, edges, "none of its", "matches the expression matrix's genes")
    assert not (base["dir"] / "out").exists()
    good = base["dir"] / "good.tsv"
    good.write_text("source\ttarget\n" + "".join(f"G{i}\tG{i + 1}\n" for i in range(10)))
    r = invoke("sources", base["expr"], "--interactions", good)
    assert r.exit_code == 0, r.stderr
    assert "interactions good.tsv: 11 genes, 11 matched" in r.stdout


# --- Gene Ontology OBO ----------------------------------------------------------------------


def _obo(extra: str = "") -> str:
    text = "format-version: 1.2\n\n[Term]\nid: GO:0008150\nname: biological_process\n"
    text += "namespace: biological_process\n"
    for k in range(2, 6):
        text += f"\n[Term]\nid: GO:000000{k}\nname: t{k}\nnamespace: biological_process\n"
        text += "is_a: GO:0008150 ! biological_process\n"
    return text + extra


@pytest.mark.parametrize("id_line", ["", "id: \n", "id:\t\n"])
def test_an_obo_term_without_an_id_is_refused(tmp_path, id_line):
    """goatools read a [Term] stanza without an id (or with an empty one) as a live term
    named '', parents and all."""
    from kofs.io.ontology import read_obo

    path = tmp_path / "go.obo"
    path.write_text(_obo(f"\n[Term]\n{id_line}name: nameless\nnamespace: biological_process\n"))
    with pytest.raises(KofsError, match=r"a \[Term\] stanza \(line 32\) has no id"):
        read_obo(path)


@pytest.mark.parametrize("end", ["\r\n", "\r"])
def test_an_obo_file_with_windows_or_old_mac_line_ends_is_read(tmp_path, end):
    """A lone-CR file was 'truncated download?', as a file cut mid-line is."""
    from kofs.io.ontology import read_obo

    path = tmp_path / "go.obo"
    path.write_bytes(_obo().replace("\n", end).encode())
    onto = read_obo(path)
    assert onto.terms == ("GO:0000002", "GO:0000003", "GO:0000004", "GO:0000005", "GO:0008150")
    assert len(onto.edges["is_a"]) == 4


# --- options without effect -----------------------------------------------------------------


def test_term_relevance_without_go_or_pathways_warns_once(base):
    """--term-relevance scores GO terms and gene sets; alone it changed nothing, silently."""
    table = base["dir"] / "relevance.tsv"
    table.write_text("term\tvalue\nSET0\t1\n")
    out = base["dir"] / "out"
    r = invoke("rank", base["expr"], "--rankers", "variance", "--term-relevance", table, "-o", out)
    assert r.exit_code == 0, r.stderr
    needle = f"--term-relevance {table} has no effect: it gives the relevance of GO terms"
    assert r.stderr.count(needle) == 1, r.stderr
    gmt = base["dir"] / "sets.gmt"
    gmt.write_text("SET0\td\t" + "\t".join(f"G{i}" for i in range(8)) + "\n")
    r = invoke("sources", base["expr"], "--term-relevance", table, "--pathways", gmt)
    assert r.exit_code == 0 and "no effect" not in r.stderr, r.stderr


# --- Python API: lists of the wrong kind ----------------------------------------------------


def test_aggregate_rankings_refuses_a_none_or_a_mapping_among_its_lists():
    """A None among the rankings was taken for "nothing wrong" (AttributeError: 'NoneType'
    object has no attribute 'name'); a dict of rankings was 'got a str' (its keys)."""
    import kofs
    from kofs.errors import ParameterError

    X = np.random.default_rng(0).normal(size=(8, 12))
    ranking = kofs.rank(X, rankers=["variance"]).lists[0]
    with pytest.raises(ParameterError, match="kofs.Ranking objects, got None"):
        kofs.aggregate_rankings([ranking, None])
    with pytest.raises(ParameterError, match=r"got a dict: give its values"):
        kofs.aggregate_rankings({"a": ranking})


def test_aggregate_lists_refuses_a_series_with_a_multiindex():
    """Was an IndexError from pandas' reset_index (a DataFrame's MultiIndex was refused)."""
    import pandas as pd

    import kofs
    from kofs.errors import ParameterError

    index = pd.MultiIndex.from_tuples([("G1", 1), ("G2", 2), ("G3", 3)])
    series = pd.Series([0.3, 0.2, 0.1], index=index)
    with pytest.raises(ParameterError, match="list a: a Series with a MultiIndex"):
        kofs.aggregate_lists({"a": series, "b": ["G1", "G2", "G3"]}, direction="desc")


def test_gene_similarity_refuses_a_dtype_that_cannot_hold_nan(tmp_path):
    """dtype=int was numpy's ValueError 'cannot convert float NaN to integer'."""
    import kofs
    from kofs.errors import ParameterError

    obo = tmp_path / "go.obo"
    obo.write_text(_obo())
    ann = tmp_path / "ann.tsv"
    ann.write_text("".join(f"G{i}\tGO:000000{2 + i % 4}\tIDA\tP\n" for i in range(6)))
    onto = kofs.read_obo(obo)
    annotations = kofs.read_go_annotations(ann, ontology=onto)
    for dtype in (int, bool, complex):
        with pytest.raises(ParameterError, match="cannot hold similarities"):
            kofs.gene_similarity(onto, annotations, ["G1", "G2"], dtype=dtype)
    values, _ = kofs.gene_similarity(onto, annotations, ["G1", "G2"], dtype=np.float32)
    assert values.dtype == np.float32


def test_a_parameter_of_a_ranker_the_run_does_not_use_says_so(base):
    """--param spec-phi2.k=0 with labels only (the Fisher list) was 'unknown list or ranker
    'spec-phi2'', of a ranker kofs has."""
    args = ["rank", base["expr"], "--labels", base["labels"], "-o", base["dir"] / "out"]
    r = invoke(*args, "--param", "spec-phi2.k=3")
    one_error(r, "--param", "ranker 'spec-phi2' builds no list of this run", "--rankers")
    r = invoke(*args, "--param", "nope.k=3")
    one_error(r, "--param", "unknown list or ranker 'nope'")
    assert not (base["dir"] / "out").exists()


# --- pathways -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fmt", "text", "needle"),
    [
        (
            "kegg_gene2pathway",
            "pathway_id\tentrez_id\n\tG1\nhsa1\tG2\n",
            ":2 (column pathway_id): the pathway_id is empty",
        ),
        (
            "kegg_table",
            "pathway_id\tentrez_ids\n\tG1,G2\nhsa1\tG2,G3\n",
            ":2 (column pathway_id): the pathway_id is empty",
        ),
        ("kegg_link", "G1\tpath:\nG3\tpath:hsa1\n", ":1: KEGG link line has an empty pathway id"),
    ],
)
def test_a_kegg_row_without_a_pathway_id_is_refused(base, fmt, text, needle):
    """Was a gene set with the id '' (a GMT line without a set id is refused)."""
    import kofs

    path = base["dir"] / "kegg.tsv"
    path.write_text(text)
    with pytest.raises(KofsError, match=re.escape(needle)):
        kofs.read_pathways(path, fmt)
    r = invoke("sources", base["expr"], "--pathways", path, "--pathway-format", fmt)
    one_error(r, path, needle)


# --- interactions ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "text", "line"),
    [
        ("short.txt", "protein1 protein2 combined_score\nP1 P2 900\nP2 P3\n", 3),
        ("short.tsv", "a\tb\tw\nG1\tG2\t0.5\nG2\tG3\n", 3),
        ("empty.csv", "a,b,w\nG1,G2,0.5\nG2,G3,\n", 3),
    ],
)
def test_a_missing_interaction_weight_is_said_to_be_missing(base, name, text, line):
    """A line without its weight field was "weight 'nan' is not a finite number" (STRING) or
    "weight ''", values the file does not hold."""
    import kofs

    path = base["dir"] / name
    path.write_text(text)
    with pytest.raises(KofsError, match=rf":{line} \(column .*\): the weight is missing"):
        kofs.read_interactions(path)
    nan = base["dir"] / "nan.tsv"
    nan.write_text("a\tb\tw\nG1\tG2\tNaN\n")
    with pytest.raises(KofsError, match="weight 'NaN' is not a finite number"):
        kofs.read_interactions(nan)


def test_an_empty_string_alias_file_is_named_as_such(base):
    """A STRING aliases file with a header only was 'interaction file has no rows'."""
    links = base["dir"] / "links.txt"
    links.write_text("protein1 protein2 combined_score\n9606.P1 9606.P2 900\n")
    aliases = base["dir"] / "aliases.txt"
    aliases.write_text("#string_protein_id\talias\tsource\n")
    r = invoke("sources", base["expr"], "--interactions", links, "--string-aliases", aliases)
    one_error(r, aliases, "STRING alias file has no rows")


# --- evaluate: folds against sample groups --------------------------------------------------


@pytest.mark.parametrize(
    ("groups", "folds", "needle"),
    [
        (["P0"] * N_SAMPLES, "0", "needs at least 2 groups; --groups gives 1 ('P0')"),
        ([f"P{j}" for j in range(N_SAMPLES)], "8", "--folds 8 is more than every class has"),
    ],
)
def test_evaluate_folds_that_the_sample_groups_cannot_make(base, groups, folds, needle):
    """One group with --folds 0 (leave-one-group-out), or more grouped folds than any class
    has samples, were scikit-learn's ValueError: an internal error, exit 1."""
    ranking = base["dir"] / "ranking.tsv"
    ranking.write_text("gene\trank\n" + "".join(f"G{i}\t{i + 1}\n" for i in range(N_GENES)))
    labels = base["dir"] / "groups.tsv"
    labels.write_text(
        "sample\tclass\tpatient\n"
        + "".join(
            f"S{j}\t{'a' if j < N_SAMPLES // 2 else 'b'}\t{g}\n" for j, g in enumerate(groups)
        )
    )
    out = base["dir"] / "eval"
    r = invoke(
        "evaluate", ranking, base["expr"], "--labels", labels, "--groups", "patient",
        "--folds", folds, "--repeats", "1", "--classifiers", "1nn", "-o", out,
    )  # fmt: skip
    one_error(r, "--folds", needle)
    assert not out.exists()


# --- empty values ---------------------------------------------------------------------------


def test_an_empty_log_file_or_list_is_refused(base):
    """--log-file '' wrote no log without a word; an empty aggregate LIST was ': file not
    found' (a name without its file)."""
    r = invoke("--log-file", "", "methods")
    one_error(r, "--log-file", "an empty path was given")
    lists = base["dir"] / "a.txt"
    lists.write_text("G1\nG2\nG3\n")
    for empty in ("", " ", "x="):
        r = invoke("aggregate", lists, empty, "-o", "-")
        one_error(r, "an empty list was given")


def test_gosim_output_naming_an_input_says_so(tmp_path):
    """-o the genes file read: "cannot be written: . writing here would overwrite the input
    file genes.txt; choose another output folder" (a folder message, garbled)."""
    obo = tmp_path / "go.obo"
    obo.write_text(_obo())
    ann = tmp_path / "ann.tsv"
    ann.write_text("".join(f"G{i}\tGO:000000{2 + i % 4}\tIDA\tP\n" for i in range(6)))
    genes = tmp_path / "genes.txt"
    genes.write_text("G1\nG2\n")
    for target in (genes, ann):
        before = target.read_bytes()
        r = invoke("gosim", "--go", obo, "--go-annotations", ann, "--genes", genes, "-o", target)
        one_error(r, target, "is an input of this run", "choose another output file name")
        assert target.read_bytes() == before


def test_a_known_gene_row_without_a_gene_id_is_refused(tmp_path):
    """A true row of a known-gene table with an empty gene id was dropped without a word."""
    from kofs.evaluate.known import read_known_genes

    path = tmp_path / "known.tsv"
    path.write_text("gene\tflag\nG1\tyes\n\tyes\nG3\tno\n")
    with pytest.raises(KofsError, match=r"known\.tsv:3: known genes 'k': the gene id .* empty"):
        read_known_genes("k", path, where="flag")
    path.write_text("gene\tflag\nG1\tyes\n\tno\nG3\tyes\n")  # an empty id on a false row
    assert read_known_genes("k", path, where="flag").genes == ("G1", "G3")


# --- special files as inputs ----------------------------------------------------------------


def test_a_device_or_a_pipe_read_twice_is_refused_at_once(base):
    """/dev/zero as an input was read without end (a hang); a named pipe (or <(...)) as a file
    that kofs opens twice was 'file is empty' or 'GO ontology file not found'. A pipe read
    once (the expression matrix, the labels) stays readable."""
    import os

    r = invoke("rank", "/dev/zero", "--rankers", "variance", "-o", base["dir"] / "out")
    one_error(r, "/dev/zero", "is a device, not a file")
    assert not (base["dir"] / "out").exists()
    fifo = base["dir"] / "sets.gmt"
    os.mkfifo(fifo)  # no writer: opening it would block; it is refused before any open
    r = invoke("sources", base["expr"], "--pathways", fifo)
    one_error(r, fifo, "is a pipe", "save it to a file")
    r = invoke("sources", base["expr"], "--go", fifo, "--go-annotations", base["labels"])
    one_error(r, fifo, "is a pipe")


def test_a_kegg_pathway_named_twice_is_refused(tmp_path):
    """--kegg-names giving one pathway two names kept the last, without a word."""
    import kofs

    link = tmp_path / "link.txt"
    link.write_text("hsa:1\tpath:hsa00010\nhsa:2\tpath:hsa00010\n")
    names = tmp_path / "names.txt"
    names.write_text("path:hsa00010\tGlycolysis\npath:hsa00010\tOther\n")
    with pytest.raises(KofsError, match="names.txt:2: pathway hsa00010 has two names"):
        kofs.read_pathways(link, "kegg_link", names=names)
    names.write_text("path:hsa00010\tGlycolysis\npath:hsa00010\tGlycolysis\n")  # repeated alike
    assert kofs.read_pathways(link, "kegg_link", names=names).names == ("Glycolysis",)


def test_an_output_file_checked_against_a_generator_of_inputs_keeps_every_check(tmp_path):
    """check_output_file reads its inputs twice (the file itself, then the folder checks): a
    generator of inputs was empty the second time, and a file inside an input folder passed."""
    from kofs.errors import OutputError
    from kofs.io.output import check_output_file

    folder = tmp_path / "matrix.mtx.d"
    folder.mkdir()
    with pytest.raises(OutputError):
        check_output_file(folder / "out.tsv", inputs=[folder])
    with pytest.raises(OutputError):
        check_output_file(folder / "out.tsv", inputs=(p for p in [folder]))
