"""Figures, report.html, `kofs evaluate` end to end, and KOFS re-ranking per fold."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _report_check import browser_check, check_report
from click.testing import CliRunner

from kofs.cli import main
from kofs.errors import InputError, ParameterError
from kofs.evaluate import (
    Aggregation,
    KofsRanking,
    evaluate,
    parse_known_spec,
    ranks_on_matrix,
    read_known_genes,
    read_rank_output,
    write_evaluation,
)
from kofs.types import Expression, SampleCategories


def _toy(tmp_path: Path, n=24, m=40, seed=0):
    rng = np.random.default_rng(seed)
    y = np.array(["B", "T"] * (n // 2))
    X = rng.normal(size=(n, m)) + 5
    X[:, :3] += np.where(y == "B", 2.0, -2.0)[:, None]
    genes = [f"G{j}" for j in range(m)]
    samples = [f"s{i}" for i in range(n)]
    expr_path = tmp_path / "expr.tsv"
    pd.DataFrame(X.T, index=pd.Index(genes, name="gene"), columns=samples).to_csv(
        expr_path, sep="\t"
    )
    lab_path = tmp_path / "labels.tsv"
    pd.DataFrame(
        {"sample": samples, "class": y, "patient": [f"p{i // 2}" for i in range(n)]}
    ).to_csv(lab_path, sep="\t", index=False)
    known = tmp_path / "known.txt"
    known.write_text("G0\nG1\nG39\nNOT_A_GENE\n")
    return Expression(X, genes, samples), y, expr_path, lab_path, known


@pytest.mark.slow
def test_write_evaluation_figures_and_report(tmp_path):
    expr, y, *_, known = _toy(tmp_path)
    m = expr.n_genes
    lists = {"good": np.arange(1.0, m + 1), "reverse": np.arange(m, 0.0, -1)}
    kg = read_known_genes("leu", known)
    res = evaluate(
        lists,
        expr,
        labels=y,
        known=[kg],
        top=[2, 5],
        curve_ks=[2, 5, 10],
        classifiers=["1nn", "svm-linear"],
        n_splits=3,
        n_repeats=1,
        circular={"good": ["leu"]},
        weights={"em": {"good": 0.7, "reverse": 0.3}},
    )
    t = res.table.set_index("list")
    assert t.loc["good", "HIT_leu"] == 2 and t.loc["reverse", "HIT_leu"] == 1  # G0, G1 / G39
    assert t.loc["good", "ACC-2"] == 1.0 and t.loc["good", "ACC Ave"] == 1.0
    assert t.loc["reverse", "ACC Ave"] < 0.9
    assert "circular" in t.loc["good", "notes"] and t.loc["reverse", "notes"] == ""
    assert {"RED-5", "Residue", "JAC-1", "JAC-5", "SVM-linear Ave"} <= set(t.columns)
    out = tmp_path / "ev"
    written = write_evaluation(
        res, out, expression=expr, labels=y, heatmap_lists=["good"], title="toy"
    )
    for name in ("heatmap_1", "accuracy_1nn", "accuracy_svm-linear", "weights", "agreement"):
        png, svg = out / "figures" / f"{name}.png", out / "figures" / f"{name}.svg"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
        assert b"<svg" in svg.read_bytes()[:2000]
    assert str(out / "report.html") in written
    assert check_report(out / "report.html") == []
    page = (out / "report.html").read_text()
    assert "<table" in page and "figures/heatmap_1.png" in page and "http" not in page
    ev = pd.read_csv(out / "evaluation.tsv", sep="\t")
    assert list(ev["list"]) == ["good", "reverse"]
    acc = pd.read_csv(out / "accuracy.tsv", sep="\t")
    assert set(acc["k"]) == {2, 5, 10} and set(acc["protocol"]) == {"book"}


def test_report_renders_in_headless_chromium(tmp_path, browser):
    expr, y, *_ = _toy(tmp_path)
    res = evaluate(
        {"a": np.arange(1.0, expr.n_genes + 1)},
        expr,
        labels=y,
        top=[2, 5],
        classifiers=["1nn"],
        n_splits=3,
        n_repeats=1,
    )
    genes = pd.DataFrame({"rank": [1, 2], "symbol": ["AAA", "BBB"], "gene": ["G0", "G1"]})
    prov = {"kofs_version": "0", "inputs": {"expression": {"path": "e", "sha256": "ab" * 32}}}
    write_evaluation(
        res,
        tmp_path / "ev",
        expression=expr,
        labels=y,
        title="toy report",
        gene_tables={"Top genes of a": genes},
        provenance=prov,
    )
    seen = browser_check(
        tmp_path / "ev" / "report.html", profile_dir=tmp_path / "browser", executable=browser
    )
    assert seen["title"] == "toy report"
    assert {"evaluation", "top-genes-1", "inputs"} <= set(seen["table_ids"])
    assert "AAA" in seen["dom"] and "ab" * 32 in seen["dom"]
    assert {i["src"] for i in seen["images"]} == {
        "figures/heatmap_1.png",
        "figures/accuracy_1nn.png",
    }
    assert all(i["width"] > 100 for i in seen["images"])  # every figure loaded and decoded
    assert seen["console"] == []
    stats = seen["screenshot_stats"]
    assert stats["width"] == 1280 and stats["non_background"] > 0.02 and stats["colours"] > 20
    assert sorted(p.name for p in (tmp_path / "ev").iterdir()) == [
        ".kofs-complete",
        "accuracy.tsv",
        "evaluation.json",
        "evaluation.tsv",
        "figures",
        "report.html",
    ]  # nothing written beside the report


def test_unknown_heatmap_list_is_a_parameter_error(tmp_path):
    expr, y, *_ = _toy(tmp_path)
    res = evaluate(
        {"a": np.arange(1.0, expr.n_genes + 1)},
        expr,
        labels=y,
        top=[2],
        classifiers=["1nn"],
        n_splits=3,
        n_repeats=1,
        unsupervised=False,
    )
    with pytest.raises(ParameterError, match="heatmap list 'b'"):
        write_evaluation(res, tmp_path / "ev", expression=expr, labels=y, heatmap_lists=["b"])
    assert not (tmp_path / "ev").exists()


def test_check_report_finds_problems(tmp_path):
    (tmp_path / "r.html").write_text("<html><body><img src='missing.png'><div></body></html>")
    problems = check_report(tmp_path / "r.html")
    assert any("missing.png" in p for p in problems) and any(
        "unbalanced" in p or "unclosed" in p for p in problems
    )
    # a link opens on a click (fine); an image from the network is a load (not fine)
    (tmp_path / "l.html").write_text(
        "<html><body><a href='https://www.ncbi.nlm.nih.gov/gene/7157'>TP53</a>"
        "<img src='https://example.org/x.png'></body></html>"
    )
    assert check_report(tmp_path / "l.html") == ["network reference https://example.org/x.png"]


def test_protocol_note_defines_only_the_columns_of_the_table(tmp_path):
    """Without known gene sets the note defined HIT_set and Sim_anno_set, columns the table
    does not have, and said 'repeated 1 times'."""
    from kofs.evaluate.report import _page

    expr, y, *_ = _toy(tmp_path)
    lists = {"good": np.arange(1.0, expr.n_genes + 1)}
    res = evaluate(lists, expr, labels=y, top=[2], curve_ks=[2], classifiers=["1nn"],
                   n_splits=3, n_repeats=1)  # fmt: skip
    page = _page(res, [], title="t", intro="", extra_tables={}, gene_tables=[], provenance="")
    assert "HIT_set" not in page and "Sim_anno" not in page
    assert "3-fold stratified CV run once" in page and "1 times" not in page


def test_known_gene_sets(tmp_path):
    t = tmp_path / "c.tsv"
    t.write_text("entrez_id\tsymbol\theme\n1\tAAA\tTrue\n2\tBBB\tFalse\n3\tCCC\t1\n")
    assert read_known_genes("x", t, where="heme").genes == ("AAA", "CCC")
    assert parse_known_spec(f"h={t}:heme").genes == ("AAA", "CCC")
    with pytest.raises(ParameterError, match="no column 'nope'"):
        read_known_genes("x", t, where="nope")
    with pytest.raises(InputError, match="not found"):
        read_known_genes("x", tmp_path / "absent.txt")
    with pytest.raises(ParameterError, match="NAME=FILE"):
        parse_known_spec("just-a-file.txt")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "file is empty"),
        ("gene\tflag\nG0\ttrue\n".encode("utf-16"), None),  # read as UTF-8 would be: fine
        (b"gene\tflag\nG0\ttrue\nG1\tfalse\textra\textra2\nG2\ttrue\n", ":3: has 4 fields"),
        (b"gene\tflag\n\x00\x01\x02\n", "binary"),
        (b"G0\nG1\n", "no column 'flag'; the header \\(first line\\) names 'G0'"),
        # a column neither true nor false (text, scores) kept its "yes" rows silently
        (b"gene\tflag\nG0\tyes\nG1\tOncogene\nG2\t0.8\n", ":3: .*holds 'Oncogene' \\(2 such"),
        (b"gene\tflag\nG0\t TRUE\nG1\tNA\nG2\t\n", None),  # NA and empty cells are false
    ],
)
def test_known_gene_tables_with_a_column_are_read_as_every_table(tmp_path, content, message):
    """NAME=FILE:COLUMN tables were read by a bare pandas call: an empty, UTF-16, binary or
    truncated file was an internal error (exit 1), and a ragged row shifted the first column
    into the index, losing the genes flagged true."""
    t = tmp_path / "k.tsv"
    t.write_bytes(content)
    if message is None:
        assert read_known_genes("k", t, where="flag").genes == ("G0",)
        return
    with pytest.raises((InputError, ParameterError), match=message):
        read_known_genes("k", t, where="flag")


@pytest.mark.slow
def test_cli_evaluate_end_to_end_with_honest_protocol(tmp_path):
    _, _, expr_path, lab_path, known = _toy(tmp_path)
    # class not in the default (second) column: --label-column must reach the honest re-run
    lab = pd.read_csv(lab_path, sep="\t")[["sample", "patient", "class"]]
    lab_path = tmp_path / "labels2.tsv"
    lab.to_csv(lab_path, sep="\t", index=False)
    runner = CliRunner()
    rank_out = tmp_path / "run"
    # a dashed option in config.resolved.yaml (label-column) must reach the honest re-run
    r = runner.invoke(
        main,
        [
            "rank",
            str(expr_path),
            "--labels",
            str(lab_path),
            "--label-column",
            "class",
            "--rankers",
            "variance,fisher",
            "--aggregate",
            "em",
            "-o",
            str(rank_out),
        ],
    )
    assert r.exit_code == 0, r.output
    out = tmp_path / "ev"
    r = runner.invoke(
        main,
        [
            "evaluate",
            str(rank_out),
            str(expr_path),
            "--labels",
            str(lab_path),
            "--label-column",
            "class",
            "--known-genes",
            f"k={known}",
            "--top",
            "2,5",
            "--folds",
            "3",
            "--repeats",
            "1",
            "--classifiers",
            "1nn",
            "--protocol",
            "both",
            "--groups",
            "patient",
            "-o",
            str(out),
        ],
    )
    assert r.exit_code == 0, r.output
    ev = pd.read_csv(out / "evaluation.tsv", sep="\t").set_index("list")
    assert set(ev.index) == {"final", "variance", "fisher"}
    assert ev.loc["fisher", "ACC-2"] == 1.0 and ev.loc["fisher", "honest ACC-2"] == 1.0
    assert ev.loc["fisher", "HIT_k"] == 2
    assert check_report(out / "report.html") == []
    assert (out / "figures" / "weights.png").is_file()
    page = (out / "report.html").read_text()
    # the gene list of the evaluated run and the provenance (the chain back to its inputs)
    assert "id='top-genes-1'" in page and "rank: fisher" in page and "G0" in page
    sha = hashlib.sha256(expr_path.read_bytes()).hexdigest()
    assert "id='provenance'" in page and page.count(sha) == 2  # evaluation's and the run's
    prov = json.loads((out / "evaluation.json").read_text())["provenance"]
    assert prov["command"] == "evaluate" and prov["inputs"]["known_genes"][0]["path"] == str(known)
    rf = read_rank_output(rank_out)
    assert rf.config["label_column"] == "class" and set(rf.ranks) == {"final", "variance", "fisher"}
    # the run's labels moved since: the error says the path comes from the run's config (it
    # read "<path>: file not found" of a path the user never typed)
    moved = tmp_path / "moved.tsv"
    lab_path.rename(moved)
    r = runner.invoke(
        main,
        ["evaluate", str(rank_out), str(expr_path), "--labels", str(moved)]
        + ["--label-column", "class", "--protocol", "honest", "-o", str(tmp_path / "ev2")],
    )
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert f"a path in {rank_out / 'config.resolved.yaml'}" in r.stderr
    assert "seem to have moved" in r.stderr and not (tmp_path / "ev2").exists()


@pytest.mark.parametrize(
    "args, message",
    [
        (["--top", "0"], "--top"),
        (["--known-genes", "k=/no/such/file.txt"], "not found"),
        (["--folds", "20", "--top", "2"], "--folds"),
        (["--top", "100"], "matrix has 40"),
        (["-o", "-"], "kofs evaluate writes a folder"),  # it made a folder named '-'
    ],
)
def test_cli_evaluate_user_errors(tmp_path, args, message):
    _, _, expr_path, lab_path, _ = _toy(tmp_path)
    bad = tmp_path / "ranking.tsv"
    bad.write_text("gene\trank\nG0\t1\nG1\t2\n")
    r = CliRunner().invoke(
        main,
        [
            "evaluate",
            str(bad),
            str(expr_path),
            "--labels",
            str(lab_path),
            "--classifiers",
            "1nn",
            "-o",
            str(tmp_path / "o"),
            *args,
        ],
    )
    assert r.exit_code == 2, r.output
    assert message in r.output and len(r.output.strip().splitlines()) == 1


def test_cli_evaluate_honest_refuses_an_aggregate_folder_in_words(tmp_path):
    # its config was read as a kofs rank config: "unknown config key 'command'"
    _, _, expr_path, lab_path, _ = _toy(tmp_path)
    for name, genes in (("a", range(40)), ("b", reversed(range(40)))):
        (tmp_path / f"{name}.txt").write_text("".join(f"G{i}\n" for i in genes))
    fused = tmp_path / "fused"
    made = CliRunner().invoke(
        main, ["aggregate", str(tmp_path / "a.txt"), str(tmp_path / "b.txt"), "-o", str(fused)]
    )
    assert made.exit_code == 0, made.output
    r = CliRunner().invoke(
        main,
        ["evaluate", str(fused), str(expr_path), "--labels", str(lab_path), "--protocol", "honest",
         "-o", str(tmp_path / "o")],
    )  # fmt: skip
    assert r.exit_code == 2 and "was written by `kofs aggregate`" in r.output, r.output


def test_cli_evaluate_known_sets_named_twice_or_outside_the_matrix(tmp_path):
    # a name given twice: one HIT column, the last file silently won; no gene in the matrix:
    # every HIT 0 after a warning
    _, _, expr_path, lab_path, known = _toy(tmp_path)
    ranking = tmp_path / "ranking.tsv"
    ranking.write_text("gene\trank\nG0\t1\nG1\t2\n")
    outside = tmp_path / "outside.txt"
    outside.write_text("ENSG00000000001\nENSG00000000002\n")
    base = ["evaluate", str(ranking), str(expr_path), "--labels", str(lab_path)]
    for extra, message in (
        (["--known-genes", f"k={known}", "--known-genes", f"k={outside}"], "'k' is given twice"),
        (["--known-genes", f"x={outside}"], "none of its 2 gene ids"),
    ):
        r = CliRunner().invoke(main, [*base, *extra, "-o", str(tmp_path / "o")])
        assert r.exit_code == 2 and message in r.output, r.output
        assert len(r.output.strip().splitlines()) == 1 and not (tmp_path / "o").exists()


def test_cli_evaluate_rejects_non_ranking_and_bare_file_for_honest(tmp_path):
    _, _, expr_path, lab_path, _ = _toy(tmp_path)
    bad = tmp_path / "x.tsv"
    bad.write_text("a\tb\n1\t2\n")
    r = CliRunner().invoke(main, ["evaluate", str(bad), str(expr_path), "--labels", str(lab_path)])
    assert r.exit_code == 2 and "needs the columns 'gene' and 'rank'" in r.output
    unranked = tmp_path / "unranked.tsv"  # read in file order before: an accuracy of nothing
    unranked.write_text("gene\trank\nG0\tNA\nG1\tNA\n")
    r = CliRunner().invoke(
        main, ["evaluate", str(unranked), str(expr_path), "--labels", str(lab_path)]
    )
    assert r.exit_code == 2 and "no gene has a rank" in r.output
    ok = tmp_path / "ranking2.tsv"
    ok.write_text("gene\trank\nG0\t1\nG1\t2\n")
    r = CliRunner().invoke(
        main,
        [
            "evaluate",
            str(ok),
            str(expr_path),
            "--labels",
            str(lab_path),
            "--protocol",
            "honest",
            "--classifiers",
            "1nn",
        ],
    )
    assert r.exit_code == 2 and "config.resolved.yaml" in r.output


def test_kofs_ranking_reruns_on_folds_and_reuses_gene_level_knowledge(tmp_path):
    from kofs.datasets.example import example_paths
    from kofs.io.expression import read_expression
    from kofs.io.genes import read_gene_list
    from kofs.io.labels import align_labels, read_labels
    from kofs.sources import read_sources

    p = example_paths()
    lab = read_labels(p["labels"], label_column="lineage")
    expr, lab = align_labels(read_expression(p["expression"], sample_ids=lab.samples), lab)
    expr = expr.subset_genes(np.arange(0, expr.n_genes, 4))
    rel = read_gene_list(p["relevant_genes"])
    kofs = KofsRanking(
        read_sources(pathways=p["pathways"]),
        ["SPEC", "Fisher", "Pathway-FILT", "Pathway-REL-VOTE"],
        [
            Aggregation("KOFS_Borda", "borda"),
            Aggregation("KOFS_Prob", "em"),
            Aggregation("KOFS_Prob-SUP", "em", tuple(rel)),
        ],
        list_relevant_genes=rel,
        rename={"Fisher": "Fisher score"},
    )
    full = kofs.run(expr, lab)
    assert (
        list(full)
        == kofs.names()
        == [
            "SPEC",
            "Fisher score",
            "Pathway-FILT",
            "Pathway-REL-VOTE",
            "KOFS_Borda",
            "KOFS_Prob",
            "KOFS_Prob-SUP",
        ]
    )
    shared = {k[0] for k in kofs._shared if isinstance(k, tuple)}
    assert {"pathway_functions", "pathway_functions_rel"} <= shared  # gene-level, built once
    assert full["KOFS_Prob-SUP"].weights is not None and full["KOFS_Borda"].weights is None
    idx = np.arange(0, expr.n_samples, 2)
    sub = expr.subset_samples(idx)
    part = kofs.run(sub, SampleCategories([lab.labels[i] for i in idx], sub.samples))
    # knowledge-only list: same scores; data lists: recomputed on the subset
    np.testing.assert_array_equal(part["Pathway-REL-VOTE"].scores, full["Pathway-REL-VOTE"].scores)
    assert not np.allclose(part["SPEC"].scores, full["SPEC"].scores)


@pytest.mark.slow
def test_cli_evaluate_several_runs_names_finals_by_folder(tmp_path):
    _, _, expr_path, lab_path, _ = _toy(tmp_path)
    runner = CliRunner()
    for agg in ("em", "borda"):
        r = runner.invoke(
            main,
            [
                "rank",
                str(expr_path),
                "--labels",
                str(lab_path),
                "--rankers",
                "variance,fisher",
                "--aggregate",
                agg,
                "-o",
                str(tmp_path / f"run_{agg}"),
            ],
        )
        assert r.exit_code == 0, r.output
    out = tmp_path / "ev"
    r = runner.invoke(
        main,
        [
            "evaluate",
            str(tmp_path / "run_em"),
            str(tmp_path / "run_borda" / "ranking.tsv"),
            str(expr_path),
            "--labels",
            str(lab_path),
            "--top",
            "2",
            "--folds",
            "3",
            "--repeats",
            "1",
            "--classifiers",
            "1nn",
            "-o",
            str(out),
        ],
    )
    assert r.exit_code == 0, r.output
    ev = pd.read_csv(out / "evaluation.tsv", sep="\t")
    # the per-source lists are the same in both runs and appear once
    assert list(ev["list"]) == ["run_em", "variance", "fisher", "run_borda"]


def test_rankings_of_one_label_are_all_numbered(tmp_path):
    # the same label twice was named "r#1" and "r": the first rename hid the clash from the
    # second (counted in the list being renamed)
    from kofs.evaluate.run import _names

    expr, *_ = _toy(tmp_path)
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / "r.tsv").write_text("gene\trank\nG1\t1\nG0\t2\n")
    files = [read_rank_output(tmp_path / sub / "r.tsv") for sub in ("a", "b")]
    assert list(_names(files, expr)) == ["r#1", "r#2"]


@pytest.mark.parametrize("encode", ["utf-16", "gzip"])
def test_a_ranking_saved_as_utf16_or_gzip_is_read_as_written(tmp_path, encode):
    """A ranking.tsv re-saved by a spreadsheet as UTF-16 was "'utf-8' codec can't decode byte
    0xff"; every other kofs reader takes UTF-16 and gzip."""
    import gzip

    text = "gene\trank\trank:x\nG1\t1\t2\nG0\t2\t1\n"
    p = tmp_path / ("ranking.tsv" if encode == "utf-16" else "ranking.tsv.gz")
    p.write_bytes(text.encode("utf-16") if encode == "utf-16" else gzip.compress(text.encode()))
    rf = read_rank_output(p)
    assert list(rf.genes) == ["G1", "G0"]
    assert list(rf.ranks["final"]) == [1, 2] and list(rf.ranks["x"]) == [2, 1]


def test_two_genes_of_a_ranking_that_are_one_gene_of_the_matrix_are_refused(tmp_path):
    # G1 and g1 both matched the matrix's G1: g1's rank (2) replaced G1's (1), silently
    expr, *_ = _toy(tmp_path)
    p = tmp_path / "mine.tsv"
    p.write_text("gene\trank\nG1\t1\ng1\t2\nG2\t3\n")
    with pytest.raises(InputError, match="genes 'G1' and 'g1' are one gene of the matrix"):
        ranks_on_matrix(read_rank_output(p), expr)


def test_a_ranking_saved_as_csv_is_named_so(tmp_path):
    # it was "needs the columns 'gene' and 'rank'", which the file's header shows
    p = tmp_path / "ranking.csv"
    p.write_text("gene,rank,score\nA,1,2\nB,2,1\n")
    with pytest.raises(InputError, match="separated by ','; a kofs ranking table is tab-sep"):
        read_rank_output(p)


def test_a_ranking_that_lists_a_gene_twice_is_refused(tmp_path):
    p = tmp_path / "mine.tsv"
    p.write_text("gene\trank\nA\t1\nB\t2\nA\t3\n")
    with pytest.raises(InputError) as err:
        read_rank_output(p)
    assert "'A' is listed twice (lines 2 and 4)" in str(err.value)


@pytest.mark.parametrize(
    ("files", "message"),
    [
        # a rank of 0 or below read the list upside down (ACC 0.38 for a list of 1.0)
        ({"ranking.tsv": "gene\trank\nG0\t-1\nG1\t-2\n"}, "holds the rank -1 (gene 'G0')"),
        # a list column of text was evaluated in file order
        ({"ranking.tsv": "gene\trank\trank:x\nG0\t1\tfoo\nG1\t2\tfoo\n"},
         "column 'rank:x' holds only NA or non-numbers"),
        # a list named final replaced the fused ranking's row
        ({"ranking.tsv": "gene\trank\trank:final\nG0\t1\t2\nG1\t2\t1\n"},
         "a list is named 'final'"),
        # an internal error (KeyError: 'list')
        ({"ranking.tsv": "gene\trank\nG0\t1\nG1\t2\n", "weights.tsv": "a\tb\n1\t2\n"},
         "weights.tsv: not a kofs weights table"),
    ],
)  # fmt: skip
def test_cli_evaluate_refuses_tables_it_would_misread(tmp_path, files, message):
    _, _, expr_path, lab_path, _ = _toy(tmp_path)
    folder = tmp_path / "given"
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text)
    r = CliRunner().invoke(
        main, ["evaluate", str(folder / "ranking.tsv"), str(expr_path), "--labels",
               str(lab_path), "-o", str(tmp_path / "o")],
    )  # fmt: skip
    assert r.exit_code == 2 and message in r.output, r.output
    assert len(r.output.strip().splitlines()) == 1 and not (tmp_path / "o").exists()


def test_a_ranking_from_stdin_is_refused_in_words(tmp_path):
    """``kofs evaluate - EXPRESSION`` said "-: file not found" once the matrix was read."""
    _, _, expr_path, lab_path, _ = _toy(tmp_path)
    r = CliRunner().invoke(
        main, ["evaluate", "-", str(expr_path), "--labels", str(lab_path), "-o",
               str(tmp_path / "o")], input="gene\trank\nG0\t1\n",
    )  # fmt: skip
    assert r.exit_code == 2 and "cannot be read from standard input (-)" in r.output, r.output
    with pytest.raises(ParameterError, match="save it to a file and give its path"):
        read_rank_output("-")


def test_aggregate_refuses_a_list_named_final(tmp_path):
    (tmp_path / "a.txt").write_text("G1\nG2\n")
    (tmp_path / "b.txt").write_text("G2\nG1\n")
    r = CliRunner().invoke(main, ["aggregate", f"final={tmp_path / 'a.txt'}",
                                  str(tmp_path / "b.txt"), "-o", str(tmp_path / "o")])  # fmt: skip
    assert r.exit_code == 2 and "a list is named 'final'" in r.output


def test_evaluation_json_is_strict_json_with_sorted_keys(tmp_path):
    # evaluation.json was json.dumps(record, indent=2, default=str): a NaN weight was written
    # as the bare token NaN (not JSON: jq, R's jsonlite and JSON.parse refuse the file), a NumPy
    # integer as the string "3", keys unsorted and no final newline, unlike manifest.json.
    expr, y, *_ = _toy(tmp_path)
    res = evaluate(
        {"a": np.arange(1.0, expr.n_genes + 1)},
        expr,
        labels=y,
        top=[2, 5],
        classifiers=["1nn"],
        n_splits=3,
        n_repeats=1,
        weights={"em": {"a": float("nan")}},
    )
    res.settings["extra_count"] = np.int64(3)
    write_evaluation(res, tmp_path / "ev", expression=expr, labels=y, provenance={"z": 1, "a": 2})
    text = (tmp_path / "ev" / "evaluation.json").read_text(encoding="utf-8")

    def refuse(token):
        raise ValueError(token)

    rec = json.loads(text, parse_constant=refuse)
    assert rec["weights"] == {"em": {"a": None}}
    assert rec["settings"]["extra_count"] == 3
    assert text == json.dumps(rec, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def test_figures_are_well_formed_svg_for_names_with_control_characters(tmp_path):
    # A gene or list name holding a C0 control character (form feed, vertical tab, record
    # separator) went into the SVG as it was: XML 1.0 forbids these characters anywhere, so
    # the evaluation's heatmap_1.svg did not open. Labels are shown escaped, as in messages.
    import xml.dom.minidom

    from kofs.report.plots import heatmap_figure, save_figure

    X = np.random.default_rng(0).normal(size=(6, 3))
    fig = heatmap_figure(
        X, genes=["A\x0cB", "C\x0bD", "E\x1eF"], classes=["x\x1c", "y"] * 3, title="t\x07"
    )
    svg = next(p for p in save_figure(fig, tmp_path / "h") if p.endswith(".svg"))
    doc = xml.dom.minidom.parse(svg)  # not well-formed before
    assert "A\\x0cB" in doc.toxml()


def test_evaluation_tables_are_utf8_whatever_the_locale(tmp_path, python_process):
    # evaluation.tsv, accuracy.tsv and the split-half files were written in the locale's
    # encoding: under LC_ALL=C (ASCII) a list named 'rés_β' (a name given in Python)
    # was an internal error, UnicodeEncodeError, and nothing was written.
    import os

    script = """
import sys
import numpy as np
from kofs.evaluate import evaluate, write_evaluation
from kofs.types import Expression
rng = np.random.default_rng(0)
y = np.array(["B", "T"] * 12)
X = rng.normal(size=(24, 30)) + 5
X[:, :3] += np.where(y == "B", 2.0, -2.0)[:, None]
expr = Expression(X, [f"G{j}" for j in range(30)], [f"s{i}" for i in range(24)])
res = evaluate({"r\\u00e9s_\\u03b2": np.arange(1.0, 31)}, expr, labels=y, top=[2, 5],
               classifiers=["1nn"], n_splits=3, n_repeats=1)
write_evaluation(res, sys.argv[1], expression=expr, labels=y)
"""
    env = {**os.environ, "LC_ALL": "C", "PYTHONUTF8": "0"}
    out = tmp_path / "ev"
    r = python_process.run("-c", script, out, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    for name in ("evaluation.tsv", "accuracy.tsv"):
        assert "rés_β" in (out / name).read_text(encoding="utf-8")


def test_cli_evaluate_reads_a_matrix_with_repeated_genes_as_rank_does(tmp_path):
    """A matrix with a repeated gene id: refused by default, naming --duplicate-genes, and
    read with it (kofs rank's option, same default; evaluate_files' duplicate_genes)."""
    from kofs.evaluate.run import evaluate_files

    _, _, expr_path, lab_path, _ = _toy(tmp_path)
    lines = expr_path.read_text().splitlines()
    expr_path.write_text("\n".join([*lines, lines[5].replace("G4", "G1", 1)]) + "\n")
    ranking = tmp_path / "mine.tsv"
    ranking.write_text("gene\trank\n" + "".join(f"G{i}\t{i + 1}\n" for i in range(40)))
    base = ["evaluate", str(ranking), str(expr_path), "--labels", str(lab_path),
            "--folds", "2", "--repeats", "1", "--top", "5", "--classifiers", "1nn"]  # fmt: skip
    out = tmp_path / "ev"
    r = CliRunner().invoke(main, [*base, "-o", str(out)])
    assert r.exit_code == 2 and not out.exists()
    assert "gene id 'G1' appears twice" in r.stderr and "--duplicate-genes" in r.stderr
    r = CliRunner().invoke(main, [*base, "-o", str(out), "--duplicate-genes", "first"])
    assert r.exit_code == 0, r.output
    assert "1 repeated gene ids merged (duplicates='first')" in r.stderr
    config = {"rankings": [str(ranking)], "expression": str(expr_path),
              "labels": str(lab_path), "folds": 2, "repeats": 1, "top": [5],
              "classifiers": ["1nn"], "output": str(tmp_path / "ev2")}  # fmt: skip
    with pytest.raises(InputError, match="appears twice"):
        evaluate_files(config)
    assert evaluate_files({**config, "duplicate_genes": "mean"})


def test_an_unknown_classifier_is_refused_before_any_input_is_read(tmp_path):
    """--classifiers knn was refused only once the matrix had been read (a matrix with
    repeated genes said that first); the option's names are checked when it is parsed, in the
    CLI and in a config alike."""
    missing = str(tmp_path / "nowhere.tsv")
    r = CliRunner().invoke(
        main,
        ["evaluate", missing, missing, "--labels", missing, "--classifiers", "1nn,knn",
         "-o", str(tmp_path / "o")],
    )  # fmt: skip
    assert r.exit_code == 2 and not (tmp_path / "o").exists()
    assert "--classifiers: 'knn' is not one of 1nn, svm-rbf, svm-linear" in r.stderr
    from kofs.evaluate.run import evaluate_files

    with pytest.raises(ParameterError, match="'knn' is not one of 1nn, svm-rbf, svm-linear"):
        evaluate_files(
            {
                "rankings": [missing],
                "expression": missing,
                "labels": missing,
                "classifiers": ["knn"],
            }
        )
